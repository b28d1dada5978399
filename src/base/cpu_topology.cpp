#include "base/cpu_topology.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <utility>

namespace minnow {

std::vector<int> fast_cores(const std::string& cpu_dir) {
  std::vector<std::pair<int, long>> capacity;  // (core, capacity)
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(cpu_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0) continue;
    int core = 0;
    const auto [end, err] = std::from_chars(name.data() + 3, name.data() + name.size(), core);
    if (err != std::errc() || end != name.data() + name.size()) continue;  // cpufreq, cpuidle, ...
    std::ifstream in(entry.path() / "cpu_capacity");
    long c = 0;
    if (in >> c && c > 0) capacity.emplace_back(core, c);
  }
  if (capacity.empty()) return {};
  long top = 0;
  for (const auto& [core, c] : capacity) top = std::max(top, c);
  std::vector<int> cores;
  for (const auto& [core, c] : capacity)
    if (2 * c > top) cores.push_back(core);
  if (cores.size() == capacity.size()) return {};
  std::sort(cores.begin(), cores.end());
  return cores;
}

}  // namespace minnow
