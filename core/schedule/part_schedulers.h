#ifndef ORDO_CORE_SCHEDULE_PART_SCHEDULERS_H_
#define ORDO_CORE_SCHEDULE_PART_SCHEDULERS_H_

#include <functional>
#include <memory>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "core/schedule/scheduler.h"

namespace ordo {

struct SchedulerInfo {
  std::string name;
  std::string description;
  // Proves optimality when it finishes within its limits.
  bool exact = false;
  std::function<std::unique_ptr<Scheduler>()> create;
};

// Schedulers by name: the one source for CLI flags, GetInfo and lookups.
// BuiltinSchedulers() (scheduler_registry.h: what users name) and
// PartSchedulers() (what runs on one part) are built once per process and
// never change; a caller that needs another set copies one and registers.
class SchedulerRegistry {
 public:
  // Adds `info`, or replaces the scheduler of the same name in place.
  void Register(SchedulerInfo info);
  // INVALID_ARGUMENT naming the known schedulers when `name` is unknown.
  absl::StatusOr<std::unique_ptr<Scheduler>> Create(absl::string_view name) const;
  const std::vector<SchedulerInfo>& schedulers() const { return schedulers_; }
  // "a|b|c", for usage messages.
  std::string NamesJoined() const;

 private:
  std::vector<SchedulerInfo> schedulers_;
};

// Every scheduler ordo ships as run on one part of a divided model
// (core/parts: ThreadPartRunner, workers), in the order reports list them:
// as BuiltinSchedulers(), except that `best` is BestPartScheduler, which
// does not split the model again.
const SchedulerRegistry& PartSchedulers();

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_PART_SCHEDULERS_H_
