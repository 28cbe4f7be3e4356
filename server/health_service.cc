#include "server/health_service.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace ordo::server {

using grpc::health::v1::HealthCheckResponse;

// One Watch call. At most one write is outstanding (the callback API's
// rule); a status that arrives meanwhile waits in `pending_`, replacing an
// older one. Finish is called only with no write outstanding, exactly once.
// Decisions are taken under `mu_`, but StartWrite and Finish are called
// with no lock held: gRPC may run OnWriteDone or OnDone inline in them.
// Deletes itself in OnDone, after the service forgot it.
class HealthService::Watcher final : public grpc::ServerWriteReactor<HealthCheckResponse> {
 public:
  // What to do once the lock is released.
  struct Action {
    enum Kind { kNone, kWrite, kFinish } kind = kNone;
    grpc::Status status;
  };

  Watcher(HealthService* service, std::string name)
      : service_(service), name_(std::move(name)) {}

  const std::string& name() const { return name_; }

  // `last`: end the stream once `status` is written. Perform() the result.
  Action Push(Status status, bool last) {
    absl::MutexLock lock(&mu_);
    if (finished_) return {};
    ending_ = ending_ || last;
    if (writing_) {
      pending_ = status;
      return {};
    }
    if (status == sent_) return MaybeFinish();
    return Write(status);
  }

  void Perform(const Action& action) {
    if (action.kind == Action::kWrite) StartWrite(&response_);
    if (action.kind == Action::kFinish) Finish(action.status);
  }

  void OnWriteDone(bool ok) override { Perform(AfterWrite(ok)); }

  void OnCancel() override {
    Action action;
    {
      absl::MutexLock lock(&mu_);
      cancelled_ = true;
      // With a write outstanding, its OnWriteDone(false) finishes.
      if (!writing_) action = FinishOnce(Cancelled());
    }
    Perform(action);
  }

  void OnDone() override {
    service_->Forget(this);
    delete this;
  }

 private:
  static grpc::Status Cancelled() {
    return grpc::Status(grpc::StatusCode::CANCELLED, "watch cancelled");
  }

  Action AfterWrite(bool ok) {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok) return FinishOnce(Cancelled());
    std::optional<Status> next;
    next.swap(pending_);
    if (next.has_value() && next != sent_) return Write(*next);
    return MaybeFinish();
  }
  Action Write(Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    sent_ = status;
    response_.set_status(status);
    writing_ = true;
    return {Action::kWrite, grpc::Status::OK};
  }
  Action MaybeFinish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (cancelled_) return FinishOnce(Cancelled());
    if (ending_) {
      return FinishOnce(grpc::Status(grpc::StatusCode::UNAVAILABLE, "server shutting down"));
    }
    return {};
  }
  Action FinishOnce(const grpc::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_) return {};
    finished_ = true;
    return {Action::kFinish, status};
  }

  HealthService* const service_;
  const std::string name_;
  absl::Mutex mu_;
  // Read by gRPC between StartWrite and OnWriteDone, changed only when no
  // write is outstanding.
  HealthCheckResponse response_;
  std::optional<Status> sent_ ABSL_GUARDED_BY(mu_);
  std::optional<Status> pending_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool ending_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

HealthService::Status HealthService::StatusOf(const std::string& service) const {
  auto it = statuses_.find(service);
  return it == statuses_.end() ? HealthCheckResponse::SERVICE_UNKNOWN : it->second;
}

// A watcher given a write or a finish stays alive until that is performed
// (OnDone comes only after Finish and its last write), so actions run after
// the lock is released.
void HealthService::SetStatus(const std::string& service, bool serving) {
  std::vector<std::pair<Watcher*, Watcher::Action>> actions;
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) return;
    const Status status =
        serving ? HealthCheckResponse::SERVING : HealthCheckResponse::NOT_SERVING;
    auto [it, added] = statuses_.try_emplace(service, status);
    if (!added && it->second == status) return;
    it->second = status;
    for (Watcher* watcher : watchers_) {
      if (watcher->name() == service) actions.emplace_back(watcher, watcher->Push(status, false));
    }
  }
  for (auto& [watcher, action] : actions) watcher->Perform(action);
}

void HealthService::Shutdown() {
  std::vector<std::pair<Watcher*, Watcher::Action>> actions;
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) return;
    shut_down_ = true;
    for (auto& [name, status] : statuses_) status = HealthCheckResponse::NOT_SERVING;
    for (Watcher* watcher : watchers_) {
      actions.emplace_back(watcher, watcher->Push(StatusOf(watcher->name()), /*last=*/true));
    }
  }
  for (auto& [watcher, action] : actions) watcher->Perform(action);
}

void HealthService::Forget(Watcher* watcher) {
  absl::MutexLock lock(&mu_);
  watchers_.erase(std::remove(watchers_.begin(), watchers_.end(), watcher), watchers_.end());
}

grpc::ServerUnaryReactor* HealthService::Check(grpc::CallbackServerContext* context,
                                               const grpc::health::v1::HealthCheckRequest* request,
                                               HealthCheckResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::MutexLock lock(&mu_);
  const Status status = StatusOf(request->service());
  if (status == HealthCheckResponse::SERVICE_UNKNOWN) {
    reactor->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND,
                                 "unknown service \"" + request->service() + "\""));
  } else {
    response->set_status(status);
    reactor->Finish(grpc::Status::OK);
  }
  return reactor;
}

grpc::ServerUnaryReactor* HealthService::List(grpc::CallbackServerContext* context,
                                              const grpc::health::v1::HealthListRequest* /*request*/,
                                              grpc::health::v1::HealthListResponse* response) {
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, status] : statuses_) {
      (*response->mutable_statuses())[name].set_status(status);
    }
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerWriteReactor<HealthCheckResponse>* HealthService::Watch(
    grpc::CallbackServerContext* /*context*/, const grpc::health::v1::HealthCheckRequest* request) {
  auto* watcher = new Watcher(this, request->service());
  Watcher::Action first;
  {
    absl::MutexLock lock(&mu_);
    watchers_.push_back(watcher);
    first = watcher->Push(StatusOf(request->service()), /*last=*/shut_down_);
  }
  watcher->Perform(first);
  return watcher;
}

}  // namespace ordo::server
