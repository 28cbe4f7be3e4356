#ifndef ORDO_RPC_WORK_QUEUE_H_
#define ORDO_RPC_WORK_QUEUE_H_

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ordo::rpc {

// A fixed pool of threads running closures in FIFO order: where service
// methods do their long work, off gRPC's reactor threads. The destructor
// runs what is queued, then joins. Thread-safe.
//
// The heap is trimmed here, and only here: after a closure that ran
// kTrimHeapAfter or longer, its thread calls malloc_trim. Every method of
// front and workers (unary, CompileStream, CompileMany) runs its body in a
// closure, so one rule covers them all. (With jemalloc linked, the
// same trim is its purge of all arenas.) Why: a long call may have grown the
// heap by far more than its request's size (a 10,000-wide fan-out's arena
// planning, a DP's state tables, a large model's import), and glibc keeps
// such freed pages resident in the arena of the thread that used them, so
// RSS ratchets up call after call. Trimming costs a few milliseconds, under
// 2% of a call this long, and runs after the closure has answered.
class WorkQueue {
 public:
  static constexpr absl::Duration kTrimHeapAfter = absl::Milliseconds(200);

  explicit WorkQueue(int threads);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Schedule(std::function<void()> work);

 private:
  void Loop();

  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace ordo::rpc

#endif  // ORDO_RPC_WORK_QUEUE_H_
