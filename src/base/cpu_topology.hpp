// Which cores to run on by default. On big.LITTLE phones (and Intel's hybrid laptops)
// Linux gives each core a relative `cpu_capacity` in sysfs; a decode step waits for its
// slowest thread, so threads on little cores slow everyone down: by default minnow uses
// the big (and prime) cores only, those at more than half the top capacity.
#pragma once
#include <string>
#include <vector>

namespace minnow {

// The cores whose cpu_capacity under `cpu_dir` (normally /sys/devices/system/cpu:
// cpuN/cpu_capacity) is more than half the highest, ascending; empty when no core reports
// one or none is left out (then every core is worth a thread).
std::vector<int> fast_cores(const std::string& cpu_dir = "/sys/devices/system/cpu");

}  // namespace minnow
