#include "runtime/device_model.hpp"

#include <algorithm>

#include "base/error.hpp"
#if MINNOW_HAVE_VULKAN
#include "backends/vulkan/forward.hpp"
#endif

namespace minnow {

std::shared_ptr<DeviceModel> open_device_model(const LoadedModel& m, int ctx, int max_batch, const SessionOptions& o,
                                                 ThreadPool& pool) {
  if (o.backend != SessionOptions::Backend::Vulkan) return nullptr;
  if (o.kv_type != SessionOptions::KvType::F16) throw Error("session: the Vulkan backend keeps an f16 KV cache (--kv-type f16)");
#if MINNOW_HAVE_VULKAN
  const int n_layers = m.config.n_layers, on_device = o.gpu_layers < 0 ? n_layers : std::min(o.gpu_layers, n_layers);
  if (on_device == 0) return nullptr;  // nothing offloaded: the CPU's forward pass, with its f16 cache
  return vulkan::upload_model(m, ctx, max_batch, o.device, n_layers - on_device, &pool);
#else
  (void)m, (void)ctx, (void)max_batch, (void)pool;
  throw Error("session: this minnow was built without the Vulkan backend (it needs libvulkan-dev and glslc)");
#endif
}

}  // namespace minnow
