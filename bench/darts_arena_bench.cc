// ordo-darts-arena-bench: the arena stage of a cold DARTS candidate, where
// the service's cold tail was (docs/nas-log.md). For each candidate of the
// realistic stream (bench/darts_candidates.h): its `best` schedule, then the
// `best` arena planner under the compile path's limits (ArenaOptions), and
// the exact search at the lower bound alone (nodes to a placement or a
// proof). Prints percentiles of the arena stage's time, how many layouts
// were proved optimal, and the nodes the bound needed; also the time to
// build each candidate's Graph from its ordo.v1.Graph (GraphFromProto, the
// service's first step on a native candidate; mean of 20 conversions).
//
//   ordo-darts-arena-bench [--candidates=200] [--seed=1] [--max_search_nodes=N]

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "bench/darts_candidates.h"
#include "core/arena/arena_planner_registry.h"
#include "core/arena/arena_search.h"
#include "core/compile/compile.h"
#include "core/graph/graph_proto.h"
#include "core/memory/memory_model.h"
#include "core/util/check.h"
#include "core/util/clock.h"

namespace ordo {
namespace {

struct Options {
  int64_t candidates = 200;
  int64_t seed = 1;
  int64_t max_search_nodes = ArenaOptions{}.max_search_nodes;
};

bool ParseArgs(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    const size_t eq = arg.find('=');
    if (eq == absl::string_view::npos) return false;
    const absl::string_view name = arg.substr(0, eq), value = arg.substr(eq + 1);
    int64_t* target = name == "--candidates"         ? &options.candidates
                      : name == "--seed"             ? &options.seed
                      : name == "--max_search_nodes" ? &options.max_search_nodes
                                                     : nullptr;
    if (target == nullptr || !absl::SimpleAtoi(value, target)) return false;
  }
  return true;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * values.size()))];
}

int Run(const Options& options) {
  bench::DartsCandidateStream::Options stream_options;
  stream_options.seed = static_cast<uint64_t>(options.seed);
  bench::DartsCandidateStream stream(stream_options);
  const RealClock clock;
  std::vector<double> arena_ms, bound_nodes, convert_us;
  int32_t optimal = 0, at_bound = 0, bound_proved_infeasible = 0, bound_gave_up = 0;
  int64_t gap_bytes = 0;
  for (int64_t i = 0; i < options.candidates; ++i) {
    const v1::Graph proto = stream.Next();
    constexpr int kConversions = 20;
    const absl::Time convert_start = absl::Now();
    for (int k = 0; k < kConversions; ++k) ORDO_CHECK(GraphFromProto(proto).ok());
    convert_us.push_back(absl::ToDoubleMicroseconds(absl::Now() - convert_start) / kConversions);
    absl::StatusOr<Graph> graph = GraphFromProto(proto);
    ORDO_CHECK(graph.ok());
    CompileOptions compile;
    compile.arena_planner = kNoArenaPlanner;
    absl::StatusOr<CompileResult> result = Compile(*graph, compile, clock);
    ORDO_CHECK(result.ok());
    absl::StatusOr<MemoryModel> model = BuildMemoryModel(*graph, compile.memory);
    ORDO_CHECK(model.ok());
    ArenaOptions arena;
    arena.max_search_nodes = options.max_search_nodes;
    const absl::Time start = absl::Now();
    absl::StatusOr<ArenaPlan> plan = PlanArena(*model, result->simulation, arena, clock);
    arena_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
    ORDO_CHECK(plan.ok());
    optimal += plan->optimal;
    at_bound += plan->gap_bytes == 0;
    gap_bytes += plan->gap_bytes;
    // The bound alone, with the whole default budget.
    absl::StatusOr<ArenaProblem> problem =
        BuildArenaProblem(*model, result->simulation, arena.alignment);
    ORDO_CHECK(problem.ok());
    ArenaLimits limits;
    limits.deadline = absl::Now() + absl::Seconds(2);
    const ArenaSearchResult bound = SearchArenaRoundRobin(
        *problem, problem->lower_bound_bytes, ArenaLimits{}.max_search_nodes, limits);
    if (bound.outcome == ArenaSearchOutcome::kFound) bound_nodes.push_back(bound.nodes);
    bound_proved_infeasible += bound.outcome == ArenaSearchOutcome::kInfeasible;
    bound_gave_up += bound.outcome == ArenaSearchOutcome::kAborted;
  }
  std::printf("candidates %lld, max_search_nodes %lld\n",
              static_cast<long long>(options.candidates),
              static_cast<long long>(options.max_search_nodes));
  std::printf("GraphFromProto us: p50 %.1f  p90 %.1f\n", Percentile(convert_us, 0.5),
              Percentile(convert_us, 0.9));
  std::printf("arena stage ms: p50 %.2f  p90 %.2f  p99 %.2f  max %.2f\n",
              Percentile(arena_ms, 0.5), Percentile(arena_ms, 0.9), Percentile(arena_ms, 0.99),
              Percentile(arena_ms, 1.0));
  std::printf("layouts proved optimal %d, at the lower bound %d, summed gap %lld bytes\n", optimal,
              at_bound, static_cast<long long>(gap_bytes));
  std::printf("search at the bound: found %zu (nodes p50 %.0f p90 %.0f p99 %.0f max %.0f), "
              "proved infeasible %d, gave up %d\n",
              bound_nodes.size(), Percentile(bound_nodes, 0.5), Percentile(bound_nodes, 0.9),
              Percentile(bound_nodes, 0.99), Percentile(bound_nodes, 1.0),
              bound_proved_infeasible, bound_gave_up);
  return 0;
}

}  // namespace
}  // namespace ordo

int main(int argc, char** argv) {
  ordo::Options options;
  if (!ordo::ParseArgs(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: ordo-darts-arena-bench [--candidates=N] [--seed=N] "
                 "[--max_search_nodes=N]\n");
    return 2;
  }
  return ordo::Run(options);
}
