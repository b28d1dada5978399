// Element-wise operators: arithmetic and comparisons with broadcasting, activations, Cast.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "base/error.hpp"
#include "base/thread_pool.hpp"
#include "kernels/ops.hpp"
#include "onnx/ops/broadcast.hpp"
#include "onnx/ops/op.hpp"

namespace minnow::onnx {

std::vector<int64_t> broadcast_shapes(const Node& n, const std::vector<std::vector<int64_t>>& shapes) {
  size_t rank = 0;
  for (auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (auto& s : shapes) {
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t& o = out[rank - s.size() + k];
      int64_t d = s[k];
      if (d == o || d == 1) continue;
      if (o == 1) { o = d; continue; }
      n.fail("shapes cannot be broadcast together (dimension " + std::to_string(d) + " against " + std::to_string(o) + ")");
    }
  }
  return out;
}

namespace {

template <class F>
void float_type(const Node& n, DataType t, F&& f) {
  if (t == DataType::Float) f(float{});
  else if (t == DataType::Double) f(double{});
  else n.fail(std::string("element type ") + dtype_name(t) + " is not supported (float32 or float64 only)");
}

void same_types(const Node& n, std::span<const Tensor* const> in) {
  for (auto* t : in)
    if (t && t->dtype() != in[0]->dtype()) n.fail("inputs of different element types");
}

// out = op(a, b) with broadcasting; R is the result's element type. Large outputs are split
// over the pool by slices of their first dimension longer than 1.
template <class T, class R, class Op>
void binary(const Tensor& a, const Tensor& b, Tensor& out, DataType rtype, const Node& n, Op op, ThreadPool* pool = nullptr) {
  auto shape = broadcast_shapes(n, {a.shape(), b.shape()});
  out.resize(rtype, shape);
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  R* po = out.data<R>();
  if (a.shape() == b.shape()) {
    const int64_t total = out.size(), chunk = 32768;
    auto body = [&](int64_t c, int) {
      for (int64_t i = c * chunk, e = std::min(total, i + chunk); i < e; ++i) po[i] = op(pa[i], pb[i]);
    };
    if (pool && total > chunk) pool->parallel_for((total + chunk - 1) / chunk, body);
    else
      for (int64_t i = 0; i < total; ++i) po[i] = op(pa[i], pb[i]);
    return;
  }
  // Input shapes padded to the output's rank.
  auto padded = [&](const std::vector<int64_t>& s) {
    std::vector<int64_t> p(shape.size() - s.size(), 1);
    p.insert(p.end(), s.begin(), s.end());
    return p;
  };
  std::vector<int64_t> as = padded(a.shape()), bs = padded(b.shape());
  int d0 = 0;
  while (d0 < static_cast<int>(shape.size()) && shape[d0] == 1) ++d0;
  const bool split = pool && out.size() > 65536 && d0 < static_cast<int>(shape.size()) && shape[d0] > 1;
  const int64_t slices = split ? shape[d0] : 1;
  std::vector<int64_t> sub = shape, asub = as, bsub = bs;
  const int64_t a_step = split && as[d0] > 1 ? strides_of(as)[d0] : 0, b_step = split && bs[d0] > 1 ? strides_of(bs)[d0] : 0;
  if (split) sub[d0] = asub[d0] = bsub[d0] = 1;
  const int64_t per_slice = split ? out.size() / slices : out.size();
  auto slice = [&](int64_t t, int) {
    R* o = po + t * per_slice;
    const T* xa = pa + t * a_step;
    const T* xb = pb + t * b_step;
    broadcast_walk<2>(sub, {&asub, &bsub}, [&](auto off, auto step, int64_t count) {
      const T* x = xa + off[0];
      const T* y = xb + off[1];
      if (step[0] == 1 && step[1] == 1) {
        for (int64_t i = 0; i < count; ++i) o[i] = op(x[i], y[i]);
      } else if (step[0] == 1 && step[1] == 0) {
        const T yv = *y;
        for (int64_t i = 0; i < count; ++i) o[i] = op(x[i], yv);
      } else if (step[0] == 0 && step[1] == 1) {
        const T xv = *x;
        for (int64_t i = 0; i < count; ++i) o[i] = op(xv, y[i]);
      } else {
        for (int64_t i = 0; i < count; ++i) o[i] = op(x[i * step[0]], y[i * step[1]]);
      }
      o += count;
    });
  };
  if (split) pool->parallel_for(slices, slice);
  else slice(0, 0);
}

template <class Op>
OpFn arithmetic() {
  return [](const Node& n, std::span<const Tensor* const> in, std::span<Tensor* const> out, OpContext& ctx) {
    const Tensor& a = need(n, in, 0);
    const Tensor& b = need(n, in, 1);
    if (a.dtype() != b.dtype()) n.fail("inputs of different element types");
    numeric_type(n, a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      binary<T, T>(a, b, *out[0], a.dtype(), n, [](T x, T y) { return static_cast<T>(Op{}(x, y)); }, ctx.pool);
    });
  };
}

template <class Op>
OpFn comparison() {
  return [](const Node& n, std::span<const Tensor* const> in, std::span<Tensor* const> out, OpContext&) {
    const Tensor& a = need(n, in, 0);
    const Tensor& b = need(n, in, 1);
    if (a.dtype() != b.dtype()) n.fail("inputs of different element types");
    if (a.dtype() == DataType::Bool) {
      binary<bool, bool>(a, b, *out[0], DataType::Bool, n, [](bool x, bool y) { return Op{}(x, y); });
      return;
    }
    numeric_type(n, a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      binary<T, bool>(a, b, *out[0], DataType::Bool, n, [](T x, T y) { return Op{}(x, y); });
    });
  };
}

