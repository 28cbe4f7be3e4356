#ifndef ORDO_CORE_SCHEDULE_OP_SET_TABLE_H_
#define ORDO_CORE_SCHEDULE_OP_SET_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/time/time.h"

namespace ordo {

// A set of distinct op sets ("signatures" of partial schedules, SERENITY
// §3.1), each a bitset of `words` uint64 words, stored back to back in one
// flat arena and found again through an open-addressing hash index. Entries
// are numbered 0, 1, ... in insertion order; callers keep per-entry data in
// parallel vectors under the same number.
//
// The caller supplies the hash (the search space uses Zobrist hashing, so a
// child's hash is its parent's XOR one key and no set is ever rehashed).
// Linear probing over 8-byte slots (32 bits of hash, 32 bits of entry
// number) at load <= 1/2: one cache line per lookup in the common case, and
// growth reinserts slots without touching the arena. The arena is a list of
// chunks of about 32 KiB that never move: one growing vector copied every
// set at each doubling and faulted in fresh pages for each copy (a tenth of
// the exact search on nasnet_cifar, perf), and a chunk this size is reused
// from the heap by the next search instead of being mapped anew. No
// per-entry heap allocation. Not thread-safe.
class OpSetTable {
 public:
  explicit OpSetTable(int32_t words);

  OpSetTable(const OpSetTable&) = delete;
  OpSetTable& operator=(const OpSetTable&) = delete;
  OpSetTable(OpSetTable&&) = default;
  OpSetTable& operator=(OpSetTable&&) = default;

  int32_t words() const { return words_; }
  int32_t size() const { return size_; }

  // The entry equal to `set`, inserting a copy when there is none.
  // Returns {entry, inserted}.
  std::pair<int32_t, bool> FindOrInsert(const uint64_t* set, uint64_t hash);

  const uint64_t* set(int32_t entry) const { return Locate(entry); }
  uint64_t hash(int32_t entry) const { return hashes_[entry]; }

  // Bytes held by the arena, the hashes and the index (capacity, not size:
  // what the process actually pays).
  int64_t MemoryBytes() const;

  // Forgets every entry, keeping the allocated memory.
  void Clear();

 private:
  static uint32_t Tag(uint64_t hash) { return static_cast<uint32_t>(hash >> 32); }
  // The tag's top bits: Zobrist hashes are uniform, so they need no mixing.
  size_t Home(uint32_t tag) const { return tag >> (32 - log2_capacity_); }
  bool Equal(int32_t entry, const uint64_t* set) const;
  // Where entry's set lives (its chunk's storage is never const).
  uint64_t* Locate(int32_t entry) const {
    return chunks_[entry >> log2_chunk_entries_].get() +
           static_cast<size_t>(entry & chunk_mask_) * words_;
  }
  void Grow();

  int32_t words_;
  int32_t size_ = 0;
  int32_t log2_capacity_ = 0;
  // Entry e's set is in chunks_[e >> log2_chunk_entries_] at index
  // (e & chunk_mask_) * words_; chunks_ may hold more chunks than size_
  // needs (kept by Clear).
  int32_t log2_chunk_entries_ = 0;
  int32_t chunk_mask_ = 0;
  std::vector<std::unique_ptr<uint64_t[]>> chunks_;
  std::vector<uint64_t> hashes_;
  // 0 = empty; else (tag << 32) | (entry + 1).
  std::vector<uint64_t> slots_;
};

// Whether a search's state buffers (an OpSetTable and the vectors kept
// beside it, one entry per set) would next double past a deadline. They
// all double when the table's size passes a power of two; at millions of
// states that takes up to a second in one piece (fresh pages zeroed, old
// buffers copied: 1.1 s past an 8 s deadline on a 1,189-op RandWire-like
// part, perf), which no check between expansions interrupts. A search
// reports its size at each periodic check: the interval that held the last
// doubling, twice over (the next copies twice the bytes), is the forecast
// for the next, and a doubling due within two intervals (at the last
// interval's pace) that would end past the deadline is a reason to stop.
// Not thread-safe.
class DoublingForecast {
 public:
  // At a check at `now` with `size` sets stored: true when the search
  // should stop before its buffers double again.
  bool WouldOverrun(absl::Time now, int64_t size, absl::Time deadline);

 private:
  int64_t next_doubling_ = 1;  // the size whose passing doubles them next
  absl::Time last_check_ = absl::InfinitePast();
  int64_t size_at_last_check_ = 0;
  absl::Duration last_doubling_ = absl::ZeroDuration();
};

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_OP_SET_TABLE_H_
