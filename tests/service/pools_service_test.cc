// Memory pools through a real ordo-server (docs/pools.md): DeviceSpec.pools,
// .preset and .pinned_tensors; CompileResponse.placement and each tensor's
// pool; GetInfo's presets; INVALID_ARGUMENT naming the pool or tensor for a
// bad spec while the server keeps serving; `ordo compile --server` with
// pools answers like local mode.

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/testing/test_paths.h"
#include "core/tflite/tflite_test_model.h"
#include "tests/cli/compile_json.h"
#include "tests/cli/run_ordo.h"
#include "tests/service/service_harness.h"

namespace ordo {
namespace {

using namespace ::ordo::testing_service;  // NOLINT: the harness is the test's vocabulary
using ::ordo::testing::ProcessResult;
using ::ordo::testing::RunOrdo;
using ::ordo::testing::TfliteTestModel;
using ::testing::HasSubstr;

const std::string kModel = ordo::testing::ExampleModelsDir() + "/small_resnet.onnx";

v1::MemoryPoolSpec* AddPool(v1::DeviceSpec& device, const std::string& name, int64_t bytes,
                            double read_bps, double write_bps = 0) {
  v1::MemoryPoolSpec* pool = device.add_pools();
  pool->set_name(name);
  pool->set_capacity_bytes(bytes);
  pool->set_read_bytes_per_second(read_bps);
  pool->set_write_bytes_per_second(write_bps);
  return pool;
}

v1::CompileRequest TwoPoolRequest() {
  v1::CompileRequest request = OnnxRequest(kModel, absl::Seconds(5));
  AddPool(*request.mutable_device(), "fast", 64 * 1024, 4e9);
  AddPool(*request.mutable_device(), "slow", 64 << 20, 1e8, 5e7);
  return request;
}

// What any placement in a response must satisfy, read from the response.
void ExpectConsistentPlacement(const v1::CompileResponse& response) {
  ASSERT_TRUE(response.has_placement());
  const v1::PoolPlacementReport& placement = response.placement();
  std::set<std::string> names;
  double seconds = 0;
  for (const v1::PoolUsageReport& pool : placement.pools()) {
    names.insert(pool.name());
    if (placement.fits()) {
      EXPECT_LE(pool.used_bytes(), pool.capacity_bytes()) << pool.name();
    }
    seconds += pool.modelled_time_seconds();
  }
  EXPECT_NEAR(seconds, placement.modelled_time_seconds(), 1e-12);
  EXPECT_GE(placement.modelled_time_seconds(), placement.lower_bound_seconds() * (1 - 1e-9));
  std::set<std::string> baselines;
  for (const v1::PoolBaselineReport& baseline : placement.baselines()) {
    baselines.insert(baseline.name());
    if (baseline.fits() && baseline.name() != "single_pool") {
      EXPECT_LE(placement.modelled_time_seconds(),
                baseline.modelled_time_seconds() * (1 + 1e-9))
          << baseline.name();
    }
  }
  EXPECT_EQ(baselines, (std::set<std::string>{"internal_first", "usmp_greedy", "single_pool",
                                              "one_arena"}));
  ASSERT_GT(response.arena().tensors_size(), 0);
  for (const v1::TensorPlacement& tensor : response.arena().tensors()) {
    EXPECT_EQ(names.count(tensor.pool()), 1u) << tensor.tensor() << " in " << tensor.pool();
  }
  EXPECT_TRUE(response.has_fits());
  EXPECT_EQ(response.fits(), placement.fits());
}

TEST(PoolsServiceTest, PoolsPresetAndPinsArePlacedAndReported) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());

  v1::CompileResponse response;
  ASSERT_TRUE(server.Compile(TwoPoolRequest(), response).ok());
  ExpectValidSchedule(response);
  ExpectConsistentPlacement(response);
  EXPECT_TRUE(response.placement().fits());
  ASSERT_EQ(response.placement().pools_size(), 2);
  EXPECT_EQ(response.placement().pools(0).name(), "fast");
  EXPECT_EQ(response.placement().pools(0).capacity_bytes(), 64 * 1024);

