#include "core/schedule/part_schedulers.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/schedule/baseline_schedulers.h"
#include "core/schedule/best_part_scheduler.h"
#include "core/schedule/dp_scheduler.h"
#include "core/schedule/greedy_scheduler.h"
#include "core/schedule/hierarchical_scheduler.h"
#include "core/schedule/hmcos_scheduler.h"
#include "core/schedule/serenity_scheduler.h"
#include "core/schedule/topological_orders.h"

namespace ordo {

void SchedulerRegistry::Register(SchedulerInfo info) {
  for (SchedulerInfo& known : schedulers_) {
    if (known.name == info.name) {
      known = std::move(info);
      return;
    }
  }
  schedulers_.push_back(std::move(info));
}

absl::StatusOr<std::unique_ptr<Scheduler>> SchedulerRegistry::Create(
    absl::string_view name) const {
  for (const SchedulerInfo& info : schedulers_) {
    if (info.name == name) return info.create();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown scheduler \"", name, "\"; known: ", NamesJoined()));
}

std::string SchedulerRegistry::NamesJoined() const {
  return absl::StrJoin(schedulers_, "|", [](std::string* out, const SchedulerInfo& info) {
    out->append(info.name);
  });
}

namespace {

std::unique_ptr<Scheduler> MakeOrderScheduler(
    std::string name, std::vector<int32_t> (*order)(const OpDag&)) {
  return std::make_unique<OrderFunctionScheduler>(
      std::move(name), [order](const MemoryModel&, const OpDag& dag) { return order(dag); });
}

std::unique_ptr<Scheduler> MakeGreedy() {
  return std::make_unique<OrderFunctionScheduler>("greedy", GreedyOrder);
}

SchedulerRegistry MakePartSchedulers() {
  SchedulerRegistry registry;
  registry.Register({"model", "the order of the model file", false,
                     [] { return MakeOrderScheduler("model", ModelOrder); }});
  registry.Register({"kahn", "Kahn's algorithm, FIFO (what most frameworks do)", false,
                     [] { return MakeOrderScheduler("kahn", KahnOrder); }});
  registry.Register({"rpo", "reverse post-order DFS (HMCOS baseline)", false,
                     [] { return MakeOrderScheduler("rpo", ReversePostOrder); }});
  registry.Register({"greedy", "memory-aware greedy list scheduling", false, MakeGreedy});
  registry.Register({"dp", "exact best-first search over partial schedules", true,
                     [] { return std::make_unique<DpScheduler>(); }});
  registry.Register({"serenity",
                     "SERENITY: dynamic programming under an adaptive soft budget", true,
                     [] { return std::make_unique<SerenityScheduler>(); }});
  registry.Register({"hmcos",
                     "HMCOS (DAC'22): iterative scheduling of the hierarchical graph", false,
                     [] { return std::make_unique<HmcosScheduler>(); }});
  registry.Register({"hierarchical",
                     "HMCOS from the best cheap order, then exact windows around the peak", false,
                     [] { return std::make_unique<HierarchicalScheduler>(); }});
  registry.Register({"best",
                     "on one part: the best cheap order, then dp (with hierarchical's help)",
                     true, [] { return std::make_unique<BestPartScheduler>(); }});
  return registry;
}

}  // namespace

const SchedulerRegistry& PartSchedulers() {
  // Built once: a registry per part task was a dozen allocations each time.
  static const SchedulerRegistry* const registry = new SchedulerRegistry(MakePartSchedulers());
  return *registry;
}

}  // namespace ordo
