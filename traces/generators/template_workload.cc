// Shared-prefix template workload; see template_workload.h.
#include "traces/generators/template_workload.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace servesim {
namespace {

std::uint64_t mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct PoolState {
  std::vector<std::int64_t> tokens;  // per template
  std::vector<double> cdf;           // Zipf popularity
  std::uint64_t key;
  // Per template, filled on its first use: the chained ids of its whole blocks
  // (those wholly inside it: the first tokens / block_size of every prompt that
  // carries it), which depend on the template alone (blocks() below). A chain
  // shorter than its template's block count has not been kept (chain_of()).
  std::vector<std::vector<std::uint64_t>> chains;
};

class TemplateSource final : public RequestSource {
 public:
  TemplateSource(const TemplateSpec& spec, ClientTable& clients, std::uint64_t seed) : spec_(spec) {
    for (std::size_t p = 0; p < spec_.pools.size(); ++p) {
      const TemplatePool& tp = spec_.pools[p];
      Rng rng = Rng::stream(seed, (1ull << 20) | p);
      PoolState s{{}, {}, mix(seed ^ mix(0x7E4D ^ p)), {}};
      double total = 0;
      for (std::int64_t i = 0; i < tp.count; ++i) {
        s.tokens.push_back(tp.tokens.sample(rng));
        total += std::pow(static_cast<double>(i + 1), -tp.zipf);
        s.cdf.push_back(total);
      }
      for (double& c : s.cdf) c /= total;
      s.chains.resize(s.tokens.size());
      pools_.push_back(std::move(s));
    }
    for (std::size_t k = 0; k < spec_.clients.size(); ++k) {
      State s{Rng::stream(seed, k), 0.0, clients.intern(spec_.clients[k].name), mix(seed ^ mix(k + 0xC11E))};
      s.active_s = gap(spec_.clients[k], s.rng);
      states_.push_back(std::move(s));
    }
  }

  bool next(RequestSpec& out) override {
    const std::size_t best = earliest(states_.size(), [&](std::size_t k) { return wall(k); });
    State& s = states_[best];
    const TemplateClient& c = spec_.clients[best];
    const double t = wall(best);
    if (!spec_.stop.within(static_cast<std::int64_t>(emitted_), t)) return false;
    out = RequestSpec{};
    out.id = emitted_++;
    out.client = s.client;
    out.arrival = arrival_time(t, "workload (templates)", out.id);
    std::int64_t template_tokens = 0;
    const std::vector<std::uint64_t>* template_chain = nullptr;
    if (c.pool && s.rng.uniform() < c.template_share) {
      PoolState& p = pools_[*c.pool];
      const auto i = static_cast<std::size_t>(std::upper_bound(p.cdf.begin(), p.cdf.end() - 1, s.rng.uniform()) - p.cdf.begin());
      template_tokens = p.tokens[i];
      template_chain = &chain_of(p, i);
      out.category = static_cast<std::int32_t>(i + 1);
    }
    const std::int64_t own = c.prompt.sample(s.rng);
    out.prompt_tokens = template_tokens + own;
    out.output_tokens = c.output.sample(s.rng);
    out.prefix_block_size = spec_.block_size;
    blocks(out, template_chain, mix(s.key ^ mix(out.id)));
    s.active_s += gap(c, s.rng);
    return true;
  }

  std::string describe() const override {
    return fmt::format("templates: {} clients, {} pools", spec_.clients.size(), spec_.pools.size());
  }

 private:
  struct State {
    Rng rng;
    double active_s;  // next arrival in "on" time (time spent in on phases)
    ClientId client;
    std::uint64_t key;
  };

  // Wall-clock time of client k's next arrival: on-time mapped through its phases.
  double wall(std::size_t k) const {
    const TemplateClient& c = spec_.clients[k];
    const double a = states_[k].active_s;
    if (c.on_s <= 0 || c.off_s <= 0) return c.phase_s + a;
    const double cycles = std::floor(a / c.on_s);
    return c.phase_s + cycles * (c.on_s + c.off_s) + (a - cycles * c.on_s);
  }

  static double gap(const TemplateClient& c, Rng& rng) { return c.arrival.gap_s(c.rate, rng); }

  // Chained block ids: chain_k = mix(chain_{k-1} ^ key_k) from chain_{-1} = 0x5EED.
  // A whole block inside the template has key mix(template key ^ its start), so
  // those blocks (a prompt's first template_tokens / block_size) depend only on the
  // template; any block that reaches past it has a key of the request's too.
  static constexpr std::uint64_t kChainSeed = 0x5EED;
  // Kept for at most kMemoIds ids in all (32 MB; huge pools of long templates):
  // past that, a template's chain is computed for each prompt into scratch_.
  static constexpr std::size_t kMemoIds = std::size_t{1} << 22;
  const std::vector<std::uint64_t>& chain_of(PoolState& p, std::size_t i) {
    const auto n = static_cast<std::size_t>(p.tokens[i] / spec_.block_size);
    if (p.chains[i].size() == n) return p.chains[i];  // kept (or no whole block)
    const bool keep = n <= memo_left_;
    std::vector<std::uint64_t>& v = keep ? p.chains[i] : scratch_;
    v.clear();
    v.reserve(n);
    const std::uint64_t template_key = mix(p.key ^ mix(i));
    std::uint64_t chain = kChainSeed;
    for (std::size_t k = 0; k < n; ++k) {
      chain = mix(chain ^ mix(template_key ^ static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(spec_.block_size)));
      v.push_back(chain);
    }
    if (keep) memo_left_ -= n;
    return v;
  }
  void blocks(RequestSpec& r, const std::vector<std::uint64_t>* template_chain, std::uint64_t own_key) const {
    const std::int64_t b = spec_.block_size;
    r.prefix_blocks.reserve(static_cast<std::size_t>((r.prompt_tokens + b - 1) / b));  // one allocation
    std::uint64_t chain = kChainSeed;
    std::int64_t start = 0;
    if (template_chain) {  // the template's whole blocks that are whole blocks of the prompt too
      const auto n = std::min(template_chain->size(), static_cast<std::size_t>(r.prompt_tokens / b));
      if (n > 0) {
        r.prefix_blocks.insert(r.prefix_blocks.end(), template_chain->begin(),
                               template_chain->begin() + static_cast<std::ptrdiff_t>(n));
        chain = r.prefix_blocks.back();
        start = static_cast<std::int64_t>(n) * b;
      }
    }
    for (; start < r.prompt_tokens; start += b) {
      const std::int64_t end = std::min(start + b, r.prompt_tokens);
      chain = mix(chain ^ mix(own_key ^ mix(static_cast<std::uint64_t>(start) << 20 ^ static_cast<std::uint64_t>(end))));
      r.prefix_blocks.push_back(chain);
    }
  }

