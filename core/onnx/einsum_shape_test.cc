#include "core/onnx/einsum_shape.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo::onnx_import {
namespace {

using ::testing::ElementsAre;
using ::testing::Optional;

using Dims = std::vector<std::vector<int64_t>>;

// The examples of the ONNX operator documentation (Einsum).
TEST(EinsumShapeTest, OnnxDocumentationExamples) {
  EXPECT_THAT(EinsumOutputDims("ij->ji", Dims{{3, 4}}), Optional(ElementsAre(4, 3)));
  EXPECT_THAT(EinsumOutputDims("ij->i", Dims{{3, 4}}), Optional(ElementsAre(3)));
  EXPECT_THAT(EinsumOutputDims("bij, bjk -> bik", Dims{{5, 2, 3}, {5, 3, 4}}),
              Optional(ElementsAre(5, 2, 4)));
  EXPECT_THAT(EinsumOutputDims("...ii ->...i", Dims{{3, 5, 5}}), Optional(ElementsAre(3, 5)));
  EXPECT_THAT(EinsumOutputDims("i,i", Dims{{5}, {5}}), Optional(ElementsAre()));
}

// torchvision MaxViT's attention, spaces and upper case as PyTorch writes them.
TEST(EinsumShapeTest, MaxVitAttention) {
  EXPECT_THAT(EinsumOutputDims("B G H I D, B G H J D -> B G H I J",
                               Dims{{1, 49, 2, 64, 32}, {1, 49, 2, 64, 32}}),
              Optional(ElementsAre(1, 49, 2, 64, 64)));
  EXPECT_THAT(EinsumOutputDims("B G H I J, B G H J D -> B G H I D",
                               Dims{{1, 49, 2, 64, 64}, {1, 49, 2, 64, 32}}),
              Optional(ElementsAre(1, 49, 2, 64, 32)));
}

TEST(EinsumShapeTest, ImplicitOutputIsSortedSingleUseLettersAfterTheEllipsis) {
  // "ij,jk": j is used twice; i and k once -> "ik".
  EXPECT_THAT(EinsumOutputDims("ij,jk", Dims{{2, 3}, {3, 4}}), Optional(ElementsAre(2, 4)));
  // "ba": sorted, so the implicit output transposes.
  EXPECT_THAT(EinsumOutputDims("ba", Dims{{2, 3}}), Optional(ElementsAre(3, 2)));
  EXPECT_THAT(EinsumOutputDims("...j,j", Dims{{7, 2, 3}, {3}}), Optional(ElementsAre(7, 2)));
}

TEST(EinsumShapeTest, BroadcastsOnesAndEllipses) {
  EXPECT_THAT(EinsumOutputDims("bij,bjk->bik", Dims{{1, 2, 3}, {5, 3, 4}}),
              Optional(ElementsAre(5, 2, 4)));
  EXPECT_THAT(EinsumOutputDims("...ij,...jk->...ik", Dims{{6, 1, 2, 3}, {4, 3, 4}}),
              Optional(ElementsAre(6, 4, 2, 4)));
}

TEST(EinsumShapeTest, RefusesWhatDoesNotMatch) {
  EXPECT_EQ(EinsumOutputDims("ij->ji", Dims{{3, 4, 5}}), std::nullopt);        // rank
  EXPECT_EQ(EinsumOutputDims("ij,jk->ik", Dims{{2, 3}, {4, 5}}), std::nullopt);  // j: 3 vs 4
  EXPECT_EQ(EinsumOutputDims("ij->ix", Dims{{2, 3}}), std::nullopt);  // x in no input
  EXPECT_EQ(EinsumOutputDims("i$j", Dims{{2, 3}}), std::nullopt);
  EXPECT_EQ(EinsumOutputDims("ij,jk", Dims{{2, 3}}), std::nullopt);  // two terms, one input
  EXPECT_EQ(EinsumOutputDims("..i", Dims{{2}}), std::nullopt);
}

}  // namespace
}  // namespace ordo::onnx_import
