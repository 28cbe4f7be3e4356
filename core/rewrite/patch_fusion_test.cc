#include "core/rewrite/patch_fusion.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/rewrite/cost_model.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/rewrite/op_semantics.h"
#include "core/rewrite/spatial_tiling.h"
#include "core/schedule/scheduler.h"
#include "core/testing/status_matchers.h"
#include "core/testing/trials.h"
#include "core/util/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::ordo::testing::Trials;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Names(const Graph& graph, const std::vector<OpId>& ops) {
  std::vector<std::string> names;
  names.reserve(ops.size());
  for (OpId op : ops) names.push_back(graph.op(op).name);
  return names;
}

// The gate of a SiLU-like layer of WithSiluForRelu / SiluStem (the Sigmoid
// or HardSigmoid whose output the Mul `id` reads), or kNoId for any other
// layer: read from the graph, not from patch_fusion.cc's composite rules.
OpId GateOf(const Graph& graph, OpId id) {
  const Op& op = graph.op(id);
  if (op.type != "Mul") return kNoId;
  for (TensorId t : op.inputs) {
    const OpId p = graph.tensor(t).producer;
    if (p == kNoId) continue;
    if (graph.op(p).type == "Sigmoid" || graph.op(p).type == "HardSigmoid") return p;
  }
  return kNoId;
}

// MACs of the layer written by `id`: its op's, and its gate's.
int64_t LayerMacs(const Graph& graph, OpId id) {
  const OpId gate = GateOf(graph, id);
  return OpMacs(graph, graph.op(id)) + (gate == kNoId ? 0 : OpMacs(graph, graph.op(gate)));
}

// The activation the layer written by `id` reads: its op's first input, or
// its gate's.
TensorId LayerInput(const Graph& graph, OpId id) {
  const OpId gate = GateOf(graph, id);
  return graph.op(gate == kNoId ? id : gate).inputs[0];
}

// The largest step of the layer written by `id` run unfused, op by op.
int64_t LayerStep(const Graph& graph, const MemoryModel& memory, OpId id) {
  const OpId gate = GateOf(graph, id);
  return std::max(OpStepBytes(memory, id), gate == kNoId ? 0 : OpStepBytes(memory, gate));
}

TEST(PatchFusionTest, ChainsStopWhereATensorIsSharedOrTheOpIsNotALayer) {
  // x -> e -> er -> d -> dr -> p -> Add(p, x): x is read twice, so the chain
  // starts at e; the Add reads two activations, so it is not a layer.
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(InvertedResidualBlock({}).model()));
  const std::vector<std::vector<OpId>> chains = FindFusibleChains(graph);
  ASSERT_EQ(chains.size(), 1);
  EXPECT_THAT(Names(graph, chains[0]), ElementsAre("e_op", "er_op", "d_op", "dr_op", "p_op"));
}

