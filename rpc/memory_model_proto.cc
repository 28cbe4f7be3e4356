#include "rpc/memory_model_proto.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/util/checked_math.h"

namespace ordo::rpc {
namespace {

absl::Status Invalid(absl::string_view what, int64_t id, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(what, " ", id, ": ", rule));
}

}  // namespace

v1::MemoryModel MemoryModelToProto(const MemoryModel& model) {
  v1::MemoryModel proto;
  for (const MemoryModel::OpInfo& op : model.ops) {
    v1::MemoryModel::Op* out = proto.add_ops();
    out->mutable_inputs()->Add(op.inputs.begin(), op.inputs.end());
    out->mutable_outputs()->Add(op.outputs.begin(), op.outputs.end());
    out->set_inplace_input(op.inplace_input);
  }
  for (const MemoryModel::TensorInfo& tensor : model.tensors) {
    v1::MemoryModel::Tensor* out = proto.add_tensors();
    out->set_bytes(tensor.bytes);
    out->set_producer(tensor.producer);
    out->mutable_consumers()->Add(tensor.consumers.begin(), tensor.consumers.end());
    out->set_live_at_end(tensor.live_at_end);
  }
  proto.set_constant_bytes(model.constant_bytes);
  proto.mutable_options()->set_inplace(model.options.inplace);
  proto.mutable_options()->set_count_weights(model.options.count_weights);
  proto.mutable_options()->set_activation_element_bytes(model.options.activation_element_bytes);
  return proto;
}

absl::StatusOr<MemoryModel> MemoryModelFromProto(const v1::MemoryModel& proto,
                                                 const MemoryModelLimits& limits) {
  if (proto.ops_size() > limits.max_ops) {
    return absl::InvalidArgumentError(
        absl::StrCat("model has ", proto.ops_size(), " ops; the limit is ", limits.max_ops));
  }
  if (proto.tensors_size() > limits.max_tensors) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model has ", proto.tensors_size(), " tensors; the limit is ", limits.max_tensors));
  }
  const int32_t num_ops = proto.ops_size();
  const int32_t num_tensors = proto.tensors_size();
  const int32_t element_bytes = proto.options().activation_element_bytes();
  if (element_bytes < 0 || element_bytes > 16) {
    return absl::InvalidArgumentError(absl::StrCat(
        "options: activation_element_bytes ", element_bytes, " is outside [0, 16]"));
  }
  if (proto.constant_bytes() < 0) {
    return absl::InvalidArgumentError("constant_bytes is negative");
  }
  MemoryModel model;
  model.options.inplace = proto.options().inplace();
  model.options.count_weights = proto.options().count_weights();
  model.options.activation_element_bytes = element_bytes;
  model.constant_bytes = proto.constant_bytes();

  int64_t edges = 0;
  int64_t total_bytes = model.constant_bytes;
  model.tensors.resize(num_tensors);
  for (int32_t t = 0; t < num_tensors; ++t) {
    const v1::MemoryModel::Tensor& in = proto.tensors(t);
    MemoryModel::TensorInfo& tensor = model.tensors[t];
    if (in.bytes() < 0) return Invalid("tensor", t, "bytes is negative");
    std::optional<int64_t> sum = CheckedAdd(total_bytes, in.bytes());
    if (!sum) return Invalid("tensor", t, "total bytes overflow int64");
    total_bytes = *sum;
    if (in.producer() < -1 || in.producer() >= num_ops) {
      return Invalid("tensor", t, "producer out of range");
    }
    tensor.bytes = in.bytes();
    tensor.producer = in.producer() < 0 ? kNoId : in.producer();
    tensor.live_at_end = in.live_at_end();
    edges += in.consumers_size();
    if (edges > limits.max_edges) return Invalid("tensor", t, "too many edges");
    for (int i = 0; i < in.consumers_size(); ++i) {
      const int32_t op = in.consumers(i);
      if (op < 0 || op >= num_ops) return Invalid("tensor", t, "consumer out of range");
      if (i > 0 && op <= in.consumers(i - 1)) {
        return Invalid("tensor", t, "consumers not distinct and ascending");
      }
      tensor.consumers.push_back(op);
    }
  }

  // Producers and consumers the ops declare, to compare with the tensors'.
  std::vector<int32_t> declared_producer(num_tensors, kNoId);
  std::vector<std::vector<int32_t>> declared_consumers(num_tensors);
  model.ops.resize(num_ops);
  for (int32_t o = 0; o < num_ops; ++o) {
    const v1::MemoryModel::Op& in = proto.ops(o);
    MemoryModel::OpInfo& op = model.ops[o];
    edges += in.inputs_size() + in.outputs_size();
    if (edges > limits.max_edges) return Invalid("op", o, "too many edges");
    for (int i = 0; i < in.inputs_size(); ++i) {
      const int32_t t = in.inputs(i);
      if (t < 0 || t >= num_tensors) return Invalid("op", o, "input out of range");
      if (i > 0 && t <= in.inputs(i - 1)) {
        return Invalid("op", o, "inputs not distinct and ascending");
      }
      op.inputs.push_back(t);
      declared_consumers[t].push_back(o);
    }
    for (int32_t t : in.outputs()) {
      if (t < 0 || t >= num_tensors) return Invalid("op", o, "output out of range");
      if (declared_producer[t] != kNoId) {
        return Invalid("tensor", t, "written by more than one op (or twice)");
      }
      declared_producer[t] = o;
      op.outputs.push_back(t);
    }
    if (in.inplace_input() != -1) {
      const int32_t t = in.inplace_input();
      if (!std::binary_search(op.inputs.begin(), op.inputs.end(), t)) {
        return Invalid("op", o, "in-place input is not one of its inputs");
      }
      if (op.outputs.size() != 1 || model.tensors[op.outputs[0]].bytes != model.tensors[t].bytes) {
        return Invalid("op", o, "in-place op needs one output of its input's size");
      }
      op.inplace_input = t;
    }
  }
  for (int32_t t = 0; t < num_tensors; ++t) {
    if (declared_producer[t] != model.tensors[t].producer) {
      return Invalid("tensor", t, "producer differs from the op writing it");
    }
    // declared_consumers[t] is ascending (ops visited in order).
    if (declared_consumers[t] != model.tensors[t].consumers) {
      return Invalid("tensor", t, "consumers differ from the ops reading it");
    }
    if (model.tensors[t].producer != kNoId &&
        std::binary_search(model.ops[model.tensors[t].producer].inputs.begin(),
                           model.ops[model.tensors[t].producer].inputs.end(), t)) {
      return Invalid("tensor", t, "read by the op writing it (a cycle)");
    }
  }

  // Acyclic: Kahn's algorithm over op -> op edges through tensors.
  std::vector<int32_t> pending(num_ops, 0);
  for (int32_t o = 0; o < num_ops; ++o) {
    for (int32_t t : model.ops[o].inputs) pending[o] += model.tensors[t].producer != kNoId;
  }
  std::vector<int32_t> ready;
  for (int32_t o = 0; o < num_ops; ++o) {
    if (pending[o] == 0) ready.push_back(o);
  }
  int32_t done = 0;
  while (!ready.empty()) {
    const int32_t o = ready.back();
    ready.pop_back();
    ++done;
    for (int32_t t : model.ops[o].outputs) {
      for (int32_t c : model.tensors[t].consumers) {
        if (--pending[c] == 0) ready.push_back(c);
      }
    }
  }
  if (done != num_ops) {
    for (int32_t o = 0; o < num_ops; ++o) {
      if (pending[o] > 0) return Invalid("op", o, "is on a dependency cycle");
    }
  }
  return model;
}

