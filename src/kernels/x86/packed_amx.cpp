// Prompt products on AMX tiles (Intel Sapphire Rapids and later). A tile product C += A B
// multiplies 16 weight rows (A: 16 x 32 int8, one block) by 16 tokens' activation bytes
// (B) in one instruction. The 15-bit activations are two byte planes (hi, lo), so each
// block takes two products, combined exactly as 128 hi + lo in int32; then, as in the
// 8-row kernels, acc = fma(scale * x.d, sum, acc) block by block and the minimums in a
// second chain, in the same order: every number is the scalar reference's, bit for bit.
//
// Per call: the weight rows of the task are unpacked once into plain int8 blocks (A tiles)
// with their float scales, then every 16-token tile of the laid-out activations (B tiles,
// lay_out15) runs over them. Built with -mamx-tile -mamx-int8 and AVX-512; only reached
// after dispatch.cpp's check (CPUID, XCR0 and Linux's permission for the tile state).
#include <immintrin.h>

// GCC 12 flags its own AVX-512 headers (an undefined merge source inside them).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/ops.hpp"
#include "kernels/packed.hpp"
#include "kernels/x86/packed_amx.hpp"

namespace minnow::kernels {
namespace {

// One 16-token tile's block of 32 activations: each byte plane as a B tile (row j holds
// bytes 4j..4j+3 of token 0, then of token 1, ...), then the tokens' d and s.
struct alignas(64) TileBlock {
  int8_t hi[8][64], lo[8][64];
  float d[kTileTokens], s[kTileTokens];
};

// One 32-column block of 16 weight rows, unpacked: the A tile, the float scale each row's
// integer sum is multiplied by (Q6_K: one per 16 columns), and the minimum that multiplies
// x.s in the second chain (zero where the type has none).
struct alignas(64) RowsBlock {
  int8_t w[kTileRows][32];
  float scale[2][kTileRows];
  float min[kTileRows];
};

int64_t tile_count(int64_t n_tokens) { return (n_tokens + kTileTokens - 1) / kTileTokens; }

size_t layout_bytes(int64_t n_tokens, int64_t nb) {
  return static_cast<size_t>(tile_count(n_tokens) * nb) * sizeof(TileBlock);
}

void lay_out15(const Q15Block* x, int64_t n_tokens, int64_t nb, int64_t tile, uint8_t* layout) {
  TileBlock* out = reinterpret_cast<TileBlock*>(layout) + tile * nb;
  const int64_t t0 = tile * kTileTokens;
  const int n = static_cast<int>(std::min<int64_t>(kTileTokens, n_tokens - t0));
  for (int64_t b = 0; b < nb; ++b) {
    TileBlock& tb = out[b];
    if (n < kTileTokens) std::memset(&tb, 0, sizeof tb);
    for (int i = 0; i < n; ++i) {
      const Q15Block& q = x[(t0 + i) * nb + b];
      for (int j = 0; j < 8; ++j) {
        std::memcpy(&tb.hi[j][4 * i], q.hi + 4 * j, 4);
        std::memcpy(&tb.lo[j][4 * i], q.lo + 4 * j, 4);
      }
      tb.d[i] = q.d;
      tb.s[i] = q.s;
    }
  }
}

// The 8 rows' scale factors of a group (kernels/packed.hpp), as floats: halves, and 6- or
// 8-bit integer scales; each product below is the reference's single rounding.
__m256 halves8(const uint8_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
__m256 unsigned_bytes(const uint8_t* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
__m256 signed_bytes(const uint8_t* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
__m256 negated(__m256 v) { return _mm256_xor_ps(v, _mm256_set1_ps(-0.0f)); }

// --- Unpacking one packed group-block (8 rows, kernels/packed.hpp) into 8 rows of w.

// The nibbles (4 chunks of 32 bytes): chunk i's dword r holds row r's elements 4i..4i+3
// (low nibbles) and 16+4i.. (high). Gathering row r's dwords of the 4 chunks gives its 16
// low nibbles (elements 0..15) and 16 high ones (16..31) in order.
void unpack_nibbles(const uint8_t* q, int8_t (*w)[32]) {
  const __m512i c01 = _mm512_loadu_si512(q), c23 = _mm512_loadu_si512(q + 64);
  const __m512i rows03 = _mm512_setr_epi32(0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27);
  const __m512i pair0 = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), pair1 = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
  const __m512i m = _mm512_set1_epi8(0x0f);
  for (int h = 0; h < 2; ++h) {  // rows 4h..4h+3, one 16-byte lane each
    const __m512i v = _mm512_permutex2var_epi32(c01, _mm512_add_epi32(rows03, _mm512_set1_epi32(4 * h)), c23);
    const __m512i lo = _mm512_and_si512(v, m), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m);
    _mm512_storeu_si512(w[4 * h], _mm512_permutex2var_epi64(lo, pair0, hi));
    _mm512_storeu_si512(w[4 * h + 2], _mm512_permutex2var_epi64(lo, pair1, hi));
  }
}

// Q8_0's 8 chunks: chunk j's dword r is row r's elements 4j..4j+3.
void unpack_bytes(const uint8_t* q, int8_t (*w)[32]) {
  const __m512i rows03 = _mm512_setr_epi32(0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27);
  const __m512i pair0 = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), pair1 = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
  const __m512i c[4] = {_mm512_loadu_si512(q), _mm512_loadu_si512(q + 64), _mm512_loadu_si512(q + 128),
                        _mm512_loadu_si512(q + 192)};
  for (int h = 0; h < 2; ++h) {
    const __m512i idx = _mm512_add_epi32(rows03, _mm512_set1_epi32(4 * h));
    const __m512i first = _mm512_permutex2var_epi32(c[0], idx, c[1]);  // chunks 0..3
    const __m512i second = _mm512_permutex2var_epi32(c[2], idx, c[3]);  // chunks 4..7
    _mm512_storeu_si512(w[4 * h], _mm512_permutex2var_epi64(first, pair0, second));
    _mm512_storeu_si512(w[4 * h + 2], _mm512_permutex2var_epi64(first, pair1, second));
  }
}

// Adds `bit` where a bit plane (32 bytes: dword r is row r's; bit e of byte i marks element
// 4i+e, bit 4+e element 16+4i+e) has a one: the fifth bit of Q5 types, Q6_K's fifth and sixth.
void add_plane(const uint8_t* plane, int8_t bit, int8_t (*w)[32]) {
  alignas(64) static const int8_t kByte[64] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3,  // row a, 0..15
                                               0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3,  // row a, 16..31
                                               4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7,  // row b
                                               4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7};
  alignas(64) static const uint8_t kBit[64] = {
      1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 16, 32, 64, 128, 16, 32, 64, 128, 16, 32, 64, 128, 16, 32, 64, 128,
      1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 16, 32, 64, 128, 16, 32, 64, 128, 16, 32, 64, 128, 16, 32, 64, 128};
  const __m512i pick = _mm512_load_si512(kByte), bits = _mm512_load_si512(kBit), add = _mm512_set1_epi8(bit);
  for (int p = 0; p < 4; ++p) {  // rows 2p and 2p + 1
    int64_t two;
    std::memcpy(&two, plane + 8 * p, 8);
    const __mmask64 set = _mm512_test_epi8_mask(_mm512_shuffle_epi8(_mm512_set1_epi64(two), pick), bits);
    const __m512i v = _mm512_loadu_si512(w[2 * p]);
    _mm512_storeu_si512(w[2 * p], _mm512_mask_add_epi8(v, set, v, add));
  }
}

void subtract_32(int8_t (*w)[32]) {  // Q6_K's offset, as the reference applies it (q - 32)
  for (int p = 0; p < 4; ++p)
    _mm512_storeu_si512(w[2 * p], _mm512_sub_epi8(_mm512_loadu_si512(w[2 * p]), _mm512_set1_epi8(32)));
}

// Rows `row0`..row0+7 of every block (nb) of one packed group into u.
template <DType T>
void unpack_group(const uint8_t* group, int64_t nb, int row0, RowsBlock* u) {
  if constexpr (T == DType::Q4_K || T == DType::Q5_K || T == DType::Q6_K) {
    constexpr bool k6 = T == DType::Q6_K;
    constexpr int planes = T == DType::Q4_K ? 0 : T == DType::Q5_K ? 1 : 2;
    constexpr size_t header = k6 ? 144 : 160, sub = 32 * planes + 128, super = header + 8 * sub;
    for (int64_t s = 0; s < nb / 8; ++s) {
      const uint8_t* g = group + s * super;
      for (size_t line = 0; line < super; line += 64) _mm_prefetch(reinterpret_cast<const char*>(g + 2 * super + line), _MM_HINT_T0);
      const __m256 d = halves8(g), dmin = k6 ? _mm256_setzero_ps() : halves8(g + 16);
      for (int j = 0; j < 8; ++j) {
        RowsBlock& b = u[8 * s + j];
        const uint8_t* q = g + header + j * sub;
        unpack_nibbles(q + 32 * planes, b.w + row0);
        for (int p = 0; p < planes; ++p) add_plane(q + 32 * p, static_cast<int8_t>(16 << p), b.w + row0);
        if (k6) subtract_32(b.w + row0);
        if (k6) {
          _mm256_storeu_ps(b.scale[0] + row0, _mm256_mul_ps(d, signed_bytes(g + 16 + 8 * (2 * j))));
          _mm256_storeu_ps(b.scale[1] + row0, _mm256_mul_ps(d, signed_bytes(g + 16 + 8 * (2 * j + 1))));
          _mm256_storeu_ps(b.min + row0, _mm256_setzero_ps());
        } else {
          _mm256_storeu_ps(b.scale[0] + row0, _mm256_mul_ps(d, unsigned_bytes(g + 32 + 8 * j)));
          _mm256_storeu_ps(b.min + row0, negated(_mm256_mul_ps(dmin, unsigned_bytes(g + 96 + 8 * j))));
        }
      }
    }
  } else {
    constexpr bool has_min = T == DType::Q4_1 || T == DType::Q5_1, fifth = T == DType::Q5_0 || T == DType::Q5_1;
    constexpr size_t plane_at = has_min ? 32 : 16, quants_at = plane_at + (fifth ? 32 : 0);
    constexpr size_t bytes = quants_at + (T == DType::Q8_0 ? 256 : 128);
    for (int64_t i = 0; i < nb; ++i) {
      const uint8_t* g = group + i * bytes;
      RowsBlock& b = u[i];
      if (T == DType::Q8_0) {
        unpack_bytes(g + quants_at, b.w + row0);
      } else {
        unpack_nibbles(g + quants_at, b.w + row0);
        if (fifth) add_plane(g + plane_at, 16, b.w + row0);
      }
      const __m256 d = halves8(g);
      _mm256_storeu_ps(b.scale[0] + row0, d);
      const __m256 min = T == DType::Q8_0 ? _mm256_setzero_ps()
                         : has_min        ? halves8(g + 16)
                                          : _mm256_mul_ps(d, _mm256_set1_ps(fifth ? -16.0f : -8.0f));
      _mm256_storeu_ps(b.min + row0, min);
    }
  }
}

// Rows 8..15 of a last lone group: zero weights and scales (their outputs are dropped).
void clear_second_group(int64_t nb, RowsBlock* u) {
  for (int64_t i = 0; i < nb; ++i) {
    std::memset(u[i].w[8], 0, 8 * 32);
    for (int h = 0; h < 2; ++h) std::fill_n(u[i].scale[h] + 8, 8, 0.0f);
    std::fill_n(u[i].min + 8, 8, 0.0f);
  }
}

// --- The tile products.

struct TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Tiles 0..3: sums (16 rows x 16 tokens of int32); 4: the weights (16 rows x 32 bytes, or
// x 16 for half blocks); 5, 6: the activations' hi and lo planes (8 rows, or 4 for half
// blocks, of 64 bytes).
void configure(bool halves) {
  TileConfig c;
  for (int t = 0; t < 4; ++t) c.colsb[t] = 64, c.rows[t] = 16;
  c.colsb[4] = halves ? 16 : 32, c.rows[4] = 16;
  for (int t = 5; t < 7; ++t) c.colsb[t] = 64, c.rows[t] = halves ? 4 : 8;
  _tile_loadconfig(&c);
}

#define MINNOW_INLINE inline __attribute__((always_inline))

// acc += (scale * x.d) * float(128 hi + lo), row by row: the 8-row kernels' step.
MINNOW_INLINE void accumulate(const int32_t (*hi)[16], const int32_t (*lo)[16], const float* scale, __m512 xd,
                              __m512 acc[16]) {
#pragma GCC unroll 16
  for (int r = 0; r < 16; ++r) {
    const __m512i sum = _mm512_add_epi32(_mm512_slli_epi32(_mm512_load_si512(hi[r]), 7), _mm512_load_si512(lo[r]));
    acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(scale[r]), xd), _mm512_cvtepi32_ps(sum), acc[r]);
  }
}