template <class Op>
OpFn logical() {
  return [](const Node& n, std::span<const Tensor* const> in, std::span<Tensor* const> out, OpContext&) {
    const Tensor& a = need(n, in, 0);
    const Tensor& b = need(n, in, 1);
    if (a.dtype() != DataType::Bool || b.dtype() != DataType::Bool) n.fail("expects bool inputs");
    binary<bool, bool>(a, b, *out[0], DataType::Bool, n, [](bool x, bool y) { return Op{}(x, y); });
  };
}

struct AddOp { template <class T> auto operator()(T a, T b) const { return a + b; } };
struct SubOp { template <class T> auto operator()(T a, T b) const { return a - b; } };
struct MulOp { template <class T> auto operator()(T a, T b) const { return a * b; } };
struct DivOp {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return T{0};  // ONNX leaves x / 0 undefined
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));  // MIN / -1 would trap
      return static_cast<T>(a / b);
    }
    else return a / b;
  }
};
struct PowOp { template <class T> T operator()(T a, T b) const { return static_cast<T>(std::pow(static_cast<double>(a), static_cast<double>(b))); } };
struct MaxOp { template <class T> T operator()(T a, T b) const { if constexpr (std::is_floating_point_v<T>) { if (std::isnan(a) || std::isnan(b)) return a + b; } return a < b ? b : a; } };
struct MinOp { template <class T> T operator()(T a, T b) const { if constexpr (std::is_floating_point_v<T>) { if (std::isnan(a) || std::isnan(b)) return a + b; } return b < a ? b : a; } };
// Mod: the divisor's sign (Python's %), or with fmod = 1 the dividend's (C's fmod / %).
template <bool kFmod>
struct ModOp {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return 0;  // MIN % -1 would trap
      T r = static_cast<T>(a % b);
      return (!kFmod && r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
    } else {
      return std::fmod(a, b);
    }
  }
};

void run_mod(const Node& n, std::span<const Tensor* const> in, std::span<Tensor* const> out, OpContext& ctx) {
  const bool fmod = n.get_int("fmod", 0) != 0;
  const DataType t = need(n, in, 0).dtype();
  if (!fmod && (t == DataType::Float || t == DataType::Double)) n.fail("floating-point Mod needs fmod = 1");
  (fmod ? arithmetic<ModOp<true>>() : arithmetic<ModOp<false>>())(n, in, out, ctx);
}
struct EqOp { template <class T> bool operator()(T a, T b) const { return a == b; } };
struct LtOp { template <class T> bool operator()(T a, T b) const { return a < b; } };
struct GtOp { template <class T> bool operator()(T a, T b) const { return a > b; } };
struct LeOp { template <class T> bool operator()(T a, T b) const { return a <= b; } };
struct GeOp { template <class T> bool operator()(T a, T b) const { return a >= b; } };
struct AndOp { bool operator()(bool a, bool b) const { return a && b; } };
struct OrOp { bool operator()(bool a, bool b) const { return a || b; } };
struct XorOp { bool operator()(bool a, bool b) const { return a != b; } };

