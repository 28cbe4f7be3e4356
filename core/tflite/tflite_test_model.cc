#include "core/tflite/tflite_test_model.h"

#include <map>

#include "core/tflite/tflite_schema_generated.h"

namespace ordo::testing {

int32_t TfliteTestModel::Tensor(TensorSpec spec) {
  tensors_.push_back(std::move(spec));
  return static_cast<int32_t>(tensors_.size() - 1);
}

std::string TfliteTestModel::Build() const {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<tflite_fb::Buffer>> buffers = {
      data_in_buffer_zero_ ? tflite_fb::CreateBuffer(fbb, fbb.CreateVector(std::vector<uint8_t>(8)))
                           : tflite_fb::CreateBuffer(fbb)};
  auto data_buffer = [&](const std::string& bytes) {
    fbb.ForceVectorAlignment(bytes.size(), 1, 16);
    auto data = fbb.CreateVector(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    buffers.push_back(tflite_fb::CreateBuffer(fbb, data));
    return static_cast<uint32_t>(buffers.size() - 1);
  };
  std::vector<flatbuffers::Offset<tflite_fb::Tensor>> tensors;
  for (const TensorSpec& t : tensors_) {
    const uint32_t buffer = t.weight ? data_buffer(std::string(8, '\x5a')) : 0;
    const auto signature = t.shape_signature.empty() ? 0 : fbb.CreateVector(t.shape_signature);
    tensors.push_back(tflite_fb::CreateTensor(fbb, fbb.CreateVector(t.shape), t.type, buffer,
                                              fbb.CreateString(t.name), t.is_variable, signature,
                                              false, t.external_buffer));
  }
  std::map<std::pair<int32_t, std::string>, uint32_t> code_index;
  std::vector<flatbuffers::Offset<tflite_fb::OperatorCode>> codes;
  std::vector<flatbuffers::Offset<tflite_fb::Operator>> operators;
  for (const OperatorSpec& op : operators_) {
    auto key = std::make_pair(op.builtin, op.custom_code);
    if (!code_index.count(key)) {
      code_index[key] = static_cast<uint32_t>(codes.size());
      codes.push_back(tflite_fb::CreateOperatorCode(
          fbb, static_cast<int8_t>(std::min(op.builtin, 127)),
          op.custom_code.empty() ? 0 : fbb.CreateString(op.custom_code), 1, op.builtin));
    }
    operators.push_back(tflite_fb::CreateOperator(
        fbb, code_index[key], fbb.CreateVector(op.inputs), fbb.CreateVector(op.outputs),
        op.intermediates.empty() ? 0 : fbb.CreateVector(op.intermediates)));
  }
  std::vector<flatbuffers::Offset<tflite_fb::SubGraph>> subgraphs = {tflite_fb::CreateSubGraph(
      fbb, fbb.CreateVector(tensors), fbb.CreateVector(inputs_), fbb.CreateVector(outputs_),
      fbb.CreateVector(operators), fbb.CreateString("main"))};
  if (extra_subgraph_) {
    std::vector<flatbuffers::Offset<tflite_fb::Tensor>> extra = {tflite_fb::CreateTensor(
        fbb, fbb.CreateVector(std::vector<int32_t>{4}), kTfliteInt8, 0, fbb.CreateString("x"))};
    subgraphs.push_back(tflite_fb::CreateSubGraph(fbb, fbb.CreateVector(extra)));
  }
  std::vector<flatbuffers::Offset<tflite_fb::Metadata>> metadata;
  for (const auto& [name, data] : metadata_) {
    const uint32_t buffer = data_buffer(data);
    metadata.push_back(tflite_fb::CreateMetadata(fbb, fbb.CreateString(name), buffer));
  }
  auto model = tflite_fb::CreateModel(fbb, 3, fbb.CreateVector(codes), fbb.CreateVector(subgraphs),
                                      fbb.CreateString("ordo test model"),
                                      fbb.CreateVector(buffers), 0,
                                      metadata.empty() ? 0 : fbb.CreateVector(metadata));
  tflite_fb::FinishModelBuffer(fbb, model);
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

std::string DynamicBatchTfliteModel() {
  TfliteTestModel m;
  const int32_t x =
      m.Tensor({.name = "serving_default_x:0", .shape = {1, 8}, .shape_signature = {-1, 8}});
  const int32_t y = m.Tensor({"y", {1, 8}});
  m.Operator({kTfliteRelu, {x}, {y}});
  m.Inputs({x});
  m.Outputs({y});
  return m.Build();
}

}  // namespace ordo::testing
