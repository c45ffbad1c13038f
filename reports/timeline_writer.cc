#include "reports/timeline_writer.h"

namespace servesim {

TimelineWriter::TimelineWriter(const std::string& path, Time interval) : w_(path), interval_(interval) {
  for (const char* h : {"time_s", "worker", "waiting", "running", "kv_used_pages", "kv_capacity_pages", "kv_fraction",
                        "pending_prefill_tokens"})
    w_.field(std::string_view(h));
  w_.end_row();
}

void TimelineWriter::sample(Time t, const ClusterView& c) {
  for (WorkerId w = 0; w < c.workers(); ++w) {
    WorkerLoad l = c.load(w);
    w_.seconds_ns(t).field(static_cast<std::int64_t>(w)).field(l.waiting).field(l.running);
    w_.field(l.kv_used_pages).field(l.kv_capacity_pages);
    w_.field(static_cast<double>(l.kv_used_pages) / static_cast<double>(std::max<std::int64_t>(1, l.kv_capacity_pages)));
    w_.field(l.pending_prefill_tokens);
    w_.end_row();
  }
}

}  // namespace servesim