  const TemplateSpec& spec_;
  std::vector<PoolState> pools_;
  std::vector<State> states_;
  std::uint64_t emitted_ = 0;
  std::size_t memo_left_ = kMemoIds;
  std::vector<std::uint64_t> scratch_;
};

}  // namespace

const OptionTable<TemplateSpec>& template_options() {
  // Hand-read after it: `pools` and `clients`, lists of maps (each item by its table below).
  static const OptionTable<TemplateSpec> t = concat<TemplateSpec>({
      lift(&TemplateSpec::stop, stop_rule_options("requests")),
      {{"block_size", &TemplateSpec::block_size, OptionRange::kPositive, "tokens per prefix block"}},
  });
  return t;
}

const OptionTable<TemplatePool>& template_pool_options() {
  // name: derived default pool<i> (set before the table reads).
  using R = OptionRange;
  static const OptionTable<TemplatePool> t = {
      {"name", &TemplatePool::name, R::kAny, "the pool's name, unique in the list (default pool<i>)"},
      {"count", &TemplatePool::count, R::kPositive, "templates in the pool"},
      {"zipf", &TemplatePool::zipf, R::kNonNegative, "popularity: template i drawn with weight 1/(i+1)^zipf (0 = uniform)"},
      {"tokens", length_column(&TemplatePool::tokens), R::kAny, "each template's length, drawn once"},
  };
  return t;
}

const OptionTable<TemplateClient>& template_client_options() {
  // name: derived default client<i>; pool: a name, turned into an index into pools after the table reads.
  using R = OptionRange;
  static const OptionTable<TemplateClient> t = concat<TemplateClient>({
      lift_base<TemplateClient>(client_arrivals_options()),
      {{"pool", &TemplateClient::pool_name, R::kAny, "the pool its templates come from (none: no template)", kOptionMax, 0,
        [](const TemplateClient& c) { return !c.pool_name.empty(); }},
       {"template_share", &TemplateClient::template_share, R::kFractionOrZero, "probability that a request uses a template"},
       {"prompt", length_column(&TemplateClient::prompt), R::kAny, "the request's own tokens after the template"},
       {"output", length_column(&TemplateClient::output), R::kAny, "output tokens"},
       {"on_s", &TemplateClient::on_s, R::kNonNegative, "on phase, s (on_s and off_s both > 0: phases)"},
       {"off_s", &TemplateClient::off_s, R::kNonNegative, "off phase, s"},
       {"phase_s", &TemplateClient::phase_s, R::kNonNegative, "start of the first on phase, s"}},
  });
  return t;
}

YAML::Node TemplateWorkload::resolved() const {
  YAML::Node n;
  n["type"] = "templates";
  write_options(n, template_options(), spec_);
  for (const auto& p : spec_.pools) {
    YAML::Node pn;
    write_options(pn, template_pool_options(), p);
    n["pools"].push_back(pn);
  }
  for (const auto& c : spec_.clients) {
    YAML::Node cn;
    write_options(cn, template_client_options(), c);
    n["clients"].push_back(cn);
  }
  return n;
}

std::unique_ptr<RequestSource> TemplateWorkload::open(ClientTable& clients, std::uint64_t seed) const {
  return std::make_unique<TemplateSource>(spec_, clients, seed);
}

std::unique_ptr<Workload> parse_template_workload(YamlMap& m) {
  TemplateSpec spec;
  read_options(m, template_options(), spec);
  check_stop_rule(m, spec.stop, "requests");
  YAML::Node pools = m.raw("pools");
  if (pools && !pools.IsNull() && !pools.IsSequence()) m.fail("pools", "expected a list of template pools");
  for (std::size_t i = 0; pools && pools.IsSequence() && i < pools.size(); ++i) {
    YamlMap pm(pools[i], m.file(), m.key_path(fmt::format("pools[{}]", i)));
    TemplatePool p;
    p.name = fmt::format("pool{}", i);
    read_options(pm, template_pool_options(), p);
    for (const auto& prev : spec.pools)
      if (prev.name == p.name) pm.fail("name", fmt::format("duplicate pool name '{}'", p.name));
    pm.finish();
    spec.pools.push_back(std::move(p));
  }
  spec.clients = parse_clients<TemplateClient>(m, template_client_options(), [&spec](YamlMap& cm, TemplateClient& c) {
    if (cm.has("pool")) {
      for (std::size_t p = 0; p < spec.pools.size(); ++p)
        if (spec.pools[p].name == c.pool_name) c.pool = p;
      if (!c.pool) cm.fail("pool", fmt::format("no pool named '{}' in workload.pools", c.pool_name));
    }
  });
  m.finish();
  return std::make_unique<TemplateWorkload>(std::move(spec));
}

}  // namespace servesim
