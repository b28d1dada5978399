// A fixed pool of worker threads for fork-join loops. Workers spin briefly between jobs
// because a decode step issues hundreds of short parallel loops and a sleeping wake-up
// (tens of microseconds) per loop would dominate; after a while they sleep on a futex.
#pragma once
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "base/function_ref.hpp"

namespace minnow {

class ThreadPool {
 public:
  explicit ThreadPool(int n_threads);  // n_threads includes the calling thread; <= 0 means all cores
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Runs fn(task, thread_index) for every task in [0, n_tasks), spread over all threads
  // (tasks are claimed dynamically), and returns when all are done. Not reentrant.
  void parallel_for(int64_t n_tasks, FunctionRef<void(int64_t, int)> fn);
  // Runs fn(thread_index) once on each of the size() threads (for per-thread set-up, such
  // as growing thread-local buffers before a loop that must not allocate). Not reentrant.
  void on_every_thread(FunctionRef<void(int)> fn);

  static int default_threads();

 private:
  void worker_loop(int index);
  void run_tasks(int thread_index);

  int n_threads_;
  std::vector<std::thread> workers_;
  const FunctionRef<void(int64_t, int)>* job_ = nullptr;
  int64_t n_tasks_ = 0;
  std::atomic<int64_t> next_task_{0};
  std::atomic<uint32_t> generation_{0};  // bumped to start a job (also the futex word)
  std::atomic<int> busy_workers_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace minnow
