#include "core/onnx/constant_evaluator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <utility>

#include "core/graph/onnx_domain.h"
#include "core/util/checked_math.h"

namespace ordo::onnx_import {
namespace {

using onnx::AttributeProto;
using onnx::NodeProto;
using onnx::TensorProto;
using Inputs = absl::Span<const ConstantTensor* const>;
using Outputs = std::optional<std::vector<ConstantTensor>>;
using Dims = std::vector<int64_t>;

// ---------------------------------------------------------------------------
// Attributes and inputs.

const AttributeProto* FindAttribute(const NodeProto& node, std::string_view name) {
  for (const AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

int64_t IntAttribute(const NodeProto& node, std::string_view name, int64_t fallback) {
  const AttributeProto* attribute = FindAttribute(node, name);
  return attribute != nullptr && attribute->type() == AttributeProto::INT ? attribute->i()
                                                                          : fallback;
}

std::optional<Dims> IntsAttribute(const NodeProto& node, std::string_view name) {
  const AttributeProto* attribute = FindAttribute(node, name);
  if (attribute == nullptr || attribute->type() != AttributeProto::INTS) {
    return std::nullopt;
  }
  return Dims(attribute->ints().begin(), attribute->ints().end());
}

const ConstantTensor* InputAt(Inputs inputs, size_t i) {
  return i < inputs.size() ? inputs[i] : nullptr;
}

// The elements of an integer tensor (shape, axes, indices operands).
std::optional<Dims> IntValues(const ConstantTensor* tensor) {
  if (tensor == nullptr || tensor->is_real()) return std::nullopt;
  return tensor->ints;
}

// An operand given as input `index` (newer opsets) or attribute `name`
// (older opsets); nullopt when neither is present.
std::optional<Dims> IntsFromInputOrAttribute(const NodeProto& node, Inputs inputs, size_t index,
                                             std::string_view name) {
  if (const ConstantTensor* input = InputAt(inputs, index)) return IntValues(input);
  return IntsAttribute(node, name);
}

// The single element of a scalar-like tensor.
std::optional<double> RealScalar(const ConstantTensor* t) {
  if (t == nullptr || t->num_elements() != 1) return std::nullopt;
  return t->is_real() ? t->reals[0] : static_cast<double>(t->ints[0]);
}

Outputs Single(std::optional<ConstantTensor> tensor) {
  if (!tensor) return std::nullopt;
  std::vector<ConstantTensor> outputs;
  outputs.push_back(std::move(*tensor));
  return outputs;
}

// ---------------------------------------------------------------------------
// Index arithmetic.

std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

Dims Strides(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

// Calls fn(index) for every multi-index of `dims` in row-major order. The
// caller has bounded the element count with SmallElementCount.
template <typename Fn>
void ForEachIndex(const Dims& dims, Fn fn) {
  const int64_t count = SmallElementCount(dims).value_or(0);
  Dims index(dims.size(), 0);
  for (int64_t k = 0; k < count; ++k) {
    fn(index);
    for (size_t d = dims.size(); d-- > 0;) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
}

// A tensor of `dims` whose k-th element is `in`'s element `source[k]`.
ConstantTensor Take(const ConstantTensor& in, Dims dims, const Dims& source) {
  ConstantTensor out;
  out.elem_type = in.elem_type;
  out.dims = std::move(dims);
  for (int64_t k : source) {
    if (in.is_real()) {
      out.reals.push_back(in.reals[k]);
    } else {
      out.ints.push_back(in.ints[k]);
    }
  }
  return out;
}

// Multidirectional (numpy) broadcasting of two shapes.
std::optional<Dims> BroadcastDims(const Dims& a, const Dims& b) {
  Dims out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[out.size() - 1 - i] = da == 1 ? db : da;
  }
  if (!SmallElementCount(out)) return std::nullopt;
  return out;
}

// For each element of a tensor of `out_dims`, the flat index of the element of
// a tensor of `in_dims` broadcast to it.
Dims BroadcastSource(const Dims& in_dims, const Dims& out_dims) {
  const Dims strides = Strides(in_dims);
  const size_t offset = out_dims.size() - in_dims.size();
  Dims source;
  ForEachIndex(out_dims, [&](const Dims& index) {
    int64_t flat = 0;
    for (size_t d = 0; d < in_dims.size(); ++d) {
      if (in_dims[d] != 1) flat += index[d + offset] * strides[d];
    }
    source.push_back(flat);
  });
  return source;
}

// Rounds float16, bfloat16 and float results to their precision and wraps
// integers to their width, so a value equals what a runtime would store.
// One rounding of the double result is IEEE arithmetic in the narrow type
// for + - * / and sqrt: double's 53 bits are at least 2p+2 for p = 8, 11
// and 24, so rounding twice never differs from rounding once (Figueroa,
// "When is double rounding innocuous?", 1995). A runtime that computes
// bfloat16 in float and rounds the result is covered by the same bound
// (24 >= 2 x 8 + 2).
void NormalizeValues(ConstantTensor& t) {
  if (t.elem_type == TensorProto::FLOAT) {
    for (double& v : t.reals) v = static_cast<float>(v);
  }
  if (t.elem_type == TensorProto::FLOAT16) {
    for (double& v : t.reals) v = RoundToHalf(v);
  }
  if (t.elem_type == TensorProto::BFLOAT16) {
    for (double& v : t.reals) v = RoundToBFloat16(v);
  }
  for (int64_t& v : t.ints) v = WrapToElemType(v, t.elem_type);
}

// ---------------------------------------------------------------------------
// Element-wise ops.

struct AddFn {
  static std::optional<int64_t> Int(int64_t a, int64_t b) { return CheckedAdd(a, b); }
  static double Real(double a, double b) { return a + b; }
};
struct SubFn {
  static std::optional<int64_t> Int(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
    return r;
  }
  static double Real(double a, double b) { return a - b; }
};
struct MulFn {
  static std::optional<int64_t> Int(int64_t a, int64_t b) { return CheckedMul(a, b); }
  static double Real(double a, double b) { return a * b; }
};
struct DivFn {
  static std::optional<int64_t> Int(int64_t a, int64_t b) {
    if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) {
      return std::nullopt;
    }
    return a / b;
  }
  static double Real(double a, double b) { return a / b; }
};
struct MinFn {
  static std::optional<int64_t> Int(int64_t a, int64_t b) { return std::min(a, b); }
  static double Real(double a, double b) { return std::min(a, b); }
};
struct MaxFn {
  static std::optional<int64_t> Int(int64_t a, int64_t b) { return std::max(a, b); }
  static double Real(double a, double b) { return std::max(a, b); }
};

template <typename Fn>
std::optional<ConstantTensor> Arithmetic(const ConstantTensor* a, const ConstantTensor* b) {
  if (a == nullptr || b == nullptr || a->elem_type != b->elem_type) return std::nullopt;
  std::optional<Dims> dims = BroadcastDims(a->dims, b->dims);
  if (!dims) return std::nullopt;
  const Dims sa = BroadcastSource(a->dims, *dims);
  const Dims sb = BroadcastSource(b->dims, *dims);
  ConstantTensor out;
  out.elem_type = a->elem_type;
  out.dims = *dims;
  for (size_t k = 0; k < sa.size(); ++k) {
    if (a->is_real()) {
      out.reals.push_back(Fn::Real(a->reals[sa[k]], b->reals[sb[k]]));
      continue;
    }
    std::optional<int64_t> v = Fn::Int(a->ints[sa[k]], b->ints[sb[k]]);
    if (!v) return std::nullopt;
    out.ints.push_back(*v);
  }
  NormalizeValues(out);
  return out;
}

// Sum/Min/Max take any number of inputs; folded left to right.
template <typename Fn>
Outputs Variadic(const NodeProto&, Inputs inputs) {
  if (inputs.empty() || inputs[0] == nullptr) return std::nullopt;
  ConstantTensor acc = *inputs[0];
  for (size_t i = 1; i < inputs.size(); ++i) {
    std::optional<ConstantTensor> next = Arithmetic<Fn>(&acc, inputs[i]);
    if (!next) return std::nullopt;
    acc = std::move(*next);
  }
  return Single(std::move(acc));
}

// Add/Sub/Mul/Div-1 to -6 with broadcast=1 and an `axis` align B's dims
// with A's from `axis` on, not with A's last dims (the legacy rule opset 7
// replaced by numpy's): B is given the 1s around its dims that make it
// broadcast the numpy way. nullopt when B does not fit there. Without an
// axis the legacy rule matches B with A's last dims, as numpy does.
std::optional<ConstantTensor> LegacyBroadcastOperand(const NodeProto& node, const ConstantTensor& a,
                                                     const ConstantTensor& b) {
  const int64_t rank = static_cast<int64_t>(a.dims.size());
  const int64_t b_rank = static_cast<int64_t>(b.dims.size());
  int64_t axis = IntAttribute(node, "axis", rank - b_rank);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis + b_rank > rank) return std::nullopt;
  ConstantTensor aligned = b;
  aligned.dims.assign(static_cast<size_t>(axis), 1);
  aligned.dims.insert(aligned.dims.end(), b.dims.begin(), b.dims.end());
  aligned.dims.resize(static_cast<size_t>(rank), 1);
  return aligned;
}

template <typename Fn>
Outputs Binary(const NodeProto& node, Inputs inputs) {
  if (inputs.size() != 2) return std::nullopt;
  if (IntAttribute(node, "broadcast", 0) == 1 && inputs[0] != nullptr && inputs[1] != nullptr) {
    std::optional<ConstantTensor> b = LegacyBroadcastOperand(node, *inputs[0], *inputs[1]);
    if (!b) return std::nullopt;
    return Single(Arithmetic<Fn>(inputs[0], &*b));
  }
  return Single(Arithmetic<Fn>(inputs[0], inputs[1]));
}

// b**e for integers, exact, by squaring; a negative exponent or an overflow
// is not folded.
std::optional<int64_t> IntPow(int64_t base, int64_t exponent) {
  if (exponent < 0) return std::nullopt;
  std::optional<int64_t> result = int64_t{1};
  while (exponent > 0 && result) {
    if (exponent & 1) result = CheckedMul(*result, base);
    exponent >>= 1;
    if (exponent > 0) {
      std::optional<int64_t> squared = CheckedMul(base, base);
      if (!squared) return std::nullopt;
      base = *squared;
    }
  }
  return result;
}

// Pow: the output has the base's type and the exponent may have another
// (PyTorch writes `head_dim ** -0.5` as Pow(float, float) and squares of
// shape values as Pow(int64, int64) or Pow(int64, float)). A float16 or
// bfloat16 base is declined: std::pow is not correctly rounded, so its
// double result rounded to 16 bits may differ from a runtime's.
Outputs Pow(const NodeProto&, Inputs inputs) {
  if (inputs.size() != 2 || inputs[0] == nullptr || inputs[1] == nullptr ||
      IsSixteenBitRealElemType(inputs[0]->elem_type)) {
    return std::nullopt;
  }
  const ConstantTensor& base = *inputs[0];
  const ConstantTensor& exponent = *inputs[1];
  std::optional<Dims> dims = BroadcastDims(base.dims, exponent.dims);
  if (!dims) return std::nullopt;
  const Dims sa = BroadcastSource(base.dims, *dims);
  const Dims sb = BroadcastSource(exponent.dims, *dims);
  ConstantTensor out;
  out.elem_type = base.elem_type;
  out.dims = *dims;
  for (size_t k = 0; k < sa.size(); ++k) {
    if (!base.is_real() && !exponent.is_real()) {
      std::optional<int64_t> v = IntPow(base.ints[sa[k]], exponent.ints[sb[k]]);
      if (!v) return std::nullopt;
      out.ints.push_back(*v);
      continue;
    }
    const double e = exponent.is_real() ? exponent.reals[sb[k]]
                                        : static_cast<double>(exponent.ints[sb[k]]);
    if (base.is_real()) {
      out.reals.push_back(std::pow(base.reals[sa[k]], e));
      continue;
    }
    const double r = std::pow(static_cast<double>(base.ints[sa[k]]), e);
    // 2^63 is exactly representable: anything at or beyond it overflows.
    if (!std::isfinite(r) || std::fabs(r) >= 9223372036854775808.0) return std::nullopt;
    out.ints.push_back(static_cast<int64_t>(r));
  }
  NormalizeValues(out);
  return Single(std::move(out));
}

// Mod: fmod=0 (integers) takes the divisor's sign, like Python's %; fmod=1
// is C's fmod / truncated remainder. A zero divisor is refused.
struct FloorModFn {
  static std::optional<int64_t> Int(int64_t a, int64_t b) {
    if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
  static double Real(double a, double b) { return std::fmod(a, b); }
};
struct TruncModFn {
  static std::optional<int64_t> Int(int64_t a, int64_t b) {
    if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
    return a % b;
  }
  static double Real(double a, double b) { return std::fmod(a, b); }
};

Outputs Mod(const NodeProto& node, Inputs inputs) {
  if (inputs.size() != 2) return std::nullopt;
  if (IntAttribute(node, "fmod", 0) != 0) return Single(Arithmetic<TruncModFn>(inputs[0], inputs[1]));
  // ONNX requires fmod=1 for floating-point inputs.
  if (inputs[0] != nullptr && inputs[0]->is_real()) return std::nullopt;
  return Single(Arithmetic<FloorModFn>(inputs[0], inputs[1]));
}

enum class Compare { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual, kAnd, kOr };

template <typename T>
bool Apply(Compare op, T a, T b) {
  switch (op) {
    case Compare::kEqual:
      return a == b;
    case Compare::kLess:
      return a < b;
    case Compare::kGreater:
      return a > b;
    case Compare::kLessOrEqual:
      return a <= b;
    case Compare::kGreaterOrEqual:
      return a >= b;
    case Compare::kAnd:
      return a != 0 && b != 0;
    case Compare::kOr:
      return a != 0 || b != 0;
  }
  return false;
}

template <Compare kOp>
Outputs Comparison(const NodeProto&, Inputs inputs) {
  if (inputs.size() != 2 || inputs[0] == nullptr || inputs[1] == nullptr) {
    return std::nullopt;
  }
  const ConstantTensor& a = *inputs[0];
  const ConstantTensor& b = *inputs[1];
  if (a.elem_type != b.elem_type) return std::nullopt;
  std::optional<Dims> dims = BroadcastDims(a.dims, b.dims);
  if (!dims) return std::nullopt;
  const Dims sa = BroadcastSource(a.dims, *dims);
  const Dims sb = BroadcastSource(b.dims, *dims);
  ConstantTensor out;
  out.elem_type = TensorProto::BOOL;
  out.dims = *dims;
  for (size_t k = 0; k < sa.size(); ++k) {
    out.ints.push_back(a.is_real() ? Apply(kOp, a.reals[sa[k]], b.reals[sb[k]])
                                   : Apply(kOp, a.ints[sa[k]], b.ints[sb[k]]));
  }
  return Single(std::move(out));
}

enum class Unary { kNeg, kAbs, kFloor, kCeil, kSqrt, kNot };

template <Unary kOp>
Outputs UnaryOp(const NodeProto&, Inputs inputs) {
  if (inputs.size() != 1 || inputs[0] == nullptr) return std::nullopt;
  ConstantTensor out = *inputs[0];
  if (kOp == Unary::kNot && out.elem_type != TensorProto::BOOL) return std::nullopt;
  if (kOp == Unary::kSqrt && !out.is_real()) return std::nullopt;
  for (double& v : out.reals) {
    if (kOp == Unary::kNeg) v = -v;
    if (kOp == Unary::kAbs) v = std::fabs(v);
    if (kOp == Unary::kFloor) v = std::floor(v);
    if (kOp == Unary::kCeil) v = std::ceil(v);
    if (kOp == Unary::kSqrt) v = std::sqrt(v);
  }
  for (int64_t& v : out.ints) {
    const bool negate = kOp == Unary::kNeg || (kOp == Unary::kAbs && v < 0);
    if (negate && v == std::numeric_limits<int64_t>::min()) return std::nullopt;
    if (negate) v = -v;
    if (kOp == Unary::kNot) v = v == 0 ? 1 : 0;
  }
  NormalizeValues(out);
  return Single(std::move(out));
}

Outputs Identity(const NodeProto&, Inputs inputs) {
  if (inputs.size() != 1 || inputs[0] == nullptr) return std::nullopt;
  return Single(*inputs[0]);
}

// Real -> integer conversion as runtimes do it (truncation), refusing values
// that do not fit in int64.
std::optional<int64_t> TruncateReal(double v) {
  if (!std::isfinite(v) || v >= 9.2e18 || v <= -9.2e18) return std::nullopt;
  return static_cast<int64_t>(v);
}

Outputs Cast(const NodeProto& node, Inputs inputs) {
  if (inputs.size() != 1 || inputs[0] == nullptr) return std::nullopt;
  const ConstantTensor& in = *inputs[0];
  ConstantTensor out;
  out.elem_type = static_cast<int32_t>(IntAttribute(node, "to", 0));
  out.dims = in.dims;
  if (IsRealElemType(out.elem_type)) {
    for (int64_t v : in.ints) out.reals.push_back(static_cast<double>(v));
    out.reals.insert(out.reals.end(), in.reals.begin(), in.reals.end());
  } else if (IsIntegerElemType(out.elem_type)) {
    out.ints = in.ints;
    for (double v : in.reals) {
      std::optional<int64_t> i =
          out.elem_type == TensorProto::BOOL ? std::optional<int64_t>(v != 0.0) : TruncateReal(v);
      if (!i) return std::nullopt;
      out.ints.push_back(*i);
    }
  } else {
    return std::nullopt;
  }
  NormalizeValues(out);
  return Single(std::move(out));
}

// CastLike (opset 15): Cast to the element type of the second input.
Outputs CastLike(const NodeProto& node, Inputs inputs) {
  if (inputs.size() != 2 || inputs[1] == nullptr) return std::nullopt;
  NodeProto cast = node;
  cast.clear_attribute();
  AttributeProto& to = *cast.add_attribute();
  to.set_name("to");
  to.set_type(AttributeProto::INT);
  to.set_i(inputs[1]->elem_type);
  return Cast(cast, inputs.first(1));
}

// At inference Dropout is the identity, whatever its ratio and
// training_mode inputs say; its optional mask is all true.
Outputs Dropout(const NodeProto& node, Inputs inputs) {
  if (inputs.empty() || inputs[0] == nullptr) return std::nullopt;
  std::vector<ConstantTensor> outputs;
  outputs.push_back(*inputs[0]);
  if (node.output_size() > 1) {
    ConstantTensor mask;
    mask.elem_type = TensorProto::BOOL;
    mask.dims = inputs[0]->dims;
    mask.ints.assign(inputs[0]->num_elements(), 1);
    outputs.push_back(std::move(mask));
  }
  return outputs;
}

// ScatterND with reduction "none": a copy of data whose slices at
// indices[..., :] are replaced by the matching slices of updates.
Outputs ScatterND(const NodeProto& node, Inputs inputs) {
  if (inputs.size() != 3 || inputs[0] == nullptr || inputs[2] == nullptr) return std::nullopt;
  const AttributeProto* reduction = FindAttribute(node, "reduction");
  if (reduction != nullptr && reduction->s() != "none") return std::nullopt;
  const ConstantTensor& data = *inputs[0];
  const ConstantTensor& updates = *inputs[2];
  std::optional<Dims> indices = IntValues(inputs[1]);
  if (!indices || updates.elem_type != data.elem_type || inputs[1]->dims.empty()) {
    return std::nullopt;
  }
  const Dims& index_dims = inputs[1]->dims;
  const int64_t k = index_dims.back();
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  if (k < 1 || k > rank) return std::nullopt;
  const int64_t slice =
      SmallElementCount(absl::MakeConstSpan(data.dims).subspan(k)).value_or(0);
  const int64_t count =
      SmallElementCount(absl::MakeConstSpan(index_dims).first(index_dims.size() - 1))
          .value_or(0);
  if (updates.num_elements() != count * slice) return std::nullopt;
  const Dims strides = Strides(data.dims);
  ConstantTensor out = data;
  for (int64_t j = 0; j < count; ++j) {
    int64_t offset = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t i = (*indices)[j * k + d];
      if (i < 0) i += data.dims[d];
      if (i < 0 || i >= data.dims[d]) return std::nullopt;
      offset += i * strides[d];
    }
    for (int64_t e = 0; e < slice; ++e) {
      if (out.is_real()) {
        out.reals[offset + e] = updates.reals[j * slice + e];
      } else {
        out.ints[offset + e] = updates.ints[j * slice + e];
      }
    }
  }
  return Single(std::move(out));
}

Outputs Where(const NodeProto&, Inputs inputs) {
  if (inputs.size() != 3) return std::nullopt;
  const ConstantTensor* c = inputs[0];
  const ConstantTensor* x = inputs[1];
  const ConstantTensor* y = inputs[2];
  if (c == nullptr || x == nullptr || y == nullptr || c->is_real() ||
      x->elem_type != y->elem_type) {
    return std::nullopt;
  }
  std::optional<Dims> cx = BroadcastDims(c->dims, x->dims);
  std::optional<Dims> dims = cx ? BroadcastDims(*cx, y->dims) : std::nullopt;
  if (!dims) return std::nullopt;
  const Dims sc = BroadcastSource(c->dims, *dims);
  const Dims sx = BroadcastSource(x->dims, *dims);
  const Dims sy = BroadcastSource(y->dims, *dims);
  ConstantTensor out;
  out.elem_type = x->elem_type;
  out.dims = *dims;
  for (size_t k = 0; k < sc.size(); ++k) {
    const bool take_x = c->ints[sc[k]] != 0;
    if (x->is_real()) {
      out.reals.push_back(take_x ? x->reals[sx[k]] : y->reals[sy[k]]);
    } else {
      out.ints.push_back(take_x ? x->ints[sx[k]] : y->ints[sy[k]]);
    }
  }
  return Single(std::move(out));
}

// ---------------------------------------------------------------------------
// Data movement.

Outputs Gather(const NodeProto& node, Inputs inputs) {
  if (inputs.size() != 2 || inputs[0] == nullptr) return std::nullopt;
  const ConstantTensor& data = *inputs[0];
  std::optional<Dims> indices = IntValues(inputs[1]);
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  std::optional<int64_t> axis = NormalizeAxis(IntAttribute(node, "axis", 0), rank);
  if (!indices || !axis) return std::nullopt;
  const Dims& index_dims = inputs[1]->dims;
  Dims dims(data.dims.begin(), data.dims.begin() + *axis);
  dims.insert(dims.end(), index_dims.begin(), index_dims.end());
  dims.insert(dims.end(), data.dims.begin() + *axis + 1, data.dims.end());
  if (!SmallElementCount(dims)) return std::nullopt;
  const Dims data_strides = Strides(data.dims);
  const Dims index_strides = Strides(index_dims);
  const int64_t q = static_cast<int64_t>(index_dims.size());
  const int64_t extent = data.dims[*axis];
  bool ok = true;
  Dims source;
  ForEachIndex(dims, [&](const Dims& index) {
    int64_t position = 0;
    for (int64_t d = 0; d < q; ++d) position += index[*axis + d] * index_strides[d];
    int64_t k = (*indices)[position];
    if (k < 0) k += extent;
    if (k < 0 || k >= extent) ok = false;
    int64_t flat = k * data_strides[*axis];
    for (int64_t d = 0; d < *axis; ++d) flat += index[d] * data_strides[d];
    for (int64_t d = *axis + 1; d < rank; ++d) flat += index[d - 1 + q] * data_strides[d];
    source.push_back(ok ? flat : 0);
  });
  if (!ok) return std::nullopt;
  return Single(Take(data, std::move(dims), source));
}

Outputs Concat(const NodeProto& node, Inputs inputs) {
  if (inputs.empty() || inputs[0] == nullptr) return std::nullopt;
  const ConstantTensor& first = *inputs[0];
  const int64_t rank = static_cast<int64_t>(first.dims.size());
  // Concat-1 defaults to axis 1; from Concat-4 on the axis is required.
  std::optional<int64_t> axis = NormalizeAxis(IntAttribute(node, "axis", 1), rank);
  if (!axis) return std::nullopt;
  ConstantTensor out;
  out.elem_type = first.elem_type;
  out.dims = first.dims;
  out.dims[*axis] = 0;
  for (const ConstantTensor* in : inputs) {
    if (in == nullptr || in->elem_type != first.elem_type || in->dims.size() != first.dims.size()) {
      return std::nullopt;
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != *axis && in->dims[d] != first.dims[d]) return std::nullopt;
    }
    out.dims[*axis] += in->dims[*axis];
  }
  if (!SmallElementCount(out.dims)) return std::nullopt;
  // Row-major: the output is, for each outer index, each input's block.
  const int64_t outer = SmallElementCount(absl::MakeConstSpan(first.dims).first(*axis)).value_or(0);
  for (int64_t o = 0; o < outer; ++o) {
    for (const ConstantTensor* in : inputs) {
      const int64_t block = in->num_elements() / std::max<int64_t>(outer, 1);
      if (in->is_real()) {
        out.reals.insert(out.reals.end(), in->reals.begin() + o * block,
                         in->reals.begin() + (o + 1) * block);
      } else {
        out.ints.insert(out.ints.end(), in->ints.begin() + o * block,
                        in->ints.begin() + (o + 1) * block);
      }
    }
  }
  return Single(std::move(out));
}

// One axis of a Slice after ONNX's clamping rules.
struct SliceAxis {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};

std::optional<SliceAxis> ClampSlice(int64_t start, int64_t end, int64_t step, int64_t dim) {
  // -step must not overflow below.
  if (step == 0 || step == std::numeric_limits<int64_t>::min()) return std::nullopt;
  if (dim == 0) return SliceAxis{0, step, 0};
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  SliceAxis axis{0, step, 0};
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    axis.count = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    axis.count = start > end ? (start - end - 1) / -step + 1 : 0;
  }
  axis.start = start;
  return axis;
}

Outputs Slice(const NodeProto& node, Inputs inputs) {
  if (inputs.empty() || inputs[0] == nullptr) return std::nullopt;
  const ConstantTensor& data = *inputs[0];
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  std::optional<Dims> starts = IntsFromInputOrAttribute(node, inputs, 1, "starts");
  std::optional<Dims> ends = IntsFromInputOrAttribute(node, inputs, 2, "ends");
  std::optional<Dims> axes = IntsFromInputOrAttribute(node, inputs, 3, "axes");
  std::optional<Dims> steps = IntValues(InputAt(inputs, 4));
  if (!starts || !ends || starts->size() != ends->size()) return std::nullopt;
  if (!axes) {
    axes.emplace(starts->size());
    for (size_t j = 0; j < axes->size(); ++j) (*axes)[j] = static_cast<int64_t>(j);
  }
  if (!steps) steps.emplace(starts->size(), 1);
  if (axes->size() != starts->size() || steps->size() != starts->size()) {
    return std::nullopt;
  }
  std::vector<SliceAxis> plan(rank);
  std::vector<bool> seen(rank, false);
  for (int64_t d = 0; d < rank; ++d) plan[d] = {0, 1, data.dims[d]};
  for (size_t j = 0; j < starts->size(); ++j) {
    std::optional<int64_t> axis = NormalizeAxis((*axes)[j], rank);
    if (!axis || seen[*axis]) return std::nullopt;
    seen[*axis] = true;
    std::optional<SliceAxis> clamped =
        ClampSlice((*starts)[j], (*ends)[j], (*steps)[j], data.dims[*axis]);
    if (!clamped) return std::nullopt;
    plan[*axis] = *clamped;
  }
  Dims dims(rank);
  for (int64_t d = 0; d < rank; ++d) dims[d] = plan[d].count;
  const Dims strides = Strides(data.dims);
  Dims source;
  ForEachIndex(dims, [&](const Dims& index) {
    int64_t flat = 0;
    for (int64_t d = 0; d < rank; ++d) {
      flat += (plan[d].start + index[d] * plan[d].step) * strides[d];
    }
    source.push_back(flat);
  });
  return Single(Take(data, std::move(dims), source));
}

// The same values under new dims (Reshape, Flatten, Squeeze, Unsqueeze).
Outputs Reinterpret(const ConstantTensor& in, Dims dims) {
  std::optional<int64_t> count = SmallElementCount(dims);
  if (!count || *count != in.num_elements()) return std::nullopt;
  ConstantTensor out = in;
  out.dims = std::move(dims);
  return Single(std::move(out));
}

Outputs Unsqueeze(const NodeProto& node, Inputs inputs) {
  if (inputs.empty() || inputs[0] == nullptr) return std::nullopt;
  const ConstantTensor& in = *inputs[0];
  std::optional<Dims> axes = IntsFromInputOrAttribute(node, inputs, 1, "axes");
  if (!axes) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(in.dims.size() + axes->size());
  std::vector<bool> inserted(rank, false);
  for (int64_t axis : *axes) {
    std::optional<int64_t> a = NormalizeAxis(axis, rank);
    if (!a || inserted[*a]) return std::nullopt;
    inserted[*a] = true;
  }
  Dims dims;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) dims.push_back(inserted[d] ? 1 : in.dims[next++]);
  return Reinterpret(in, std::move(dims));
}