// Block b's products into tiles and stored to sums[b & 1] (Q6_K: its two halves, four
// stores); the caller converts them one block later, so the stores have landed by then.
template <bool kHalves>
MINNOW_INLINE void block_products(const RowsBlock& u, const TileBlock& x, int32_t (*sums)[16][16]) {
  if constexpr (kHalves) {
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    _tile_loadd(4, u.w, 32);
    _tile_loadd(5, x.hi, 64);
    _tile_loadd(6, x.lo, 64);
    _tile_dpbssd(0, 4, 5);
    _tile_dpbssd(1, 4, 6);
    _tile_loadd(4, &u.w[0][16], 32);
    _tile_loadd(5, x.hi[4], 64);
    _tile_loadd(6, x.lo[4], 64);
    _tile_dpbssd(2, 4, 5);
    _tile_dpbssd(3, 4, 6);
    _tile_stored(0, sums[0], 64); _tile_stored(1, sums[1], 64); _tile_stored(2, sums[2], 64); _tile_stored(3, sums[3], 64);
  } else {
    _tile_zero(0); _tile_zero(1);
    _tile_loadd(4, u.w, 32);
    _tile_loadd(5, x.hi, 64);
    _tile_loadd(6, x.lo, 64);
    _tile_dpbssd(0, 4, 5);
    _tile_dpbssd(1, 4, 6);
    _tile_stored(0, sums[0], 64); _tile_stored(1, sums[1], 64);
  }
}

