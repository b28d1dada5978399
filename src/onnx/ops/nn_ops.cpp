// Neural-network operators: convolution, pooling, normalization, matrix products, softmax,
// resize. float32 through the kernel table's GEMM; the loops here are the scalar reference.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/error.hpp"
#include "base/thread_pool.hpp"
#include "kernels/ops.hpp"
#include "onnx/ops/op.hpp"

namespace minnow::onnx {

namespace {

using In = std::span<const Tensor* const>;
using Out = std::span<Tensor* const>;

void need_float(const Node& n, const Tensor& t) {
  if (t.dtype() != DataType::Float) n.fail(std::string("expects float32, got ") + dtype_name(t.dtype()));
}

// Spatial geometry shared by Conv and the pools, up to 3 spatial dimensions (1-D and 2-D
// are padded to 3-D with leading 1s).
struct Window {
  int dims = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1};
  int64_t pad_begin[3] = {0, 0, 0}, pad_end[3] = {0, 0, 0};
};

Window window_of(const Node& n, const std::vector<int64_t>& x_shape, std::vector<int64_t> kernel, bool ceil_mode) {
  Window w;
  w.dims = static_cast<int>(x_shape.size()) - 2;
  if (w.dims < 1 || w.dims > 3) n.fail("only 1 to 3 spatial dimensions are supported");
  if (static_cast<int>(kernel.size()) != w.dims) n.fail("kernel_shape does not match the input's rank");
  auto strides = n.get_ints("strides", std::vector<int64_t>(w.dims, 1));
  auto dilations = n.get_ints("dilations", std::vector<int64_t>(w.dims, 1));
  auto pads = n.get_ints("pads", std::vector<int64_t>(2 * w.dims, 0));
  if (static_cast<int>(strides.size()) != w.dims || static_cast<int>(dilations.size()) != w.dims ||
      static_cast<int>(pads.size()) != 2 * w.dims)
    n.fail("strides, dilations or pads do not match the input's rank");
  std::string auto_pad = n.get_string("auto_pad", "NOTSET");
  const int o = 3 - w.dims;
  for (int d = 0; d < w.dims; ++d) {
    int64_t in = x_shape[2 + d], k = kernel[d], s = strides[d], dl = dilations[d];
    if (k < 1 || s < 1 || dl < 1) n.fail("kernel, strides and dilations must be positive");
    if (pads[d] < 0 || pads[d + w.dims] < 0) n.fail("negative pads");
    int64_t ext = (k - 1) * dl + 1;
    int64_t pb = pads[d], pe = pads[d + w.dims], out;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out = (in + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + ext - in);
      pb = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else if (auto_pad == "VALID") {
      pb = pe = 0;
      out = in >= ext ? (in - ext) / s + 1 : 0;
    } else if (auto_pad == "NOTSET") {
      int64_t span = in + pb + pe - ext;
      if (span < 0) n.fail("the kernel is larger than the padded input");
      out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
      // ceil_mode: the last window must start inside the input or its left padding.
      if (ceil_mode && (out - 1) * s >= in + pb) --out;
    } else {
      n.fail("auto_pad '" + auto_pad + "' is not supported");
    }
    w.in[o + d] = in;
    w.out[o + d] = out;
    w.kernel[o + d] = k;
    w.stride[o + d] = s;
    w.dilation[o + d] = dl;
    w.pad_begin[o + d] = pb;
    w.pad_end[o + d] = pe;
  }
  return w;
}

std::vector<int64_t> out_shape(const std::vector<int64_t>& x, int64_t channels, const Window& w) {
  std::vector<int64_t> s{x[0], channels};
  for (int d = 3 - w.dims; d < 3; ++d) s.push_back(w.out[d]);
  return s;
}

// --- Conv. Pointwise (1 x 1, stride 1, no padding) convolutions multiply the filters by
// the input's channels x pixels directly; depthwise ones run direct loops (8 channels at a
// time, or a channel's rows for wide planes at stride 1); the rest gather im2col columns (a block of output pixels at a time) for the same GEMM.
// Bias and a clamp (a fused Relu / Clip: attributes minnow_lo / minnow_hi) are applied in
// the GEMM's store.
// Depthwise, one channel: the input plane copied into a zero-padded scratch plane (so no tap needs a
// bounds check), then a row kernel per output row. Dilation > 1 takes the strided-tap path.
// Returns whether the epilogue was applied (the row kernel applies it; the dilated path does not).
bool depthwise(const float* x, const float* w, float* y, const Window& wd, int64_t kh_n, int64_t kw_n,
               const kernels::Epilogue& ep, std::vector<float>& scratch) {
  const auto& kt = kernels::active();
  const int64_t OH = wd.out[1], OW = wd.out[2], IH = wd.in[1], IW = wd.in[2];
  const int64_t sh = wd.stride[1], sw = wd.stride[2], dh = wd.dilation[1], dw = wd.dilation[2];
  const int64_t ph = wd.pad_begin[1], pw = wd.pad_begin[2];
  if (dh == 1 && dw == 1 && sw <= 2) {
    // Rows and columns the windows reach, from -pad on.
    const int64_t PW = std::max(IW + pw, (OW - 1) * sw + kw_n) + 8;
    const int64_t PH = std::max(IH + ph, (OH - 1) * sh + kh_n);
    scratch.resize(static_cast<size_t>(PH * PW));
    float* sp = scratch.data();
    // Zero only the border: the input rows overwrite the rest.
    std::fill(sp, sp + ph * PW, 0.0f);
    for (int64_t ih = 0; ih < IH; ++ih) {
      float* row = sp + (ih + ph) * PW;
      std::fill(row, row + pw, 0.0f);
      std::copy(x + ih * IW, x + (ih + 1) * IW, row + pw);
      std::fill(row + pw + IW, row + PW, 0.0f);
    }
    std::fill(sp + (IH + ph) * PW, sp + PH * PW, 0.0f);
    for (int64_t oh = 0; oh < OH; ++oh)
      kt.depthwise_row(scratch.data() + oh * sh * PW, PW, w, static_cast<int>(kh_n), static_cast<int>(kw_n),
                       static_cast<int>(sw), y + oh * OW, OW, ep);
    return true;
  }
  std::fill(y, y + OH * OW, 0.0f);
  for (int64_t kw = 0; kw < kw_n; ++kw) {
    // Output columns whose input column lies inside: iw = ow * sw - pw + kw * dw in [0, IW).
    const int64_t off = kw * dw - pw;
    int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
    int64_t hi = IW - off > 0 ? (IW - off + sw - 1) / sw : 0;
    hi = std::min(hi, OW);
    if (lo >= hi) continue;
    for (int64_t oh = 0; oh < OH; ++oh) {
      float* yr = y + oh * OW;
      for (int64_t kh = 0; kh < kh_n; ++kh) {
        const int64_t ih = oh * sh - ph + kh * dh;
        if (ih < 0 || ih >= IH) continue;
        const float* xr = x + ih * IW + off;
        kt.axpy_strided(w[kh * kw_n + kw], xr + lo * sw, sw, yr + lo, hi - lo);
      }
    }
  }
  return false;
}

// Depthwise convolution 8 channels at a time (no dilation): each pixel's 8 channels are
// one vector in a channel-interleaved scratch, so every tap is one multiply-add whatever
// the plane's width (7 x 7 planes ran at a third of the speed as rows). Tasks are bands
// of output rows (about `band_bytes` of interleaved input) of G groups of 8 channels: the
// band's input rows zero-padded and interleaved, computed, and written back to the
// channels' planes. source(b, c0, lanes) gives the input of channels c0 .. c0 + lanes
// (lanes <= 8 G) of image b: a callable rows(ih0, ih1, iw0, n, dst, ld) that writes columns
// iw0 .. iw0 + n of input rows ih0 .. ih1 of group h interleaved, row ih at
// dst[h] + (ih - ih0) * ld * 8 (dst[h] null for a group past the channels; lanes past them
// may hold anything).
template <int G, class Source>
void depthwise_by_lanes(Source&& source, const float* pw, const float* pb, float* py, int64_t N, int64_t C,
                        const Window& wd, const kernels::Epilogue& ep, int64_t band_bytes, OpContext& ctx) {
  const auto& kt = kernels::active();
  const int64_t OH = wd.out[1], OW = wd.out[2], IH = wd.in[1], IW = wd.in[2], KH = wd.kernel[1], KW = wd.kernel[2];
  const int64_t sh = wd.stride[1], sw = wd.stride[2], ph = wd.pad_begin[1], pl = wd.pad_begin[2], KS = KH * KW;
  const int64_t PW = (OW - 1) * sw + KW;  // the padded columns the windows reach
  const int64_t band = std::clamp<int64_t>(band_bytes / (G * PW * 8 * 4 * sh), 1, OH);
  const int64_t bands = (OH + band - 1) / band, groups = (C + 8 * G - 1) / (8 * G);
  auto& buffers = ctx.per_thread_scratch();
  auto task = [&](int64_t t, int thread) {
    const int64_t b = t / (groups * bands), c0 = t / bands % groups * 8 * G, oh0 = t % bands * band;
    const int64_t on = std::min(band, OH - oh0), rows = (on - 1) * sh + KH;
    const int64_t per_group = (rows * PW + on * OW + KS + 1) * 8;
    auto& s = buffers[static_cast<size_t>(thread)];
    s.resize(static_cast<size_t>(G * per_group));
    const int64_t top = oh0 * sh - ph;  // the input row of the band's first padded row
    const int64_t ih0 = std::clamp<int64_t>(top, 0, IH), ih1 = std::clamp<int64_t>(top + rows, ih0, IH);
    const int64_t p0 = std::min(pl, PW), p1 = std::clamp(pl + IW, p0, PW);  // the input's columns
    float* dst[G] = {};
    for (int h = 0; h < G; ++h) {
      if (c0 + 8 * h >= C) break;
      float* in = s.data() + h * per_group;
      for (int64_t r = 0; r < rows; ++r) {
        float* row = in + r * PW * 8;
        const int64_t ih = top + r;
        if (ih < ih0 || ih >= ih1) {
          std::fill(row, row + PW * 8, 0.0f);
          continue;
        }
        std::fill(row, row + p0 * 8, 0.0f);
        std::fill(row + p1 * 8, row + PW * 8, 0.0f);
      }
      dst[h] = in + ((ih0 - top) * PW + p0) * 8;
    }
    const int lanes = static_cast<int>(std::min<int64_t>(8 * G, C - c0));
    if (ih1 > ih0 && p1 > p0) source(b, c0, lanes)(ih0, ih1, p0 - pl, p1 - p0, dst, PW);
    for (int h = 0; h < G && dst[h]; ++h) {
      const int64_t ch = c0 + 8 * h;
      const int lh = static_cast<int>(std::min<int64_t>(8, C - ch));
      float *in = s.data() + h * per_group, *out = in + rows * PW * 8, *w8 = out + on * OW * 8, *bias8 = w8 + KS * 8;
      for (int64_t k = 0; k < KS; ++k)
        for (int l = 0; l < 8; ++l) w8[k * 8 + l] = l < lh ? pw[(ch + l) * KS + k] : 0.0f;
      for (int l = 0; l < 8; ++l) bias8[l] = pb && l < lh ? pb[ch + l] : 0.0f;
      kernels::Epilogue e = ep;
      e.bias = pb ? bias8 : nullptr;
      for (int64_t oh = 0; oh < on; ++oh)
        kt.depthwise8_row(in + oh * sh * PW * 8, PW, w8, static_cast<int>(KH), static_cast<int>(KW), static_cast<int>(sw),
                          out + oh * OW * 8, OW, e);
      kt.deinterleave8(out, lh, on * OW, py + (b * C + ch) * OH * OW + oh0 * OW, OH * OW);
    }
  };
  const int64_t tasks = N * groups * bands;
  if (ctx.pool && tasks > 1) ctx.pool->parallel_for(tasks, task);
  else
    for (int64_t t = 0; t < tasks; ++t) task(t, 0);
}

// A convolution's fused epilogue from its attributes; `prefix` names the attributes.
kernels::Epilogue epilogue_of(const Node& n, const std::string& prefix) {
  kernels::Epilogue ep;
  ep.lo = n.get_float(prefix + "lo", ep.lo);
  ep.hi = n.get_float(prefix + "hi", ep.hi);
  ep.hard_swish = n.get_int(prefix + "hard_swish", 0) != 0;
  ep.scale = n.get_float(prefix + "scale", 1.0f);
  ep.shift = n.get_float(prefix + "shift", 0.0f);
  return ep;
}

// Into how many row blocks (of 16 filters or more) a convolution's filters split so that
// `tasks` blocks of pixels become at least four tasks per thread.
int64_t row_splits(int64_t tasks, int64_t rows, const OpContext& ctx) {
  const int64_t threads = ctx.pool ? ctx.pool->size() : 1;
  int64_t splits = 1;
  while (tasks * splits < 4 * threads && rows / (splits * 2) >= 16) splits *= 2;
  return splits;
}

// Up to 16 filters of a 1 x 1 product (`lanes` of them, packed as pack_filters8 lays them
// out from w on) over n pixels of x (planes ldx apart), into planes y (ld apart): summed by
// pointwise16 (pointwise8 for 8 or fewer) into the interleaved layout, then written back by
// deinterleave8. bias (or null) from the first filter on; scratch: 2 (8 + 8 n) floats.
void sixteen_filters(const kernels::KernelTable& kt, const float* x, int64_t ldx, const float* w, int64_t k, int lanes,
                     const float* bias, const kernels::Epilogue& ep, int64_t n, float* y, int64_t ld, float* scratch) {
  float* out[2] = {};
  kernels::Epilogue e[2] = {ep, ep};
  for (int h = 0; h < 2 && lanes > 8 * h; ++h) {
    float* bias8 = scratch + h * (8 + n * 8);
    out[h] = bias8 + 8;
    for (int l = 0; l < 8; ++l) bias8[l] = bias && 8 * h + l < lanes ? bias[8 * h + l] : 0.0f;
    e[h].bias = bias ? bias8 : nullptr;
  }
  if (lanes > 8) kt.pointwise16(x, ldx, w, w + k * 8, k, out[0], out[1], n, e[0], e[1]);
  else kt.pointwise8(x, ldx, w, k, out[0], n, e[0]);
  kt.deinterleave8(out[0], std::min(lanes, 8), n, y, ld);
  if (lanes > 8) kt.deinterleave8(out[1], lanes - 8, n, y + 8 * ld, ld);
}

// Convolutions of few taps (K = channels x window <= kFewTaps: a network's stem, 3 input
// channels x 3 x 3) run conv_by_rows' product through pointwise16 instead of sgemm_rows:
// their K-deep register tiles are stored every few steps, and the pointwise kernels keep
// the multiply-adds busier. The block's tap rows are first copied into one K x n scratch
// (at most 48 KiB) and the m filters packed, then 16 at a time are summed into rows of y
// (ld apart): the same sums, in the same order, as sgemm_rows.
constexpr int64_t kFewTaps = 64;
void taps_by_lanes(const kernels::KernelTable& kt, const float* w, const float* bias, const kernels::Epilogue& ep,
                   const float* const* rows, int64_t K, int64_t m, int64_t n, float* y, int64_t ld) {
  thread_local std::vector<float> s;
  s.resize(static_cast<size_t>(K * n + (m + 7) / 8 * K * 8 + 2 * (8 + n * 8)));
  float *taps = s.data(), *packed = taps + K * n, *scratch = packed + (m + 7) / 8 * K * 8;
  for (int64_t c = 0; c < K; ++c) std::copy_n(rows[c], n, taps + c * n);
  pack_filters8(w, m, K, packed);
  for (int64_t m0 = 0; m0 < m; m0 += 16)
    sixteen_filters(kt, taps, n, packed + m0 * K, K, static_cast<int>(std::min<int64_t>(16, m - m0)), bias ? bias + m0 : nullptr,
                    ep, n, y + m0 * ld, ld, scratch);
}

// A 1-D or 2-D convolution without im2col. Each image's input is zero-padded and split into
// stride phases: plane (c, rp, cp) holds the padded rows rp, rp + sh, ... and in each the
// columns cp, cp + sw, ... (PHs x PWs). Tap (c, kh, kw) of output pixel (oh, ow) then reads
// plane (c, (kh dh) % sh, (kw dw) % sw) at row oh + (kh dh) / sh, column ow + (kw dw) / sw:
// over the "wide" grid q = oh * PWs + ow (every row PWs wide, the columns from OW on
// wasted), tap p's values are one contiguous run from base_p + q. So a block of the wide grid
// is one sgemm_rows call whatever the image size, its sums in im2col's order (the same
// results), and the valid columns are copied out.
void conv_by_rows(const float* px, const float* pw, const float* pb, float* py, int64_t N, int64_t group, int64_t Cg,
                  int64_t Mg, const Window& w, const kernels::Epilogue& ep, OpContext& ctx) {
  const auto& kt = kernels::active();
  const int64_t IH = w.in[1], IW = w.in[2], OH = w.out[1], OW = w.out[2], KH = w.kernel[1], KW = w.kernel[2];
  const int64_t sh = w.stride[1], sw = w.stride[2], dh = w.dilation[1], dw = w.dilation[2];
  const int64_t ph = w.pad_begin[1], pwd = w.pad_begin[2];
  // Rows and columns of every phase: enough for the windows, and a spare row that the wide
  // grid's last wasted columns run into.
  const int64_t PHs = std::max((IH + ph + sh - 1) / sh, OH + (KH - 1) * dh / sh) + 1;
  const int64_t PWs = std::max((IW + pwd + sw - 1) / sw, OW + (KW - 1) * dw / sw);
  const int64_t phase = PHs * PWs, plane = sh * sw * phase, C = Cg * group, K = Cg * KH * KW;
  constexpr int64_t kBlock = 192;  // wide-grid columns per task (a multiple of the kernels' 16 and 32)
  const int64_t wide = OH * PWs, blocks = (wide + kBlock - 1) / kBlock;
  const int threads = ctx.pool ? ctx.pool->size() : 1;
  // Images padded together (up to ~64 MiB of planes), so that small images still make
  // enough tasks; and where they do not, the filters split into row blocks too.
  const int64_t images = std::clamp<int64_t>((int64_t{16} << 20) / std::max<int64_t>(1, C * plane), 1, N);
  const int64_t per_image = group * blocks;
  const int64_t splits = row_splits(images * per_image, Mg, ctx), rows_per = (Mg + splits - 1) / splits;
  ctx.scratch.resize(static_cast<size_t>(images * C * plane + threads * Mg * kBlock));
  float* buf = ctx.scratch.data();
  auto for_tasks = [&](int64_t tasks, auto&& fn) {
    if (ctx.pool && tasks > 1) ctx.pool->parallel_for(tasks, [&](int64_t t, int th) { fn(t, th); });
    else
      for (int64_t t = 0; t < tasks; ++t) fn(t, 0);
  };
  for (int64_t b0 = 0; b0 < N; b0 += images) {
    const int64_t nb = std::min(images, N - b0);
    for_tasks(nb * C * sh * sw, [&](int64_t t, int) {
      const int64_t c = t / (sh * sw), rp = (t / sw) % sh, cp = t % sw;  // c counts over the images
      const float* x = px + (b0 * C + c) * IH * IW;
      float* dst = buf + c * plane + (rp * sw + cp) * phase;
      // Columns j with cp + sw * j - pwd inside [0, IW).
      const int64_t j0 = std::min(PWs, std::max<int64_t>(0, (pwd - cp + sw - 1) / sw));
      const int64_t j1 = std::max(j0, std::min(PWs, (IW + pwd - cp + sw - 1) / sw));
      for (int64_t r = 0; r < PHs; ++r) {
        float* out = dst + r * PWs;
        const int64_t ih = rp + r * sh - ph;
        if (ih < 0 || ih >= IH) {
          std::fill(out, out + PWs, 0.0f);
          continue;
        }
        const float* src = x + ih * IW + cp + sw * j0 - pwd;
        std::fill(out, out + j0, 0.0f);
        if (sw == 1) std::copy(src, src + (j1 - j0), out + j0);
        else if (sw == 2)  // a constant stride: vectorized (the stem's input, 736 x 736 x 3 in det)
          for (int64_t j = j0; j < j1; ++j) out[j] = src[(j - j0) * 2];
        else
          for (int64_t j = j0; j < j1; ++j) out[j] = src[(j - j0) * sw];
        std::fill(out + j1, out + PWs, 0.0f);
      }
    });
    for_tasks(nb * per_image * splits, [&](int64_t t, int thread) {
      const int64_t split = t % splits, blk = (t / splits) % blocks, g = (t / (splits * blocks)) % group;
      const int64_t b = t / (splits * per_image);  // among this chunk's images
      const int64_t m0 = split * rows_per, mn = std::min(rows_per, Mg - m0);
      if (mn <= 0) return;
      const int64_t q0 = blk * kBlock, qn = std::min(kBlock, wide - q0);
      thread_local std::vector<const float*> rows;
      rows.resize(static_cast<size_t>(K));
      size_t i = 0;
      for (int64_t c = 0; c < Cg; ++c)
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            const int64_t rp = (kh * dh) % sh, cp = (kw * dw) % sw;
            rows[i++] = buf + (b * C + g * Cg + c) * plane + (rp * sw + cp) * phase + (kh * dh / sh) * PWs + kw * dw / sw +
                        q0;
          }
      float* wide_out = buf + images * C * plane + thread * Mg * kBlock;
      if (K <= kFewTaps) {
        taps_by_lanes(kt, pw + (g * Mg + m0) * K, pb ? pb + g * Mg + m0 : nullptr, ep, rows.data(), K, mn, qn, wide_out, kBlock);
      } else {
        kernels::Epilogue e = ep;
        e.bias = pb ? pb + g * Mg + m0 : nullptr;
        kt.sgemm_rows(pw + (g * Mg + m0) * K, K, rows.data(), wide_out, kBlock, mn, qn, K, e);
      }
      // The valid columns of the block, row by row of the output.
      float* y = py + ((b0 + b) * group * Mg + g * Mg + m0) * OH * OW;
      for (int64_t q = q0; q < q0 + qn;) {
        const int64_t oh = q / PWs, ow = q % PWs, run = std::min(q0 + qn, (oh + 1) * PWs) - q;
        if (ow < OW) {
          const int64_t n = std::min(run, OW - ow);
          for (int64_t m = 0; m < mn; ++m)
            std::copy_n(wide_out + m * kBlock + (q - q0), n, y + m * OH * OW + oh * OW + ow);
        }
        q += run;
      }
    });
  }
}

