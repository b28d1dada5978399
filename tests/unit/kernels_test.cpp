// Every fast kernel against its scalar reference, over many shapes (odd sizes, sizes
// that are not multiples of 8, several blocks), with a magnitude-scaled tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "base/thread_pool.hpp"
#include "kernels/ops.hpp"
#include "tensor/fp16.hpp"

using namespace minnow;
using namespace minnow::kernels;

namespace {

std::vector<float> random_floats(size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Random bytes make valid blocks for every type if the f16 scale fields are sane;
// overwrite those with small finite halves.
std::vector<uint8_t> random_rows(DType t, int64_t rows, int64_t cols, std::mt19937& rng) {
  const DTypeTraits& tr = dtype_traits(t);
  const int64_t blocks = rows * cols / tr.block_size;
  std::vector<uint8_t> b(static_cast<size_t>(blocks * tr.block_bytes));
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> sc(-0.05f, 0.05f);
  auto put = [&](size_t off) {
    uint16_t h = fp32_to_fp16(sc(rng));
    std::memcpy(&b[off], &h, 2);
  };
  for (int64_t i = 0; i < blocks; ++i) {
    size_t o = static_cast<size_t>(i * tr.block_bytes);
    switch (t) {
      case DType::F32: { float f = sc(rng); std::memcpy(&b[o], &f, 4); break; }
      case DType::F16: case DType::Q4_0: case DType::Q5_0: case DType::Q8_0: put(o); break;
      case DType::BF16: { uint16_t h = static_cast<uint16_t>(fp32_to_bits(sc(rng)) >> 16); std::memcpy(&b[o], &h, 2); break; }
      case DType::Q4_1: case DType::Q5_1: case DType::Q4_K: case DType::Q5_K: put(o); put(o + 2); break;
      case DType::Q6_K: put(o + 208); break;
      default: break;
    }
  }
  return b;
}

double ref_dot(const float* a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

double abs_dot(const float* a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::fabs(static_cast<double>(a[i]) * b[i]);
  return s;
}

// The scalar table and every SIMD table this CPU runs.
std::vector<const KernelTable*> all_tables() {
  std::vector<const KernelTable*> v{&ref_kernels()};
  for (const KernelTable* t : simd_kernels()) v.push_back(t);
  return v;
}

}  // namespace

TEST(Kernels, DotF32MatchesReference) {
  for (const KernelTable* kt : simd_kernels()) {
    SCOPED_TRACE(kt->name);
    std::mt19937 rng(1);
    for (int64_t n : {1, 3, 7, 8, 9, 31, 32, 33, 64, 100, 576, 1537}) {
      auto a = random_floats(static_cast<size_t>(n) + 3, rng), b = random_floats(static_cast<size_t>(n) + 3, rng);
      for (int off : {0, 1, 3}) {  // misaligned starts
        double want = ref_dot(a.data() + off, b.data() + off, n);
        double tol = 1e-5 * abs_dot(a.data() + off, b.data() + off, n) + 1e-6;
        EXPECT_NEAR(kt->dot_f32(a.data() + off, b.data() + off, n), want, tol) << "n=" << n;
        EXPECT_NEAR(ref_kernels().dot_f32(a.data() + off, b.data() + off, n), want, tol) << "n=" << n;
      }
    }
  }
}

TEST(Kernels, GemmF32MatchesReference) {
  for (const KernelTable* kt : simd_kernels()) {
    SCOPED_TRACE(kt->name);
    std::mt19937 rng(2);
    for (int64_t rows : {1, 3, 4, 5, 16, 17})
      for (int64_t toks : {1, 2, 3, 4, 7, 13})
        for (int64_t k : {1, 5, 8, 31, 64, 99}) {
          auto w = random_floats(static_cast<size_t>(rows * k), rng), x = random_floats(static_cast<size_t>(toks * k), rng);
          const int64_t ldy = rows + 2;
          std::vector<float> y(static_cast<size_t>(toks * ldy), -7.0f), want(y);
          kt->gemm_f32(w.data(), rows, x.data(), toks, k, y.data(), ldy);
          ref_kernels().gemm_f32(w.data(), rows, x.data(), toks, k, want.data(), ldy);
          for (int64_t t = 0; t < toks; ++t)
            for (int64_t r = 0; r < ldy; ++r) {
              double tol = r < rows ? 1e-5 * abs_dot(&w[r * k], &x[t * k], k) + 1e-6 : 0;
              ASSERT_NEAR(y[t * ldy + r], want[t * ldy + r], tol) << rows << "x" << toks << "x" << k;
            }
        }
  }
}

// Continuous batching relies on this: a token's outputs are bit-identical whatever else
// shares its GEMM call (its place in a tile or in the remainder must not matter).
TEST(Kernels, GemmRowsDoNotDependOnBatch) {
  std::mt19937 rng(12);
  for (const KernelTable* kt : all_tables()) {
    for (int64_t k : {7, 64, 99}) {
      const int64_t rows = 9, toks = 7;
      auto w = random_floats(static_cast<size_t>(rows * k), rng), x = random_floats(static_cast<size_t>(toks * k), rng);
      std::vector<float> all(static_cast<size_t>(toks * rows)), one(static_cast<size_t>(rows));
      kt->gemm_f32(w.data(), rows, x.data(), toks, k, all.data(), rows);
      for (int64_t t = 0; t < toks; ++t) {
        kt->gemm_f32(w.data(), rows, x.data() + t * k, 1, k, one.data(), rows);
        for (int64_t r = 0; r < rows; ++r) ASSERT_EQ(one[r], all[t * rows + r]) << kt->name << " k=" << k << " t=" << t;
      }
    }
  }
}

// matmul with an explicit split: the leading rows through the per-row kernels, the rest
// through the GEMM, each equal to the same rows computed on their own.
TEST(Kernels, MatmulSplitRowsMatchSeparateCalls) {
  std::mt19937 rng(13);
  ThreadPool pool(2);
  for (DType t : {DType::Q4_1, DType::Q8_0, DType::Q4_K, DType::F16}) {
    const int64_t rows = 40, k = 256, toks = 6, vec = 2;
    auto bytes = random_rows(t, rows, k, rng);
    const WeightView w{t, bytes.data(), rows, k, bytes.size() / rows};
    auto x = random_floats(static_cast<size_t>(toks * k), rng);
    std::vector<float> mixed(static_cast<size_t>(toks * rows)), sep(mixed.size());
    matmul(w, x.data(), toks, mixed.data(), pool, false, vec);
    for (int64_t i = 0; i < toks; ++i)  // one token per call: vector path for the first `vec`, GEMM after
      matmul(w, x.data() + i * k, 1, sep.data() + i * rows, pool, false, i < vec ? 1 : 0);
    for (size_t i = 0; i < mixed.size(); ++i) ASSERT_EQ(mixed[i], sep[i]) << dtype_name(t) << " i=" << i;
  }
}

// Fused dequantize-dot kernels against dequantize + double-precision dot.
TEST(Kernels, FusedRowDotMatchesDequantize) {
  for (const KernelTable* kt : simd_kernels()) {
    SCOPED_TRACE(kt->name);
    std::mt19937 rng(3);
    for (DType t : {DType::F16, DType::Q5_0, DType::Q5_1, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
      DotRowFn f = kt->dot_row(t);
      if (!f) continue;  // optional: matmul dequantizes + dot_f32 without one
      const int64_t bs = dtype_traits(t).block_size;
      for (int64_t k : {32, 64, 96, 256, 576, 768, 1536, 2560}) {
        if (k % bs != 0) continue;
        auto row = random_rows(t, 1, k, rng);
        auto x = random_floats(static_cast<size_t>(k), rng);
        std::vector<float> w(static_cast<size_t>(k));
        dtype_traits(t).dequantize(row.data(), w.data(), k / dtype_traits(t).block_size);
        double want = ref_dot(w.data(), x.data(), k);
        EXPECT_NEAR(f(row.data(), x.data(), k), want, 1e-5 * abs_dot(w.data(), x.data(), k) + 1e-6)
            << dtype_name(t) << " k=" << k;
      }
    }
  }
}

// Half-precision conversions (KV cache) against the scalar reference, bit for bit, over
// lengths that are and are not multiples of the vector width, including specials.
TEST(Kernels, HalfConversionsMatchReference) {
  for (const KernelTable* kt : simd_kernels()) {
    SCOPED_TRACE(kt->name);
    std::mt19937 rng(5);
    for (int64_t n : {1, 7, 8, 9, 64, 100, 257}) {
      auto x = random_floats(static_cast<size_t>(n), rng);
      for (auto& v : x) v *= 1000.0f;
      if (n > 4) x[1] = 0.0f, x[2] = -0.0f, x[3] = 1e-6f, x[4] = 70000.0f;  // zero, signed zero, subnormal, overflow
      std::vector<uint16_t> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
      ref_kernels().f32_to_f16(x.data(), want.data(), n);
      kt->f32_to_f16(x.data(), got.data(), n);
      EXPECT_EQ(got, want) << "n=" << n;
      std::vector<float> back_want(static_cast<size_t>(n)), back_got(static_cast<size_t>(n));
      ref_kernels().f16_to_f32(want.data(), back_want.data(), n);
      kt->f16_to_f32(want.data(), back_got.data(), n);
      EXPECT_EQ(back_got, back_want) << "n=" << n;
    }
  }
}

// Softmax numerators: the vectorized exp against std::exp, element by element and summed.
TEST(Kernels, ExpSumMatchesReference) {
  for (const KernelTable* kt : simd_kernels()) {
    SCOPED_TRACE(kt->name);
    std::mt19937 rng(6);
    std::uniform_real_distribution<float> u(-100.0f, 0.0f);
    for (int64_t n : {1, 5, 8, 13, 64, 255, 1024}) {
      std::vector<float> a(static_cast<size_t>(n));
      for (auto& v : a) v = u(rng);
      a[0] = 3.0f;  // the maximum: exp(0) after the shift
      auto b = a;
      const float want = ref_kernels().exp_sum(a.data(), n, 3.0f);
      const float got = kt->exp_sum(b.data(), n, 3.0f);
      EXPECT_NEAR(got, want, 2e-6f * want) << "n=" << n;
      for (int64_t i = 0; i < n; ++i)
        EXPECT_NEAR(b[static_cast<size_t>(i)], a[static_cast<size_t>(i)], 2e-7f * a[static_cast<size_t>(i)] + 1e-37f) << "n=" << n << " i=" << i;
    }
  }
}

// The matmul entry point, on both the decode (few tokens) and prefill paths, for every
// computable type, against dequantize + reference dot.
TEST(Kernels, MatmulAllTypesAllPaths) {
  std::mt19937 rng(4);
  ThreadPool pool(2);
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                  DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    const DTypeTraits& tr = dtype_traits(t);
    const int64_t k = tr.block_size == 256 ? 512 : 96, rows = 37;
    auto data = random_rows(t, rows, k, rng);
    WeightView w{t, data.data(), rows, k, static_cast<size_t>(k / tr.block_size * tr.block_bytes)};
    std::vector<float> deq(static_cast<size_t>(rows * k));
    for (int64_t r = 0; r < rows; ++r) dequantize_row(w, r, &deq[static_cast<size_t>(r * k)]);
    // Views as a file gives them (not packed): float paths only. Packed views:
    // packed_kernels_test.cpp.
    for (int64_t toks : {1, 2, 5, 11}) {
      auto x = random_floats(static_cast<size_t>(toks * k), rng);
      std::vector<float> y(static_cast<size_t>(toks * rows));
      matmul(w, x.data(), toks, y.data(), pool);
      for (int64_t tt = 0; tt < toks; ++tt)
        for (int64_t r = 0; r < rows; ++r) {
          const float* wr = &deq[static_cast<size_t>(r * k)];
          const float* xt = &x[static_cast<size_t>(tt * k)];
          ASSERT_NEAR(y[static_cast<size_t>(tt * rows + r)], ref_dot(wr, xt, k), 1e-5 * abs_dot(wr, xt, k) + 1e-6)
              << dtype_name(t) << " tokens=" << toks << " row=" << r;
        }
    }
  }
}

TEST(ThreadPool, RunsEveryTaskOnce) {
  ThreadPool pool(2);
  for (int64_t n : {0, 1, 2, 3, 100, 1000}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    for (int rep = 0; rep < 20; ++rep) pool.parallel_for(n, [&](int64_t t, int) { hits[static_cast<size_t>(t)]++; });
    for (auto& h : hits) EXPECT_EQ(h.load(), 20);
  }
}

// Integer kernels against Q16 activations: SIMD vs scalar reference (identical integer
// sums), scalar vs the exact product of the dequantized operands.
// Several tokens at once: bit-identical to the one-token kernel for every token (the
// server batches decode steps and promises unchanged numbers).
// Grouped attention kernels: every (query, position) as the one-query kernels compute it
// (bit for bit), for 1-4 queries, head sizes with and without a tail; ref within tolerance.
TEST(Kernels, AttentionF16KernelsEqualOneQueryKernels) {
  std::mt19937 rng(19);
  for (int64_t hd : {8, 24, 64, 72, 128, 256})
    for (int nq = 1; nq <= kMaxAttnQueries; ++nq) {
      const int64_t n = 37, stride = hd * 3 + 8;
      auto q = random_floats(static_cast<size_t>(nq * hd), rng);
      auto kf = random_floats(static_cast<size_t>(n * stride), rng);
      std::vector<uint16_t> k(kf.size()), v(kf.size());
      for (size_t i = 0; i < kf.size(); ++i) k[i] = fp32_to_fp16(kf[i]);
      for (size_t i = 0; i < kf.size(); ++i) v[i] = fp32_to_fp16(kf[(i * 7) % kf.size()]);
      auto w = random_floats(static_cast<size_t>(nq * n), rng, 0.1f);
      for (const KernelTable* kt : all_tables()) {
        std::vector<float> s(static_cast<size_t>(nq * n)), out(static_cast<size_t>(nq * hd), 0.5f), want = out;
        kt->attn_scores_f16(q.data(), nq, k.data(), stride, n, hd, s.data(), n);
        kt->attn_values_f16(w.data(), nq, n, v.data(), stride, n, hd, out.data());
        for (int g = 0; g < nq; ++g)
          for (int64_t p = 0; p < n; ++p) {
            const float* qg = q.data() + g * hd;
            const uint16_t* kp = k.data() + p * stride;
            if (kt != &ref_kernels()) {
              ASSERT_EQ(s[static_cast<size_t>(g * n + p)], kt->dot_row(DType::F16)(kp, qg, hd)) << "hd=" << hd << " nq=" << nq;
            } else {
              double ref = 0, mag = 0;
              for (int64_t i = 0; i < hd; ++i) {
                ref += static_cast<double>(qg[i]) * fp16_to_fp32(kp[i]);
                mag += std::fabs(static_cast<double>(qg[i]) * fp16_to_fp32(kp[i]));
              }
              ASSERT_NEAR(s[static_cast<size_t>(g * n + p)], ref, 1e-5 * mag + 1e-6);
            }
            kt->axpy_f16(w[static_cast<size_t>(g * n + p)], v.data() + p * stride, want.data() + g * hd, hd);
          }
        for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], want[i]) << kt->name << " hd=" << hd << " nq=" << nq;
      }
    }
}

