// Whether the Vulkan tests have a device: they skip without one, unless
// MINNOW_REQUIRE_VULKAN=1 (make test sets it: CI has Mesa's lavapipe) makes that a failure.
#pragma once
#if MINNOW_HAVE_VULKAN
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "backends/vulkan/device.hpp"
#include "base/error.hpp"

namespace minnow::test_util {

// Device 0, opened once and never closed: the driver stays loaded to the end, so that
// LeakSanitizer can name it in what it reports (tests/lsan.supp); nullptr when there is none.
inline vulkan::Device* vulkan_device() {
  static vulkan::Device* dev = nullptr;
  static std::string failure;
  static bool tried = false;
  if (!tried) {
    tried = true;
    try {
      dev = vulkan::Device::open(0).release();
    } catch (const Error& e) {
      failure = e.what();
    }
  }
  if (dev == nullptr) {
    const char* require = std::getenv("MINNOW_REQUIRE_VULKAN");
    if (require != nullptr && std::string(require) == "1") ADD_FAILURE() << "no Vulkan device: " << failure;
  }
  return dev;
}

}  // namespace minnow::test_util

#define MINNOW_NEED_VULKAN_DEVICE()                                 \
  ::minnow::vulkan::Device* dev = ::minnow::test_util::vulkan_device(); \
  if (dev == nullptr) GTEST_SKIP() << "no Vulkan device";           \
  (void)dev

#endif  // MINNOW_HAVE_VULKAN
