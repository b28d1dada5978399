// Default threads on big.LITTLE: the cores of fast_cores() from a fake sysfs tree.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "base/cpu_topology.hpp"

namespace fs = std::filesystem;

namespace {

// A /sys/devices/system/cpu lookalike: cpuN/cpu_capacity per entry, plus the non-core
// directories a real one has.
fs::path fake_cpus(const std::string& name, const std::map<int, int>& capacity) {
  const fs::path dir = fs::temp_directory_path() / ("minnow_cpus_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir / "cpufreq");
  fs::create_directories(dir / "cpuidle");
  for (const auto& [core, c] : capacity) {
    fs::create_directories(dir / ("cpu" + std::to_string(core)));
    if (c >= 0) std::ofstream(dir / ("cpu" + std::to_string(core)) / "cpu_capacity") << c << "\n";
  }
  return dir;
}

}  // namespace

TEST(CpuTopology, PhoneUsesBigAndPrimeCores) {
  // 4 little (Cortex-A510-like), 3 big, 1 prime: the 4 fast ones, not the little ones.
  const auto dir = fake_cpus("phone", {{0, 325}, {1, 325}, {2, 325}, {3, 325}, {4, 870}, {5, 870}, {6, 870}, {7, 1024}});
  EXPECT_EQ(minnow::fast_cores(dir.string()), (std::vector<int>{4, 5, 6, 7}));
  fs::remove_all(dir);
}

TEST(CpuTopology, AllCoresAlikeOrUnknownMeansEveryCore) {
  const auto same = fake_cpus("same", {{0, 1024}, {1, 1024}});
  EXPECT_TRUE(minnow::fast_cores(same.string()).empty());
  const auto none = fake_cpus("none", {{0, -1}, {1, -1}});  // no cpu_capacity files (x86 servers)
  EXPECT_TRUE(minnow::fast_cores(none.string()).empty());
  EXPECT_TRUE(minnow::fast_cores("/nonexistent/minnow").empty());
  fs::remove_all(same);
  fs::remove_all(none);
}
