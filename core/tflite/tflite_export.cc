#include "core/tflite/tflite_export.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/tflite/tflite_model.h"
#include "core/util/check.h"
#include "core/util/status_macros.h"
#include "flatbuffers/flatbuffers.h"

namespace ordo {
namespace {

using tflite_fb::Model;
using tflite_fb::SubGraph;

// Field ids of the tables the writer rebuilds (tflite_schema.fbs).
constexpr int kModelVersion = 0, kModelSubgraphs = 2, kModelBuffers = 4, kModelMetadata = 6;
constexpr int kModelFields = 8;
constexpr int kSubGraphOperators = 3, kSubGraphDebugMetadataIndex = 5;
constexpr int kSubGraphFields = 6;
constexpr int kBufferData = 0, kBufferOffset = 1, kBufferSize = 2;
constexpr int kMetadataName = 0, kMetadataBuffer = 1;

const flatbuffers::Table& AsTable(const void* table) {
  return *reinterpret_cast<const flatbuffers::Table*>(table);
}

flatbuffers::voffset_t Slot(int id) { return static_cast<flatbuffers::voffset_t>(4 + 2 * id); }

int FieldSlots(const void* table) {
  const auto* t = reinterpret_cast<const uint8_t*>(table);
  const uint8_t* vtable = t - flatbuffers::ReadScalar<flatbuffers::soffset_t>(t);
  return (flatbuffers::ReadScalar<flatbuffers::voffset_t>(vtable) - 4) / 2;
}

bool HasField(const void* table, int id) {
  return AsTable(table).GetOptionalFieldOffset(Slot(id)) != 0;
}

// Position in the old file of what uoffset field `id` of `table` points to.
size_t OldTarget(const uint8_t* base, const void* table, int id) {
  const uint8_t* field = reinterpret_cast<const uint8_t*>(table) +
                         AsTable(table).GetOptionalFieldOffset(Slot(id));
  return static_cast<size_t>(field - base) + flatbuffers::ReadScalar<flatbuffers::uoffset_t>(field);
}

size_t OldPosition(const uint8_t* base, const void* object) {
  return static_cast<size_t>(reinterpret_cast<const uint8_t*>(object) - base);
}

size_t RoundUp(size_t value, size_t align) { return (value + align - 1) / align * align; }

// The bytes that go in front of the old file. Objects are appended in an
// order where every reference points forward (to a later prefix object or
// into the old bytes, which follow the prefix); references into the old
// bytes are fixed up once the prefix length is known.
class Prefix {
 public:
  // `size` zero bytes at a position p with (p + bias) % align == 0.
  size_t Allocate(size_t size, size_t align, size_t bias = 0) {
    while ((bytes_.size() + bias) % align != 0) bytes_.push_back('\0');
    const size_t pos = bytes_.size();
    bytes_.append(size, '\0');
    return pos;
  }
  template <typename T>
  void Put(size_t pos, T value) {
    flatbuffers::WriteScalar(bytes_.data() + pos, value);
  }
  // A uoffset at `at` to the prefix object at `target`.
  void Offset(size_t at, size_t target) {
    ORDO_CHECK(target > at);
    Put<uint32_t>(at, static_cast<uint32_t>(target - at));
  }
  // A uoffset at `at` to position `old_target` of the old file.
  void OldOffset(size_t at, size_t old_target) { old_offsets_.push_back({at, old_target}); }
  // A u64 at `at` holding an absolute old-file offset.
  void OldAbsolute(size_t at, uint64_t old_offset) { absolute_.push_back({at, old_offset}); }

  std::string Finish(absl::string_view old) && {
    bytes_.resize(RoundUp(bytes_.size(), kTflmAlignment), '\0');
    const size_t length = bytes_.size();
    for (const auto& [at, target] : old_offsets_) {
      Put<uint32_t>(at, static_cast<uint32_t>(length + target - at));
    }
    for (const auto& [at, offset] : absolute_) Put<uint64_t>(at, offset + length);
    bytes_.append(old.data(), old.size());
    return std::move(bytes_);
  }

