#include "core/schedule/op_set_table.h"

#include <algorithm>

#include "core/util/check.h"

namespace ordo {
namespace {

constexpr int32_t kInitialLog2Capacity = 10;
// A chunk holds 2^k sets, k the largest with at most this many bytes (at
// least 64 sets).
constexpr int64_t kChunkBytes = 32 << 10;
constexpr int32_t kMinLog2ChunkEntries = 6;

int32_t Log2ChunkEntries(int32_t words) {
  int32_t log2 = kMinLog2ChunkEntries;
  while ((int64_t{2} << log2) * words * static_cast<int64_t>(sizeof(uint64_t)) <= kChunkBytes) {
    ++log2;
  }
  return log2;
}

}  // namespace

OpSetTable::OpSetTable(int32_t words)
    : words_(words),
      log2_capacity_(kInitialLog2Capacity),
      log2_chunk_entries_(Log2ChunkEntries(words)),
      chunk_mask_((1 << log2_chunk_entries_) - 1),
      slots_(size_t{1} << kInitialLog2Capacity, 0) {
  ORDO_CHECK(words > 0);
}

bool OpSetTable::Equal(int32_t entry, const uint64_t* set) const {
  return std::equal(set, set + words_, this->set(entry));
}

std::pair<int32_t, bool> OpSetTable::FindOrInsert(const uint64_t* set, uint64_t hash) {
  const uint32_t tag = Tag(hash);
  const size_t mask = slots_.size() - 1;
  size_t i = Home(tag);
  while (slots_[i] != 0) {
    const uint64_t slot = slots_[i];
    if (static_cast<uint32_t>(slot >> 32) == tag) {
      const int32_t entry = static_cast<int32_t>(static_cast<uint32_t>(slot)) - 1;
      if (hashes_[entry] == hash && Equal(entry, set)) return {entry, false};
    }
    i = (i + 1) & mask;
  }
  ORDO_CHECK(size_ < INT32_MAX - 1);
  const int32_t entry = size_++;
  slots_[i] = (uint64_t{tag} << 32) | static_cast<uint32_t>(entry + 1);
  const size_t chunk = static_cast<size_t>(entry >> log2_chunk_entries_);
  if (chunk == chunks_.size()) {
    // Uninitialised: every set is written before it is read.
    chunks_.push_back(std::make_unique_for_overwrite<uint64_t[]>(
        static_cast<size_t>(words_) << log2_chunk_entries_));
  }
  std::copy_n(set, words_, Locate(entry));
  hashes_.push_back(hash);
  if (size_t{static_cast<uint32_t>(size_)} * 2 > slots_.size()) Grow();
  return {entry, true};
}

void OpSetTable::Grow() {
  std::vector<uint64_t> old = std::move(slots_);
  ++log2_capacity_;
  ORDO_CHECK(log2_capacity_ <= 32);
  slots_.assign(size_t{1} << log2_capacity_, 0);
  const size_t mask = slots_.size() - 1;
  for (uint64_t slot : old) {
    if (slot == 0) continue;
    size_t i = Home(static_cast<uint32_t>(slot >> 32));
    while (slots_[i] != 0) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

int64_t OpSetTable::MemoryBytes() const {
  const size_t arena = chunks_.size() * (static_cast<size_t>(words_) << log2_chunk_entries_);
  return static_cast<int64_t>(sizeof(uint64_t) *
                              (arena + hashes_.capacity() + slots_.capacity()));
}

bool DoublingForecast::WouldOverrun(absl::Time now, int64_t size, absl::Time deadline) {
  if (last_check_ != absl::InfinitePast() && size > next_doubling_) {
    last_doubling_ = now - last_check_;
  }
  while (next_doubling_ < size) next_doubling_ *= 2;
  const int64_t inserted = size - size_at_last_check_;
  last_check_ = now;
  size_at_last_check_ = size;
  const bool due = size + 2 * inserted >= next_doubling_;
  return due && now + 2 * last_doubling_ > deadline;
}

void OpSetTable::Clear() {
  size_ = 0;
  hashes_.clear();
  std::fill(slots_.begin(), slots_.end(), 0);
}

}  // namespace ordo
