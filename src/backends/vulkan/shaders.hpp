// The embedded SPIR-V kernels (cmake/vulkan.cmake lists them).
#pragma once
#include <span>
#include <string_view>

#include "backends/vulkan/stream.hpp"

namespace minnow::vulkan {

std::span<const ShaderCode> all_shaders();
const ShaderCode* find_shader(std::string_view name);  // or nullptr

}  // namespace minnow::vulkan
