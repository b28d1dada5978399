#include "backends/vulkan/ops.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/vulkan/shaders.hpp"
#include "base/error.hpp"

namespace minnow::vulkan {
namespace {

// The kernels' type suffix ("q4_k" for matvec_q4_k / matmul_q4_k), or nullptr.
const char* kernel_type(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::Q4_0: return "q4_0";
    case DType::Q4_1: return "q4_1";
    case DType::Q5_0: return "q5_0";
    case DType::Q5_1: return "q5_1";
    case DType::Q8_0: return "q8_0";
    case DType::Q4_K: return "q4_k";
    case DType::Q5_K: return "q5_k";
    case DType::Q6_K: return "q6_k";
    default: return nullptr;
  }
}

// The matrix kernels' push-constant flags (matvec.comp, matmul.comp).
constexpr uint32_t kAddBias = 1, kAccumulate = 2, kGelu = 4, kNorm = 8, kResidual = 16;

// Workgroups for n items, one each: x up to 65535 (the smallest limit Vulkan allows), then y.
void groups_for(int64_t n, uint32_t& gx, uint32_t& gy) {
  constexpr int64_t kMaxX = 65535;
  gx = static_cast<uint32_t>(std::min(n, kMaxX));
  gy = static_cast<uint32_t>((n + kMaxX - 1) / kMaxX);
}

// Workgroups of 256 threads for n threads, spread over x and y.
void thread_groups(int64_t n, uint32_t& gx, uint32_t& gy) { groups_for((n + 255) / 256, gx, gy); }

uint32_t to_u32(int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<uint32_t>::max())
    throw Error(std::string("vulkan: ") + what + " " + std::to_string(v) + " is out of range for the kernels");
  return static_cast<uint32_t>(v);
}

}  // namespace

bool matmul_supported(DType t) { return kernel_type(t) != nullptr; }

Ops::Ops(Device& dev) : dev_(dev), subgroups_(dev.info().subgroup_arithmetic), coopmat_(false) {
  const char* env = std::getenv("MINNOW_VULKAN_COOPMAT");
  use_coopmat(env == nullptr || std::strcmp(env, "0") != 0);
  if (env != nullptr && std::strcmp(env, "small") == 0) coop_tiles_ = CoopTiles::Small;
  if (env != nullptr && std::strcmp(env, "big") == 0) coop_tiles_ = CoopTiles::Big;
  const char* mv = std::getenv("MINNOW_VULKAN_MATVEC");
  if (mv != nullptr && std::strcmp(mv, "units") == 0) matvec_ = Matvec::Units;
  if (mv != nullptr && std::strcmp(mv, "blocks") == 0) matvec_ = Matvec::Blocks;
  if (mv != nullptr && std::strcmp(mv, "blocks32") == 0) matvec_ = Matvec::Blocks32;
  if (mv != nullptr && std::strcmp(mv, "blocks128") == 0) matvec_ = Matvec::Blocks128;
  const char* dec = std::getenv("MINNOW_VULKAN_DECODE");
  fresh_kv_ = dec == nullptr || std::strcmp(dec, "store") != 0;
  fresh_qk_norms_ = dec == nullptr || std::strcmp(dec, "norms-apart") != 0;
  if (const char* cap = std::getenv("MINNOW_VULKAN_MATVEC_GROUPS")) matvec_groups_cap_ = std::max(0L, std::atol(cap));
  const char* ca = std::getenv("MINNOW_VULKAN_COOPATTN");
  coop_attention_ = ca == nullptr || std::strcmp(ca, "0") != 0;
  if (const char* wf = std::getenv("MINNOW_VULKAN_WIDE_FROM")) wide_rows_groups_ = std::max(0L, std::atol(wf));
  const char* pn = std::getenv("MINNOW_VULKAN_POSTNORM");
  fold_post_norms_ = pn == nullptr || std::strcmp(pn, "pass") != 0;
}

const Kernel& Ops::kernel(const char* name, int n_buffers, uint32_t push_bytes) {
  auto it = kernels_.find(name);
  if (it != kernels_.end()) return *it->second;
  const ShaderCode* code = find_shader(name);
  if (code == nullptr) throw Error(std::string("vulkan: no kernel named ") + name + " in this build");
  auto k = std::make_unique<Kernel>(dev_, *code, n_buffers, push_bytes);
  return *kernels_.emplace(name, std::move(k)).first->second;
}

