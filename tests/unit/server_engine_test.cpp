// The serving engine on a tiny model (also under ASan): concurrent requests give the
// texts they give one at a time, cancellation frees the slot, the queue is bounded.
#include <gtest/gtest.h>

#include <thread>

#include "server/engine.hpp"

using namespace minnow;
using namespace minnow::server;
using namespace std::chrono_literals;

namespace {

const std::string kRoot = MINNOW_SOURCE_DIR;

const Model& tiny() {
  static auto m = Model::load(kRoot + "/tests/reference/tiny/llama");
  return *m;
}

CompletionRequest greedy(int seed, int max_tokens = 12) {
  CompletionRequest r;
  for (int i = 0; i < 5 + seed; ++i) r.prompt.push_back((seed * 31 + i * 7) % tiny().info().vocab_size);
  r.sampling.temperature = 0;
  r.max_tokens = max_tokens;
  r.ignore_eos = true;
  return r;
}

struct Result {
  std::string text;
  Job::Update last;
};

Result drain(Job& job) {
  Result r;
  for (;;) {
    if (!job.wait(r.last, 5s)) {
      ADD_FAILURE() << "no progress in 5 s";
      return r;
    }
    r.text += r.last.text;
    if (r.last.finish != Finish::Running) return r;
  }
}

}  // namespace

TEST(ServerEngine, ConcurrentRequestsMatchOneAtATime) {
  EngineOptions o;
  o.parallel = 3;
  o.ctx = 64;
  o.threads = 2;
  std::vector<std::string> alone;
  {
    Engine e(tiny(), o);
    for (int i = 0; i < 5; ++i) {
      auto job = e.submit(greedy(i));
      Result r = drain(*job);
      EXPECT_EQ(r.last.finish, Finish::Length);
      EXPECT_EQ(r.last.completion_tokens, 12);
      alone.push_back(r.text);
    }
  }
  Engine e(tiny(), o);  // 5 requests on 3 slots: two wait in the queue
  std::vector<std::shared_ptr<Job>> jobs;
  for (int i = 0; i < 5; ++i) jobs.push_back(e.submit(greedy(i)));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(drain(*jobs[static_cast<size_t>(i)]).text, alone[static_cast<size_t>(i)]) << "request " << i;
  EXPECT_EQ(e.stats().requests, 5u);
  // The gauge is updated at the end of the step that finished the last job.
  for (int i = 0; i < 100 && e.stats().slots_busy != 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(e.stats().slots_busy, 0);
}

TEST(ServerEngine, StopStringsAndContextLimit) {
  EngineOptions o;
  o.parallel = 1;
  o.ctx = 16;
  o.threads = 1;
  Engine e(tiny(), o);
  auto r = drain(*e.submit(greedy(0, 100)));  // 5 prompt tokens, 16 of context
  EXPECT_EQ(r.last.finish, Finish::Length);
  EXPECT_EQ(r.last.completion_tokens, 12);  // 11 fed back into the cache, the last one not
  auto full = drain(*e.submit(greedy(1, 6)));
  ASSERT_GE(full.text.size(), 2u);
  CompletionRequest with_stop = greedy(1, 6);
  with_stop.stop = {full.text.substr(1, 1)};
  auto cut = drain(*e.submit(with_stop));
  EXPECT_EQ(cut.last.finish, Finish::Stop);
  EXPECT_EQ(cut.text, full.text.substr(0, full.text.find(with_stop.stop[0])));
}

TEST(ServerEngine, CancelFreesTheSlotAndTheQueueIsBounded) {
  EngineOptions o;
  o.parallel = 1;
  o.queue = 1;
  o.ctx = 512;
  o.threads = 1;
  Engine e(tiny(), o);
  auto running = e.submit(greedy(0, 500));  // long enough to outlast the next two submits
  auto waiting = e.submit(greedy(1, 4));
  // One in the slot (or about to be), one in the queue: a third is refused.
  bool refused = false;
  try {
    e.submit(greedy(2, 4));
  } catch (const QueueFull&) {
    refused = true;
  }
  EXPECT_TRUE(refused);
  running->cancel();
  EXPECT_EQ(drain(*running).last.finish, Finish::Cancelled);
  EXPECT_EQ(drain(*waiting).last.finish, Finish::Length);
}
