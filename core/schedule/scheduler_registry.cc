#include "core/schedule/scheduler_registry.h"

#include <memory>

#include "core/schedule/divide_and_conquer_scheduler.h"

namespace ordo {

const SchedulerRegistry& BuiltinSchedulers() {
  // Built once per process (as PartSchedulers()), then only read.
  static const SchedulerRegistry* const registry = [] {
    auto* builtin = new SchedulerRegistry(PartSchedulers());
    builtin->Register(
        {"best", "divide and conquer at cut ops: best heuristic per part, then dp", true,
         [] { return std::make_unique<DivideAndConquerScheduler>("best"); }});
    return builtin;
  }();
  return *registry;
}

}  // namespace ordo