// 1 x 1 convolutions (stride 1, no padding) of N images in `group` groups of Cg channels
// -> Mg filters, P pixels each; `packed`: each group's filters by pack_filters8. 16 filters
// (or the last 8) and a block of 96 pixels a task, read straight from the input's planes
// into the channel-interleaved layout (pointwise16 / pointwise8: faster than sgemm's tiles
// on the few pixels and channels of mobile networks' layers), then written back to the
// planes. Tasks of one pixel block follow each other, so a thread's next task finds the
// block in cache.
void pointwise_by_lanes(const float* px, const float* packed, const float* pb, const kernels::Epilogue& ep, int64_t N,
                        int64_t group, int64_t Cg, int64_t Mg, int64_t P, float* py, OpContext& ctx) {
  const auto& kt = kernels::active();
  constexpr int64_t kCols = 96;
  const int64_t K = Cg, blocks = (P + kCols - 1) / kCols, pairs = (Mg + 15) / 16, group_words = (Mg + 7) / 8 * K * 8;
  auto& buffers = ctx.per_thread_scratch();
  auto task = [&](int64_t t, int thread) {
    const int64_t c0 = t % pairs * 16, p0 = t / pairs % blocks * kCols, ng = t / (pairs * blocks);
    const int64_t b = ng / group, g = ng % group, pn = std::min(kCols, P - p0);
    auto& s = buffers[static_cast<size_t>(thread)];
    s.resize(static_cast<size_t>(2 * (8 + kCols * 8)));
    sixteen_filters(kt, px + (b * group + g) * Cg * P + p0, P, packed + g * group_words + c0 * K, K,
                    static_cast<int>(std::min<int64_t>(16, Mg - c0)), pb ? pb + g * Mg + c0 : nullptr, ep, pn,
                    py + (b * group * Mg + g * Mg + c0) * P + p0, P, s.data());
  };
  const int64_t tasks = N * group * blocks * pairs;
  if (ctx.pool && tasks > 1) ctx.pool->parallel_for(tasks, task);
  else
    for (int64_t t = 0; t < tasks; ++t) task(t, 0);
}

