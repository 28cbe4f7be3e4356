// The `ordo` command: a thin main over client/cli.
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "client/cli/commands.h"
#include "core/onnx/tensor_shapes.h"

namespace {

// libonnx 1.12 has crashed on malformed models the importer did not check
// yet (docs/testing.md, "Found and fixed"). A crash inside its shape
// inference is the model's fault: exit code 2 with a message, as for any
// bad model. A crash anywhere else stays a crash (SA_RESETHAND: the signal
// is raised again with its default action). ordo-server runs that
// inference in helper processes instead (docs/operating.md).
void OnFatalSignal(int signal) {
  if (ordo::onnx_import::InsideOnnxShapeInference()) {
    constexpr char kMessage[] =
        "ordo: ONNX shape inference crashed on this model (libonnx 1.12): the model is "
        "malformed in a way the importer does not check yet; please report it with the model\n";
    const ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
    (void)ignored;
    _exit(2);
  }
  raise(signal);
}

void ReportCrashesOfOnnxShapeInference() {
  // Its own stack: a crash may be a stack overflow.
  static std::vector<char> stack(1 << 16);
  stack_t alternate{};
  alternate.ss_sp = stack.data();
  alternate.ss_size = stack.size();
  sigaltstack(&alternate, nullptr);
  struct sigaction action {};
  action.sa_handler = OnFatalSignal;
  action.sa_flags = SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(signal, &action, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  ReportCrashesOfOnnxShapeInference();
  std::vector<std::string> args(argv + 1, argv + argc);
  return ordo::cli::RunOrdo(args, std::cout, std::cerr);
}