// The window of a layer of RandomWindowChain, read from its attributes.
Window TapWindow(const Graph& graph, OpId id) {
  const Op& op = graph.op(id);
  if (op.type == "Conv") return AnalyzeConv(op, InputDims(graph, op))->window;
  if (op.type == "MaxPool" || op.type == "AveragePool") {
    return *AnalyzePool(op, graph.tensor(op.inputs[0]).dims);
  }
  return Window{{1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false};
}

// Rows (axis 0) or columns (axis 1) of each layer's output that one output
// position of the chain reads, found by walking every kernel tap (an
// independent reading of the ONNX window semantics).
std::vector<std::pair<int64_t, int64_t>> TapBoxes(const Graph& graph, const std::vector<OpId>& ops,
                                                  int32_t axis, int64_t position) {
  std::vector<std::pair<int64_t, int64_t>> boxes(ops.size());
  int64_t lo = position, hi = position + 1;
  for (int32_t l = static_cast<int32_t>(ops.size()) - 1; l >= 0; --l) {
    boxes[l] = {lo, hi};
    const Op& op = graph.op(ops[l]);
    const int64_t in_size = graph.tensor(op.inputs[0]).dims[2 + axis];
    const Window w = TapWindow(graph, ops[l]);
    // The hull of every tap, clamped to the tensor (a tap in the padding
    // reads nothing; one between two in-bounds taps is in the hull).
    int64_t new_lo = INT64_MAX, new_hi = INT64_MIN;
    for (int64_t o = lo; o < hi; ++o) {
      for (int64_t k = 0; k < w.kernel[axis]; ++k) {
        const int64_t i = o * w.strides[axis] - w.pads_begin[axis] + k * w.dilations[axis];
        new_lo = std::min(new_lo, i);
        new_hi = std::max(new_hi, i + 1);
      }
    }
    lo = std::clamp<int64_t>(new_lo, 0, in_size);
    hi = std::clamp<int64_t>(new_hi, 0, in_size);
  }
  return boxes;
}

// Rows (axis 0) or columns (axis 1) of `op`'s output that one output row or
// column of `next` (its reader) reads, by kernel taps.
int64_t Ring(const Graph& graph, OpId op, OpId next, int32_t axis) {
  int64_t most = 0;
  const int64_t size = graph.tensor(graph.op(next).outputs[0]).dims[2 + axis];
  for (int64_t i = 0; i < size; ++i) {
    const auto boxes = TapBoxes(graph, {op, next}, axis, i);
    most = std::max(most, boxes[0].second - boxes[0].first);
  }
  return most;
}

TEST(PatchFusionTest, StageCostsAgreeWithKernelTapsAndWithRowTiling) {
  const int32_t trials = Trials(60);
  for (int32_t trial = 0; trial < trials; ++trial) {
    const int32_t layers = 2 + trial % 5;
    const onnx::ModelProto model = RandomWindowChain(100 + trial, layers, 9 + trial % 8, false).model();
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
    ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
    const std::vector<std::vector<OpId>> chains = FindFusibleChains(graph);
    ASSERT_EQ(chains.size(), 1) << "trial " << trial;
    const std::vector<OpId>& ops = chains[0];
    ASSERT_EQ(ops.size(), static_cast<size_t>(layers));
    const Tensor& out = graph.tensor(graph.op(ops.back()).outputs[0]);

    // kPixel: workspace = per intermediate, the largest row box one output
    // row reads x the columns one column of the next layer reads (its
    // ring) x channels; extra MACs = recomputed rows, which is what tiling
    // the chain into one-row tiles with recomputed halos adds.
    int64_t workspace = 0;
    std::vector<int64_t> rows(ops.size(), 0);
    for (int64_t y = 0; y < out.dims[2]; ++y) {
      const auto boxes = TapBoxes(graph, ops, 0, y);
      for (size_t l = 0; l < ops.size(); ++l) rows[l] = std::max(rows[l], boxes[l].second - boxes[l].first);
    }
    for (size_t l = 0; l + 1 < ops.size(); ++l) {
      workspace += graph.tensor(graph.op(ops[l]).outputs[0]).dims[1] * rows[l] *
                   Ring(graph, ops[l], ops[l + 1], 1);
    }
    ORDO_ASSERT_OK_AND_ASSIGN(StageCost pixel, CostOfStage(graph, memory, ops, StageRun{StageCaching::kPixel, 1}));
    EXPECT_EQ(pixel.workspace_elements, workspace) << "trial " << trial;
    EXPECT_EQ(pixel.workspace_bytes, 4 * workspace);
    SpatialTiling tiling;
    for (OpId op : ops) tiling.ops.push_back(graph.op(op).name);
    tiling.parts_h = static_cast<int32_t>(out.dims[2]);
    ORDO_ASSERT_OK_AND_ASSIGN(int64_t tiled_extra, SpatialTilingExtraMacs(graph, tiling));
    // (One tile is the region unchanged: the tiler then counts nothing.)
    if (out.dims[2] > 1) {
      EXPECT_EQ(pixel.extra_macs, tiled_extra) << "trial " << trial;
    }
    int64_t own = 0;
    for (OpId op : ops) own += OpMacs(graph, graph.op(op));
    EXPECT_EQ(pixel.macs, own + pixel.extra_macs);
    // Bands of B rows: what tiling into tiles of B rows adds.
    for (int32_t band : {2, 4}) {
      if (out.dims[2] % band != 0 || out.dims[2] / band < 2) continue;
      tiling.parts_h = static_cast<int32_t>(out.dims[2] / band);
      ORDO_ASSERT_OK_AND_ASSIGN(int64_t band_extra, SpatialTilingExtraMacs(graph, tiling));
      ORDO_ASSERT_OK_AND_ASSIGN(StageCost banded,
                                CostOfStage(graph, memory, ops, StageRun{StageCaching::kPixel, band}));
      EXPECT_EQ(banded.extra_macs, band_extra) << "trial " << trial << ", band " << band;
      EXPECT_GE(banded.workspace_elements, pixel.workspace_elements);
    }

    // kLineBuffer: nothing recomputed; per intermediate, the rows the next
    // layer's window reads for one output row, over the whole width.
    ORDO_ASSERT_OK_AND_ASSIGN(StageCost line, CostOfStage(graph, memory, ops, StageRun{StageCaching::kLineBuffer, 1}));
    EXPECT_EQ(line.extra_macs, 0);
    EXPECT_EQ(line.macs, own);
    int64_t line_workspace = 0;
    for (size_t l = 0; l + 1 < ops.size(); ++l) {
      const Tensor& t = graph.tensor(graph.op(ops[l]).outputs[0]);
      line_workspace += t.dims[1] * Ring(graph, ops[l], ops[l + 1], 0) * t.dims[3];
    }
    EXPECT_EQ(line.workspace_elements, line_workspace) << "trial " << trial;
  }
}

// The rows of `op`'s input that rows `rows` of its output read, by kernel
// taps, as a set: the hull of every tap of every row, clamped to the tensor
// (as TapBoxes: a ring holds the hull).
std::set<int64_t> TapRows(const Graph& graph, OpId op, const std::set<int64_t>& rows) {
  const Op& o = graph.op(op);
  const int64_t in_size = graph.tensor(o.inputs[0]).dims[2];
  const Window w = TapWindow(graph, op);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (int64_t y : rows) {
    for (int64_t k = 0; k < w.kernel[0]; ++k) {
      const int64_t i = y * w.strides[0] - w.pads_begin[0] + k * w.dilations[0];
      lo = std::min(lo, i);
      hi = std::max(hi, i + 1);
    }
  }
  std::set<int64_t> read;
  for (int64_t r = std::max<int64_t>(lo, 0); r < std::min(hi, in_size); ++r) read.insert(r);
  return read;
}

int64_t SharedRows(const std::set<int64_t>& a, const std::set<int64_t>& b) {
  int64_t shared = 0;
  for (int64_t r : a) shared += b.count(r);
  return shared;
}

// RandomWindowChain(seed, layers, size), its Relus SiLUs when `silu`,
// imported, its memory model and its one chain.
struct ImportedChain {
  Graph graph;
  MemoryModel memory;
  std::vector<OpId> ops;
};

absl::StatusOr<ImportedChain> ImportChain(uint32_t seed, int32_t layers, int64_t size,
                                          bool silu = false) {
  ImportedChain chain;
  onnx::ModelProto model = RandomWindowChain(seed, layers, size, false).model();
  // SiLU for every Relu, the gate (Sigmoid or HardSigmoid) and the operand
  // order varying with the seed.
  if (silu)
    model = WithSiluForRelu(model, seed % 3 == 0 ? "HardSigmoid" : "Sigmoid", seed % 2 == 0);
  ORDO_ASSIGN_OR_RETURN(chain.graph, Import(model));
  ORDO_ASSIGN_OR_RETURN(chain.memory, BuildMemoryModel(chain.graph, MemoryOptions{}));
  std::vector<std::vector<OpId>> chains = FindFusibleChains(chain.graph);
  if (chains.size() != 1) return absl::InternalError(absl::StrCat(chains.size(), " chains"));
  chain.ops = std::move(chains[0]);
  return chain;
}

TEST(PatchFusionTest, CachedLayerRunsAgreeWithARowSetWalk) {
  // An independent walk of a pixel run with a cached layer: per band, the
  // row sets each layer computes (the cached layer only rows no earlier
  // band computed), by kernel taps; MACs = computed rows x the columns any
  // output reads x MACs per element; workspace per intermediate = its worst
  // band: rows read x its reader's column ring, except the cached one, whose
  // rows that the previous or next band also reads are held at full width.
  // With SiLU for Relu, a SiLU layer adds its gate's MACs, and the gate's
  // output over one column of the rows it computes at the worst band.
  const int32_t trials = Trials(60);
  int32_t cheaper = 0;
  int32_t composites = 0;
  for (int32_t trial = 0; trial < 2 * trials; ++trial) {
    const bool silu = trial >= trials;
    const int32_t layers = 2 + trial % 5;
    ORDO_ASSERT_OK_AND_ASSIGN(const ImportedChain chain,
                              ImportChain(400 + trial % trials, layers, 9 + trial % 8, silu));
    const Graph& graph = chain.graph;
    const MemoryModel& memory = chain.memory;
    const std::vector<OpId>& ops = chain.ops;
    const int32_t n = static_cast<int32_t>(ops.size());
    const Tensor& out = graph.tensor(graph.op(ops.back()).outputs[0]);
    std::vector<int64_t> columns(n);  // of each layer's output any output reads
    const auto first_column = TapBoxes(graph, ops, 1, 0);
    const auto last_column = TapBoxes(graph, ops, 1, out.dims[3] - 1);
    for (int32_t l = 0; l < n; ++l) columns[l] = last_column[l].second - first_column[l].first;
    for (int32_t band : {1, 2, 3, 4}) {
      for (int32_t cached = -1; cached + 1 < n; ++cached) {  // -1: plain pixel
        const StageRun run{StageCaching::kPixel, band, cached};
        std::vector<std::vector<std::set<int64_t>>> reads;  // [band][intermediate]
        std::vector<int64_t> computed(n, 0);  // per layer, the most rows a band computes
        std::set<int64_t> done;
        int64_t macs = 0;
        for (int64_t y = 0; y < out.dims[2]; y += band) {
          std::set<int64_t> rows;
          for (int64_t r = y; r < std::min<int64_t>(out.dims[2], y + band); ++r) rows.insert(r);
          std::vector<std::set<int64_t>> read(n - 1);
          for (int32_t l = n - 1; l >= 0; --l) {
            if (l < n - 1) {
              read[l] = rows;
              if (l == cached) {
                std::set<int64_t> fresh;
                for (int64_t r : rows) {
                  if (done.insert(r).second) fresh.insert(r);
                }
                rows = fresh;
              }
            }
            const Op& op = graph.op(ops[l]);
            const Tensor& t = graph.tensor(op.outputs[0]);
            macs += LayerMacs(graph, ops[l]) / (t.dims[2] * t.dims[3]) *
                    static_cast<int64_t>(rows.size()) * columns[l];
            computed[l] = std::max<int64_t>(computed[l], rows.size());
            rows = TapRows(graph, ops[l], rows);
          }
          reads.push_back(std::move(read));
        }
        int64_t workspace = 0;
        for (int32_t l = 0; l + 1 < n; ++l) {
          const int64_t ring = Ring(graph, ops[l], ops[l + 1], 1);
          int64_t most = 0;
          for (size_t b = 0; b < reads.size(); ++b) {
            const int64_t rows = static_cast<int64_t>(reads[b][l].size());
            int64_t cells = rows * ring;
            if (l == cached) {
              std::set<int64_t> others;
              if (b > 0) others.insert(reads[b - 1][l].begin(), reads[b - 1][l].end());
              if (b + 1 < reads.size()) others.insert(reads[b + 1][l].begin(), reads[b + 1][l].end());
              const int64_t kept = SharedRows(reads[b][l], others);
              cells = kept * columns[l] + (rows - kept) * ring;
            }
            most = std::max(most, cells);
          }
          workspace += graph.tensor(graph.op(ops[l]).outputs[0]).dims[1] * most;
        }
        for (int32_t l = 0; l < n; ++l) {
          if (GateOf(graph, ops[l]) == kNoId) continue;
          workspace += graph.tensor(graph.op(ops[l]).outputs[0]).dims[1] * computed[l];
          ++composites;
        }
        const std::string what = absl::StrCat("trial ", trial, ", ", StageRunName(run));
        ORDO_ASSERT_OK_AND_ASSIGN(StageCost cost, CostOfStage(graph, memory, ops, run));
        EXPECT_EQ(cost.macs, macs) << what;
        EXPECT_EQ(cost.workspace_elements, workspace) << what;
        ORDO_ASSERT_OK_AND_ASSIGN(StageCost plain,
                                  CostOfStage(graph, memory, ops, StageRun{StageCaching::kPixel, band}));
        EXPECT_LE(cost.extra_macs, plain.extra_macs) << what;  // caching never recomputes more
        cheaper += cost.extra_macs < plain.extra_macs ? 1 : 0;
      }
    }
  }
  EXPECT_GE(cheaper, 1);  // and somewhere it recomputes less
  EXPECT_GE(composites, 20);  // SiLU layers were met
}

// Whether each output channel of `op` reads one input channel only.
bool ReadsOneChannel(const Graph& graph, OpId id) {
  const Op& op = graph.op(id);
  if (op.type != "Conv") return true;              // pools and Relu
  return graph.tensor(op.inputs[1]).dims[1] == 1;  // W: out x in / group x kH x kW
}

TEST(PatchFusionTest, RecomputedLayerRunsAgreeWithATapWalk) {
  // An independent walk of a pixel run recomputing pointwise layer u: per
  // band, the rows each layer computes by kernel taps; layer u instead
  // computes one pixel per in-bounds tap of every output pixel of u+1 the
  // band computes (enumerated tap by tap); of u only one element (its reader
  // reads one channel per output channel) or one pixel is held, and u's
  // input holds the columns one output column of u+1 reads.
  // With SiLU for Relu, a SiLU layer adds its gate's MACs, and its gate's
  // output over one column of the rows it computes; a SiLU layer is never
  // recomputed nor read by the recomputed layer (refused: run op by op, it
  // would hold more than the one value per tap counted).
  const int32_t trials = Trials(60);
  int32_t runs = 0;
  int32_t smaller = 0;
  int32_t refused_composites = 0;
  for (int32_t trial = 0; trial < 2 * trials; ++trial) {
    const bool silu = trial >= trials;
    const int32_t layers = 2 + trial % 5;
    ORDO_ASSERT_OK_AND_ASSIGN(const ImportedChain chain,
                              ImportChain(700 + trial % trials, layers, 9 + trial % 8, silu));
    const Graph& graph = chain.graph;
    const MemoryModel& memory = chain.memory;
    const std::vector<OpId>& ops = chain.ops;
    const int32_t n = static_cast<int32_t>(ops.size());
    const Tensor& out = graph.tensor(graph.op(ops.back()).outputs[0]);
    const auto first_column = TapBoxes(graph, ops, 1, 0);
    const auto last_column = TapBoxes(graph, ops, 1, out.dims[3] - 1);
    for (int32_t u = 0; u + 1 < n; ++u) {
      const Window uw = TapWindow(graph, ops[u]);
      if (uw.kernel != std::vector<int64_t>{1, 1} || uw.strides != std::vector<int64_t>{1, 1} ||
          uw.pads_begin != std::vector<int64_t>{0, 0} ||
          uw.pads_end != std::vector<int64_t>{0, 0}) {
        continue;  // not pointwise
      }
      if (GateOf(graph, ops[u]) != kNoId || GateOf(graph, ops[u + 1]) != kNoId) {
        const StageRun run{StageCaching::kPixel, 1, -1, u};
        EXPECT_THAT(CostOfStage(graph, memory, ops, run).status(),
                    StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("recomputed_layer")));
        for (const StageRun& listed : StageRuns(graph, ops)) EXPECT_NE(listed.recomputed_layer, u);
        ++refused_composites;
        continue;
      }
      const Window reader = TapWindow(graph, ops[u + 1]);
      const Tensor& t = graph.tensor(graph.op(ops[u]).outputs[0]);
      for (int32_t band : {1, 2, 3, 4}) {
        const StageRun run{StageCaching::kPixel, band, -1, u};
        std::vector<int64_t> most(n, 0);  // worst band's rows read, per intermediate
        std::vector<int64_t> computed(n, 0);  // per layer, the most rows a band computes
        int64_t macs = 0;
        for (int64_t y = 0; y < out.dims[2]; y += band) {
          std::set<int64_t> rows;
          for (int64_t r = y; r < std::min<int64_t>(out.dims[2], y + band); ++r) rows.insert(r);
          std::set<int64_t> reader_rows;
          for (int32_t l = n - 1; l >= 0; --l) {
            if (l < n - 1) most[l] = std::max<int64_t>(most[l], rows.size());
            const Op& op = graph.op(ops[l]);
            const Tensor& o = graph.tensor(op.outputs[0]);
            const int64_t pixel_macs = LayerMacs(graph, ops[l]) / (o.dims[2] * o.dims[3]);
            computed[l] = std::max<int64_t>(computed[l], l == u ? 1 : rows.size());
            if (l == u) {
              int64_t taps = 0;
              for (int64_t ry : reader_rows) {
                for (int64_t rx = first_column[u + 1].first; rx < last_column[u + 1].second; ++rx) {
                  for (int64_t ky = 0; ky < reader.kernel[0]; ++ky) {
                    for (int64_t kx = 0; kx < reader.kernel[1]; ++kx) {
                      const int64_t iy =
                          ry * reader.strides[0] - reader.pads_begin[0] + ky * reader.dilations[0];
                      const int64_t ix =
                          rx * reader.strides[1] - reader.pads_begin[1] + kx * reader.dilations[1];
                      taps += iy >= 0 && iy < t.dims[2] && ix >= 0 && ix < t.dims[3] ? 1 : 0;
                    }
                  }
                }
              }
              macs += pixel_macs * taps;
            } else {
              macs += pixel_macs * static_cast<int64_t>(rows.size()) *
                      (last_column[l].second - first_column[l].first);
            }
            reader_rows = rows;
            rows = TapRows(graph, ops[l], rows);
          }
        }
        int64_t workspace = 0;
        for (int32_t l = 0; l + 1 < n; ++l) {
          const int64_t channels = graph.tensor(graph.op(ops[l]).outputs[0]).dims[1];
          if (l == u) {
            workspace += ReadsOneChannel(graph, ops[u + 1]) ? 1 : channels;
          } else if (l + 1 == u) {
            workspace += channels * most[l] * Ring(graph, ops[u], ops[u + 1], 1);
          } else {
            workspace += channels * most[l] * Ring(graph, ops[l], ops[l + 1], 1);
          }
        }
        for (int32_t l = 0; l < n; ++l) {
          if (GateOf(graph, ops[l]) == kNoId) continue;
          workspace += graph.tensor(graph.op(ops[l]).outputs[0]).dims[1] * computed[l];
        }
        const std::string what = absl::StrCat("trial ", trial, ", ", StageRunName(run));
        ORDO_ASSERT_OK_AND_ASSIGN(StageCost cost, CostOfStage(graph, memory, ops, run));
        EXPECT_EQ(cost.macs, macs) << what;
        EXPECT_EQ(cost.workspace_elements, workspace) << what;
        ORDO_ASSERT_OK_AND_ASSIGN(
            StageCost plain, CostOfStage(graph, memory, ops, StageRun{StageCaching::kPixel, band}));
        smaller += cost.workspace_elements < plain.workspace_elements ? 1 : 0;
        ++runs;
      }
    }
  }
  EXPECT_GE(runs, 40);
  EXPECT_GE(smaller, 1);  // somewhere recomputing holds less
  EXPECT_GE(refused_composites, 4);  // SiLU layers next to u were refused
}