void run_conv(const Node& n, In in, Out out, OpContext& ctx) {
  const Tensor& x = need(n, in, 0);
  const Tensor& wt = need(n, in, 1);
  const Tensor* bias = in.size() > 2 ? in[2] : nullptr;
  need_float(n, x);
  need_float(n, wt);
  if (x.rank() < 3 || wt.rank() != x.rank()) n.fail("input and weight ranks differ or are below 3");
  const int64_t group = n.get_int("group", 1);
  const int64_t C = x.shape()[1], M = wt.shape()[0];
  if (group < 1 || C % group || M % group || wt.shape()[1] * group != C)
    n.fail("channels " + std::to_string(C) + " and weight " + wt.shape_string() + " do not match group " + std::to_string(group));
  if (bias && (bias->dtype() != DataType::Float || bias->size() != M)) n.fail("bias must hold one float per output channel");
  std::vector<int64_t> kshape(wt.shape().begin() + 2, wt.shape().end());
  auto kattr = n.get_ints("kernel_shape");
  if (!kattr.empty() && kattr != kshape) n.fail("kernel_shape differs from the weight's shape");
  Window w = window_of(n, x.shape(), kshape, false);
  out[0]->resize(DataType::Float, out_shape(x.shape(), M, w));
  const kernels::Epilogue ep = epilogue_of(n, "minnow_");
  const int64_t N = x.shape()[0], Cg = C / group, Mg = M / group;
  const int64_t KS = w.kernel[0] * w.kernel[1] * w.kernel[2], K = Cg * KS;
  const int64_t P = w.out[0] * w.out[1] * w.out[2], HWin = w.in[0] * w.in[1] * w.in[2];
  const float* px = x.data<float>();
  const float* pw = wt.data<float>();
  const float* pb = bias ? bias->data<float>() : nullptr;
  float* py = out[0]->data<float>();
  const auto& kt = kernels::active();
  auto for_tasks = [&](int64_t tasks, auto&& fn) {
    if (ctx.pool && tasks > 1) ctx.pool->parallel_for(tasks, [&](int64_t t, int th) { fn(t, th); });
    else
      for (int64_t t = 0; t < tasks; ++t) fn(t, 0);
  };

  // Depthwise: wide planes at stride 1 as rows of one channel (their vectors already full,
  // no interleaving copies), the rest 8 channels at a time.
  const bool depthwise_rows = w.out[2] >= 48 && w.stride[1] == 1 && w.stride[2] == 1;
  if (Cg == 1 && Mg == 1 && w.dims == 2 && w.kernel[0] == 1 && w.dilation[1] == 1 && w.dilation[2] == 1 &&
      !depthwise_rows) {
    auto planes = [&](int64_t b, int64_t c0, int lanes) {
      return [&kt, x = px + (b * C + c0) * HWin, IW = w.in[2], HWin, lanes](int64_t ih0, int64_t ih1, int64_t iw0, int64_t n,
                                                                             float* const* dst, int64_t ld) {
        for (int64_t ih = ih0; ih < ih1; ++ih) kt.interleave8(x + ih * IW + iw0, HWin, lanes, n, dst[0] + (ih - ih0) * ld * 8);
      };
    };
    depthwise_by_lanes<1>(planes, pw, pb, py, N, C, w, ep, int64_t{32} << 10, ctx);
    return;
  }
  if (Cg == 1 && Mg == 1 && w.dims == 2 && w.kernel[0] == 1) {  // depthwise
    auto& buffers = ctx.per_thread_scratch();
    for_tasks(N * C, [&](int64_t t, int thread) {
      float* yc = py + t * P;
      kernels::Epilogue e = ep;
      e.bias = pb ? pb + t % C : nullptr;
      if (!depthwise(px + t * HWin, pw + (t % C) * KS, yc, w, w.kernel[1], w.kernel[2], e, buffers[static_cast<size_t>(thread)]))
        for (int64_t i = 0; i < P; ++i) yc[i] = kernels::apply_epilogue(yc[i], e, 0);
    });
    return;
  }
  bool pointwise = KS == 1;
  for (int d = 0; d < 3; ++d)
    pointwise = pointwise && w.stride[d] == 1 && w.pad_begin[d] == 0 && w.pad_end[d] == 0;
  constexpr int64_t kCols = 96;  // output pixels per task (a multiple of the kernels' 16 and 32)
  const int64_t blocks = (P + kCols - 1) / kCols;
  if (pointwise) {  // the filters packed here each run (the optimizer packs them once: MinnowPointwise)
    std::vector<float> packed(static_cast<size_t>(group * (Mg + 7) / 8 * K * 8));
    for (int64_t g = 0; g < group; ++g) pack_filters8(pw + g * Mg * K, Mg, K, packed.data() + g * (Mg + 7) / 8 * K * 8);
    pointwise_by_lanes(px, packed.data(), pb, ep, N, group, Cg, Mg, P, py, ctx);
    return;
  }
  if (w.in[0] == 1 && w.kernel[0] == 1 && w.pad_begin[0] == 0) {
    conv_by_rows(px, pw, pb, py, N, group, Cg, Mg, w, ep, ctx);
    return;
  }
  std::vector<std::vector<float>> scratch(ctx.pool ? ctx.pool->size() : 1);
  for_tasks(N * group * blocks, [&](int64_t t, int thread) {
    const int64_t ng = t / blocks, p0 = (t % blocks) * kCols, pn = std::min(kCols, P - p0);
    const int64_t b = ng / group, g = ng % group;
    auto& col = scratch[thread];
    col.resize(static_cast<size_t>(K * kCols));
    const float* xg = px + (b * C + g * Cg) * HWin;
    // col[(c, kd, kh, kw), i] = x[c, od * s - p + kd * dl, ...] for the block's pixels i,
    // walking the pixels' (od, oh, ow) by increments.
    const int64_t od0 = p0 / (w.out[1] * w.out[2]), oh0 = (p0 / w.out[2]) % w.out[1], ow0 = p0 % w.out[2];
    for (int64_t c = 0; c < Cg; ++c)
      for (int64_t kd = 0; kd < w.kernel[0]; ++kd)
        for (int64_t kh = 0; kh < w.kernel[1]; ++kh)
          for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
            float* row = col.data() + (((c * w.kernel[0] + kd) * w.kernel[1] + kh) * w.kernel[2] + kw) * pn;
            const float* xc = xg + c * HWin;
            int64_t od = od0, oh = oh0, ow = ow0;
            for (int64_t i = 0; i < pn;) {
              const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
              const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
              // The rest of this output row at once.
              const int64_t run = std::min(pn - i, w.out[2] - ow);
              if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) {
                std::fill(row + i, row + i + run, 0.0f);
              } else {
                const float* src = xc + (id * w.in[1] + ih) * w.in[2];
                const int64_t sw = w.stride[2], base = kw * w.dilation[2] - w.pad_begin[2];
                for (int64_t r = 0; r < run; ++r) {
                  const int64_t iw = (ow + r) * sw + base;
                  row[i + r] = iw >= 0 && iw < w.in[2] ? src[iw] : 0.0f;
                }
              }
              i += run;
              ow += run;
              if (ow == w.out[2]) {
                ow = 0;
                if (++oh == w.out[1]) { oh = 0; ++od; }
              }
            }
          }
    kernels::Epilogue e = ep;
    e.bias = pb ? pb + g * Mg : nullptr;
    kt.sgemm(pw + g * Mg * K, K, col.data(), pn, py + (b * M + g * Mg) * P + p0, P, Mg, pn, K, e);
  });
}

}  // namespace

