#include "server/compile_admission.h"

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "rpc/grpc_status.h"

namespace ordo::server {

absl::StatusOr<CompileAdmission::Slot> CompileAdmission::Admit() {
  // Take first, then give back when over: two racing calls can never both
  // see room for one.
  if (running_.fetch_add(1) >= capacity_) {
    running_.fetch_sub(1);
    // Jittered, so that the clients refused together do not come back
    // together.
    thread_local absl::BitGen random;
    const absl::Duration after = absl::Milliseconds(
        absl::Uniform<int64_t>(random, absl::ToInt64Milliseconds(kMinBusyPushback),
                               absl::ToInt64Milliseconds(kMaxBusyPushback)));
    return rpc::WithRetryPushback(
        absl::ResourceExhaustedError(absl::StrCat("server busy: ", capacity_,
                                                  " compiles running (the limit); retry after ",
                                                  absl::ToInt64Milliseconds(after), " ms")),
        after);
  }
  return Slot(&running_);
}

}  // namespace ordo::server
