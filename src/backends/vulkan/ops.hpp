// The transformer's operations on a Vulkan device: matrices uploaded in GGUF's block
// layout and the kernels that use them. Every kernel has the CPU's scalar code as its
// reference (tests/unit/vulkan_kernels_test.cpp).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>

#include "backends/vulkan/device.hpp"
#include "backends/vulkan/stream.hpp"
#include "kernels/ops.hpp"

namespace minnow::vulkan {

// A weight matrix on the device: rows x cols of type, rows of row_bytes, as GGUF stores them
// except for the blocks device_block widens.
struct DeviceMatrix {
  DType type;
  int64_t rows = 0, cols = 0;
  size_t row_bytes = 0;
  Buffer data;
};

// How a block lies on the device: GGUF's bytes [0, split) at 0, the rest after `bytes -
// GGUF's size` zero bytes. Q6_K (210 -> 224 bytes, padding at the end) then starts every
// block on 16 bytes, and Q4_0, Q5_0 and Q8_0 (2 bytes after the f16 scale) their quants on 4,
// so that the kernels (units.glsl) read whole aligned words, not 32 bits at a 16-bit offset.
struct DeviceBlock {
  size_t bytes, split;
};
DeviceBlock device_block(DType t);

// Types the matmul kernels read.
bool matmul_supported(DType t);

class Ops {
 public:
  explicit Ops(Device& dev);
  Device& device() { return dev_; }
  // Kernels with subgroup additions where the device has them; off: the shared-memory
  // versions every device runs (tests check both).
  void use_subgroups(bool on) { subgroups_ = on && dev_.info().subgroup_arithmetic; }
  // Prompt matmuls with fewer than `tiles` wide tiles (64 rows x 32 tokens) use narrow ones
  // (x 16 tokens); tests set 0 to check the wide kernel on small matrices.
  void narrow_tiles_below(int64_t tiles) { wide_tiles_min_ = tiles; }
  static constexpr int64_t kWideTilesMin = 1024;  // the default
  // Matrix-vector products take 8 rows a workgroup (4 of gate and of up) where that still
  // gives `groups` workgroups, else 2; tests set 0 / a large number to check both kernels
  // (MINNOW_VULKAN_WIDE_FROM=N sets it, for timing).
  void wide_rows_from(int64_t groups) { wide_rows_groups_ = groups; }
  // Matrix-vector grids of at most `groups` workgroups, each then taking several row groups
  // in turn (0: one each, the default; MINNOW_VULKAN_MATVEC_GROUPS=N); tests check both.
  void cap_matvec_groups(int64_t groups) { matvec_groups_cap_ = groups; }
  static constexpr int64_t kWideRowsGroups = 1024;  // the default
  // The matrix-vector kernel for K-quant rows (Q4_K, Q5_K, Q6_K): each of 64 threads a whole
  // 32-value unit (Units, matvec.comp), or 16 lanes a super-block (matvec_sb.comp) in
  // workgroups of 64, 32 or 128 threads. Auto, the default: 128 threads with subgroups, except
  // units for a non-GLU matrix wide enough for 8 rows a workgroup (an output head). Other
  // types always take units; tests check all. MINNOW_VULKAN_MATVEC=units|blocks|blocks32|blocks128.
  enum class Matvec { Auto, Units, Blocks, Blocks32, Blocks128 };
  void use_matvec(Matvec m) { matvec_ = m; }
  // Prompt matmuls on the tensor cores (matmul_coop.comp) where the device has NV cooperative
  // matrices, unless MINNOW_VULKAN_COOPMAT=0; off: the FP32 tiles (tests check both).
  void use_coopmat(bool on) { coopmat_ = on && dev_.info().nv_cooperative_matrix; }
  bool coopmat() const { return coopmat_; }
  // The tensor-core tiles: 64 rows x 64 tokens (matmul_coop.comp), 128 x 128
  // (matmul_coop_big.comp), or Auto: the large ones where they still give `kBigTilesMin`
  // workgroups. MINNOW_VULKAN_COOPMAT=small / big forces one (for timing; tests check both).
  enum class CoopTiles { Auto, Small, Big };
  void use_coop_tiles(CoopTiles t) { coop_tiles_ = t; }
  static constexpr int64_t kBigTilesMin = 256;
  // Prompt attention on the tensor cores (attention_prefill_coop.comp) for head sizes 64,
  // 128 and 256 where the device has NV cooperative matrices: 1.2-1.8x faster prompts on an
  // H100 (docs/vulkan.md). MINNOW_VULKAN_COOPATTN=0 keeps the plain kernel (for timing).
  void use_coop_attention(bool on) { coop_attention_ = on; }
  // Decode attention given the fresh keys (FreshKv) instead of QK norms + store_kv before it:
  // two barriers a layer fewer; 2-6% faster decode on an H100 (2026-12-06, docs/vulkan.md).
  // MINNOW_VULKAN_DECODE=store: the KV-write pass; =norms-apart: the QK norms in their own
  // pass before the fresh-key attention (for timing).
  bool fresh_kv() const { return fresh_kv_; }
  bool fresh_qk_norms() const { return fresh_qk_norms_; }
  // Post-norms (Gemma 3) added to the residual by the next matrix-vector product
  // (InputNorm::residual), unless MINNOW_VULKAN_POSTNORM=pass: a pass of their own.
  bool fold_post_norms() const { return fold_post_norms_; }