v1::ScheduleStatus ScheduleStatusToProto(ScheduleStatus status) {
  switch (status) {
    case ScheduleStatus::kHeuristic:
      return v1::SCHEDULE_STATUS_HEURISTIC;
    case ScheduleStatus::kBounded:
      return v1::SCHEDULE_STATUS_BOUNDED;
    case ScheduleStatus::kOptimal:
      return v1::SCHEDULE_STATUS_OPTIMAL;
  }
  return v1::SCHEDULE_STATUS_UNSPECIFIED;
}

ScheduleStatus ScheduleStatusFromProto(v1::ScheduleStatus status) {
  switch (status) {
    case v1::SCHEDULE_STATUS_BOUNDED:
      return ScheduleStatus::kBounded;
    case v1::SCHEDULE_STATUS_OPTIMAL:
      return ScheduleStatus::kOptimal;
    default:
      return ScheduleStatus::kHeuristic;
  }
}

google::protobuf::Duration DurationToProto(absl::Duration duration) {
  // google/protobuf/duration.proto: seconds within +-315,576,000,000.
  const absl::Duration longest = absl::Seconds(315'576'000'000) + absl::Nanoseconds(999'999'999);
  duration = std::clamp(duration, -longest, longest);
  google::protobuf::Duration proto;
  const int64_t seconds = absl::IDivDuration(duration, absl::Seconds(1), &duration);
  proto.set_seconds(seconds);
  proto.set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(duration)));
  return proto;
}

absl::Duration DurationFromProto(const google::protobuf::Duration& proto) {
  if (proto.seconds() < 0 || proto.nanos() < 0 || proto.nanos() >= 1000000000) {
    return absl::ZeroDuration();
  }
  if (proto.seconds() >= absl::ToInt64Seconds(kMaxTimeLimit)) return kMaxTimeLimit;
  return absl::Seconds(proto.seconds()) + absl::Nanoseconds(proto.nanos());
}

v1::SubgraphResult SubgraphResultToProto(const ScheduleResult& result) {
  v1::SubgraphResult proto;
  proto.mutable_order()->Add(result.order.begin(), result.order.end());
  proto.set_peak_bytes(result.peak_bytes);
  proto.set_lower_bound_bytes(result.lower_bound_bytes);
  proto.set_status(ScheduleStatusToProto(result.status));
  proto.set_algorithm(result.algorithm);
  proto.set_states_expanded(result.stats.states_expanded);
  proto.set_states_stored(result.stats.states_stored);
  *proto.mutable_time() = DurationToProto(result.stats.time);
  return proto;
}

ScheduleResult SubgraphResultFromProto(const v1::SubgraphResult& proto) {
  ScheduleResult result;
  result.order.assign(proto.order().begin(), proto.order().end());
  result.peak_bytes = proto.peak_bytes();
  result.lower_bound_bytes = proto.lower_bound_bytes();
  result.status = ScheduleStatusFromProto(proto.status());
  result.algorithm = proto.algorithm();
  result.stats.states_expanded = proto.states_expanded();
  result.stats.states_stored = proto.states_stored();
  result.stats.time = DurationFromProto(proto.time());
  return result;
}

}  // namespace ordo::rpc