void pack_filters8(const float* w, int64_t m, int64_t k, float* dst) {
  const auto& kt = kernels::active();
  for (int64_t c0 = 0; c0 < m; c0 += 8)
    kt.interleave8(w + c0 * k, k, static_cast<int>(std::min<int64_t>(8, m - c0)), k, dst + c0 * k);
}

namespace {

// The filters packed by the optimizer: {ceil(m / 8), k, 8}, checked against m and k.
const float* packed_filters(const Node& n, const Tensor& w, int64_t m, int64_t k) {
  need_float(n, w);
  if (m < 1 || m > w.size()) n.fail(std::to_string(m) + " filters for " + w.shape_string() + " packed filters");
  if (w.shape() != std::vector<int64_t>{(m + 7) / 8, k, 8})
    n.fail("packed filters " + w.shape_string() + " do not match " + std::to_string(m) + " filters of " + std::to_string(k) +
           " channels");
  return w.data<float>();
}

// --- MinnowPointwise (made by the optimizer from a 1 x 1 convolution, stride 1, no padding,
// one group: inputs x, its filters packed once by pack_filters8, its bias; attribute
// minnow_filters, the epilogue's minnow_*).
void run_pointwise(const Node& n, In in, Out out, OpContext& ctx) {
  const Tensor& x = need(n, in, 0);
  const Tensor* bias = in.size() > 2 ? in[2] : nullptr;
  need_float(n, x);
  if (x.rank() != 4) n.fail("expects 2-D images");
  const int64_t N = x.shape()[0], K = x.shape()[1], M = n.get_int("minnow_filters", 0);
  const float* w = packed_filters(n, need(n, in, 1), M, K);
  if (bias && (bias->dtype() != DataType::Float || bias->size() != M)) n.fail("bias must hold one float per output channel");
  out[0]->resize(DataType::Float, {N, M, x.shape()[2], x.shape()[3]});
  pointwise_by_lanes(x.data<float>(), w, bias ? bias->data<float>() : nullptr, epilogue_of(n, "minnow_"), N, 1, K, M,
                     x.shape()[2] * x.shape()[3], out[0]->data<float>(), ctx);
}

// --- MinnowPointwiseDepthwise (made by the optimizer from a 1 x 1 convolution whose only
// reader is a depthwise one: inputs x, the 1 x 1 filters and bias, the depthwise filters
// and bias; the depthwise convolution's attributes, the 1 x 1's epilogue as minnow_pw_*;
// the 1 x 1 filters packed by pack_filters8).
// Each task computes the 1 x 1 convolution for just its 16 channels and band of rows,
// straight into the interleaved rows the depthwise pass reads (pointwise16): the expanded
// tensor (MobileNetV2: 4.8 MB at 112 x 112) is never written out. Rows at a band's edge are
// computed by both bands.
void run_pointwise_depthwise(const Node& n, In in, Out out, OpContext& ctx) {
  const Tensor& x = need(n, in, 0);
  const Tensor& w1 = need(n, in, 1);
  const Tensor& wd = need(n, in, 3);
  const Tensor* b1 = in.size() > 2 ? in[2] : nullptr;
  const Tensor* bd = in.size() > 4 ? in[4] : nullptr;
  for (const Tensor* t : {&x, &wd}) need_float(n, *t);
  if (x.rank() != 4 || wd.rank() != 4) n.fail("expects 2-D images and filters");
  const int64_t N = x.shape()[0], K = x.shape()[1], IH = x.shape()[2], IW = x.shape()[3], M = wd.shape()[0];
  if (wd.shape()[1] != 1) n.fail("depthwise filters " + wd.shape_string() + " take more than one channel");
  const float* packed = packed_filters(n, w1, M, K);
  for (const Tensor* b : {b1, bd})
    if (b && (b->dtype() != DataType::Float || b->size() != M)) n.fail("bias must hold one float per channel");
  const Window w = window_of(n, {N, M, IH, IW}, {wd.shape()[2], wd.shape()[3]}, false);
  if (w.dilation[1] != 1 || w.dilation[2] != 1) n.fail("dilated windows are not fused");
  out[0]->resize(DataType::Float, out_shape({N, M, IH, IW}, M, w));
  const auto& kt = kernels::active();
  const float* px = x.data<float>();
  const float* pb1 = b1 ? b1->data<float>() : nullptr;
  const kernels::Epilogue ep1 = epilogue_of(n, "minnow_pw_");
  auto expanded = [&](int64_t b, int64_t c0, int lanes) {
    // The task's 16 filters (two packed groups of 8), each group's 8 biases, their epilogues.
    thread_local std::vector<float> bias16;
    bias16.resize(16);
    std::array<kernels::Epilogue, 2> e{ep1, ep1};
    for (int h = 0; h < 2; ++h) {
      const int lh = std::clamp(lanes - 8 * h, 0, 8);
      for (int l = 0; l < 8; ++l) bias16[static_cast<size_t>(h * 8 + l)] = pb1 && l < lh ? pb1[c0 + 8 * h + l] : 0.0f;
      e[h].bias = pb1 ? bias16.data() + h * 8 : nullptr;
    }
    const float* w0 = packed + c0 * K;
    const float* w1 = lanes > 8 ? w0 + K * 8 : w0;
    // The 1 x 1 products of `pixels` pixels from x on, into y[0] (and y[1] for the second 8).
    auto product = [&kt, w0, w1, e, K, HW = IH * IW](const float* x, float* const* y, int64_t pixels) {
      if (y[1]) kt.pointwise16(x, HW, w0, w1, K, y[0], y[1], pixels, e[0], e[1]);
      else kt.pointwise8(x, HW, w0, K, y[0], pixels, e[0]);
    };
    // Narrow planes (7 x 7) whole rows at a time into a scratch, so that a pass's pixels
    // may span rows, then copied to their padded rows.
    return [product, x = px + b * K * IH * IW, IW](int64_t ih0, int64_t ih1, int64_t iw0, int64_t cols, float* const* dst,
                                                   int64_t ld) {
      if (cols < IW || IW >= 48) {
        for (int64_t ih = ih0; ih < ih1; ++ih) {
          float* const y[2] = {dst[0] + (ih - ih0) * ld * 8, dst[1] ? dst[1] + (ih - ih0) * ld * 8 : nullptr};
          product(x + ih * IW + iw0, y, cols);
        }
        return;
      }
      thread_local std::vector<float> band;
      const int64_t pixels = (ih1 - ih0) * IW;
      band.resize(static_cast<size_t>(2 * pixels * 8));
      float* const y[2] = {band.data(), dst[1] ? band.data() + pixels * 8 : nullptr};
      product(x + ih0 * IW, y, pixels);
      for (int h = 0; h < 2 && dst[h]; ++h)
        for (int64_t ih = ih0; ih < ih1; ++ih) std::copy_n(y[h] + (ih - ih0) * IW * 8, IW * 8, dst[h] + (ih - ih0) * ld * 8);
    };
  };
  depthwise_by_lanes<2>(expanded, wd.data<float>(), bd ? bd->data<float>() : nullptr, out[0]->data<float>(), N, M, w,
                     epilogue_of(n, "minnow_"), int64_t{128} << 10, ctx);
}

// A 2-D (or 1-D) transposed convolution whose kernel equals its stride, without padding
// (the usual learned 2x upsampling): every output pixel has exactly one tap. Per input row,
// one GEMM of the transposed filters (rows (m, kh, kw)) by the row's channels, then the
// sums plus bias written interleaved to output rows ih * sh + kh, columns iw * sw + kw.
void conv_transpose_tiles(const float* px, const float* pw, const float* pbias, float* py, int64_t N, int64_t group,
                          int64_t Cg, int64_t Mg, int64_t IH, int64_t IW, int64_t sh, int64_t sw, OpContext& ctx) {
  const auto& kt = kernels::active();
  const int64_t R = Mg * sh * sw, C = Cg * group, OW = IW * sw, ON = IH * sh * OW;
  const int threads = ctx.pool ? ctx.pool->size() : 1;
  ctx.scratch.resize(static_cast<size_t>(group * R * Cg + threads * R * IW));
  float* wt_t = ctx.scratch.data();
  for (int64_t g = 0; g < group; ++g)
    for (int64_t c = 0; c < Cg; ++c)
      for (int64_t r = 0; r < R; ++r) wt_t[(g * R + r) * Cg + c] = pw[(g * Cg + c) * R + r];
  auto task = [&](int64_t t, int thread) {
    const int64_t ih = t % IH, g = (t / IH) % group, b = t / (IH * group);
    float* col = ctx.scratch.data() + group * R * Cg + thread * R * IW;
    kt.sgemm(wt_t + g * R * Cg, Cg, px + (b * C + g * Cg) * IH * IW + ih * IW, IH * IW, col, IW, R, IW, Cg,
             kernels::Epilogue{});
    for (int64_t m = 0; m < Mg; ++m) {
      const float add = pbias ? pbias[g * Mg + m] : 0.0f;
      float* yo = py + (b * group * Mg + g * Mg + m) * ON;
      for (int64_t kh = 0; kh < sh; ++kh) {
        float* yr = yo + (ih * sh + kh) * OW;
        for (int64_t kw = 0; kw < sw; ++kw) {
          const float* cr = col + ((m * sh + kh) * sw + kw) * IW;
          for (int64_t iw = 0; iw < IW; ++iw) yr[iw * sw + kw] = cr[iw] + add;
        }
      }
    }
  };
  const int64_t tasks = N * group * IH;
  if (ctx.pool && tasks > 1) ctx.pool->parallel_for(tasks, task);
  else
    for (int64_t t = 0; t < tasks; ++t) task(t, 0);
}

// --- ConvTranspose: one GEMM of the transposed filters by the input, then a scatter.
void run_conv_transpose(const Node& n, In in, Out out, OpContext& ctx) {
  const Tensor& x = need(n, in, 0);
  const Tensor& wt = need(n, in, 1);
  const Tensor* bias = in.size() > 2 ? in[2] : nullptr;
  need_float(n, x);
  need_float(n, wt);
  const int dims = x.rank() - 2;
  if (dims < 1 || dims > 3 || wt.rank() != x.rank()) n.fail("only 1 to 3 spatial dimensions are supported");
  const int64_t group = n.get_int("group", 1);
  const int64_t C = x.shape()[1];
  if (group < 1 || C % group || wt.shape()[0] != C) n.fail("weight does not match the input channels");
  const int64_t Mg = wt.shape()[1], M = Mg * group, Cg = C / group;
  if (bias && (bias->dtype() != DataType::Float || bias->size() != M)) n.fail("bias must hold one float per output channel");
  auto strides = n.get_ints("strides", std::vector<int64_t>(dims, 1));
  auto dilations = n.get_ints("dilations", std::vector<int64_t>(dims, 1));
  auto pads = n.get_ints("pads", std::vector<int64_t>(2 * dims, 0));
  auto out_pad = n.get_ints("output_padding", std::vector<int64_t>(dims, 0));
  auto out_shape_attr = n.get_ints("output_shape");
  std::string auto_pad = n.get_string("auto_pad", "NOTSET");
  if (static_cast<int>(strides.size()) != dims || static_cast<int>(dilations.size()) != dims ||
      static_cast<int>(pads.size()) != 2 * dims || static_cast<int>(out_pad.size()) != dims)
    n.fail("attributes do not match the input's rank");
  int64_t in_s[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, pb[3] = {0, 0, 0}, o_s[3] = {1, 1, 1};
  const int o = 3 - dims;
  for (int d = 0; d < dims; ++d) {
    in_s[o + d] = x.shape()[2 + d];
    k[o + d] = wt.shape()[2 + d];
    s[o + d] = strides[d];
    dl[o + d] = dilations[d];
    if (s[o + d] < 1 || dl[o + d] < 1) n.fail("strides and dilations must be positive");
    const int64_t full = s[o + d] * (in_s[o + d] - 1) + out_pad[d] + (k[o + d] - 1) * dl[o + d] + 1;
    int64_t target;
    if (!out_shape_attr.empty()) {
      if (static_cast<int>(out_shape_attr.size()) < dims) n.fail("output_shape too short");
      target = out_shape_attr[out_shape_attr.size() - dims + d];
      const int64_t total = full - target;
      pb[o + d] = (auto_pad == "SAME_LOWER") ? total - total / 2 : total / 2;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      target = in_s[o + d] * s[o + d];
      const int64_t total = std::max<int64_t>(0, full - target);
      pb[o + d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
      pb[o + d] = pads[d];
      target = full - pads[d] - pads[d + dims];
    }
    if (target < 0) n.fail("negative output size");
    o_s[o + d] = target;
  }
  std::vector<int64_t> shape{x.shape()[0], M};
  for (int d = o; d < 3; ++d) shape.push_back(o_s[d]);
  Tensor& y = *out[0];
  y.resize(DataType::Float, shape);
  float* py = y.data<float>();
  const float* px = x.data<float>();
  const float* pw = wt.data<float>();
  const int64_t N = x.shape()[0], IN = in_s[0] * in_s[1] * in_s[2], ON = o_s[0] * o_s[1] * o_s[2], KN = k[0] * k[1] * k[2];
  const float* pbias = bias ? bias->data<float>() : nullptr;
  const int64_t R = Mg * KN;
  if (in_s[0] == 1 && k[1] == s[1] && k[2] == s[2] && dl[1] == 1 && dl[2] == 1 && pb[1] == 0 && pb[2] == 0 &&
      o_s[1] == in_s[1] * s[1] && o_s[2] == in_s[2] * s[2]) {
    conv_transpose_tiles(px, pw, pbias, py, N, group, Cg, Mg, in_s[1], in_s[2], s[1], s[2], ctx);
    return;
  }
  const auto& kt = kernels::active();
  std::fill(py, py + y.size(), 0.0f);
  ctx.scratch.resize(static_cast<size_t>(R * Cg + R * IN));
  float* wt_t = ctx.scratch.data();
  float* col = wt_t + R * Cg;
  for (int64_t b = 0; b < N; ++b)
    for (int64_t g = 0; g < group; ++g) {
      for (int64_t c = 0; c < Cg; ++c)
        for (int64_t r = 0; r < R; ++r) wt_t[r * Cg + c] = pw[(g * Cg + c) * R + r];
      const float* xg = px + (b * C + g * Cg) * IN;
      auto task = [&](int64_t t, int) {
        const int64_t r0 = t * 16, rn = std::min<int64_t>(16, R - r0);
        kt.sgemm(wt_t + r0 * Cg, Cg, xg, IN, col + r0 * IN, IN, rn, IN, Cg, kernels::Epilogue{});
      };
      const int64_t tasks = (R + 15) / 16;
      if (ctx.pool && tasks > 1) ctx.pool->parallel_for(tasks, task);
      else
        for (int64_t t = 0; t < tasks; ++t) task(t, 0);
      // Scatter: one output channel per task, input positions walked row by row.
      auto scatter = [&](int64_t m, int) {
        float* yo = py + (b * M + g * Mg + m) * ON;
        for (int64_t kd = 0; kd < k[0]; ++kd)
          for (int64_t kh = 0; kh < k[1]; ++kh)
            for (int64_t kx = 0; kx < k[2]; ++kx) {
              const float* cr = col + (((m * k[0] + kd) * k[1] + kh) * k[2] + kx) * IN;
              for (int64_t id = 0; id < in_s[0]; ++id) {
                const int64_t od = id * s[0] + kd * dl[0] - pb[0];
                if (od < 0 || od >= o_s[0]) continue;
                for (int64_t ih = 0; ih < in_s[1]; ++ih) {
                  const int64_t oh = ih * s[1] + kh * dl[1] - pb[1];
                  if (oh < 0 || oh >= o_s[1]) continue;
                  float* yr = yo + (od * o_s[1] + oh) * o_s[2];
                  const float* cw = cr + (id * in_s[1] + ih) * in_s[2];
                  for (int64_t iw = 0; iw < in_s[2]; ++iw) {
                    const int64_t ow = iw * s[2] + kx * dl[2] - pb[2];
                    if (ow >= 0 && ow < o_s[2]) yr[ow] += cw[iw];
                  }
                }
              }
            }
      };
      if (ctx.pool && Mg > 1) ctx.pool->parallel_for(Mg, scatter);
      else
        for (int64_t m = 0; m < Mg; ++m) scatter(m, 0);
    }
  if (pbias)
    for (int64_t b = 0; b < N; ++b)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t i = 0; i < ON; ++i) py[(b * M + m) * ON + i] += pbias[m];
}

// --- Pooling
template <bool kMax>
void run_pool(const Node& n, In in, Out out, OpContext& ctx) {
  const Tensor& x = need(n, in, 0);
  need_float(n, x);
  if (out.size() > 1 && out[1]) n.fail("the Indices output is not supported");
  Window w = window_of(n, x.shape(), n.get_ints("kernel_shape"), n.get_int("ceil_mode", 0) != 0);
  const bool count_pad = n.get_int("count_include_pad", 0) != 0;
  const int64_t NC = x.shape()[0] * x.shape()[1], IN = w.in[0] * w.in[1] * w.in[2];
  out[0]->resize(DataType::Float, out_shape(x.shape(), x.shape()[1], w));
  const float* px = x.data<float>();
  const int64_t ON = w.out[0] * w.out[1] * w.out[2];
  // Every window inside the input (no padding, no ceil_mode overhang): no checks per tap.
  bool inside = true;
  for (int d = 0; d < 3; ++d)
    inside = inside && w.pad_begin[d] == 0 && (w.out[d] - 1) * w.stride[d] + (w.kernel[d] - 1) * w.dilation[d] < w.in[d];
  auto channel_inside = [&](int64_t c) {
    const float* src = px + c * IN;
    float* py = out[0]->data<float>() + c * ON;
    const float count = static_cast<float>(w.kernel[0] * w.kernel[1] * w.kernel[2]);
    for (int64_t od = 0; od < w.out[0]; ++od)
      for (int64_t oh = 0; oh < w.out[1]; ++oh)
        for (int64_t ow = 0; ow < w.out[2]; ++ow) {
          float acc = kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
          for (int64_t kd = 0; kd < w.kernel[0]; ++kd)
            for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
              const float* row = src + ((od * w.stride[0] + kd * w.dilation[0]) * w.in[1] + oh * w.stride[1] +
                                        kh * w.dilation[1]) * w.in[2] + ow * w.stride[2];
              for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
                const float v = row[kw * w.dilation[2]];
                acc = kMax ? std::max(acc, v) : acc + v;
              }
            }
          *py++ = kMax ? acc : acc / count;
        }
  };
  if (inside) {
    parallel_chunks(ctx, NC, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) channel_inside(c);
    });
    return;
  }
  auto channel = [&](int64_t c, int) {
    const float* src = px + c * IN;
    float* py = out[0]->data<float>() + c * ON;
    for (int64_t od = 0; od < w.out[0]; ++od)
      for (int64_t oh = 0; oh < w.out[1]; ++oh)
        for (int64_t ow = 0; ow < w.out[2]; ++ow) {
          float acc = kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
          int64_t count = 0, padded = 0;
          for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
            const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
            for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
              const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
              for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
                const int64_t iw = ow * w.stride[2] - w.pad_begin[2] + kw * w.dilation[2];
                // Padding counts only where it lies inside the padded extent (not ceil_mode's overhang).
                const bool in_pad = id >= -w.pad_begin[0] && id < w.in[0] + w.pad_end[0] && ih >= -w.pad_begin[1] &&
                                    ih < w.in[1] + w.pad_end[1] && iw >= -w.pad_begin[2] && iw < w.in[2] + w.pad_end[2];
                padded += in_pad;
                if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1] || iw < 0 || iw >= w.in[2]) continue;
                const float v = src[(id * w.in[1] + ih) * w.in[2] + iw];
                if (kMax) acc = std::max(acc, v);
                else acc += v;
                ++count;
              }
            }
          }
          if (!kMax) acc = (count_pad ? padded : count) ? acc / static_cast<float>(count_pad ? padded : count) : 0.0f;
          *py++ = acc;
        }
  };
  parallel_chunks(ctx, NC, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) channel(c, 0);
  });
}