void run_pow(const Node& n, std::span<const Tensor* const> in, std::span<Tensor* const> out, OpContext&) {
  const Tensor& a = need(n, in, 0);
  const Tensor& b = need(n, in, 1);
  // A float raised to a constant 2 or 0.5 (LayerNorm spelled out): x * x and sqrt give the
  // same floats as pow in double, without its cost.
  if (a.dtype() == DataType::Float && b.dtype() == DataType::Float && b.size() == 1 && b.rank() <= a.rank() &&
      (b.data<float>()[0] == 2.0f || b.data<float>()[0] == 0.5f)) {
    const bool square = b.data<float>()[0] == 2.0f;
    out[0]->resize(DataType::Float, a.shape());
    const float* pa = a.data<float>();
    float* po = out[0]->data<float>();
    for (int64_t i = 0; i < a.size(); ++i) po[i] = square ? pa[i] * pa[i] : std::sqrt(pa[i]);
    return;
  }
  // The exponent may have another type; it is read as double.
  auto exponent = [&](auto base_tag) {
    using T = decltype(base_tag);
    numeric_type(n, b.dtype(), [&](auto exp_tag) {
      using E = decltype(exp_tag);
      auto shape = broadcast_shapes(n, {a.shape(), b.shape()});
      out[0]->resize(a.dtype(), shape);
      const T* pa = a.data<T>();
      const E* pb = b.data<E>();
      T* po = out[0]->data<T>();
      broadcast_walk<2>(shape, {&a.shape(), &b.shape()}, [&](auto off, auto step, int64_t count) {
        for (int64_t i = 0; i < count; ++i)
          po[i] = static_cast<T>(std::pow(static_cast<double>(pa[off[0] + i * step[0]]), static_cast<double>(pb[off[1] + i * step[1]])));
        po += count;
      });
    });
  };
  numeric_type(n, a.dtype(), exponent);
}

// Variadic Max / Min / Sum / Mean: folded pairwise.
template <class Op, bool kMean = false>
OpFn variadic() {
  return [](const Node& n, std::span<const Tensor* const> in, std::span<Tensor* const> out, OpContext& ctx) {
    if (in.empty()) n.fail("needs at least one input");
    same_types(n, in);
    Tensor acc = need(n, in, 0);
    for (size_t i = 1; i < in.size(); ++i) {
      Tensor next;
      const Tensor* pair[2] = {&acc, &need(n, in, i)};
      Tensor* res[1] = {&next};
      arithmetic<Op>()(n, std::span<const Tensor* const>(pair, 2), std::span<Tensor* const>(res, 1), ctx);
      acc = std::move(next);
    }
    if constexpr (kMean) {
      float_type(n, acc.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for (int64_t i = 0; i < acc.size(); ++i) acc.data<T>()[i] /= static_cast<T>(in.size());
      });
    }
    *out[0] = std::move(acc);
  };
}

// --- unary
// y as x, each chunk of 16384 values mapped by f(src, dst, count), the chunks over the pool.
template <class T, class F>
void map_chunks(const Tensor& x, Tensor& y, OpContext& ctx, F f) {
  y.resize(x.dtype(), x.shape());
  const T* px = x.data<T>();
  T* py = y.data<T>();
  const int64_t n = x.size(), chunk = 16384, chunks = (n + chunk - 1) / chunk;
  auto run = [&](int64_t c, int) { f(px + c * chunk, py + c * chunk, std::min(chunk, n - c * chunk)); };
  if (ctx.pool && chunks > 1) ctx.pool->parallel_for(chunks, run);
  else
    for (int64_t c = 0; c < chunks; ++c) run(c, 0);
}

// y[i] = f(x[i]).
template <class T, class F>
void map_unary(const Tensor& x, Tensor& y, OpContext& ctx, F f) {
  map_chunks<T>(x, y, ctx, [&f](const T* src, T* dst, int64_t count) {
    for (int64_t i = 0; i < count; ++i) dst[i] = f(src[i]);
  });
}