// Q8_0 cache (--kv-type q8_0): each kernel against the dequantized rows, and the grouped
// SIMD kernels equal to one query at a time bit for bit.
TEST(Kernels, AttentionQ8KernelsMatchDequantizedRows) {
  std::mt19937 rng(20);
  for (int64_t hd : {32, 64, 96, 256})
    for (int nq = 1; nq <= kMaxAttnQueries; ++nq) {
      const int64_t n = 29, heads = 3, stride = heads * hd / 32 * 34;  // bytes per position
      auto kf = random_floats(static_cast<size_t>(n * heads * hd), rng);
      auto vf = random_floats(kf.size(), rng);
      std::vector<uint8_t> k(static_cast<size_t>(n * stride)), v(k.size());
      quantize_q8_0(kf.data(), k.data(), static_cast<int64_t>(kf.size()) / 32);
      quantize_q8_0(vf.data(), v.data(), static_cast<int64_t>(vf.size()) / 32);
      std::vector<float> kd(kf.size()), vd(vf.size());  // dequantized, for the reference
      dtype_traits(DType::Q8_0).dequantize(k.data(), kd.data(), static_cast<int64_t>(kd.size()) / 32);
      dtype_traits(DType::Q8_0).dequantize(v.data(), vd.data(), static_cast<int64_t>(vd.size()) / 32);
      auto q = random_floats(static_cast<size_t>(nq * hd), rng);
      auto w = random_floats(static_cast<size_t>(nq * n), rng, 0.1f);
      const int64_t head = 1, off = head * hd / 32 * 34;  // the middle KV head
      for (const KernelTable* kt : all_tables()) {
        std::vector<float> s(static_cast<size_t>(nq * n)), out(static_cast<size_t>(nq * hd), 0.5f);
        kt->attn_scores_q8(q.data(), nq, k.data() + off, stride, n, hd, s.data(), n);
        kt->attn_values_q8(w.data(), nq, n, v.data() + off, stride, n, hd, out.data());
        for (int g = 0; g < nq; ++g) {
          std::vector<double> want(static_cast<size_t>(hd), 0.5), mag(static_cast<size_t>(hd), 0.5);
          for (int64_t p = 0; p < n; ++p) {
            const float* kp = kd.data() + (p * heads + head) * hd;
            const float* vp = vd.data() + (p * heads + head) * hd;
            double ref = 0, m = 0;
            for (int64_t i = 0; i < hd; ++i) {
              ref += static_cast<double>(q[static_cast<size_t>(g * hd + i)]) * kp[i];
              m += std::fabs(static_cast<double>(q[static_cast<size_t>(g * hd + i)]) * kp[i]);
              want[static_cast<size_t>(i)] += static_cast<double>(w[static_cast<size_t>(g * n + p)]) * vp[i];
              mag[static_cast<size_t>(i)] += std::fabs(static_cast<double>(w[static_cast<size_t>(g * n + p)]) * vp[i]);
            }
            ASSERT_NEAR(s[static_cast<size_t>(g * n + p)], ref, 1e-5 * m + 1e-6) << kt->name << " hd=" << hd;
          }
          for (int64_t i = 0; i < hd; ++i)
            ASSERT_NEAR(out[static_cast<size_t>(g * hd + i)], want[static_cast<size_t>(i)], 1e-5 * mag[static_cast<size_t>(i)])
                << kt->name << " hd=" << hd;
        }
        if (kt != &ref_kernels())  // grouped == one query at a time
          for (int g = 0; g < nq; ++g) {
            std::vector<float> s1(static_cast<size_t>(n)), out1(static_cast<size_t>(hd), 0.5f);
            kt->attn_scores_q8(q.data() + g * hd, 1, k.data() + off, stride, n, hd, s1.data(), n);
            kt->attn_values_q8(w.data() + g * n, 1, n, v.data() + off, stride, n, hd, out1.data());
            for (int64_t p = 0; p < n; ++p) ASSERT_EQ(s[static_cast<size_t>(g * n + p)], s1[static_cast<size_t>(p)]);
            for (int64_t i = 0; i < hd; ++i) ASSERT_EQ(out[static_cast<size_t>(g * hd + i)], out1[static_cast<size_t>(i)]);
          }
      }
    }
}

