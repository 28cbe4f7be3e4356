#include "rpc/metrics.h"

#include <exception>

#include "absl/strings/str_cat.h"

namespace ordo::rpc {
namespace {

const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const auto* buckets = new prometheus::Histogram::BucketBoundaries{
      0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
  return *buckets;
}

// Decades: a search expands from none (cache hit, cheap order proved
// optimal) to hundreds of millions of states.
const prometheus::Histogram::BucketBoundaries& StateBuckets() {
  static const auto* buckets =
      new prometheus::Histogram::BucketBoundaries{0, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
  return *buckets;
}

}  // namespace

ServiceMetrics::ServiceMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(prometheus::BuildCounter()
                    .Name("ordo_requests_total")
                    .Help("RPCs finished, by method and status code.")
                    .Register(*registry_)),
      request_duration_(prometheus::BuildHistogram()
                            .Name("ordo_request_duration_seconds")
                            .Help("RPC latency, by method.")
                            .Register(*registry_)),
      cache_lookups_(prometheus::BuildCounter()
                         .Name("ordo_cache_lookups_total")
                         .Help("Part schedule cache lookups, by result "
                               "(hit, miss, error, rejected).")
                         .Register(*registry_)),
      compile_answers_(prometheus::BuildCounter()
                           .Name("ordo_compile_answers_total")
                           .Help("Compile answers, by source: computed, response_cache, or "
                                 "single_flight (shared from an identical concurrent call).")
                           .Register(*registry_)),
      estimate_answers_(prometheus::BuildCounter()
                            .Name("ordo_estimate_answers_total")
                            .Help("Estimate answers, by source: computed or response_cache.")
                            .Register(*registry_)),
      worker_tasks_(
          prometheus::BuildCounter()
              .Name("ordo_worker_tasks_total")
              .Help("Part tasks, by result (ok; rejected: the answer failed the "
                    "check; retry, fallback, error; in_server: a part proved in the front's own "
                    "thread, never sent; in_server_unproved: tried there, then sent; stopped: "
                    "called back from a worker once other parts settled it).")
              .Register(*registry_)),
      worker_task_duration_(prometheus::BuildHistogram()
                                .Name("ordo_worker_task_duration_seconds")
                                .Help("Latency of part tasks.")
                                .Register(*registry_)
                                .Add({}, LatencyBuckets())),
      states_expanded_(prometheus::BuildHistogram()
                           .Name("ordo_scheduler_states_expanded")
                           .Help("Search states the exact scheduler expanded, per compile "
                                 "(front server) or per part task (worker).")
                           .Register(*registry_)
                           .Add({}, StateBuckets())),
      inflight_(prometheus::BuildGauge()
                    .Name("ordo_inflight_requests")
                    .Help("RPCs running.")
                    .Register(*registry_)
                    .Add({})),
      workers_healthy_(prometheus::BuildGauge()
                           .Name("ordo_workers_healthy")
                           .Help("Workers that answered their last health check.")
                           .Register(*registry_)
                           .Add({})),
      namespace_events_(prometheus::BuildCounter()
                            .Name("ordo_namespace_cache_events_total")
                            .Help("Cache events by cache namespace (the first 16 namespaces seen; "
                                  "later ones as \"(other)\", the shared one as \"(shared)\") "
                                  "and event: hit, miss, single_flight_wait, eviction, part_hit, "
                                  "part_miss, part_eviction.")
                            .Register(*registry_)) {}

void ServiceMetrics::RecordRequest(absl::string_view method, absl::string_view code,
                                   absl::Duration latency) {
  requests_.Add({{"method", std::string(method)}, {"code", std::string(code)}}).Increment();
  request_duration_.Add({{"method", std::string(method)}}, LatencyBuckets())
      .Observe(absl::ToDoubleSeconds(latency));
}

void ServiceMetrics::AddCacheLookups(absl::string_view result, int64_t count) {
  if (count <= 0) return;
  cache_lookups_.Add({{"result", std::string(result)}}).Increment(static_cast<double>(count));
}

void ServiceMetrics::AddCompileAnswer(absl::string_view source) {
  compile_answers_.Add({{"source", std::string(source)}}).Increment();
}

void ServiceMetrics::AddEstimateAnswer(absl::string_view source) {
  estimate_answers_.Add({{"source", std::string(source)}}).Increment();
}

void ServiceMetrics::RecordWorkerTask(absl::string_view result, absl::Duration latency) {
  worker_tasks_.Add({{"result", std::string(result)}}).Increment();
  worker_task_duration_.Observe(absl::ToDoubleSeconds(latency));
}

void ServiceMetrics::RecordStatesExpanded(int64_t states) {
  states_expanded_.Observe(static_cast<double>(states));
}

void ServiceMetrics::AddWorkerTasks(absl::string_view result, int64_t count) {
  if (count <= 0) return;
  worker_tasks_.Add({{"result", std::string(result)}}).Increment(static_cast<double>(count));
}

void ServiceMetrics::AddNamespaceCacheEvents(absl::string_view cache_namespace,
                                             absl::string_view event, int64_t count) {
  if (count <= 0) return;
  namespace_events_
      .Add({{"namespace", NamespaceLabel(cache_namespace)}, {"event", std::string(event)}})
      .Increment(static_cast<double>(count));
}

std::string ServiceMetrics::NamespaceLabel(absl::string_view cache_namespace) {
  if (cache_namespace.empty()) return std::string(kSharedNamespaceLabel);
  absl::MutexLock lock(&namespaces_mu_);
  if (labelled_namespaces_.contains(cache_namespace) ||
      (static_cast<int>(labelled_namespaces_.size()) < kMaxNamespaceLabels &&
       labelled_namespaces_.emplace(cache_namespace).second)) {
    return std::string(cache_namespace);
  }
  return std::string(kOtherNamespacesLabel);
}

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& address, std::shared_ptr<prometheus::Registry> registry) {
  // prometheus-cpp reports a failed bind by throwing; nothing else of ours
  // throws, so the exception stops here.
  try {
    auto exposer = std::make_unique<prometheus::Exposer>(address, /*num_threads=*/1);
    exposer->RegisterCollectable(registry);
    std::vector<int> ports = exposer->GetListeningPorts();
    const int port = ports.empty() ? 0 : ports.front();
    return std::unique_ptr<MetricsEndpoint>(new MetricsEndpoint(std::move(exposer), port));
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("metrics: cannot listen on ", address, ": ", e.what()));
  }
}

}  // namespace ordo::rpc
