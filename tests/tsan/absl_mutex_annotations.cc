// TSan build only (ORDO_SANITIZE=thread; linked first into every target).
//
// Why: Debian's abseil is not built with -fsanitize=thread, so absl::Mutex
// (libabsl_synchronization.so) carries none of its TSan annotations and
// TSan sees no happens-before edge between an Unlock and the next Lock:
// every field guarded by an absl::Mutex would be reported as a race. This
// library defines the Mutex/CondVar entry points our code (and gRPC's
// grpc_core::Mutex, which wraps absl::Mutex) calls, so the dynamic linker
// binds them here first; each forwards to abseil's real function (found
// with dlsym(RTLD_NEXT)) and tells TSan "release" before giving the mutex
// up and "acquire" after getting it. That restores exactly the ordering
// the mutex provides, nothing more, so real races stay visible.
//
// Not covered: entry points nobody in ordo calls (LockWhenWithTimeout,
// ReaderLockWhenWithTimeout, ...). A new call to one of those shows up as
// a false race in the TSan run; add it here.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace {

template <typename Fn>
Fn Real(const char* mangled) {
  void* fn = dlsym(RTLD_NEXT, mangled);
  if (fn == nullptr) {
    std::fprintf(stderr, "tsan absl shim: %s not found in abseil\n", mangled);
    std::abort();
  }
  return reinterpret_cast<Fn>(fn);
}

// abseil evaluates a Condition with the mutex held, but possibly before
// (in the waiter) or outside (in the unlocking thread, inside Unlock) the
// calls wrapped below: the evaluation itself "acquires" the mutex before
// and "releases" it after, as a critical section of its own.
struct AnnotatedCondition {
  const absl::Condition* cond;
  absl::Mutex* mu;
  static bool Eval(void* arg) {
    auto* self = static_cast<AnnotatedCondition*>(arg);
    __tsan_acquire(self->mu);
    const bool met = self->cond->Eval();
    __tsan_release(self->mu);
    return met;
  }
};

// Mangled names of abseil 20220623 as Debian builds it (inline namespace
// debian3); `nm -D libabsl_synchronization.so` lists them.
#define ORDO_REAL(type, name) static const auto real = Real<type>(name)

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  ORDO_REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex4LockEv");
  real(this);
  __tsan_acquire(this);
}

void Mutex::ReaderLock() {
  ORDO_REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex10ReaderLockEv");
  real(this);
  __tsan_acquire(this);
}

bool Mutex::TryLock() {
  ORDO_REAL(bool (*)(Mutex*), "_ZN4absl7debian35Mutex7TryLockEv");
  const bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}

void Mutex::Unlock() {
  ORDO_REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex6UnlockEv");
  __tsan_release(this);
  real(this);
}

void Mutex::ReaderUnlock() {
  ORDO_REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex12ReaderUnlockEv");
  __tsan_release(this);
  real(this);
}

void Mutex::LockWhen(const Condition& cond) {
  ORDO_REAL(void (*)(Mutex*, const Condition&), "_ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE");
  AnnotatedCondition wrapped{&cond, this};
  real(this, absl::Condition(&AnnotatedCondition::Eval, &wrapped));
  __tsan_acquire(this);
}

void Mutex::ReaderLockWhen(const Condition& cond) {
  ORDO_REAL(void (*)(Mutex*, const Condition&),
            "_ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE");
  AnnotatedCondition wrapped{&cond, this};
  real(this, absl::Condition(&AnnotatedCondition::Eval, &wrapped));
  __tsan_acquire(this);
}

// Await* give the mutex up while waiting and hold it again on return.
void Mutex::Await(const Condition& cond) {
  ORDO_REAL(void (*)(Mutex*, const Condition&), "_ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE");
  __tsan_release(this);
  AnnotatedCondition wrapped{&cond, this};
  real(this, absl::Condition(&AnnotatedCondition::Eval, &wrapped));
  __tsan_acquire(this);
}

bool Mutex::AwaitWithTimeout(const Condition& cond, absl::Duration timeout) {
  ORDO_REAL(bool (*)(Mutex*, const Condition&, absl::Duration),
            "_ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  __tsan_release(this);
  AnnotatedCondition wrapped{&cond, this};
  const bool met = real(this, absl::Condition(&AnnotatedCondition::Eval, &wrapped), timeout);
  __tsan_acquire(this);
  return met;
}

bool Mutex::AwaitWithDeadline(const Condition& cond, absl::Time deadline) {
  ORDO_REAL(bool (*)(Mutex*, const Condition&, absl::Time),
            "_ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  __tsan_release(this);
  AnnotatedCondition wrapped{&cond, this};
  const bool met = real(this, absl::Condition(&AnnotatedCondition::Eval, &wrapped), deadline);
  __tsan_acquire(this);
  return met;
}

void CondVar::Wait(Mutex* mu) {
  ORDO_REAL(void (*)(CondVar*, Mutex*), "_ZN4absl7debian37CondVar4WaitEPNS0_5MutexE");
  __tsan_release(mu);
  real(this, mu);
  __tsan_acquire(mu);
}

bool CondVar::WaitWithTimeout(Mutex* mu, absl::Duration timeout) {
  ORDO_REAL(bool (*)(CondVar*, Mutex*, absl::Duration),
            "_ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  __tsan_release(mu);
  const bool timed_out = real(this, mu, timeout);
  __tsan_acquire(mu);
  return timed_out;
}

ABSL_NAMESPACE_END
}  // namespace absl