TEST(Kernels, AxpyF16MatchesReference) {
  std::mt19937 rng(18);
  for (int64_t n : {1, 7, 8, 9, 64, 100, 256}) {
    auto xf = random_floats(static_cast<size_t>(n), rng);
    std::vector<uint16_t> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = fp32_to_fp16(xf[static_cast<size_t>(i)]);
    auto y0 = random_floats(static_cast<size_t>(n), rng);
    for (const KernelTable* kt : all_tables()) {
      auto y = y0;
      kt->axpy_f16(0.37f, x.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(y[static_cast<size_t>(i)], y0[static_cast<size_t>(i)] + 0.37 * fp16_to_fp32(x[static_cast<size_t>(i)]), 1e-6)
            << kt->name << " n=" << n;
    }
  }
}

// Integer kernels against Q8 activations: SIMD vs scalar reference (same integer sums,
// so only float rounding differs), and scalar vs the exact float product.
TEST(Kernels, QuantizeQ8RoundTrips) {
  std::mt19937 rng(6);
  auto x = random_floats(96, rng);
  x[40] = 0;  // zero scale block handled below
  std::vector<float> zeros(32, 0.0f);
  std::vector<Q8Block> q(3), z(1);
  quantize_q8(x.data(), 96, q.data());
  quantize_q8(zeros.data(), 32, z.data());
  for (int i = 0; i < 96; ++i) EXPECT_NEAR(q[i / 32].q[i % 32] * q[i / 32].d, x[i], q[i / 32].d * 0.5f + 1e-7f);
  EXPECT_EQ(z[0].d, 0.0f);
  EXPECT_EQ(z[0].s, 0.0f);
}

// sgemm: every table against the scalar reference over odd shapes, strides, bias and clamps.
TEST(Kernels, SgemmMatchesReference) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int64_t shapes[][3] = {{1, 1, 1}, {3, 7, 5}, {4, 24, 16}, {5, 25, 9}, {17, 100, 33}, {8, 241, 64}, {2, 8, 300}, {33, 9, 1}};
  for (const kernels::KernelTable* t : kernels::simd_kernels()) {
    for (auto& s : shapes) {
      const int64_t m = s[0], n = s[1], k = s[2], lda = k + 3, ldb = n + 5, ldc = n + 2;
      std::vector<float> a(m * lda), b(k * ldb), bias(m), want(m * ldc, 7.0f), got(m * ldc, 7.0f);
      for (auto& v : a) v = u(rng);
      for (auto& v : b) v = u(rng);
      for (auto& v : bias) v = u(rng);
      for (int variant = 0; variant < 4; ++variant) {
        kernels::Epilogue e;
        if (variant > 0) e.bias = bias.data();
        if (variant == 2) e.lo = 0.0f, e.hi = 0.5f;
        if (variant == 3) e.hard_swish = true, e.scale = 1.5f, e.shift = -0.25f;
        kernels::sgemm_ref(a.data(), lda, b.data(), ldb, want.data(), ldc, m, n, k, e);
        t->sgemm(a.data(), lda, b.data(), ldb, got.data(), ldc, m, n, k, e);
        for (int64_t i = 0; i < m * ldc; ++i)
          ASSERT_NEAR(got[i], want[i], 1e-5f * (1 + std::abs(want[i]))) << t->name << " " << m << "x" << n << "x" << k << " @" << i;
      }
    }
  }
}

