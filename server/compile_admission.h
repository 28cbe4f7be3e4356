#ifndef ORDO_SERVER_COMPILE_ADMISSION_H_
#define ORDO_SERVER_COMPILE_ADMISSION_H_

#include <atomic>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ordo::server {

// The pause a refused client is told to take before it resends (the
// pushback trailer, rpc::kRetryPushbackTrailer): drawn from
// [kMinBusyPushback, kMaxBusyPushback) per refusal. A NAS candidate compiles
// in milliseconds, so a slot is usually free again by then; the jitter
// keeps the clients refused together from coming back together.
inline constexpr absl::Duration kMinBusyPushback = absl::Milliseconds(100);
inline constexpr absl::Duration kMaxBusyPushback = absl::Milliseconds(300);

// The concurrent-compile limit: at most `capacity` compiles run at once;
// one more is refused at once (RESOURCE_EXHAUSTED, with a pushback: when to
// send it again) rather than queued, so a client retries elsewhere or later
// instead of waiting behind work it cannot see. Lock-free (one atomic counter); thread-safe. A
// capacity of 0 or less admits nothing.
class CompileAdmission {
 public:
  // A compile's place in the limit, held until destroyed. Movable.
  class Slot {
   public:
    Slot(Slot&& other) noexcept : running_(other.running_) { other.running_ = nullptr; }
    Slot& operator=(Slot&&) = delete;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() {
      if (running_ != nullptr) running_->fetch_sub(1);
    }

   private:
    friend class CompileAdmission;
    explicit Slot(std::atomic<int32_t>* running) : running_(running) {}
    std::atomic<int32_t>* running_;
  };

  explicit CompileAdmission(int32_t capacity) : capacity_(capacity) {}
  CompileAdmission(const CompileAdmission&) = delete;
  CompileAdmission& operator=(const CompileAdmission&) = delete;

  // A slot, or RESOURCE_EXHAUSTED ("server busy: N compiles running (the
  // limit); retry after M ms", carrying that pushback: rpc::RetryPushback)
  // when all `capacity` are held.
  absl::StatusOr<Slot> Admit();
  // Slots held now (a snapshot).
  int32_t running() const { return running_.load(); }

 private:
  const int32_t capacity_;
  std::atomic<int32_t> running_{0};
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_COMPILE_ADMISSION_H_
