#include "tests/rewrite/reference_executor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ordo {
namespace {

int64_t Count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

const onnx::AttributeProto* Attr(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t IntAttr(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const auto* a = Attr(node, name);
  return a != nullptr ? a->i() : fallback;
}

std::vector<int64_t> IntsAttr(const onnx::NodeProto& node, const std::string& name,
                              std::vector<int64_t> fallback) {
  const auto* a = Attr(node, name);
  if (a == nullptr) return fallback;
  return {a->ints().begin(), a->ints().end()};
}

std::string StringAttr(const onnx::NodeProto& node, const std::string& name,
                       const std::string& fallback) {
  const auto* a = Attr(node, name);
  return a != nullptr ? a->s() : fallback;
}

double FloatAttr(const onnx::NodeProto& node, const std::string& name, double fallback) {
  const auto* a = Attr(node, name);
  return a != nullptr ? a->f() : fallback;
}

// One element of the unary activations without a table of their own above,
// with the ONNX operator documentation's defaults.
double UnaryActivation(const onnx::NodeProto& node, double x) {
  const std::string& type = node.op_type();
  const auto softplus = [](double v) { return v > 20 ? v : std::log1p(std::exp(v)); };
  if (type == "Gelu") {
    if (StringAttr(node, "approximate", "none") == "tanh") {
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    }
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  }
  if (type == "Mish") return x * std::tanh(softplus(x));
  if (type == "Swish") return x / (1 + std::exp(-FloatAttr(node, "alpha", 1.0) * x));
  if (type == "Tanh") return std::tanh(x);
  if (type == "Elu") return x >= 0 ? x : FloatAttr(node, "alpha", 1.0) * std::expm1(x);
  if (type == "Selu") {
    const double alpha = FloatAttr(node, "alpha", 1.67326319217681884765625);
    const double gamma = FloatAttr(node, "gamma", 1.05070102214813232421875);
    return gamma * (x > 0 ? x : alpha * std::expm1(x));
  }
  if (type == "Softplus") return softplus(x);
  return x / (1 + std::abs(x));  // Softsign
}

absl::Status Unsupported(const onnx::NodeProto& node, const std::string& what) {
  return absl::UnimplementedError(
      absl::StrCat(node.op_type(), " \"", node.name(), "\": ", what, " not supported"));
}

// Float values of a TensorProto with data, or nullopt-like empty status.
absl::StatusOr<FloatTensor> FloatsOf(const onnx::TensorProto& t) {
  FloatTensor out;
  out.dims.assign(t.dims().begin(), t.dims().end());
  const int64_t n = Count(out.dims);
  if (t.data_type() != onnx::TensorProto::FLOAT) {
    return absl::InvalidArgumentError(absl::StrCat("\"", t.name(), "\" is not float"));
  }
  if (t.float_data_size() == n) {
    out.values.assign(t.float_data().begin(), t.float_data().end());
  } else if (static_cast<int64_t>(t.raw_data().size()) == n * 4) {
    out.values.resize(n);
    std::memcpy(out.values.data(), t.raw_data().data(), n * 4);
  } else {
    return absl::NotFoundError(absl::StrCat("\"", t.name(), "\" carries no data"));
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> IntsOf(const onnx::TensorProto& t) {
  const int64_t n = Count({t.dims().begin(), t.dims().end()});
  if (t.data_type() == onnx::TensorProto::INT64) {
    if (t.int64_data_size() == n)
      return std::vector<int64_t>(t.int64_data().begin(), t.int64_data().end());
    if (static_cast<int64_t>(t.raw_data().size()) == n * 8) {
      std::vector<int64_t> v(n);
      std::memcpy(v.data(), t.raw_data().data(), n * 8);
      return v;
    }
  }
  if (t.data_type() == onnx::TensorProto::INT32 && t.int32_data_size() == n) {
    return std::vector<int64_t>(t.int32_data().begin(), t.int32_data().end());
  }
  return absl::InvalidArgumentError(absl::StrCat("\"", t.name(), "\" is not int64 data"));
}

// Row-major strides of `dims`.
std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * dims[i + 1];
  return s;
}

absl::StatusOr<FloatTensor> Broadcast(const onnx::NodeProto& node,
                                      const std::vector<const FloatTensor*>& in) {
  size_t rank = 0;
  for (const auto* t : in) rank = std::max(rank, t->dims.size());
  std::vector<int64_t> dims(rank, 1);
  for (const auto* t : in) {
    for (size_t i = 0; i < t->dims.size(); ++i) {
      int64_t& d = dims[rank - t->dims.size() + i];
      if (t->dims[i] == d || t->dims[i] == 1) continue;
      if (d != 1) return absl::InvalidArgumentError(absl::StrCat(node.name(), ": no broadcast"));
      d = t->dims[i];
    }
  }
  FloatTensor out{dims, std::vector<float>(Count(dims), 0.0f)};
  const std::vector<int64_t> out_strides = Strides(dims);
  // Folds the operands left to right: Add / Sum add, Sub / Div / Mul / Max /
  // Min as their names say (the first operand initializes).
  const std::string& type = node.op_type();
  bool first = true;
  for (const auto* t : in) {
    // Stride 0 along broadcast axes.
    std::vector<int64_t> s(rank, 0);
    const std::vector<int64_t> ts = Strides(t->dims);
    for (size_t i = 0; i < t->dims.size(); ++i) {
      if (t->dims[i] != 1) s[rank - t->dims.size() + i] = ts[i];
    }
    for (int64_t flat = 0; flat < Count(dims); ++flat) {
      int64_t src = 0;
      int64_t rest = flat;
      for (size_t a = 0; a < rank; ++a) {
        src += (rest / out_strides[a]) * s[a];
        rest %= out_strides[a];
      }
      float& o = out.values[flat];
      const float v = t->values[src];
      if (first || type == "Add" || type == "Sum") {
        o += v;
      } else if (type == "Sub") {
        o -= v;
      } else if (type == "Mul") {
        o *= v;
      } else if (type == "Div") {
        o /= v;
      } else if (type == "Max") {
        o = std::max(o, v);
      } else if (type == "Min") {
        o = std::min(o, v);
      }
    }
    first = false;
  }
  return out;
}

// Pads per the ONNX docs for 2-D windows; returns {top, left, bottom, right}.
std::vector<int64_t> Pads2d(const onnx::NodeProto& node, int64_t h, int64_t w,
                            const std::vector<int64_t>& k, const std::vector<int64_t>& s,
                            const std::vector<int64_t>& d) {
  std::vector<int64_t> pads = IntsAttr(node, "pads", {0, 0, 0, 0});
  const std::string auto_pad = StringAttr(node, "auto_pad", "NOTSET");
  if (auto_pad == "VALID") return {0, 0, 0, 0};
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const int64_t in[2] = {h, w};
    for (int a = 0; a < 2; ++a) {
      const int64_t out = (in[a] + s[a] - 1) / s[a];
      const int64_t total = std::max<int64_t>(0, (out - 1) * s[a] + (k[a] - 1) * d[a] + 1 - in[a]);
      const int64_t begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[a] = begin;
      pads[a + 2] = total - begin;
    }
  }
  return pads;
}

absl::StatusOr<FloatTensor> Conv(const onnx::NodeProto& node, const FloatTensor& x,
                                 const FloatTensor& w, const FloatTensor* b) {
  if (x.dims.size() != 4 || w.dims.size() != 4) return Unsupported(node, "non-2-D Conv");
  const int64_t n = x.dims[0], c = x.dims[1], h = x.dims[2], wd = x.dims[3];
  const int64_t m = w.dims[0], cg = w.dims[1], kh = w.dims[2], kw = w.dims[3];
  const int64_t group = IntAttr(node, "group", 1);
  if (c != cg * group || m % group != 0) {
    return absl::InvalidArgumentError(absl::StrCat(node.name(), ": channels and group disagree"));
  }
  const std::vector<int64_t> s = IntsAttr(node, "strides", {1, 1});
  const std::vector<int64_t> d = IntsAttr(node, "dilations", {1, 1});
  const std::vector<int64_t> p = Pads2d(node, h, wd, {kh, kw}, s, d);
  const int64_t oh = (h + p[0] + p[2] - (kh - 1) * d[0] - 1) / s[0] + 1;
  const int64_t ow = (wd + p[1] + p[3] - (kw - 1) * d[1] - 1) / s[1] + 1;
  FloatTensor y{{n, m, oh, ow}, std::vector<float>(n * m * oh * ow)};
  const int64_t m_per_group = m / group;
  for (int64_t in = 0; in < n; ++in) {
    for (int64_t om = 0; om < m; ++om) {
      const int64_t g = om / m_per_group;
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          double acc = b != nullptr ? b->values[om] : 0.0;
          for (int64_t ic = 0; ic < cg; ++ic) {
            const int64_t xc = g * cg + ic;
            for (int64_t ky = 0; ky < kh; ++ky) {
              const int64_t iy = oy * s[0] - p[0] + ky * d[0];
              if (iy < 0 || iy >= h) continue;
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t ix = ox * s[1] - p[1] + kx * d[1];
                if (ix < 0 || ix >= wd) continue;
                acc += static_cast<double>(x.values[((in * c + xc) * h + iy) * wd + ix]) *
                       w.values[((om * cg + ic) * kh + ky) * kw + kx];
              }
            }
          }
          y.values[((in * m + om) * oh + oy) * ow + ox] = static_cast<float>(acc);
        }
      }
    }
  }
  return y;
}