#define MINNOW_FLOAT_UNARY(NAME, EXPR)                                                                 \
  void run_##NAME(const Node& n, std::span<const Tensor* const> in, std::span<Tensor* const> out,       \
                  OpContext& ctx) {                                                                     \
    const Tensor& x = need(n, in, 0);                                                                   \
    float_type(n, x.dtype(), [&](auto tag) {                                                           \
      using T = decltype(tag);                                                                          \
      map_unary<T>(x, *out[0], ctx, [&](T v) -> T { return EXPR; });                                    \
    });                                                                                                 \
  }

MINNOW_FLOAT_UNARY(relu, v > 0 ? v : T(0))
// Sigmoid: floats through the kernel table's vectorized sigmoid (a 736 x 736 map took 7 ms
// one std::exp at a time), in chunks over the pool; doubles by the formula.
void run_sigmoid(const Node& n, std::span<const Tensor* const> in, std::span<Tensor* const> out, OpContext& ctx) {
  const Tensor& x = need(n, in, 0);
  float_type(n, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>) {
      map_chunks<float>(x, *out[0], ctx, kernels::active().sigmoid);
    } else {
      map_unary<T>(x, *out[0], ctx, [](T v) -> T { return v >= 0 ? T(1) / (T(1) + std::exp(-v)) : std::exp(v) / (T(1) + std::exp(v)); });
    }
  });
}
MINNOW_FLOAT_UNARY(tanh, std::tanh(v))
MINNOW_FLOAT_UNARY(exp, std::exp(v))
MINNOW_FLOAT_UNARY(log, std::log(v))
MINNOW_FLOAT_UNARY(sqrt, std::sqrt(v))
MINNOW_FLOAT_UNARY(reciprocal, T(1) / v)
MINNOW_FLOAT_UNARY(floor, std::floor(v))
MINNOW_FLOAT_UNARY(ceil, std::ceil(v))
MINNOW_FLOAT_UNARY(round, std::nearbyint(v))
MINNOW_FLOAT_UNARY(erf, std::erf(v))
MINNOW_FLOAT_UNARY(sin, std::sin(v))
MINNOW_FLOAT_UNARY(cos, std::cos(v))
MINNOW_FLOAT_UNARY(softplus, v > 20 ? v : std::log1p(std::exp(v)))
MINNOW_FLOAT_UNARY(softsign, v / (T(1) + std::abs(v)))
MINNOW_FLOAT_UNARY(hardsigmoid, std::max(T(0), std::min(T(1), T(n.get_float("alpha", 0.2f)) * v + T(n.get_float("beta", 0.5f)))))
MINNOW_FLOAT_UNARY(leakyrelu, v >= 0 ? v : T(n.get_float("alpha", 0.01f)) * v)
MINNOW_FLOAT_UNARY(elu, v >= 0 ? v : T(n.get_float("alpha", 1.0f)) * (std::exp(v) - T(1)))
MINNOW_FLOAT_UNARY(selu, T(n.get_float("gamma", 1.05070102214813232421875f)) *
                             (v > 0 ? v : T(n.get_float("alpha", 1.67326319217681884765625f)) * (std::exp(v) - T(1))))
MINNOW_FLOAT_UNARY(thresholdedrelu, v > T(n.get_float("alpha", 1.0f)) ? v : T(0))
MINNOW_FLOAT_UNARY(gelu, n.get_string("approximate", "none") == "tanh"
                             ? T(0.5) * v * (T(1) + std::tanh(T(0.7978845608028654) * (v + T(0.044715) * v * v * v)))
                             : T(0.5) * v * (T(1) + std::erf(v * T(0.7071067811865476))))
#undef MINNOW_FLOAT_UNARY

template <class F>
OpFn numeric_unary() {
  return [](const Node& n, std::span<const Tensor* const> in, std::span<Tensor* const> out, OpContext& ctx) {
    const Tensor& x = need(n, in, 0);
    numeric_type(n, x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      map_unary<T>(x, *out[0], ctx, [](T v) { return static_cast<T>(F{}(v)); });
    });
  };
}
struct NegF { template <class T> T operator()(T v) const { return static_cast<T>(-v); } };
struct AbsF { template <class T> T operator()(T v) const { if constexpr (std::is_unsigned_v<T>) return v; else return v < 0 ? static_cast<T>(-v) : v; } };
struct SignF { template <class T> T operator()(T v) const { return static_cast<T>((v > 0) - (v < 0)); } };

