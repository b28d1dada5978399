// Q4_K, Q5_K, Q6_K: 256-value super-blocks with per-sub-block scales quantized against one
// f16 super-scale. Every level is a weighted least-squares search (quant/scale_search):
// sub-block scales (and minimums), then the 6-/8-bit codes of those scales, then the
// values re-rounded against the scales as stored, and finally the f16 super-scales refit
// for those codes (kept only when the error drops).
#include <cmath>
#include <cstring>

#include "quant/block_quantizers.hpp"
#include "quant/scale_search.hpp"
#include "tensor/dtype.hpp"
#include "tensor/fp16.hpp"

namespace minnow::quant {
namespace {

constexpr int QK_K = 256;

void put_f16(uint8_t* p, float v) {
  const uint16_t h = fp32_to_fp16(v);
  std::memcpy(p, &h, 2);
}
float f16_round(float v) { return fp16_to_fp32(fp32_to_fp16(v)); }

// The inverse of k_scale_min (tensor/dtype.hpp): 8 six-bit scales and minimums in 12 bytes.
void pack_scale_mins(const uint8_t* sc, const uint8_t* mn, uint8_t* s) {
  for (int j = 0; j < 4; ++j) {
    s[j] = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
    s[j + 4] = static_cast<uint8_t>((mn[j] & 63) | ((mn[j + 4] >> 4) << 6));
    s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xf) | ((mn[j + 4] & 0xf) << 4));
  }
}

// Codes for n values v (weights vw) against one f16 scale: v ~ d * code, code in
// [qmin, qmax], re-rounded against d as stored. For tiny tensors the searched d is an f16
// subnormal with few significant bits: a d up to 2^6 larger (smaller codes) may then
// represent v better, so those are tried too. Returns d as stored.
template <typename Code>
float fit_codes(const float* v, const float* vw, int n, int qmin, int qmax, Code* codes) {
  int8_t c[16];
  const float searched = fit_symmetric(v, vw, n, qmin, qmax, c);
  float best_d = 0, best_err = INFINITY;
  for (int k = 0; k <= 6; ++k) {
    const float d = f16_round(std::ldexp(searched, k));
    if (!std::isfinite(d)) break;
    const float inv = d != 0 ? 1.0f / d : 0.0f;
    float err = 0;
    for (int j = 0; j < n; ++j) {
      const float e = v[j] - d * static_cast<float>(round_clamp(v[j] * inv, qmin, qmax));
      err += vw[j] * e * e;
    }
    if (err < best_err) best_err = err, best_d = d;
    if (std::fabs(d) >= 6.103515625e-05f) break;  // a normal f16: larger d only loses code precision
  }
  if (!(best_err < INFINITY)) best_d = f16_round(searched);  // beyond f16: left infinite, so quantize_row refuses it
  const float inv = best_d != 0 && std::isfinite(best_d) ? 1.0f / best_d : 0.0f;
  for (int j = 0; j < n; ++j) codes[j] = static_cast<Code>(round_clamp(v[j] * inv, qmin, qmax));
  return best_d;
}

double weighted_error(const float* x, const float* w, const float* y, int n) {
  double e = 0;
  for (int i = 0; i < n; ++i) e += w[i] * (static_cast<double>(y[i]) - x[i]) * (static_cast<double>(y[i]) - x[i]);
  return e;
}

// Q4_K and Q5_K: x = d * sc_j * q - dmin * mn_j on sub-block j (8 of 32), q in [0, qmax].
struct AffineSuperBlock {
  float d = 0, dmin = 0;
  uint8_t sc[8] = {}, mn[8] = {};
  uint8_t q[QK_K] = {};
};

void requantize(const float* x, int qmax, AffineSuperBlock& b) {
  for (int j = 0; j < 8; ++j) {
    const float ds = b.d * b.sc[j], dm = b.dmin * b.mn[j];
    const float inv = ds > 0 ? 1.0f / ds : 0.0f;
    for (int i = 0; i < 32; ++i) b.q[32 * j + i] = static_cast<uint8_t>(ds > 0 ? round_clamp((x[32 * j + i] + dm) * inv, 0, qmax) : 0);
  }
}

void dequantize(const AffineSuperBlock& b, float* y) {
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 32; ++i) y[32 * j + i] = b.d * b.sc[j] * b.q[32 * j + i] - b.dmin * b.mn[j];
}