absl::StatusOr<FloatTensor> Pool(const onnx::NodeProto& node, const FloatTensor& x) {
  if (x.dims.size() != 4) return Unsupported(node, "non-2-D pooling");
  if (node.output_size() != 1) return Unsupported(node, "Indices output");
  const bool is_max = node.op_type() == "MaxPool";
  const int64_t n = x.dims[0], c = x.dims[1], h = x.dims[2], wd = x.dims[3];
  const std::vector<int64_t> k = IntsAttr(node, "kernel_shape", {});
  if (k.size() != 2) return Unsupported(node, "kernel_shape other than 2-D");
  const std::vector<int64_t> s = IntsAttr(node, "strides", {1, 1});
  const std::vector<int64_t> d =
      is_max ? IntsAttr(node, "dilations", {1, 1}) : std::vector<int64_t>{1, 1};
  const std::vector<int64_t> p = Pads2d(node, h, wd, k, s, d);
  const bool ceil_mode = IntAttr(node, "ceil_mode", 0) != 0;
  const bool include_pad = IntAttr(node, "count_include_pad", 0) != 0;
  auto out_size = [&](int64_t in, int a) {
    const int64_t span = in + p[a] + p[a + 2] - (k[a] - 1) * d[a] - 1;
    return (ceil_mode ? (span + s[a] - 1) / s[a] : span / s[a]) + 1;
  };
  const int64_t oh = out_size(h, 0), ow = out_size(wd, 1);
  FloatTensor y{{n, c, oh, ow}, std::vector<float>(n * c * oh * ow)};
  for (int64_t plane = 0; plane < n * c; ++plane) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t counted = 0;
        for (int64_t ky = 0; ky < k[0]; ++ky) {
          for (int64_t kx = 0; kx < k[1]; ++kx) {
            const int64_t iy = oy * s[0] - p[0] + ky * d[0];
            const int64_t ix = ox * s[1] - p[1] + kx * d[1];
            const bool inside = iy >= 0 && iy < h && ix >= 0 && ix < wd;
            // count_include_pad counts pad positions, not positions past
            // the padded input (ceil_mode windows).
            const bool in_padded = iy < h + p[2] && ix < wd + p[3];
            if (!inside) {
              if (include_pad && in_padded) ++counted;
              continue;
            }
            const double v = x.values[(plane * h + iy) * wd + ix];
            acc = is_max ? std::max(acc, v) : acc + v;
            ++counted;
          }
        }
        y.values[(plane * oh + oy) * ow + ox] =
            static_cast<float>(is_max ? acc : acc / std::max<int64_t>(counted, 1));
      }
    }
  }
  return y;
}