// acc += (scale * x.d) * float(128 hi + lo) for the sums of one block, row by row (Q6_K:
// the first half's then the second's).
template <bool kHalves>
MINNOW_INLINE void block_floats(const RowsBlock& u, const TileBlock& x, const int32_t (*sums)[16][16], __m512 acc[16]) {
  const __m512 xd = _mm512_load_ps(x.d);
  accumulate(sums[0], sums[1], u.scale[0], xd, acc);
  if constexpr (kHalves) accumulate(sums[2], sums[3], u.scale[1], xd, acc);
}

// 16 rows (u, nb blocks) against one token tile (x): out[r][token]. The float work of a
// block runs after the next block's products are issued: a load right after a tile store
// waits for the store to land.
template <bool kHalves, bool kMin, bool kPlusZero>
void tile_rows(const RowsBlock* u, const TileBlock* x, int64_t nb, float (*out)[16]) {
  __m512 acc[16];
  for (auto& a : acc) a = _mm512_setzero_ps();
  constexpr int64_t kLag = 2;
  alignas(64) int32_t sums[kLag + 1][kHalves ? 4 : 2][16][16];
  for (int64_t b = 0; b < nb + kLag; ++b) {
    if (b < nb) block_products<kHalves>(u[b], x[b], sums[b % (kLag + 1)]);
    if (b >= kLag) block_floats<kHalves>(u[b - kLag], x[b - kLag], sums[(b - kLag) % (kLag + 1)], acc);
  }
  if constexpr (kMin) {
    __m512 accm[16];
    for (auto& a : accm) a = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const __m512 xs = _mm512_load_ps(x[b].s);
#pragma GCC unroll 16
      for (int r = 0; r < 16; ++r) accm[r] = _mm512_fmadd_ps(_mm512_set1_ps(u[b].min[r]), xs, accm[r]);
    }
    for (int r = 0; r < 16; ++r) acc[r] = _mm512_add_ps(acc[r], accm[r]);
  } else if constexpr (kPlusZero) {  // the reference adds its (zero) minimum chain: -0 becomes +0
    for (int r = 0; r < 16; ++r) acc[r] = _mm512_add_ps(acc[r], _mm512_setzero_ps());
  }
  for (int r = 0; r < 16; ++r) _mm512_storeu_ps(out[r], acc[r]);
}

