// Arrival processes for the generators; see arrival_spec.h.
#include "traces/generators/arrival_spec.h"

#include <fmt/format.h>

namespace servesim {

double read_rate(YamlMap& m, const std::string& key, double def) {
  return m.in_range(key, def, kMinRate, kMaxRate, "arrivals/s");
}

std::optional<std::int64_t> read_count(YamlMap& m, const std::string& key) {
  auto c = m.optional<std::int64_t>(key);
  if (c && (*c <= 0 || static_cast<double>(*c) > kMaxCount))
    m.fail(key, fmt::format("must be a positive integer up to {:.0e}, got {}", kMaxCount, *c));
  return c;
}

std::optional<double> read_duration_s(YamlMap& m) {
  if (!m.has("duration_s")) {
    m.get<double>("duration_s", 0);  // known key
    return std::nullopt;
  }
  const double d = m.get<double>("duration_s", 1);
  if (!(d > 0 && d <= kMaxArrivalS)) m.fail("duration_s", fmt::format("must be in (0, {:.0e}] s, got {}", kMaxArrivalS, d));
  return d;
}

Time arrival_time(double s, const std::string& what, std::int64_t index) {
  if (!(s >= 0 && s <= kMaxArrivalS))
    throw InputError(fmt::format("{}: arrival {} would be at {:.3g} s, past the {:.0e} s the generators cover: raise the "
                                 "rate or lower the number of requests",
                                 what, index, s, kMaxArrivalS));
  return seconds_to_time(s);
}

double ArrivalProcess::gap_s(double rate, Rng& rng) const {
  const double mean = 1.0 / rate;
  if (!gamma) return rng.exponential(mean);
  const double shape = 1.0 / (cv * cv);  // a Gamma(k, theta) gap has CV 1/sqrt(k)
  return rng.gamma(shape, mean / shape);
}

void ArrivalProcess::resolve_into(YAML::Node& n) const {
  if (gamma) {
    n["arrival"]["process"] = "gamma";
    n["arrival"]["cv"] = cv;
  } else {
    n["arrival"] = "poisson";
  }
}

ArrivalProcess parse_arrival_process(YamlMap& m) {
  ArrivalProcess a;
  if (m.has("arrival") && m.node()["arrival"].IsMap()) {
    YamlMap am = m.map("arrival");
    std::string p = am.get<std::string>("process", "poisson");
    if (p == "gamma") {
      a.gamma = true;
      a.cv = am.in_range("cv", 1.0, kMinCv, kMaxCv, "");
    } else if (p != "poisson") {
      am.fail("process", fmt::format("unknown arrival process '{}'; expected poisson or gamma", p));
    }
    am.finish();
  } else {
    std::string p = m.get<std::string>("arrival", "poisson");
    if (p != "poisson") m.fail("arrival", fmt::format("expected poisson or {{process: gamma, cv: X}}, got '{}'", p));
  }
  return a;
}

void ArrivalSpec::resolve_into(YAML::Node& n, const std::string& count_key) const {
  n["rate"] = rate;
  process.resolve_into(n);
  if (count) n[count_key] = *count;
  if (duration_s) n["duration_s"] = *duration_s;
}

ArrivalSpec parse_arrival_spec(YamlMap& m, const std::string& count_key, double default_rate) {
  ArrivalSpec a;
  a.rate = read_rate(m, "rate", default_rate);
  a.process = parse_arrival_process(m);
  a.count = read_count(m, count_key);
  a.duration_s = read_duration_s(m);
  if (!a.count && !a.duration_s) m.fail_here(fmt::format("set `{}` or `duration_s` (or both)", count_key));
  return a;
}

}  // namespace servesim
