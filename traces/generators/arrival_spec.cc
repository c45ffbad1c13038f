// Arrival processes for the generators; see arrival_spec.h.
#include "traces/generators/arrival_spec.h"

namespace servesim {

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
      a.cv = am.positive("cv", 1.0);
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
  a.rate = m.positive("rate", default_rate);
  a.process = parse_arrival_process(m);
  if (auto c = m.optional<std::int64_t>(count_key)) {
    if (*c <= 0) m.fail(count_key, "must be a positive integer");
    a.count = *c;
  }
  if (m.has("duration_s")) a.duration_s = m.positive("duration_s", 1);
  else m.get<double>("duration_s", 0);  // known key
  if (!a.count && !a.duration_s) m.fail_here(fmt::format("set `{}` or `duration_s` (or both)", count_key));
  return a;
}

}  // namespace servesim
