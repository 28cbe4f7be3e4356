#ifndef ORDO_CORE_REWRITE_ONNX_TEST_MODEL_H_
#define ORDO_CORE_REWRITE_ONNX_TEST_MODEL_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/graph.h"
#include "onnx/onnx_pb.h"

namespace ordo {

// Test-only: writes small float32 ONNX models inline, so a test shows the
// graph beside its assertions:
//
//   OnnxTestModel m;
//   m.Input("x", {1, 4, 8, 8});
//   m.Weight("w", {8, 4, 1, 1}, &rng);   // random data; nullptr: no data
//   m.Node("Conv", {"x", "w"}, {"y"});
//   m.Output("y");
//
// Opset 13, IR version 8; nodes in the order given. Not thread-safe.
class OnnxTestModel {
 public:
  OnnxTestModel();

  void Input(const std::string& name, const std::vector<int64_t>& dims);
  // A float initializer; with `rng`, uniform data in [-1, 1], else none (an
  // external location that is not shipped, like the benchmark models).
  void Weight(const std::string& name, const std::vector<int64_t>& dims, std::mt19937* rng);
  void IntWeight(const std::string& name, const std::vector<int64_t>& values);
  // A 1-D float initializer holding `values` (Resize's scales).
  void FloatWeight(const std::string& name, const std::vector<float>& values);
  onnx::NodeProto& Node(const std::string& type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs);
  void Output(const std::string& name);

  const onnx::ModelProto& model() const { return model_; }
  std::string Bytes() const;

 private:
  onnx::ModelProto model_;
};

// Attribute setters for OnnxTestModel::Node's result.
void SetIntAttribute(onnx::NodeProto& node, const std::string& name, int64_t value);
void SetIntsAttribute(onnx::NodeProto& node, const std::string& name,
                      const std::vector<int64_t>& values);
void SetStringAttribute(onnx::NodeProto& node, const std::string& name, const std::string& value);

// MobileNetV2's inverted residual on x [1, 8, 16, 16]: expand 1x1
// (8 -> `expanded`, "e", with bias "be" when `bias`) -> Relu "er" ->
// depthwise 3x3 "d" -> Relu "dr" -> project 1x1 (-> 8); with `skip` the
// projection is "p" and y = Add(p, x), else the projection is "y". Weights
// carry no data. The expanded tensors around the depthwise Conv hold the peak.
struct InvertedResidualSpec {
  int64_t expanded = 48;
  bool bias = false;
  bool skip = true;
};
OnnxTestModel InvertedResidualBlock(const InvertedResidualSpec& spec);

// A random chain of `layers` window layers on x [1, 3, `size`, `size`]:
// Convs (kernel 1, 3 or 5, stride 1 or 2, padded or not, dilation 1 or 2,
// group 1 or depthwise), MaxPool / AveragePool (kernel 2 or 3, padded or
// not) and Relu; nodes "l0", "l1", ..., output "y". Every spatial dim stays
// >= 1. Weights carry random data when `with_data`. Deterministic in
// `seed`.
OnnxTestModel RandomWindowChain(uint32_t seed, int32_t layers, int64_t size, bool with_data);

// `model` with every Relu node replaced by SiLU: s = `gate`(in) (Sigmoid or
// HardSigmoid, node "<name>_gate"), then out = Mul(in, s), or Mul(s, in) on
// every other Relu (the first one too when `gate_first`), node "<name>".
// Everything else is unchanged.
onnx::ModelProto WithSiluForRelu(const onnx::ModelProto& model, const std::string& gate,
                                 bool gate_first);

// EfficientNet's stem on x [1, 3, 16, 16]: Conv 3x3 (3 -> 8, pads 1, "c")
// -> SiLU (Sigmoid "cs", Mul "ca") -> depthwise 3x3 (pads 1, "d") -> SiLU
// (Sigmoid "ds", Mul "y"); each Mul reads (x, Sigmoid(x)), or (Sigmoid(x),
// x) when `gate_first`. Weights carry random data when `with_data`.
OnnxTestModel SiluStem(bool gate_first, bool with_data);

// EfficientNet's squeeze-and-excitation on x [1, 8, 8, 8]: depthwise 3x3
// ("d", pads 1) -> SiLU (Sigmoid "ds", Mul "h") -> GlobalAveragePool "g" ->
// 1x1 Conv 8 -> 2 "f1" -> Relu "f1r" -> 1x1 Conv 2 -> 8 "f2" -> Sigmoid
// "sc" [1, 8, 1, 1] -> Mul(h, sc) "m" (Mul(sc, h) when `scale_first`) ->
// 1x1 Conv 8 -> 4 "p" -> Relu "y". Weights carry random data when
// `with_data`.
OnnxTestModel SqueezeExcitationBlock(bool scale_first, bool with_data);

// Serializes `model` and imports it with ImportOnnx: the Graph the pipeline
// would see, or the importer's error.
absl::StatusOr<Graph> Import(const onnx::ModelProto& model);

// Replaces external (unshipped) initializer data with zeros so that ONNX's
// checker, which insists on external files, accepts the model.
onnx::ModelProto WithZeroExternalData(onnx::ModelProto model);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_ONNX_TEST_MODEL_H_
