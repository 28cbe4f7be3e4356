#include "server/onnx_inference_helpers.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/onnx/tensor_shapes.h"
#include "core/util/status_macros.h"
#include "rpc/log.h"

namespace ordo::server {
namespace {

// A frame: one byte (the request's flags, or the answer's kind), the
// payload's length (8 bytes, little-endian), the payload.
constexpr size_t kHeaderBytes = 9;
constexpr uint8_t kStrict = 1, kCheckTypes = 2;
constexpr uint8_t kAnswerOk = 0, kAnswerError = 1;
// Larger payloads are refused by the helper (the server's requests are at
// most --max_message_mb anyway).
constexpr uint64_t kMaxPayloadBytes = uint64_t{1} << 31;
// A helper's own limit on one inference, past the server's 60 s timeout.
constexpr unsigned kHelperAlarmSeconds = 180;
// What a helper writes first: it runs and speaks this protocol (a wrong
// --onnx-inference-helper binary, or one that fails to exec, does not).
constexpr char kHello[] = "ordo-onnx-inference-helper 1\n";

std::string Frame(uint8_t tag, const std::string& payload) {
  std::string frame(kHeaderBytes, '\0');
  frame[0] = static_cast<char>(tag);
  uint64_t length = payload.size();
  for (size_t i = 0; i < 8; ++i) frame[1 + i] = static_cast<char>((length >> (8 * i)) & 0xff);
  frame += payload;
  return frame;
}

uint64_t PayloadLength(const std::string& header) {
  uint64_t length = 0;
  for (size_t i = 0; i < 8; ++i) {
    length |= static_cast<uint64_t>(static_cast<uint8_t>(header[1 + i])) << (8 * i);
  }
  return length;
}

bool ReadAll(int fd, char* data, size_t count) {
  while (count > 0) {
    const ssize_t n = read(fd, data, count);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    count -= static_cast<size_t>(n);
  }
  return true;
}

bool WriteAll(int fd, const std::string& bytes) {
  const char* data = bytes.data();
  size_t count = bytes.size();
  while (count > 0) {
    const ssize_t n = write(fd, data, count);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    count -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> OnnxInferenceHelpers::Take() {
  std::vector<std::unique_ptr<ChildProcess>> dead;  // reaped outside the lock
  {
    absl::MutexLock lock(&mu_);
    while (!idle_.empty()) {
      std::unique_ptr<ChildProcess> helper = std::move(idle_.back());
      idle_.pop_back();
      if (!helper->Poll().has_value()) return helper;
      dead.push_back(std::move(helper));
    }
  }
  ChildProcess::Options options;
  options.stdin_pipe = true;
  // Out of the terminal's signals: a helper ends when its stdin does, that
  // is when the server exits, however it exits.
  options.own_process_group = true;
  ORDO_ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> helper,
                        ChildProcess::Start({options_.binary, kOnnxInferenceHelperFlag}, options));
  absl::StatusOr<std::string> hello = helper->ReadBytes(sizeof(kHello) - 1, absl::Seconds(10));
  if (!hello.ok() || *hello != kHello) {
    helper->Stop(SIGKILL);
    return absl::UnavailableError(absl::StrCat(options_.binary, " ", kOnnxInferenceHelperFlag,
                                               " did not start"));
  }
  return helper;
}

void OnnxInferenceHelpers::Give(std::unique_ptr<ChildProcess> helper) {
  absl::MutexLock lock(&mu_);
  if (static_cast<int>(idle_.size()) < options_.max_idle) idle_.push_back(std::move(helper));
}

int64_t OnnxInferenceHelpers::failures() const {
  absl::MutexLock lock(&mu_);
  return failures_;
}

namespace {

// A helper's death that may be the model's doing (a fault in libonnx; under
// ASan its report exits 1), not another process's (a SIGKILL or SIGTERM
// from an operator or the kernel's OOM killer).
bool DiedOfTheModel(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status) != 0;
  if (!WIFSIGNALED(status)) return false;
  const int signal = WTERMSIG(status);
  return signal != SIGKILL && signal != SIGTERM && signal != SIGINT && signal != SIGHUP &&
         signal != SIGPIPE;
}

}  // namespace

absl::Status OnnxInferenceHelpers::Call(ChildProcess& helper, const std::string& request,
                                        onnx::ModelProto& model) {
  if (!helper.Write(request).ok()) return absl::UnavailableError("the helper is gone");
  absl::StatusOr<std::string> header = helper.ReadBytes(kHeaderBytes, options_.timeout);
  absl::StatusOr<std::string> payload;
  if (header.ok()) {
    if (PayloadLength(*header) > kMaxPayloadBytes) {
      helper.Stop(SIGKILL);
      return absl::InternalError("an ONNX inference helper answered with a bad frame");
    }
    payload = helper.ReadBytes(PayloadLength(*header), options_.timeout);
  }
  const absl::Status failed = !header.ok() ? header.status() : payload.status();
  if (!failed.ok()) {
    if (failed.code() == absl::StatusCode::kDeadlineExceeded) {
      helper.Stop(SIGKILL);
      {
        absl::MutexLock lock(&mu_);
        ++failures_;
      }
      rpc::Log(rpc::LogLevel::kWarning, "",
               absl::StrCat("ONNX inference helper pid ", helper.pid(), " killed after ",
                            absl::FormatDuration(options_.timeout), " on one model"));
      return absl::InvalidArgumentError(absl::StrCat(
          "ONNX shape inference did not finish within ", absl::FormatDuration(options_.timeout),
          " on this model (libonnx 1.12, in a helper process, now killed; the server is "
          "unaffected)"));
    }
    const int status = helper.Wait();
    const std::string how = DescribeWaitStatus(status);
    rpc::Log(rpc::LogLevel::kWarning, "",
             absl::StrCat("ONNX inference helper pid ", helper.pid(), " ", how,
                          " during one model's inference"));
    if (!DiedOfTheModel(status)) return absl::UnavailableError(how);
    {
      absl::MutexLock lock(&mu_);
      ++failures_;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "ONNX shape inference crashed on this model (libonnx 1.12, in a helper process that ",
        how,
        "; the server is unaffected): the model is malformed in a way the importer does not "
        "check yet; please report it with the model"));
  }
  if ((*header)[0] == static_cast<char>(kAnswerError)) {
    return absl::InvalidArgumentError(*payload);
  }
  onnx::GraphProto declared;
  if (!declared.ParseFromString(*payload)) {
    helper.Stop(SIGKILL);
    return absl::InternalError("an ONNX inference helper answered with unparsable bytes");
  }
  *model.mutable_graph()->mutable_value_info() = std::move(*declared.mutable_value_info());
  *model.mutable_graph()->mutable_output() = std::move(*declared.mutable_output());
  return absl::OkStatus();
}

absl::Status OnnxInferenceHelpers::Infer(onnx::ModelProto& model, bool strict,
                                         bool check_types) {
  {
    absl::MutexLock lock(&mu_);
    if (absl::Now() < no_helper_until_) {
      return onnx_import::InferShapesHere(model, strict, check_types);
    }
  }
  // The importer's models come without bulk weight data
  // (DropBulkInitializerData): what goes is what inference reads.
  std::string serialized;
  if (!model.SerializeToString(&serialized)) {
    return absl::InvalidArgumentError("the model is too large to serialize (over 2 GiB)");
  }
  const std::string request = Frame(
      static_cast<uint8_t>((strict ? kStrict : 0) | (check_types ? kCheckTypes : 0)), serialized);
  // A helper gone before it read the request (stopped, or died idle), or
  // killed by another process during the call, says nothing about this
  // model: once more with a new one.
  std::string last_death;
  for (int attempt = 0; attempt < 2; ++attempt) {
    absl::StatusOr<std::unique_ptr<ChildProcess>> taken = Take();
    if (!taken.ok()) {
      // No helper to be had (fork failed at a process or memory limit, or
      // the binary does not run): serving unprotected beats refusing every
      // ONNX model. Tried again after kRetryStartAfter, said once per try.
      {
        absl::MutexLock lock(&mu_);
        no_helper_until_ = absl::Now() + kRetryStartAfter;
      }
      rpc::Log(rpc::LogLevel::kWarning, "",
               absl::StrCat("no ONNX inference helper (", taken.status().message(),
                            "): inferring in the server's process for ",
                            absl::FormatDuration(kRetryStartAfter)));
      return onnx_import::InferShapesHere(model, strict, check_types);
    }
    std::unique_ptr<ChildProcess>& helper = *taken;
    absl::Status status = Call(*helper, request, model);
    if (absl::IsUnavailable(status)) {
      last_death = std::string(status.message());
      continue;
    }
    // A helper that answered an error has seen a malformed model: it is not
    // kept, in case libonnx left it damaged without crashing.
    if (status.ok() && !helper->Poll().has_value()) Give(std::move(helper));
    return status;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "ONNX shape inference could not run: two helper processes ended during this model's "
      "inference (the last: ", last_death, "); the server is unaffected"));
}