// HardSwish, x * clamp(x / 6 + 1/2, 0, 1), then (attributes fused by the optimizer)
// * minnow_scale + minnow_shift.
void run_hardswish(const Node& n, std::span<const Tensor* const> in, std::span<Tensor* const> out, OpContext& ctx) {
  const Tensor& x = need(n, in, 0);
  const float scale = n.get_float("minnow_scale", 1.0f), shift = n.get_float("minnow_shift", 0.0f);
  float_type(n, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T sc = static_cast<T>(scale), sh = static_cast<T>(shift);
    map_unary<T>(x, *out[0], ctx, [sc, sh](T v) {
      T g = v * T(1.0 / 6) + T(0.5);
      g = g < T(0) ? T(0) : (g > T(1) ? T(1) : g);
      return v * g * sc + sh;
    });
  });
}

void run_identity(const Node& n, std::span<const Tensor* const> in, std::span<Tensor* const> out, OpContext&) {
  *out[0] = need(n, in, 0);
}

void run_not(const Node& n, std::span<const Tensor* const> in, std::span<Tensor* const> out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  if (x.dtype() != DataType::Bool) n.fail("expects a bool input");
  out[0]->resize(DataType::Bool, x.shape());
  for (int64_t i = 0; i < x.size(); ++i) out[0]->data<bool>()[i] = !x.data<bool>()[i];
}

void run_clip(const Node& n, std::span<const Tensor* const> in, std::span<Tensor* const> out, OpContext& ctx) {
  const Tensor& x = need(n, in, 0);
  numeric_type(n, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
    if (ctx.opset < 11) {
      if (n.find("min")) lo = static_cast<T>(n.get_float("min", 0));
      if (n.find("max")) hi = static_cast<T>(n.get_float("max", 0));
    } else {
      auto scalar = [&](size_t i, T& v) {
        if (i < in.size() && in[i]) {
          if (in[i]->dtype() != x.dtype() || in[i]->size() != 1) n.fail("min and max must be scalars of the input's type");
          v = in[i]->data<T>()[0];
        }
      };
      scalar(1, lo);
      scalar(2, hi);
    }
    map_unary<T>(x, *out[0], ctx, [lo, hi](T v) { return v < lo ? lo : (v > hi ? hi : v); });
  });
}

void run_prelu(const Node& n, std::span<const Tensor* const> in, std::span<Tensor* const> out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  const Tensor& slope = need(n, in, 1);
  if (x.dtype() != slope.dtype()) n.fail("inputs of different element types");
  numeric_type(n, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    binary<T, T>(x, slope, *out[0], x.dtype(), n, [](T v, T s) { return v < 0 ? static_cast<T>(v * s) : v; });
  });
}

void run_where(const Node& n, std::span<const Tensor* const> in, std::span<Tensor* const> out, OpContext&) {
  const Tensor& c = need(n, in, 0);
  const Tensor& x = need(n, in, 1);
  const Tensor& y = need(n, in, 2);
  if (c.dtype() != DataType::Bool) n.fail("condition must be bool");
  if (x.dtype() != y.dtype()) n.fail("X and Y of different element types");
  auto shape = broadcast_shapes(n, {c.shape(), x.shape(), y.shape()});
  out[0]->resize(x.dtype(), shape);
  const size_t es = dtype_size(x.dtype());
  auto* po = static_cast<uint8_t*>(out[0]->raw());
  const bool* pc = c.data<bool>();
  auto* px = static_cast<const uint8_t*>(x.raw());
  auto* py = static_cast<const uint8_t*>(y.raw());
  broadcast_walk<3>(shape, {&c.shape(), &x.shape(), &y.shape()}, [&](auto off, auto step, int64_t count) {
    for (int64_t i = 0; i < count; ++i, po += es) {
      bool take_x = pc[off[0] + i * step[0]];
      std::memcpy(po, take_x ? px + (off[1] + i * step[1]) * es : py + (off[2] + i * step[2]) * es, es);
    }
  });
}

