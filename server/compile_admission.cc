#include "server/compile_admission.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ordo::server {

absl::StatusOr<CompileAdmission::Slot> CompileAdmission::Admit() {
  // Take first, then give back when over: two racing calls can never both
  // see room for one.
  if (running_.fetch_add(1) >= capacity_) {
    running_.fetch_sub(1);
    return absl::ResourceExhaustedError(
        absl::StrCat("server busy: ", capacity_, " compiles running (the limit)"));
  }
  return Slot(&running_);
}

}  // namespace ordo::server