  // Uploads w's rows (w.data: GGUF's layout). Throws Error for a type no kernel reads.
  DeviceMatrix upload(const kernels::WeightView& w);

  // An RMSNorm of the input rows folded into the product that reads them: x / rms(x) * gain.
  // Only for folds_norm(n_tokens) (the matrix-vector kernels, which read whole rows).
  // With residual, the previous block's post-norm and residual add come first: the input is
  // x + residual / rms(residual) * residual_gain, which the product also writes to x_out
  // (rows as x's; not x itself, which other workgroups still read).
  struct InputNorm {
    const Buffer* gain;
    float eps;
    const Buffer* residual = nullptr;
    const Buffer* residual_gain = nullptr;
    Buffer* x_out = nullptr;
  };
  static bool folds_norm(int64_t n_tokens) { return n_tokens < kTiledMinTokens; }

  // y[t * w.rows + r] = W[r] . x[t * w.cols ..] (+ bias[r]) for t < n_tokens; with
  // accumulate, y[..] += that (a residual added in the same pass); with norm, x normalized.
  void matmul(Stream& s, const DeviceMatrix& w, const Buffer& x, Buffer& y, int64_t n_tokens, const Buffer* bias = nullptr,
              bool accumulate = false, const InputNorm* norm = nullptr);
  // rows rows of d values: y row r = x row (x_row0 + r) / sqrt(mean(x^2) + eps) * gain; with
  // accumulate, y row r += that (x and y then distinct).
  void rmsnorm(Stream& s, const Buffer& x, const Buffer& gain, Buffer& y, int64_t rows, int64_t d, float eps,
               int64_t x_row0 = 0, bool accumulate = false);
  // y[i] += b[i % period] for i < n.
  void add(Stream& s, Buffer& y, const Buffer& b, int64_t n, int64_t period);
  // SiLU, or GELU (tanh approximation) when gelu:
  // out[t * ff + i] = act(gate[t * stride + i]) * up[t * stride + up0 + i] for t < n_tokens.
  void glu(Stream& s, const Buffer& gate, const Buffer& up, Buffer& out, int64_t n_tokens, int64_t ff, int64_t stride,
           int64_t up0, bool gelu);
  // Two matrices of one type and width as one, b's rows after a's (gate and up); stackable
  // says whether they can be.
  static bool stackable(const kernels::WeightView& a, const kernels::WeightView& b) {
    return a.type == b.type && a.cols == b.cols && a.row_bytes == b.row_bytes;
  }
  DeviceMatrix upload_stacked(const kernels::WeightView& a, const kernels::WeightView& b);
  DeviceMatrix upload_stacked(std::initializer_list<kernels::WeightView> parts);  // any number, in order
  // The rows of a stacked matrix (q, k and v) to one output each: rows [0, rows0) to y0,
  // [rows0, rows1) to y1 and, with y2, the rest to y2; each n_tokens x its rows, as matmul
  // writes them. One pass instead of three.
  void matmul_split(Stream& s, const DeviceMatrix& w, const Buffer& x, Buffer& y0, Buffer& y1, Buffer* y2, int64_t rows0,
                    int64_t rows1, int64_t n_tokens, const Buffer* bias = nullptr, const InputNorm* norm = nullptr);
  // out[t * ff + r] = act(gate[r] . x[t]) * (up[r] . x[t]) for gate_up from upload_stacked
  // (2 ff rows): one pass for a few tokens, else a matmul into scratch (n_tokens x 2 ff
  // floats) and glu.
  void glu_matmul(Stream& s, const DeviceMatrix& gate_up, const Buffer& x, Buffer& out, Buffer& scratch, int64_t n_tokens,
                  bool gelu, const InputNorm* norm = nullptr);

