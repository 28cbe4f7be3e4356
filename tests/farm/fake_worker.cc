// ordo-fake-worker: a worker host gone bad, for the farm harness and
// tests/service/lying_worker_test. Speaks ordo.v1.Worker and health like
// ordo-worker (and passes every probe), but answers every part at once with
// a wrong schedule, claimed OPTIMAL, in turn:
//  1. corrupted: the ops in reverse order (not topological), peak 1 B;
//  2. foreign: an order of one op more (another part's), peak 1 B;
//  3. misreported: the part's own ops in id order (a valid order when the
//     part's ids are topological), its peak claimed as 1 B.
// The front must reject each (it re-simulates every part it gets back),
// never return it, and still answer optimally.
//   ordo-fake-worker --listen=HOST:PORT    (port 0: any; prints the port)
#include <atomic>
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
    const int ops = task->model().ops_size();
    switch (answers_++ % 3) {
      case 0:
        for (int op = ops - 1; op >= 0; --op) result->add_order(op);
        break;
      case 1:
        for (int op = 0; op <= ops; ++op) result->add_order(op);
        break;
      default:
        for (int op = 0; op < ops; ++op) result->add_order(op);
        break;
    }
    result->set_peak_bytes(1);
    result->set_lower_bound_bytes(1);
    result->set_status(ordo::v1::SCHEDULE_STATUS_OPTIMAL);
    result->set_algorithm("dp");
    return grpc::Status::OK;
  }
  std::atomic<int> answers_{0};
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
  std::printf("listening on %s:%d\n", listen.substr(0, listen.rfind(':')).c_str(), port);
  std::fflush(stdout);
  server->Wait();
  return 0;
}
