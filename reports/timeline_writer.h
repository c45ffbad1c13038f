// TimelineWriter: writes timeline.csv — one row per worker per sample
// interval with its queue, running set and KV use — from the engine's exact
// samples (RunObserver::on_sample). Columns: docs/reports.md.
#pragma once
#include <memory>
#include <string>

#include "reports/csv_writer.h"
#include "sim/run_observer.h"

namespace servesim {

class TimelineWriter {
 public:
  TimelineWriter(const std::string& path, Time interval);
  Time interval() const { return interval_; }
  void sample(Time t, const ClusterView& cluster);
  void close() { w_.close(); }

 private:
  CsvWriter w_;
  Time interval_;
};

}  // namespace servesim
