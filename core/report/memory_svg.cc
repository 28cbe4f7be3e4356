#include "core/report/memory_svg.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "core/util/printable_text.h"

namespace ordo {
namespace {

constexpr int kLeft = 96;
constexpr int kRight = 24;
constexpr int kTop = 56;
constexpr int kChartHeight = 240;
constexpr int kGap = 84;
constexpr int kLegendRowHeight = 20;
constexpr int kLegendItemWidth = 170;
constexpr absl::string_view kModelOrderColor = "#8c8c8c";
constexpr absl::string_view kScheduleColor = "#1f5fbf";
constexpr absl::string_view kLimitColor = "#d62728";
constexpr absl::string_view kGraphInput = "graph input";

// Tableau 10: distinct at a glance; op types beyond it get generated hues.
constexpr std::array<absl::string_view, 10> kPalette = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                        "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                                        "#9c755f", "#bab0ac"};

std::string Color(size_t index) {
  if (index < kPalette.size()) return std::string(kPalette[index]);
  // Golden-angle hue steps keep neighbours apart.
  const int hue = static_cast<int>((index * 137.508)) % 360;
  return absl::StrFormat("hsl(%d,55%%,60%%)", hue);
}

// XML text: names from a model may hold control bytes or invalid UTF-8,
// which no XML document may (rsvg-convert refused the picture), so they
// are written as PrintableText's escapes first.
std::string Escape(absl::string_view raw) {
  const std::string text = PrintableText(raw, std::string::npos);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The axis step: a round number of bytes (1, 2, 2.5, 5 x 10^k of a binary
// unit) giving about four ticks.
int64_t TickStep(int64_t max_bytes) {
  const double raw = std::max<double>(static_cast<double>(max_bytes) / 4, 1);
  double unit = 1;
  while (raw >= unit * 1024) unit *= 1024;
  static constexpr double kNice[] = {1, 2, 2.5, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000};
  for (double nice : kNice) {
    if (nice * unit >= raw) return std::max<int64_t>(1, std::llround(nice * unit));
  }
  return std::llround(1024 * unit);
}

// A chart's plot area: slots along x (slot 0 is "before step 0", slot s + 1
// is step s) and bytes along y, 0 at the bottom.
struct Plot {
  double x0, y0, width, height;
  int32_t slots;
  int64_t max_bytes;

  double X(double slot) const { return x0 + width * slot / slots; }
  double Y(double bytes) const { return y0 + height - height * bytes / max_bytes; }
};

Plot MakePlot(double y0, int32_t width_px, int32_t steps, int64_t max_bytes) {
  const int64_t step = TickStep(max_bytes);
  const int64_t top = std::max<int64_t>(step, (max_bytes + step - 1) / step * step);
  return {kLeft, y0, static_cast<double>(width_px - kLeft - kRight), kChartHeight, steps + 1, top};
}

void Axes(const Plot& plot, absl::string_view caption, std::string& out) {
  absl::StrAppendFormat(&out,
                        "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                        "fill=\"none\" stroke=\"#444\"/>\n",
                        plot.x0, plot.y0, plot.width, plot.height);
  absl::StrAppendFormat(&out,
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" "
                        "font-weight=\"bold\">%s</text>\n",
                        plot.x0, plot.y0 - 10, Escape(caption));
  const int64_t step = TickStep(plot.max_bytes);
  for (int64_t bytes = 0; bytes <= plot.max_bytes; bytes += step) {
    const double y = plot.Y(bytes);
    absl::StrAppendFormat(&out,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                          "stroke=\"#ddd\"/>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                          "text-anchor=\"end\">%s</text>\n",
                          plot.x0, y, plot.x0 + plot.width, y, plot.x0 - 6, y + 4,
                          FormatBytes(bytes));
  }
  // About ten step labels; slot 0 is labelled "in" (before step 0).
  const int32_t steps = plot.slots - 1;
  int32_t every = 1;
  for (int32_t scale = 1; steps / every > 10; scale *= 10) {
    for (int32_t nice : {1, 2, 5, 10}) {
      every = nice * scale;
      if (steps / every <= 10) break;
    }
  }
  for (int32_t s = -1; s < steps; ++s) {
    if (s != -1 && s % every != 0) continue;
    absl::StrAppendFormat(&out,
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                          "text-anchor=\"middle\">%s</text>\n",
                          plot.X(s + 1.5), plot.y0 + plot.height + 14,
                          s == -1 ? "in" : absl::StrCat(s));
  }
  absl::StrAppendFormat(&out,
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                        "text-anchor=\"middle\">step</text>\n",
                        plot.x0 + plot.width / 2, plot.y0 + plot.height + 30);
}

// The footprint as a step line: flat across each step's slot.
void FootprintLine(const Plot& plot, const SimulationResult& simulation, absl::string_view color,
                   absl::string_view label, std::string& out) {
  std::string points;
  auto add = [&](int32_t slot, int64_t bytes) {
    absl::StrAppendFormat(&points, "%.1f,%.1f %.1f,%.1f ", plot.X(slot), plot.Y(bytes),
                          plot.X(slot + 1), plot.Y(bytes));
  };
  add(0, simulation.initial_bytes);
  for (size_t s = 0; s < simulation.step_bytes.size(); ++s) {
    add(static_cast<int32_t>(s) + 1, simulation.step_bytes[s]);
  }
  absl::StrAppendFormat(&out,
                        "<polyline class=\"footprint\" fill=\"none\" stroke=\"%s\" "
                        "stroke-width=\"2\" points=\"%s\"><title>%s</title></polyline>\n",
                        color, points, Escape(label));
  const double x = plot.X(simulation.peak_step + 1.5);
  const double y = plot.Y(simulation.peak_bytes);
  absl::StrAppendFormat(&out,
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n"
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\" "
                        "text-anchor=\"middle\">peak %s</text>\n",
                        x, y, color, x, y - 8, color, FormatBytes(simulation.peak_bytes));
}

void LineLegend(double x, double y, absl::string_view color, absl::string_view text,
                std::string& out) {
  absl::StrAppendFormat(&out,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                        "stroke-width=\"2\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
                        "font-size=\"11\">%s</text>\n",
                        x, y, x + 24, y, color, x + 30, y + 4, Escape(text));
}

void HorizontalMark(const Plot& plot, int64_t bytes, absl::string_view color,
                    absl::string_view text, std::string& out) {
  const double y = plot.Y(bytes);
  absl::StrAppendFormat(&out,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                        "stroke-dasharray=\"6,4\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
                        "font-size=\"11\" fill=\"%s\" text-anchor=\"end\">%s</text>\n",
                        plot.x0, y, plot.x0 + plot.width, y, color, plot.x0 + plot.width - 4, y - 4,
                        color, Escape(text));
}

void FootprintChart(const Plot& plot, const SimulationResult& model_order,
                    const SimulationResult& schedule, int64_t limit, std::string& out) {
  Axes(plot, "Footprint per step", out);
  if (limit > 0) {
    HorizontalMark(plot, limit, kLimitColor, absl::StrCat("limit ", FormatBytes(limit)), out);
  }
  FootprintLine(plot, model_order, kModelOrderColor, "model order", out);
  FootprintLine(plot, schedule, kScheduleColor, "ordo schedule", out);
  const double y = plot.y0 + plot.height + 48;
  LineLegend(plot.x0, y, kModelOrderColor,
             absl::StrCat("model order (peak ", FormatBytes(model_order.peak_bytes), ")"), out);
  LineLegend(plot.x0 + 260, y, kScheduleColor,
             absl::StrCat("ordo schedule (peak ", FormatBytes(schedule.peak_bytes), ")"), out);
}

std::string OpTypeOf(const Graph& graph, int32_t tensor) {
  const OpId producer = graph.tensor(tensor).producer;
  return producer == kNoId ? std::string(kGraphInput) : graph.op(producer).type;
}

// Op types in legend order (graph input first, then by name) with colours.
std::map<std::string, std::string> OpTypeColors(const Graph& graph, const ArenaPlan& arena) {
  std::vector<std::string> types;
  for (const TensorPlacement& p : arena.tensors) types.push_back(OpTypeOf(graph, p.tensor));
  std::sort(types.begin(), types.end(), [](const std::string& a, const std::string& b) {
    if ((a == kGraphInput) != (b == kGraphInput)) return a == kGraphInput;
    return a < b;
  });
  types.erase(std::unique(types.begin(), types.end()), types.end());
  std::map<std::string, std::string> colors;
  for (size_t i = 0; i < types.size(); ++i) colors[types[i]] = Color(i);
  return colors;
}

void ArenaChart(const Plot& plot, const Graph& graph, const ArenaPlan& arena,
                const std::map<std::string, std::string>& colors, std::string& out) {
  Axes(plot,
       absl::StrCat("Arena (", arena.planner,
                    arena.algorithm.empty() || arena.algorithm == arena.planner
                        ? ""
                        : absl::StrCat(": ", arena.algorithm),
                    "): ", FormatBytes(arena.arena_bytes), ", lower bound ",
                    FormatBytes(arena.lower_bound_bytes)),
       out);
  for (const TensorPlacement& p : arena.tensors) {
    if (p.size == 0) continue;
    const std::string type = OpTypeOf(graph, p.tensor);
    const double x = plot.X(p.first_step + 1);
    const double w = plot.X(p.last_step + 2) - x;
    const double top = plot.Y(p.offset + p.size);
    const double h = std::max(plot.Y(p.offset) - top, 0.5);
    absl::StrAppendFormat(
        &out,
        "<rect class=\"tensor\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
        "fill=\"%s\" stroke=\"#fff\" stroke-width=\"0.5\"><title>%s (%s): %s at offset %d, "
        "steps %d..%d</title></rect>\n",
        x, top, w, h, colors.at(type), Escape(graph.tensor(p.tensor).name), Escape(type),
        FormatBytes(p.size), p.offset, p.first_step, p.last_step);
  }
  HorizontalMark(plot, arena.lower_bound_bytes, "#333", "lower bound", out);
}

// Swatches in rows; returns the height used.
int Legend(double x0, double y0, int32_t width_px, const std::map<std::string, std::string>& colors,
           const std::vector<std::string>& order, std::string& out) {
  const int per_row = std::max(1, (width_px - kLeft - kRight) / kLegendItemWidth);
  int index = 0;
  for (const std::string& type : order) {
    const double x = x0 + (index % per_row) * kLegendItemWidth;
    const int row = index / per_row;
    const double y = y0 + row * kLegendRowHeight;
    absl::StrAppendFormat(
        &out,
        "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
        "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s</text>\n",
        x, y, colors.at(type), x + 18, y + 10, Escape(type));
    ++index;
  }
  return (index + per_row - 1) / per_row * kLegendRowHeight;
}

}  // namespace

std::string FormatBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (std::abs(value) >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return absl::StrCat(bytes, " B");
  std::string number = absl::StrFormat("%.2f", value);
  while (number.back() == '0') number.pop_back();
  if (number.back() == '.') number.pop_back();
  return absl::StrCat(number, " ", kUnits[unit]);
}

std::string MemoryProfileSvg(const Graph& graph, const SimulationResult& model_order,
                             const SimulationResult& schedule, const ArenaPlan& arena,
                             const MemorySvgOptions& options) {
  const int32_t width = std::max(options.width_px, 400);
  const int32_t steps = static_cast<int32_t>(schedule.step_bytes.size());
  const int64_t footprint_max = std::max(
      {model_order.peak_bytes, schedule.peak_bytes, options.memory_limit_bytes, int64_t{1}});
  const Plot footprint = MakePlot(kTop, width, steps, footprint_max);
  const Plot layout = MakePlot(kTop + kChartHeight + kGap + 16, width, steps,
                               std::max<int64_t>(arena.arena_bytes, 1));
  const std::map<std::string, std::string> colors = OpTypeColors(graph, arena);
  std::vector<std::string> order;
  order.reserve(colors.size());
  for (const auto& [type, color] : colors) order.push_back(type);
  std::sort(order.begin(), order.end(), [](const std::string& a, const std::string& b) {
    if ((a == kGraphInput) != (b == kGraphInput)) return a == kGraphInput;
    return a < b;
  });

  std::string body;
  const std::string title =
      options.title.empty() ? absl::StrCat(graph.name(), ": memory profile") : options.title;
  absl::StrAppendFormat(&body,
                        "<text x=\"%d\" y=\"28\" font-size=\"18\" font-weight=\"bold\">%s</text>\n",
                        kLeft, Escape(title));
  FootprintChart(footprint, model_order, schedule, options.memory_limit_bytes, body);
  ArenaChart(layout, graph, arena, colors, body);
  const double legend_y = layout.y0 + layout.height + 44;
  const int legend_height = Legend(kLeft, legend_y, width, colors, order, body);
  const int height = static_cast<int>(legend_y) + legend_height + 16;

  return absl::StrCat(
      absl::StrFormat("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                      "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
                      width, height, width, height),
      "<title>", Escape(title), "</title>\n",
      absl::StrFormat("<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", width, height), body,
      "</svg>\n");
}

}  // namespace ordo
