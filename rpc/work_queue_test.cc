#include "rpc/work_queue.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace ordo::rpc {
namespace {

// Labelled `concurrency`: the TSan build runs it (scripts/test --sanitize),
// so plain (non-atomic) data handed from Schedule to the workers is checked
// for races too, not only the counts.

TEST(WorkQueueTest, DestructorRunsEverythingQueuedFromManyThreads) {
  constexpr int kProducers = 4;
  constexpr int kPerProducer = 250;
  absl::Mutex mu;
  std::vector<int> seen;  // guarded by mu
  std::atomic<int> runs{0};
  {
    WorkQueue queue(3);
    std::vector<std::thread> producers;
    for (int p = 0; p < kProducers; ++p) {
      producers.emplace_back([&, p] {
        for (int i = 0; i < kPerProducer; ++i) {
          // `payload` is written here and read on a worker thread: the
          // queue's mutex must order the two.
          auto payload = std::make_shared<int>(p * kPerProducer + i);
          queue.Schedule([&, payload] {
            runs.fetch_add(1);
            absl::MutexLock lock(&mu);
            seen.push_back(*payload);
          });
        }
      });
    }
    for (std::thread& t : producers) t.join();
  }  // ~WorkQueue drains, then joins.
  EXPECT_EQ(runs.load(), kProducers * kPerProducer);
  absl::MutexLock lock(&mu);
  ASSERT_EQ(seen.size(), static_cast<size_t>(kProducers * kPerProducer));
  std::vector<bool> hit(seen.size(), false);
  for (int v : seen) hit[v] = true;
  for (size_t i = 0; i < hit.size(); ++i) EXPECT_TRUE(hit[i]) << "task " << i << " never ran";
}

TEST(WorkQueueTest, ZeroThreadsStillRunsWork) {
  std::atomic<int> runs{0};
  {
    WorkQueue queue(0);
    queue.Schedule([&] { runs.fetch_add(1); });
  }
  EXPECT_EQ(runs.load(), 1);
}

}  // namespace
}  // namespace ordo::rpc
