// Prompt products on AMX tiles (Intel Sapphire Rapids and later). A tile product C += A B
// multiplies 16 tokens' activation bytes (A: 16 x 32 int8, one block) by 16 weight rows (B)
// in one instruction, C holding 16 tokens x 16 rows. The 15-bit activations are two byte
// planes (hi, lo), so each block takes two products, combined exactly as 128 hi + lo in
// int32 (int8 activations, --int8-decode: one plane, one product); then, as in the 8-row
// kernels, acc = fma(scale * x.d, sum, acc) block by block and the minimums in a second
// chain, in the same order: every number is the scalar reference's, bit for bit.
//
// Per call: the activations are laid out once as A tiles (lay_out), the weight rows of
// each task unpacked once into B tiles (the packed layout's dwords of 4 elements a row are
// already B's; only the nibbles and bit planes are spread out) with their float scales,
// then every 16-token tile runs over them. Built with -mamx-tile -mamx-int8 and AVX-512;
// only reached after dispatch.cpp's check (CPUID, XCR0 and Linux's permission for the tile
// state).
#include <immintrin.h>

// GCC 12 flags its own AVX-512 headers (an undefined merge source inside them).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/ops.hpp"
#include "kernels/packed.hpp"
#include "kernels/x86/packed_amx.hpp"

