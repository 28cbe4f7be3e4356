#include "core/schedule/scheduler_registry.h"

#include <memory>

#include "core/schedule/divide_and_conquer_scheduler.h"

namespace ordo {

SchedulerRegistry BuiltinSchedulers() {
  SchedulerRegistry registry = PartSchedulers();
  registry.Register({"best", "divide and conquer at cut ops: best heuristic per part, then dp",
                     true, [] { return std::make_unique<DivideAndConquerScheduler>("best"); }});
  return registry;
}

}  // namespace ordo
