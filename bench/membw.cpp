// minnow_membw: streaming memory read bandwidth, the ceiling for decode speed.
//
//   minnow_membw [--mib N] [--passes P] [--threads T[,T...]] [--json]
//
// Allocates N MiB (default 1024, far larger than any cache), writes it once so every page
// is resident, then for each thread count reads the whole buffer P times: each thread
// streams through its own contiguous slice with 32-byte loads (AVX2 where the CPU has it,
// plain 64-bit loads otherwise) into four independent accumulators. Threads start every
// pass together; a pass's time is the slowest thread's. Prints the best and the median
// pass in GB/s (1 GB = 1e9 bytes).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

uint64_t read_scalar(const uint64_t* p, size_t n_words) {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  for (size_t i = 0; i + 4 <= n_words; i += 4) {
    a ^= p[i];
    b ^= p[i + 1];
    c ^= p[i + 2];
    d ^= p[i + 3];
  }
  return a ^ b ^ c ^ d;
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) uint64_t read_avx2(const uint64_t* p, size_t n_words) {
  const auto* v = reinterpret_cast<const __m256i*>(p);
  size_t n = n_words / 4;  // 4 words per 32-byte vector
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  for (size_t i = 0; i + 4 <= n; i += 4) {
    a = _mm256_xor_si256(a, _mm256_load_si256(v + i));
    b = _mm256_xor_si256(b, _mm256_load_si256(v + i + 1));
    c = _mm256_xor_si256(c, _mm256_load_si256(v + i + 2));
    d = _mm256_xor_si256(d, _mm256_load_si256(v + i + 3));
  }
  __m256i x = _mm256_xor_si256(_mm256_xor_si256(a, b), _mm256_xor_si256(c, d));
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), x);
  return lanes[0] ^ lanes[1] ^ lanes[2] ^ lanes[3];
}
#endif

bool have_avx2() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

uint64_t read_slice(const uint64_t* p, size_t n_words, bool avx2) {
#if defined(__x86_64__)
  if (avx2) return read_avx2(p, n_words);
#endif
  (void)avx2;
  return read_scalar(p, n_words);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Result {
  int threads;
  double best_gbs, median_gbs;
};

// One timed pass per element of the returned vector: seconds of the slowest thread.
std::vector<double> run_passes(const uint64_t* buf, size_t n_words, int threads, int passes, bool avx2) {
  std::vector<double> secs(static_cast<size_t>(passes), 0.0);
  // Spinning barrier among the workers themselves (no extra thread: a 2-core machine
  // has no core to spare for a coordinator).
  std::atomic<int> arrived{0};
  std::vector<std::vector<double>> per_thread(static_cast<size_t>(threads), std::vector<double>(secs.size()));
  std::atomic<uint64_t> sink{0};
  size_t slice = (n_words / static_cast<size_t>(threads)) & ~size_t{15};  // 128-byte multiples
  auto worker = [&](int t) {
    const uint64_t* p = buf + slice * static_cast<size_t>(t);
    uint64_t acc = 0;
    for (int pass = 0; pass < passes; ++pass) {
      arrived.fetch_add(1, std::memory_order_acq_rel);
      while (arrived.load(std::memory_order_acquire) < (pass + 1) * threads) {
      }
      auto t0 = Clock::now();
      acc ^= read_slice(p, slice, avx2);
      per_thread[static_cast<size_t>(t)][static_cast<size_t>(pass)] =
          std::chrono::duration<double>(Clock::now() - t0).count();
    }
    sink.fetch_xor(acc);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (auto& th : pool) th.join();
  for (size_t pass = 0; pass < secs.size(); ++pass)
    for (int t = 0; t < threads; ++t) secs[pass] = std::max(secs[pass], per_thread[static_cast<size_t>(t)][pass]);
  if (sink.load() == 0x5eed) std::fprintf(stderr, " ");  // keeps the reads observable
  // Bytes read per pass.
  double bytes = static_cast<double>(slice) * 8.0 * threads;
  for (auto& s : secs) s = bytes / s / 1e9;  // now GB/s
  return secs;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = 1024;
  int passes = 15;
  std::vector<int> thread_counts = {1, 2};
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--mib") {
      mib = std::stoul(next());
    } else if (a == "--passes") {
      passes = std::max(1, std::stoi(next()));
    } else if (a == "--threads") {
      thread_counts.clear();
      std::string s = next();
      size_t pos = 0;
      while (pos <= s.size()) {
        size_t comma = s.find(',', pos);
        if (comma == std::string::npos) comma = s.size();
        thread_counts.push_back(std::max(1, std::stoi(s.substr(pos, comma - pos))));
        pos = comma + 1;
      }
    } else if (a == "--json") {
      json = true;
    } else {
      std::fprintf(stderr, "usage: %s [--mib N] [--passes P] [--threads T[,T...]] [--json]\n", argv[0]);
      return a == "-h" || a == "--help" ? 0 : 2;
    }
  }
  size_t bytes = mib << 20;
  auto* buf = static_cast<uint64_t*>(std::aligned_alloc(4096, bytes));
  if (!buf) {
    std::fprintf(stderr, "cannot allocate %zu MiB\n", mib);
    return 1;
  }
  size_t n_words = bytes / 8;
  for (size_t i = 0; i < n_words; ++i) buf[i] = i * 0x9E3779B97F4A7C15ULL;
  bool avx2 = have_avx2();
  std::vector<Result> results;
  for (int t : thread_counts) {
    run_passes(buf, n_words, t, 2, avx2);  // warm-up
    auto gbs = run_passes(buf, n_words, t, passes, avx2);
    results.push_back({t, *std::max_element(gbs.begin(), gbs.end()), median(gbs)});
  }
  std::free(buf);
  if (json) {
    std::printf("{\"buffer_mib\": %zu, \"passes\": %d, \"avx2\": %s, \"results\": [", mib, passes, avx2 ? "true" : "false");
    for (size_t i = 0; i < results.size(); ++i)
      std::printf("%s{\"threads\": %d, \"best_gbs\": %.3f, \"median_gbs\": %.3f}", i ? ", " : "", results[i].threads,
                  results[i].best_gbs, results[i].median_gbs);
    std::printf("]}\n");
  } else {
    std::printf("streaming read, %zu MiB buffer, %d passes, %s loads\n", mib, passes, avx2 ? "AVX2" : "64-bit");
    for (const auto& r : results)
      std::printf("threads %d   best %.2f GB/s   median %.2f GB/s\n", r.threads, r.best_gbs, r.median_gbs);
  }
  return 0;
}