Outputs Squeeze(const NodeProto& node, Inputs inputs) {
  if (inputs.empty() || inputs[0] == nullptr) return std::nullopt;
  const ConstantTensor& in = *inputs[0];
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  std::optional<Dims> axes = IntsFromInputOrAttribute(node, inputs, 1, "axes");
  std::vector<bool> removed(rank, false);
  for (int64_t d = 0; d < rank; ++d) removed[d] = !axes && in.dims[d] == 1;
  for (int64_t axis : axes.value_or(Dims())) {
    std::optional<int64_t> a = NormalizeAxis(axis, rank);
    if (!a || in.dims[*a] != 1) return std::nullopt;
    removed[*a] = true;
  }
  Dims dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!removed[d]) dims.push_back(in.dims[d]);
  }
  return Reinterpret(in, std::move(dims));
}

Outputs Reshape(const NodeProto& node, Inputs inputs) {
  if (inputs.size() != 2 || inputs[0] == nullptr) return std::nullopt;
  const ConstantTensor& in = *inputs[0];
  std::optional<Dims> shape = IntValues(inputs[1]);
  if (!shape) return std::nullopt;
  const bool allow_zero = IntAttribute(node, "allowzero", 0) != 0;
  Dims dims = *shape;
  int64_t known = 1;
  int64_t inferred = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0 && !allow_zero) {
      if (i >= in.dims.size()) return std::nullopt;
      dims[i] = in.dims[i];
    }
    if (dims[i] == -1) {
      if (inferred >= 0) return std::nullopt;
      inferred = static_cast<int64_t>(i);
      continue;
    }
    std::optional<int64_t> product = dims[i] >= 0 ? CheckedMul(known, dims[i]) : std::nullopt;
    if (!product) return std::nullopt;
    known = *product;
  }
  if (inferred >= 0) {
    if (known == 0 || in.num_elements() % known != 0) return std::nullopt;
    dims[inferred] = in.num_elements() / known;
  }
  return Reinterpret(in, std::move(dims));
}

