#include "base/thread_pool.hpp"

#include "base/cpu_topology.hpp"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>

#if defined(__x86_64__)
#include <immintrin.h>
#define MINNOW_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define MINNOW_CPU_RELAX() __asm__ __volatile__("yield")
#else
#define MINNOW_CPU_RELAX() ((void)0)
#endif

namespace minnow {
namespace {

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void futex_wake_all(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

// How long an idle worker spins before sleeping: long enough to bridge the gaps between
// the parallel loops of one forward pass, short enough not to burn a core when idle.
constexpr auto kSpinTime = std::chrono::milliseconds(2);

// Pause-spin first; then yield, so that when the cores are oversubscribed (other
// processes, more threads than cores) a waiting thread hands its core to the one it waits for.
inline void relax(int spins) {
  if (spins < 256) MINNOW_CPU_RELAX();
  else sched_yield();
}

// Restricts the calling thread to `cores` (best effort: a refusal changes nothing).
void keep_on(const std::vector<int>& cores) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cores)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  sched_setaffinity(0, sizeof set, &set);
}

}  // namespace

int ThreadPool::default_threads() {
  if (const auto fast = fast_cores(); !fast.empty()) return static_cast<int>(fast.size());
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads <= 0 ? default_threads() : n_threads) {
  // On big.LITTLE, workers stay on the big cores when they are enough for all threads
  // (the calling thread is the app's: its affinity is left alone).
  const std::vector<int> fast = fast_cores();
  const bool pin = !fast.empty() && n_threads_ <= static_cast<int>(fast.size());
  for (int i = 1; i < n_threads_; ++i)
    workers_.emplace_back([this, i, pin, fast] {
      if (pin) keep_on(fast);
      worker_loop(i);
    });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);
  futex_wake_all(&generation_);
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_tasks(int thread_index) {
  for (;;) {
    int64_t t = next_task_.fetch_add(1, std::memory_order_relaxed);
    if (t >= n_tasks_) break;
    (*job_)(t, thread_index);
  }
}

void ThreadPool::worker_loop(int index) {
  uint32_t seen = 0;  // the value at construction: a job may start before this thread runs
  for (;;) {
    auto spin_start = std::chrono::steady_clock::now();
    int spins = 0;
    while (generation_.load(std::memory_order_acquire) == seen) {
      relax(++spins);
      if (spins % 1024 == 0 && std::chrono::steady_clock::now() - spin_start > kSpinTime) {
        sleepers_.fetch_add(1);
        futex_wait(&generation_, seen);  // returns at once if a job started meanwhile
        sleepers_.fetch_sub(1);
        spin_start = std::chrono::steady_clock::now();
      }
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    run_tasks(index);
    busy_workers_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::parallel_for(int64_t n_tasks, FunctionRef<void(int64_t, int)> fn) {
  if (n_tasks <= 0) return;
  if (n_threads_ == 1 || n_tasks == 1) {
    for (int64_t t = 0; t < n_tasks; ++t) fn(t, 0);
    return;
  }
  job_ = &fn;
  n_tasks_ = n_tasks;
  next_task_.store(0, std::memory_order_relaxed);
  busy_workers_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  if (sleepers_.load() > 0) futex_wake_all(&generation_);
  run_tasks(0);
  for (int spins = 0; busy_workers_.load(std::memory_order_acquire) != 0;) relax(++spins);
  job_ = nullptr;
}

void ThreadPool::on_every_thread(FunctionRef<void(int)> fn) {
  // One task per thread, and no task returns before all have started: a thread that took
  // one waits, so every thread must take exactly one.
  std::atomic<int> started{0};
  parallel_for(n_threads_, [&](int64_t, int thread_index) {
    started.fetch_add(1, std::memory_order_acq_rel);
    for (int spins = 0; started.load(std::memory_order_acquire) < n_threads_;) relax(++spins);
    fn(thread_index);
  });
}

}  // namespace minnow