// The first stage of MCUNetV2-VWW (msf_mcunetv2_vww_r80, layers 0-5: conv
// 3x3/2, depthwise 3x3, 1x1 to 8, 1x1 expansion to 48, depthwise 3x3/2, 1x1
// to 16) at 80x80, int8: the stage behind msf-CNN's 26,491 B @ 1.11 with I/O
// counted (docs/rewriting.md, "Against msf-CNN's curves"). Figures worked
// out by hand, row by row and tap by tap.
TEST(PatchFusionTest, VwwFirstStageRecomputingTheExpansion) {
  OnnxTestModel m;
  m.Input("x", {1, 3, 80, 80});
  std::string current = "x";
  struct Spec {
    int64_t out, kernel, stride, group;
  };
  const std::vector<Spec> specs = {{16, 3, 2, 1}, {16, 3, 1, 16}, {8, 1, 1, 1},
                                   {48, 1, 1, 1}, {48, 3, 2, 48}, {16, 1, 1, 1}};
  int64_t channels = 3;
  for (size_t l = 0; l < specs.size(); ++l) {
    const Spec& s = specs[l];
    const std::string name = absl::StrCat("l", l);
    const std::string out = l + 1 == specs.size() ? "y" : name;
    m.Weight(name + "_w", {s.out, channels / s.group, s.kernel, s.kernel}, nullptr);
    onnx::NodeProto& conv = m.Node("Conv", {current, name + "_w"}, {out});
    conv.set_name(name);
    SetIntAttribute(conv, "group", s.group);
    SetIntsAttribute(conv, "kernel_shape", {s.kernel, s.kernel});
    SetIntsAttribute(conv, "strides", {s.stride, s.stride});
    const int64_t pad = s.kernel / 2;
    SetIntsAttribute(conv, "pads", {pad, pad, pad, pad});
    channels = s.out;
    current = out;
  }
  m.Output("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  MemoryOptions options;
  options.activation_element_bytes = 1;
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, options));
  const std::vector<OpId> ops = FindFusibleChains(graph).at(0);
  ASSERT_EQ(ops.size(), 6);
  // Layer by layer the stage costs 2,220,800 MACs.
  auto extra = [&](const StageRun& run) {
    return CostOfStage(graph, memory, ops, run)->extra_macs;
  };
  auto workspace = [&](const StageRun& run) {
    return CostOfStage(graph, memory, ops, run)->workspace_bytes;
  };
  // 1-row bands: rings 5x3x16 + 3x1x16 + 3x1x8 + 3x3x48 + 1x1x48; 97 rows
  // of layer 0 (40 once) and 59 of layers 1-3.
  EXPECT_EQ(workspace({StageCaching::kPixel, 1}), 792);
  EXPECT_EQ(extra({StageCaching::kPixel, 1}), 1'483'520);
  EXPECT_EQ(workspace({StageCaching::kPixel, 2}), 1'272);
  EXPECT_EQ(extra({StageCaching::kPixel, 2}), 702'720);
  // 3-row bands recomputing layer 3: rings 9x3x16 + 7x1x16, layer 2's
  // output 7 rows x layer 4's 3 columns x 8, one element of layer 3, and
  // 3x1x48: 857 B. Layer 3 computes 8 x 48 MACs per in-bounds tap of layer
  // 4: (3 x 20 - 1)^2 taps per channel, 1,336,704 MACs instead of 614,400.
  const StageRun recomputing{StageCaching::kPixel, 3, -1, 3};
  EXPECT_EQ(workspace(recomputing), 857);
  EXPECT_EQ(extra(recomputing), 1'098'624);
  EXPECT_EQ(StageRunName(recomputing), "pixel, 3-row bands, layer 3 recomputed per tap");
  const std::vector<StageRun> runs = StageRuns(graph, ops);
  EXPECT_TRUE(std::any_of(runs.begin(), runs.end(), [&](const StageRun& run) {
    return run.band_rows == 3 && run.recomputed_layer == 3;
  }));
  // Only layers 2, 3 and 5 are pointwise; 5 is the last.
  EXPECT_TRUE(std::none_of(runs.begin(), runs.end(), [](const StageRun& run) {
    return run.recomputed_layer >= 0 && run.recomputed_layer != 2 && run.recomputed_layer != 3;
  }));
}

TEST(PatchFusionTest, RefusesACachedLayerThatCannotBeCached) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(RandomWindowChain(7, 3, 9, false).model()));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  const std::vector<OpId> ops = FindFusibleChains(graph).at(0);
  ASSERT_EQ(ops.size(), 3);
  EXPECT_THAT(CostOfStage(graph, memory, ops, StageRun{StageCaching::kPixel, 1, 2}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cached_layer 2")));
  EXPECT_THAT(CostOfStage(graph, memory, ops, StageRun{StageCaching::kLineBuffer, 1, 0}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cached_layer 0")));
  EXPECT_THAT(CostOfStage(graph, memory, ops, StageRun{StageCaching::kPixel, 0}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("band_rows 0")));
}

TEST(PatchFusionTest, RefusesARecomputedLayerThatCannotBeRecomputed) {
  // e (1x1) -> er (Relu) -> d (3x3 depthwise) -> dr (Relu) -> p (1x1).
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(InvertedResidualBlock({}).model()));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  const std::vector<OpId> ops = FindFusibleChains(graph).at(0);
  ASSERT_EQ(ops.size(), 5);
  ORDO_EXPECT_OK(CostOfStage(graph, memory, ops, StageRun{StageCaching::kPixel, 2, -1, 1}));
  for (const StageRun& run : {StageRun{StageCaching::kPixel, 1, -1, 2},  // 3x3: not pointwise
                              StageRun{StageCaching::kPixel, 1, -1, 4},  // the last
                              StageRun{StageCaching::kPixel, 1, 0, 1},   // with a cached layer
                              StageRun{StageCaching::kLineBuffer, 1, -1, 1}}) {
    EXPECT_THAT(CostOfStage(graph, memory, ops, run),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(absl::StrCat("recomputed_layer ", run.recomputed_layer))))
        << StageRunName(run);
  }
  // The front's runs recompute the pointwise layers e, er and dr only.
  std::set<int32_t> recomputed;
  for (const StageRun& run : StageRuns(graph, ops)) {
    if (run.recomputed_layer >= 0) recomputed.insert(run.recomputed_layer);
  }
  EXPECT_EQ(recomputed, (std::set<int32_t>{0, 1, 3}));
}

// Every way to cut a chain into unfused layers and fused stages (each with
// any of its StageRuns(), recomputed layers included), as (largest piece
// bytes, extra MACs).
std::set<std::pair<int64_t, int64_t>> AllPlans(const Graph& graph, const MemoryModel& memory,
                                               const std::vector<OpId>& ops) {
  std::set<std::pair<int64_t, int64_t>> plans;
  const int32_t n = static_cast<int32_t>(ops.size());
  auto recurse = [&](auto&& self, int32_t first, int64_t peak, int64_t extra) -> void {
    if (first == n) {
      plans.insert({peak, extra});
      return;
    }
    const TensorId in = LayerInput(graph, ops[first]);
    for (int32_t last = first; last < n; ++last) {
      const TensorId out = graph.op(ops[last]).outputs[0];
      const int64_t io = memory.tensors[in].bytes + memory.tensors[out].bytes;
      if (last == first) {
        self(self, last + 1, std::max(peak, LayerStep(graph, memory, ops[first])), extra);
        continue;
      }
      const std::vector<OpId> stage(ops.begin() + first, ops.begin() + last + 1);
      for (const StageRun& run : StageRuns(graph, stage)) {
        const int64_t rows = graph.tensor(graph.op(ops[last]).outputs[0]).dims[2];
        if (run.band_rows > 1 && run.band_rows >= rows) continue;
        const StageCost cost = *CostOfStage(graph, memory, stage, run);
        self(self, last + 1, std::max(peak, io + cost.workspace_bytes), extra + cost.extra_macs);
      }
    }
  };
  recurse(recurse, 0, 0, 0);
  return plans;
}

TEST(PatchFusionTest, FrontIsTheNonDominatedSetOfEveryCut) {
  // The same chains with SiLU for Relu, too: a SiLU layer unfused costs its
  // larger step (the Mul's), fused its gate's output in the workspace.
  const int32_t trials = Trials(40);
  int32_t recomputing_plans = 0;  // fronts that recompute a layer somewhere
  for (int32_t trial = 0; trial < 2 * trials; ++trial) {
    onnx::ModelProto model =
        RandomWindowChain(500 + trial % trials, 2 + trial % 6, 12, false).model();
    if (trial >= trials) model = WithSiluForRelu(model, "Sigmoid", trial % 2 == 0);
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
    MemoryOptions options;
    options.io_outside_arena = trial % 2 == 1;
    ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, options));
    const std::vector<std::vector<OpId>> chains = FindFusibleChains(graph);
    ASSERT_EQ(chains.size(), 1);
    std::vector<std::pair<int64_t, int64_t>> expected;
    for (const auto& plan : AllPlans(graph, memory, chains[0])) {
      // Sorted by peak, then extra: keep a plan when it needs fewer extra
      // MACs than every plan of a lower or equal peak.
      if (expected.empty() || plan.second < expected.back().second) {
        if (!expected.empty() && expected.back().first == plan.first) expected.pop_back();
        expected.push_back(plan);
      }
    }
    ORDO_ASSERT_OK_AND_ASSIGN(std::vector<FusionPlan> front, FusionFront(graph, memory));
    std::vector<std::pair<int64_t, int64_t>> got;
    got.reserve(front.size());
    for (const FusionPlan& plan : front) {
      got.push_back({plan.chain_peak_bytes, plan.extra_macs});
      recomputing_plans +=
          std::any_of(plan.stages.begin(), plan.stages.end(),
                      [](const FusedStage& s) { return s.run.recomputed_layer >= 0; });
    }
    EXPECT_EQ(got, expected) << "trial " << trial;
  }
  // The brute force meets recomputed layers on the front, not only beside it.
  EXPECT_GE(recomputing_plans, 1);
}

