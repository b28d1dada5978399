// The shared decoder block stack: embeddings -> N x (attention, FFN) -> norm -> logits.
// One block for every family; ModelConfig switches its optional parts (biases, QK norms,
// sandwich norms, GeGLU, sliding windows, soft-capping). All scratch memory is sized at
// construction; a forward step allocates nothing.
#pragma once
#include <cstdint>
#include <vector>

#include "base/thread_pool.hpp"
#include "models/kv_cache.hpp"
#include "models/matmul_observer.hpp"
#include "models/model.hpp"

namespace minnow {

class Transformer {
 public:
  // max_batch: most tokens per forward call (scratch is sized for it; attention's is
  // tile-sized, whatever the context); int8_activations: see kernels::matmul.
  Transformer(const LoadedModel& m, int max_batch, ThreadPool& pool, bool int8_activations = false);

  int max_batch() const { return max_batch_; }

  // Sees every matmul's input from now on (nullptr: none); not owned.
  void set_matmul_observer(MatmulObserver* o) { observer_ = o; }

  // One forward pass over rows that may belong to different sequences (continuous
  // batching): row t is token tokens[t] at position pos[t] of the sequence whose cache is
  // kv[t]. A sequence's rows are consecutive and in position order. The first n_vector
  // rows (decode tokens) use the per-row matmul kernels, the rest (prompt tokens) the GEMM;
  // either way a row's numbers do not depend on the other rows.
  struct Batch {
    const int32_t* tokens;
    const int32_t* pos;
    KvCache* const* kv;
    int n;
    int n_vector;
    const int32_t* logit_rows;  // rows whose logits are wanted, ascending
    int n_logits;
  };
  // logits: n_logits x vocab, in logit_rows order.
  void forward(const Batch& b, float* logits);

  // One sequence: tokens[0..n) at positions pos0.. (their K/V are written to the cache).
  // logits: n x vocab when all_logits, else the last token's vocab logits.
  void forward(const int32_t* tokens, int n, int pos0, KvCache& kv, float* logits, bool all_logits);
  // The embeddings and the first n_layers blocks only, for a backend that runs the rest:
  // x (n x d_model) gets the hidden rows after them. kv needs only those layers.
  void forward_layers(const int32_t* tokens, int n, int pos0, KvCache& kv, int n_layers, float* x);

 private:
  struct RopeTable {
    std::vector<float> inv_freq, cos, sin;  // cos/sin: max_batch x head_dim/2
  };
  void fill_rope(RopeTable& r, const Batch& b);
  Batch sequence(const int32_t* tokens, int n, int pos0, KvCache& kv, bool all_logits);
  void run_layers(const Batch& b, int n_layers);  // embeddings, then blocks [0, n_layers)
  void attention(int layer, const Batch& b);
  void attention_block(int layer, const Batch& b);
  void ffn_block(int layer, const Batch& b);

  const LoadedModel& m_;
  const ModelConfig& c_;
  ThreadPool& pool_;
  int max_batch_;
  bool int8_;
  MatmulObserver* observer_ = nullptr;
  std::vector<float> x_, h_, q_, k_, v_, attn_, gate_, up_, tmp_;
  int ffn_rows_ = 0;  // rows per feed-forward pass (gate_ and up_ hold this many)
  RopeTable rope_global_, rope_local_;
  std::vector<float> attn_scratch_;  // attn_scratch_floats(head_dim) per thread (models/attention.hpp)
  std::vector<int32_t> attn_blocks_;  // attention's row blocks: max_batch + 1 starts
  std::vector<int32_t> pos_, rows_;  // the single-sequence forward's batch description
  std::vector<KvCache*> kvs_;
};

}  // namespace minnow
