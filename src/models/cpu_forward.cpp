#include "models/kv_cache.hpp"
#include "models/sequence_forward.hpp"
#include "models/transformer.hpp"

namespace minnow {
namespace {

class CpuForward final : public SequenceForward {
 public:
  CpuForward(const LoadedModel& m, int ctx, int max_batch, ThreadPool& pool, bool int8, DType kv_type)
      : kv_(m.config, ctx, kv_type), net_(m, max_batch, pool, int8) {}
  int max_batch() const override { return net_.max_batch(); }
  void forward(const int32_t* tokens, int n, int pos0, float* logits, bool all_logits) override {
    net_.forward(tokens, n, pos0, kv_, logits, all_logits);
  }

 private:
  KvCache kv_;
  Transformer net_;
};

}  // namespace

std::unique_ptr<SequenceForward> make_cpu_forward(const LoadedModel& m, int ctx, int max_batch, ThreadPool& pool,
                                                  bool int8_activations, DType kv_type) {
  return std::make_unique<CpuForward>(m, ctx, max_batch, pool, int8_activations, kv_type);
}

}  // namespace minnow
