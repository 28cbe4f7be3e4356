#ifndef ORDO_CORE_SCHEDULE_SCHEDULER_REGISTRY_H_
#define ORDO_CORE_SCHEDULE_SCHEDULER_REGISTRY_H_

#include "core/schedule/part_schedulers.h"

namespace ordo {

// Every scheduler ordo ships, in the order reports list them: the registry
// the CLI, the server, GetInfo and the benches find schedulers in. It is
// PartSchedulers() with `best` the divide and conquer by parts
// (DivideAndConquerScheduler over core/parts ScheduleByParts), so this
// sits above core/parts and the other schedulers below it (targets
// ordo_schedule above ordo_schedulers).
const SchedulerRegistry& BuiltinSchedulers();

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_SCHEDULER_REGISTRY_H_
