#ifndef ORDO_CORE_REWRITE_SPATIAL_TILING_H_
#define ORDO_CORE_REWRITE_SPATIAL_TILING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/graph/graph.h"
#include "onnx/onnx_pb.h"

namespace ordo {

// Dataflow restructuring (spatial tiling, halos recomputed or cached): a
// convex region of ops runs as parts_h x parts_w tiles over the height
// (axis 2) and width (axis 3) of its NCHW tensors, so that only one tile of
// each intermediate tensor is live at a time (plus, with cached halos, the
// rows later tiles still read).
//
// Algorithm:
// 1. Each region output is cut into parts_h x parts_w balanced tiles (sizes
//    differ by at most one row / column).
// 2. Needed ranges propagate backwards through the region in reverse
//    topological order, per tile and per axis: sliding windows (Conv,
//    pooling) widen them by their receptive field (Window::InputRange, the
//    halo), element-wise ops, BatchNormalization and channel Concat keep
//    them, operands broadcast along H / W (SE scales, weights) are read
//    whole. A tensor read by several region ops is computed over the hull of
//    their needs; a reader needing less reads it through a Slice.
// 3. Each tile clones the region's ops over its ranges: Slices cut region
//    inputs (opset-13 Slice, int64 initializers), windows get explicit pads
//    (a tile edge on the tensor's border keeps the original pad, an interior
//    edge pads only where the original window hung over the border), and
//    per region output the tiles are concatenated over W within a row of
//    tiles, then over H, into a tensor named as the original.
//
// Halos are recomputed (HaloMode::kRecompute), so tiles overlap in work
// (extra MACs), never in results: the rewritten model computes the same
// values. The region's weights are shared by all tiles (no data copied).
//
// HaloMode::kCache (MOTES §4.4, Figure 7 (d); over H only, parts_w must be 1)
// computes every region-produced tensor exactly once over a partition of its
// rows instead: tiles run top to bottom and tile k computes only the rows of
// a tensor that no earlier tile computed (its frontier moves down as far as
// tile k's readers need). An op reading rows that earlier tiles computed (the
// halo of a window, or rows an element-wise partner computed earlier) reads
// Concat over H of Slices of those tiles' pieces and its own; an op with no
// new rows in a tile is not emitted there, and a halo may span several
// earlier tiles. No extra MACs (only Slice / Concat ops, which the cost model
// counts as launches), at the cost of the halo rows staying live from the tile
// that computed them to the next tile that reads them. Caching does not
// always give the lower peak: where paths with different numbers of windows
// meet (MOTES Figure 7 (f); a RandWire stage), the frontiers of a tensor's
// readers drift apart and every row between them stays live across tiles,
// often more than recomputation keeps; callers measure both.
//
// Complexity: O(tiles x (region ops + edges) + model nodes log model nodes);
// no recursion. Stateless; thread-safe.

// How rows (and columns) needed by more than one tile are obtained.
enum class HaloMode : int8_t {
  kRecompute,  // every tile computes its whole receptive field (extra MACs)
  kCache,      // each row computed once and read by later tiles (no extra
               // MACs; tiles over H only)
};

// "recompute" / "cache".
absl::string_view HaloModeName(HaloMode mode);

struct SpatialTiling {
  std::vector<std::string> ops;  // node names of the region (Graph op names;
                                 // see NameNodesAsGraph in rewrite.cc)
  int32_t parts_h = 1;           // slices over H
  int32_t parts_w = 1;           // slices over W
  HaloMode halo = HaloMode::kRecompute;
  // Optional: the first row of each slice over H, ascending from 0, instead
  // of balanced slices (then parts_h must be its size); every region output
  // must have more rows than the last start. For runs whose tiles are not
  // balanced (patch_fusion's cached-layer runs, in tests).
  std::vector<int64_t> row_starts = {};
};

// OK when ApplySpatialTiling would succeed; UNIMPLEMENTED naming the op that
// cannot be tiled (unknown kind, an op reducing H/W such as
// GlobalAveragePool/Flatten/Gemm, a Concat not on axis 1, a Pad/Slice/Resize
// touching H/W, a tile whose window reads no input row); INVALID_ARGUMENT for a
// region that is empty, unknown names, not convex (a path leaves and
// re-enters), parts < 1, more parts than rows / columns of a region output,
// or HaloMode::kCache with parts_w > 1. Duplicate names are ignored.
absl::Status CheckSpatialTiling(const Graph& graph, const SpatialTiling& tiling);

// MACs (core/rewrite/cost_model.h) of the tiled region minus the original
// region's: the halo rows and columns recomputed by more than one tile, less
// rows no reader needs (tiles skip those; so HaloMode::kCache and a single
// tile give <= 0). Exact (the tiled ops' MACs are proportional to their
// output elements), from the planned boxes, without building the model.
// Errors as CheckSpatialTiling. O(tiles x (region ops + edges)).
absl::StatusOr<int64_t> SpatialTilingExtraMacs(const Graph& graph, const SpatialTiling& tiling);

// The rewritten model: per region input a Slice per tile (with the halo the
// tile needs; inputs whose H and W are 1 are broadcast and read whole), per
// tile a clone of each region op with pads adjusted (border tiles keep the
// original border pads, interior edges get 0), per region output a Concat of
// its tiles (over W within a row of tiles, then over H), named as the original
// output so consumers outside are untouched (kCache: per region-produced
// tensor one piece per tile that computes new rows of it, windows reading a
// Concat over H of Slices of earlier pieces and their own, and per region
// output a Concat over H of its pieces). Tiles are emitted tile-major
// (all ops of tile 0, then tile 1, ...) in place of the region, so a sorted
// file stays sorted. New tensors get value_info; value_info of the region's
// internal tensors is dropped.
//
// `graph` is ImportOnnx(model), or ImportOnnx of an earlier version of it
// that other rewrites kept the region's node names in (nodes are found by
// source index, else by name). Errors as CheckSpatialTiling, and
// INVALID_ARGUMENT when graph and model disagree. The result is a new model;
// `model` is not changed.
absl::StatusOr<onnx::ModelProto> ApplySpatialTiling(const onnx::ModelProto& model,
                                                    const Graph& graph,
                                                    const SpatialTiling& tiling);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_SPATIAL_TILING_H_
