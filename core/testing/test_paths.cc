#include "core/testing/test_paths.h"

namespace ordo::testing {

std::string SourceDir() { return ORDO_SOURCE_DIR; }
std::string SharedModelsDir() { return ORDO_SHARED_MODELS_DIR; }
std::string ExampleModelsDir() { return ORDO_EXAMPLE_MODELS_DIR; }
std::string ExportsDir() { return ORDO_EXPORTS_DIR; }

std::string OrdoBinary() { return ORDO_BINARY; }
std::string ServerBinary() { return ORDO_SERVER_BINARY; }
std::string WorkerBinary() { return ORDO_WORKER_BINARY; }
std::string FakeWorkerBinary() { return ORDO_FAKE_WORKER_BINARY; }
std::string LoadBinary() { return ORDO_LOAD_BINARY; }

}  // namespace ordo::testing
