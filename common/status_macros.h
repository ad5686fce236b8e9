// RETURN_IF_ERROR and ASSIGN_OR_RETURN, which Debian's Abseil (20220623) does
// not have. Shaped like FuzzTest's status_macros.h.

#ifndef PTXDIFF_COMMON_STATUS_MACROS_H_
#define PTXDIFF_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns `expr` from the enclosing function if it is not OK.
#define PTXDIFF_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::absl::Status ptxdiff_status_ = (expr);           \
    if (!ptxdiff_status_.ok()) return ptxdiff_status_; \
  } while (0)

#define PTXDIFF_CONCAT_INNER_(a, b) a##b
#define PTXDIFF_CONCAT_(a, b) PTXDIFF_CONCAT_INNER_(a, b)

// `lhs = value of expr`, or returns its status from the enclosing function.
#define PTXDIFF_ASSIGN_OR_RETURN(lhs, expr)                                   \
  PTXDIFF_ASSIGN_OR_RETURN_IMPL_(PTXDIFF_CONCAT_(ptxdiff_or_, __LINE__), lhs, \
                                 expr)
#define PTXDIFF_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

#endif  // PTXDIFF_COMMON_STATUS_MACROS_H_