absl::StatusOr<FloatTensor> Concat(const onnx::NodeProto& node,
                                   const std::vector<const FloatTensor*>& in) {
  const int64_t rank = static_cast<int64_t>(in[0]->dims.size());
  int64_t axis = IntAttr(node, "axis", 0);
  if (axis < 0) axis += rank;
  std::vector<int64_t> dims = in[0]->dims;
  dims[axis] = 0;
  for (const auto* t : in) dims[axis] += t->dims[axis];
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= dims[i];
  FloatTensor y{dims, {}};
  y.values.reserve(Count(dims));
  for (int64_t o = 0; o < outer; ++o) {
    for (const auto* t : in) {
      const int64_t block = Count(t->dims) / outer;
      y.values.insert(y.values.end(), t->values.begin() + o * block,
                      t->values.begin() + (o + 1) * block);
    }
  }
  return y;
}

// Elements [begin, end) with `step` along `axis`.
FloatTensor SliceAxis(const FloatTensor& x, int64_t axis, int64_t begin, int64_t end,
                      int64_t step) {
  std::vector<int64_t> dims = x.dims;
  int64_t count = 0;
  for (int64_t i = begin; step > 0 ? i < end : i > end; i += step) ++count;
  dims[axis] = count;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x.dims[i];
  for (size_t i = axis + 1; i < x.dims.size(); ++i) inner *= x.dims[i];
  FloatTensor y{dims, {}};
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = begin; step > 0 ? i < end : i > end; i += step) {
      const int64_t start = (o * x.dims[axis] + i) * inner;
      y.values.insert(y.values.end(), x.values.begin() + start, x.values.begin() + start + inner);
    }
  }
  return y;
}