namespace minnow::kernels {
namespace {

#define MINNOW_INLINE inline __attribute__((always_inline))

// Byte planes of an activation type: int8 one (q), 15-bit two (hi, then lo).
template <typename Act>
constexpr int kPlanes = std::is_same_v<Act, Q8Block> ? 1 : 2;

// One 16-token tile's block of 32 activations: each byte plane as an A tile (a token a row),
// then the tokens' d and s.
template <typename Act>
struct alignas(64) TileBlock {
  int8_t plane[kPlanes<Act>][kTileTokens][32];
  float d[kTileTokens], s[kTileTokens];
};

int64_t tile_count(int64_t n_tokens) { return (n_tokens + kTileTokens - 1) / kTileTokens; }

size_t layout_bytes(int64_t n_tokens, int64_t nb, bool int8) {
  const size_t block = int8 ? sizeof(TileBlock<Q8Block>) : sizeof(TileBlock<Q15Block>);
  return static_cast<size_t>(tile_count(n_tokens) * nb) * block;
}

template <typename Act>
void lay_out(const Act* x, int64_t n_tokens, int64_t nb, int64_t tile, uint8_t* layout) {
  TileBlock<Act>* out = reinterpret_cast<TileBlock<Act>*>(layout) + tile * nb;
  const int64_t t0 = tile * kTileTokens;
  const int n = static_cast<int>(std::min<int64_t>(kTileTokens, n_tokens - t0));
  for (int64_t b = 0; b < nb; ++b) {
    TileBlock<Act>& tb = out[b];
    if (n < kTileTokens) std::memset(&tb, 0, sizeof tb);
    for (int i = 0; i < n; ++i) {
      const Act& q = x[(t0 + i) * nb + b];
      if constexpr (kPlanes<Act> == 1) {
        std::memcpy(tb.plane[0][i], q.q, 32);
      } else {
        std::memcpy(tb.plane[0][i], q.hi, 32);
        std::memcpy(tb.plane[1][i], q.lo, 32);
      }
      tb.d[i] = q.d;
      tb.s[i] = q.s;
    }
  }
}

// One 32-column block of 16 weight rows, unpacked: the B tile (row j holds elements
// 4j..4j+3 of weight row 0, then of row 1, ...), the float scale each row's integer sum is
// multiplied by (Q6_K: one per 16 columns), and the minimum that multiplies x.s in the
// second chain (zero where the type has none).
struct alignas(64) RowsBlock {
  int8_t w[8][64];
  float scale[2][kTileRows];
  float min[kTileRows];
};

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

__m256i load32(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// --- One packed group-block (8 rows, kernels/packed.hpp) as 8 B-tile rows of 32 bytes:
// r[j] holds elements 4j..4j+3 of each of the 8 rows.

// The nibbles (4 chunks of 32 bytes): chunk i's dword r holds row r's elements 4i..4i+3
// (low nibbles) and 16+4i.. (high), so chunk i's low nibbles are r[i], its high ones r[4+i].
MINNOW_INLINE void nibbles(const uint8_t* q, __m256i r[8]) {
  const __m256i m = _mm256_set1_epi8(0x0f);
  for (int i = 0; i < 4; ++i) {
    const __m256i v = load32(q + 32 * i);
    r[i] = _mm256_and_si256(v, m);
    r[4 + i] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
  }
}

// Q8_0's 8 chunks are the rows as they are.
MINNOW_INLINE void bytes(const uint8_t* q, __m256i r[8]) {
  for (int j = 0; j < 8; ++j) r[j] = load32(q + 32 * j);
}

// Adds `bit` where a bit plane (32 bytes: dword r is row r's; bit e of byte i marks element
// 4i+e, bit 4+e element 16+4i+e) has a one: the fifth bit of Q5 types, Q6_K's fifth and sixth.
MINNOW_INLINE void plus_plane(const uint8_t* plane, int8_t bit, __m256i r[8]) {
  const __m256i p = load32(plane), add = _mm256_set1_epi8(bit);
  const __m256i dwords = _mm256_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12,  //
                                          0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12);
  const __m256i low = _mm256_set1_epi32(0x08040201), high = _mm256_set1_epi32(static_cast<int>(0x80402010u));
  for (int i = 0; i < 4; ++i) {  // byte i of every dword, spread over the dword
    const __m256i v = _mm256_shuffle_epi8(p, _mm256_add_epi8(dwords, _mm256_set1_epi8(static_cast<char>(i))));
    r[i] = _mm256_mask_add_epi8(r[i], _mm256_test_epi8_mask(v, low), r[i], add);
    r[4 + i] = _mm256_mask_add_epi8(r[4 + i], _mm256_test_epi8_mask(v, high), r[4 + i], add);
  }
}

// Rows `half` * 8 .. + 7 of every block (nb) of one packed group into u.
template <DType T>
void unpack_group(const uint8_t* group, int64_t nb, int half, RowsBlock* u) {
  const int row0 = 8 * half;
  __m256i r[8];
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
        nibbles(q + 32 * planes, r);
        for (int p = 0; p < planes; ++p) plus_plane(q + 32 * p, static_cast<int8_t>(16 << p), r);
        for (int i = 0; i < 8; ++i) {
          if (k6) r[i] = _mm256_sub_epi8(r[i], _mm256_set1_epi8(32));  // the reference's q - 32
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(&b.w[i][32 * half]), r[i]);
        }
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
    constexpr size_t block_bytes = quants_at + (T == DType::Q8_0 ? 256 : 128);
    for (int64_t i = 0; i < nb; ++i) {
      const uint8_t* g = group + i * block_bytes;
      RowsBlock& b = u[i];
      if (T == DType::Q8_0) {
        bytes(g + quants_at, r);
      } else {
        nibbles(g + quants_at, r);
        if (fifth) plus_plane(g + plane_at, 16, r);
      }
      for (int j = 0; j < 8; ++j) _mm256_storeu_si256(reinterpret_cast<__m256i*>(&b.w[j][32 * half]), r[j]);
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
    for (int j = 0; j < 8; ++j) std::memset(&u[i].w[j][32], 0, 32);
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

// Tiles 0..3: sums (16 tokens x 16 rows of int32); 4: the weights (8 rows of 64 bytes, or
// 4 for half blocks); 5, 6: the activations' byte planes (16 tokens x 32 bytes, or 16).
void configure(bool halves) {
  TileConfig c;
  for (int t = 0; t < 4; ++t) c.colsb[t] = 64, c.rows[t] = 16;
  c.colsb[4] = 64, c.rows[4] = halves ? 4 : 8;
  for (int t = 5; t < 7; ++t) c.colsb[t] = halves ? 16 : 32, c.rows[t] = 16;
  _tile_loadconfig(&c);
}

// One block's products into tiles, stored to `sums`: a sum per plane, for each half block
// of Q6_K (sums[half * planes + plane]). Tile numbers must be literals (GCC's tile
// intrinsics are assembler templates), hence a branch per shape.
template <bool kHalves, typename Act>
MINNOW_INLINE void block_products(const RowsBlock& u, const TileBlock<Act>& x, int32_t (*sums)[16][16]) {
  constexpr bool two = kPlanes<Act> == 2;
  if constexpr (!kHalves) {
    _tile_zero(0);
    _tile_loadd(4, u.w[0], 64);
    _tile_loadd(5, x.plane[0][0], 32);
    _tile_dpbssd(0, 5, 4);
    if constexpr (two) {
      _tile_zero(1);
      _tile_loadd(6, x.plane[1][0], 32);
      _tile_dpbssd(1, 6, 4);
    }
    _tile_stored(0, sums[0], 64);
    if constexpr (two) _tile_stored(1, sums[1], 64);
  } else if constexpr (!two) {
    _tile_zero(0); _tile_zero(1);
    _tile_loadd(4, u.w[0], 64);
    _tile_loadd(5, x.plane[0][0], 32);
    _tile_dpbssd(0, 5, 4);
    _tile_loadd(4, u.w[4], 64);
    _tile_loadd(5, &x.plane[0][0][16], 32);
    _tile_dpbssd(1, 5, 4);
    _tile_stored(0, sums[0], 64); _tile_stored(1, sums[1], 64);
  } else {
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    _tile_loadd(4, u.w[0], 64);
    _tile_loadd(5, x.plane[0][0], 32);
    _tile_loadd(6, x.plane[1][0], 32);
    _tile_dpbssd(0, 5, 4);
    _tile_dpbssd(1, 6, 4);
    _tile_loadd(4, u.w[4], 64);
    _tile_loadd(5, &x.plane[0][0][16], 32);
    _tile_loadd(6, &x.plane[1][0][16], 32);
    _tile_dpbssd(2, 5, 4);
    _tile_dpbssd(3, 6, 4);
    _tile_stored(0, sums[0], 64); _tile_stored(1, sums[1], 64); _tile_stored(2, sums[2], 64); _tile_stored(3, sums[3], 64);
  }
}

// acc[token] += (scale * x.d) * float(sum) over the 16 rows, token by token; the 15-bit
// sum is 128 hi + lo.
template <int kPlaneCount>
MINNOW_INLINE void accumulate(const int32_t (*sums)[16][16], const float* scale, const float* xd, __m512 acc[16]) {
  const __m512 s = _mm512_load_ps(scale);
#pragma GCC unroll 16
  for (int t = 0; t < 16; ++t) {
    __m512i sum = _mm512_load_si512(sums[0][t]);
    if constexpr (kPlaneCount == 2) sum = _mm512_add_epi32(_mm512_slli_epi32(sum, 7), _mm512_load_si512(sums[1][t]));
    acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(s, _mm512_set1_ps(xd[t])), _mm512_cvtepi32_ps(sum), acc[t]);
  }
}

template <bool kHalves, typename Act>
MINNOW_INLINE void block_floats(const RowsBlock& u, const TileBlock<Act>& x, const int32_t (*sums)[16][16],
                                __m512 acc[16]) {
  accumulate<kPlanes<Act>>(sums, u.scale[0], x.d, acc);
  if constexpr (kHalves) accumulate<kPlanes<Act>>(sums + kPlanes<Act>, u.scale[1], x.d, acc);
}

// 16 rows (u, nb blocks) against one token tile (x, nb blocks): y[token][row] for `n`
// tokens and `rows` rows, y_stride floats a token. A block's float work runs two blocks
// after its products, so its loads never wait on tile stores still in flight (measured
// within noise of converting right away: 838 against 851 us in minnow_kernels_bench).
template <bool kHalves, bool kMin, bool kPlusZero, typename Act>
void tile_rows(const RowsBlock* u, const TileBlock<Act>* x, int64_t nb, int n, int rows, float* y, int64_t y_stride) {
  __m512 acc[16];
  for (auto& a : acc) a = _mm512_setzero_ps();
  constexpr int64_t kLag = 2;
  alignas(64) int32_t sums[kLag + 1][(kHalves ? 2 : 1) * kPlanes<Act>][16][16];
  for (int64_t b = 0; b < nb + kLag; ++b) {
    if (b < nb) block_products<kHalves, Act>(u[b], x[b], sums[b % (kLag + 1)]);
    if (b >= kLag) block_floats<kHalves, Act>(u[b - kLag], x[b - kLag], sums[(b - kLag) % (kLag + 1)], acc);
  }
  if constexpr (kMin) {
    __m512 accm[16];
    for (auto& a : accm) a = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const __m512 m = _mm512_load_ps(u[b].min);
#pragma GCC unroll 16
      for (int t = 0; t < 16; ++t) accm[t] = _mm512_fmadd_ps(m, _mm512_set1_ps(x[b].s[t]), accm[t]);
    }
    for (int t = 0; t < 16; ++t) acc[t] = _mm512_add_ps(acc[t], accm[t]);
  } else if constexpr (kPlusZero) {  // the reference adds its (zero) minimum chain: -0 becomes +0
    for (int t = 0; t < 16; ++t) acc[t] = _mm512_add_ps(acc[t], _mm512_setzero_ps());
  }
  const __mmask16 keep = static_cast<__mmask16>((1u << rows) - 1);
  for (int t = 0; t < n; ++t) _mm512_mask_storeu_ps(y + t * y_stride, keep, acc[t]);
}

template <DType T, typename Act>
void product_rows(const WeightView& w, int64_t r0, int64_t r1, const uint8_t* layout, int64_t n_tokens, float* y) {
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
      unpack_group<T>(w.packed + static_cast<size_t>(row / kPackRows + 1) * group_bytes, nb, 1, u);
    else
      clear_second_group(nb, u);
  }
  configure(halves);
  const auto* x = reinterpret_cast<const TileBlock<Act>*>(layout);
  for (int64_t tile = 0; tile < tile_count(n_tokens); ++tile) {
    const int64_t t0 = tile * kTileTokens;
    const int n = static_cast<int>(std::min<int64_t>(kTileTokens, n_tokens - t0));
    for (int64_t g = 0; g < n_groups; ++g) {
      const int64_t row = r0 + g * kTileRows;
      const int rows = static_cast<int>(std::min<int64_t>(kTileRows, r1 - row));
      tile_rows<halves, has_min, halves>(unpacked.data() + g * nb, x + tile * nb, nb, n, rows, y + t0 * w.rows + row,
                                         w.rows);
    }
  }
}