 private:
  std::string bytes_;
  std::vector<std::pair<size_t, size_t>> old_offsets_;
  std::vector<std::pair<size_t, uint64_t>> absolute_;
};

struct FieldSpec {
  int id;
  size_t size;  // 1, 4 or 8
};

// A table with its vtable right before it; returns the table position and
// each field's position (by FieldSpec order). Fields are laid out largest
// first so each is aligned to its size.
struct TableLayout {
  size_t start = 0;
  std::vector<size_t> field;
};

TableLayout AddTable(Prefix& prefix, const std::vector<FieldSpec>& fields) {
  int slots = 0;
  size_t align = 4;
  for (const FieldSpec& f : fields) {
    slots = std::max(slots, f.id + 1);
    align = std::max(align, f.size);
  }
  std::vector<size_t> order(fields.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return fields[a].size > fields[b].size; });
  std::vector<size_t> relative(fields.size());
  size_t end = sizeof(flatbuffers::soffset_t);
  for (size_t i : order) {
    end = RoundUp(end, fields[i].size);
    relative[i] = end;
    end += fields[i].size;
  }
  const size_t vtable_size = 4 + 2 * static_cast<size_t>(slots);
  const size_t vtable = prefix.Allocate(vtable_size, 2);
  TableLayout layout;
  layout.start = prefix.Allocate(end, align);
  prefix.Put<flatbuffers::soffset_t>(layout.start,
                                     static_cast<flatbuffers::soffset_t>(layout.start - vtable));
  prefix.Put<flatbuffers::voffset_t>(vtable, static_cast<flatbuffers::voffset_t>(vtable_size));
  prefix.Put<flatbuffers::voffset_t>(vtable + 2, static_cast<flatbuffers::voffset_t>(end));
  for (size_t i = 0; i < fields.size(); ++i) {
    prefix.Put<flatbuffers::voffset_t>(vtable + Slot(fields[i].id),
                                       static_cast<flatbuffers::voffset_t>(relative[i]));
    layout.field.push_back(layout.start + relative[i]);
  }
  return layout;
}

// A vector of `count` uoffsets; returns the position of its length.
size_t AddOffsetVector(Prefix& prefix, size_t count) {
  const size_t pos = prefix.Allocate(4 + 4 * count, 4);
  prefix.Put<uint32_t>(pos, static_cast<uint32_t>(count));
  return pos;
}

size_t Element(size_t vector, size_t index) { return vector + 4 + 4 * index; }

// A table's fields beyond what this writer knows cannot be moved safely
// (it cannot tell an offset from a scalar).
absl::Status CheckKnownFields(const void* table, int known, absl::string_view what) {
  for (int id = known; id < FieldSlots(table); ++id) {
    if (HasField(table, id)) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " has field id ", id, ", newer than the schema this ordo writes; it cannot be "
          "carried over unchanged"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckMovable(const Model& model) {
  ORDO_RETURN_IF_ERROR(CheckKnownFields(&model, kModelFields, "Model"));
  const SubGraph& main = *model.subgraphs()->Get(0);
  ORDO_RETURN_IF_ERROR(CheckKnownFields(&main, kSubGraphFields, "SubGraph 0"));
  for (uint32_t s = 0; s < model.subgraphs()->size(); ++s) {
    const SubGraph& subgraph = *model.subgraphs()->Get(s);
    if (subgraph.operators() == nullptr) continue;
    for (uint32_t o = 0; o < subgraph.operators()->size(); ++o) {
      if (subgraph.operators()->Get(o)->large_custom_options_offset() > 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "SubGraph ", s, " Operator ", o, ": custom options at an absolute file offset "
            "(large_custom_options_offset) cannot be moved by this writer"));
      }
    }
  }
  return absl::OkStatus();
}

// SubGraph 0's operator indices in schedule order, after checking that
// `graph` is this model's and `schedule` a topological order of it.
absl::StatusOr<std::vector<int32_t>> OperatorOrder(const Model& model, const Graph& graph,
                                                   absl::Span<const OpId> schedule) {
  const SubGraph& main = *model.subgraphs()->Get(0);
  const int64_t operators = main.operators() ? main.operators()->size() : 0;
  if (graph.num_ops() != operators || static_cast<int64_t>(schedule.size()) != operators) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the graph has ", graph.num_ops(), " ops and the schedule ", schedule.size(),
        " steps; SubGraph 0 has ", operators, " operators: was the graph imported from it?"));
  }
  std::vector<bool> done(graph.num_ops(), false);
  std::vector<int32_t> order;
  for (OpId id : schedule) {
    if (id < 0 || id >= graph.num_ops() || done[id]) {
      return absl::InvalidArgumentError(
          absl::StrCat("schedule is not a permutation of the ops (op id ", id, ")"));
    }
    const Op& op = graph.op(id);
    for (TensorId input : op.inputs) {
      const OpId producer = graph.tensor(input).producer;
      if (producer != kNoId && !done[producer]) {
        return absl::InvalidArgumentError(absl::StrCat("schedule runs op \"", op.name,
                                                       "\" before the producer of its input \"",
                                                       graph.tensor(input).name, "\""));
      }
    }
    done[id] = true;
    if (op.source_index < 0 || op.source_index >= operators ||
        op.name != TfliteOpName(op.source_index,
                                OperatorTypeName(*model.operator_codes()->Get(
                                    main.operators()->Get(op.source_index)->opcode_index())))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op \"", op.name, "\" does not match an operator of SubGraph 0 (source index ",
          op.source_index, "); was the graph imported from this model?"));
    }
    order.push_back(op.source_index);
  }
  return order;
}