// sgemm_rows: B's rows anywhere (here reversed and overlapping, as a convolution's taps
// are), against the dense reference over the same values.
TEST(Kernels, SgemmRowsMatchesReference) {
  std::mt19937 rng(14);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int64_t shapes[][3] = {{1, 1, 1}, {6, 16, 3}, {7, 17, 130}, {24, 192, 300}, {5, 9, 27}, {13, 40, 257}};
  for (const kernels::KernelTable* t : kernels::simd_kernels()) {
    for (auto& s : shapes) {
      const int64_t m = s[0], n = s[1], k = s[2], ldc = n + 1;
      std::vector<float> a(m * k), pool(k + n + 8), bias(m), dense(k * n), want(m * ldc, 7.0f), got(m * ldc, 7.0f);
      for (auto& v : a) v = u(rng);
      for (auto& v : pool) v = u(rng);
      for (auto& v : bias) v = u(rng);
      std::vector<const float*> rows(k);
      for (int64_t p = 0; p < k; ++p) {
        rows[p] = pool.data() + (k - 1 - p);
        std::copy_n(rows[p], n, dense.data() + p * n);
      }
      kernels::Epilogue e;
      e.bias = bias.data();
      e.lo = -0.5f;
      kernels::sgemm_ref(a.data(), k, dense.data(), n, want.data(), ldc, m, n, k, e);
      t->sgemm_rows(a.data(), k, rows.data(), got.data(), ldc, m, n, k, e);
      for (int64_t i = 0; i < m * ldc; ++i) ASSERT_EQ(got[i], want[i]) << t->name << " " << m << "x" << n << "x" << k << " @" << i;
    }
  }
}

