#ifndef ORDO_CORE_TRAFFIC_TRAFFIC_H_
#define ORDO_CORE_TRAFFIC_TRAFFIC_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/memory/memory_model.h"

namespace ordo {

struct TrafficOptions {
  // C: bytes of on-chip memory (>= 0).
  int64_t on_chip_bytes = 0;
  // Fill TrafficResult::resident_bytes.
  bool record_residency = false;
};

// Off-chip traffic of one schedule for one on-chip size. Bytes throughout.
struct TrafficResult {
  int64_t on_chip_bytes = 0;
  // Reads and writes beyond the fixed cost below.
  int64_t read_bytes = 0;
  int64_t write_bytes = 0;
  int64_t total_bytes = 0;  // read_bytes + write_bytes
  // Spec: "the fixed cost of reading graph inputs and writing graph outputs
  // once is reported separately": graph inputs that some op reads, and graph
  // outputs that some op produces. Every schedule pays it, at any C.
  int64_t fixed_read_bytes = 0;
  int64_t fixed_write_bytes = 0;
  // Steps whose own inputs and outputs did not fit in C (streamed), and the
  // bytes of tensors streamed at them.
  int32_t streamed_steps = 0;
  int64_t streamed_bytes = 0;
  // When requested: bytes on-chip while each step runs (after its evictions),
  // indexed by step; never above C.
  std::vector<int64_t> resident_bytes;
};

// Off-chip traffic of `schedule` with Belady's optimal replacement (spec:
// Off-chip traffic), at tensor granularity. The spec's rules, made precise:
//  - Activations only: weights cost nothing (they are not counted even with
//    MemoryOptions::count_weights). Graph inputs start off-chip with their
//    data there; every other tensor starts nowhere.
//  - Step i, in this order:
//    1. Load: each input of the op that is not on-chip is read and becomes
//       resident: read_bytes += size, except the first read of a graph input,
//       which is the fixed cost.
//    2. Allocate: each output becomes resident. An output written in place
//       (the simulator's in-place pair) takes over its source's bytes: the
//       source leaves and nothing is added, as in the footprint.
//    3. Evict while resident bytes > C, among tensors not used at step i:
//       the one whose next use (the next step reading it) is furthest first;
//       graph outputs nobody reads again count as never used. Ties: one that
//       is free to evict first; then the smallest that alone brings the
//       resident bytes down to C, else the largest; then the lower id.
//       Evicting a tensor that will be read again and has no off-chip copy
//       writes it: write_bytes += size, once per tensor (tensors are
//       immutable, so later evictions are free). A graph output's write is
//       its fixed-cost write, never in write_bytes. Other tensors with no
//       future use are dropped for free.
//    4. Stream: if resident bytes still exceed C, the op's own inputs and
//       outputs do not fit. Its tensors are then streamed by the same order
//       and charges as step 3: a streamed input was read once in step 1 and
//       does not stay; a streamed output is written straight off-chip
//       (write_bytes += size when it is read later) and does not stay.
//    5. Free: tensors whose last reader is step i and outputs nobody reads
//       leave (graph outputs stay until evicted or the end).
//  - Nothing else is moved: no prefetching, no early eviction.
// With C at least the schedule's peak (without weights) nothing is evicted,
// so read_bytes = write_bytes = 0. Belady's rule is optimal for equal-size
// tensors; for mixed sizes it is the spec's heuristic, not an optimum, and
// traffic need not shrink monotonically as C grows.
// Errors: INVALID_ARGUMENT for a negative C or a schedule the simulator
// rejects (the message names the op). Deterministic. O(steps x resident
// tensors + edges).
absl::StatusOr<TrafficResult> EstimateTraffic(const MemoryModel& model,
                                              absl::Span<const int32_t> schedule,
                                              const TrafficOptions& options);

// The fixed cost alone (fixed_read_bytes, fixed_write_bytes; the rest 0):
// graph inputs some op reads, graph outputs some op produces.
TrafficResult FixedTraffic(const MemoryModel& model);

// Off-chip traffic when every tensor's place is fixed rather than cached
// (memory pools, spec: Memory pools): a tensor with `off_chip[t]` lives in
// off-chip memory for its whole life, so its producer writes it there once
// (write_bytes += size, except a graph output's write, the fixed cost) and
// every op reading it reads it from there (read_bytes += size per distinct
// reader, except a graph input's first read, the fixed cost); nothing else
// moves. These are the accesses the spec's modelled memory time charges, so
// the two agree. `on_chip_bytes` is reported as C. Unaligned sizes, as
// EstimateTraffic. O(tensors).
TrafficResult PlacedTraffic(const MemoryModel& model, const std::vector<bool>& off_chip,
                            int64_t on_chip_bytes);

}  // namespace ordo

#endif  // ORDO_CORE_TRAFFIC_TRAFFIC_H_
