// Arrival processes for the generators; see arrival_spec.h.
#include "traces/generators/arrival_spec.h"

#include <vector>

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

void StopRule::resolve_into(YAML::Node& n, const std::string& count_key) const {
  if (count) n[count_key] = *count;
  if (duration_s) n["duration_s"] = *duration_s;
}

StopRule parse_stop_rule(YamlMap& m, const std::string& count_key) {
  StopRule r;
  r.count = read_count(m, count_key);
  r.duration_s = read_duration_s(m);
  if (!r.count && !r.duration_s) m.fail_here(fmt::format("set `{}` or `duration_s` (or both)", count_key));
  return r;
}

void ArrivalSpec::resolve_into(YAML::Node& n, const std::string& count_key) const {
  n["rate"] = rate;
  process.resolve_into(n);
  stop.resolve_into(n, count_key);
}

ArrivalSpec parse_arrival_spec(YamlMap& m, const std::string& count_key, double default_rate) {
  ArrivalSpec a;
  a.rate = read_rate(m, "rate", default_rate);
  a.process = parse_arrival_process(m);
  a.stop = parse_stop_rule(m, count_key);
  return a;
}

void ClientArrivals::resolve_into(YAML::Node& n) const {
  n["name"] = name;
  n["rate"] = rate;
  arrival.resolve_into(n);
}

void parse_clients(YamlMap& m, const std::function<void(YamlMap&, ClientArrivals)>& rest) {
  YAML::Node list = m.raw("clients");
  if (!list || !list.IsSequence() || list.size() == 0) m.fail("clients", "expected a non-empty list of clients");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < list.size(); ++i) {
    YamlMap cm(list[i], m.file(), m.key_path(fmt::format("clients[{}]", i)));
    ClientArrivals c;
    c.name = cm.get<std::string>("name", fmt::format("client{}", i));
    for (const auto& prev : names)
      if (prev == c.name) cm.fail("name", fmt::format("duplicate client name '{}'", c.name));
    names.push_back(c.name);
    c.rate = read_rate(cm, "rate", c.rate);
    c.arrival = parse_arrival_process(cm);
    rest(cm, std::move(c));
    cm.finish();
  }
}

}  // namespace servesim
