#ifndef ORDO_CORE_ONNX_EINSUM_SHAPE_H_
#define ORDO_CORE_ONNX_EINSUM_SHAPE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ordo::onnx_import {

// The output dims of ONNX Einsum for static input dims. ONNX before 1.14
// infers only the output's rank, so an attention block written as Einsum
// (torchvision MaxViT: "BGHID,BGHJD->BGHIJ") left every later shape unknown.
// Follows the operator's definition: one letter a dim (spaces ignored), an
// ellipsis for the broadcast leading dims, a letter's size taken from any
// input where it is not 1 (broadcasting), and without "->" the output is the
// letters used exactly once, in alphabetical order, after the ellipsis.
// std::nullopt when the equation does not parse or does not match the
// inputs' ranks, or sizes of one letter disagree. O(equation + ranks).
std::optional<std::vector<int64_t>> EinsumOutputDims(
    absl::string_view equation, absl::Span<const std::vector<int64_t>> inputs);

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_EINSUM_SHAPE_H_
