#ifndef ORDO_CORE_TFLITE_TFLITE_IMPORT_H_
#define ORDO_CORE_TFLITE_TFLITE_IMPORT_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/graph/graph.h"

namespace ordo {

// Reads a TensorFlow Lite model (the "TFL3" flatbuffer, as bytes) into a
// Graph, the way ImportOnnx does for ONNX:
//
// 1. The flatbuffers Verifier, then every index ordo follows
//    (VerifiedTfliteModel); RESOURCE_EXHAUSTED when the main subgraph has more
//    operators or tensors than `limits` allow.
// 2. The main subgraph (subgraphs[0]) is the graph; other subgraphs are only
//    reached through control flow, which is refused: IF, WHILE, CALL_ONCE
//    (and the old CALL) are INVALID_ARGUMENT naming the operator.
// 3. Tensors: one Graph tensor per tensor an operator or the subgraph's
//    inputs/outputs use, named by TfliteTensorNames. A tensor whose buffer
//    holds data (or an offset/size past the flatbuffer) is a weight.
//    `is_variable` tensors live for the whole run, and a tensor operators
//    read but none writes (Vela's scratch) from before the first step: both
//    are runtime buffers (Tensor::is_runtime_buffer), no model I/O. A tensor
//    with a dim of 0 holds nothing and is left out, and a constant subgraph
//    output is left out of the graph's outputs with a note. Sizes: `shape` x
//    the element size of the TensorType; an INT4/UINT4/INT2 activation a
//    byte per element (as TFLM allocates it), such a weight its bits,
//    rounded up to whole bytes per tensor; STRING, RESOURCE and VARIANT have no static size and are
//    refused when they are activations. A dynamic dim in `shape_signature` (-1) is planned at
//    `shape`, as TFLite Micro runs it, and one Graph note says so for all such tensors (their count
//    and the graph inputs among them).
// 4. Operators keep file order (Op::source_index = index in the subgraph),
//    type = TFLite's builtin name ("CONV_2D") or the custom code (domain
//    kTfliteCustomDomain: never in place), name =
//    TfliteOpName. Omitted inputs (-1) are dropped; intermediates are extra
//    outputs nobody reads (alive during their operator's step, as TFLite
//    allocates them). The memory model's in-place rule knows TFLite's
//    element-wise and reinterpreting builtin names (IsInplaceOpType).
//    Operators are not constant-folded: TFLite runtimes execute every
//    operator in the file, so each one is scheduled.
//
// Errors are INVALID_ARGUMENT naming the table and index (`SubGraph 0
// Tensor 7 "conv/out": dim 1 is -1; dims must be static and positive`).
// Never reads outside `model_bytes`.
absl::StatusOr<Graph> ImportTflite(absl::string_view model_bytes,
                                   const GraphLimits& limits = {});

}  // namespace ordo

#endif  // ORDO_CORE_TFLITE_TFLITE_IMPORT_H_
