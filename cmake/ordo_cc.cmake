# ordo_cc_library(NAME SRCS ... DEPS ...): one library per concept folder.
# ordo_cc_test(NAME SRCS ... DEPS ... LABELS ...): a GoogleTest binary
# registered with ctest. LABELS process marks a test that starts server,
# worker or redis processes: skipped when ORDO_PROCESS_TESTS is OFF; LABELS
# scale one whose model's size is its point or its cost: skipped when
# ORDO_SCALE_TESTS is OFF. Only the first label reaches ctest (the list is
# split by gtest_discover_tests), so put the one ctest -L should find first.
function(ordo_cc_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;HDRS;DEPS" ${ARGN})
  add_library(${name} ${ARG_SRCS} ${ARG_HDRS})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

function(ordo_cc_test name)
  if(NOT ORDO_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;LABELS" ${ARGN})
  if("process" IN_LIST ARG_LABELS AND NOT ORDO_PROCESS_TESTS)
    return()
  endif()
  if("scale" IN_LIST ARG_LABELS AND NOT ORDO_SCALE_TESTS)
    return()
  endif()
  add_executable(${name} ${ARG_SRCS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  # Paths come from ordo_test_paths (core/testing/test_paths.h), not from
  # -D flags: a flag holding the checkout's path would make the compiler
  # cache miss every test object of a checkout at another path (CI's clone).
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} ordo_test_paths GTest::gmock
                        GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${ARG_LABELS}")
  set_property(GLOBAL APPEND PROPERTY ORDO_TEST_BINARIES ${name})
  # LABELS concurrency: tests of code that runs on several threads; the
  # TSan build (scripts/test --sanitize) builds target concurrency_tests
  # and runs `ctest -L concurrency`.
  if("concurrency" IN_LIST ARG_LABELS)
    set_property(GLOBAL APPEND PROPERTY ORDO_CONCURRENCY_TESTS ${name})
  endif()
endfunction()