// The arena blocks of the variables. A variable lives for the whole run, so
// no other tensor's block overlaps one: each lies in a gap between them.
// TFLM keeps variables in its persistent tail, not where the plan puts
// them, so the plan closes the gaps (every other block moves down by the
// variable bytes below it); the planned area is then the arena less the
// variables, which the tail holds (docs/tflite.md).
struct VariableBlocks {
  std::vector<std::pair<int64_t, int64_t>> blocks;  // (offset, size), by offset

  int64_t BytesBelow(int64_t offset) const {
    int64_t below = 0;
    for (const auto& [start, size] : blocks) {
      if (start >= offset) break;
      below += size;
    }
    return below;
  }
};

VariableBlocks PlacedVariables(const SubGraph& main, const std::vector<std::string>& names,
                               const Graph& graph,
                               const std::vector<const TensorPlacement*>& placement) {
  VariableBlocks variables;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!main.tensors()->Get(i)->is_variable()) continue;
    const std::optional<TensorId> t = graph.FindTensor(names[i]);
    if (t && placement[*t] != nullptr) {
      variables.blocks.emplace_back(placement[*t]->offset, placement[*t]->size);
    }
  }
  std::sort(variables.blocks.begin(), variables.blocks.end());
  return variables;
}

absl::StatusOr<std::vector<int32_t>> OfflinePlan(const Model& model, const Graph& graph,
                                                 const ArenaPlan& arena,
                                                 const TfliteExportOptions& options) {
  if (arena.alignment <= 0 || arena.alignment % kTflmAlignment != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "arena alignment ", arena.alignment, ": TFLite Micro needs offsets aligned to ",
        kTflmAlignment, " bytes; use an alignment that is a multiple of 16"));
  }
  std::vector<const TensorPlacement*> placement(graph.num_tensors(), nullptr);
  for (const TensorPlacement& p : arena.tensors) {
    if (p.tensor >= 0 && p.tensor < graph.num_tensors()) placement[p.tensor] = &p;
    // Offsets in two pools may coincide: as one arena they would overlap.
    if (p.pool != arena.tensors.front().pool) {
      return absl::InvalidArgumentError(
          "the placement spans several memory pools, but TFLite Micro plans one arena: "
          "compile with one arena (--one-arena, device.one_arena)");
    }
  }
  int64_t total = 0;
  for (uint32_t s = 0; s < model.subgraphs()->size(); ++s) {
    const SubGraph* subgraph = model.subgraphs()->Get(s);
    total += subgraph->tensors() ? subgraph->tensors()->size() : 0;
  }
  std::vector<int32_t> plan = {0, 0, static_cast<int32_t>(total)};
  plan.resize(3 + total, -1);
  const SubGraph& main = *model.subgraphs()->Get(0);
  const std::vector<std::string> names = TfliteTensorNames(main);
  const VariableBlocks variables = PlacedVariables(main, names, graph, placement);
  // TFLM allocates every tensor without constant data of every subgraph,
  // and gives the ones no operator of subgraph 0 uses (another signature's,
  // a tensor nothing reads or writes) a lifetime that overlaps all others:
  // left at -1 they stack above the plan (a probe: 16 KiB over a 64-byte
  // arena). They are never touched, so offset 0 costs nothing.
  for (uint32_t s = 0, entry = 3; s < model.subgraphs()->size(); ++s) {
    const SubGraph& subgraph = *model.subgraphs()->Get(s);
    const uint32_t count = subgraph.tensors() ? subgraph.tensors()->size() : 0;
    for (uint32_t i = 0; i < count; ++i, ++entry) {
      const tflite_fb::Tensor& tensor = *subgraph.tensors()->Get(i);
      if (!tensor.is_variable() && !HoldsConstantData(model, tensor)) plan[entry] = 0;
    }
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (main.tensors()->Get(i)->is_variable()) continue;  // TFLM keeps them persistent
    const std::optional<TensorId> t = graph.FindTensor(names[i]);
    if (!t) continue;  // not in the graph: no operator uses it
    const Tensor& tensor = graph.tensor(*t);
    if (placement[*t] == nullptr ||
        (options.inputs_outputs_outside_plan && !tensor.is_runtime_buffer &&
         (tensor.kind == TensorKind::kInput || tensor.is_graph_output))) {
      plan[3 + i] = -1;  // outside ordo's arena: TFLM plans it itself
      continue;
    }
    TensorPlacement p = *placement[*t];
    p.offset -= variables.BytesBelow(p.offset);
    if (p.size < tensor.bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor \"", tensor.name, "\": its arena block has ", p.size, " bytes but the file's ",
          "tensor needs ", tensor.bytes, " (an activation element size override cannot be "
          "written into a .tflite)"));
    }
    if (p.offset < 0 || p.offset > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor \"", tensor.name, "\": arena offset ", p.offset, " does not fit int32"));
    }
    plan[3 + i] = static_cast<int32_t>(p.offset);
  }
  return plan;
}

