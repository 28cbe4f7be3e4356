#include "server/compile_many_reactor.h"

#include <deque>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "rpc/grpc_status.h"
#include "rpc/log.h"
#include "rpc/service_call.h"
#include "server/compiler_service.h"

namespace ordo::server {
namespace {

class CompileManyReactor final
    : public grpc::ServerBidiReactor<v1::CompileManyRequest, v1::CompileManyResponse> {
 public:
  CompileManyReactor(CompilerService* service, grpc::CallbackServerContext* context,
                     rpc::CallEnvironment env, int max_in_flight)
      : service_(service),
        env_(env),
        call_(rpc::MakeCallInfo(context, "CompileMany")),
        max_in_flight_(max_in_flight),
        start_(absl::Now()) {
    if (env_.metrics != nullptr) env_.metrics->inflight_requests().Increment();
    StartRead(&reading_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // half-closed, or the call is gone
      bool finish;
      {
        absl::MutexLock lock(&mu_);
        reads_done_ = true;
        read_in_flight_ = false;
        finish = ReadyToFinish();
      }
      if (finish) FinishStream();
      return;
    }
    bool read_next;
    v1::CompileManyRequest candidate;
    {
      absl::MutexLock lock(&mu_);
      // Taken under the lock: once read_in_flight_ is false, a finishing
      // candidate may start the next read into reading_.
      candidate = std::move(reading_);
      ++in_flight_;
      ++candidates_;
      read_in_flight_ = false;
      if (call_.cancelled->load()) reads_done_ = true;
      read_next = StartReadIfRoom();
    }
    RunCandidate(std::move(candidate));
    if (read_next) StartRead(&reading_);
  }

  void OnWriteDone(bool ok) override {
    bool finish = false;
    bool start_next = false;
    bool read_next = false;
    {
      absl::MutexLock lock(&mu_);
      if (!ok) {  // the client went away: stop every candidate, drop results
        call_.cancelled->store(true);
        pending_.clear();
        // No read is started on a cancelled call; one in flight fails.
        if (!read_in_flight_) reads_done_ = true;
      }
      if (!pending_.empty()) {
        writing_ = std::move(pending_.front());
        pending_.pop_front();
        start_next = true;
      } else {
        write_in_flight_ = false;
        finish = ReadyToFinish();
      }
      read_next = StartReadIfRoom();
    }
    if (read_next) StartRead(&reading_);
    if (start_next) {
      StartWrite(&writing_);
    } else if (finish) {
      FinishStream();
    }
  }

  void OnCancel() override { call_.cancelled->store(true); }

  void OnDone() override {
    if (env_.metrics != nullptr) env_.metrics->inflight_requests().Decrement();
    delete this;
  }

 private:
  // Runs on the work queue; the reactor outlives it (Finish waits for
  // in_flight_ to reach zero).
  void RunCandidate(v1::CompileManyRequest candidate) {
    env_.queue->Schedule([this, candidate = std::move(candidate)]() mutable {
      rpc::CallInfo call = call_;
      call.request_id = absl::StrCat(call_.request_id, "#", NextCandidateNumber());
      const absl::Time start = absl::Now();
      v1::CompileManyResponse result;
      result.set_id(candidate.id());
      absl::Status status =
          service_->RunCompile(call, candidate.request(), *result.mutable_response(), {});
      // One result too large to send fails alone; written, it would end
      // the stream and every candidate after it.
      if (status.ok()) status = rpc::CheckResponseSize(result, env_);
      rpc::RecordCallEnd(env_, call, status, absl::Now() - start);
      if (!status.ok()) {
        result.clear_response();
        const grpc::Status sent = rpc::ToGrpcStatus(status);
        v1::CompileManyError& error = *result.mutable_error();
        error.set_code(static_cast<int32_t>(sent.error_code()));
        error.set_message(sent.error_message());
        if (const std::optional<absl::Duration> after = rpc::RetryPushback(status)) {
          const int64_t ms = absl::ToInt64Milliseconds(*after);
          error.mutable_retry_after()->set_seconds(ms / 1000);
          error.mutable_retry_after()->set_nanos(static_cast<int32_t>(ms % 1000) * 1000000);
        }
      }
      Done(std::move(result));
    });
  }

  // A candidate finished: write its result, and read on if reading paused.
  void Done(v1::CompileManyResponse result) {
    bool write_now = false;
    bool read_next = false;
    bool finish = false;
    {
      absl::MutexLock lock(&mu_);
      --in_flight_;
      if (call_.cancelled->load()) {
        // No read is started on a cancelled call; one in flight fails.
        if (!read_in_flight_) reads_done_ = true;
      } else if (write_in_flight_) {
        pending_.push_back(std::move(result));
      } else {
        write_in_flight_ = true;
        writing_ = std::move(result);
        write_now = true;
      }
      read_next = StartReadIfRoom();
      finish = ReadyToFinish();
    }
    if (write_now) StartWrite(&writing_);
    if (read_next) StartRead(&reading_);
    if (finish) FinishStream();
  }

  int64_t NextCandidateNumber() {
    absl::MutexLock lock(&mu_);
    return ++numbered_;
  }

  // True (and the read counted as in flight: the caller starts it) when
  // another candidate may be read. Results not yet written count against
  // the limit with the candidates compiling: a client that stops reading
  // stops the reading of its candidates, instead of letting results
  // (each up to --max-message-mb) pile up in this process.
  bool StartReadIfRoom() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const int64_t held = in_flight_ + static_cast<int64_t>(pending_.size());
    if (reads_done_ || read_in_flight_ || call_.cancelled->load() || held >= max_in_flight_) {
      return false;
    }
    read_in_flight_ = true;
    return true;
  }

  // True once (the caller finishes) when nothing is left to do.
  bool ReadyToFinish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || !reads_done_ || in_flight_ > 0 || write_in_flight_ || !pending_.empty()) {
      return false;
    }
    finished_ = true;
    return true;
  }

  void FinishStream() {
    int64_t candidates;
    {
      absl::MutexLock lock(&mu_);
      candidates = candidates_;
    }
    const absl::Status status = call_.cancelled->load()
                                    ? absl::CancelledError("the client cancelled the stream")
                                    : absl::OkStatus();
    rpc::Log(rpc::LogLevel::kInfo, call_.request_id,
             absl::StrCat("CompileMany stream ended after ", candidates, " candidates in ",
                          absl::FormatDuration(absl::Now() - start_)));
    Finish(rpc::ToGrpcStatus(status));
  }

  CompilerService* const service_;  // must outlive the call
  const rpc::CallEnvironment env_;
  const rpc::CallInfo call_;
  const int max_in_flight_;
  const absl::Time start_;
  // Filled by the read in flight (one at a time); emptied under mu_.
  v1::CompileManyRequest reading_;
  // The result being written: touched only by whoever holds the write.
  v1::CompileManyResponse writing_;
  absl::Mutex mu_;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t numbered_ ABSL_GUARDED_BY(mu_) = 0;
  bool read_in_flight_ ABSL_GUARDED_BY(mu_) = true;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool write_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<v1::CompileManyResponse> pending_ ABSL_GUARDED_BY(mu_);
  int64_t candidates_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

grpc::ServerBidiReactor<v1::CompileManyRequest, v1::CompileManyResponse>* NewCompileManyReactor(
    CompilerService* service, grpc::CallbackServerContext* context, rpc::CallEnvironment env,
    int max_in_flight) {
  return new CompileManyReactor(service, context, env, max_in_flight);
}

}  // namespace ordo::server
