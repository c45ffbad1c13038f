// Template workload: prompts share exactly their template's full blocks,
// popularity follows Zipf, on/off phases silence a client, and the stream is
// a pure function of the seed.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <set>

#include "traces/generators/template_workload.h"

using namespace servesim;

namespace {

std::unique_ptr<Workload> parse_template(const std::string& yaml) {
  YamlMap m(YAML::Load(yaml), "<test>");
  m.get<std::string>("type", "");
  return parse_template_workload(m);
}

std::vector<RequestSpec> drain(const Workload& w, std::uint64_t seed) {
  ClientTable clients;
  auto src = w.open(clients, seed);
  std::vector<RequestSpec> out;
  RequestSpec r;
  while (src->next(r)) out.push_back(r);
  return out;
}

const char* kYaml = R"(type: templates
requests: 4000
block_size: 16
pools:
  - {name: docs, count: 20, zipf: 1.2, tokens: {dist: uniform, min: 100, max: 900}}
clients:
  - {name: a, rate: 50, pool: docs, prompt: {dist: uniform, min: 1, max: 300}, output: 10}
  - {name: b, rate: 20, pool: docs, template_share: 0.5, on_s: 2, off_s: 3, phase_s: 1, prompt: 40, output: 5}
)";

}  // namespace

TEST_CASE("template prompts share exactly the full blocks of their template") {
  auto w = parse_template(kYaml);
  std::vector<RequestSpec> reqs = drain(*w, 3);
  REQUIRE(reqs.size() == 4000);
  std::map<std::int32_t, std::vector<const RequestSpec*>> by_template;
  for (const auto& r : reqs) {
    CHECK(r.prefix_block_size == 16);
    CHECK(static_cast<std::int64_t>(r.prefix_blocks.size()) == (r.prompt_tokens + 15) / 16);
    by_template[r.category].push_back(&r);
  }
  // Every pair of requests of one template shares the same number of leading
  // blocks — floor(template tokens / 16): the template's full blocks, nothing more.
  auto common = [](const RequestSpec& x, const RequestSpec& y) {
    std::size_t n = 0;
    while (n < x.prefix_blocks.size() && n < y.prefix_blocks.size() && x.prefix_blocks[n] == y.prefix_blocks[n]) ++n;
    return n;
  };
  int checked = 0;
  for (const auto& [t, rs] : by_template) {
    if (t == 0 || rs.size() < 3) continue;
    const std::size_t c01 = common(*rs[0], *rs[1]);
    CHECK(c01 == common(*rs[0], *rs[2]));
    CHECK(c01 == common(*rs[1], *rs[2]));
    CHECK(c01 >= 100 / 16);  // templates have >= 100 tokens
    ++checked;
  }
  CHECK(checked >= 10);
  // Different templates share no block; untemplated prompts share nothing.
  std::set<BlockHash> first_blocks;
  for (const auto& [t, rs] : by_template)
    if (t != 0) CHECK(first_blocks.insert(rs[0]->prefix_blocks[0]).second);
  for (const RequestSpec* r : by_template[0]) CHECK(first_blocks.insert(r->prefix_blocks[0]).second);
}

TEST_CASE("template popularity follows Zipf and on/off phases silence a client") {
  auto w = parse_template(kYaml);
  std::vector<RequestSpec> reqs = drain(*w, 5);
  std::map<std::int32_t, int> count;
  for (const auto& r : reqs)
    if (r.client == 0) count[r.category]++;
  CHECK(count[1] > count[2]);
  CHECK(count[2] > count[5]);
  CHECK(count[5] > count[20]);
  // Client b is on in [1, 3), [6, 8), ... (on 2 s, off 3 s, from 1 s).
  for (const auto& r : reqs) {
    if (r.client != 1) continue;
    const double t = time_to_seconds(r.arrival) - 1.0;
    CHECK(t >= 0);
    CHECK(std::fmod(t, 5.0) < 2.0 + 1e-9);
  }
}

TEST_CASE("the template stream is a pure function of the seed") {
  auto w = parse_template(kYaml);
  std::vector<RequestSpec> a = drain(*w, 9), b = drain(*w, 9), c = drain(*w, 10);
  REQUIRE(a.size() == b.size());
  bool differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].arrival == b[i].arrival);
    CHECK(a[i].prefix_blocks == b[i].prefix_blocks);
    differs |= a[i].prompt_tokens != c[i].prompt_tokens;
  }
  CHECK(differs);
}