  // Pinning a tensor the placer put in the fast pool moves it to the slow one.
  std::string pinned;
  for (const v1::TensorPlacement& tensor : response.arena().tensors()) {
    if (tensor.pool() == "fast") pinned = tensor.tensor();
  }
  ASSERT_FALSE(pinned.empty()) << "nothing in the fast pool";
  v1::CompileRequest pinning = TwoPoolRequest();
  (*pinning.mutable_device()->mutable_pinned_tensors())[pinned] = "slow";
  v1::CompileResponse pinned_response;
  ASSERT_TRUE(server.Compile(pinning, pinned_response).ok());
  ExpectConsistentPlacement(pinned_response);
  for (const v1::TensorPlacement& tensor : pinned_response.arena().tensors()) {
    if (tensor.tensor() == pinned) {
      EXPECT_EQ(tensor.pool(), "slow");
    }
  }
  EXPECT_GE(pinned_response.placement().modelled_time_seconds(),
            response.placement().lower_bound_seconds());

  // A preset by name: GetInfo lists it, and the placement uses its pools.
  const v1::GetInfoResponse info = server.Info();
  const v1::DevicePresetInfo* esp32 = nullptr;
  std::vector<std::string> names;
  for (const v1::DevicePresetInfo& preset : info.device_presets()) {
    names.push_back(preset.name());
    // The nRF5340's application core has one bank; every other preset
    // has several.
    EXPECT_GE(preset.pools_size(), preset.name() == "nrf5340" ? 1 : 2) << preset.name();
    if (preset.name() == "esp32s3") esp32 = &preset;
  }
  EXPECT_THAT(names, ::testing::ElementsAre("stm32h743", "imxrt1170", "esp32s3", "rp2040",
                                            "stm32f746", "nrf5340", "rp2350"));
  ASSERT_NE(esp32, nullptr);
  v1::CompileRequest preset = OnnxRequest(kModel, absl::Seconds(5));
  preset.mutable_device()->set_preset("ESP32-S3");
  preset.mutable_device()->set_activation_dtype(v1::DATA_TYPE_INT8);
  v1::CompileResponse preset_response;
  ASSERT_TRUE(server.Compile(preset, preset_response).ok());
  ExpectConsistentPlacement(preset_response);
  // PSRAM is off the chip: the traffic is what the placement puts there.
  int64_t on_chip = 0;
  for (const v1::MemoryPoolSpec& pool : esp32->pools()) {
    if (!pool.off_chip()) on_chip += pool.capacity_bytes();
  }
  ASSERT_TRUE(preset_response.has_traffic());
  EXPECT_EQ(preset_response.traffic().on_chip_bytes(), on_chip);
  EXPECT_FALSE(preset_response.has_model_order_traffic());
  ASSERT_EQ(preset_response.placement().pools_size(), esp32->pools_size());
  for (int p = 0; p < esp32->pools_size(); ++p) {
    EXPECT_EQ(preset_response.placement().pools(p).name(), esp32->pools(p).name());
    EXPECT_EQ(preset_response.placement().pools(p).capacity_bytes(),
              esp32->pools(p).capacity_bytes());
  }

  // Without pools nothing changes: no placement, no pool names.
  v1::CompileResponse flat;
  ASSERT_TRUE(server.Compile(OnnxRequest(kModel, absl::Seconds(5)), flat).ok());
  EXPECT_FALSE(flat.has_placement());
  for (const v1::TensorPlacement& tensor : flat.arena().tensors()) EXPECT_EQ(tensor.pool(), "");
}

TEST(PoolsServiceTest, BadSpecsAreInvalidArgumentNamingPoolOrTensor) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  struct Case {
    std::function<void(v1::DeviceSpec&)> edit;
    std::string message;
  };
  const Case cases[] = {
      {[](v1::DeviceSpec& d) { AddPool(d, "fast", 1024, 1e9); },
       "memory pool \"fast\" is given twice"},
      {[](v1::DeviceSpec& d) { d.mutable_pools(1)->set_capacity_bytes(0); },
       "memory pool \"slow\": capacity must be positive"},
      {[](v1::DeviceSpec& d) { d.mutable_pools(0)->set_read_bytes_per_second(-1); },
       "memory pool \"fast\": read_bytes_per_second"},
      {[](v1::DeviceSpec& d) { d.set_preset("z80"); }, "device.preset"},
      {[](v1::DeviceSpec& d) {
         d.clear_pools();
         d.set_preset("z80");
       },
       "unknown device \"z80\""},
      {[](v1::DeviceSpec& d) { (*d.mutable_pinned_tensors())["nosuch"] = "slow"; },
       "pinned tensor \"nosuch\""},
      {[](v1::DeviceSpec& d) { (*d.mutable_pinned_tensors())["nosuch"] = "dram"; },
       "unknown memory pool \"dram\""},
      {[](v1::DeviceSpec& d) {
         d.clear_pools();
         (*d.mutable_pinned_tensors())["x"] = "slow";
       },
       "device.pinned_tensors: needs memory pools"},
      {[](v1::DeviceSpec& d) {
         d.mutable_pools(0)->set_capacity_bytes(64);
         d.mutable_pools(1)->set_capacity_bytes(64);
       },
       "larger than every memory pool"},
      {[](v1::DeviceSpec& d) { d.set_placement_effort(static_cast<v1::PlacementEffort>(9)); },
       "device.placement_effort: unknown value 9"},
  };
  for (const Case& c : cases) {
    v1::CompileRequest request = TwoPoolRequest();
    c.edit(*request.mutable_device());
    v1::CompileResponse response;
    grpc::Status status = server.Compile(request, response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.message;
    EXPECT_THAT(status.error_message(), HasSubstr(c.message));
  }
  EXPECT_EQ(server.Health(""), 1);
  v1::CompileResponse response;
  EXPECT_TRUE(server.Compile(TwoPoolRequest(), response).ok());
}