// Resize (opset 11+ operands X, roi, scales[, sizes]) as the ONNX operator
// docs define it. Output extent floor(in x scale), or `sizes` with scale =
// out / in. Each output index o maps back to x_original by
// coordinate_transformation_mode (half_pixel: (o + 0.5) / scale - 0.5;
// pytorch_half_pixel: the same, 0 for an output extent of 1; asymmetric:
// o / scale; align_corners: o (in - 1) / (out - 1)); nearest rounds it by
// nearest_mode and clamps to the input, linear interpolates between the two
// neighbours of x_original clamped to [0, in - 1] (the docs' edge padding),
// along every axis (n-linear). `sizes` may be null.
absl::StatusOr<FloatTensor> Resize(const onnx::NodeProto& node, const FloatTensor& x,
                                   std::vector<double> scales, const std::vector<int64_t>* sizes) {
  const std::string mode = StringAttr(node, "mode", "nearest");
  const std::string transform = StringAttr(node, "coordinate_transformation_mode", "half_pixel");
  const std::string nearest_mode = StringAttr(node, "nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear") {
    return Unsupported(node, absl::StrCat("mode \"", mode, "\""));
  }
  if (transform != "half_pixel" && transform != "pytorch_half_pixel" && transform != "asymmetric" &&
      transform != "align_corners") {
    return Unsupported(node, absl::StrCat("coordinate_transformation_mode \"", transform, "\""));
  }
  if (nearest_mode != "round_prefer_floor" && nearest_mode != "round_prefer_ceil" &&
      nearest_mode != "floor" && nearest_mode != "ceil") {
    return Unsupported(node, absl::StrCat("nearest_mode \"", nearest_mode, "\""));
  }
  if (IntAttr(node, "antialias", 0) != 0) return Unsupported(node, "antialias");
  if (Attr(node, "axes") != nullptr) return Unsupported(node, "axes");
  if (StringAttr(node, "keep_aspect_ratio_policy", "stretch") != "stretch") {
    return Unsupported(node, "keep_aspect_ratio_policy");
  }
  const size_t rank = x.dims.size();
  std::vector<int64_t> dims(rank);
  if (sizes != nullptr) {
    if (sizes->size() != rank) {
      return absl::InvalidArgumentError(absl::StrCat(node.name(), ": sizes do not match the rank"));
    }
    dims = *sizes;
    scales.resize(rank);
    for (size_t a = 0; a < rank; ++a) {
      scales[a] = static_cast<double>(dims[a]) / static_cast<double>(x.dims[a]);
    }
  } else {
    if (scales.size() != rank) {
      return absl::InvalidArgumentError(
          absl::StrCat(node.name(), ": scales do not match the rank"));
    }
    for (size_t a = 0; a < rank; ++a) {
      dims[a] = static_cast<int64_t>(std::floor(static_cast<double>(x.dims[a]) * scales[a]));
    }
  }
  for (size_t a = 0; a < rank; ++a) {
    if (!(scales[a] > 0) || dims[a] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(node.name(), ": bad scale on axis ", a));
    }
  }
  // Per axis and output index: the two input indices read and the weight of
  // the second (0 for nearest).
  struct Tap {
    int64_t lo = 0;
    int64_t hi = 0;
    double w = 0;
  };
  std::vector<std::vector<Tap>> taps(rank);
  for (size_t a = 0; a < rank; ++a) {
    const int64_t in = x.dims[a];
    for (int64_t o = 0; o < dims[a]; ++o) {
      double orig = 0;
      if (transform == "half_pixel" || (transform == "pytorch_half_pixel" && dims[a] > 1)) {
        orig = (o + 0.5) / scales[a] - 0.5;
      } else if (transform == "asymmetric") {
        orig = o / scales[a];
      } else if (transform == "align_corners") {
        orig = dims[a] == 1 ? 0.0 : static_cast<double>(o) * (in - 1) / (dims[a] - 1);
      }
      Tap tap;
      if (mode == "nearest") {
        double index = nearest_mode == "floor"  ? std::floor(orig)
                       : nearest_mode == "ceil" ? std::ceil(orig)
                       // Halves go down / up; everything else to the nearest.
                       : nearest_mode == "round_prefer_floor" ? std::ceil(orig - 0.5)
                                                              : std::floor(orig + 0.5);
        tap.lo = tap.hi = std::clamp<int64_t>(static_cast<int64_t>(index), 0, in - 1);
      } else {
        const double clamped = std::clamp<double>(orig, 0.0, static_cast<double>(in - 1));
        tap.lo = static_cast<int64_t>(std::floor(clamped));
        tap.hi = std::min<int64_t>(tap.lo + 1, in - 1);
        tap.w = clamped - static_cast<double>(tap.lo);
      }
      taps[a].push_back(tap);
    }
  }
  FloatTensor y{dims, std::vector<float>(Count(dims))};
  const std::vector<int64_t> xs = Strides(x.dims), ys = Strides(dims);
  for (int64_t flat = 0; flat < Count(dims); ++flat) {
    double acc = 0;
    // Every corner of the cell around x_original: bit a picks hi on axis a.
    for (uint32_t corner = 0; corner < (1u << rank); ++corner) {
      double weight = 1;
      int64_t src = 0;
      for (size_t a = 0; a < rank && weight != 0; ++a) {
        const Tap& tap = taps[a][(flat / ys[a]) % dims[a]];
        const bool hi = (corner >> a) & 1u;
        weight *= hi ? tap.w : 1 - tap.w;
        src += (hi ? tap.hi : tap.lo) * xs[a];
      }
      if (weight != 0) acc += weight * x.values[src];
    }
    y.values[flat] = static_cast<float>(acc);
  }
  return y;
}