bool IsOfflinePlanEntry(const tflite_fb::Metadata* metadata) {
  return metadata != nullptr && metadata->name() != nullptr &&
         metadata->name()->string_view() == kOfflineMemoryAllocation;
}

// Buffers: the old ones (copied when they hold an absolute offset), an
// empty buffer 0 if the file had none (index 0 means "no data"), then the
// plan's. Returns the plan's index.
uint32_t AddBuffers(Prefix& prefix, const uint8_t* base, const Model& model, size_t vector_field,
                    absl::Span<const int32_t> plan) {
  const uint32_t old_count = model.buffers() ? model.buffers()->size() : 0;
  const uint32_t sentinel = old_count == 0 ? 1 : 0;
  const size_t vector = AddOffsetVector(prefix, old_count + sentinel + 1);
  prefix.Offset(vector_field, vector);
  for (uint32_t b = 0; b < old_count; ++b) {
    const tflite_fb::Buffer* buffer = model.buffers()->Get(b);
    if (buffer->offset() <= 1) {
      prefix.OldOffset(Element(vector, b), OldPosition(base, buffer));
      continue;
    }
    std::vector<FieldSpec> fields = {{kBufferOffset, 8}, {kBufferSize, 8}};
    if (HasField(buffer, kBufferData)) fields.push_back({kBufferData, 4});
    const TableLayout copy = AddTable(prefix, fields);
    prefix.Offset(Element(vector, b), copy.start);
    prefix.OldAbsolute(copy.field[0], buffer->offset());
    prefix.Put<uint64_t>(copy.field[1], buffer->size());
    if (fields.size() == 3) prefix.OldOffset(copy.field[2], OldTarget(base, buffer, kBufferData));
  }
  if (sentinel) prefix.Offset(Element(vector, 0), AddTable(prefix, {}).start);
  const uint32_t index = old_count + sentinel;
  const TableLayout table = AddTable(prefix, {{kBufferData, 4}});
  prefix.Offset(Element(vector, index), table.start);
  const size_t bytes = plan.size() * sizeof(int32_t);
  // Buffer.data is force_align 16; TFLM reads it as int32.
  const size_t data = prefix.Allocate(4 + bytes, kTflmAlignment, 4);
  prefix.Put<uint32_t>(data, static_cast<uint32_t>(bytes));
  for (size_t i = 0; i < plan.size(); ++i) prefix.Put<int32_t>(data + 4 + 4 * i, plan[i]);
  prefix.Offset(table.field[0], data);
  return index;
}

void AddMetadata(Prefix& prefix, const uint8_t* base, const Model& model, size_t vector_field,
                 uint32_t plan_buffer) {
  std::vector<const tflite_fb::Metadata*> kept;
  if (model.metadata() != nullptr) {
    for (const tflite_fb::Metadata* m : *model.metadata()) {
      if (!IsOfflinePlanEntry(m)) kept.push_back(m);
    }
  }
  const size_t vector = AddOffsetVector(prefix, kept.size() + 1);
  prefix.Offset(vector_field, vector);
  for (size_t i = 0; i < kept.size(); ++i) {
    prefix.OldOffset(Element(vector, i), OldPosition(base, kept[i]));
  }
  const TableLayout entry = AddTable(prefix, {{kMetadataName, 4}, {kMetadataBuffer, 4}});
  prefix.Offset(Element(vector, kept.size()), entry.start);
  prefix.Put<uint32_t>(entry.field[1], plan_buffer);
  const size_t length = sizeof(kOfflineMemoryAllocation) - 1;
  const size_t name = prefix.Allocate(4 + length + 1, 4);
  prefix.Put<uint32_t>(name, static_cast<uint32_t>(length));
  for (size_t i = 0; i < length; ++i) prefix.Put<char>(name + 4 + i, kOfflineMemoryAllocation[i]);
  prefix.Offset(entry.field[0], name);
}