// A chain of 150 layers has more stage costs than the front tries: it is
// sampled, still sorted, still ends at a plan with no extra MACs (or fewer:
// a stage skips rows no output reads), and
// still starts at the lowest peak any cut reaches (here: the bottleneck of
// fusing stages of at most 64 layers, which no sample may skip).
TEST(PatchFusionTest, LongChainsGiveABoundedFrontFromTheLowestPeak) {
  const onnx::ModelProto model = RandomWindowChain(77, 150, 64, false).model();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  ASSERT_EQ(FindFusibleChains(graph).size(), 1);
  ORDO_ASSERT_OK_AND_ASSIGN(std::vector<FusionPlan> front, FusionFront(graph, memory));
  ASSERT_GE(front.size(), 2);
  EXPECT_LE(front.size(), 4096);
  for (size_t i = 1; i < front.size(); ++i) {
    EXPECT_LT(front[i - 1].chain_peak_bytes, front[i].chain_peak_bytes);
    EXPECT_GT(front[i - 1].extra_macs, front[i].extra_macs);
  }
  EXPECT_LE(front.back().extra_macs, 0);
  for (const FusedStage& stage : front.front().stages) EXPECT_LE(stage.ops.size(), 64);
  // Nothing lower: every stage's and layer's cost under the lowest plan's
  // peak leaves some op without a piece to run in.
  const int64_t lowest = front.front().chain_peak_bytes;
  const std::vector<OpId> ops = FindFusibleChains(graph)[0];
  std::vector<bool> reachable(ops.size() + 1, false);
  reachable[0] = true;
  for (size_t first = 0; first < ops.size(); ++first) {
    if (!reachable[first]) continue;
    if (OpStepBytes(memory, ops[first]) < lowest) reachable[first + 1] = true;
    for (size_t last = first + 1; last < std::min(ops.size(), first + 64); ++last) {
      const std::vector<OpId> stage(ops.begin() + first, ops.begin() + last + 1);
      const int64_t io = memory.tensors[graph.op(ops[first]).inputs[0]].bytes +
                         memory.tensors[graph.op(ops[last]).outputs[0]].bytes;
      for (const StageRun& run : StageRuns(graph, stage)) {
        const StageCost cost = *CostOfStage(graph, memory, stage, run);
        if (io + cost.workspace_bytes < lowest) reachable[last + 1] = true;
      }
    }
  }
  EXPECT_FALSE(reachable[ops.size()]);
}

