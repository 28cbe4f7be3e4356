#ifndef ORDO_CORE_TFLITE_TFLITE_TEST_MODEL_H_
#define ORDO_CORE_TFLITE_TFLITE_TEST_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ordo::testing {

// TFLite builtin codes and tensor types used by tests.
inline constexpr int32_t kTfliteAdd = 0, kTfliteConcat = 2, kTfliteConv2d = 3, kTfliteRelu = 19,
                         kTfliteReshape = 22, kTfliteIf = 118, kTfliteCustom = 32,
                         kTfliteStablehloComposite = 206;
inline constexpr int8_t kTfliteFloat32 = 0, kTfliteInt8 = 9, kTfliteInt4 = 17, kTfliteString = 5;

// Writes small .tflite files for tests with flatbuffers' builder and ordo's
// schema subset (no builtin options: enough for ordo, not for a runtime).
// Tensors and operators are listed in file order by index.
class TfliteTestModel {
 public:
  struct TensorSpec {
    std::string name;
    std::vector<int32_t> shape;
    int8_t type = kTfliteInt8;
    bool weight = false;  // gets a buffer with data
    bool is_variable = false;
    uint32_t external_buffer = 0;  // Tensor.external_buffer: data outside the file
    std::vector<int32_t> shape_signature;  // empty: none written
  };
  struct OperatorSpec {
    int32_t builtin = kTfliteAdd;
    std::vector<int32_t> inputs;
    std::vector<int32_t> outputs;
    std::string custom_code;
    std::vector<int32_t> intermediates;
  };

  int32_t Tensor(TensorSpec spec);
  void Operator(OperatorSpec spec) { operators_.push_back(std::move(spec)); }
  void Inputs(std::vector<int32_t> inputs) { inputs_ = std::move(inputs); }
  void Outputs(std::vector<int32_t> outputs) { outputs_ = std::move(outputs); }
  // A metadata entry whose buffer holds `data`.
  void Metadata(std::string name, std::string data) {
    metadata_.push_back({std::move(name), std::move(data)});
  }
  // A second subgraph with one tensor (only to count tensors over subgraphs).
  void ExtraSubgraph() { extra_subgraph_ = true; }
  // Buffer 0, the sentinel, with data (a malformed file).
  void DataInBufferZero() { data_in_buffer_zero_ = true; }

  std::string Build() const;

 private:
  std::vector<TensorSpec> tensors_;
  std::vector<OperatorSpec> operators_;
  std::vector<int32_t> inputs_;
  std::vector<int32_t> outputs_;
  std::vector<std::pair<std::string, std::string>> metadata_;
  bool extra_subgraph_ = false;
  bool data_in_buffer_zero_ = false;
};

// A converter's dynamic batch, as small as it gets: Relu of the input
// "serving_default_x:0", shape [1,8] and shape_signature [-1,8]. The
// import plans it at its shape and notes kDynamicBatchTfliteNote.
std::string DynamicBatchTfliteModel();
inline constexpr char kDynamicBatchTfliteNote[] =
    "input \"serving_default_x:0\": shape_signature [-1,8] has dynamic dims; planned at "
    "shape [1,8], as TensorFlow Lite Micro runs it";

}  // namespace ordo::testing

#endif  // ORDO_CORE_TFLITE_TFLITE_TEST_MODEL_H_