// `ordo compile` with `flags`, locally and through `server`: the same
// schedule and placement (all but the search's time).
void ExpectServedLikeLocal(Server& server, const std::string& flags) {
  ProcessResult local = RunOrdo(flags);
  ProcessResult served = RunOrdo(absl::StrCat(flags, " --server ", server.address()));
  ASSERT_EQ(local.exit_code, 0) << local.out;
  ASSERT_EQ(served.exit_code, 0) << served.out;
  const v1::CompileResponse a = ParseCompileJson(local.out);
  const v1::CompileResponse b = ParseCompileJson(served.out);
  ASSERT_TRUE(a.has_fits());
  EXPECT_EQ(a.fits(), b.fits());
  ASSERT_EQ(a.schedule_size(), b.schedule_size());
  for (int i = 0; i < a.schedule_size(); ++i) EXPECT_EQ(a.schedule(i), b.schedule(i)) << i;
  // The placement whole, but its time (the search's, not the answer's).
  v1::PoolPlacementReport pa = a.placement(), pb = b.placement();
  pa.clear_time();
  pb.clear_time();
  EXPECT_EQ(pa.DebugString(), pb.DebugString());
  EXPECT_EQ(a.device().pools_size(), b.device().pools_size());
  ASSERT_EQ(a.arena().tensors_size(), b.arena().tensors_size());
  for (int i = 0; i < a.arena().tensors_size(); ++i) {
    EXPECT_EQ(a.arena().tensors(i).pool(), b.arena().tensors(i).pool()) << i;
    EXPECT_EQ(a.arena().tensors(i).offset_bytes(), b.arena().tensors(i).offset_bytes()) << i;
  }
}