DeviceBlock device_block(DType t) {
  const auto gguf = static_cast<size_t>(dtype_traits(t).block_bytes);
  switch (t) {
    case DType::Q6_K: return {224, gguf};
    case DType::Q4_0:
    case DType::Q5_0:
    case DType::Q8_0: return {gguf + 2, 2};
    default: return {gguf, gguf};
  }
}

DeviceMatrix Ops::upload(const kernels::WeightView& w) { return upload_stacked({w}); }

DeviceMatrix Ops::upload_stacked(const kernels::WeightView& a, const kernels::WeightView& b) { return upload_stacked({a, b}); }

DeviceMatrix Ops::upload_stacked(std::initializer_list<kernels::WeightView> parts) {
  const kernels::WeightView& a = *parts.begin();
  int64_t rows = 0;
  for (const kernels::WeightView& w : parts) {
    if (!matmul_supported(w.type))
      throw Error(std::string("vulkan: no matmul kernel for ") + dtype_name(w.type) + " weights");
    if (w.data == nullptr) throw Error("vulkan: this matrix has no GGUF-layout rows to upload (a packed file)");
    const int64_t block = dtype_traits(w.type).block_size;
    if (w.cols % 32 != 0 || w.cols % block != 0)
      throw Error("vulkan: rows of " + std::to_string(w.cols) + " values are not whole 32-value units");
    if (!stackable(a, w)) throw Error("vulkan: matrices stacked into one must share type and width");
    rows += w.rows;
  }
  const auto src_block = static_cast<size_t>(dtype_traits(a.type).block_bytes);
  const DeviceBlock dev = device_block(a.type);
  const bool widen = dev.bytes != src_block;
  const size_t row_bytes = a.row_bytes / src_block * dev.bytes;
  DeviceMatrix m{a.type, rows, a.cols, row_bytes, {}};
  const size_t bytes = row_bytes * static_cast<size_t>(rows);
  to_u32(static_cast<int64_t>(bytes / 2), "matrix size in 16-bit words");
  m.data = dev_.alloc(bytes + 4, Memory::Device);  // a spare word: kernels read 32 bits at any 16-bit offset
  size_t at = 0;
  std::vector<uint8_t> padded;
  for (const kernels::WeightView& w : parts) {
    const size_t n = w.row_bytes * static_cast<size_t>(w.rows);
    if (!widen) {
      dev_.upload(m.data, w.data, n, at);
      at += n;
      continue;
    }
    // In slices of at most 16 MiB of widened blocks, to bound the host copy.
    const size_t blocks = n / src_block, per_slice = (size_t{16} << 20) / dev.bytes, gap = dev.bytes - src_block;
    const auto* src = static_cast<const uint8_t*>(w.data);
    for (size_t b0 = 0; b0 < blocks; b0 += per_slice) {
      const size_t nb = std::min(per_slice, blocks - b0);
      padded.assign(nb * dev.bytes, 0);
      for (size_t b = 0; b < nb; ++b) {
        const uint8_t* from = src + (b0 + b) * src_block;
        std::memcpy(&padded[b * dev.bytes], from, dev.split);
        std::memcpy(&padded[b * dev.bytes + dev.split + gap], from + dev.split, src_block - dev.split);
      }
      dev_.upload(m.data, padded.data(), padded.size(), at);
      at += padded.size();
    }
  }
  return m;
}

void Ops::matmul(Stream& s, const DeviceMatrix& w, const Buffer& x, Buffer& y, int64_t n_tokens, const Buffer* bias,
                 bool accumulate, const InputNorm* norm) {
  matmul_to(s, w, x, {&y, nullptr, nullptr, w.rows, w.rows}, n_tokens, bias, accumulate, norm);
}

void Ops::matmul_split(Stream& s, const DeviceMatrix& w, const Buffer& x, Buffer& y0, Buffer& y1, Buffer* y2, int64_t rows0,
                       int64_t rows1, int64_t n_tokens, const Buffer* bias, const InputNorm* norm) {
  if (rows0 <= 0 || rows1 <= rows0 || rows1 > w.rows || (y2 == nullptr) != (rows1 == w.rows))
    throw Error("vulkan: a stacked matrix's rows do not split into its outputs");
  matmul_to(s, w, x, {&y0, &y1, y2, rows0, rows1}, n_tokens, bias, false, norm);
}

