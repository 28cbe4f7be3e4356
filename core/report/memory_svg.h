#ifndef ORDO_CORE_REPORT_MEMORY_SVG_H_
#define ORDO_CORE_REPORT_MEMORY_SVG_H_

#include <cstdint>
#include <string>

#include "core/arena/arena_plan.h"
#include "core/graph/graph.h"
#include "core/memory/simulator.h"

namespace ordo {

struct MemorySvgOptions {
  // Shown on top; empty: "<graph name>: memory profile".
  std::string title;
  // Device memory, drawn as a horizontal line; 0: none.
  int64_t memory_limit_bytes = 0;
  // Picture width in pixels (>= 400).
  int32_t width_px = 960;
};

// A self-contained SVG picture of one compile (TFLite Micro's
// PrintMemoryPlan, drawn): on top, the footprint at every step for the model
// order and for ordo's schedule as two step lines on a byte axis, each peak
// marked and labelled, and the memory limit as a dashed line; below, ordo's
// arena: one rectangle per tensor spanning its live steps (x) and its bytes
// (y = offset .. offset + size), coloured by the op type that produced it
// (graph inputs apart), with a legend and a tooltip (<title>) per tensor; the
// arena's lower bound is a dashed line. `schedule` is the simulation `arena`
// was planned for; both simulations are of `graph`'s model with the same
// number of steps. Pure: returns the text, writes nothing. O(tensors + steps).
std::string MemoryProfileSvg(const Graph& graph, const SimulationResult& model_order,
                             const SimulationResult& schedule, const ArenaPlan& arena,
                             const MemorySvgOptions& options = {});

// "512 B", "1.5 KiB", "6.12 MiB": the byte labels of the picture.
std::string FormatBytes(int64_t bytes);

}  // namespace ordo

#endif  // ORDO_CORE_REPORT_MEMORY_SVG_H_
