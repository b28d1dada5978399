#include "server/metrics.hpp"

#include <cstdio>
#include <fstream>
#include <unistd.h>

namespace minnow::server {

namespace {
void metric(std::string& out, const char* name, const char* type, const char* help, double value) {
  char line[64];
  std::snprintf(line, sizeof line, "%.15g", value);
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " + line + "\n";
}
}  // namespace

uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

std::string prometheus_text(const EngineStats& e, const HttpCounters& h) {
  std::string out;
  metric(out, "minnow_requests_total", "counter", "HTTP requests received.", static_cast<double>(h.requests));
  metric(out, "minnow_request_errors_total", "counter", "HTTP requests answered with a 4xx or 5xx status.", static_cast<double>(h.errors));
  metric(out, "minnow_completions_total", "counter", "Completion requests accepted by the engine.", static_cast<double>(e.requests));
  metric(out, "minnow_prompt_tokens_total", "counter", "Prompt tokens of admitted requests.", static_cast<double>(e.prompt_tokens));
  metric(out, "minnow_prompt_tokens_reused_total", "counter", "Prompt tokens whose KV cache a slot already held.",
         static_cast<double>(e.reused_prompt_tokens));
  metric(out, "minnow_completion_tokens_total", "counter", "Tokens generated.", static_cast<double>(e.completion_tokens));
  metric(out, "minnow_draft_tokens_total", "counter", "Tokens proposed by speculative decoding (draft model or prompt lookup).",
         static_cast<double>(e.drafted_tokens));
  metric(out, "minnow_draft_tokens_accepted_total", "counter", "Proposed tokens that sampling confirmed.",
         static_cast<double>(e.accepted_draft_tokens));
  metric(out, "minnow_decode_tokens_per_second", "gauge", "Tokens generated per second over the last 10 s of activity.",
         e.decode_tokens_per_second);
  metric(out, "minnow_queue_depth", "gauge", "Requests waiting for a slot.", e.queue_depth);
  metric(out, "minnow_slots_busy", "gauge", "Slots running a request.", e.slots_busy);
  metric(out, "minnow_slots_total", "gauge", "Slots (--parallel).", e.slots);
  metric(out, "minnow_rss_bytes", "gauge", "Resident memory of the server process.", static_cast<double>(resident_bytes()));
  return out;
}

}  // namespace minnow::server