// Every plan of the front gives a model whose one order (a chain's)
// simulates to the plan's chain peak, with the plan's MACs, and whose fused
// nodes replace every op of their layers: of a random chain, and of random
// chains with SiLU for Relu (a SiLU's gate is fused away with its Mul).
TEST(PatchFusionTest, FusedModelPassesImportAndSimulatesToThePlannedPeak) {
  std::vector<onnx::ModelProto> models = {RandomWindowChain(7, 6, 16, false).model()};
  for (uint32_t seed : {7u, 8u, 9u, 10u}) {
    models.push_back(
        WithSiluForRelu(RandomWindowChain(seed, 6, 16, false).model(), "Sigmoid", seed % 2 == 0));
  }
  int32_t fused_gates = 0;
  for (const onnx::ModelProto& model : models) {
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
    for (bool io_outside : {false, true}) {
      MemoryOptions options;
      options.io_outside_arena = io_outside;
      ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, options));
      ORDO_ASSERT_OK_AND_ASSIGN(std::vector<FusionPlan> front, FusionFront(graph, memory));
      ASSERT_GE(front.size(), 1);
      for (const FusionPlan& plan : front) {
        ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto fused,
                                  ApplyPatchFusion(model, graph, memory, plan));
        ORDO_ASSERT_OK_AND_ASSIGN(Graph fused_graph, Import(fused));
        ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel fused_memory, BuildMemoryModel(fused_graph, options));
        // A chain has one order: the model's.
        std::vector<OpId> order(fused_graph.num_ops());
        for (OpId i = 0; i < fused_graph.num_ops(); ++i) order[i] = i;
        ORDO_ASSERT_OK_AND_ASSIGN(SimulationResult simulated, Simulate(fused_memory, order));
        EXPECT_EQ(simulated.peak_bytes, plan.chain_peak_bytes);
        EXPECT_EQ(CostOf(fused_graph).macs, CostOf(graph).macs + plan.extra_macs);
        int32_t fused_away = 0;
        for (const FusedStage& stage : plan.stages) {
          for (OpId op : stage.ops) {
            const bool gated = GateOf(graph, op) != kNoId;
            fused_away += gated ? 2 : 1;
            fused_gates += gated ? 1 : 0;
          }
          --fused_away;  // the fused node
        }
        EXPECT_EQ(fused_graph.num_ops(), graph.num_ops() - fused_away);
      }
    }
  }
  EXPECT_GE(fused_gates, 1);
}