// Least squares for (d, dmin) with the integer codes fixed: x ~ d * (sc q) - dmin * mn.
bool refit_super_scales(const float* x, const float* w, const AffineSuperBlock& b, float* d, float* dmin) {
  double saa = 0, sab = 0, sbb = 0, sxa = 0, sxb = 0;
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 32; ++i) {
      const double wi = w[32 * j + i], a = static_cast<double>(b.sc[j]) * b.q[32 * j + i], m = -static_cast<double>(b.mn[j]);
      saa += wi * a * a, sab += wi * a * m, sbb += wi * m * m, sxa += wi * x[32 * j + i] * a, sxb += wi * x[32 * j + i] * m;
    }
  const double det = saa * sbb - sab * sab;
  if (!(det > 0)) return false;
  const double nd = (sxa * sbb - sxb * sab) / det, nm = (saa * sxb - sab * sxa) / det;
  if (!(nd >= 0) || !(nm >= 0)) return false;
  *d = f16_round(static_cast<float>(nd)), *dmin = f16_round(static_cast<float>(nm));
  return std::isfinite(*d) && std::isfinite(*dmin);
}

void quantize_affine_super_block(const float* x, const float* imp, int qmax, AffineSuperBlock& b) {
  float w[QK_K], scales[8], mins[8], sw[8], mw[8];
  error_weights(x, imp, QK_K, w);
  for (int j = 0; j < 8; ++j) {
    const AffineFit f = fit_affine(x + 32 * j, w + 32 * j, 32, qmax, true, b.q + 32 * j);
    scales[j] = f.scale, mins[j] = -f.offset;
    // An error e in the scale costs e^2 sum(w q^2); in the minimum, e^2 sum(w).
    double sq = 0, s1 = 0;
    for (int i = 0; i < 32; ++i) sq += w[32 * j + i] * b.q[32 * j + i] * b.q[32 * j + i], s1 += w[32 * j + i];
    sw[j] = static_cast<float>(sq) + 1e-30f, mw[j] = static_cast<float>(s1) + 1e-30f;
  }
  b.d = fit_codes(scales, sw, 8, 0, 63, b.sc);
  b.dmin = fit_codes(mins, mw, 8, 0, 63, b.mn);
  requantize(x, qmax, b);
  float y[QK_K];
  dequantize(b, y);
  double err = weighted_error(x, w, y, QK_K);
  for (int it = 0; it < 2; ++it) {
    AffineSuperBlock c = b;
    if (!refit_super_scales(x, w, b, &c.d, &c.dmin)) break;
    requantize(x, qmax, c);
    dequantize(c, y);
    const double e = weighted_error(x, w, y, QK_K);
    if (!(e < err)) break;
    err = e, b = c;
  }
}

// Q6_K: x = d * sc_j * (q - 32) on sub-block j (16 of 16), sc_j int8, q - 32 in [-32, 31].
struct SymmetricSuperBlock {
  float d = 0;
  int8_t sc[16] = {};
  int8_t q[QK_K] = {};
};

void requantize(const float* x, SymmetricSuperBlock& b) {
  for (int j = 0; j < 16; ++j) {
    const float ds = b.d * b.sc[j];
    const float inv = ds != 0 ? 1.0f / ds : 0.0f;
    for (int i = 0; i < 16; ++i) b.q[16 * j + i] = static_cast<int8_t>(round_clamp(x[16 * j + i] * inv, -32, 31));
  }
}

double symmetric_error(const float* x, const float* w, const SymmetricSuperBlock& b) {
  double e = 0;
  for (int j = 0; j < 16; ++j)
    for (int i = 0; i < 16; ++i) {
      const double r = static_cast<double>(b.d * b.sc[j] * b.q[16 * j + i]) - x[16 * j + i];
      e += w[16 * j + i] * r * r;
    }
  return e;
}

void quantize_symmetric_super_block(const float* x, const float* imp, SymmetricSuperBlock& b) {
  float w[QK_K], scales[16], sw[16];
  error_weights(x, imp, QK_K, w);
  for (int j = 0; j < 16; ++j) {
    scales[j] = fit_symmetric(x + 16 * j, w + 16 * j, 16, -32, 31, b.q + 16 * j);
    double sq = 0;
    for (int i = 0; i < 16; ++i) sq += w[16 * j + i] * b.q[16 * j + i] * b.q[16 * j + i];
    sw[j] = static_cast<float>(sq) + 1e-30f;
  }
  b.d = fit_codes(scales, sw, 16, -127, 127, b.sc);
  requantize(x, b);
  double err = symmetric_error(x, w, b);
  for (int it = 0; it < 2; ++it) {
    double sxa = 0, saa = 0;
    for (int j = 0; j < 16; ++j)
      for (int i = 0; i < 16; ++i) {
        const double a = static_cast<double>(b.sc[j]) * b.q[16 * j + i];
        sxa += w[16 * j + i] * x[16 * j + i] * a, saa += w[16 * j + i] * a * a;
      }
    if (!(saa > 0)) break;
    SymmetricSuperBlock c = b;
    c.d = f16_round(static_cast<float>(sxa / saa));
    if (!std::isfinite(c.d)) break;
    requantize(x, c);
    const double e = symmetric_error(x, w, c);
    if (!(e < err)) break;
    err = e, b = c;
  }
}

