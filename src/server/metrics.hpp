// /metrics: the engine's counters and gauges in the Prometheus text format.
#pragma once
#include <cstdint>
#include <string>

#include "server/engine.hpp"

namespace minnow::server {

struct HttpCounters {
  uint64_t requests = 0, errors = 0;  // every HTTP request / those answered 4xx or 5xx
};

std::string prometheus_text(const EngineStats& e, const HttpCounters& h);
// Resident set size of this process in bytes (0 where unknown).
uint64_t resident_bytes();

}  // namespace minnow::server