template <bool kMax>
void run_global_pool(const Node& n, In in, Out out, OpContext& ctx) {
  const Tensor& x = need(n, in, 0);
  need_float(n, x);
  if (x.rank() < 3) n.fail("expects N x C x spatial");
  std::vector<int64_t> shape{x.shape()[0], x.shape()[1]};
  int64_t S = 1;
  for (int d = 2; d < x.rank(); ++d) {
    shape.push_back(1);
    S *= x.shape()[d];
  }
  out[0]->resize(DataType::Float, shape);
  // Eight interleaved partial results per channel (vectorizable), then combined.
  auto channel = [&](int64_t c, int) {
    const float* src = x.data<float>() + c * S;
    float part[8];
    std::fill(part, part + 8, kMax ? -std::numeric_limits<float>::infinity() : 0.0f);
    int64_t i = 0;
    for (; i + 8 <= S; i += 8)
      for (int l = 0; l < 8; ++l) part[l] = kMax ? std::max(part[l], src[i + l]) : part[l] + src[i + l];
    for (; i < S; ++i) part[i % 8] = kMax ? std::max(part[i % 8], src[i]) : part[i % 8] + src[i];
    float acc = part[0];
    for (int l = 1; l < 8; ++l) acc = kMax ? std::max(acc, part[l]) : acc + part[l];
    out[0]->data<float>()[c] = kMax ? acc : acc / static_cast<float>(S);
  };
  const int64_t NC = shape[0] * shape[1];
  parallel_chunks(ctx, NC, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) channel(c, 0);
  });
}