// Each 32 bytes of codes hold sub-blocks 2j (low nibbles) and 2j + 1 (high nibbles); Q5_K's
// bits 2j and 2j + 1 of qh[l] are their fifth bits.
void pack_q45_k_codes(const uint8_t* q, uint8_t* dst, bool five_bits) {
  uint8_t* qs = dst + (five_bits ? 48 : 16);
  if (five_bits) std::memset(dst + 16, 0, 32);
  for (int j = 0; j < 4; ++j)
    for (int l = 0; l < 32; ++l) {
      const uint8_t lo = q[64 * j + l], hi = q[64 * j + 32 + l];
      qs[32 * j + l] = static_cast<uint8_t>((lo & 0xf) | ((hi & 0xf) << 4));
      if (five_bits) dst[16 + l] |= static_cast<uint8_t>(((lo >> 4) << (2 * j)) | ((hi >> 4) << (2 * j + 1)));
    }
}

// Layout (tensor/dtype.cpp deq_q6_k): ql[128] low nibbles, qh[64] high 2-bit pairs; each
// half of 128 values spreads over 64 ql and 32 qh bytes. q: codes - 32, in [-32, 31].
void pack_q6_k_codes(const int8_t* q, uint8_t* dst) {
  uint8_t* ql = dst;
  uint8_t* qh = dst + 128;
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const int base = 128 * h + l;
      const int q1 = q[base] + 32, q2 = q[base + 32] + 32, q3 = q[base + 64] + 32, q4 = q[base + 96] + 32;
      ql[64 * h + l] = static_cast<uint8_t>((q1 & 0xf) | ((q3 & 0xf) << 4));
      ql[64 * h + l + 32] = static_cast<uint8_t>((q2 & 0xf) | ((q4 & 0xf) << 4));
      qh[32 * h + l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
    }
}

void quantize_q45_k(const float* x, uint8_t* dst, int64_t nb, const float* imp, bool five_bits) {
  const int qmax = five_bits ? 31 : 15;
  const int64_t bytes = five_bits ? 176 : 144;
  for (int64_t i = 0; i < nb; ++i, x += QK_K, dst += bytes, imp = imp ? imp + QK_K : nullptr) {
    AffineSuperBlock b;
    quantize_affine_super_block(x, imp, qmax, b);
    put_f16(dst, b.d);
    put_f16(dst + 2, b.dmin);
    pack_scale_mins(b.sc, b.mn, dst + 4);
    pack_q45_k_codes(b.q, dst, five_bits);
  }
}

}  // namespace

void quantize_q4_k(const float* x, uint8_t* dst, int64_t nb, const float* imp) { quantize_q45_k(x, dst, nb, imp, false); }
void quantize_q5_k(const float* x, uint8_t* dst, int64_t nb, const float* imp) { quantize_q45_k(x, dst, nb, imp, true); }

// 16 int8 scales at byte 192, f16 d at 208, after the codes.
void quantize_q6_k(const float* x, uint8_t* dst, int64_t nb, const float* imp) {
  for (int64_t i = 0; i < nb; ++i, x += QK_K, dst += 210, imp = imp ? imp + QK_K : nullptr) {
    SymmetricSuperBlock b;
    quantize_symmetric_super_block(x, imp, b);
    std::memcpy(dst + 192, b.sc, 16);
    put_f16(dst + 208, b.d);
    pack_q6_k_codes(b.q, dst);
  }
}

void set_codes_q4_k(uint8_t* block, const int* codes) {
  uint8_t q[QK_K];
  for (int j = 0; j < QK_K; ++j) q[j] = static_cast<uint8_t>(codes[j]);
  pack_q45_k_codes(q, block, false);
}
void set_codes_q5_k(uint8_t* block, const int* codes) {
  uint8_t q[QK_K];
  for (int j = 0; j < QK_K; ++j) q[j] = static_cast<uint8_t>(codes[j]);
  pack_q45_k_codes(q, block, true);
}
void set_codes_q6_k(uint8_t* block, const int* codes) {
  int8_t q[QK_K];
  for (int j = 0; j < QK_K; ++j) q[j] = static_cast<int8_t>(codes[j] - 32);
  pack_q6_k_codes(q, block);
}

}  // namespace minnow::quant