// The new SubGraph 0: the old one's fields, operators in `order`.
void AddMainSubGraph(Prefix& prefix, const uint8_t* base, const SubGraph& old, size_t at,
                     absl::Span<const int32_t> order) {
  std::vector<FieldSpec> fields = {{kSubGraphOperators, 4}};
  std::vector<int> carried;
  for (int id = 0; id < kSubGraphFields; ++id) {
    if (id == kSubGraphOperators || !HasField(&old, id)) continue;
    fields.push_back({id, 4});
    carried.push_back(id);
  }
  const TableLayout table = AddTable(prefix, fields);
  prefix.Offset(at, table.start);
  for (size_t i = 0; i < carried.size(); ++i) {
    const size_t field = table.field[i + 1];
    if (carried[i] == kSubGraphDebugMetadataIndex) {
      prefix.Put<int32_t>(field, AsTable(&old).GetField<int32_t>(Slot(carried[i]), -1));
    } else {
      prefix.OldOffset(field, OldTarget(base, &old, carried[i]));
    }
  }
  const size_t operators = AddOffsetVector(prefix, order.size());
  prefix.Offset(table.field[0], operators);
  for (size_t k = 0; k < order.size(); ++k) {
    prefix.OldOffset(Element(operators, k), OldPosition(base, old.operators()->Get(order[k])));
  }
}

std::string PrependedModel(absl::string_view bytes, const Model& model,
                           absl::Span<const int32_t> order, absl::Span<const int32_t> plan) {
  const auto* base = reinterpret_cast<const uint8_t*>(bytes.data());
  Prefix prefix;
  const size_t root = prefix.Allocate(8, 4);
  for (int i = 0; i < 4; ++i) prefix.Put<char>(root + 4 + i, "TFL3"[i]);

  std::vector<FieldSpec> fields = {{kModelSubgraphs, 4}, {kModelBuffers, 4}, {kModelMetadata, 4}};
  std::vector<int> carried;
  for (int id = 0; id < kModelFields; ++id) {
    if (id == kModelSubgraphs || id == kModelBuffers || id == kModelMetadata) continue;
    if (!HasField(&model, id)) continue;
    fields.push_back({id, 4});
    carried.push_back(id);
  }
  const TableLayout table = AddTable(prefix, fields);
  prefix.Offset(root, table.start);
  for (size_t i = 0; i < carried.size(); ++i) {
    const size_t field = table.field[i + 3];
    if (carried[i] == kModelVersion) {
      prefix.Put<uint32_t>(field, model.version());
    } else {
      prefix.OldOffset(field, OldTarget(base, &model, carried[i]));
    }
  }
  const uint32_t subgraphs = model.subgraphs()->size();
  const size_t vector = AddOffsetVector(prefix, subgraphs);
  prefix.Offset(table.field[0], vector);
  AddMainSubGraph(prefix, base, *model.subgraphs()->Get(0), Element(vector, 0), order);
  for (uint32_t s = 1; s < subgraphs; ++s) {
    prefix.OldOffset(Element(vector, s), OldPosition(base, model.subgraphs()->Get(s)));
  }
  const uint32_t plan_buffer = AddBuffers(prefix, base, model, table.field[1], plan);
  AddMetadata(prefix, base, model, table.field[2], plan_buffer);
  return std::move(prefix).Finish(bytes);
}

}  // namespace

absl::StatusOr<std::vector<int32_t>> TfliteOfflinePlan(absl::string_view model_bytes,
                                                       const Graph& graph,
                                                       const ArenaPlan& arena,
                                                       const TfliteExportOptions& options) {
  ORDO_ASSIGN_OR_RETURN(const Model* model, VerifiedTfliteModel(model_bytes));
  return OfflinePlan(*model, graph, arena, options);
}

absl::StatusOr<std::string> ReorderTfliteModel(absl::string_view model_bytes, const Graph& graph,
                                               absl::Span<const OpId> schedule,
                                               const ArenaPlan& arena,
                                               const TfliteExportOptions& options) {
  ORDO_ASSIGN_OR_RETURN(const Model* model, VerifiedTfliteModel(model_bytes));
  ORDO_RETURN_IF_ERROR(CheckMovable(*model));
  ORDO_ASSIGN_OR_RETURN(std::vector<int32_t> order, OperatorOrder(*model, graph, schedule));
  ORDO_ASSIGN_OR_RETURN(std::vector<int32_t> plan, OfflinePlan(*model, graph, arena, options));
  return PrependedModel(model_bytes, *model, order, plan);
}

}  // namespace ordo
