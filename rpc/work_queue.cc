#include "rpc/work_queue.h"

#include <malloc.h>

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"

// jemalloc's control call, when the binary links jemalloc (ordo-server and
// ordo-worker outside sanitizer builds, see the top CMakeLists.txt); null
// otherwise.
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp,
                       size_t newlen) __attribute__((weak));

namespace ordo::rpc {
namespace {

// Returns the free pages of every allocator arena to the system: jemalloc's
// purge of all arenas (its decay would take about 10 s), else glibc's trim.
void ReleaseFreeHeapPages() {
  if (mallctl != nullptr) {
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);  // 4096: MALLCTL_ARENAS_ALL
  } else {
    malloc_trim(0);
  }
}

}  // namespace

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
    if (absl::Now() - start >= kTrimHeapAfter) ReleaseFreeHeapPages();
  }
}

}  // namespace ordo::rpc