TEST(Kernels, AxpyStridedMatchesReference) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const kernels::KernelTable* t : kernels::simd_kernels())
    for (int64_t stride : {1, 2, 3})
      for (int64_t n : {0, 1, 7, 8, 9, 31, 64, 100}) {
        std::vector<float> x(n * stride + 1), y(n + 1), want;
        for (auto& v : x) v = u(rng);
        for (auto& v : y) v = u(rng);
        want = y;
        kernels::axpy_strided_ref(0.75f, x.data(), stride, want.data(), n);
        t->axpy_strided(0.75f, x.data(), stride, y.data(), n);
        for (int64_t i = 0; i <= n; ++i) ASSERT_EQ(y[i], want[i]) << t->name << " stride " << stride << " n " << n << " @" << i;
      }
}

TEST(Kernels, InterleavedPointwiseMatchesReference) {
  std::mt19937 rng(19);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const kernels::KernelTable* t : kernels::simd_kernels())
    for (int64_t k : {1, 3, 16, 37})
      for (int64_t n : {1, 3, 4, 5, 11, 12, 13, 17, 28, 56}) {
        const int64_t ldx = n + 5;
        std::vector<float> x(ldx * k), w(k * 8), want(n * 8), got(n * 8), bias(8);
        for (auto& v : x) v = u(rng);
        for (auto& v : w) v = u(rng);
        for (auto& v : bias) v = u(rng);
        kernels::Epilogue e;
        if (n % 2) e.bias = bias.data(), e.hard_swish = true, e.scale = 0.5f, e.shift = 0.1f;
        else e.lo = 0.0f, e.hi = 6.0f;
        kernels::pointwise8_ref(x.data(), ldx, w.data(), k, want.data(), n, e);
        t->pointwise8(x.data(), ldx, w.data(), k, got.data(), n, e);
        for (int64_t i = 0; i < n * 8; ++i)  // the same multiply-add chains: the same numbers
          ASSERT_EQ(got[i], want[i]) << t->name << " k " << k << " n " << n << " @" << i;
        // Two groups at once: the second with reversed filters and no epilogue.
        std::vector<float> w1(w.rbegin(), w.rend()), want1(n * 8), got0(n * 8), got1(n * 8);
        const kernels::Epilogue none;
        kernels::pointwise8_ref(x.data(), ldx, w1.data(), k, want1.data(), n, none);
        t->pointwise16(x.data(), ldx, w.data(), w1.data(), k, got0.data(), got1.data(), n, e, none);
        ASSERT_EQ(got0, want) << t->name << " pointwise16 k " << k << " n " << n;
        ASSERT_EQ(got1, want1) << t->name << " pointwise16 k " << k << " n " << n;
      }
}

