#ifndef ORDO_CORE_TESTING_STATUS_MATCHERS_H_
#define ORDO_CORE_TESTING_STATUS_MATCHERS_H_

// gMock matchers for absl::Status / StatusOr (Debian's abseil has none).

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace ordo::testing {

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

MATCHER(IsOk, "is OK") {
  const absl::Status& status = GetStatus(arg);
  if (!status.ok()) *result_listener << "status: " << status;
  return status.ok();
}

MATCHER_P2(StatusIs, code, message_matcher,
           "has code " + ::testing::PrintToString(code)) {
  const absl::Status& status = GetStatus(arg);
  *result_listener << "status: " << status;
  return status.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, std::string(status.message()),
                                       result_listener);
}

}  // namespace ordo::testing

// Unwraps a StatusOr in a test, failing the test when it is not OK.
// NOLINTBEGIN(bugprone-macro-parentheses): `lhs` is a declaration
// (`auto x`) and `so` a name being declared; parentheses would break both.
#define ORDO_ASSERT_OK_AND_ASSIGN(lhs, expr)                                  \
  ORDO_ASSERT_OK_AND_ASSIGN_IMPL_(ORDO_TEST_CONCAT_(ordo_test_so_, __LINE__), \
                                  lhs, expr)
#define ORDO_TEST_CONCAT_INNER_(a, b) a##b
#define ORDO_TEST_CONCAT_(a, b) ORDO_TEST_CONCAT_INNER_(a, b)
#define ORDO_ASSERT_OK_AND_ASSIGN_IMPL_(so, lhs, expr) \
  auto so = (expr);                                    \
  ASSERT_TRUE(so.ok()) << so.status();                 \
  lhs = std::move(so).value()
// NOLINTEND(bugprone-macro-parentheses)

#define ORDO_ASSERT_OK(expr) ASSERT_THAT((expr), ::ordo::testing::IsOk())
#define ORDO_EXPECT_OK(expr) EXPECT_THAT((expr), ::ordo::testing::IsOk())

#endif  // ORDO_CORE_TESTING_STATUS_MATCHERS_H_