// Each effort travels to the server (DeviceSpec.placement_effort): the
// example model, and a shared NAS model large enough for the fast effort
// (more than kThoroughUpToBlocks blocks) placed both ways.
TEST(PoolsServiceTest, CliServerModeWithADeviceAnswersLikeLocalMode) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  std::vector<std::string> runs = {
      absl::StrCat("compile ", kModel, " --device stm32h743 --activation-dtype int8 --json")};
  const std::string nas = ordo::testing::SharedModelsDir() + "/darts_imagenet.onnx";
  if (std::ifstream(nas).good()) {
    for (const char* effort : {"fast", "thorough"}) {
      runs.push_back(absl::StrCat("compile ", nas,
                                  " --device imxrt1170 --activation-dtype int8 --json"
                                  " --placement-effort ",
                                  effort));
    }
  } else {
    std::printf("../shared/models absent: the NAS model's efforts are not compared\n");
  }
  for (const std::string& flags : runs) {
    SCOPED_TRACE(flags);
    ExpectServedLikeLocal(server, flags);
  }
  ProcessResult bad = RunOrdo(absl::StrCat("compile ", kModel, " --pool a:64 --pool b:64",
                                           " --server ", server.address()));
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_THAT(bad.out, HasSubstr("larger than every memory pool"));
  // The server's fix names the API's field; the CLI user reads the flag.
  EXPECT_THAT(bad.out, HasSubstr("set --io-outside-arena"));
  EXPECT_THAT(bad.out, ::testing::Not(HasSubstr("options.")));
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// TFLite Micro plans one arena: `--emit-tflite` with pools places it whole
// in one pool, in remote mode too (the CLI writes the file from the
// server's answer, so the server must place one arena without being asked
// for the file). Before, the file's plan overlapped tensors of two banks.
TEST(PoolsServiceTest, EmitTfliteWithPoolsPutsTheArenaInOnePoolLocallyAndServed) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  using ::ordo::testing::kTfliteConcat;
  using ::ordo::testing::kTfliteConv2d;
  using ::ordo::testing::kTfliteInt8;
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {1, 256}});
  const int32_t w = m.Tensor({"w", {16}, kTfliteInt8, /*weight=*/true});
  const int32_t a = m.Tensor({"a", {1, 1024}});
  const int32_t b = m.Tensor({"b", {1, 1024}});
  const int32_t y = m.Tensor({"y", {1, 2048}});
  m.Operator({kTfliteConv2d, {x, w}, {a}});
  m.Operator({kTfliteConv2d, {x, w}, {b}});
  m.Operator({kTfliteConcat, {a, b}, {y}});
  m.Inputs({x});
  m.Outputs({y});
  const std::string dir = ::testing::TempDir();
  const std::string model = dir + "/pools_one_arena.tflite";
  std::ofstream(model, std::ios::binary) << m.Build();
  // "fast" holds x, a or b alone but not the arena.
  const std::string flags = absl::StrCat("compile ", model,
                                         " --alignment 16 --pool fast:1KiB:8GB/s"
                                         " --pool slow:64KiB:1GB/s --json --emit-tflite ");
  ProcessResult local = RunOrdo(flags + dir + "/local.tflite");
  ProcessResult served =
      RunOrdo(absl::StrCat(flags, dir, "/served.tflite --server ", server.address()));
  for (const ProcessResult* run : {&local, &served}) {
    ASSERT_EQ(run->exit_code, 0) << run->out;
    const v1::CompileResponse response = ParseCompileJson(run->out);
    EXPECT_TRUE(response.fits());
    EXPECT_EQ(response.placement().algorithm(), "one arena in \"slow\"");
    for (const v1::TensorPlacement& tensor : response.arena().tensors()) {
      EXPECT_EQ(tensor.pool(), "slow") << tensor.tensor();
    }
    // The options echo what was asked, served too: the printed answer is
    // made from the re-checked result, not copied from the server.
    EXPECT_TRUE(response.options().return_reordered_tflite());
  }
  EXPECT_EQ(ReadBytes(dir + "/local.tflite"), ReadBytes(dir + "/served.tflite"));
}

// CompileOptions.return_plan_header: the server returns the CLI's plan.h
// for the same compile (the header names the model, not the file), on a
// computed answer and on the cached one; without the option, none.
TEST(PoolsServiceTest, ThePlanHeaderIsTheClisPlanH) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  v1::CompileRequest request = TwoPoolRequest();
  v1::CompileResponse plain;
  ASSERT_TRUE(server.Compile(request, plain).ok());
  EXPECT_TRUE(plain.plan_header().empty());
  request.mutable_options()->set_return_plan_header(true);
  v1::CompileResponse computed, cached;
  ASSERT_TRUE(server.Compile(request, computed).ok());
  ASSERT_TRUE(server.Compile(request, cached).ok());
  EXPECT_TRUE(cached.stats().response_cached());
  EXPECT_EQ(cached.plan_header(), computed.plan_header());
  EXPECT_THAT(computed.plan_header(), HasSubstr("#define ORDO_POOL_COUNT 2\n"));
  for (const v1::TensorPlacement& tensor : computed.arena().tensors()) {
    EXPECT_THAT(computed.plan_header(),
                HasSubstr(absl::StrCat("{\"", tensor.tensor(), "\", ORDO_POOL_",
                                       tensor.pool() == "fast" ? "FAST" : "SLOW", ", ",
                                       tensor.offset_bytes(), "u, ", tensor.size_bytes(), "u}")));
  }
  const std::string dir = ::testing::TempDir() + "/plan_header_cli";
  ProcessResult cli =
      RunOrdo(absl::StrCat("compile ", kModel, " --time-limit 5s --out-dir ", dir,
                           " --pool fast:64KiB:4GB/s --pool slow:64MiB:0.1GB/s:50MB/s"));
  ASSERT_EQ(cli.exit_code, 0) << cli.out;
  std::ifstream file(dir + "/plan.h");
  std::stringstream written;
  written << file.rdbuf();
  // The CLI's names the file too; the rest is the same.
  const std::string served = computed.plan_header();
  const std::string local = written.str();
  ASSERT_NE(served.find("#ifndef ORDO_PLAN_H_"), std::string::npos);
  EXPECT_EQ(local.substr(local.find("#ifndef ORDO_PLAN_H_")),
            served.substr(served.find("#ifndef ORDO_PLAN_H_")));
}

}  // namespace
}  // namespace ordo