// The model-local function a node calls (ONNX IR 8), or null.
const onnx::FunctionProto* LocalFunction(const onnx::ModelProto& model,
                                         const onnx::NodeProto& node) {
  for (const onnx::FunctionProto& f : model.functions()) {
    if (f.name() == node.op_type() && f.domain() == node.domain()) return &f;
  }
  return nullptr;
}

// A call of `f` by `node`: its body run as a graph of its own, fed the
// node's float operands under the function's formal names and given its
// integer initializers as constants under those names (the function's scope
// is its own, as ONNX defines it).
absl::StatusOr<std::vector<FloatTensor>> RunFunction(const onnx::ModelProto& model,
                                                     const onnx::FunctionProto& f,
                                                     const onnx::NodeProto& node,
                                                     const TensorMap& values) {
  if (node.input_size() > f.input_size() || node.output_size() > f.output_size()) {
    return Unsupported(node, "more operands than its function declares");
  }
  onnx::ModelProto body;
  *body.mutable_functions() = model.functions();
  TensorMap feeds;
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) continue;
    auto it = values.find(node.input(i));
    if (it != values.end()) {
      feeds[f.input(i)] = it->second;
      continue;
    }
    // An integer initializer (Pad's pads, Slice's starts): a constant of
    // the body under the formal name.
    const onnx::TensorProto* constant = nullptr;
    for (const onnx::TensorProto& t : model.graph().initializer()) {
      if (t.name() == node.input(i) && t.data_type() != onnx::TensorProto::FLOAT) constant = &t;
    }
    if (constant == nullptr) return Unsupported(node, absl::StrCat("operand ", node.input(i)));
    onnx::TensorProto* renamed = body.mutable_graph()->add_initializer();
    *renamed = *constant;
    renamed->set_name(f.input(i));
  }
  for (const onnx::NodeProto& n : f.node()) *body.mutable_graph()->add_node() = n;
  for (const std::string& out : f.output()) body.mutable_graph()->add_output()->set_name(out);
  absl::StatusOr<TensorMap> results = RunReference(body, feeds);
  if (!results.ok()) return results.status();
  std::vector<FloatTensor> outs;
  for (int i = 0; i < node.output_size(); ++i) outs.push_back((*results)[f.output(i)]);
  return outs;
}

}  // namespace

