#include "tests/fuzz/fuzz_graph_checks.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <vector>

#include "absl/status/statusor.h"
#include "core/memory/simulator.h"
#include "core/schedule/scheduler_registry.h"
#include "google/protobuf/stubs/logging.h"

namespace ordo::fuzz {
namespace {

// A fuzzer-visible failure: libFuzzer records the input that got here.
[[noreturn]] void Fail(const char* what, const absl::Status& status) {
  std::fprintf(stderr, "fuzz invariant broken: %s: %s\n", what, status.ToString().c_str());
  std::abort();
}

void RunScheduler(const MemoryModel& model, const char* name) {
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = BuiltinSchedulers().Create(name);
  if (!scheduler.ok()) Fail(name, scheduler.status());
  absl::StatusOr<ScheduleResult> result = (*scheduler)->Schedule(model, ScheduleLimits{});
  if (!result.ok()) Fail(name, result.status());
  if (result->lower_bound_bytes > result->peak_bytes) {
    Fail(name, absl::InternalError("lower bound above peak"));
  }
}

}  // namespace

void QuietProtobufLogs() { google::protobuf::SetLogHandler(nullptr); }

GraphLimits FuzzGraphLimits() {
  GraphLimits limits;
  limits.max_ops = 2000;
  limits.max_tensors = 8000;
  return limits;
}

void CheckImportedGraph(const Graph& graph) {
  MemoryOptions overriding;
  overriding.count_weights = true;
  overriding.activation_element_bytes = 8;
  for (const MemoryOptions& options : {MemoryOptions{}, overriding}) {
    // An overflow under the element-size override is a legitimate refusal.
    absl::StatusOr<MemoryModel> model = BuildMemoryModel(graph, options);
    if (!model.ok()) continue;
    std::vector<int32_t> model_order(model->num_ops());
    std::iota(model_order.begin(), model_order.end(), 0);
    absl::StatusOr<int64_t> peak = SimulatePeak(*model, model_order);
    if (!peak.ok()) Fail("model order", peak.status());
    CheckMemoryModel(*model);
  }
}

void CheckMemoryModel(const MemoryModel& model) {
  RunScheduler(model, "kahn");
  RunScheduler(model, "greedy");
}

}  // namespace ordo::fuzz
