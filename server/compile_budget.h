#ifndef ORDO_SERVER_COMPILE_BUDGET_H_
#define ORDO_SERVER_COMPILE_BUDGET_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ordo::server {

// Limits the public API enforces.
struct CompilerLimits {
  int64_t max_message_bytes = 256 << 20;
  int64_t max_ops = 100000;
  // Compile/CompileStream calls at once; more fail fast, RESOURCE_EXHAUSTED.
  int32_t max_concurrent_compiles = 8;
  // Applied to calls without a deadline; deadlines are capped at max.
  absl::Duration default_deadline = absl::Seconds(60);
  absl::Duration max_deadline = absl::Minutes(10);
  // Memory one compile's schedule search may hold (DP states, memo tables);
  // requests may ask for less (CompileOptions.max_state_bytes), never more.
  // Hitting it ends the search with the best schedule so far.
  int64_t max_state_bytes = int64_t{1} << 30;
};

// The deadline a call is served to: the client's, capped at
// limits.max_deadline from `now`; now + limits.default_deadline when the
// client set none (InfiniteFuture).
absl::Time CallDeadline(absl::Time client_deadline, absl::Time now, const CompilerLimits& limits);

// What the stages of one compile may spend before the call's deadline.
struct CompileBudget {
  // The schedule search's time limit (CompileOptions::time_limit).
  absl::Duration search_time = absl::ZeroDuration();
  // Rewriting's stages (plain compile, search, compile of the rewritten
  // model) all end by then (RewriteCompileOptions::deadline).
  absl::Time stages_deadline = absl::InfiniteFuture();
};

// Least time kept after the search for verification, arena planning,
// traffic and the reply.
inline constexpr absl::Duration kMinReserve = absl::Milliseconds(100);

// The deadline split: a reserve of a fifth of what remains, at least
// kMinReserve, is kept for the stages after the search; the search gets
// the requested time or what is left before the reserve, whichever is less,
// never below zero (a search with no time returns its first schedule). An
// infinite deadline keeps the requested time and no stage deadline.
CompileBudget SplitDeadline(absl::Duration requested_search_time, absl::Time deadline,
                            absl::Time now);

// The search-state budget of a request: the server's limit unless the
// request asks for less (0 = not asked); INVALID_ARGUMENT naming
// options.max_state_bytes when negative.
absl::StatusOr<int64_t> StateBudget(int64_t requested_bytes, const CompilerLimits& limits);

}  // namespace ordo::server

#endif  // ORDO_SERVER_COMPILE_BUDGET_H_
