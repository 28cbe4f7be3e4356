// A worker that answers every part at once with a wrong schedule
// (ordo-fake-worker: corrupted, foreign, or with a misreported peak) must
// cost the answer nothing: the front rejects the answer, quarantines the
// worker and solves the part on an honest worker at once, with the budget
// it still has, so every answer is optimal at the reference peak. Before,
// the rejected part got a greedy order and about a third of the answers
// came back below `optimal` (docs/farm.md).
#include "core/testing/test_paths.h"
#include "tests/service/service_harness.h"

namespace ordo::testing_service {
namespace {

std::string StartAndReadAddress(std::unique_ptr<Process>& process,
                                std::vector<std::string> argv) {
  process = std::make_unique<Process>(std::move(argv));
  std::string line = process->ReadLine(absl::Seconds(20));
  absl::string_view rest = line;
  if (!absl::ConsumePrefix(&rest, "listening on ")) {
    ADD_FAILURE() << "no address: \"" << line << "\"";
    return "";
  }
  return std::string(rest);
}

bool Healthy(Server& front, const std::string& address) {
  const v1::GetInfoResponse info = front.Info();
  for (const auto& worker : info.workers()) {
    if (worker.address() == address) return worker.healthy();
  }
  return false;
}

// small_resnet's parts are proved in the front's own thread within its
// default budget; this test is about what workers answer.
constexpr char kEveryPartToWorkers[] = "--in-server-part-budget=0";

v1::CompileRequest Request() {
  v1::CompileRequest request =
      OnnxRequest(ordo::testing::ExampleModelsDir() + "/small_resnet.onnx", absl::Seconds(20));
  request.mutable_options()->set_scheduler("dp");
  return request;
}

TEST(LyingWorkerTest, EveryAnswerIsOptimalAtTheReferencePeakAndTheLiarIsQuarantined) {
  std::unique_ptr<Process> honest_worker, lying_worker;
  const std::string honest = StartAndReadAddress(
      honest_worker,
      {ordo::testing::WorkerBinary(), "--listen=127.0.0.1:0", "--log-level=warning"});
  const std::string liar = StartAndReadAddress(
      lying_worker, {ordo::testing::FakeWorkerBinary(), "--listen=127.0.0.1:0"});
  ASSERT_FALSE(honest.empty() || liar.empty());

  // The reference: a front whose only worker is honest.
  v1::CompileResponse reference;
  {
    Server front({absl::StrCat("--workers=", honest), "--cache-mb=0", kEveryPartToWorkers});
    ASSERT_TRUE(front.started());
    ASSERT_TRUE(PollUntil([&] { return Healthy(front, honest); }, absl::Seconds(10)));
    ASSERT_TRUE(front.Compile(Request(), reference, absl::Seconds(40)).ok());
    ASSERT_EQ(reference.status(), v1::SCHEDULE_STATUS_OPTIMAL);
  }

  // The liar first: round robin sends it the first task (whatever the
  // number of parts).
  Server front(
      {absl::StrCat("--workers=", liar, ",", honest), "--cache-mb=0", kEveryPartToWorkers});
  ASSERT_TRUE(front.started());
  ASSERT_TRUE(PollUntil([&] { return Healthy(front, honest) && Healthy(front, liar); },
                        absl::Seconds(10)));
  int rejected = 0;
  for (int i = 0; i < 3; ++i) {
    v1::CompileResponse response;
    const grpc::Status status = front.Compile(Request(), response, absl::Seconds(40));
    ASSERT_TRUE(status.ok()) << status.error_message();
    ExpectValidSchedule(response);
    EXPECT_EQ(response.status(), v1::SCHEDULE_STATUS_OPTIMAL) << "request " << i;
    EXPECT_EQ(response.peak_bytes(), reference.peak_bytes()) << "request " << i;
    EXPECT_EQ(response.stats().fallback_parts(), 0) << "request " << i;
    rejected += response.stats().worker_answers_rejected();
    if (i == 0) {
      EXPECT_GE(response.stats().worker_answers_rejected(), 1);
      EXPECT_GE(response.stats().task_retries(), response.stats().worker_answers_rejected());
    } else {
      // Quarantined (60 s) after its first wrong answer: no task since.
      EXPECT_EQ(response.stats().worker_answers_rejected(), 0) << "request " << i;
    }
  }
  // It still passes every health probe, and is kept out all the same.
  EXPECT_FALSE(Healthy(front, liar));
  EXPECT_EQ(MetricValue(front.Metrics(), "ordo_worker_tasks_total", "result=\"rejected\""),
            rejected);
}

}  // namespace
}  // namespace ordo::testing_service
