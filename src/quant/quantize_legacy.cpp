// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0: 32-value blocks with one f16 scale (and minimum).
// Without importance: ggml's reference rounding, step for step in float, so the bytes
// equal the `gguf` package's quantizers. With importance: a weighted scale search.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/block_quantizers.hpp"
#include "quant/scale_search.hpp"
#include "tensor/fp16.hpp"

namespace minnow::quant {
namespace {

constexpr int QK = 32;

void put_f16(uint8_t* p, float v) {
  const uint16_t h = fp32_to_fp16(v);
  std::memcpy(p, &h, 2);
}
float f16_round(float v) { return fp16_to_fp32(fp32_to_fp16(v)); }

// roundf without a libm call: |v| <= 127.5 here, so the int conversion (which truncates)
// and the fraction are exact.
inline int round_half_away(float v) {
  int t = static_cast<int>(v);
  const float frac = v - static_cast<float>(t);
  if (frac >= 0.5f) ++t;
  else if (frac <= -0.5f) --t;
  return t;
}

// Element j < 16 in the low nibble of byte j, element j + 16 in its high nibble.
void pack_nibbles(const uint8_t* q, uint8_t* qs) {
  for (int j = 0; j < QK / 2; ++j) qs[j] = static_cast<uint8_t>((q[j] & 0xf) | ((q[j + QK / 2] & 0xf) << 4));
}
// Bit j of the little-endian word: the fifth bit of element j.
void pack_high_bits(const uint8_t* q, uint8_t* qh) {
  uint32_t h = 0;
  for (int j = 0; j < QK; ++j) h |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
  std::memcpy(qh, &h, 4);
}

// The element of largest magnitude, signed (the first one on ties, as argmax takes it).
float signed_max(const float* x) {
  float amax = 0, m = 0;
  for (int j = 0; j < QK; ++j)
    if (std::fabs(x[j]) > amax) amax = std::fabs(x[j]), m = x[j];
  return m;
}

// Reference symmetric block: d = max / -half, q = trunc(x / d + half + 0.5) in [0, 2 half - 1].
float reference_symmetric(const float* x, int half, uint8_t* q) {
  const float d = signed_max(x) / static_cast<float>(-half);
  const float id = d != 0 ? 1.0f / d : 0.0f;
  const float bias = static_cast<float>(half) + 0.5f;
  for (int j = 0; j < QK; ++j) {
    const int v = static_cast<int>(x[j] * id + bias);  // >= 0: truncation is trunc()
    q[j] = static_cast<uint8_t>(std::min(v, 2 * half - 1));
  }
  return d;
}

// Reference affine block: d = (max - min) / levels, q = trunc((x - min) / d + 0.5).
void reference_affine(const float* x, int levels, uint8_t* q, float* d_out, float* m_out) {
  float lo = x[0], hi = x[0];
  for (int j = 1; j < QK; ++j) lo = x[j] < lo ? x[j] : lo, hi = x[j] > hi ? x[j] : hi;
  const float d = (hi - lo) / static_cast<float>(levels);
  const float id = d != 0 ? 1.0f / d : 0.0f;
  for (int j = 0; j < QK; ++j) {
    const int v = static_cast<int>((x[j] - lo) * id + 0.5f);  // >= 0: truncation is trunc()
    q[j] = static_cast<uint8_t>(std::min(v, levels));
  }
  *d_out = d, *m_out = lo;
}

// Importance path, symmetric: searched scale, rounded to f16, then the values re-rounded
// against the stored scale. Writes q + half (unsigned codes).
float searched_symmetric(const float* x, const float* imp, int qmin, int qmax, float row_sigma2, uint8_t* q) {
  float w[QK];
  int8_t s[QK];
  error_weights(x, imp, QK, w, ImportanceUse::TimesMagnitude, row_sigma2);  // measured closer than importance alone here
  const float d = f16_round(fit_symmetric(x, w, QK, qmin, qmax, s));
  const float id = d != 0 ? 1.0f / d : 0.0f;
  for (int j = 0; j < QK; ++j) q[j] = static_cast<uint8_t>(round_clamp(x[j] * id, qmin, qmax) - qmin);
  return d;
}

void searched_affine(const float* x, const float* imp, int levels, uint8_t* q, float* d_out, float* m_out) {
  float w[QK];
  error_weights(x, imp, QK, w);
  const AffineFit f = fit_affine(x, w, QK, levels, false, q);
  const float d = f16_round(f.scale), m = f16_round(f.offset);
  const float id = d != 0 ? 1.0f / d : 0.0f;
  for (int j = 0; j < QK; ++j) q[j] = static_cast<uint8_t>(round_clamp((x[j] - m) * id, 0, levels));
  *d_out = d, *m_out = m;
}

}  // namespace

// Codes of the layout's own range: unsigned, and for Q8_0 signed bytes.
void set_codes_q4_0(uint8_t* block, const int* codes) {
  uint8_t q[QK];
  for (int j = 0; j < QK; ++j) q[j] = static_cast<uint8_t>(codes[j]);
  pack_nibbles(q, block + 2);
}
void set_codes_q4_1(uint8_t* block, const int* codes) {
  uint8_t q[QK];
  for (int j = 0; j < QK; ++j) q[j] = static_cast<uint8_t>(codes[j]);
  pack_nibbles(q, block + 4);
}
void set_codes_q5_0(uint8_t* block, const int* codes) {
  uint8_t q[QK];
  for (int j = 0; j < QK; ++j) q[j] = static_cast<uint8_t>(codes[j]);
  pack_high_bits(q, block + 2);
  pack_nibbles(q, block + 6);
}
void set_codes_q5_1(uint8_t* block, const int* codes) {
  uint8_t q[QK];
  for (int j = 0; j < QK; ++j) q[j] = static_cast<uint8_t>(codes[j]);
  pack_high_bits(q, block + 4);
  pack_nibbles(q, block + 8);
}
void set_codes_q8_0(uint8_t* block, const int* codes) {
  for (int j = 0; j < QK; ++j) block[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(codes[j]));
}

void quantize_q4_0(const float* x, uint8_t* dst, int64_t nb, const float* imp) {
  const float row_sigma2 = imp ? mean_square(x, nb * QK) : -1;  // a row per call (GPTQ: a block)
  for (int64_t i = 0; i < nb; ++i, x += QK, dst += 18, imp = imp ? imp + QK : nullptr) {
    uint8_t q[QK];
    const float d = imp ? searched_symmetric(x, imp, -8, 7, row_sigma2, q) : reference_symmetric(x, 8, q);
    put_f16(dst, d);
    pack_nibbles(q, dst + 2);
  }
}

void quantize_q5_0(const float* x, uint8_t* dst, int64_t nb, const float* imp) {
  const float row_sigma2 = imp ? mean_square(x, nb * QK) : -1;  // a row per call (GPTQ: a block)
  for (int64_t i = 0; i < nb; ++i, x += QK, dst += 22, imp = imp ? imp + QK : nullptr) {
    uint8_t q[QK];
    const float d = imp ? searched_symmetric(x, imp, -16, 15, row_sigma2, q) : reference_symmetric(x, 16, q);
    put_f16(dst, d);
    pack_high_bits(q, dst + 2);
    pack_nibbles(q, dst + 6);
  }
}

void quantize_q4_1(const float* x, uint8_t* dst, int64_t nb, const float* imp) {
  for (int64_t i = 0; i < nb; ++i, x += QK, dst += 20, imp = imp ? imp + QK : nullptr) {
    uint8_t q[QK];
    float d, m;
    if (imp) searched_affine(x, imp, 15, q, &d, &m);
    else reference_affine(x, 15, q, &d, &m);
    put_f16(dst, d);
    put_f16(dst + 2, m);
    pack_nibbles(q, dst + 4);
  }
}

void quantize_q5_1(const float* x, uint8_t* dst, int64_t nb, const float* imp) {
  for (int64_t i = 0; i < nb; ++i, x += QK, dst += 24, imp = imp ? imp + QK : nullptr) {
    uint8_t q[QK];
    float d, m;
    if (imp) searched_affine(x, imp, 31, q, &d, &m);
    else reference_affine(x, 31, q, &d, &m);
    put_f16(dst, d);
    put_f16(dst + 2, m);
    pack_high_bits(q, dst + 4);
    pack_nibbles(q, dst + 8);
  }
}

// Reference: d = max|x| / 127, q = round(x / d) with halves away from zero. Importance
// is not used, as in llama.cpp: at 8 bits the searched scale measured no better
// (docs/quantize.md: wikitext-2 40.07 against 39.90 on Qwen2.5-Coder-0.5B, a tie on SmolLM2),
// and the reference keeps every block's largest weight exact.
void quantize_q8_0(const float* x, uint8_t* dst, int64_t nb, const float* /*importance*/) {
  for (int64_t i = 0; i < nb; ++i, x += QK, dst += 34) {
    auto* qs = reinterpret_cast<int8_t*>(dst + 2);
    float amax = 0;
    for (int j = 0; j < QK; ++j) amax = std::fabs(x[j]) > amax ? std::fabs(x[j]) : amax;
    const float d = amax / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    put_f16(dst, d);
    for (int j = 0; j < QK; ++j) qs[j] = static_cast<int8_t>(round_half_away(x[j] * id));
  }
}

}  // namespace minnow::quant