void Ops::matmul_to(Stream& s, const DeviceMatrix& w, const Buffer& x, const Outputs& out, int64_t n_tokens,
                    const Buffer* bias, bool accumulate, const InputNorm* norm) {
  if (bias != nullptr && bias->size() < static_cast<size_t>(w.rows) * sizeof(float)) throw Error("vulkan: a bias shorter than the rows");
  const int64_t parts[3] = {out.split0, out.split1 - out.split0, w.rows - out.split1};
  const Buffer* bufs[3] = {out.y, out.y2, out.y3};
  for (int i = 0; i < 3; ++i)
    if (parts[i] > 0 && bufs[i]->size() < static_cast<size_t>(n_tokens * parts[i]) * sizeof(float))
      throw Error("vulkan: matmul output smaller than the shapes");
  const uint32_t flags = (bias != nullptr ? kAddBias : 0u) | (accumulate ? kAccumulate : 0u);
  if (n_tokens < kTiledMinTokens) {
    const MatvecPlan plan = matvec_plan(w, false, w.rows / 8 >= wide_rows_groups_);
    product(s, plan.kernel, w, x, out, n_tokens, plan.rows_per_group, 1, bias, flags, norm);
    return;
  }
  if (norm != nullptr) throw Error("vulkan: a norm folded into a matmul of " + std::to_string(n_tokens) + " tokens");
  if (coopmat_) {  // on the tensor cores: 128 rows x 128 tokens, or 64 x 64
    const bool big = coop_tiles_ == CoopTiles::Big ||
                     (coop_tiles_ == CoopTiles::Auto && (w.rows + 127) / 128 * ((n_tokens + 127) / 128) >= kBigTilesMin);
    const int64_t tile = big ? 128 : 64;
    product(s, std::string(big ? "matmul_coop_big_" : "matmul_coop_") + kernel_type(w.type), w, x, out, n_tokens, tile, tile,
            bias, flags);
    return;
  }
  // Tiles of 64 rows x 32 tokens, or x 16 where that gives too few workgroups to fill a
  // large GPU (matrices of few rows).
  const bool narrow = (w.rows + 63) / 64 * ((n_tokens + 31) / 32) < wide_tiles_min_;
  product(s, std::string(narrow ? "matmul_narrow_" : "matmul_") + kernel_type(w.type), w, x, out, n_tokens, 64,
          narrow ? 16 : 32, bias, flags);
}

void Ops::glu_matmul(Stream& s, const DeviceMatrix& gate_up, const Buffer& x, Buffer& out, Buffer& scratch,
                     int64_t n_tokens, bool gelu, const InputNorm* norm) {
  const int64_t ff = gate_up.rows / 2;
  if (out.size() < static_cast<size_t>(n_tokens * ff) * sizeof(float)) throw Error("vulkan: GLU output smaller than the shapes");
  if (n_tokens < kTiledMinTokens) {
    const MatvecPlan plan = matvec_plan(gate_up, true, ff / 4 >= wide_rows_groups_);
    product(s, plan.kernel, gate_up, x, {&out, nullptr, nullptr, gate_up.rows, gate_up.rows}, n_tokens, plan.rows_per_group, 1,
            nullptr, gelu ? kGelu : 0u, norm);
    return;
  }
  matmul(s, gate_up, x, scratch, n_tokens, nullptr, false, norm);
  s.barrier();
  glu(s, scratch, scratch, out, n_tokens, ff, 2 * ff, ff, gelu);
}

Ops::MatvecPlan Ops::matvec_plan(const DeviceMatrix& w, bool glu, bool wide) const {
  const bool k_quant = w.type == DType::Q4_K || w.type == DType::Q5_K || w.type == DType::Q6_K;
  Matvec m = matvec_;
  // Auto: what measured fastest on an H100 (docs/vulkan.md, 2026-12-07 evening): super-blocks
  // in 128 threads, but the 8-row units kernel for an output head's many rows.
  if (m == Matvec::Auto) m = subgroups_ && (glu || !wide) ? Matvec::Blocks128 : Matvec::Units;
  // matvec_sb.comp addresses the matrix in bytes with 32-bit offsets.
  const bool blocks = m != Matvec::Units && k_quant && w.row_bytes * static_cast<size_t>(w.rows) < (size_t{1} << 32) - 16;
  const bool t128 = blocks && subgroups_ && m == Matvec::Blocks128;
  wide = wide && !t128;
  // Rows of the matrix (with GLU: of gate, then as many of up) a workgroup takes: matvec_rows.glsl.
  const int64_t rows = wide ? (glu ? 4 : 8) : 2;
  std::string name = std::string(blocks ? "matvec_sb_" : "matvec_") + (glu ? "glu_" : "") + (wide ? "wide_" : "") +
                     kernel_type(w.type);
  if (!subgroups_) name += "_nosg";
  else if (t128) name += "_t128";
  else if (blocks && m != Matvec::Blocks) name += "_t32";
  return {name, glu ? 2 * rows : rows};
}