Outputs Flatten(const NodeProto& node, Inputs inputs) {
  if (inputs.size() != 1 || inputs[0] == nullptr) return std::nullopt;
  const ConstantTensor& in = *inputs[0];
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  int64_t axis = IntAttribute(node, "axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return std::nullopt;
  std::optional<int64_t> outer = SmallElementCount(absl::MakeConstSpan(in.dims).first(axis));
  std::optional<int64_t> inner = SmallElementCount(absl::MakeConstSpan(in.dims).subspan(axis));
  if (!outer || !inner) return std::nullopt;
  return Reinterpret(in, {*outer, *inner});
}

Outputs Transpose(const NodeProto& node, Inputs inputs) {
  if (inputs.size() != 1 || inputs[0] == nullptr) return std::nullopt;
  const ConstantTensor& in = *inputs[0];
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  Dims perm(rank);
  for (int64_t d = 0; d < rank; ++d) perm[d] = rank - 1 - d;
  perm = IntsAttribute(node, "perm").value_or(perm);
  if (static_cast<int64_t>(perm.size()) != rank) return std::nullopt;
  std::vector<bool> used(rank, false);
  Dims dims(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (perm[d] < 0 || perm[d] >= rank || used[perm[d]]) return std::nullopt;
    used[perm[d]] = true;
    dims[d] = in.dims[perm[d]];
  }
  const Dims strides = Strides(in.dims);
  Dims source;
  ForEachIndex(dims, [&](const Dims& index) {
    int64_t flat = 0;
    for (int64_t d = 0; d < rank; ++d) flat += index[d] * strides[perm[d]];
    source.push_back(flat);
  });
  return Single(Take(in, std::move(dims), source));
}

Outputs Expand(const NodeProto&, Inputs inputs) {
  if (inputs.size() != 2 || inputs[0] == nullptr) return std::nullopt;
  std::optional<Dims> shape = IntValues(inputs[1]);
  if (!shape) return std::nullopt;
  std::optional<Dims> dims = BroadcastDims(inputs[0]->dims, *shape);
  if (!dims) return std::nullopt;
  const Dims source = BroadcastSource(inputs[0]->dims, *dims);
  return Single(Take(*inputs[0], std::move(*dims), source));
}

Outputs Tile(const NodeProto&, Inputs inputs) {
  if (inputs.size() != 2 || inputs[0] == nullptr) return std::nullopt;
  const ConstantTensor& in = *inputs[0];
  std::optional<Dims> repeats = IntValues(inputs[1]);
  if (!repeats || repeats->size() != in.dims.size()) return std::nullopt;
  Dims dims(in.dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    std::optional<int64_t> n =
        (*repeats)[d] >= 0 ? CheckedMul(in.dims[d], (*repeats)[d]) : std::nullopt;
    if (!n) return std::nullopt;
    dims[d] = *n;
  }
  if (!SmallElementCount(dims)) return std::nullopt;
  const Dims strides = Strides(in.dims);
  Dims source;
  ForEachIndex(dims, [&](const Dims& index) {
    int64_t flat = 0;
    for (size_t d = 0; d < dims.size(); ++d) flat += (index[d] % in.dims[d]) * strides[d];
    source.push_back(flat);
  });
  return Single(Take(in, std::move(dims), source));
}

// ---------------------------------------------------------------------------
// Generators.

std::optional<ConstantTensor> ConstantAttributeValue(const AttributeProto& attribute) {
  ConstantTensor out;
  const std::string& name = attribute.name();
  if (name == "value" && attribute.type() == AttributeProto::TENSOR) {
    return ConstantFromProto(attribute.t());
  }
  if (name == "value_int" && attribute.type() == AttributeProto::INT) {
    out.ints.push_back(attribute.i());
  } else if (name == "value_ints" && attribute.type() == AttributeProto::INTS) {
    out.ints.assign(attribute.ints().begin(), attribute.ints().end());
    out.dims.push_back(attribute.ints_size());
  } else if (name == "value_float" && attribute.type() == AttributeProto::FLOAT) {
    out.elem_type = TensorProto::FLOAT;
    out.reals.push_back(attribute.f());
  } else if (name == "value_floats" && attribute.type() == AttributeProto::FLOATS) {
    out.elem_type = TensorProto::FLOAT;
    out.reals.assign(attribute.floats().begin(), attribute.floats().end());
    out.dims.push_back(attribute.floats_size());
  } else {
    return std::nullopt;
  }
  if (!SmallElementCount(out.dims)) return std::nullopt;
  return out;
}

Outputs Constant(const NodeProto& node, Inputs inputs) {
  if (!inputs.empty() || node.attribute_size() != 1) return std::nullopt;
  return Single(ConstantAttributeValue(node.attribute(0)));
}

Outputs ConstantOfShape(const NodeProto& node, Inputs inputs) {
  if (inputs.size() != 1) return std::nullopt;
  std::optional<Dims> dims = IntValues(inputs[0]);
  if (!dims || !SmallElementCount(*dims)) return std::nullopt;
  ConstantTensor fill;
  fill.elem_type = TensorProto::FLOAT;
  fill.reals.push_back(0.0);
  if (const AttributeProto* value = FindAttribute(node, "value")) {
    std::optional<ConstantTensor> parsed =
        value->type() == AttributeProto::TENSOR ? ConstantFromProto(value->t()) : std::nullopt;
    if (!parsed || parsed->num_elements() != 1) return std::nullopt;
    fill = std::move(*parsed);
  }
  const Dims source(*SmallElementCount(*dims), 0);
  return Single(Take(fill, std::move(*dims), source));
}

// float16 and bfloat16 are declined: a runtime rounds i * delta and the sum
// each to 16 bits, which one rounding of the double result does not match.
Outputs Range(const NodeProto&, Inputs inputs) {
  if (inputs.size() != 3 || inputs[0] == nullptr || inputs[1] == nullptr || inputs[2] == nullptr ||
      inputs[0]->elem_type != inputs[1]->elem_type ||
      inputs[0]->elem_type != inputs[2]->elem_type ||
      IsSixteenBitRealElemType(inputs[0]->elem_type)) {
    return std::nullopt;
  }
  std::optional<double> start = RealScalar(inputs[0]);
  std::optional<double> limit = RealScalar(inputs[1]);
  std::optional<double> delta = RealScalar(inputs[2]);
  if (!start || !limit || !delta || *delta == 0.0) return std::nullopt;
  const double n = std::max(std::ceil((*limit - *start) / *delta), 0.0);
  if (!(n <= static_cast<double>(kMaxConstantElements))) return std::nullopt;
  ConstantTensor out;
  out.elem_type = inputs[0]->elem_type;
  out.dims = {static_cast<int64_t>(n)};
  for (int64_t i = 0; i < out.dims[0]; ++i) {
    if (out.is_real()) {
      out.reals.push_back(*start + static_cast<double>(i) * *delta);
    } else {
      // Integer operands are exact in double only below 2^53; recompute in
      // int64 so large offsets stay exact.
      std::optional<int64_t> step = CheckedMul(i, inputs[2]->ints[0]);
      std::optional<int64_t> v = step ? CheckedAdd(inputs[0]->ints[0], *step) : std::nullopt;
      if (!v) return std::nullopt;
      out.ints.push_back(*v);
    }
  }
  NormalizeValues(out);
  return Single(std::move(out));
}

// ---------------------------------------------------------------------------
// Reductions.

template <typename Fn>
Outputs Reduce(const NodeProto& node, Inputs inputs) {
  // float16 and bfloat16 are declined: runtimes accumulate them in 16 bits
  // or in float, rounding at each step or once, so no one result is the
  // runtime's.
  if (inputs.empty() || inputs[0] == nullptr || IsSixteenBitRealElemType(inputs[0]->elem_type)) {
    return std::nullopt;
  }
  const ConstantTensor& in = *inputs[0];
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  std::optional<Dims> axes = IntsFromInputOrAttribute(node, inputs, 1, "axes");
  if (!axes || axes->empty()) {
    if (IntAttribute(node, "noop_with_empty_axes", 0) != 0) return Single(in);
    axes.emplace();
    for (int64_t d = 0; d < rank; ++d) axes->push_back(d);
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : *axes) {
    std::optional<int64_t> a = NormalizeAxis(axis, rank);
    if (!a) return std::nullopt;
    reduced[*a] = true;
  }
  const bool keep_dims = IntAttribute(node, "keepdims", 1) != 0;
  Dims kept(rank);  // dims of the result with reduced axes kept as 1
  Dims dims;
  for (int64_t d = 0; d < rank; ++d) {
    kept[d] = reduced[d] ? 1 : in.dims[d];
    if (!reduced[d] || keep_dims) dims.push_back(kept[d]);
  }
  const Dims kept_strides = Strides(kept);
  const int64_t count = SmallElementCount(kept).value_or(0);
  std::vector<std::optional<int64_t>> ints(count);
  std::vector<std::optional<double>> reals(count);
  bool ok = true;
  int64_t k = 0;
  ForEachIndex(in.dims, [&](const Dims& index) {
    int64_t flat = 0;
    for (int64_t d = 0; d < rank; ++d) {
      if (!reduced[d]) flat += index[d] * kept_strides[d];
    }
    if (in.is_real()) {
      reals[flat] = reals[flat] ? Fn::Real(*reals[flat], in.reals[k]) : in.reals[k];
    } else {
      ints[flat] = ints[flat] ? Fn::Int(*ints[flat], in.ints[k]) : in.ints[k];
      ok = ok && ints[flat].has_value();
    }
    ++k;
  });
  ConstantTensor out;
  out.elem_type = in.elem_type;
  out.dims = std::move(dims);
  for (int64_t i = 0; i < count; ++i) {
    // A reduction over an empty axis has no identity we could trust here.
    if (in.is_real() ? !reals[i] : !ints[i]) ok = false;
    if (!ok) return std::nullopt;
    if (in.is_real()) {
      out.reals.push_back(*reals[i]);
    } else {
      out.ints.push_back(*ints[i]);
    }
  }
  NormalizeValues(out);
  return Single(std::move(out));
}

// ---------------------------------------------------------------------------
// Dispatch.

using Evaluator = Outputs (*)(const NodeProto&, Inputs);

struct OpEvaluator {
  std::string_view type;
  Evaluator evaluate;
};

constexpr OpEvaluator kEvaluators[] = {
    {"Constant", Constant},
    {"Identity", Identity},
    {"Cast", Cast},
    {"CastLike", CastLike},
    {"Dropout", Dropout},
    {"Neg", UnaryOp<Unary::kNeg>},
    {"Abs", UnaryOp<Unary::kAbs>},
    {"Floor", UnaryOp<Unary::kFloor>},
    {"Ceil", UnaryOp<Unary::kCeil>},
    {"Sqrt", UnaryOp<Unary::kSqrt>},
    {"Not", UnaryOp<Unary::kNot>},
    {"Add", Binary<AddFn>},
    {"Sub", Binary<SubFn>},
    {"Mul", Binary<MulFn>},
    {"Div", Binary<DivFn>},
    {"Mod", Mod},
    {"Pow", Pow},
    {"Min", Variadic<MinFn>},
    {"Max", Variadic<MaxFn>},
    {"Sum", Variadic<AddFn>},
    {"Equal", Comparison<Compare::kEqual>},
    {"Less", Comparison<Compare::kLess>},
    {"Greater", Comparison<Compare::kGreater>},
    {"LessOrEqual", Comparison<Compare::kLessOrEqual>},
    {"GreaterOrEqual", Comparison<Compare::kGreaterOrEqual>},
    {"And", Comparison<Compare::kAnd>},
    {"Or", Comparison<Compare::kOr>},
    {"Where", Where},
    {"Gather", Gather},
    {"Concat", Concat},
    {"Slice", Slice},
    {"Squeeze", Squeeze},
    {"Unsqueeze", Unsqueeze},
    {"Reshape", Reshape},
    {"Flatten", Flatten},
    {"Transpose", Transpose},
    {"Expand", Expand},
    {"Tile", Tile},
    {"ScatterND", ScatterND},
    {"ConstantOfShape", ConstantOfShape},
    {"Range", Range},
    {"ReduceProd", Reduce<MulFn>},
    {"ReduceSum", Reduce<AddFn>},
    {"ReduceMin", Reduce<MinFn>},
    {"ReduceMax", Reduce<MaxFn>},
};

bool IsDefaultDomain(const NodeProto& node) {
  return IsStandardOnnxDomain(node.domain());
}

}  // namespace