TEST(PatchFusionTest, FusedNodeRecordsTheRunAndSimulatesToItsStep) {
  // A runtime executes the stage from the node's attributes: the run must
  // be there, with the MACs and the workspace the run costs.
  const onnx::ModelProto model = RandomWindowChain(11, 5, 16, false).model();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  const std::vector<OpId> ops = FindFusibleChains(graph).at(0);
  ASSERT_EQ(ops.size(), 5);
  const std::vector<StageRun> runs = StageRuns(graph, ops);
  for (const StageRun& run : runs) {
    const std::string what = StageRunName(run);
    ORDO_ASSERT_OK_AND_ASSIGN(StageCost cost, CostOfStage(graph, memory, ops, run));
    const FusionPlan plan{{{ops, run}}, 0, cost.extra_macs};
    ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto fused, ApplyPatchFusion(model, graph, memory, plan));
    ASSERT_EQ(fused.graph().node_size(), 1) << what;
    absl::flat_hash_map<std::string, onnx::AttributeProto> attributes;
    for (const onnx::AttributeProto& a : fused.graph().node(0).attribute()) attributes[a.name()] = a;
    EXPECT_EQ(attributes["caching"].s(), run.caching == StageCaching::kPixel ? "pixel" : "line_buffer")
        << what;
    EXPECT_EQ(attributes["band_rows"].i(), run.band_rows) << what;
    EXPECT_EQ(attributes["cached_layer"].i(), run.cached_layer) << what;
    EXPECT_EQ(attributes["recomputed_layer"].i(), run.recomputed_layer) << what;
    EXPECT_EQ(attributes["macs"].i(), cost.macs) << what;
    ORDO_ASSERT_OK_AND_ASSIGN(Graph fused_graph, Import(fused));
    ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel fused_memory, BuildMemoryModel(fused_graph, MemoryOptions{}));
    ORDO_ASSERT_OK_AND_ASSIGN(SimulationResult simulated, Simulate(fused_memory, {0}));
    const int64_t io = memory.tensors[graph.op(ops.front()).inputs[0]].bytes +
                       memory.tensors[graph.op(ops.back()).outputs[0]].bytes;
    EXPECT_EQ(simulated.peak_bytes, io + cost.workspace_bytes) << what;
  }
  // Runs with a cached layer are among the runs of a short stage, and so are
  // runs recomputing a pointwise layer.
  EXPECT_TRUE(std::any_of(runs.begin(), runs.end(),
                          [](const StageRun& run) { return run.recomputed_layer >= 0; }));
  EXPECT_TRUE(std::any_of(runs.begin(), runs.end(), [](const StageRun& run) { return run.cached_layer == 3; }));
  EXPECT_TRUE(std::none_of(runs.begin(), runs.end(), [](const StageRun& run) { return run.cached_layer >= 4; }));
  const std::vector<StageRun> long_runs = StageRuns(kMaxMixedStageLayers + 1);
  EXPECT_TRUE(std::none_of(long_runs.begin(), long_runs.end(),
                           [](const StageRun& run) { return run.cached_layer >= 0; }));
}