// The matrix kernels' dispatch: `rows_per_group` of w's rows and `tokens_per_group` tokens
// a workgroup.
void Ops::product(Stream& s, const std::string& name, const DeviceMatrix& w, const Buffer& x, const Outputs& out, int64_t n_tokens,
                  int64_t rows_per_group, int64_t tokens_per_group, const Buffer* bias, uint32_t flags,
                  const InputNorm* norm) {
  const size_t row_floats = static_cast<size_t>(w.cols), input_floats = static_cast<size_t>(n_tokens * w.cols);
  if (norm != nullptr && norm->gain->size() < row_floats * sizeof(float)) throw Error("vulkan: a norm's gain shorter than the columns");
  const bool residual = norm != nullptr && norm->residual != nullptr;
  if (residual && (norm->residual_gain == nullptr || norm->x_out == nullptr || norm->x_out == &x ||
                   norm->residual->size() < input_floats * sizeof(float) || norm->x_out->size() < input_floats * sizeof(float) ||
                   norm->residual_gain->size() < row_floats * sizeof(float)))
    throw Error("vulkan: a folded post-norm's buffers do not fit the shapes");
  struct {
    uint32_t rows, cols, row_u16, n_tokens, flags;
    float eps;
    uint32_t split0, split1;
  } push{to_u32(w.rows, "row count"), to_u32(w.cols, "column count"), to_u32(static_cast<int64_t>(w.row_bytes / 2), "row size"),
         to_u32(n_tokens, "token count"), flags | (norm != nullptr ? kNorm : 0u) | (residual ? kResidual : 0u),
         norm != nullptr ? norm->eps : 0.0f,
         to_u32(out.split0, "row count"), to_u32(out.split1, "row count")};
  if (n_tokens > 65535) throw Error("vulkan: more than 65535 tokens in one matmul");
  if (x.size() < static_cast<size_t>(n_tokens * w.cols) * sizeof(float)) throw Error("vulkan: matmul input smaller than the shapes");
  uint32_t gx, gy;
  int64_t groups = (w.rows + rows_per_group - 1) / rows_per_group;
  if (tokens_per_group == 1 && matvec_groups_cap_ > 0) groups = std::min(groups, matvec_groups_cap_);  // matvec_rows.glsl
  groups_for(groups, gx, gy);
  const uint32_t gz = static_cast<uint32_t>((n_tokens + tokens_per_group - 1) / tokens_per_group);
  // Bindings a dispatch does not use still need a buffer: the weights (never read) or the
  // first output (never written through them).
  s.dispatch(kernel(name.c_str(), 10, sizeof push),
             {&w.data, &x, out.y, bias != nullptr ? bias : &w.data, norm != nullptr ? norm->gain : &w.data,
              out.y2 != nullptr ? out.y2 : out.y, out.y3 != nullptr ? out.y3 : out.y, residual ? norm->residual : &w.data,
              residual ? norm->residual_gain : &w.data, residual ? norm->x_out : out.y},
             &push, gx, gy, gz);
}

void Ops::rmsnorm(Stream& s, const Buffer& x, const Buffer& gain, Buffer& y, int64_t rows, int64_t d, float eps,
                  int64_t x_row0, bool accumulate) {
  struct {
    uint32_t rows, d;
    float eps;
    uint32_t x_row0, accumulate;
  } push{to_u32(rows, "row count"), to_u32(d, "row length"), eps, to_u32(x_row0, "row"), accumulate ? 1u : 0u};
  uint32_t gx, gy;
  groups_for(rows, gx, gy);
  s.dispatch(kernel(subgroups_ ? "rmsnorm" : "rmsnorm_nosg", 3, sizeof push), {&x, &gain, &y}, &push, gx, gy);
}

void Ops::add(Stream& s, Buffer& y, const Buffer& b, int64_t n, int64_t period) {
  struct {
    uint32_t n, period;
  } push{to_u32(n, "length"), to_u32(period, "period")};
  uint32_t gx, gy;
  thread_groups(n, gx, gy);
  s.dispatch(kernel("add", 2, sizeof push), {&y, &b}, &push, gx, gy);
}

