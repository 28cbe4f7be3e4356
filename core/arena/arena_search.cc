#include "core/arena/arena_search.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>
#include <utility>

namespace ordo {
namespace {

constexpr int64_t kUnplaced = -1;
// Memory bounds, so that a graph built to defeat the search costs a refusal
// instead of gigabytes: overlap lists (pairs of blocks live together) and
// candidates held by the frames of the depth-first stack.
constexpr int64_t kMaxOverlapPairs = int64_t{8} << 20;
constexpr int64_t kMaxHeldCandidates = int64_t{8} << 20;

// The search state of one SearchArena call over the positive-size blocks
// ("items"). Items are numbered by preordering position, so comparing item
// numbers is comparing priorities. Slots are steps + 1 (slot 0: before step 0).
class CanonicalSearch {
 public:
  CanonicalSearch(const ArenaProblem& problem, int64_t capacity,
                  const ArenaPreordering& preordering)
      : problem_(problem), capacity_(capacity) {
    BuildItems(preordering);
    BuildOverlaps();
    BuildSlotMaxima();
  }

  ArenaSearchResult Run(int64_t max_nodes, const ArenaLimits& limits);

 private:
  // Part of the problem searched on its own: the unplaced items within a
  // slot range that no unplaced item outside it reaches.
  struct Part {
    int32_t lo = 0, hi = 0;  // slots, inclusive
    std::vector<int32_t> items;
  };
  // One unplaced item a node may place next, at its lowest offset.
  struct Candidate {
    int64_t offset;
    int32_t item;
    bool operator<(const Candidate& other) const {
      return offset != other.offset ? offset < other.offset : item < other.item;
    }
  };
  // Undo-log sizes before a placement.
  struct Marks {
    size_t placed = 0, offsets = 0, floors = 0;
  };
  // A search frame (OR: which item next) or, when `parts` is non-empty, a
  // split frame (AND: every part must be solved, in turn).
  struct Frame {
    // Search frame.
    const Part* part = nullptr;
    size_t split = 0;  // index of the split frame owning `part`
    std::vector<Candidate> ordering;
    size_t next = 0;
    // Canonical order: later placements are not below the one that led
    // here, and at its offset only later items may follow.
    int64_t min_offset = 0;
    int32_t min_item = -1;
    // Lowest top any unplaced item of the part can reach (dominance).
    int64_t min_height = 0;
    bool applied = false;
    Marks marks;
    // Split frame.
    std::vector<std::unique_ptr<Part>> parts;
    size_t next_part = 0;
  };

  void BuildItems(const ArenaPreordering& preordering);
  void BuildOverlaps();
  // The unplaced items of `part` in (lowest offset, item) order, built
  // from scratch: O(n log n).
  std::vector<Candidate> ComputeOrdering(const Part& part);
  // The same ordering after `frame`'s part placed an item (the placement
  // logged since `marks`), derived from `frame.ordering`: O(n + k log k) for
  // the k items whose lowest offset rose, instead of a sort per node.
  std::vector<Candidate> NextOrdering(const Frame& frame, int32_t placed, const Marks& marks);
  std::vector<Candidate> TakeBuffer();
  static int64_t MinHeight(const std::vector<Candidate>& ordering,
                           const std::vector<int64_t>& size);
  Marks CurrentMarks() const { return {placed_log_.size(), offset_log_.size(), floor_log_.size()}; }
  // Places `item`; collects in new_cuts_ the boundaries it left unspanned.
  void Apply(int32_t item, int64_t offset);
  void UndoTo(const Marks& marks);
  // Section inference over the part's slots: with a floor at `offset`, does
  // every slot's floor plus its unplaced total fit? O(log S).
  bool Check(const Part& part, int64_t offset) const;
  // slot_max_ over total_ and floor_ (after BuildItems).
  void BuildSlotMaxima();
  // Recomputes slot_max_ for slots lo..hi after total_ or floor_ changed
  // there: O(hi - lo + log S).
  void RefreshSlots(int32_t lo, int32_t hi);
  // The parts of `part`'s unplaced items cut at new_cuts_ (non-empty only).
  std::vector<std::unique_ptr<Part>> Split(const Part& part) const;
  Frame SearchFrame(const Part* part, size_t split);
  // Drops the frames from `size` up, releasing their candidates.
  void PopTo(std::vector<Frame>& frames, size_t size);
  ArenaSearchResult Found(int64_t nodes) const;

