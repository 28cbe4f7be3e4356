#include "rpc/work_queue.h"

#include <malloc.h>

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"

namespace ordo::rpc {

WorkQueue::WorkQueue(int threads) {
  for (int i = 0; i < std::max(threads, 1); ++i) threads_.emplace_back([this] { Loop(); });
}

WorkQueue::~WorkQueue() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& thread : threads_) thread.join();
}

void WorkQueue::Schedule(std::function<void()> work) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(work));
}

void WorkQueue::Loop() {
  while (true) {
    std::function<void()> work;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](WorkQueue* q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(q->mu_) {
            return q->stopping_ || !q->queue_.empty();
          },
          this));
      if (queue_.empty()) return;  // stopping and drained
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    const absl::Time start = absl::Now();
    work();
    if (absl::Now() - start >= kTrimHeapAfter) malloc_trim(0);
  }
}

}  // namespace ordo::rpc