void Ops::glu(Stream& s, const Buffer& gate, const Buffer& up, Buffer& out, int64_t n_tokens, int64_t ff,
              int64_t stride, int64_t up0, bool gelu) {
  struct {
    uint32_t n, ff, stride, up0, gelu;
  } push{to_u32(n_tokens * ff, "length"), to_u32(ff, "width"), to_u32(stride, "stride"), to_u32(up0, "offset"), gelu ? 1u : 0u};
  uint32_t gx, gy;
  thread_groups(n_tokens * ff, gx, gy);
  s.dispatch(kernel("glu", 3, sizeof push), {&gate, &up, &out}, &push, gx, gy);
}

void Ops::store_kv(Stream& s, const Buffer& k, const Buffer& v, const Buffer& cos, const Buffer& sin, const Buffer& pos,
                   Buffer& k_cache, Buffer& v_cache, const KvLayout& kv, int layer, int64_t n_tokens, bool half_split,
                   Buffer* q, int64_t n_heads) {
  const int64_t q_heads = q != nullptr ? n_heads : 0;
  struct {
    uint32_t n_tokens, n_kv_heads, hd, half_split, layer_words, row_words, n_q_heads;
  } push{to_u32(n_tokens, "token count"), to_u32(kv.n_kv_heads, "head count"), to_u32(kv.head_dim, "head size"),
         half_split ? 1u : 0u, kv.layer_words(layer), kv.row_words(), to_u32(q_heads, "head count")};
  uint32_t gx, gy;
  thread_groups(std::max<int64_t>(n_tokens * kv.row_words(), n_tokens * q_heads * (kv.head_dim / 2)), gx, gy);
  // Without queries the binding still needs a buffer: the keys (never written).
  s.dispatch(kernel("store_kv", 8, sizeof push), {&k, &v, &cos, &sin, &pos, &k_cache, &v_cache, q != nullptr ? q : &k}, &push,
             gx, gy);
}

namespace {

// Workgroups attention aims for: a few per compute unit of a large GPU.
constexpr int64_t kAttentionGroups = 512;
// Queries a workgroup of attention_prefill.comp and attention_prefill_coop.comp takes (their
// kQueries), and the rows past the last position the latter may read (its kTile).
constexpr int64_t kPromptQueries = 16, kPromptTile = 32;

// Splits of the positions for n_tokens x n_heads queries over spans of up to `span`
// positions: enough for kAttentionGroups workgroups, at most one per 32-position tile (the
// kernel cuts the positions actually seen into that many chunks).
int64_t attention_splits(int64_t n_heads, int64_t n_tokens, int64_t span) {
  const int64_t pairs = n_heads * n_tokens;
  return std::clamp<int64_t>((kAttentionGroups + pairs - 1) / pairs, 1, (span + 31) / 32);
}

int64_t attention_span(const Ops::KvLayout& kv, int window) { return window > 0 ? std::min<int64_t>(window, kv.capacity) : kv.capacity; }

}  // namespace

// The splits' sums, then one counter per (head, token) pair (fewer than kAttentionGroups
// pairs are ever split).
int64_t attention_sums_words(const Ops::KvLayout& kv, int64_t n_heads, int64_t max_tokens) {
  int64_t most = 0;  // splits > 1 only while n_heads * n_tokens < kAttentionGroups
  for (int64_t n = 1; n <= std::min(max_tokens, kAttentionGroups); ++n)
    if (const int64_t sp = attention_splits(n_heads, n, kv.capacity); sp > 1) most = std::max(most, n * n_heads * sp);
  return std::max<int64_t>(most, 1) * (kv.head_dim + 2);
}

Buffer Ops::kv_cache(const KvLayout& kv, int64_t layers) {
  Buffer b = dev_.alloc(static_cast<size_t>(layers * kv.capacity + kPromptTile) * kv.row_words() * 4, Memory::Device);
  dev_.zero(b);
  return b;
}

Buffer Ops::attention_part(const KvLayout& kv, int64_t n_heads, int64_t max_tokens) {
  const size_t words = static_cast<size_t>(attention_sums_words(kv, n_heads, max_tokens) + kAttentionGroups);
  Buffer b = dev_.alloc(words * 4, Memory::Device);
  const std::vector<uint32_t> zeros(words, 0u);  // the counters start at zero; each merge resets its own
  dev_.upload(b, zeros.data(), words * 4);
  return b;
}