TEST(PatchFusionTest, RefusesStagesThatAreNotOnePieceOfAChain) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(InvertedResidualBlock({}).model()));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  const OpId e = *graph.FindOp("e_op"), d = *graph.FindOp("d_op"), add = *graph.FindOp("y_op");
  const OpId p = *graph.FindOp("p_op");
  EXPECT_THAT(CostOfStage(graph, memory, std::vector<OpId>{e}, StageRun{StageCaching::kPixel, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at least two")));
  EXPECT_THAT(CostOfStage(graph, memory, std::vector<OpId>{e, d}, StageRun{StageCaching::kPixel, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("d_op")));
  EXPECT_THAT(CostOfStage(graph, memory, std::vector<OpId>{p, add}, StageRun{StageCaching::kPixel, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("y_op")));
}

// EfficientNet's stem, Conv -> SiLU -> depthwise Conv -> SiLU, is one chain
// of four layers (each SiLU named by its Mul), whichever operand of the Mul
// is the Sigmoid's output; fused whole, the function's body keeps all six
// ops, and the fused step simulates to input + output + workspace.
TEST(PatchFusionTest, SiluStemIsOneStageInEitherOperandOrder) {
  for (bool gate_first : {false, true}) {
    const std::string what = gate_first ? "Mul(Sigmoid(x), x)" : "Mul(x, Sigmoid(x))";
    const onnx::ModelProto model = SiluStem(gate_first, false).model();
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
    ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
    const std::vector<std::vector<OpId>> chains = FindFusibleChains(graph);
    ASSERT_EQ(chains.size(), 1) << what;
    const std::vector<OpId>& ops = chains[0];
    EXPECT_THAT(Names(graph, ops), ElementsAre("c_op", "ca_op", "d_op", "y_op")) << what;
    EXPECT_EQ(DescribeStage(graph, {ops, StageRun{}}),
              "c_op..y_op (4 layers, 6 ops) fused, line_buffer");

    // Line buffers, per 8-channel 16-wide row: c's ring for its SiLU (1
    // row), the SiLU's for the 3x3 depthwise (3 rows), d's for its SiLU (1
    // row), and one row of each Sigmoid's output: 1 + 3 + 1 + 2 rows. A Relu
    // for each SiLU would hold the first three only.
    ORDO_ASSERT_OK_AND_ASSIGN(StageCost line,
                              CostOfStage(graph, memory, ops, StageRun{StageCaching::kLineBuffer}));
    EXPECT_EQ(line.workspace_elements, (1 + 3 + 1 + 2) * 8 * 16) << what;
    EXPECT_EQ(line.macs, CostOf(graph).macs) << what;  // every op's, the Sigmoids' included
    EXPECT_EQ(line.extra_macs, 0) << what;
    // Pixels, one output row at a time (the middle rows are the worst): c
    // and its SiLU compute 3 rows, a 1-column ring each, the depthwise reads
    // 3 rows x 3 columns, d and its SiLU compute 1 row; the Sigmoids' outputs
    // hold one column of the rows their layer computes (3, then 1).
    ORDO_ASSERT_OK_AND_ASSIGN(StageCost pixel,
                              CostOfStage(graph, memory, ops, StageRun{StageCaching::kPixel, 1}));
    EXPECT_EQ(pixel.workspace_elements, 8 * (3 * 1 + 3 * 3 + 1 * 1) + 8 * (3 + 1)) << what;

    for (const StageRun& run : StageRuns(graph, ops)) {
      ORDO_ASSERT_OK_AND_ASSIGN(StageCost cost, CostOfStage(graph, memory, ops, run));
      const FusionPlan plan{{{ops, run}}, 0, cost.extra_macs};
      ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto fused,
                                ApplyPatchFusion(model, graph, memory, plan));
      ASSERT_EQ(fused.graph().node_size(), 1) << what;
      ASSERT_EQ(fused.functions_size(), 1) << what;
      std::vector<std::string> body;
      for (const onnx::NodeProto& node : fused.functions(0).node()) body.push_back(node.op_type());
      EXPECT_THAT(body, ElementsAre("Conv", "Sigmoid", "Mul", "Conv", "Sigmoid", "Mul", "Constant",
                                    "ConstantOfShape"))
          << what;
      ORDO_ASSERT_OK_AND_ASSIGN(Graph fused_graph, Import(fused));
      ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel fused_memory,
                                BuildMemoryModel(fused_graph, MemoryOptions{}));
      ORDO_ASSERT_OK_AND_ASSIGN(SimulationResult simulated, Simulate(fused_memory, {0}));
      EXPECT_EQ(simulated.peak_bytes, memory.tensors[*graph.FindTensor("x")].bytes +
                                          memory.tensors[*graph.FindTensor("y")].bytes +
                                          cost.workspace_bytes)
          << what << ", " << StageRunName(run);
      EXPECT_EQ(CostOf(fused_graph).macs, CostOf(graph).macs + cost.extra_macs) << what;
    }
  }
}

// 1x1 Conv "c" -> Mish written out, x * Tanh(Softplus(x)) ("sp", "t",
// "mish") -> 3x3 depthwise Conv "d", the output.
OnnxTestModel MishThenDepthwise() {
  OnnxTestModel m;
  m.Input("x", {1, 3, 8, 8});
  m.Weight("wc", {4, 3, 1, 1}, nullptr);
  m.Node("Conv", {"x", "wc"}, {"c"});
  m.Node("Softplus", {"c"}, {"sp"});
  m.Node("Tanh", {"sp"}, {"t"});
  m.Node("Mul", {"c", "t"}, {"mish"});
  m.Weight("wd", {4, 1, 3, 3}, nullptr);
  onnx::NodeProto& dw = m.Node("Conv", {"mish", "wd"}, {"d"});
  SetIntAttribute(dw, "group", 4);
  SetIntsAttribute(dw, "pads", {1, 1, 1, 1});
  m.Output("d");
  return m;
}

// The Mish's "sp" is read by a Shape node the import folds (its value is a
// constant graph output), which the Graph does not show: fusing the chain
// would leave that node reading a tensor no node writes. The emitter
// refuses, and the stage is dropped from the plan.
TEST(PatchFusionTest, AStageHidingATensorAFoldedNodeReadsIsDropped) {
  OnnxTestModel m = MishThenDepthwise();
  const onnx::ModelProto without_shape = m.model();
  m.Node("Shape", {"sp"}, {"sp_shape"});
  m.Output("sp_shape");
  onnx::ModelProto model = m.model();
  model.mutable_graph()->mutable_output(1)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT64);
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  const std::vector<std::vector<OpId>> chains = FindFusibleChains(graph);
  ASSERT_EQ(chains.size(), 1);
  const FusionPlan plan{{{chains[0], StageRun{}}}, 0, 0};
  EXPECT_THAT(ApplyPatchFusion(model, graph, memory, plan),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("reads \"sp\", which a fused stage keeps inside itself")));
  ORDO_ASSERT_OK_AND_ASSIGN(FusionPlan kept, WithoutStagesFoldedNodesRead(model, graph, plan));
  EXPECT_TRUE(kept.stages.empty());
  // Without the Shape node the stage stays.
  ORDO_ASSERT_OK_AND_ASSIGN(FusionPlan all,
                            WithoutStagesFoldedNodesRead(without_shape, graph, plan));
  EXPECT_EQ(all.stages.size(), 1u);
}

// Mish, x * Tanh(Softplus(x)): a composite whose gate is a path of two ops,
// both intermediates held (one row each with line buffers) and both in the
// fused body.
TEST(PatchFusionTest, MishIsACompositeOfThreeOps) {
  OnnxTestModel m = MishThenDepthwise();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  const std::vector<std::vector<OpId>> chains = FindFusibleChains(graph);
  ASSERT_EQ(chains.size(), 1);
  EXPECT_THAT(Names(graph, chains[0]), ElementsAre("c_op", "mish_op", "d_op"));
  EXPECT_EQ(DescribeStage(graph, {chains[0], StageRun{}}),
            "c_op..d_op (3 layers, 5 ops) fused, line_buffer");
  // Rings of 1 row (c, for the Mish) and 3 rows (the Mish's output, for the
  // 3x3 depthwise), and one row of each of sp and t; rows of 8 x 4.
  ORDO_ASSERT_OK_AND_ASSIGN(
      StageCost line, CostOfStage(graph, memory, chains[0], StageRun{StageCaching::kLineBuffer}));
  EXPECT_EQ(line.workspace_elements, (1 + 3 + 2) * 8 * 4);
  ORDO_ASSERT_OK_AND_ASSIGN(
      onnx::ModelProto fused,
      ApplyPatchFusion(m.model(), graph, memory, {{{chains[0], StageRun{}}}, 0, 0}));
  ASSERT_EQ(fused.functions_size(), 1);
  std::vector<std::string> body;
  for (const onnx::NodeProto& node : fused.functions(0).node()) body.push_back(node.op_type());
  EXPECT_THAT(
      body, ElementsAre("Conv", "Softplus", "Tanh", "Mul", "Conv", "Constant", "ConstantOfShape"));
}