template <class From, class To>
To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) return v != From(0);
  else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(v)) return To(0);
    double d = std::trunc(static_cast<double>(v));
    if (d < static_cast<double>(std::numeric_limits<To>::lowest()) || d > static_cast<double>(std::numeric_limits<To>::max()))
      return static_cast<To>(static_cast<int64_t>(std::clamp(d, -9.2e18, 9.2e18)));  // out of range: wraps as C casts do on x86
    return static_cast<To>(d);
  } else {
    return static_cast<To>(v);
  }
}

void run_cast(const Node& n, std::span<const Tensor* const> in, std::span<Tensor* const> out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  int64_t to = n.get_int("to", 0);
  DataType dt;
  switch (to) {
    case 1: dt = DataType::Float; break;
    case 2: dt = DataType::UInt8; break;
    case 3: dt = DataType::Int8; break;
    case 6: dt = DataType::Int32; break;
    case 7: dt = DataType::Int64; break;
    case 9: dt = DataType::Bool; break;
    case 11: dt = DataType::Double; break;
    default: n.fail("cast to element type " + std::to_string(to) + " is not supported");
  }
  Tensor result(dt, x.shape());
  auto from = [&](auto ftag) {
    using F = decltype(ftag);
    const F* px = x.data<F>();
    auto to_type = [&](auto ttag) {
      using T = decltype(ttag);
      T* py = result.data<T>();
      for (int64_t i = 0; i < x.size(); ++i) py[i] = convert<F, T>(px[i]);
    };
    if (dt == DataType::Bool) to_type(bool{});
    else numeric_type(n, dt, to_type);
  };
  if (x.dtype() == DataType::Bool) from(bool{});
  else numeric_type(n, x.dtype(), from);
  *out[0] = std::move(result);
}

}  // namespace

void register_elementwise_ops(const OpRegistrar& r) {
  r.add("Add", arithmetic<AddOp>());
  r.add("Sub", arithmetic<SubOp>());
  r.add("Mul", arithmetic<MulOp>());
  r.add("Div", arithmetic<DivOp>());
  r.add("Mod", run_mod);
  r.add("Pow", run_pow);
  r.add("Max", variadic<MaxOp>());
  r.add("Min", variadic<MinOp>());
  r.add("Sum", variadic<AddOp>());
  r.add("Mean", variadic<AddOp, true>());
  r.add("Equal", comparison<EqOp>());
  r.add("Less", comparison<LtOp>());
  r.add("Greater", comparison<GtOp>());
  r.add("LessOrEqual", comparison<LeOp>());
  r.add("GreaterOrEqual", comparison<GeOp>());
  r.add("And", logical<AndOp>());
  r.add("Or", logical<OrOp>());
  r.add("Xor", logical<XorOp>());
  r.add("Not", run_not);
  r.add("Where", run_where);
  r.add("Relu", run_relu);
  r.add("Sigmoid", run_sigmoid);
  r.add("Tanh", run_tanh);
  r.add("Exp", run_exp);
  r.add("Log", run_log);
  r.add("Sqrt", run_sqrt);
  r.add("Reciprocal", run_reciprocal);
  r.add("Floor", run_floor);
  r.add("Ceil", run_ceil);
  r.add("Round", run_round);
  r.add("Erf", run_erf);
  r.add("Sin", run_sin);
  r.add("Cos", run_cos);
  r.add("Softplus", run_softplus);
  r.add("Softsign", run_softsign);
  r.add("HardSwish", run_hardswish);
  r.add("HardSigmoid", run_hardsigmoid);
  r.add("LeakyRelu", run_leakyrelu);
  r.add("Elu", run_elu);
  r.add("Selu", run_selu);
  r.add("ThresholdedRelu", run_thresholdedrelu);
  r.add("Gelu", run_gelu);
  r.add("Neg", numeric_unary<NegF>());
  r.add("Abs", numeric_unary<AbsF>());
  r.add("Sign", numeric_unary<SignF>());
  r.add("Identity", run_identity);
  r.add("Clip", run_clip);
  r.add("PRelu", run_prelu);
  r.add("Cast", run_cast);
}

}  // namespace minnow::onnx