std::optional<std::vector<ConstantTensor>> EvaluateConstantNode(
    const NodeProto& node, absl::Span<const ConstantTensor* const> inputs) {
  if (!IsDefaultDomain(node)) return std::nullopt;
  // Trailing omitted optional inputs are the same as absent ones.
  while (!inputs.empty() && inputs.back() == nullptr) inputs.remove_suffix(1);
  for (const OpEvaluator& entry : kEvaluators) {
    if (entry.type != node.op_type()) continue;
    Outputs outputs = entry.evaluate(node, inputs);
    if (!outputs || static_cast<int>(outputs->size()) != node.output_size()) {
      return std::nullopt;
    }
    return outputs;
  }
  return std::nullopt;
}

std::optional<ConstantTensor> EvaluateShapeOf(const NodeProto& node,
                                              absl::Span<const int64_t> dims) {
  if (!IsDefaultDomain(node)) return std::nullopt;
  ConstantTensor out;
  out.elem_type = TensorProto::INT64;
  if (node.op_type() == "Size") {
    std::optional<int64_t> count = int64_t{1};
    for (int64_t dim : dims) count = count ? CheckedMul(*count, dim) : std::nullopt;
    if (!count) return std::nullopt;
    out.ints.push_back(*count);
    return out;
  }
  if (node.op_type() != "Shape") return std::nullopt;
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t start = IntAttribute(node, "start", 0);
  int64_t end = IntAttribute(node, "end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  out.ints.assign(dims.begin() + start, dims.begin() + std::max(start, end));
  out.dims.push_back(static_cast<int64_t>(out.ints.size()));
  return out;
}

}  // namespace ordo::onnx_import
