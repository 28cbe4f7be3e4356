#ifndef ORDO_CORE_TESTING_TEST_PATHS_H_
#define ORDO_CORE_TESTING_TEST_PATHS_H_

// Where tests and benchmarks find the checkout's files and the build's
// binaries. These are absolute paths of one checkout and one build tree, so
// they live in this one object (test_paths.cc, given them by CMake): a
// checkout at another path recompiles it alone, and the compiler cache serves
// every other test object (their compile lines carry no checkout path).
#include <string>

namespace ordo::testing {

// The source tree (the repository's root).
std::string SourceDir();
// ../shared/models beside the checkout, or the ORDO_SHARED_MODELS_DIR cache
// variable; may not exist (tests skip, saying so).
std::string SharedModelsDir();
// examples/models.
std::string ExampleModelsDir();
// tests/data/exports: the torchvision export corpus.
std::string ExportsDir();

// The build's binaries. Empty when the tree does not build that target
// (ordo-fake-worker without process tests, ordo-load without benchmarks).
std::string OrdoBinary();
std::string ServerBinary();
std::string WorkerBinary();
std::string FakeWorkerBinary();
std::string LoadBinary();

}  // namespace ordo::testing

#endif  // ORDO_CORE_TESTING_TEST_PATHS_H_
