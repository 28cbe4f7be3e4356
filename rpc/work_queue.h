#ifndef ORDO_RPC_WORK_QUEUE_H_
#define ORDO_RPC_WORK_QUEUE_H_

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace ordo::rpc {

// A fixed pool of threads running closures in FIFO order: where service
// methods do their long work, off gRPC's reactor threads. The destructor
// runs what is queued, then joins. Thread-safe.
class WorkQueue {
 public:
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