void Ops::attention(Stream& s, const Buffer& q, const Buffer& k_cache, const Buffer& v_cache, const Buffer& pos,
                    Buffer& out, Buffer& part, const KvLayout& kv, int layer, int64_t n_tokens, const AttentionParams& a,
                    const FreshKv* fresh) {
  if (kv.head_dim > 256 || kv.head_dim % 2 != 0) throw Error("vulkan: attention needs an even head size of at most 256");
  if (kv.n_kv_heads <= 0 || a.n_heads % kv.n_kv_heads != 0) throw Error("vulkan: query heads must be a multiple of KV heads");
  if (n_tokens > 65535) throw Error("vulkan: more than 65535 tokens in one attention pass");
  const int64_t span = attention_span(kv, a.window), splits = attention_splits(a.n_heads, n_tokens, span);
  const int64_t count_at = static_cast<int64_t>(part.size() / 4) - kAttentionGroups;
  if (splits > 1 && count_at < n_tokens * a.n_heads * splits * (kv.head_dim + 2))
    throw Error("vulkan: attention's split buffer is too small");
  struct {
    uint32_t n_heads, n_kv_heads, hd, layer_words, row_words;
    float scale, softcap;
    uint32_t window, n_splits, count_at, fresh, half_split;
    float eps;
  } push{to_u32(a.n_heads, "head count"), to_u32(kv.n_kv_heads, "head count"), to_u32(kv.head_dim, "head size"),
         kv.layer_words(layer), kv.row_words(), a.scale, a.softcap, to_u32(a.window, "window"), static_cast<uint32_t>(splits),
         splits > 1 ? to_u32(count_at, "counter offset") : 0u,
         fresh == nullptr ? 0u : 1u | (fresh->q_norm != nullptr ? 2u : 0u) | (fresh->k_norm != nullptr ? 4u : 0u),
         fresh != nullptr && fresh->half_split ? 1u : 0u, fresh != nullptr ? fresh->eps : 0.0f};
  if (fresh != nullptr && n_tokens != 1) throw Error("vulkan: attention takes fresh keys for one token only");
  const uint32_t heads = to_u32(a.n_heads, "head count"), tokens = static_cast<uint32_t>(n_tokens);
  if (splits == 1 && n_tokens >= kPromptQueries) {  // 16 queries a workgroup share each tile of the cache
    struct {
      uint32_t n_heads, n_kv_heads, hd, layer_words, row_words;
      float scale, softcap;
      uint32_t window, n_splits, count_at;
    } prompt{push.n_heads, push.n_kv_heads, push.hd, push.layer_words, push.row_words, push.scale, push.softcap,
             push.window, push.n_splits, push.count_at};
    prompt.n_splits = tokens;  // attention_prefill.comp reads this field as the token count
    const int64_t hd = kv.head_dim;
    const bool coop = coopmat_ && coop_attention_ && (hd == 64 || hd == 128 || hd == 256) &&
                      k_cache.size() >= (static_cast<size_t>(kv.layer_words(layer)) + (kv.capacity + kPromptTile) * kv.row_words()) * 4 &&
                      v_cache.size() >= k_cache.size();
    const std::string name = coop ? "attention_prefill_coop_" + std::to_string(hd) : std::string("attention_prefill");
    s.dispatch(kernel(name.c_str(), 5, sizeof prompt), {&q, &k_cache, &v_cache, &pos, &out}, &prompt, heads,
               static_cast<uint32_t>((n_tokens + kPromptQueries - 1) / kPromptQueries));
    return;
  }
  // Without fresh keys their bindings still need buffers: the queries (never read).
  const Buffer* k = fresh != nullptr ? fresh->k : &q;
  const Buffer* v = fresh != nullptr ? fresh->v : &q;
  const Buffer* cos = fresh != nullptr ? fresh->cos : &q;
  const Buffer* sin = fresh != nullptr ? fresh->sin : &q;
  const Buffer* q_norm = fresh != nullptr && fresh->q_norm != nullptr ? fresh->q_norm : &q;
  const Buffer* k_norm = fresh != nullptr && fresh->k_norm != nullptr ? fresh->k_norm : &q;
  s.dispatch(kernel(subgroups_ ? "attention" : "attention_nosg", 12, sizeof push),
             {&q, &k_cache, &v_cache, &pos, &out, &part, k, v, cos, sin, q_norm, k_norm}, &push, heads, tokens,
             static_cast<uint32_t>(splits));
}

}  // namespace minnow::vulkan