void run_batch_norm(const Node& n, In in, Out out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  need_float(n, x);
  if (x.rank() < 2) n.fail("expects N x C x ...");
  const int64_t C = x.shape()[1];
  const float* p[4];
  for (int i = 0; i < 4; ++i) {
    const Tensor& t = need(n, in, 1 + i);
    need_float(n, t);
    if (t.size() != C) n.fail("scale, bias, mean and var must hold one value per channel");
    p[i] = t.data<float>();
  }
  if (n.get_int("training_mode", 0)) n.fail("training_mode is not supported");
  const float eps = n.get_float("epsilon", 1e-5f);
  int64_t S = 1;
  for (int d = 2; d < x.rank(); ++d) S *= x.shape()[d];
  out[0]->resize(DataType::Float, x.shape());
  for (int64_t b = 0; b < x.shape()[0]; ++b)
    for (int64_t c = 0; c < C; ++c) {
      const float a = p[0][c] / std::sqrt(p[3][c] + eps), sh = p[1][c] - p[2][c] * a;
      const float* src = x.data<float>() + (b * C + c) * S;
      float* dst = out[0]->data<float>() + (b * C + c) * S;
      for (int64_t i = 0; i < S; ++i) dst[i] = src[i] * a + sh;
    }
}

void run_instance_norm(const Node& n, In in, Out out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  const Tensor& scale = need(n, in, 1);
  const Tensor& bias = need(n, in, 2);
  need_float(n, x);
  if (x.rank() < 3) n.fail("expects N x C x spatial");
  const int64_t C = x.shape()[1];
  if (scale.size() != C || bias.size() != C) n.fail("scale and bias must hold one value per channel");
  const float eps = n.get_float("epsilon", 1e-5f);
  int64_t S = 1;
  for (int d = 2; d < x.rank(); ++d) S *= x.shape()[d];
  out[0]->resize(DataType::Float, x.shape());
  for (int64_t b = 0; b < x.shape()[0]; ++b)
    for (int64_t c = 0; c < C; ++c) {
      const float* src = x.data<float>() + (b * C + c) * S;
      float* dst = out[0]->data<float>() + (b * C + c) * S;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < S; ++i) mean += src[i];
      mean /= static_cast<double>(S);
      for (int64_t i = 0; i < S; ++i) var += (src[i] - mean) * (src[i] - mean);
      var /= static_cast<double>(S);
      const float a = scale.data<float>()[c] / static_cast<float>(std::sqrt(var + eps));
      for (int64_t i = 0; i < S; ++i) dst[i] = static_cast<float>(src[i] - mean) * a + bias.data<float>()[c];
    }
}

