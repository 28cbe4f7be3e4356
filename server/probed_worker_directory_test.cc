#include "server/probed_worker_directory.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "ordo/v1/worker_service.grpc.pb.h"
#include "server/worker_targets.h"

namespace ordo::server {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A server that answers grpc.health.v1 SERVING on a loopback port: all a
// probe sees of a worker (its Worker methods are unimplemented).
class HealthyPeer {
 public:
  HealthyPeer() {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&worker_);
    server_ = builder.BuildAndStart();
    server_->GetHealthCheckService()->SetServingStatus(true);
  }
  ~HealthyPeer() { server_->Shutdown(); }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }

 private:
  v1::Worker::Service worker_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

// What the directory lists, as "address:healthy".
std::vector<std::string> Listed(const ProbedWorkerDirectory& directory) {
  std::vector<std::string> listed;
  for (const WorkerEndpoint& worker : directory.Workers()) {
    listed.push_back(absl::StrCat(worker.address, worker.healthy ? ":healthy" : ":unhealthy"));
  }
  return listed;
}

bool Eventually(const std::function<bool()>& condition) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    if (condition()) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return condition();
}

// A name whose addresses the test sets (what a changed /etc/hosts or DNS
// record does to the real resolver).
struct FakeName {
  absl::Mutex mu;
  std::vector<std::string> addresses ABSL_GUARDED_BY(mu);
  bool fail ABSL_GUARDED_BY(mu) = false;

  void Set(std::vector<std::string> now, bool failing = false) {
    absl::MutexLock lock(&mu);
    addresses = std::move(now);
    fail = failing;
  }
  ProbedWorkerDirectory::Options Options() {
    ProbedWorkerDirectory::Options options;
    options.interval = absl::Milliseconds(50);
    options.resolve = [this](const WorkerTarget&) -> absl::StatusOr<std::vector<std::string>> {
      absl::MutexLock lock(&mu);
      if (fail) return absl::UnavailableError("resolver down");
      return addresses;
    };
    return options;
  }
};

TEST(ProbedWorkerDirectoryTest, FollowsTheNameAsWorkersAreAddedAndRemoved) {
  HealthyPeer a, b;
  FakeName name;
  name.Set({a.address()});
  ProbedWorkerDirectory directory({*ParseWorkerTarget("dns:///workers:50052")}, name.Options());
  ASSERT_TRUE(Eventually([&] { return Listed(directory) == std::vector{a.address() + ":healthy"}; }))
      << ::testing::PrintToString(Listed(directory));

  name.Set({a.address(), b.address()});  // added
  ASSERT_TRUE(Eventually([&] {
    return Listed(directory) ==
           std::vector{a.address() + ":healthy", b.address() + ":healthy"};
  })) << ::testing::PrintToString(Listed(directory));

  name.Set({b.address()}, /*failing=*/true);  // a resolver failure keeps the last addresses
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(Listed(directory).size(), 2);

  name.Set({b.address()});  // removed
  ASSERT_TRUE(Eventually([&] { return Listed(directory) == std::vector{b.address() + ":healthy"}; }))
      << ::testing::PrintToString(Listed(directory));
}

TEST(ProbedWorkerDirectoryTest, AWrongAnswerQuarantinesAWorkerThatStillPassesProbes) {
  HealthyPeer liar, honest;
  FakeName name;
  name.Set({honest.address(), liar.address()});
  ProbedWorkerDirectory::Options options = name.Options();
  options.quarantine = absl::Milliseconds(600);
  ProbedWorkerDirectory directory({*ParseWorkerTarget("dns:///workers:50052")}, options);
  ASSERT_TRUE(Eventually([&] {
    const std::vector<std::string> listed = Listed(directory);
    return listed.size() == 2 && listed[0].ends_with(":healthy") &&
           listed[1].ends_with(":healthy");
  }));
  const absl::Time reported = absl::Now();
  directory.ReportWrongAnswer(liar.address());
  EXPECT_THAT(Listed(directory), Contains(liar.address() + ":unhealthy"));
  // Probes (every 50 ms) find it serving, and it stays out all the same...
  absl::SleepFor(absl::Milliseconds(300));
  if (absl::Now() - reported < absl::Milliseconds(550)) {
    EXPECT_THAT(Listed(directory), Contains(liar.address() + ":unhealthy"));
  }
  EXPECT_THAT(Listed(directory), Contains(honest.address() + ":healthy"));
  // ...until its quarantine ends; then it is probed back.
  EXPECT_TRUE(Eventually(
      [&] { return ::testing::Value(Listed(directory), Contains(liar.address() + ":healthy")); }));
  EXPECT_GE(absl::Now() - reported, absl::Milliseconds(600));
}

TEST(ProbedWorkerDirectoryTest, AFailedTaskMarksAWorkerUnhealthyUntilItsNextProbe) {
  HealthyPeer peer;
  ProbedWorkerDirectory::Options options;
  options.interval = absl::Milliseconds(50);
  ProbedWorkerDirectory directory({*ParseWorkerTarget(peer.address())}, options);
  // Static addresses are listed from the start, unhealthy until probed.
  EXPECT_EQ(directory.Workers().size(), 1);
  ASSERT_TRUE(Eventually([&] { return directory.Workers()[0].healthy; }));
  directory.ReportFailure(peer.address());
  EXPECT_THAT(Listed(directory), ElementsAre(peer.address() + ":unhealthy"));
  EXPECT_TRUE(Eventually([&] { return directory.Workers()[0].healthy; }));
}

TEST(WorkerTargetTest, ParsesStaticAddressesAndNames) {
  ORDO_ASSERT_OK_AND_ASSIGN(WorkerTarget fixed, ParseWorkerTarget("10.0.0.1:50052"));
  EXPECT_EQ(fixed.name, "");
  EXPECT_THAT(ResolveWorkerTarget(fixed), ::ordo::testing::IsOk());
  EXPECT_THAT(*ResolveWorkerTarget(fixed), ElementsAre("10.0.0.1:50052"));
  ORDO_ASSERT_OK_AND_ASSIGN(WorkerTarget named, ParseWorkerTarget("dns:///ordo-worker:50052"));
  EXPECT_EQ(named.name, "ordo-worker");
  EXPECT_EQ(named.port, "50052");
}

TEST(WorkerTargetTest, RefusesDnsTargetsItCannotResolveItself) {
  EXPECT_THAT(ParseWorkerTarget("dns://8.8.8.8/ordo-worker:50052"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("only dns:///NAME:PORT")));
  EXPECT_THAT(ParseWorkerTarget("dns:///ordo-worker"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("dns:///ordo-worker\"")));
  EXPECT_THAT(ParseWorkerTarget("dns:///ordo-worker:99999"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected dns:///NAME:PORT")));
}

TEST(WorkerTargetTest, ResolvesANameFromTheHostsFile) {
  // localhost is in every /etc/hosts: no DNS server is asked.
  ORDO_ASSERT_OK_AND_ASSIGN(std::vector<std::string> addresses,
                            ResolveWorkerTarget(*ParseWorkerTarget("dns:///localhost:50052")));
  EXPECT_THAT(addresses, Contains("127.0.0.1:50052"));
}

}  // namespace
}  // namespace ordo::server