template <DType T>
void rows15(const WeightView& w, int64_t r0, int64_t r1, const uint8_t* layout, int64_t n_tokens, float* y) {
  constexpr bool halves = T == DType::Q6_K, has_min = T != DType::Q8_0 && T != DType::Q6_K;
  const int64_t nb = w.cols / 32, n_groups = (r1 - r0 + kTileRows - 1) / kTileRows;
  const size_t group_bytes = packed_group_bytes(w.type, w.cols);
  thread_local std::vector<RowsBlock> unpacked;
  if (unpacked.size() < static_cast<size_t>(n_groups * nb)) unpacked.resize(static_cast<size_t>(n_groups * nb));
  for (int64_t g = 0; g < n_groups; ++g) {
    const int64_t row = r0 + g * kTileRows;
    RowsBlock* u = unpacked.data() + g * nb;
    unpack_group<T>(w.packed + static_cast<size_t>(row / kPackRows) * group_bytes, nb, 0, u);
    if (row + kPackRows < w.rows)
      unpack_group<T>(w.packed + static_cast<size_t>(row / kPackRows + 1) * group_bytes, nb, 8, u);
    else
      clear_second_group(nb, u);
  }
  configure(halves);
  const TileBlock* x = reinterpret_cast<const TileBlock*>(layout);
  alignas(64) float out[kTileRows][16];
  for (int64_t tile = 0; tile < tile_count(n_tokens); ++tile) {
    const int64_t t0 = tile * kTileTokens;
    const int n = static_cast<int>(std::min<int64_t>(kTileTokens, n_tokens - t0));
    for (int64_t g = 0; g < n_groups; ++g) {
      tile_rows<halves, has_min, halves>(unpacked.data() + g * nb, x + tile * nb, nb, out);
      const int64_t row = r0 + g * kTileRows, rows = std::min<int64_t>(kTileRows, r1 - row);
      for (int i = 0; i < n; ++i)
        for (int64_t r = 0; r < rows; ++r) y[(t0 + i) * w.rows + row + r] = out[r][i];
    }
  }
}