// rows x cols row-major -> cols x rows.
std::vector<float> transposed(const float* a, int64_t rows, int64_t cols) {
  std::vector<float> t(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = a[r * cols + c];
  return t;
}

// y (m x n) = a (m x k, rows) . bt (n x k, rows), split over the pool by rows of a.
void gemm_rows(const float* a, int64_t m, const float* bt, int64_t nn, int64_t k, float* y, OpContext& ctx) {
  const auto& kt = kernels::active();
  // Tiles of 16 rows of a by 128 of bt (a one-row product still splits over the pool).
  constexpr int64_t kRows = 16, kCols = 128;
  const int64_t rt = (m + kRows - 1) / kRows, ct = (nn + kCols - 1) / kCols, tasks = rt * ct;
  auto task = [&](int64_t t, int) {
    const int64_t r0 = t / ct * kRows, rn = std::min(kRows, m - r0), c0 = t % ct * kCols, cn = std::min(kCols, nn - c0);
    kt.gemm_f32(bt + c0 * k, cn, a + r0 * k, rn, k, y + r0 * nn + c0, nn);
  };
  if (ctx.pool && tasks > 1 && m * nn * k > 65536) ctx.pool->parallel_for(tasks, task);
  else
    for (int64_t t = 0; t < tasks; ++t) task(t, 0);
}

// y (m x n) = a (m x k) . b (k x n), all row-major: sgemm over tiles of rows and columns.
void sgemm_split(const float* a, const float* b, float* y, int64_t m, int64_t nn, int64_t k, OpContext& ctx) {
  const auto& kt = kernels::active();
  constexpr int64_t kRows = 64, kCols = 240;
  const int64_t rt = (m + kRows - 1) / kRows, ct = (nn + kCols - 1) / kCols;
  auto task = [&](int64_t t, int) {
    const int64_t r0 = (t / ct) * kRows, c0 = (t % ct) * kCols;
    kt.sgemm(a + r0 * k, k, b + c0, nn, y + r0 * nn + c0, nn, std::min(kRows, m - r0), std::min(kCols, nn - c0), k,
             kernels::Epilogue{});
  };
  if (ctx.pool && rt * ct > 1 && m * nn * k > 65536) ctx.pool->parallel_for(rt * ct, task);
  else
    for (int64_t t = 0; t < rt * ct; ++t) task(t, 0);
}

template <class T>
void matmul_plain(const T* a, const T* b, T* y, int64_t m, int64_t k, int64_t nn) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < nn; ++j) {
      T acc = 0;
      for (int64_t l = 0; l < k; ++l) acc += a[i * k + l] * b[l * nn + j];
      y[i * nn + j] = acc;
    }
}

void run_matmul(const Node& n, In in, Out out, OpContext& ctx) {
  const Tensor& a = need(n, in, 0);
  const Tensor& b = need(n, in, 1);
  if (a.dtype() != b.dtype()) n.fail("inputs of different element types");
  if (a.rank() == 0 || b.rank() == 0) n.fail("scalar inputs");
  std::vector<int64_t> as = a.shape(), bs = b.shape();
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), nn = bs.back();
  if (bs[bs.size() - 2] != k) n.fail("inner dimensions differ: " + a.shape_string() + " x " + b.shape_string());
  std::vector<int64_t> ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  size_t br = std::max(ab.size(), bb.size());
  std::vector<int64_t> batch(br, 1);
  ab.insert(ab.begin(), br - ab.size(), 1);
  bb.insert(bb.begin(), br - bb.size(), 1);
  for (size_t i = 0; i < br; ++i) {
    if (ab[i] != bb[i] && ab[i] != 1 && bb[i] != 1) n.fail("batch dimensions cannot be broadcast");
    batch[i] = std::max(ab[i], bb[i]);
  }
  std::vector<int64_t> shape = batch;
  if (!a_vec) shape.push_back(m);
  if (!b_vec) shape.push_back(nn);
  Tensor& y = *out[0];
  y.resize(a.dtype(), shape);
  int64_t nb = 1;
  for (int64_t d : batch) nb *= d;
  auto offsets = [&](int64_t i, int64_t& oa, int64_t& ob) {
    oa = ob = 0;
    int64_t sa = 1, sb = 1, rem = i;
    for (size_t d = br; d-- > 0;) {
      int64_t idx = rem % batch[d];
      rem /= batch[d];
      oa += (ab[d] == 1 ? 0 : idx) * sa;
      ob += (bb[d] == 1 ? 0 : idx) * sb;
      sa *= ab[d];
      sb *= bb[d];
    }
  };
  auto generic = [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < nb; ++i) {
      int64_t oa, ob;
      offsets(i, oa, ob);
      matmul_plain(a.data<T>() + oa * m * k, b.data<T>() + ob * k * nn, y.data<T>() + i * m * nn, m, k, nn);
    }
  };
  switch (a.dtype()) {
    case DataType::Float: {
      // One B for every batch and A's batches consecutive: a single product of nb * m rows.
      bool stacked = true;
      for (int64_t i = 0; i < nb && stacked; ++i) {
        int64_t oa, ob;
        offsets(i, oa, ob);
        stacked = oa == i && ob == 0;
      }
      if (stacked) {
        sgemm_split(a.data<float>(), b.data<float>(), y.data<float>(), nb * m, nn, k, ctx);
        break;
      }
      for (int64_t i = 0; i < nb; ++i) {
        int64_t oa, ob;
        offsets(i, oa, ob);
        sgemm_split(a.data<float>() + oa * m * k, b.data<float>() + ob * k * nn, y.data<float>() + i * m * nn, m, nn, k, ctx);
      }
      break;
    }
    case DataType::Double: generic(double{}); break;
    case DataType::Int32: generic(int32_t{}); break;
    case DataType::Int64: generic(int64_t{}); break;
    default: n.fail(std::string("element type ") + dtype_name(a.dtype()) + " is not supported");
  }
}

void run_gemm(const Node& n, In in, Out out, OpContext& ctx) {
  const Tensor& a = need(n, in, 0);
  const Tensor& b = need(n, in, 1);
  const Tensor* c = in.size() > 2 ? in[2] : nullptr;
  need_float(n, a);
  need_float(n, b);
  if (a.rank() != 2 || b.rank() != 2) n.fail("A and B must be matrices");
  const bool ta = n.get_int("transA", 0), tb = n.get_int("transB", 0);
  const float alpha = n.get_float("alpha", 1), beta = n.get_float("beta", 1);
  const int64_t m = ta ? a.shape()[1] : a.shape()[0], k = ta ? a.shape()[0] : a.shape()[1];
  const int64_t kb = tb ? b.shape()[1] : b.shape()[0], nn = tb ? b.shape()[0] : b.shape()[1];
  if (k != kb) n.fail("inner dimensions differ: " + a.shape_string() + " x " + b.shape_string());
  std::vector<float> at, bt;
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  if (ta) { at = transposed(pa, k, m); pa = at.data(); }
  if (!tb) { bt = transposed(pb, k, nn); pb = bt.data(); }
  Tensor y(DataType::Float, {m, nn});
  gemm_rows(pa, m, pb, nn, k, y.data<float>(), ctx);
  float* py = y.data<float>();
  for (int64_t i = 0; i < m * nn; ++i) py[i] *= alpha;
  if (c && beta != 0) {
    need_float(n, *c);
    const auto& cs = c->shape();
    if (cs.size() > 2) n.fail("C has rank above 2");
    int64_t cm = cs.size() == 2 ? cs[0] : 1, cn = cs.empty() ? 1 : cs.back();
    if ((cm != 1 && cm != m) || (cn != 1 && cn != nn)) n.fail("C cannot be broadcast to the output");
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < nn; ++j) py[i * nn + j] += beta * c->data<float>()[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
  }
  *out[0] = std::move(y);
}

// Softmax / LogSoftmax / Hardmax: along one axis (opset >= 13), or over the flattened
// dimensions from the axis on (earlier opsets).
template <int kKind>  // 0 softmax, 1 log-softmax, 2 hardmax
void run_softmax(const Node& n, In in, Out out, OpContext& ctx) {
  const Tensor& x = need(n, in, 0);
  need_float(n, x);
  const int r = x.rank();
  int64_t axis = normalize_axis(n, n.get_int("axis", ctx.opset >= 13 ? -1 : 1), std::max(r, 1));
  int64_t outer = 1, len = 1, inner = 1;
  for (int d = 0; d < r; ++d) {
    if (d < axis) outer *= x.shape()[d];
    else if (d == axis || ctx.opset < 13) len *= x.shape()[d];
    else inner *= x.shape()[d];
  }
  out[0]->resize(DataType::Float, x.shape());
  const float* px = x.data<float>();
  float* py = out[0]->data<float>();
  if (kKind == 0 && inner == 1) {  // rows along memory: the SIMD exp, rows over the pool
    const auto& kt = kernels::active();
    auto row = [&](int64_t o, int) {
      const float* s = px + o * len;
      float* d = py + o * len;
      const float mx = len ? *std::max_element(s, s + len) : 0.0f;
      std::copy_n(s, len, d);
      const float inv = 1.0f / kt.exp_sum(d, len, mx);
      for (int64_t j = 0; j < len; ++j) d[j] *= inv;
    };
    if (ctx.pool && outer > 1) ctx.pool->parallel_for(outer, row);
    else
      for (int64_t o = 0; o < outer; ++o) row(o, 0);
    return;
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float* s = px + o * len * inner + i;
      float* d = py + o * len * inner + i;
      float mx = -std::numeric_limits<float>::infinity();
      int64_t arg = 0;
      for (int64_t j = 0; j < len; ++j)
        if (s[j * inner] > mx) { mx = s[j * inner]; arg = j; }
      if (kKind == 2) {
        for (int64_t j = 0; j < len; ++j) d[j * inner] = j == arg ? 1.0f : 0.0f;
        continue;
      }
      double sum = 0;
      for (int64_t j = 0; j < len; ++j) {
        const float e = std::exp(s[j * inner] - mx);
        if (kKind == 0) d[j * inner] = e;
        sum += e;
      }
      const float inv = static_cast<float>(1.0 / sum), log_sum = static_cast<float>(std::log(sum));
      for (int64_t j = 0; j < len; ++j) {
        if (kKind == 0) d[j * inner] *= inv;
        else d[j * inner] = s[j * inner] - mx - log_sum;
      }
    }
}

