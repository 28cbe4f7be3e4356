// ordo-fake-worker: a worker host gone bad, for the farm harness. Speaks
// ordo.v1.Worker and health like ordo-worker, but answers every part with
// a foreign or corrupted schedule: the ops in reverse order (not
// topological), claimed OPTIMAL with a peak of 1 byte. The front must
// reject it (it re-simulates every part it gets back) and never return it.
//   ordo-fake-worker --listen HOST:PORT
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "ordo/v1/worker_service.grpc.pb.h"

namespace {

class LyingWorker final : public ordo::v1::Worker::Service {
  grpc::Status ScheduleSubgraph(grpc::ServerContext* /*context*/,
                                const ordo::v1::SubgraphTask* task,
                                ordo::v1::SubgraphResult* result) override {
    for (int op = task->model().ops_size() - 1; op >= 0; --op) result->add_order(op);
    result->set_peak_bytes(1);
    result->set_lower_bound_bytes(1);
    result->set_status(ordo::v1::SCHEDULE_STATUS_OPTIMAL);
    result->set_algorithm("dp");
    return grpc::Status::OK;
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string listen = "127.0.0.1:0";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--listen=", 9) == 0) listen = argv[i] + 9;
  }
  LyingWorker service;
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "ordo-fake-worker: cannot listen on %s\n", listen.c_str());
    return 1;
  }
  server->GetHealthCheckService()->SetServingStatus(true);
  std::printf("listening on %s\n", listen.c_str());
  std::fflush(stdout);
  server->Wait();
  return 0;
}