TEST(Kernels, InterleavedDepthwiseMatchesReference) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const kernels::KernelTable* t : kernels::simd_kernels())
    for (int stride : {1, 2, 3})
      for (int k : {1, 3, 5})
        for (int64_t n : {1, 3, 4, 5, 8, 17, 56}) {
          const int64_t ldx = n * stride + k + 3;
          std::vector<float> x(ldx * k * 8), w(k * k * 8), want(n * 8), got(n * 8), bias(8);
          for (auto& v : x) v = u(rng);
          for (auto& v : w) v = u(rng);
          for (auto& v : bias) v = u(rng);
          kernels::Epilogue e;
          if (n % 2) e.bias = bias.data(), e.hard_swish = true, e.scale = 0.5f, e.shift = 0.1f;
          else e.lo = -0.5f, e.hi = 0.75f;
          kernels::depthwise8_row_ref(x.data(), ldx, w.data(), k, k, stride, want.data(), n, e);
          t->depthwise8_row(x.data(), ldx, w.data(), k, k, stride, got.data(), n, e);
          for (int64_t i = 0; i < n * 8; ++i)  // the same multiply-add chains: the same numbers
            ASSERT_EQ(got[i], want[i]) << t->name << " stride " << stride << " k " << k << " n " << n << " @" << i;
        }
  for (const kernels::KernelTable* t : kernels::simd_kernels())
    for (int lanes : {1, 5, 8})
      for (int64_t n : {1, 7, 8, 9, 49, 64}) {
        const int64_t ld = n + 3;
        std::vector<float> planes(8 * ld), want(n * 8), got(n * 8, -1.0f), back(8 * ld, 0.0f);
        for (auto& v : planes) v = u(rng);
        kernels::interleave8_ref(planes.data(), ld, lanes, n, want.data());
        t->interleave8(planes.data(), ld, lanes, n, got.data());
        ASSERT_EQ(got, want) << t->name << " lanes " << lanes << " n " << n;
        t->deinterleave8(got.data(), lanes, n, back.data(), ld);
        for (int l = 0; l < 8; ++l)
          for (int64_t p = 0; p < n; ++p)
            ASSERT_EQ(back[l * ld + p], l < lanes ? planes[l * ld + p] : 0.0f) << t->name << " lanes " << lanes << " n " << n;
      }
}

TEST(Kernels, DepthwiseRowMatchesReference) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const kernels::KernelTable* t : kernels::simd_kernels())
    for (int stride : {1, 2, 3})
      for (int k : {1, 3, 5})
        for (int64_t n : {1, 7, 8, 9, 40, 113}) {
          const int64_t ldx = n * stride + k + 9;
          std::vector<float> x(ldx * k), w(k * k), want(n), got(n);
          for (auto& v : x) v = u(rng);
          for (auto& v : w) v = u(rng);
          const float bias = 0.25f;
          kernels::Epilogue e;
          if (n % 2) e.bias = &bias, e.hard_swish = true, e.scale = 0.5f, e.shift = 0.1f;
          kernels::depthwise_row_ref(x.data(), ldx, w.data(), k, k, stride, want.data(), n, e);
          t->depthwise_row(x.data(), ldx, w.data(), k, k, stride, got.data(), n, e);
          for (int64_t i = 0; i < n; ++i)
            ASSERT_NEAR(got[i], want[i], 1e-5f) << t->name << " stride " << stride << " k " << k << " n " << n << " @" << i;
        }
}