absl::StatusOr<TensorMap> RunReference(const onnx::ModelProto& model, const TensorMap& feeds) {
  const onnx::GraphProto& graph = model.graph();
  TensorMap values = feeds;
  std::map<std::string, std::vector<int64_t>> ints;
  for (const onnx::TensorProto& t : graph.initializer()) {
    if (values.count(t.name())) continue;
    if (t.data_type() == onnx::TensorProto::FLOAT) {
      absl::StatusOr<FloatTensor> f = FloatsOf(t);
      if (f.ok()) values[t.name()] = *std::move(f);
    } else if (absl::StatusOr<std::vector<int64_t>> v = IntsOf(t); v.ok()) {
      ints[t.name()] = *std::move(v);
    }
  }
  auto input = [&](const onnx::NodeProto& node, int i) -> absl::StatusOr<const FloatTensor*> {
    if (i >= node.input_size() || node.input(i).empty()) return nullptr;
    auto it = values.find(node.input(i));
    if (it == values.end()) {
      return absl::InvalidArgumentError(absl::StrCat(node.op_type(), " \"", node.name(),
                                                     "\" reads \"", node.input(i),
                                                     "\", which has no value yet"));
    }
    return &it->second;
  };
  auto int_input = [&](const onnx::NodeProto& node, int i) -> std::optional<std::vector<int64_t>> {
    if (i >= node.input_size() || node.input(i).empty()) return std::nullopt;
    auto it = ints.find(node.input(i));
    if (it == ints.end()) return std::nullopt;
    return it->second;
  };

  for (const onnx::NodeProto& node : graph.node()) {
    const std::string& type = node.op_type();
    std::vector<FloatTensor> outs;
    if (const onnx::FunctionProto* f = LocalFunction(model, node)) {
      absl::StatusOr<std::vector<FloatTensor>> results = RunFunction(model, *f, node, values);
      if (!results.ok()) return results.status();
      for (size_t i = 0; i < results->size(); ++i) values[node.output(i)] = (*results)[i];
      continue;
    }
    if (type == "ConstantOfShape") {
      std::optional<std::vector<int64_t>> shape = int_input(node, 0);
      if (!shape) return Unsupported(node, "non-constant shape");
      const auto* value = Attr(node, "value");
      float fill = 0.0f;
      if (value != nullptr) {
        absl::StatusOr<FloatTensor> f = FloatsOf(value->t());
        if (!f.ok() || f->values.empty()) return Unsupported(node, "value");
        fill = f->values[0];
      }
      values[node.output(0)] = FloatTensor{*shape, std::vector<float>(Count(*shape), fill)};
      continue;
    }
    if (type == "Constant") {
      const auto* value = Attr(node, "value");
      if (value == nullptr) return Unsupported(node, "Constant without value");
      if (value->t().data_type() == onnx::TensorProto::FLOAT) {
        absl::StatusOr<FloatTensor> f = FloatsOf(value->t());
        if (!f.ok()) return f.status();
        values[node.output(0)] = *std::move(f);
      } else {
        absl::StatusOr<std::vector<int64_t>> v = IntsOf(value->t());
        if (!v.ok()) return v.status();
        ints[node.output(0)] = *std::move(v);
      }
      continue;
    }
    std::vector<const FloatTensor*> in;
    const bool int_operands =
        type == "Slice" || type == "Split" || type == "Pad" || type == "Resize";
    for (int i = 0; i < node.input_size(); ++i) {
      if (int_operands && i > 0) break;
      absl::StatusOr<const FloatTensor*> t = input(node, i);
      if (!t.ok()) return t.status();
      in.push_back(*t);
    }
    if (in.empty() || in[0] == nullptr) return Unsupported(node, "missing first input");

    if (type == "Conv") {
      if (in.size() < 2 || in[1] == nullptr) return Unsupported(node, "Conv without W");
      absl::StatusOr<FloatTensor> y = Conv(node, *in[0], *in[1], in.size() > 2 ? in[2] : nullptr);
      if (!y.ok()) return y.status();
      outs.push_back(*std::move(y));
    } else if (type == "MaxPool" || type == "AveragePool") {
      absl::StatusOr<FloatTensor> y = Pool(node, *in[0]);
      if (!y.ok()) return y.status();
      outs.push_back(*std::move(y));
    } else if (type == "Relu") {
      FloatTensor y = *in[0];
      for (float& v : y.values) v = std::max(v, 0.0f);
      outs.push_back(std::move(y));
    } else if (type == "Sigmoid" || type == "HardSigmoid" || type == "HardSwish" ||
               type == "LeakyRelu") {
      FloatTensor y = *in[0];
      for (float& v : y.values) {
        const double x = v;
        if (type == "Sigmoid") {
          v = static_cast<float>(1.0 / (1.0 + std::exp(-x)));
        } else if (type == "LeakyRelu") {
          const double alpha = Attr(node, "alpha") != nullptr ? Attr(node, "alpha")->f() : 0.01;
          v = static_cast<float>(x >= 0 ? x : alpha * x);
        } else {
          // HardSigmoid defaults alpha 0.2, beta 0.5; HardSwish is
          // x * HardSigmoid(x) with alpha 1/6.
          const bool swish = type == "HardSwish";
          const double alpha = !swish && Attr(node, "alpha") != nullptr ? Attr(node, "alpha")->f()
                                                                        : (swish ? 1.0 / 6 : 0.2);
          const double beta =
              !swish && Attr(node, "beta") != nullptr ? Attr(node, "beta")->f() : 0.5;
          const double hs = std::clamp(alpha * x + beta, 0.0, 1.0);
          v = static_cast<float>(swish ? x * hs : hs);
        }
      }
      outs.push_back(std::move(y));
    } else if (type == "Gelu" || type == "Mish" || type == "Swish" || type == "Tanh" ||
               type == "Elu" || type == "Selu" || type == "Softplus" || type == "Softsign") {
      FloatTensor y = *in[0];
      for (float& v : y.values) v = static_cast<float>(UnaryActivation(node, v));
      outs.push_back(std::move(y));
    } else if (type == "Clip") {
      // min / max: opset-11 operands (float initializers or Constants), else
      // opset-6 attributes.
      double lo = Attr(node, "min") != nullptr ? Attr(node, "min")->f()
                                               : -std::numeric_limits<double>::infinity();
      double hi = Attr(node, "max") != nullptr ? Attr(node, "max")->f()
                                               : std::numeric_limits<double>::infinity();
      if (in.size() > 1 && in[1] != nullptr) lo = in[1]->values.at(0);
      if (in.size() > 2 && in[2] != nullptr) hi = in[2]->values.at(0);
      FloatTensor y = *in[0];
      for (float& v : y.values) v = static_cast<float>(std::clamp<double>(v, lo, hi));
      outs.push_back(std::move(y));
    } else if (type == "Identity") {
      outs.push_back(*in[0]);
    } else if (type == "Add" || type == "Sum" || type == "Sub" || type == "Mul" || type == "Div" ||
               type == "Max" || type == "Min") {
      const bool binary = type == "Add" || type == "Sub" || type == "Mul" || type == "Div";
      if (binary && in.size() != 2) return Unsupported(node, "arity");
      absl::StatusOr<FloatTensor> y = Broadcast(node, in);
      if (!y.ok()) return y.status();
      outs.push_back(*std::move(y));
    } else if (type == "Concat") {
      absl::StatusOr<FloatTensor> y = Concat(node, in);
      if (!y.ok()) return y.status();
      outs.push_back(*std::move(y));
    } else if (type == "BatchNormalization") {
      if (in.size() != 5 || node.output_size() != 1) return Unsupported(node, "training mode");
      const double eps = Attr(node, "epsilon") != nullptr ? Attr(node, "epsilon")->f() : 1e-5;
      FloatTensor y = *in[0];
      const int64_t c = y.dims[1];
      const int64_t inner = Count(y.dims) / (y.dims[0] * c);
      for (int64_t i = 0; i < Count(y.dims); ++i) {
        const int64_t ch = (i / inner) % c;
        const double normalized =
            (y.values[i] - in[3]->values[ch]) / std::sqrt(in[4]->values[ch] + eps);
        y.values[i] = static_cast<float>(normalized * in[1]->values[ch] + in[2]->values[ch]);
      }
      outs.push_back(std::move(y));
    } else if (type == "Split") {
      const FloatTensor& x = *in[0];
      const int64_t rank = static_cast<int64_t>(x.dims.size());
      int64_t axis = IntAttr(node, "axis", 0);
      if (axis < 0) axis += rank;
      std::vector<int64_t> sizes = IntsAttr(node, "split", {});
      if (std::optional<std::vector<int64_t>> s = int_input(node, 1)) sizes = *s;
      if (sizes.empty()) {  // Split-18's num_outputs: equal chunks, the last smaller
        const int64_t n = node.output_size();
        const int64_t chunk = (x.dims[axis] + n - 1) / n;
        sizes.assign(n, chunk);
        sizes.back() = x.dims[axis] - chunk * (n - 1);
      }
      int64_t begin = 0;
      for (int64_t size : sizes) {
        outs.push_back(SliceAxis(x, axis, begin, begin + size, 1));
        begin += size;
      }
    } else if (type == "GlobalAveragePool") {
      const FloatTensor& x = *in[0];
      const int64_t planes = x.dims[0] * x.dims[1];
      const int64_t inner = Count(x.dims) / planes;
      std::vector<int64_t> dims(x.dims.size(), 1);
      dims[0] = x.dims[0];
      dims[1] = x.dims[1];
      FloatTensor y{dims, std::vector<float>(planes)};
      for (int64_t p = 0; p < planes; ++p) {
        double acc = 0;
        for (int64_t i = 0; i < inner; ++i) acc += x.values[p * inner + i];
        y.values[p] = static_cast<float>(acc / inner);
      }
      outs.push_back(std::move(y));
    } else if (type == "Flatten") {
      FloatTensor y = *in[0];
      int64_t axis = IntAttr(node, "axis", 1);
      if (axis < 0) axis += static_cast<int64_t>(y.dims.size());
      int64_t outer = 1;
      for (int64_t i = 0; i < axis; ++i) outer *= y.dims[i];
      y.dims = {outer, Count(y.dims) / outer};
      outs.push_back(std::move(y));
    } else if (type == "Gemm") {
      if (in.size() < 2 || in[1] == nullptr) return Unsupported(node, "Gemm without B");
      const FloatTensor& a = *in[0];
      const FloatTensor& b = *in[1];
      const bool ta = IntAttr(node, "transA", 0) != 0, tb = IntAttr(node, "transB", 0) != 0;
      const float alpha = Attr(node, "alpha") != nullptr ? Attr(node, "alpha")->f() : 1.0f;
      const float beta = Attr(node, "beta") != nullptr ? Attr(node, "beta")->f() : 1.0f;
      const int64_t m = ta ? a.dims[1] : a.dims[0], k = ta ? a.dims[0] : a.dims[1];
      const int64_t n = tb ? b.dims[0] : b.dims[1];
      FloatTensor y{{m, n}, std::vector<float>(m * n)};
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double acc = 0;
          for (int64_t l = 0; l < k; ++l) {
            acc += static_cast<double>(ta ? a.values[l * m + i] : a.values[i * k + l]) *
                   (tb ? b.values[j * k + l] : b.values[l * n + j]);
          }
          double c = 0;
          if (in.size() > 2 && in[2] != nullptr) {
            const FloatTensor& ct = *in[2];
            // C broadcasts: scalar, [n], [1, n], [m, 1] or [m, n].
            const int64_t rows = ct.dims.size() == 2 ? ct.dims[0] : 1;
            const int64_t cols = ct.dims.empty() ? 1 : ct.dims.back();
            c = ct.values[(rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)];
          }
          y.values[i * n + j] = static_cast<float>(alpha * acc + beta * c);
        }
      }
      outs.push_back(std::move(y));
    } else if (type == "Pad") {
      if (StringAttr(node, "mode", "constant") != "constant") return Unsupported(node, "mode");
      std::vector<int64_t> pads = IntsAttr(node, "pads", {});
      if (node.input_size() > 1) {
        std::optional<std::vector<int64_t>> p = int_input(node, 1);
        if (!p) return Unsupported(node, "non-constant pads");
        pads = *p;
      }
      float fill = 0.0f;
      if (node.input_size() > 2 && !node.input(2).empty()) {
        absl::StatusOr<const FloatTensor*> v = input(node, 2);
        if (!v.ok()) return v.status();
        fill = (*v)->values.at(0);
      }
      const FloatTensor& x = *in[0];
      const size_t rank = x.dims.size();
      if (pads.size() != 2 * rank) return Unsupported(node, "pads length");
      std::vector<int64_t> dims(rank);
      for (size_t a = 0; a < rank; ++a) dims[a] = x.dims[a] + pads[a] + pads[a + rank];
      FloatTensor y{dims, std::vector<float>(Count(dims), fill)};
      const std::vector<int64_t> xs = Strides(x.dims), ys = Strides(dims);
      // Each input element lands at its index shifted by the leading pads
      // (negative pads crop).
      for (int64_t flat = 0; flat < Count(x.dims); ++flat) {
        int64_t dst = 0;
        bool inside = true;
        for (size_t a = 0; a < rank; ++a) {
          const int64_t at = (flat / xs[a]) % x.dims[a] + pads[a];
          if (at < 0 || at >= dims[a]) inside = false;
          dst += at * ys[a];
        }
        if (inside) y.values[dst] = x.values[flat];
      }
      outs.push_back(std::move(y));
    } else if (type == "Resize") {
      // Resize-10 (X, scales) rounds and maps coordinates its own way.
      if (node.input_size() < 3) return Unsupported(node, "the opset-10 form (X, scales)");
      std::optional<std::vector<int64_t>> sizes = int_input(node, 3);
      if (node.input_size() > 3 && !node.input(3).empty() && !sizes) {
        return Unsupported(node, "non-constant sizes");
      }
      std::vector<double> scales;
      if (!sizes) {
        absl::StatusOr<const FloatTensor*> s = input(node, 2);
        if (!s.ok()) return s.status();
        if (*s == nullptr) {
          return absl::InvalidArgumentError(
              absl::StrCat(node.name(), ": neither scales nor sizes given"));
        }
        scales.assign((*s)->values.begin(), (*s)->values.end());
      }
      absl::StatusOr<FloatTensor> y =
          Resize(node, *in[0], std::move(scales), sizes ? &*sizes : nullptr);
      if (!y.ok()) return y.status();
      outs.push_back(*std::move(y));
    } else if (type == "Slice") {
      FloatTensor y = *in[0];
      const int64_t rank = static_cast<int64_t>(y.dims.size());
      std::vector<int64_t> starts = IntsAttr(node, "starts", {});
      std::vector<int64_t> ends = IntsAttr(node, "ends", {});
      std::vector<int64_t> axes = IntsAttr(node, "axes", {});
      std::vector<int64_t> steps;
      if (node.input_size() > 1) {
        std::optional<std::vector<int64_t>> s = int_input(node, 1), e = int_input(node, 2);
        if (!s || !e) return Unsupported(node, "non-constant starts/ends");
        starts = *s;
        ends = *e;
        axes = int_input(node, 3).value_or(std::vector<int64_t>{});
        steps = int_input(node, 4).value_or(std::vector<int64_t>{});
      }
      if (axes.empty()) {
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
      }
      if (steps.empty()) steps.assign(starts.size(), 1);
      for (size_t i = 0; i < starts.size(); ++i) {
        const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
        const int64_t size = y.dims[axis];
        const int64_t step = steps[i];
        auto clamp = [&](int64_t v) {
          if (v < 0) v += size;
          if (step > 0) return std::clamp<int64_t>(v, 0, size);
          return std::clamp<int64_t>(v, -1, size - 1);
        };
        y = SliceAxis(y, axis, clamp(starts[i]), clamp(ends[i]), step);
      }
      outs.push_back(std::move(y));
    } else {
      return Unsupported(node, "op type");
    }
    if (static_cast<int>(outs.size()) != node.output_size()) {
      return Unsupported(node, "output count");
    }
    for (int i = 0; i < node.output_size(); ++i) values[node.output(i)] = std::move(outs[i]);
  }
  TensorMap result;
  for (const onnx::ValueInfoProto& output : graph.output()) {
    auto it = values.find(output.name());
    if (it == values.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph output \"", output.name(), "\" was never computed"));
    }
    result[output.name()] = it->second;
  }
  return result;
}

}  // namespace ordo
