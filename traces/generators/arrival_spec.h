// ArrivalSpec: the arrival process of the generators in this folder (session
// starts, workflow starts, empirical requests), in the same YAML syntax as the
// synthetic workload's clients:
//   rate: 2.0                       # arrivals per second
//   arrival: poisson                # or {process: gamma, cv: 3} (burstier for cv > 1)
// plus a stop rule: `<count_key>: N` and/or `duration_s: T` (at least one).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/core/option_table.h"
#include "sim/core/yaml_map.h"
#include "sim/core/rng.h"

#include "sim/core/time.h"

namespace servesim {

// Bounds of the generators' numbers (docs/configuration.md, "Ranges"): every arrival is
// at most kMaxArrivalS seconds after the start (31.7 years; the engine's int64
// nanosecond clock holds 292 years), so sums of gaps, think times and durations fit.
inline constexpr double kMinRate = 1e-6;    // arrivals/s: a mean gap of 11.6 days
inline constexpr double kMaxRate = 1e9;
inline constexpr double kMinCv = 1e-3;      // gamma arrivals: shape 1/cv^2 in [1e-6, 1e6]
inline constexpr double kMaxCv = 1e3;
inline constexpr double kMaxCount = 1e9;    // requests, sessions, runs of a generator
inline constexpr double kMaxArrivalS = 1e9;

// The arrival at `s` seconds as engine time; InputError naming `what` (the workload) when
// it is past kMaxArrivalS: too low a rate for the number of requests asked for.
Time arrival_time(double s, std::string_view what, std::int64_t index);

// A renewal arrival process: Poisson (exponential gaps) or Gamma gaps with a
// coefficient of variation (cv > 1 is burstier than Poisson). YAML, under the
// key `arrival`: `poisson` (default) or `{process: gamma, cv: 3}`. Shared by
// every generator (synthetic, templates, sessions, agents, empirical).
struct ArrivalProcess {
  enum class Process { kPoisson, kGamma } process = Process::kPoisson;
  double cv = 1.0;  // gamma only

  double gap_s(double rate, Rng& rng) const;  // next gap in seconds at `rate` arrivals/s
  YAML::Node resolved() const;                // `poisson`, or {process: gamma, cv: X}
};

// The keys of the map form of `arrival` ({process: gamma, cv: 3}).
const OptionTable<ArrivalProcess>& arrival_process_options();

// An `arrival` row of S's table: `poisson` or a map of arrival_process_options()
// (a value of two shapes: the row reads and writes it by hand).
template <class S>
OptionCustom<S> arrival_column(ArrivalProcess S::* member);
// Reads the `arrival` key of `m` into `a` (absent: `a` unchanged).
void read_arrival_process(YamlMap& m, const char* key, ArrivalProcess& a);

// The stop rule of a generator: at most `count` arrivals (the workload names the
// key: requests, sessions, workflows) and/or none at or after `duration_s`.
struct StopRule {
  std::optional<std::int64_t> count;  // stop after this many arrivals
  std::optional<double> duration_s;   // stop at the first arrival at or after this time

  // True if an arrival number `index` (0-based) at `t_s` is within the rule.
  bool within(std::int64_t index, double t_s) const {
    return (!count || index < *count) && (!duration_s || t_s < *duration_s);
  }
};

// `<count_key>` and duration_s, for count_key requests, sessions or workflows.
const OptionTable<StopRule>& stop_rule_options(std::string_view count_key);
// The stop rule's own check once its table was read: at least one of the two is set.
void check_stop_rule(const YamlMap& m, const StopRule& r, std::string_view count_key);

struct ArrivalSpec {
  double rate = 1.0;  // per second (a workload's own default: its spec's initializer of this member)
  ArrivalProcess process;
  StopRule stop;

  double gap_s(Rng& rng) const { return process.gap_s(rate, rng); }
  bool within(std::int64_t index, double t_s) const { return stop.within(index, t_s); }
};

// rate, arrival, `<count_key>` and duration_s (stop_rule_options(count_key));
// lifted into a workload's table, which then calls check_stop_rule().
const OptionTable<ArrivalSpec>& arrival_spec_options(std::string_view count_key);

// Walks an ArrivalSpec: the times of arrivals 0, 1, 2, ... until its stop rule
// ends them. The first gap is drawn on construction.
class ArrivalClock {
 public:
  // `what` names the workload in the past-kMaxArrivalS error (arrival_time()).
  ArrivalClock(const ArrivalSpec& spec, Rng rng, std::string what)
      : spec_(&spec), rng_(rng), what_(std::move(what)), next_s_(spec.gap_s(rng_)) {}
  // The next arrival as engine time, or nullopt once the stop rule ends the stream.
  std::optional<Time> next() {
    if (!spec_->within(count_, next_s_)) return std::nullopt;
    const Time t = arrival_time(next_s_, what_, count_);
    next_s_ += spec_->gap_s(rng_);
    ++count_;
    return t;
  }
  std::int64_t count() const { return count_; }  // arrivals returned so far

 private:
  const ArrivalSpec* spec_;
  Rng rng_;
  std::string what_;
  double next_s_;
  std::int64_t count_ = 0;
};

// One client of a generator with a `clients:` list (synthetic, templates): its
// name and arrival process; the workload adds its own keys.
struct ClientArrivals {
  std::string name;        // derived default: client<i>, i its index in the list
  double rate = 1.0;       // requests/s
  ArrivalProcess arrival;  // Poisson or Gamma(cv) gaps
};

// name, rate, arrival: lifted into a workload's client table (lift_base).
const OptionTable<ClientArrivals>& client_arrivals_options();

// Reads the non-empty list `clients` of `m`: item i into a C (a ClientArrivals)
// whose name starts as "client<i>", by `table`; names must be unique in the
// list; each item's unknown keys are errors; `check(item, client)`, when set,
// checks one client after its table was read.
template <class C>
std::vector<C> parse_clients(YamlMap& m, const OptionTable<C>& table,
                             const std::function<void(YamlMap&, C&)>& check = nullptr) {
  YAML::Node list = m.raw("clients");
  if (!list || !list.IsSequence() || list.size() == 0) m.fail("clients", "expected a non-empty list of clients");
  std::vector<C> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    YamlMap cm(list[i], m.file(), m.key_path(fmt::format("clients[{}]", i)));
    C c;
    c.name = fmt::format("client{}", i);
    read_options(cm, table, c);
    for (const C& prev : out)
      if (prev.name == c.name) cm.fail("name", fmt::format("duplicate client name '{}'", c.name));
    if (check) check(cm, c);
    cm.finish();
    out.push_back(std::move(c));
  }
  return out;
}

template <class S>
OptionCustom<S> arrival_column(ArrivalProcess S::* member) {
  OptionCustom<S> c = custom<S>([member](YamlMap& m, const char* key, S& s) { read_arrival_process(m, key, s.*member); },
                                [member](const S& s) { return (s.*member).resolved(); });
  c.names = {"poisson", "gamma"};
  return c;
}

// The index in [0, n) whose time(i) is smallest; ties go to the lower index.
template <class TimeOf>
std::size_t earliest(std::size_t n, TimeOf time) {
  std::size_t best = 0;
  for (std::size_t k = 1; k < n; ++k)
    if (time(k) < time(best)) best = k;
  return best;
}

}  // namespace servesim
