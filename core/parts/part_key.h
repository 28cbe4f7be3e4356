#ifndef ORDO_CORE_PARTS_PART_KEY_H_
#define ORDO_CORE_PARTS_PART_KEY_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "core/memory/memory_model.h"

namespace ordo {

// Version of the part scheduling results. Part of every cache key: bump it
// when a scheduler change makes old cached orders worse than new ones (old
// entries then simply stop matching).
inline constexpr absl::string_view kPartAlgorithmVersion = "ordo-part-v1";

// The cache identity of a part's scheduling problem.
struct PartKey {
  // 32 hex digits: a 128-bit hash of the canonical form (below).
  std::string key;
  // The gcd of the part's byte counts. The canonical form holds bytes / scale
  // ("units"); a cached peak in units times `scale` is this part's peak.
  int64_t scale = 1;
};

// The canonical key of `model` for results of `scheduler`.
//
// Canonical form, in order: kPartAlgorithmVersion, the scheduler name, the
// memory options, then the problem with every byte count divided by their
// gcd (so uniformly scaled parts, e.g. the same cell at another width or
// dtype, share an entry): ops in id order, each with its inputs and outputs
// as canonical tensor ids and its in-place input; then per canonical tensor
// its units, producer, consumers and live_at_end; then constant units.
// Canonical tensor ids number the tensors the ops touch by first touch (ops
// in id order, an op's inputs then outputs), then untouched tensors of
// non-zero size sorted by (units, live_at_end). Tensors of size 0 no op
// touches (weights kept for id stability) are left out. MemoryModels carry
// no names, so the key is insensitive to op and tensor names by
// construction.
//
// Equal canonical forms are the same problem up to renaming tensors and
// scaling sizes: an order of op ids valid for one is valid for the other,
// with peaks in proportion. Equal problems numbered differently (another
// op order in the file) may get different keys: a miss, never a wrong hit.
// The hash is not cryptographic; a collision is caught because every
// cached order is re-simulated against the part before use.
//
// O(ops + tensors + edges). Thread-safe (pure).
PartKey CanonicalPartKey(const MemoryModel& model, absl::string_view scheduler);

}  // namespace ordo

#endif  // ORDO_CORE_PARTS_PART_KEY_H_
