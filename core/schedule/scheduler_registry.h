#ifndef ORDO_CORE_SCHEDULE_SCHEDULER_REGISTRY_H_
#define ORDO_CORE_SCHEDULE_SCHEDULER_REGISTRY_H_

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
// A value, not a singleton: build it with BuiltinSchedulers().
class SchedulerRegistry {
 public:
  void Register(SchedulerInfo info);
  // INVALID_ARGUMENT naming the known schedulers when `name` is unknown.
  absl::StatusOr<std::unique_ptr<Scheduler>> Create(absl::string_view name) const;
  const std::vector<SchedulerInfo>& schedulers() const { return schedulers_; }
  // "a|b|c", for usage messages.
  std::string NamesJoined() const;

 private:
  std::vector<SchedulerInfo> schedulers_;
};

// Every scheduler ordo ships, in the order reports list them.
SchedulerRegistry BuiltinSchedulers();

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_SCHEDULER_REGISTRY_H_