bool supports(DType t) {
  return t == DType::Q4_0 || t == DType::Q4_1 || t == DType::Q5_0 || t == DType::Q5_1 || t == DType::Q8_0 ||
         t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K;
}

void rows15_any(const WeightView& w, int64_t r0, int64_t r1, const uint8_t* layout, int64_t n_tokens, float* y) {
  switch (w.type) {
    case DType::Q4_0: return rows15<DType::Q4_0>(w, r0, r1, layout, n_tokens, y);
    case DType::Q4_1: return rows15<DType::Q4_1>(w, r0, r1, layout, n_tokens, y);
    case DType::Q5_0: return rows15<DType::Q5_0>(w, r0, r1, layout, n_tokens, y);
    case DType::Q5_1: return rows15<DType::Q5_1>(w, r0, r1, layout, n_tokens, y);
    case DType::Q8_0: return rows15<DType::Q8_0>(w, r0, r1, layout, n_tokens, y);
    case DType::Q4_K: return rows15<DType::Q4_K>(w, r0, r1, layout, n_tokens, y);
    case DType::Q5_K: return rows15<DType::Q5_K>(w, r0, r1, layout, n_tokens, y);
    case DType::Q6_K: return rows15<DType::Q6_K>(w, r0, r1, layout, n_tokens, y);
    default: return;
  }
}

}  // namespace

const PackedTiles& packed_tiles_amx() {
  static const PackedTiles t{.min_tokens = 16,
                             .supports = supports,
                             .layout_bytes = layout_bytes,
                             .lay_out15 = lay_out15,
                             .rows15 = rows15_any};
  return t;
}

}  // namespace minnow::kernels