  const ArenaProblem& problem_;
  const int64_t capacity_;
  // Per item: its block, size, slots and overlapping items (CSR).
  std::vector<int32_t> block_;
  std::vector<int64_t> size_;
  std::vector<int32_t> first_slot_, last_slot_;
  std::vector<int32_t> overlap_begin_, overlaps_;
  // Search state: offsets, lowest offsets, per-slot floor and unplaced total,
  // per boundary (slot s | s + 1) the unplaced items spanning it.
  std::vector<int64_t> offset_, min_offset_;
  std::vector<int64_t> floor_, total_;
  // Check's maxima over slot ranges, a segment tree with leaves at
  // slot_leaves_ + slot: per node the largest unplaced total of its slots,
  // and the largest floor + total over its slots with a positive total
  // (kNoSlotHeight when none). max(offset, floor) + total is the larger of
  // offset + total and floor + total, so these two maxima decide Check for
  // every slot of a range at once; a scan per node was most of the search.
  struct SlotMax {
    int64_t total = 0;
    int64_t height = 0;
  };
  static constexpr int64_t kNoSlotHeight = std::numeric_limits<int64_t>::min();
  int32_t slot_leaves_ = 1;
  std::vector<SlotMax> slot_max_;
  std::vector<int32_t> cuts_;
  std::vector<int32_t> new_cuts_;
  // Candidates held by all frames (kMaxHeldCandidates).
  int64_t held_ = 0;
  // Orderings of popped frames, reused: a node allocates nothing once the
  // stack has been this deep.
  std::vector<std::vector<Candidate>> spare_orderings_;
  // NextOrdering's scratch: per item, whether the last placement raised its
  // lowest offset; the raised candidates.
  std::vector<char> raised_;
  std::vector<Candidate> moved_;
  // Undo logs.
  std::vector<int32_t> placed_log_;
  std::vector<std::pair<int32_t, int64_t>> offset_log_, floor_log_;
};

void CanonicalSearch::BuildItems(const ArenaPreordering& preordering) {
  const int32_t slots = problem_.num_steps + 1;
  total_.assign(slots, 0);
  floor_.assign(slots, 0);
  cuts_.assign(slots, 0);
  std::vector<int32_t> blocks;
  for (int32_t b = 0; b < static_cast<int32_t>(problem_.blocks.size()); ++b) {
    const ArenaBlock& block = problem_.blocks[b];
    if (block.size == 0) continue;
    blocks.push_back(b);
    for (int32_t s = block.first + 1; s <= block.last + 1; ++s) total_[s] += block.size;
    for (int32_t s = block.first + 1; s <= block.last; ++s) ++cuts_[s];
  }
  struct Keys {
    int64_t width, area, total, size, first, last;
  };
  std::vector<Keys> keys(problem_.blocks.size());
  for (int32_t b : blocks) {
    const ArenaBlock& block = problem_.blocks[b];
    Keys& k = keys[b];
    k.width = block.last - block.first + 1;
    k.size = block.size;
    k.area = k.size * k.width;
    k.first = block.first;
    k.last = block.last;
    k.total = 0;
    for (int32_t s = block.first + 1; s <= block.last + 1; ++s) {
      k.total = std::max(k.total, total_[s]);
    }
  }
  auto key = [&keys](int32_t b, char c) -> int64_t {
    switch (c) {
      case 'W':
        return keys[b].width;
      case 'A':
        return keys[b].area;
      case 'T':
        return keys[b].total;
      case 'F':
        return -keys[b].first;  // earlier start first
      case 'E':
        return -keys[b].last;  // earlier end first
      default:
        return keys[b].size;
    }
  };
  std::sort(blocks.begin(), blocks.end(), [&](int32_t a, int32_t b) {
    for (char c : preordering) {
      if (key(a, c) != key(b, c)) return key(a, c) > key(b, c);
    }
    return a < b;
  });
  block_ = blocks;
  for (int32_t b : block_) {
    const ArenaBlock& block = problem_.blocks[b];
    size_.push_back(block.size);
    first_slot_.push_back(block.first + 1);
    last_slot_.push_back(block.last + 1);
  }
  offset_.assign(block_.size(), kUnplaced);
  raised_.assign(block_.size(), 0);
  min_offset_.assign(block_.size(), 0);
}

void CanonicalSearch::BuildSlotMaxima() {
  const int32_t slots = static_cast<int32_t>(total_.size());
  while (slot_leaves_ < slots) slot_leaves_ *= 2;
  slot_max_.assign(2 * static_cast<size_t>(slot_leaves_), {0, kNoSlotHeight});
  RefreshSlots(0, slots - 1);
}

void CanonicalSearch::RefreshSlots(int32_t lo, int32_t hi) {
  for (int32_t s = lo; s <= hi; ++s) {
    slot_max_[slot_leaves_ + s] = {total_[s], total_[s] > 0 ? floor_[s] + total_[s] : kNoSlotHeight};
  }
  for (int32_t a = (slot_leaves_ + lo) / 2, b = (slot_leaves_ + hi) / 2; a >= 1; a /= 2, b /= 2) {
    for (int32_t node = a; node <= b; ++node) {
      const SlotMax& left = slot_max_[2 * node];
      const SlotMax& right = slot_max_[2 * node + 1];
      slot_max_[node] = {std::max(left.total, right.total), std::max(left.height, right.height)};
    }
  }
}

void CanonicalSearch::BuildOverlaps() {
  // Sweep by first slot; `active` holds the items still live.
  const int32_t m = static_cast<int32_t>(block_.size());
  std::vector<int32_t> by_first(m);
  std::iota(by_first.begin(), by_first.end(), 0);
  std::sort(by_first.begin(), by_first.end(), [this](int32_t a, int32_t b) {
    return first_slot_[a] != first_slot_[b] ? first_slot_[a] < first_slot_[b] : a < b;
  });
  std::vector<std::vector<int32_t>> lists(m);
  std::vector<int32_t> active;
  for (int32_t i : by_first) {
    std::erase_if(active, [&](int32_t j) { return last_slot_[j] < first_slot_[i]; });
    for (int32_t j : active) {
      lists[i].push_back(j);
      lists[j].push_back(i);
    }
    active.push_back(i);
  }
  overlap_begin_.assign(m + 1, 0);
  for (int32_t i = 0; i < m; ++i) {
    overlap_begin_[i + 1] = overlap_begin_[i] + static_cast<int32_t>(lists[i].size());
    overlaps_.insert(overlaps_.end(), lists[i].begin(), lists[i].end());
  }
}

std::vector<CanonicalSearch::Candidate> CanonicalSearch::TakeBuffer() {
  if (spare_orderings_.empty()) return {};
  std::vector<Candidate> buffer = std::move(spare_orderings_.back());
  spare_orderings_.pop_back();
  buffer.clear();
  return buffer;
}

std::vector<CanonicalSearch::Candidate> CanonicalSearch::ComputeOrdering(const Part& part) {
  std::vector<Candidate> ordering = TakeBuffer();
  for (int32_t i : part.items) {
    if (offset_[i] == kUnplaced) ordering.push_back({min_offset_[i], i});
  }
  std::sort(ordering.begin(), ordering.end());
  return ordering;
}

std::vector<CanonicalSearch::Candidate> CanonicalSearch::NextOrdering(const Frame& frame,
                                                                     int32_t placed,
                                                                     const Marks& marks) {
  // Why this equals ComputeOrdering now: the frame's ordering was computed in
  // the state this placement started from (a frame undoes its previous
  // placement before the next, and undo restores lowest offsets exactly),
  // and a placement changes only the placed item (now placed) and the
  // lowest offsets it logged. Keys are distinct (item breaks ties), so the
  // sorted order is unique.
  for (size_t k = marks.offsets; k < offset_log_.size(); ++k) raised_[offset_log_[k].first] = 1;
  std::vector<Candidate> ordering = TakeBuffer();
  moved_.clear();
  for (const Candidate& c : frame.ordering) {
    if (c.item == placed) continue;
    if (raised_[c.item]) {
      moved_.push_back({min_offset_[c.item], c.item});
    } else {
      ordering.push_back(c);
    }
  }
  for (size_t k = marks.offsets; k < offset_log_.size(); ++k) raised_[offset_log_[k].first] = 0;
  if (moved_.empty()) return ordering;
  std::sort(moved_.begin(), moved_.end());
  const size_t kept = ordering.size();
  ordering.insert(ordering.end(), moved_.begin(), moved_.end());
  std::inplace_merge(ordering.begin(), ordering.begin() + static_cast<std::ptrdiff_t>(kept),
                     ordering.end());
  return ordering;
}

int64_t CanonicalSearch::MinHeight(const std::vector<Candidate>& ordering,
                                   const std::vector<int64_t>& size) {
  int64_t height = std::numeric_limits<int64_t>::max();
  for (const Candidate& c : ordering) height = std::min(height, c.offset + size[c.item]);
  return height;
}

void CanonicalSearch::Apply(int32_t item, int64_t offset) {
  offset_[item] = offset;
  placed_log_.push_back(item);
  const int64_t height = offset + size_[item];
  for (int32_t k = overlap_begin_[item]; k < overlap_begin_[item + 1]; ++k) {
    const int32_t other = overlaps_[k];
    if (offset_[other] != kUnplaced || min_offset_[other] >= height) continue;
    offset_log_.emplace_back(other, min_offset_[other]);
    min_offset_[other] = height;
  }
  for (int32_t s = first_slot_[item]; s <= last_slot_[item]; ++s) {
    total_[s] -= size_[item];
    if (floor_[s] < height) {
      floor_log_.emplace_back(s, floor_[s]);
      floor_[s] = height;
    }
  }
  RefreshSlots(first_slot_[item], last_slot_[item]);
  new_cuts_.clear();
  for (int32_t s = first_slot_[item]; s < last_slot_[item]; ++s) {
    if (--cuts_[s] == 0) new_cuts_.push_back(s);
  }
}

void CanonicalSearch::UndoTo(const Marks& marks) {
  while (offset_log_.size() > marks.offsets) {
    min_offset_[offset_log_.back().first] = offset_log_.back().second;
    offset_log_.pop_back();
  }
  while (floor_log_.size() > marks.floors) {
    floor_[floor_log_.back().first] = floor_log_.back().second;
    floor_log_.pop_back();
  }
  // Every floor restored above lies in the slots of an item placed since
  // `marks`, so refreshing those items' slots refreshes every changed slot.
  while (placed_log_.size() > marks.placed) {
    const int32_t item = placed_log_.back();
    placed_log_.pop_back();
    for (int32_t s = first_slot_[item]; s <= last_slot_[item]; ++s) total_[s] += size_[item];
    for (int32_t s = first_slot_[item]; s < last_slot_[item]; ++s) ++cuts_[s];
    RefreshSlots(first_slot_[item], last_slot_[item]);
    offset_[item] = kUnplaced;
  }
}

bool CanonicalSearch::Check(const Part& part, int64_t offset) const {
  // Slots with no unplaced total are free of the rule: their total is 0 and
  // their height kNoSlotHeight, so they never decide either maximum.
  int64_t total = 0, height = kNoSlotHeight;
  for (int32_t a = slot_leaves_ + part.lo, b = slot_leaves_ + part.hi + 1; a < b; a /= 2, b /= 2) {
    if (a & 1) {
      total = std::max(total, slot_max_[a].total);
      height = std::max(height, slot_max_[a++].height);
    }
    if (b & 1) {
      total = std::max(total, slot_max_[--b].total);
      height = std::max(height, slot_max_[b].height);
    }
  }
  return total == 0 || (offset + total <= capacity_ && height <= capacity_);
}

std::vector<std::unique_ptr<CanonicalSearch::Part>> CanonicalSearch::Split(const Part& part) const {
  std::vector<int32_t> cuts;
  for (int32_t s : new_cuts_) {
    if (s >= part.lo && s < part.hi) cuts.push_back(s);
  }
  std::sort(cuts.begin(), cuts.end());
  std::vector<std::unique_ptr<Part>> parts;
  int32_t lo = part.lo;
  for (size_t c = 0; c <= cuts.size(); ++c) {
    auto sub = std::make_unique<Part>();
    sub->lo = lo;
    sub->hi = c < cuts.size() ? cuts[c] : part.hi;
    lo = sub->hi + 1;
    parts.push_back(std::move(sub));
  }
  // No unplaced item spans a cut, so each lies in the part of its first slot.
  for (int32_t i : part.items) {
    if (offset_[i] != kUnplaced) continue;
    auto it = std::upper_bound(cuts.begin(), cuts.end(), first_slot_[i] - 1);
    parts[it - cuts.begin()]->items.push_back(i);
  }
  std::erase_if(parts, [](const std::unique_ptr<Part>& p) { return p->items.empty(); });
  return parts;
}

CanonicalSearch::Frame CanonicalSearch::SearchFrame(const Part* part, size_t split) {
  Frame frame;
  frame.part = part;
  frame.split = split;
  frame.ordering = ComputeOrdering(*part);
  frame.min_height = MinHeight(frame.ordering, size_);
  return frame;
}

void CanonicalSearch::PopTo(std::vector<Frame>& frames, size_t size) {
  while (frames.size() > size) {
    held_ -= static_cast<int64_t>(frames.back().ordering.size());
    if (frames.back().ordering.capacity() > 0) {
      spare_orderings_.push_back(std::move(frames.back().ordering));
    }
    frames.pop_back();
  }
}

ArenaSearchResult CanonicalSearch::Found(int64_t nodes) const {
  ArenaSearchResult result{ArenaSearchOutcome::kFound, {}, nodes};
  result.offsets.assign(problem_.blocks.size(), 0);
  for (size_t i = 0; i < block_.size(); ++i) result.offsets[block_[i]] = offset_[i];
  return result;
}

ArenaSearchResult CanonicalSearch::Run(int64_t max_nodes, const ArenaLimits& limits) {
  int64_t nodes = 0;
  Part whole;
  whole.lo = 0;
  whole.hi = problem_.num_steps;
  whole.items.resize(block_.size());
  std::iota(whole.items.begin(), whole.items.end(), 0);
  if (!Check(whole, 0)) return {ArenaSearchOutcome::kInfeasible, {}, nodes};
  // The root is a split of the whole problem at the boundaries no block spans.
  new_cuts_.clear();
  for (int32_t s = 0; s < whole.hi; ++s) {
    if (cuts_[s] == 0) new_cuts_.push_back(s);
  }
  std::vector<Frame> frames(1);
  frames[0].parts = Split(whole);
  if (frames[0].parts.empty()) return Found(nodes);

  while (!frames.empty()) {
    if (!frames.back().parts.empty()) {
      // A split frame: solve its next part, or report the whole split solved.
      Frame& split = frames.back();
      if (split.next_part < split.parts.size()) {
        const Part* part = split.parts[split.next_part++].get();
        frames.push_back(SearchFrame(part, frames.size() - 1));
        held_ += static_cast<int64_t>(frames.back().ordering.size());
        continue;
      }
      if (frames.size() == 1) return Found(nodes);
      // The search frame below placed the item that made this split; with
      // every part solved, that frame's part is solved: keep the placements
      // and resume the split owning it.
      PopTo(frames, frames[frames.size() - 2].split + 1);
      continue;
    }
    Frame& frame = frames.back();
    if (frame.applied) {
      UndoTo(frame.marks);
      frame.applied = false;
    }
    bool moved = false;
    while (frame.next < frame.ordering.size()) {
      const Candidate c = frame.ordering[frame.next++];
      if (c.offset < frame.min_offset ||
          (c.offset == frame.min_offset && c.item < frame.min_item)) {
        continue;  // not canonical: it would have been placed earlier
      }
      if (c.offset >= frame.min_height) continue;  // dominated
      if (++nodes > max_nodes || (nodes % 256 == 0 && limits.Expired())) {
        return {ArenaSearchOutcome::kAborted, {}, nodes};
      }
      const Marks marks = CurrentMarks();
      Apply(c.item, c.offset);
      if (!Check(*frame.part, c.offset)) {
        UndoTo(marks);
        continue;
      }
      frame.applied = true;
      frame.marks = marks;
      moved = true;
      Frame child;
      std::vector<std::unique_ptr<Part>> parts;
      if (!new_cuts_.empty()) parts = Split(*frame.part);
      if (!parts.empty()) {
        child.parts = std::move(parts);
      } else {
        child.part = frame.part;
        child.split = frame.split;
        child.ordering = NextOrdering(frame, c.item, marks);
        child.min_height = MinHeight(child.ordering, size_);
        if (child.ordering.empty()) {
          // The part is solved: resume its split with the next part.
          PopTo(frames, frame.split + 1);  // invalidates `frame`
          break;
        }
        child.min_offset = c.offset;
        child.min_item = c.item;
      }
      held_ += static_cast<int64_t>(child.ordering.size());
      frames.push_back(std::move(child));  // invalidates `frame`
      if (held_ > kMaxHeldCandidates) return {ArenaSearchOutcome::kAborted, {}, nodes};
      break;
    }
    if (moved) continue;
    // Exhausted. If this was the first frame of a part, the part has no
    // placement, so its split fails too; the frame below then undoes the
    // placement that led here and tries its next candidate.
    PopTo(frames, frames.size() - 1);
    if (!frames.empty() && !frames.back().parts.empty()) frames.pop_back();
  }
  return {ArenaSearchOutcome::kInfeasible, {}, nodes};
}

}  // namespace

int64_t CountOverlappingPairs(const ArenaProblem& problem) {
  // Pairs (a, b) with a starting no later than b and still live when b
  // starts: for each b, the blocks started by then minus those ended before.
  std::vector<int32_t> firsts, lasts;
  for (const ArenaBlock& block : problem.blocks) {
    if (block.size == 0) continue;
    firsts.push_back(block.first);
    lasts.push_back(block.last);
  }
  std::vector<int32_t> sorted_firsts = firsts, sorted_lasts = lasts;
  std::sort(sorted_firsts.begin(), sorted_firsts.end());
  std::sort(sorted_lasts.begin(), sorted_lasts.end());
  int64_t pairs = 0;
  for (int32_t first : firsts) {
    const int64_t started =
        std::upper_bound(sorted_firsts.begin(), sorted_firsts.end(), first) - sorted_firsts.begin();
    const int64_t ended =
        std::lower_bound(sorted_lasts.begin(), sorted_lasts.end(), first) - sorted_lasts.begin();
    pairs += started - ended - 1;  // not itself
  }
  // Blocks starting at the same step were counted from both sides.
  for (size_t i = 0; i < sorted_firsts.size();) {
    size_t j = i;
    while (j < sorted_firsts.size() && sorted_firsts[j] == sorted_firsts[i]) ++j;
    const int64_t k = static_cast<int64_t>(j - i);
    pairs -= k * (k - 1) / 2;
    i = j;
  }
  return pairs;
}

ArenaSearchResult SearchArena(const ArenaProblem& problem, int64_t capacity,
                              const ArenaPreordering& preordering, int64_t max_nodes,
                              const ArenaLimits& limits) {
  if (CountOverlappingPairs(problem) > kMaxOverlapPairs) {
    return {ArenaSearchOutcome::kAborted, {}, 0};
  }
  CanonicalSearch search(problem, capacity, preordering);
  return search.Run(max_nodes, limits);
}

ArenaSearchResult SearchArenaRoundRobin(const ArenaProblem& problem, int64_t capacity,
                                        int64_t max_nodes, const ArenaLimits& limits) {
  // MiniMalloc's three, led by "TF": the largest step total first and, among
  // those, the earliest start, which builds the layout left to right in time
  // so that a dead end shows up near the decision that caused it. On the
  // benchmark networks it reaches the lower bound where the others thrash
  // (amoeba_cifar: 909 nodes against none within 10^8).
  static constexpr const char* kPreorderings[] = {"TF", "WAT", "TWA", "FT", "TAW"};
  if (CountOverlappingPairs(problem) > kMaxOverlapPairs) {
    return {ArenaSearchOutcome::kAborted, {}, 0};
  }
  int64_t spent = 0;
  int64_t node_limit = std::max<int64_t>(static_cast<int64_t>(problem.blocks.size()), 16);
  while (true) {
    for (const char* preordering : kPreorderings) {
      const int64_t budget = std::min(node_limit, max_nodes - spent);
      if (budget <= 0 || limits.Expired()) return {ArenaSearchOutcome::kAborted, {}, spent};
      ArenaSearchResult result = SearchArena(problem, capacity, preordering, budget, limits);
      spent += result.nodes;
      result.nodes = spent;
      if (result.outcome != ArenaSearchOutcome::kAborted) return result;
    }
    node_limit *= 2;
  }
}

}  // namespace ordo
