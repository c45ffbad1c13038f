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
    if (spec_.requests && emitted_ >= *spec_.requests) return false;
    std::size_t best = 0;
    for (std::size_t k = 1; k < states_.size(); ++k)
      if (states_[k].next_arrival_s < states_[best].next_arrival_s) best = k;
    State& s = states_[best];
    const SyntheticClient& c = spec_.clients[best];
    if (spec_.duration_s && s.next_arrival_s >= *spec_.duration_s) return false;
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

YAML::Node SyntheticWorkload::resolved() const {
  YAML::Node n;
  n["type"] = "synthetic";
  if (spec_.requests) n["requests"] = *spec_.requests;
  if (spec_.duration_s) n["duration_s"] = *spec_.duration_s;
  n["rate_scale"] = spec_.rate_scale;
  for (const auto& c : spec_.clients) {
    YAML::Node cn;
    cn["name"] = c.name;
    cn["rate"] = c.rate;
    c.arrival.resolve_into(cn);
    cn["prompt"] = c.prompt.resolved();
    cn["output"] = c.output.resolved();
    n["clients"].push_back(cn);
  }
  return n;
}

std::unique_ptr<RequestSource> SyntheticWorkload::open(ClientTable& clients, std::uint64_t seed) const {
  return std::make_unique<SyntheticSource>(spec_, clients, seed);
}

std::unique_ptr<Workload> parse_synthetic_workload(YamlMap& m) {
  SyntheticSpec spec;
  if (auto r = read_count(m, "requests")) spec.requests = static_cast<std::uint64_t>(*r);
  spec.duration_s = read_duration_s(m);
  if (!spec.requests && !spec.duration_s) m.fail_here("set `requests` or `duration_s` (or both)");
  spec.rate_scale = m.in_range("rate_scale", 1.0, 1e-6, 1e6, "");
  YAML::Node list = m.raw("clients");
  if (!list || !list.IsSequence() || list.size() == 0) m.fail("clients", "expected a non-empty list of clients");
  LengthDistribution def_prompt;
  def_prompt.value = 1024;
  LengthDistribution def_output;
  def_output.value = 256;
  for (std::size_t i = 0; i < list.size(); ++i) {
    YamlMap cm(list[i], m.file(), m.key_path(fmt::format("clients[{}]", i)));
    SyntheticClient c;
    c.name = cm.get<std::string>("name", fmt::format("client{}", i));
    for (const auto& prev : spec.clients)
      if (prev.name == c.name) cm.fail("name", fmt::format("duplicate client name '{}'", c.name));
    c.rate = read_rate(cm, "rate", 1.0);
    c.arrival = parse_arrival_process(cm);
    c.prompt = parse_length(cm, "prompt", def_prompt);
    c.output = parse_length(cm, "output", def_output);
    cm.finish();
    spec.clients.push_back(std::move(c));
  }
  m.finish();
  return std::make_unique<SyntheticWorkload>(std::move(spec));
}

}  // namespace servesim
