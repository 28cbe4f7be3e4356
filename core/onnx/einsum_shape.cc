#include "core/onnx/einsum_shape.h"

#include <algorithm>
#include <array>
#include <string>

#include "absl/strings/str_split.h"

namespace ordo::onnx_import {
namespace {

constexpr int kLetters = 52;  // a-z, A-Z

int LetterIndex(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

// One side of the equation: its letters (by index) and where the ellipsis
// stands among them (-1 when there is none).
struct Term {
  std::vector<int> letters;
  int ellipsis_at = -1;
};

std::optional<Term> ParseTerm(absl::string_view text) {
  Term term;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (term.ellipsis_at >= 0 || text.substr(i, 3) != "...") return std::nullopt;
      term.ellipsis_at = static_cast<int>(term.letters.size());
      i += 2;
      continue;
    }
    const int letter = LetterIndex(c);
    if (letter < 0) return std::nullopt;
    term.letters.push_back(letter);
  }
  return term;
}

// Broadcasts `size` into `into` (kUnset = not seen yet); false on a clash.
constexpr int64_t kUnset = -1;
bool Unify(int64_t size, int64_t& into) {
  if (into == kUnset || into == 1) {
    into = size;
    return true;
  }
  return size == 1 || size == into;
}

}  // namespace

std::optional<std::vector<int64_t>> EinsumOutputDims(
    absl::string_view equation, absl::Span<const std::vector<int64_t>> inputs) {
  const size_t arrow = equation.find("->");
  const absl::string_view lhs = equation.substr(0, arrow);
  std::vector<Term> terms;
  for (absl::string_view text : absl::StrSplit(lhs, ',')) {
    std::optional<Term> term = ParseTerm(text);
    if (!term) return std::nullopt;
    terms.push_back(std::move(*term));
  }
  if (terms.size() != inputs.size()) return std::nullopt;

  std::array<int64_t, kLetters> size;
  size.fill(kUnset);
  std::array<int, kLetters> uses{};
  std::vector<int64_t> ellipsis;  // broadcast dims, aligned at the right
  for (size_t t = 0; t < terms.size(); ++t) {
    const Term& term = terms[t];
    const std::vector<int64_t>& dims = inputs[t];
    const int64_t named = static_cast<int64_t>(term.letters.size());
    const int64_t rank = static_cast<int64_t>(dims.size());
    if (term.ellipsis_at < 0 ? rank != named : rank < named) return std::nullopt;
    const int64_t spread = rank - named;  // dims the ellipsis stands for
    if (spread > static_cast<int64_t>(ellipsis.size())) {
      ellipsis.insert(ellipsis.begin(), spread - ellipsis.size(), kUnset);
    }
    for (int64_t k = 0; k < named; ++k) {
      const int letter = term.letters[k];
      const int64_t dim_index = k < term.ellipsis_at || term.ellipsis_at < 0 ? k : k + spread;
      if (!Unify(dims[dim_index], size[letter])) return std::nullopt;
      ++uses[letter];
    }
    for (int64_t k = 0; k < spread; ++k) {
      int64_t& into = ellipsis[ellipsis.size() - spread + k];
      if (!Unify(dims[term.ellipsis_at + k], into)) return std::nullopt;
    }
  }

  Term output;
  if (arrow != absl::string_view::npos) {
    std::optional<Term> parsed = ParseTerm(equation.substr(arrow + 2));
    if (!parsed) return std::nullopt;
    output = std::move(*parsed);
    for (int letter : output.letters) {
      if (size[letter] == kUnset) return std::nullopt;  // not in any input
    }
  } else {
    output.ellipsis_at = ellipsis.empty() ? -1 : 0;
    for (int letter = 0; letter < kLetters; ++letter) {
      if (uses[letter] == 1) output.letters.push_back(letter);
    }
    // Alphabetical is ASCII order: upper case before lower case.
    std::stable_sort(output.letters.begin(), output.letters.end(),
                     [](int a, int b) { return (a >= 26) > (b >= 26); });
  }
  std::vector<int64_t> out;
  for (size_t k = 0; k <= output.letters.size(); ++k) {
    if (static_cast<int>(k) == output.ellipsis_at) {
      for (int64_t dim : ellipsis) out.push_back(dim == kUnset ? 1 : dim);
    }
    if (k < output.letters.size()) out.push_back(size[output.letters[k]]);
  }
  return out;
}

}  // namespace ordo::onnx_import
