#ifndef ORDO_TESTS_DATA_HOSTILE_INPUTS_H_
#define ORDO_TESTS_DATA_HOSTILE_INPUTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ordo/v1/graph.pb.h"

namespace ordo::hostile_inputs {

// The bad-input corpus (scripts/make-bad-models) and the big inputs built at
// test time, shared by the CLI test (tests/cli/bad_inputs_test.cc) and the
// service test (tests/service/hostile_inputs_service_test.cc), so both send
// exactly the same bytes.

// tests/data/bad in the source tree.
std::string BadDir();

// One line of tests/data/bad/MANIFEST.txt: a file and the text its error
// must contain.
struct ManifestEntry {
  std::string file;
  std::string expected;
};
std::vector<ManifestEntry> ReadManifest();

// Serialized ONNX models (opset 13, input x: float[1, 8]):
// x -> Relu -> ... (n ops) -> y.
std::string ReluChainOnnx(int32_t n);
// x feeds `width` Relus, all joined by one Concat.
std::string FanOutOnnx(int32_t width);
// One Relu carrying a 64 MiB string attribute.
std::string HugeAttributeOnnx();
// y = Add(x, `name`), where no one defines `name`.
std::string UndefinedInputOnnx(const std::string& name);
// x -> Relu -> Relu -> y with every shape given, and a metadata_props entry
// holding an 11-byte varint: protobuf refuses the bytes; the importer, which
// skips that field on the wire (core/onnx/model_view.h) and has nothing to
// infer, imports them. (It was an opset_import entry until the importer came
// to read opset_import; such a file is now refused at import.)
std::string TypedReluChainWithBrokenMetadata();

// A native graph: a chain of `n` Relus.
v1::Graph ReluChainGraph(int32_t n);

// Writes `contents` to a file of this process (`name` prefixed with the
// pid) in the temp folder, for the CLI; returns its path.
std::string WriteTempFile(const std::string& name, const std::string& contents);

}  // namespace ordo::hostile_inputs

#endif  // ORDO_TESTS_DATA_HOSTILE_INPUTS_H_