int ServeOnnxInferenceHelper(int in_fd, int out_fd) {
  if (!WriteAll(out_fd, std::string(kHello, sizeof(kHello) - 1))) return 0;
  std::string header(kHeaderBytes, '\0');
  while (ReadAll(in_fd, header.data(), kHeaderBytes)) {
    const uint64_t length = PayloadLength(header);
    if (length > kMaxPayloadBytes) return 2;
    std::string payload(length, '\0');
    if (!ReadAll(in_fd, payload.data(), length)) return 2;
    onnx::ModelProto model;
    // A helper stuck in libonnx ends by itself (SIGALRM) even when the
    // server that would kill it is gone.
    alarm(kHelperAlarmSeconds);
    absl::Status status = model.ParseFromString(payload)
                              ? onnx_import::InferShapesHere(model, (header[0] & kStrict) != 0,
                                                             (header[0] & kCheckTypes) != 0)
                              : absl::InvalidArgumentError("unparsable model");
    alarm(0);
    std::string answer;
    if (status.ok()) {
      onnx::GraphProto declared;
      *declared.mutable_value_info() = std::move(*model.mutable_graph()->mutable_value_info());
      *declared.mutable_output() = std::move(*model.mutable_graph()->mutable_output());
      answer = Frame(kAnswerOk, declared.SerializeAsString());
    } else {
      answer = Frame(kAnswerError, std::string(status.message()));
    }
    if (!WriteAll(out_fd, answer)) return 0;  // the server is gone
  }
  return 0;
}

}  // namespace ordo::server