// x [1, 3, 8, 8] -> 1x1 Conv "c" (4 channels) -> Mul(c, Sigmoid(`gated`))
// ("cs", "ca") -> depthwise 3x3 "d", an output: a SiLU when `gated` is
// "c"; "z" is a second input [1, 4, 8, 8].
OnnxTestModel GatedConv(const std::string& gated) {
  OnnxTestModel m;
  m.Input("x", {1, 3, 8, 8});
  if (gated == "z") m.Input("z", {1, 4, 8, 8});
  m.Weight("wc", {4, 3, 1, 1}, nullptr);
  m.Node("Conv", {"x", "wc"}, {"c"});
  m.Node("Sigmoid", {gated}, {"cs"});
  m.Node("Mul", {"c", "cs"}, {"ca"});
  m.Weight("wd", {4, 1, 3, 3}, nullptr);
  SetIntAttribute(m.Node("Conv", {"ca", "wd"}, {"d"}), "group", 4);
  m.Output("d");
  return m;
}

TEST(PatchFusionTest, RefusesCompositesReadOutsideOrOfTwoTensors) {
  // The SiLU's Sigmoid output is also read by a Relu "r" (a graph output):
  // the SiLU is no layer.
  OnnxTestModel leaked = GatedConv("c");
  leaked.Node("Relu", {"cs"}, {"r"});
  leaked.Output("r");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(leaked.model()));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  const OpId c = *graph.FindOp("c_op"), ca = *graph.FindOp("ca_op"), d = *graph.FindOp("d_op");
  EXPECT_THAT(CostOfStage(graph, memory, std::vector<OpId>{c, ca, d}, StageRun{}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("op \"ca_op\" cannot be part of a fused stage: tensor \"cs\" of "
                                 "its composite is read outside it, by \"r_op\"")));
  EXPECT_THAT(FindFusibleChains(graph), ::testing::IsEmpty());

  // The Mul gates c by the Sigmoid of another tensor z.
  ORDO_ASSERT_OK_AND_ASSIGN(Graph other, Import(GatedConv("z").model()));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel other_memory, BuildMemoryModel(other, MemoryOptions{}));
  EXPECT_THAT(
      CostOfStage(other, other_memory,
                  std::vector<OpId>{*other.FindOp("c_op"), *other.FindOp("ca_op")}, StageRun{}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("op \"ca_op\" cannot be part of a fused stage: its operands come "
                         "from different tensors \"c\" and \"z\"")));
  EXPECT_THAT(FindFusibleChains(other), ::testing::IsEmpty());

  // The SiLU's x (the stem's c) also read outside the SiLU: the SiLU is a
  // layer, but it does not follow c alone.
  OnnxTestModel x_read = SiluStem(false, false);
  x_read.Node("Relu", {"c"}, {"cr"});
  x_read.Output("cr");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph shared, Import(x_read.model()));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel shared_memory, BuildMemoryModel(shared, MemoryOptions{}));
  EXPECT_THAT(
      CostOfStage(shared, shared_memory,
                  std::vector<OpId>{*shared.FindOp("c_op"), *shared.FindOp("ca_op")}, StageRun{}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("op \"ca_op\" does not follow \"c_op\" alone: tensor \"c\" must "
                         "be read by it only (and its composite)")));
  const std::vector<std::vector<OpId>> chains = FindFusibleChains(shared);
  ASSERT_EQ(chains.size(), 1);
  EXPECT_THAT(Names(shared, chains[0]), ElementsAre("ca_op", "d_op", "y_op"));
}

// An SE block's Mul(h, scale), scale [1, 8, 1, 1] from the block's own
// squeeze, in either order: a layer whose chain input is h and whose side is
// the scale; fused with the projection after it, the fused node reads the
// scale whole and its step is h + scale + output + workspace.
TEST(PatchFusionTest, SqueezeExcitationScaleIsALayerWithABroadcastSide) {
  for (bool scale_first : {false, true}) {
    const std::string what = scale_first ? "Mul(scale, h)" : "Mul(h, scale)";
    const onnx::ModelProto model = SqueezeExcitationBlock(scale_first, false).model();
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
    ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
    std::vector<std::vector<std::string>> chains;
    for (const std::vector<OpId>& chain : FindFusibleChains(graph))
      chains.push_back(Names(graph, chain));
    // h is read by the squeeze too: the chain through the SiLU stops there.
    EXPECT_THAT(chains, ElementsAre(ElementsAre("d_op", "h_op"),
                                    ElementsAre("f1_op", "f1r_op", "f2_op", "sc_op"),
                                    ElementsAre("m_op", "p_op", "y_op")))
        << what;
    const std::vector<OpId> stage = {*graph.FindOp("m_op"), *graph.FindOp("p_op"),
                                     *graph.FindOp("y_op")};
    // Line buffers: one row of m (8 x 8) for p, one of p (4 x 8) for y.
    ORDO_ASSERT_OK_AND_ASSIGN(
        StageCost cost, CostOfStage(graph, memory, stage, StageRun{StageCaching::kLineBuffer}));
    EXPECT_EQ(cost.workspace_elements, 8 * 8 + 4 * 8) << what;
    ORDO_ASSERT_OK_AND_ASSIGN(
        onnx::ModelProto fused,
        ApplyPatchFusion(model, graph, memory, {{{stage, StageRun{}}}, 0, 0}));
    ORDO_ASSERT_OK_AND_ASSIGN(Graph fused_graph, Import(fused));
    ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel fused_memory,
                              BuildMemoryModel(fused_graph, MemoryOptions{}));
    std::vector<OpId> order(fused_graph.num_ops());
    for (OpId i = 0; i < fused_graph.num_ops(); ++i) order[i] = i;
    ORDO_ASSERT_OK_AND_ASSIGN(SimulationResult simulated, Simulate(fused_memory, order));
    const OpId node = *fused_graph.FindOp("m_op_fused");
    ASSERT_THAT(fused_graph.op(node).inputs, ::testing::Contains(*fused_graph.FindTensor("sc")))
        << what;
    auto bytes = [&](const char* name) { return memory.tensors[*graph.FindTensor(name)].bytes; };
    EXPECT_EQ(simulated.step_bytes[node],
              bytes("h") + bytes("sc") + bytes("y") + cost.workspace_bytes)
        << what;
  }
}

// The side of a layer may not be read through its window: region fusion,
// which streams rows through ChainLayerWindow, does not get one for it.
TEST(PatchFusionTest, ChainLayerWindowLeavesBroadcastSidesAndCompositesOut) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(SqueezeExcitationBlock(false, false).model()));
  EXPECT_FALSE(ChainLayerWindow(graph, *graph.FindOp("m_op")).has_value());
  EXPECT_FALSE(ChainLayerWindow(graph, *graph.FindOp("h_op")).has_value());
  EXPECT_TRUE(ChainLayerWindow(graph, *graph.FindOp("p_op")).has_value());
}

}  // namespace
}  // namespace ordo
