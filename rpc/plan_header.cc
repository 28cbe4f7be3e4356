#include "rpc/plan_header.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace ordo::rpc {
namespace {

// `text` as a C string literal. Octal escapes take at most three digits, so
// a digit after one cannot extend it (as it would a hex escape); '?' is
// escaped against trigraphs.
std::string CString(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\' || c == '?') {
      absl::StrAppend(&out, "\\", std::string(1, c));
    } else if (byte < 0x20 || byte >= 0x7f) {
      absl::StrAppend(&out, "\\", std::string(1, static_cast<char>('0' + (byte >> 6))),
                      std::string(1, static_cast<char>('0' + ((byte >> 3) & 7))),
                      std::string(1, static_cast<char>('0' + (byte & 7))));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A tensor or op name as a literal C89 compilers take: they may refuse a
// string of more than 509 characters (C99: 4,095), so a longer name is cut
// and marked. The table's order, not the name, ties an entry to the plan.
std::string NameLiteral(const std::string& name) {
  constexpr size_t kLongest = 500;
  constexpr absl::string_view kCut = "...(cut)";
  if (name.size() <= kLongest) return CString(name);
  return CString(absl::StrCat(name.substr(0, kLongest - kCut.size()), kCut));
}

// Text for a /* */ comment: no "*/" can end it early, and no "/*" in it
// (gcc and clang warn of one, -Wcomment in -Wall).
std::string CommentText(std::string text) {
  for (const char* mark : {"*/", "/*"}) {
    for (size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at)) {
      text[at + 1] = '_';
    }
  }
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return text;
}

struct Pool {
  std::string name;
  std::string macro;  // ORDO_POOL_<NAME>
  int64_t used_bytes = 0;
  int64_t capacity_bytes = 0;  // 0: none given
};

// The pools in the device's order (or the one arena), with unique macros.
std::vector<Pool> PoolsOf(const v1::CompileResponse& response) {
  std::vector<Pool> pools;
  if (response.has_placement()) {
    for (const v1::PoolUsageReport& pool : response.placement().pools()) {
      pools.push_back({pool.name(), "", pool.used_bytes(), pool.capacity_bytes()});
    }
  } else {
    const int64_t limit = response.device().memory_capacity_bytes();
    pools.push_back({"arena", "", response.arena().arena_bytes(), limit});
  }
  // ORDO_POOL_X and ORDO_POOL_X_BYTES must not meet another pool's, nor
  // the header's own ORDO_POOL_COUNT (a pool named "count"). An index added
  // can meet a name too ("b_2", "b", "B"), hence the loop.
  absl::flat_hash_set<std::string> taken = {"ORDO_POOL_COUNT"};
  const auto is_free = [&taken](const std::string& macro) {
    return !taken.contains(macro) && !taken.contains(macro + "_BYTES");
  };
  for (size_t i = 0; i < pools.size(); ++i) {
    std::string macro = "ORDO_POOL_";
    for (const char c : pools[i].name) {
      macro += std::isalnum(static_cast<unsigned char>(c)) != 0
                   ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
                   : '_';
    }
    if (!is_free(macro)) {
      const std::string indexed = absl::StrCat(macro, "_", i);
      macro = indexed;
      for (int n = 2; !is_free(macro); ++n) macro = absl::StrCat(indexed, "_", n);
    }
    taken.insert(macro);
    taken.insert(macro + "_BYTES");
    pools[i].macro = std::move(macro);
  }
  return pools;
}

// Whether the plan fits the device, and why not: the compile's verdict
// (CompileResponse.fits, with pools the placement's and the peak within any
// memory limit) and, in one arena, the arena within the limit (alignment
// and fragmentation can take it past a peak that fits).
std::pair<bool, std::string> Fits(const v1::CompileResponse& response) {
  const int64_t limit = response.device().memory_capacity_bytes();
  if (response.has_placement() && !response.placement().fits()) {
    return {false, response.placement().overflow()};
  }
  if (response.has_fits() && !response.fits()) {
    return {false, absl::StrCat("the peak takes ", response.peak_bytes(), " bytes of the ", limit,
                                " the device has")};
  }
  if (!response.has_placement() && limit > 0 && response.arena().arena_bytes() > limit) {
    return {false, absl::StrCat("the arena takes ", response.arena().arena_bytes(),
                                " bytes of the ", limit, " the device has")};
  }
  return {true, ""};
}

// The comment that says how to use the header, and what is not in it.
std::string Preamble(const v1::CompileResponse& response, const std::string& model_path) {
  const std::string model = absl::StrCat("model \"", CommentText(response.model_name()), "\"");
  std::string out = absl::StrCat(
      "/* Memory plan of ",
      model_path.empty() ? model : absl::StrCat(CommentText(model_path), " (", model, ")"),
      ", written by ordo.\n"
      " * Generated: do not edit; compile the model again instead.\n"
      " *\n"
      " * Run the ops in the order of ordo_schedule[]. Define one buffer per pool,\n"
      " * ORDO_POOL_<NAME>_BYTES long and aligned to ORDO_ALIGNMENT, in that memory\n"
      " * bank (none for a pool of 0 bytes: nothing is placed there); tensor\n"
      " * ordo_tensors[i] lives at its pool's buffer + offset, for bytes (its\n"
      " * aligned size). Tensors live at once never overlap in a pool; two that\n"
      " * share a block are an in-place pair (the op writes its output over its\n"
      " * input).\n");
  if (response.io_outside_arena()) {
    absl::StrAppend(&out,
                    " * The model's inputs and outputs are not in ordo_tensors[]: they live in\n"
                    " * buffers of their own (io_outside_arena).\n");
  }
  if (response.rewrites_size() > 0) {
    absl::StrAppend(&out,
                    " * The ops and tensors are the rewritten model's (ordo's rewritten ONNX\n"
                    " * model), not the file's.\n");
  }
  return out + " */\n";
}

// ORDO_PLAN_FITS, and the #error that stops a build of a plan that cannot run.
std::string FitChecks(const v1::CompileResponse& response) {
  const auto [fits, why_not] = Fits(response);
  std::string out = absl::StrCat("#define ORDO_PLAN_FITS ", fits ? 1 : 0, "\n");
  if (!fits) {
    absl::StrAppend(&out, "#ifndef ORDO_PLAN_ALLOW_UNFIT\n#error ",
                    CString(absl::StrCat("ordo: this plan does not fit the device: ", why_not)),
                    "\n#endif\n");
  }
  // Arena planner "none": no offsets to run from, whatever the limit.
  if (!response.has_arena()) {
    absl::StrAppend(&out, "#error ",
                    CString("ordo: the compile planned no arena (arena planner \"none\"); "
                            "compile with an arena planner"),
                    "\n");
  }
  return out;
}

std::string PoolMacros(const std::vector<Pool>& pools) {
  std::string out = absl::StrCat("\n#define ORDO_POOL_COUNT ", pools.size(), "\n");
  for (size_t i = 0; i < pools.size(); ++i) {
    absl::StrAppend(&out, "/* pool ", CommentText(CString(pools[i].name)),
                    pools[i].capacity_bytes > 0
                        ? absl::StrCat(": ", pools[i].capacity_bytes, " bytes in the device")
                        : std::string(),
                    pools[i].used_bytes == 0 ? "; nothing placed here" : "", " */\n#define ",
                    pools[i].macro, " ", i, "\n#define ", pools[i].macro, "_BYTES ",
                    pools[i].used_bytes, "\n");
  }
  return out;
}

std::string TensorTable(const v1::ArenaPlan& arena, const std::vector<Pool>& pools) {
  absl::flat_hash_map<std::string, size_t> pool_index;
  for (size_t i = 0; i < pools.size(); ++i) pool_index[pools[i].name] = i;
  int64_t largest = 0;
  for (const v1::TensorPlacement& t : arena.tensors()) {
    largest = std::max(largest, t.offset_bytes() + t.size_bytes());
  }
  const char* type = largest <= std::numeric_limits<uint32_t>::max() ? "uint32_t" : "uint64_t";
  std::string out = absl::StrCat("\ntypedef struct {\n  const char* name;\n  uint32_t pool;\n  ",
                                 type, " offset;\n  ", type, " bytes;\n} ordo_tensor_plan_t;\n\n",
                                 "#define ORDO_TENSOR_COUNT ", arena.tensors_size(), "\n",
                                 "static const ordo_tensor_plan_t ordo_tensors[",
                                 std::max(1, arena.tensors_size()), "] = {\n");
  for (const v1::TensorPlacement& t : arena.tensors()) {
    const auto pool = pool_index.find(t.pool().empty() ? pools[0].name : t.pool());
    const std::string& macro =
        pool != pool_index.end() ? pools[pool->second].macro : pools[0].macro;
    absl::StrAppend(&out, "    {", NameLiteral(t.tensor()), ", ", macro, ", ", t.offset_bytes(),
                    "u, ", t.size_bytes(), "u},\n");
  }
  // C has no empty initializer list (before C23): a placeholder, the
  // count says 0.
  if (arena.tensors_size() == 0) absl::StrAppend(&out, "    {0, 0, 0, 0},\n");
  return out + "};\n";
}

std::string Schedule(const v1::CompileResponse& response) {
  std::string out = absl::StrCat("\n#define ORDO_SCHEDULE_LENGTH ", response.schedule_size(), "\n",
                                 "static const char* const ordo_schedule[",
                                 std::max(1, response.schedule_size()), "] = {\n");
  for (const std::string& op : response.schedule()) {
    absl::StrAppend(&out, "    ", NameLiteral(op), ",\n");
  }
  if (response.schedule_size() == 0) absl::StrAppend(&out, "    0,\n");
  return out + "};\n";
}

}  // namespace

std::string PlanHeader(const v1::CompileResponse& response, const std::string& model_path) {
  const std::vector<Pool> pools = PoolsOf(response);
  return absl::StrCat(Preamble(response, model_path),
                      "#ifndef ORDO_PLAN_H_\n#define ORDO_PLAN_H_\n\n#include <stdint.h>\n\n",
                      "#define ORDO_ALIGNMENT ", response.arena().alignment_bytes(), "\n",
                      "#define ORDO_PEAK_BYTES ", response.peak_bytes(), "\n", FitChecks(response),
                      PoolMacros(pools), TensorTable(response.arena(), pools), Schedule(response),
                      "\n#endif  /* ORDO_PLAN_H_ */\n");
}

}  // namespace ordo::rpc