  // The f16 KV cache of every layer: capacity positions of n_kv_heads * head_dim halves.
  struct KvLayout {
    int64_t n_kv_heads, head_dim, capacity;
    uint32_t row_words() const { return static_cast<uint32_t>(n_kv_heads * head_dim / 2); }
    uint32_t layer_words(int layer) const { return static_cast<uint32_t>(layer * capacity) * row_words(); }
  };
  // A zeroed cache of `layers` x kv.capacity rows and a tile of padding: the tensor-core
  // prompt attention reads whole tiles of 32 rows, and every row it reads must be finite.
  Buffer kv_cache(const KvLayout& kv, int64_t layers);
  // Token t's keys (rotated as rope does) and values, rounded to f16, into position pos[t]
  // of layer's rows of the caches; with q, its n_heads query heads rotated in place as well
  // (rope's work in the same dispatch).
  void store_kv(Stream& s, const Buffer& k, const Buffer& v, const Buffer& cos, const Buffer& sin, const Buffer& pos,
                Buffer& k_cache, Buffer& v_cache, const KvLayout& kv, int layer, int64_t n_tokens, bool half_split,
                Buffer* q = nullptr, int64_t n_heads = 0);
  struct AttentionParams {
    int64_t n_heads;
    float scale, softcap;  // softcap 0: off
    int window;            // 0: every earlier position
  };
  // One token's keys and values not yet in the cache (decode): attention rotates them and
  // its query, and writes them into the cache itself, so no store_kv pass comes before; with
  // q_norm / k_norm (gains of head_dim) it RMS-normalizes the heads first (QK norms).
  struct FreshKv {
    const Buffer *k, *v, *cos, *sin;
    bool half_split;
    const Buffer* q_norm = nullptr;
    const Buffer* k_norm = nullptr;
    float eps = 0.0f;
  };
  // out (n_tokens x n_heads x head_dim) = attention of each query head of q over positions
  // up to pos[t] of its KV head in layer's rows of the caches. Few (head, token) pairs are
  // split over the positions, through `part` (from attention_part: their sums and the
  // counters that pick the workgroup that merges them). The grid
  // depends on n_tokens and the cache's capacity only, not on the positions, so a recorded
  // pass stays valid as the cache fills.
  void attention(Stream& s, const Buffer& q, const Buffer& k_cache, const Buffer& v_cache, const Buffer& pos, Buffer& out,
                 Buffer& part, const KvLayout& kv, int layer, int64_t n_tokens, const AttentionParams& a,
                 const FreshKv* fresh = nullptr);
  Buffer attention_part(const KvLayout& kv, int64_t n_heads, int64_t max_tokens);

 private:
  const Kernel& kernel(const char* name, int n_buffers, uint32_t push_bytes);
  // A product's outputs (matrix_io.glsl): rows [0, split0) to y, [split0, split1) to y2,
  // the rest to y3.
  struct Outputs {
    Buffer* y;
    Buffer* y2;
    Buffer* y3;
    int64_t split0, split1;
  };
  void matmul_to(Stream& s, const DeviceMatrix& w, const Buffer& x, const Outputs& out, int64_t n_tokens, const Buffer* bias,
                 bool accumulate, const InputNorm* norm);
  void product(Stream& s, const std::string& name, const DeviceMatrix& w, const Buffer& x, const Outputs& out, int64_t n_tokens,
               int64_t rows_per_group, int64_t tokens_per_group, const Buffer* bias, uint32_t flags,
               const InputNorm* norm = nullptr);
  // The matrix-vector kernel for w: "glu_" or "", with `wide` rows a workgroup.
  // A matrix-vector product's kernel and the rows (with GLU: of gate and up together) each
  // of its workgroups takes.
  struct MatvecPlan {
    std::string kernel;
    int64_t rows_per_group;
  };
  MatvecPlan matvec_plan(const DeviceMatrix& w, bool glu, bool wide) const;
  // From this many tokens on, the tiled matmul (each weight decoded once per 32 tokens).
  static constexpr int64_t kTiledMinTokens = 4;

  Device& dev_;
  bool subgroups_, coopmat_, coop_attention_ = true, fresh_kv_ = true, fresh_qk_norms_ = true, fold_post_norms_ = true;
  Matvec matvec_ = Matvec::Auto;
  CoopTiles coop_tiles_ = CoopTiles::Auto;
  int64_t wide_tiles_min_ = kWideTilesMin;
  int64_t wide_rows_groups_ = kWideRowsGroups;
  int64_t matvec_groups_cap_ = 0;
  std::map<std::string, std::unique_ptr<Kernel>> kernels_;
};

}  // namespace minnow::vulkan
