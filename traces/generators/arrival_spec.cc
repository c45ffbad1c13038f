// Arrival processes for the generators; see arrival_spec.h.
#include "traces/generators/arrival_spec.h"

#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace servesim {

Time arrival_time(double s, std::string_view what, std::int64_t index) {
  if (!(s >= 0 && s <= kMaxArrivalS))
    throw InputError(fmt::format("{}: arrival {} would be at {:.3g} s, past the {:.0e} s the generators cover: raise the "
                                 "rate or lower the number of requests",
                                 what, index, s, kMaxArrivalS));
  return seconds_to_time(s);
}

double ArrivalProcess::gap_s(double rate, Rng& rng) const {
  const double mean = 1.0 / rate;
  if (process == Process::kPoisson) return rng.exponential(mean);
  const double shape = 1.0 / (cv * cv);  // a Gamma(k, theta) gap has CV 1/sqrt(k)
  return rng.gamma(shape, mean / shape);
}

const OptionTable<ArrivalProcess>& arrival_process_options() {
  using R = OptionRange;
  static const OptionTable<ArrivalProcess> t = {
      {"process", one_of(&ArrivalProcess::process, "arrival process", {"poisson", "gamma"})},
      {"cv", &ArrivalProcess::cv, R::kPositive, "coefficient of variation of the gaps (gamma; > 1 is burstier)", kMaxCv,
       kMinCv, [](const ArrivalProcess& a) { return a.process == ArrivalProcess::Process::kGamma; }},
  };
  return t;
}

YAML::Node ArrivalProcess::resolved() const {
  if (process == Process::kPoisson) return YAML::Node("poisson");
  YAML::Node n(YAML::NodeType::Map);
  write_options(n, arrival_process_options(), *this);
  return n;
}

void read_arrival_process(YamlMap& m, const char* key, ArrivalProcess& a) {
  if (m.has(key) && m.node()[key].IsMap()) {
    YamlMap am = m.map(key);
    read_options(am, arrival_process_options(), a);
    if (a.process == ArrivalProcess::Process::kPoisson && am.has("cv")) am.fail("cv", "applies to process: gamma only");
    am.finish();
  } else if (m.has(key)) {
    const std::string p = m.get<std::string>(key, "poisson");
    if (p != "poisson") m.fail(key, fmt::format("expected poisson or {{process: gamma, cv: X}}, got '{}'", p));
    a.process = ArrivalProcess::Process::kPoisson;
  } else {
    m.get<std::string>(key, "");  // a known key when absent (null is an error)
  }
}

namespace {

OptionTable<StopRule> make_stop_rule_options(const char* count_key) {
  using R = OptionRange;
  return {
      {count_key, &StopRule::count, R::kPositive, "stop after this many arrivals (none: no count)", kMaxCount},
      {"duration_s", &StopRule::duration_s, R::kPositive, "no arrival at or after this time, s (none: no end)",
       kMaxArrivalS},
  };
}

}  // namespace

const OptionTable<StopRule>& stop_rule_options(std::string_view count_key) {
  static const OptionTable<StopRule> requests = make_stop_rule_options("requests");
  static const OptionTable<StopRule> sessions = make_stop_rule_options("sessions");
  static const OptionTable<StopRule> workflows = make_stop_rule_options("workflows");
  if (count_key == "requests") return requests;
  if (count_key == "sessions") return sessions;
  if (count_key == "workflows") return workflows;
  throw std::logic_error(fmt::format("stop_rule_options: no table for count key '{}'", count_key));
}

void check_stop_rule(const YamlMap& m, const StopRule& r, std::string_view count_key) {
  if (!r.count && !r.duration_s) m.fail_here(fmt::format("set `{}` or `duration_s` (or both)", count_key));
}

namespace {

OptionTable<ArrivalSpec> make_arrival_spec_options(std::string_view count_key) {
  using R = OptionRange;
  return concat<ArrivalSpec>({
      {{"rate", &ArrivalSpec::rate, R::kPositive, "arrivals per second", kMaxRate, kMinRate},
       {"arrival", arrival_column(&ArrivalSpec::process)}},
      lift(&ArrivalSpec::stop, stop_rule_options(count_key)),
  });
}

}  // namespace

const OptionTable<ArrivalSpec>& arrival_spec_options(std::string_view count_key) {
  static const OptionTable<ArrivalSpec> requests = make_arrival_spec_options("requests");
  static const OptionTable<ArrivalSpec> sessions = make_arrival_spec_options("sessions");
  static const OptionTable<ArrivalSpec> workflows = make_arrival_spec_options("workflows");
  if (count_key == "requests") return requests;
  if (count_key == "sessions") return sessions;
  if (count_key == "workflows") return workflows;
  throw std::logic_error(fmt::format("arrival_spec_options: no table for count key '{}'", count_key));
}

const OptionTable<ClientArrivals>& client_arrivals_options() {
  using R = OptionRange;
  static const OptionTable<ClientArrivals> t = {
      {"name", &ClientArrivals::name, R::kAny, "the client's name, unique in the list (default client<i>)"},
      {"rate", &ClientArrivals::rate, R::kPositive, "requests per second", kMaxRate, kMinRate},
      {"arrival", arrival_column(&ClientArrivals::arrival)},
  };
  return t;
}

}  // namespace servesim
