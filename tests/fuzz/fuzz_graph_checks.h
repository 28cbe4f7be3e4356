#ifndef ORDO_TESTS_FUZZ_FUZZ_GRAPH_CHECKS_H_
#define ORDO_TESTS_FUZZ_FUZZ_GRAPH_CHECKS_H_

#include "core/graph/graph.h"
#include "core/memory/memory_model.h"

namespace ordo::fuzz {

// Drops protobuf's log lines (one per invalid UTF-8 string field parsed):
// at thousands of inputs a second they drown the fuzzer's own output and
// slow it down. Call from LLVMFuzzerInitialize.
void QuietProtobufLogs();

// Limits for fuzzed inputs: small enough that one input runs in
// milliseconds, so libFuzzer spends its time on parsing, not scheduling.
GraphLimits FuzzGraphLimits();

// What the compile path does right after a successful import, on the cheap
// stages: the memory model under default and overriding options, the model
// order and the greedy order simulated. Aborts (a fuzzer crash) when an
// imported graph breaks an invariant the importers promise: OpId order is a
// valid schedule, every size is non-negative.
void CheckImportedGraph(const Graph& graph);

// The same for a memory model (already decoded and validated): greedy and
// Kahn schedules simulate, the lower bound stays at most the peak.
void CheckMemoryModel(const MemoryModel& model);

}  // namespace ordo::fuzz

#endif  // ORDO_TESTS_FUZZ_FUZZ_GRAPH_CHECKS_H_