void run_layer_norm(const Node& n, In in, Out out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  const Tensor& scale = need(n, in, 1);
  const Tensor* bias = in.size() > 2 ? in[2] : nullptr;
  need_float(n, x);
  need_float(n, scale);
  const int r = x.rank();
  int64_t axis = normalize_axis(n, n.get_int("axis", -1), r);
  int64_t outer = 1, len = 1;
  for (int d = 0; d < r; ++d) (d < axis ? outer : len) *= x.shape()[d];
  // scale and bias broadcast to the normalized dimensions.
  auto expand = [&](const Tensor& t) {
    std::vector<float> v(len);
    std::vector<int64_t> tail(x.shape().begin() + axis, x.shape().end());
    auto ts = t.shape();
    if (ts.size() > tail.size()) n.fail("scale or bias has a higher rank than the normalized dimensions");
    ts.insert(ts.begin(), tail.size() - ts.size(), 1);
    for (size_t d = 0; d < tail.size(); ++d)
      if (ts[d] != 1 && ts[d] != tail[d]) n.fail("scale or bias does not broadcast to the normalized dimensions");
    for (int64_t i = 0; i < len; ++i) {
      int64_t rem = i, off = 0, st = 1;
      std::vector<int64_t> idx(tail.size());
      for (size_t d = tail.size(); d-- > 0;) { idx[d] = rem % tail[d]; rem /= tail[d]; }
      for (size_t d = tail.size(); d-- > 0;) { off += (ts[d] == 1 ? 0 : idx[d]) * st; st *= ts[d]; }
      v[i] = t.data<float>()[off];
    }
    return v;
  };
  std::vector<float> g = expand(scale), b = bias ? expand(*bias) : std::vector<float>(len, 0.0f);
  const float eps = n.get_float("epsilon", 1e-5f);
  out[0]->resize(DataType::Float, x.shape());
  std::vector<int64_t> stat_shape(x.shape().begin(), x.shape().begin() + axis);
  stat_shape.insert(stat_shape.end(), r - axis, 1);
  if (out.size() > 1 && out[1]) out[1]->resize(DataType::Float, stat_shape);
  if (out.size() > 2 && out[2]) out[2]->resize(DataType::Float, stat_shape);
  for (int64_t o = 0; o < outer; ++o) {
    const float* s = x.data<float>() + o * len;
    float* d = out[0]->data<float>() + o * len;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < len; ++i) mean += s[i];
    mean /= static_cast<double>(len);
    for (int64_t i = 0; i < len; ++i) var += (s[i] - mean) * (s[i] - mean);
    var /= static_cast<double>(len);
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < len; ++i) d[i] = static_cast<float>((s[i] - mean) * inv) * g[i] + b[i];
    if (out.size() > 1 && out[1]) out[1]->data<float>()[o] = static_cast<float>(mean);
    if (out.size() > 2 && out[2]) out[2]->data<float>()[o] = static_cast<float>(inv);
  }
}

// Resize: nearest and linear (any number of resized dimensions), the usual coordinate modes.
void run_resize(const Node& n, In in, Out out, OpContext& ctx) {
  const Tensor& x = need(n, in, 0);
  need_float(n, x);
  const int r = x.rank();
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  const Tensor* scale_t = ctx.opset < 11 ? (in.size() > 1 ? in[1] : nullptr) : (in.size() > 2 ? in[2] : nullptr);
  const Tensor* size_t_ = ctx.opset >= 11 && in.size() > 3 ? in[3] : nullptr;
  if (scale_t && scale_t->size() > 0) {
    need_float(n, *scale_t);
    scales.assign(scale_t->data<float>(), scale_t->data<float>() + scale_t->size());
  }
  if (size_t_ && size_t_->size() > 0) sizes = read_ints(n, *size_t_);
  if (!n.get_ints("axes").empty()) n.fail("the axes attribute is not supported");
  if (n.get_string("keep_aspect_ratio_policy", "stretch") != "stretch") n.fail("keep_aspect_ratio_policy is not supported");
  if (n.get_int("antialias", 0)) n.fail("antialias is not supported");
  std::vector<int64_t> shape(r);
  if (!sizes.empty()) {
    if (static_cast<int>(sizes.size()) != r) n.fail("sizes must have one value per dimension");
    shape = sizes;
    scales.resize(r);
    for (int d = 0; d < r; ++d) scales[d] = static_cast<float>(shape[d]) / static_cast<float>(x.shape()[d]);
  } else {
    if (static_cast<int>(scales.size()) != r) n.fail("scales must have one value per dimension");
    for (int d = 0; d < r; ++d) {
      if (!(scales[d] > 0)) n.fail("scales must be positive");
      shape[d] = static_cast<int64_t>(std::floor(static_cast<double>(x.shape()[d]) * scales[d]));
    }
  }
  std::string mode = n.get_string("mode", "nearest");
  std::string ctm = n.get_string("coordinate_transformation_mode", "half_pixel");
  std::string nearest = n.get_string("nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear") n.fail("mode '" + mode + "' is not supported");
  if (ctm == "tf_crop_and_resize") n.fail("coordinate_transformation_mode tf_crop_and_resize is not supported");
  if (ctx.opset < 11) ctm = "asymmetric";
  // Per dimension and output index: the source coordinate.
  auto source = [&](int d, int64_t o) -> double {
    const double s = scales[d], in_len = static_cast<double>(x.shape()[d]), out_len = static_cast<double>(shape[d]);
    if (ctm == "half_pixel") return (o + 0.5) / s - 0.5;
    if (ctm == "pytorch_half_pixel") return out_len > 1 ? (o + 0.5) / s - 0.5 : 0.0;
    if (ctm == "align_corners") return out_len > 1 ? o * (in_len - 1) / (in_len * s - 1) : 0.0;
    if (ctm == "asymmetric") return o / s;
    if (ctm == "half_pixel_symmetric") {
      const double adj = out_len / (s * in_len), center = in_len / 2;
      return center * (1 - adj) + (o + 0.5) / s - 0.5;
    }
    n.fail("coordinate_transformation_mode '" + ctm + "' is not supported");
  };
  struct Tap { int64_t i0, i1; double w; };
  std::vector<std::vector<Tap>> taps(r);
  for (int d = 0; d < r; ++d) {
    const int64_t len = x.shape()[d];
    if (len == 0 && shape[d] > 0) n.fail("cannot resize an empty dimension");
    for (int64_t o = 0; o < shape[d]; ++o) {
      double c = source(d, o);
      if (mode == "nearest") {
        double f;
        if (nearest == "floor") f = std::floor(c);
        else if (nearest == "ceil") f = std::ceil(c);
        else if (nearest == "round_prefer_ceil") f = std::floor(c + 0.5);
        else if (nearest == "round_prefer_floor") f = (c - std::floor(c) == 0.5) ? std::floor(c) : std::round(c);
        else n.fail("nearest_mode '" + nearest + "' is not supported");
        int64_t i = std::clamp<int64_t>(static_cast<int64_t>(f), 0, len - 1);
        taps[d].push_back({i, i, 0});
      } else {
        c = std::clamp(c, 0.0, static_cast<double>(len - 1));
        int64_t i0 = static_cast<int64_t>(std::floor(c));
        int64_t i1 = std::min(i0 + 1, len - 1);
        taps[d].push_back({i0, i1, c - static_cast<double>(i0)});
      }
    }
  }
  Tensor& y = *out[0];
  y.resize(DataType::Float, shape);
  auto xs = strides_of(x.shape());
  std::vector<int64_t> idx(r, 0);
  const float* px = x.data<float>();
  if (mode == "nearest" && r > 0) {  // a gather: row offsets by odometer, the last dimension by table
    const int64_t inner = shape[r - 1];
    float* dst = y.data<float>();
    for (int64_t done = 0; done < y.size(); done += inner) {
      int64_t base = 0;
      for (int d = 0; d + 1 < r; ++d) base += taps[d][idx[d]].i0 * xs[d];
      for (int64_t j = 0; j < inner; ++j) dst[j] = px[base + taps[r - 1][j].i0];
      dst += inner;
      for (int d = r - 2; d >= 0; --d) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
    return;
  }
  for (int64_t i = 0; i < y.size(); ++i) {
    // Sum over the 2^r corners (dimensions whose taps coincide contribute once).
    double acc = 0;
    const int corners = mode == "linear" ? (1 << r) : 1;
    for (int cmask = 0; cmask < corners; ++cmask) {
      double w = 1;
      int64_t off = 0;
      bool skip = false;
      for (int d = 0; d < r; ++d) {
        const Tap& t = taps[d][idx[d]];
        const bool hi = (cmask >> d) & 1;
        if (hi && t.w == 0) { skip = true; break; }
        w *= hi ? t.w : 1 - t.w;
        off += (hi ? t.i1 : t.i0) * xs[d];
      }
      if (!skip) acc += w * px[off];
    }
    y.data<float>()[i] = static_cast<float>(acc);
    for (int d = r - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

void register_nn_ops(const OpRegistrar& r) {
  r.add("Conv", run_conv);
  r.add("MinnowPointwiseDepthwise", run_pointwise_depthwise);
  r.add("MinnowPointwise", run_pointwise);
  r.add("ConvTranspose", run_conv_transpose);
  r.add("MaxPool", run_pool<true>);
  r.add("AveragePool", run_pool<false>);
  r.add("GlobalAveragePool", run_global_pool<false>);
  r.add("GlobalMaxPool", run_global_pool<true>);
  r.add("BatchNormalization", run_batch_norm);
  r.add("InstanceNormalization", run_instance_norm);
  r.add("MatMul", run_matmul);
  r.add("Gemm", run_gemm);
  r.add("Softmax", run_softmax<0>);
  r.add("LogSoftmax", run_softmax<1>);
  r.add("Hardmax", run_softmax<2>);
  r.add("LayerNormalization", run_layer_norm);
  r.add("Resize", run_resize);
}

}  // namespace minnow::onnx
