#ifndef ORDO_RPC_METRICS_H_
#define ORDO_RPC_METRICS_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace ordo::rpc {

// The metrics of an ordo service process (STYLE: `ordo_` prefix, base
// units, few label values). One instance per process, injected into the
// services that record into it; core returns plain stats and never sees it.
// Families (labels):
//   ordo_requests_total{method,code}          calls finished
//   ordo_request_duration_seconds{method}     call latency
//   ordo_inflight_requests                    calls running
//   ordo_cache_lookups_total{result}          hit | miss | error | rejected
//   ordo_compile_answers_total{source}        computed | response_cache |
//                                             single_flight (waited for an
//                                             identical concurrent call)
//   ordo_estimate_answers_total{source}       computed | response_cache
//   ordo_worker_tasks_total{result}           ok | retry | fallback | error
//   ordo_worker_task_duration_seconds         part task latency
//   ordo_workers_healthy                      workers answering
//   ordo_scheduler_states_expanded            search states per compile
//                                             (front) or per part (worker)
//   ordo_namespace_cache_events_total{namespace,event}
//                                             per cache namespace (below)
// Thread-safe (prometheus-cpp metrics are atomic).
class ServiceMetrics {
 public:
  ServiceMetrics();
  ServiceMetrics(const ServiceMetrics&) = delete;
  ServiceMetrics& operator=(const ServiceMetrics&) = delete;

  void RecordRequest(absl::string_view method, absl::string_view code, absl::Duration latency);
  void AddCacheLookups(absl::string_view result, int64_t count);
  // One Compile answer; `source` as in ordo_compile_answers_total.
  void AddCompileAnswer(absl::string_view source);
  // One Estimate answer; `source` as in ordo_estimate_answers_total.
  void AddEstimateAnswer(absl::string_view source);
  void RecordWorkerTask(absl::string_view result, absl::Duration latency);
  void AddWorkerTasks(absl::string_view result, int64_t count);
  void RecordStatesExpanded(int64_t states);

  // Cache namespaces that get their own `namespace` label value, in order of
  // first event; later ones share kOtherNamespacesLabel, so the label has at
  // most kMaxNamespaceLabels + 1 values whatever clients send.
  static constexpr int kMaxNamespaceLabels = 16;
  // Not a valid namespace name (CheckCacheNamespace), so never a tenant's.
  static constexpr absl::string_view kOtherNamespacesLabel = "(other)";
  static constexpr absl::string_view kSharedNamespaceLabel = "(shared)";  // ""
  // `count` cache events of one namespace: `event` is hit (an answer from a
  // whole-answer cache), miss (the answer was computed: a Compile's search
  // or an Estimate's passes), single_flight_wait, eviction
  // (an entry left a whole-answer cache), part_hit or part_miss (part cache
  // lookups), part_eviction (an entry left the in-memory part cache).
  void AddNamespaceCacheEvents(absl::string_view cache_namespace, absl::string_view event,
                               int64_t count = 1);
  prometheus::Gauge& inflight_requests() { return inflight_; }
  prometheus::Gauge& workers_healthy() { return workers_healthy_; }

  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& request_duration_;
  prometheus::Family<prometheus::Counter>& cache_lookups_;
  prometheus::Family<prometheus::Counter>& compile_answers_;
  prometheus::Family<prometheus::Counter>& estimate_answers_;
  prometheus::Family<prometheus::Counter>& worker_tasks_;
  prometheus::Histogram& worker_task_duration_;
  prometheus::Histogram& states_expanded_;
  prometheus::Gauge& inflight_;
  prometheus::Gauge& workers_healthy_;
  prometheus::Family<prometheus::Counter>& namespace_events_;
  absl::Mutex namespaces_mu_;
  absl::flat_hash_set<std::string> labelled_namespaces_ ABSL_GUARDED_BY(namespaces_mu_);

  std::string NamespaceLabel(absl::string_view cache_namespace);
};

// Serves a registry's metrics over HTTP at /metrics (prometheus-cpp's
// civetweb Exposer). Owns the listener; stops it when destroyed.
class MetricsEndpoint {
 public:
  // `address` is host:port; port 0 picks a free one (see port()).
  // UNAVAILABLE when it cannot listen.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& address, std::shared_ptr<prometheus::Registry> registry);
  int port() const { return port_; }

 private:
  MetricsEndpoint(std::unique_ptr<prometheus::Exposer> exposer, int port)
      : exposer_(std::move(exposer)), port_(port) {}
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_;
};

}  // namespace ordo::rpc

#endif  // ORDO_RPC_METRICS_H_