bool supports(DType t) {
  return t == DType::Q4_0 || t == DType::Q4_1 || t == DType::Q5_0 || t == DType::Q5_1 || t == DType::Q8_0 ||
         t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K;
}

template <typename Act>
void rows_any(const WeightView& w, int64_t r0, int64_t r1, const uint8_t* layout, int64_t n_tokens, float* y) {
  switch (w.type) {
    case DType::Q4_0: return product_rows<DType::Q4_0, Act>(w, r0, r1, layout, n_tokens, y);
    case DType::Q4_1: return product_rows<DType::Q4_1, Act>(w, r0, r1, layout, n_tokens, y);
    case DType::Q5_0: return product_rows<DType::Q5_0, Act>(w, r0, r1, layout, n_tokens, y);
    case DType::Q5_1: return product_rows<DType::Q5_1, Act>(w, r0, r1, layout, n_tokens, y);
    case DType::Q8_0: return product_rows<DType::Q8_0, Act>(w, r0, r1, layout, n_tokens, y);
    case DType::Q4_K: return product_rows<DType::Q4_K, Act>(w, r0, r1, layout, n_tokens, y);
    case DType::Q5_K: return product_rows<DType::Q5_K, Act>(w, r0, r1, layout, n_tokens, y);
    case DType::Q6_K: return product_rows<DType::Q6_K, Act>(w, r0, r1, layout, n_tokens, y);
    default: return;
  }
}

}  // namespace

const PackedTiles& packed_tiles_amx() {
  static const PackedTiles t{.min_tokens = 16,
                             .supports = supports,
                             .layout_bytes = layout_bytes,
                             .lay_out15 = lay_out<Q15Block>,
                             .lay_out8 = lay_out<Q8Block>,
                             .rows15 = rows_any<Q15Block>,
                             .rows8 = rows_any<Q8Block>};
  return t;
}

}  // namespace minnow::kernels
