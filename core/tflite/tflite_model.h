#ifndef ORDO_CORE_TFLITE_TFLITE_MODEL_H_
#define ORDO_CORE_TFLITE_TFLITE_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/tflite/tflite_schema_generated.h"

namespace ordo {

// The name of the metadata entry TFLite Micro reads its offline arena plan
// from (tflite-micro micro_allocation_info.cc, kOfflineMemAllocMetadata).
inline constexpr char kOfflineMemoryAllocation[] = "OfflineMemoryAllocation";

// True when `bytes` carries TFLite's file identifier "TFL3" at offset 4.
bool HasTfliteIdentifier(absl::string_view bytes);

// The root Model of a .tflite file after the flatbuffers Verifier accepted
// it (every offset, vector and string of the tables ordo reads is in bounds)
// and the references ordo follows are checked: at least one subgraph, every
// tensor's buffer index, every operator's opcode index and tensor indices
// (-1 only for omitted inputs), the subgraph inputs/outputs, and Buffer
// offset/size inside the file. INVALID_ARGUMENT naming the table and index
// (`SubGraph 0 Operator 3 (CONV_2D): input 1 is tensor 99; the subgraph has
// 12 tensors`). The pointer points into `bytes`.
absl::StatusOr<const tflite_fb::Model*> VerifiedTfliteModel(absl::string_view bytes);

// TFLite's BuiltinOperator name for `code` ("CONV_2D"), "BUILTIN_<code>"
// for codes this build does not name.
std::string BuiltinOperatorName(int32_t code);

// The operator's type: the builtin name, or the custom code for CUSTOM ops.
// The real builtin code is max(deprecated_builtin_code, builtin_code)
// (schema.fbs: files before version 2.4 only set the deprecated one).
int32_t BuiltinCode(const tflite_fb::OperatorCode& code);
std::string OperatorTypeName(const tflite_fb::OperatorCode& code);
bool IsCustomOperator(const tflite_fb::OperatorCode& code);

// Whether `tensor` holds constant data (a weight): its buffer has data in
// the file or after it (Buffer.offset), or it names an external buffer
// (Tensor.external_buffer). Buffer 0 is the empty sentinel (CheckBuffers
// refuses a file where it is not).
bool HoldsConstantData(const tflite_fb::Model& model, const tflite_fb::Tensor& tensor);

// One unique, non-empty name per tensor of `subgraph`, by index: the
// tensor's own name, or "t<index>" when it is empty or already taken by an
// earlier tensor (then "t<index>_1", ... if that is a name too). The reader
// and the writer both use it, so the writer finds a Graph tensor by name.
std::vector<std::string> TfliteTensorNames(const tflite_fb::SubGraph& subgraph);

// Operator `index` of the main subgraph as the Graph names it: "op3_CONV_2D".
std::string TfliteOpName(int32_t index, absl::string_view type);

}  // namespace ordo

#endif  // ORDO_CORE_TFLITE_TFLITE_MODEL_H_
