// The serving engine on a tiny model (also under ASan): concurrent requests give the
// texts they give one at a time, cancellation frees the slot, the queue is bounded.
#include <gtest/gtest.h>

#include <thread>

#include "base/error.hpp"
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

// Stats are recorded at the end of the step that finished the last job, after its text.
void wait_idle(const Engine& e) {
  for (int i = 0; i < 500 && e.stats().slots_busy != 0; ++i) std::this_thread::sleep_for(10ms);
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

// A draft model (here the model itself, so most proposals are kept) speculates for every
// slot in shared passes: outputs are plain decoding's, greedy and sampled, with slots
// finishing and being reused while others draft; a request with lookup_draft 0 opts out.
TEST(ServerEngine, DraftModelKeepsEveryOutput) {
  EngineOptions o;
  o.parallel = 3;
  o.ctx = 96;
  o.threads = 2;
  auto request = [](int i) {
    CompletionRequest r = greedy(i, 10 + 7 * i);
    if (i % 2) {
      r.sampling.temperature = 0.9f;
      r.sampling.seed = static_cast<uint64_t>(i);
    }
    return r;
  };
  std::vector<std::string> plain;
  {
    Engine e(tiny(), o);
    for (int i = 0; i < 6; ++i) plain.push_back(drain(*e.submit(request(i))).text);
  }
  o.draft_model = &tiny();
  o.draft_max = 6;
  o.draft_min_p = 0;  // the tiny model's probabilities are low: propose regardless
  Engine e(tiny(), o);
  std::vector<std::shared_ptr<Job>> jobs;
  for (int i = 0; i < 6; ++i) jobs.push_back(e.submit(request(i)));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(drain(*jobs[static_cast<size_t>(i)]).text, plain[static_cast<size_t>(i)]) << "request " << i;
  wait_idle(e);
  const EngineStats st = e.stats();
  EXPECT_GT(st.drafted_tokens, 30u);
  // Greedy and drafted by the same model: nearly every proposal is kept.
  EXPECT_EQ(drain(*e.submit(request(4))).text, plain[4]);
  wait_idle(e);
  const EngineStats greedy_st = e.stats();
  const uint64_t drafted = greedy_st.drafted_tokens - st.drafted_tokens;
  EXPECT_GT(drafted, 10u);
  EXPECT_GE((greedy_st.accepted_draft_tokens - st.accepted_draft_tokens) * 10, drafted * 9);
  CompletionRequest off = request(0);
  off.lookup_draft = 0;
  EXPECT_EQ(drain(*e.submit(off)).text, plain[0]);
  wait_idle(e);
  EXPECT_EQ(e.stats().drafted_tokens, greedy_st.drafted_tokens);
  // Prompt lookup first, the draft model where it finds nothing: the same outputs.
  o.lookup_draft = 4;
  Engine both(tiny(), o);
  jobs.clear();
  for (int i = 0; i < 6; ++i) jobs.push_back(both.submit(request(i)));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(drain(*jobs[static_cast<size_t>(i)]).text, plain[static_cast<size_t>(i)]) << "request " << i << ", lookup then model";
  wait_idle(both);
  EXPECT_GT(both.stats().drafted_tokens, 30u);
}
