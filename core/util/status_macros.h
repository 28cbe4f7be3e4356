#ifndef ORDO_CORE_UTIL_STATUS_MACROS_H_
#define ORDO_CORE_UTIL_STATUS_MACROS_H_

// Small versions of the status macros that Debian's abseil (20220623) lacks.

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define ORDO_STATUS_CONCAT_INNER_(a, b) a##b
#define ORDO_STATUS_CONCAT_(a, b) ORDO_STATUS_CONCAT_INNER_(a, b)

// Returns the status of `expr` from the enclosing function when it is not OK.
#define ORDO_RETURN_IF_ERROR(expr)                 \
  do {                                             \
    ::absl::Status ordo_status_ = (expr);          \
    if (!ordo_status_.ok()) return ordo_status_;   \
  } while (0)

// `ORDO_ASSIGN_OR_RETURN(auto x, F());` declares x from the value of a
// StatusOr, or returns its status from the enclosing function.
#define ORDO_ASSIGN_OR_RETURN(lhs, expr) \
  ORDO_ASSIGN_OR_RETURN_IMPL_(ORDO_STATUS_CONCAT_(ordo_statusor_, __LINE__), lhs, expr)

#define ORDO_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                \
  if (!statusor.ok()) return statusor.status();          \
  lhs = std::move(statusor).value()

#endif  // ORDO_CORE_UTIL_STATUS_MACROS_H_
