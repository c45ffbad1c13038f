#include "traces/generators/synthetic_workload.h"

#include <fmt/format.h>

namespace servesim {
namespace {

class SyntheticSource final : public RequestSource {
 public:
  SyntheticSource(const SyntheticSpec& spec, ClientTable& clients, std::uint64_t seed) : spec_(spec) {
    for (std::size_t k = 0; k < spec_.clients.size(); ++k) {
      State s{Rng::stream(seed, k), 0.0, clients.intern(spec_.clients[k].name)};
      s.next_arrival_s = gap(spec_.clients[k], s.rng, spec_.rate_scale);
      states_.push_back(s);
    }
  }

  bool next(RequestSpec& out) override {
    const std::size_t best = earliest(states_.size(), [&](std::size_t k) { return states_[k].next_arrival_s; });
    State& s = states_[best];
    const SyntheticClient& c = spec_.clients[best];
    if (!spec_.stop.within(static_cast<std::int64_t>(emitted_), s.next_arrival_s)) return false;
    out = RequestSpec{};
    out.id = emitted_++;
    out.client = s.client;
    out.arrival = arrival_time(s.next_arrival_s, "workload (synthetic)", out.id);
    out.prompt_tokens = c.prompt.sample(s.rng);
    out.output_tokens = c.output.sample(s.rng);
    s.next_arrival_s += gap(c, s.rng, spec_.rate_scale);
    return true;
  }

  std::string describe() const override {
    return fmt::format("synthetic: {} clients", spec_.clients.size());
  }

 private:
  struct State {
    Rng rng;
    double next_arrival_s;
    ClientId client;
  };
  static double gap(const SyntheticClient& c, Rng& rng, double scale) { return c.arrival.gap_s(c.rate * scale, rng); }

  const SyntheticSpec& spec_;
  std::vector<State> states_;
  std::uint64_t emitted_ = 0;
};

}  // namespace

const OptionTable<SyntheticSpec>& synthetic_options() {
  // Hand-read after it: `clients`, a list of maps (each item by synthetic_client_options()).
  using R = OptionRange;
  static const OptionTable<SyntheticSpec> t = concat<SyntheticSpec>({
      lift(&SyntheticSpec::stop, stop_rule_options("requests")),
      {{"rate_scale", &SyntheticSpec::rate_scale, R::kPositive, "multiplies every client's rate (load sweeps)", 1e6, 1e-6}},
  });
  return t;
}

const OptionTable<SyntheticClient>& synthetic_client_options() {
  // name: derived default client<i> (parse_clients() sets it before the table reads).
  static const OptionTable<SyntheticClient> t = concat<SyntheticClient>({
      lift_base<SyntheticClient>(client_arrivals_options()),
      {{"prompt", length_column(&SyntheticClient::prompt), OptionRange::kAny, "prompt tokens"},
       {"output", length_column(&SyntheticClient::output), OptionRange::kAny, "output tokens"}},
  });
  return t;
}

YAML::Node SyntheticWorkload::resolved() const {
  YAML::Node n;
  n["type"] = "synthetic";
  write_options(n, synthetic_options(), spec_);
  for (const auto& c : spec_.clients) {
    YAML::Node cn;
    write_options(cn, synthetic_client_options(), c);
    n["clients"].push_back(cn);
  }
  return n;
}

std::unique_ptr<RequestSource> SyntheticWorkload::open(ClientTable& clients, std::uint64_t seed) const {
  return std::make_unique<SyntheticSource>(spec_, clients, seed);
}

std::unique_ptr<Workload> parse_synthetic_workload(YamlMap& m) {
  SyntheticSpec spec;
  read_options(m, synthetic_options(), spec);
  check_stop_rule(m, spec.stop, "requests");
  spec.clients = parse_clients(m, synthetic_client_options());
  m.finish();
  return std::make_unique<SyntheticWorkload>(std::move(spec));
}

}  // namespace servesim
