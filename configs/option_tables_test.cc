// The option tables (option_tables.h, and each policy's table in policies/)
// are the schema: docs/configuration.md lists every key of every table with
// the table's default, docs/policies.md every policy parameter with its
// default, tables read and write back the same values, and range errors name
// file, line and key.
#include <doctest/doctest.h>

#include <fstream>
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "configs/kv_store_config.h"
#include "configs/option_tables.h"
#include "costmodel/attention_registry.h"
#include "policies/policy_registry.h"
#include "policies/vtc_policy.h"
#include "sim/core/error.h"
#include "traces/variance_source.h"
#include "sim/core/test_util.h"

using namespace servesim;
using R = OptionRange;

namespace {

std::vector<std::string> doc_lines(const std::string& doc = "configuration.md") {
  std::ifstream in(std::string(SERVESIM_SOURCE_DIR) + "/docs/" + doc);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::size_t indent_of(const std::string& l) { return l.find_first_not_of(' '); }

// The text of the YAML example's section at a dotted path ("attention.quest"):
// the rest of the section's own line (inline maps) and every following line
// indented deeper. Empty when the section is not in the doc.
std::string doc_section(const std::vector<std::string>& lines, const std::string& path) {
  std::size_t begin = 0, end = lines.size();
  std::string text;
  std::stringstream parts(path);
  for (std::string part; std::getline(parts, part, '.');) {
    std::size_t found = end;
    for (std::size_t i = begin; i < end; ++i)
      if (lines[i].compare(indent_of(lines[i]) == std::string::npos ? 0 : indent_of(lines[i]), part.size() + 1,
                           part + ":") == 0) {
        found = i;
        break;
      }
    if (found == end) return "";
    const std::size_t ind = indent_of(lines[found]);
    std::size_t stop = found + 1;
    while (stop < end && (lines[stop].empty() || indent_of(lines[stop]) == std::string::npos ||
                          indent_of(lines[stop]) > ind || lines[stop].compare(ind, 1, "#") == 0))
      ++stop;
    text = lines[found].substr(ind + part.size() + 1) + "\n";
    for (std::size_t i = found + 1; i < stop; ++i) text += lines[i] + "\n";
    begin = found + 1;
    end = stop;
  }
  return text;
}

using servesim::testing::doc_value;

using servesim::testing::same_scalar;
using servesim::testing::trim_cell;

template <class S>
void check_documented(const OptionTable<S>& table, const std::string& section) {
  const std::string text = doc_section(doc_lines(), section);
  REQUIRE_MESSAGE(!text.empty(), "docs/configuration.md has no section " << section);
  for (const OptionField<S>& f : table) {
    INFO("docs/configuration.md, " << section << "." << f.key);
    auto v = doc_value(text, f.key);
    REQUIRE_MESSAGE(v.has_value(), "key not documented");
    CHECK_MESSAGE(same_scalar(*v, option_default(f)), "documented default " << *v << ", table default "
                                                                             << option_default(f));
    for (const std::string& name : option_names(f))  // a choice's names are documented too
      CHECK_MESSAGE(text.find(name) != std::string::npos, "choice '" << name << "' not documented");
  }
}

// The same for an attention method's parameters (its registry entry).
void check_documented(const std::vector<AttentionParamDoc>& params, const std::string& section) {
  const std::string text = doc_section(doc_lines(), section);
  REQUIRE_MESSAGE(!text.empty(), "docs/configuration.md has no section " << section);
  for (const AttentionParamDoc& p : params) {
    INFO("docs/configuration.md, " << section << "." << p.key);
    auto v = doc_value(text, p.key);
    REQUIRE_MESSAGE(v.has_value(), "key not documented");
    CHECK_MESSAGE(same_scalar(*v, p.default_value), "documented default " << *v << ", table default " << p.default_value);
  }
}

// Model and hardware keys are listed in prose (their values come from files).
template <class S>
void check_listed(const OptionTable<S>& table, const std::string& heading) {
  std::string text;
  bool in = false;
  for (const std::string& l : doc_lines()) {
    if (l.starts_with("## ")) in = l.starts_with(heading);
    if (in) text += l + "\n";
  }
  REQUIRE(!text.empty());
  for (const OptionField<S>& f : table) {
    INFO(heading << ": " << f.key);
    CHECK(text.find(f.key) != std::string::npos);
  }
}


// The rows of `table` beyond `plain` (checked by check_key_table) are in the docs key
// table after `intro`, each with its default stated as the scenario's (or required).
template <class S>
void check_inherited_rows(const OptionTable<S>& table, const OptionTable<S>& plain, const std::string& intro) {
  const auto rows = servesim::testing::key_table(doc_lines(), intro);
  int inherited = 0;
  for (const OptionField<S>& f : table) {
    if (std::any_of(plain.begin(), plain.end(), [&f](const OptionField<S>& p) { return std::string(p.key) == f.key; }))
      continue;
    INFO("docs/configuration.md, " << intro << " " << f.key);
    const auto it = rows.find(f.key);
    REQUIRE_MESSAGE(it != rows.end(), "key not in the table");
    CHECK((it->second.first == "required" || it->second.first.starts_with("the scenario's")));
    ++inherited;
  }
  CHECK(inherited > 0);
}

// A key table in prose (`| `key` | default | meaning |`) under the first line that
// starts with `intro`: every key of `table` has a row, and its default cell (backticks
// stripped) is the table's default.
template <class S>
void check_key_table(const OptionTable<S>& table, const std::string& intro) {
  const auto rows = servesim::testing::key_table(doc_lines(), intro);
  REQUIRE_MESSAGE(!rows.empty(), "docs/configuration.md has no key table after " << intro);
  for (const OptionField<S>& f : table) {
    INFO("docs/configuration.md, " << intro << " " << f.key);
    const auto it = rows.find(f.key);
    REQUIRE_MESSAGE(it != rows.end(), "key not in the table");
    CHECK_MESSAGE(same_scalar(it->second.first, option_default(f)),
                  "documented default " << it->second.first << ", table default " << option_default(f));
    for (const std::string& name : option_names(f))  // a choice's names are in its row
      CHECK_MESSAGE(it->second.second.find("`" + name + "`") != std::string::npos, "choice '" << name << "' not in the row");
  }
}

std::vector<std::string> split_list(const std::string& cell) {
  std::vector<std::string> out;
  std::stringstream in(cell);
  for (std::string part; std::getline(in, part, ',');) out.push_back(trim_cell(part));
  return out;
}

// The parameter table of a policy's section in docs/policies.md (the section
// whose "### " heading starts with `name`): key → default. A row names one or
// more keys (`w_in`, `w_out`) and as many defaults (1, 2); a default may be
// followed by a note in parentheses.
std::map<std::string, std::string> documented_params(const std::string& name) {
  std::map<std::string, std::string> out;
  bool in = false;
  for (const std::string& l : doc_lines("policies.md")) {
    if (l.starts_with("#")) in = l.starts_with("### `" + name + "`");
    if (!in || !l.starts_with("| `")) continue;
    std::vector<std::string> cells;
    std::stringstream row(l.substr(1));
    for (std::string c; std::getline(row, c, '|');) cells.push_back(c);
    if (cells.size() < 2) continue;
    std::string defaults = cells[1];
    if (const std::size_t paren = defaults.find('('); paren != std::string::npos) defaults.erase(paren);
    const std::vector<std::string> keys = split_list(cells[0]), values = split_list(defaults);
    for (std::size_t i = 0; i < keys.size(); ++i) out[keys[i]] = i < values.size() ? values[i] : "";
  }
  return out;
}

// The whole default cell of `key` in a policy's docs table, notes in
// parentheses included (for derived defaults).
std::string documented_row(const std::string& name, const std::string& key) {
  bool in = false;
  for (const std::string& l : doc_lines("policies.md")) {
    if (l.starts_with("#")) in = l.starts_with("### `" + name + "`");
    if (!in || !l.starts_with("| `" + key + "`")) continue;
    const std::size_t a = l.find('|', 1), b = a == std::string::npos ? a : l.find('|', a + 1);
    return b == std::string::npos ? "" : l.substr(a + 1, b - a - 1);
  }
  return "";
}

template <class P>
void check_policies_documented(const std::vector<PolicyType<P>>& types) {
  for (const PolicyType<P>& t : types) {
    const std::map<std::string, std::string> doc = documented_params(t.name);
    for (const PolicyParam& p : t.params) {
      INFO("docs/policies.md, policy " << t.name << ", parameter " << p.key);
      const auto it = doc.find(p.key);
      if (it == doc.end()) {
        FAIL_CHECK("parameter not in the policy's table");
        continue;
      }
      // An empty string is documented as "none" (LTR's model).
      const std::string table = p.default_value == "\"\"" ? "none" : p.default_value;
      CHECK_MESSAGE(same_scalar(it->second, table),
                    "documented default " << it->second << ", table default " << p.default_value);
    }
  }
}

}  // namespace

TEST_CASE("docs/policies.md lists every policy parameter with its table's default") {
  check_policies_documented(local_policy_types());
  check_policies_documented(global_policy_types());
  // Every policy with parameters has them in a table (no policy echoes keys the docs check misses).
  for (const auto& t : local_policy_types())
    if (t.name != "fcfs" && t.name != "dfs_weight") CHECK_MESSAGE(!t.params.empty(), t.name);
}

// A policy's parameter echo (`resolved`) writes what its table read, with the defaults
// the settings derive (LTR's warmup, loss and tau by ranker, promoted_order by
// preemptive): every key echoed for a policy given only its name, and for the other
// settings that reveal a derived default, is in the policy's docs table with that value.
template <class P>
void check_echo_documented(const std::vector<PolicyType<P>>& types, const std::string& name, const std::string& yaml,
                           const std::string& derived_note = "", bool expect_keys = true) {
  for (const PolicyType<P>& t : types) {
    if (t.name != name) continue;
    INFO("docs/policies.md, policy " << name << " given " << yaml);
    YamlMap m(YAML::Load(yaml), "t.yaml", "policy.local");
    const YAML::Node echo = t.parse(m).resolved;
    const std::map<std::string, std::string> doc = documented_params(name);
    int keys = 0;
    for (const auto& kv : echo) {
      const std::string key = kv.first.as<std::string>();
      if (key == "name") continue;
      ++keys;
      CAPTURE(key);
      const auto it = doc.find(key);
      if (it == doc.end()) {
        FAIL_CHECK("echoed key not in the policy's table");
        continue;
      }
      if (YAML::Load(yaml)[key]) continue;  // set by the test, not a default
      YAML::Emitter e;
      e << kv.second;
      const std::string value = e.c_str();
      if (!derived_note.empty() && key == derived_note) {
        // A default that depends on another key: documented in the parentheses.
        const std::string row = documented_row(name, key);
        CHECK_MESSAGE(row.find(value) != std::string::npos, "derived default " << value << " not in: " << row);
      } else {
        CHECK_MESSAGE(same_scalar(it->second, value), "documented default " << it->second << ", echoed " << value);
      }
    }
    if (expect_keys) CHECK(keys > 0);
    return;
  }
  FAIL("no policy " << name);
}

TEST_CASE("docs/policies.md lists the keys a policy echoes with their derived defaults (LTR)") {
  check_echo_documented(local_policy_types(), "ltr", "{}");                          // learned: warmup 500, loss
  check_echo_documented(local_policy_types(), "ltr", "{ranker: noisy_oracle}");     // tau
  check_echo_documented(local_policy_types(), "ltr", "{preemptive: true}", "promoted_order");
  // Every documented LTR key is read: the table and the echo name the same keys
  // (model is echoed only when given: its default is none).
  const std::map<std::string, std::string> doc = documented_params("ltr");
  CHECK(doc.count("model") == 1);
  CHECK(doc.at("model") == "none");
  // The other policies' echoes hold table keys only; they are documented too.
  for (const auto& t : local_policy_types())
    if (t.name != "ltr") check_echo_documented(local_policy_types(), t.name, "{}", "", false);
  for (const auto& t : global_policy_types()) check_echo_documented(global_policy_types(), t.name, "{}", "", false);
}

TEST_CASE("a policy's table reads, checks and echoes its parameters") {
  YamlMap m(YAML::Load("{w_out: 3, charge: extend}"), "t.yaml", "policy.local");
  const VtcOptions o = parse_vtc_options(m);
  CHECK(o.w_in == VtcOptions{}.w_in);
  CHECK(o.w_out == 3);
  CHECK(o.charge_extend);
  YAML::Node n;
  write_options(n, vtc_option_table(), o);
  CHECK(n["charge"].as<std::string>() == "extend");
  CHECK(n["w_out"].as<double>() == 3);

  for (const char* bad : {"{w_out: -1}", "{charge: all}"}) {
    CAPTURE(bad);
    YamlMap b(YAML::Load(bad), "t.yaml", "policy.local");
    try {
      parse_vtc_options(b);
      FAIL("no error");
    } catch (const InputError& e) {
      const std::string what = e.what();
      CHECK(what.find("t.yaml") != std::string::npos);
      CHECK(what.find(std::string("policy.local.") + (bad[1] == 'w' ? "w_out" : "charge")) != std::string::npos);
    }
  }
}

TEST_CASE("docs/configuration.md lists every table key with the table's default") {
  check_documented(batching_options(), "batching");
  check_documented(memory_options(), "batching");
  check_documented(batching_mode_options(), "batching");
  check_key_table(pool_options(), "`cluster.pools` replaces");
  check_inherited_rows(pool_item_options(), pool_options(), "`cluster.pools` replaces");
  check_key_table(pd_options(), "`cluster.pd`");
  check_key_table(kv_store_options(), "`cluster.kv_store`");
  int attention_maps = 0;
  for (const AttentionMethodType& t : attention_method_types()) {
    if (t.params_key.empty()) continue;
    CAPTURE(t.name);
    CHECK(!t.params.empty());
    check_documented(t.params, "attention." + t.params_key);
    ++attention_maps;
  }
  CHECK(attention_maps >= 3);  // quest, minference, andpro (and any new method with parameters)
  check_documented(roofline_options(), "cost_model");
  check_documented(calibrated_options(), "cost_model");
  check_documented(profile_options(), "cost_model");
  check_documented(fixed_options(), "cost_model");
  check_documented(cost_model_options(), "cost_model");
  check_documented(report_options(), "report");
  check_documented(window_options(), "report.window");
  check_documented(slo_options(), "slo");
  check_documented(kv_tier_options(), "kv_cache.host");
  check_documented(kv_tier_options(), "kv_cache.ssd");
  check_documented(variance_options(), "variance");
  check_listed(model_options(), "## Models");
  check_listed(hardware_options(), "## Hardware");
  check_listed(interconnect_options(), "## Hardware");
}

TEST_CASE("a table reads what it writes, keeps absent keys and names the key of a range error") {
  RooflineOptions r;
  r.compute_efficiency = 0.55;
  r.kernels_per_layer = 3;
  YAML::Node n;
  write_options(n, roofline_options(), r);
  CHECK(n.size() == roofline_options().size());
  RooflineOptions back;
  YamlMap m(n, "t.yaml", "cost_model");
  read_options(m, roofline_options(), back);
  m.finish();
  CHECK(back == r);

  // An attention method's entry: an empty map keeps the defaults, and what
  // it writes reads back to the same value.
  for (const AttentionMethodType& t : attention_method_types()) {
    if (t.params_key.empty()) continue;
    CAPTURE(t.name);
    AttentionMethods a;
    YamlMap empty(YAML::Node(), "t.yaml", "attention." + t.params_key);
    t.parse(empty, a);
    empty.finish();
    CHECK(a == AttentionMethods{});
    a.quest.budget = 4096;
    a.minference.min_length = 8192;
    a.minference.patterns = {{"vs_30_2048", 0.25}, {"bs_100", 0.75}};
    a.andpro.window = 64;
    YAML::Node written;
    t.write(written, a);
    AttentionMethods again = a;
    again.quest = {};
    again.minference = {};
    again.andpro = {};
    YamlMap wm(written, "t.yaml", "attention." + t.params_key);
    t.parse(wm, again);
    wm.finish();
    const AttentionMethods def;
    // The entry's own parameters came back; the others stay at their defaults.
    CHECK(((again.quest == a.quest) || (again.quest == def.quest && t.params_key != "quest")));
    CHECK(((again.minference == a.minference) || (again.minference == def.minference && t.params_key != "minference")));
    CHECK(((again.andpro == a.andpro) || (again.andpro == def.andpro && t.params_key != "andpro")));
  }

  YamlMap bad(YAML::Load("{memory_efficiency: 1.5}"), "t.yaml", "cost_model");
  RooflineOptions x;
  try {
    read_options(bad, roofline_options(), x);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("cost_model.memory_efficiency: must be in (0, 1], got 1.5") != std::string::npos);
  }
}

TEST_CASE("N-way choices, nested tables and keys written only when read: read, write back and errors") {
  // N-way choices (an enum): read by name, written by name, an unknown name lists the known ones.
  PdConfig pd;
  YamlMap pm(YAML::Load("{link: nvlink, decider: prefix_aware, threshold_tokens: 64, streaming: layerwise}"), "t.yaml",
             "cluster.pd");
  read_options(pm, pd_options(), pd);
  pm.finish();
  CHECK(pd.link == PdLink::kNvlink);
  CHECK(pd.decider == PdDecider::kPrefixAware);
  CHECK(pd.streaming == PdStreaming::kLayerwise);
  YAML::Node pw;
  write_options(pw, pd_options(), pd);
  CHECK(pw["link"].as<std::string>() == "nvlink");
  CHECK(pw["threshold_tokens"].as<int>() == 64);
  // `written`: keys that only some settings read stay out of the write-back.
  YAML::Node dw;
  write_options(dw, pd_options(), PdConfig{});
  CHECK(dw.size() == 2);  // link, decider: threshold_tokens (always) and streaming (none) are not written
  CHECK(!dw["streaming"].IsDefined());
  BatchingOptions bo;
  YamlMap bm(YAML::Load("{mode: eager}"), "t.yaml", "batching");
  try {
    read_options(bm, batching_mode_options(), bo);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("batching.mode: unknown batching mode 'eager'; expected mixed or prefill_first") !=
          std::string::npos);
    CHECK(std::string(e.what()).find("did you mean") == std::string::npos);  // not a typo of either
  }
  // A typo gets the nearest name; the names are listed in the table's order.
  YamlMap tm(YAML::Load("{mode: prefil_first}"), "t.yaml", "batching");
  try {
    read_options(tm, batching_mode_options(), bo);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("t.yaml:1:") != std::string::npos);
    CHECK(std::string(e.what()).find("batching.mode: unknown batching mode 'prefil_first'; expected mixed or "
                                     "prefill_first (did you mean 'prefill_first'?)") != std::string::npos);
  }
  CHECK(option_detail::or_list({"a"}) == "a");
  CHECK(option_detail::or_list({"none", "layerwise"}) == "none or layerwise");
  CHECK(option_detail::or_list({"a", "b", "c"}) == "a, b or c");
  CHECK(option_detail::edit_distance("rmda", "rdma") == 1);  // a swap of two adjacent characters is one edit
  CHECK(option_detail::edit_distance("fcsf", "fcfs") == 1);
  CHECK(option_detail::edit_distance("ca", "abc") == 3);
  CHECK(option_detail::edit_distance("nvlnk", "nvlink") == 1);
  CHECK(option_detail::edit_distance("", "abc") == 3);
  // The names a row accepts, for docs and help: an N-way choice's in order, none for a number.
  CHECK(option_names(pd_options().at(0)) == std::vector<std::string>{"rdma", "nvlink"});
  CHECK(option_names(pd_options().at(2)).empty());

  // Nested tables: a sub-map read and written by another table (and one over the same struct).
  struct Inner {
    double rate = 1;
    bool operator==(const Inner&) const = default;
  };
  struct Outer {
    Inner inner;
    std::int64_t n = 2;
    double x = 3;
    bool operator==(const Outer&) const = default;
  };
  static const OptionTable<Inner> inner_table = {{"rate", &Inner::rate, R::kPositive, "a rate"}};
  static const OptionTable<Outer> same_table = {{"x", &Outer::x, R::kAny, "x"}};
  static const OptionTable<Outer> outer_table = {
      {"inner", nested(&Outer::inner, +[]() -> const OptionTable<Inner>& { return inner_table; }), R::kAny, "a map"},
      {"n", &Outer::n, R::kPositive, "a count"},
      {"more", nested_same(+[]() -> const OptionTable<Outer>& { return same_table; }), R::kAny, "keys of Outer"},
  };
  Outer o;
  YamlMap om(YAML::Load("{inner: {rate: 2.5}, n: 7, more: {x: 9}}"), "t.yaml", "outer");
  read_options(om, outer_table, o);
  om.finish();
  CHECK(o.inner.rate == 2.5);
  CHECK(o.n == 7);
  CHECK(o.x == 9);
  YAML::Node ow;
  write_options(ow, outer_table, o);
  CHECK(ow["inner"]["rate"].as<double>() == 2.5);
  CHECK(ow["more"]["x"].as<double>() == 9);
  Outer back;
  YamlMap bm2(ow, "t.yaml", "outer");
  read_options(bm2, outer_table, back);
  bm2.finish();
  CHECK(back == o);
  // A range error inside a nested map names the whole path; an unknown nested key is an error.
  YamlMap nb(YAML::Load("{inner: {rate: -1}}"), "t.yaml", "outer");
  Outer y;
  try {
    read_options(nb, outer_table, y);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("outer.inner.rate: must be > 0") != std::string::npos);
  }
  YamlMap nu(YAML::Load("{inner: {rtae: 2}}"), "t.yaml", "outer");
  try {
    read_options(nu, outer_table, y);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("t.yaml:1:") != std::string::npos);
    CHECK(std::string(e.what()).find("outer.inner.rtae: unknown key; expected one of: rate") != std::string::npos);
  }
  // A nested map must be a map, and null is an error, not the defaults.
  for (const std::string bad : {"{inner: 3}", "{inner: ~}", "{more: [1]}"}) {
    CAPTURE(bad);
    YamlMap nb2(YAML::Load(bad), "t.yaml", "outer");
    CHECK_THROWS_AS(read_options(nb2, outer_table, y), InputError);
  }

}

namespace {
struct NoiseOptions {
  enum class Kind { kAuto, kNone, kSigma };
  Kind kind = Kind::kAuto;
  double sigma = 0;
};
const OptionTable<NoiseOptions>& noise_table() {
  static const OptionTable<NoiseOptions> t = {
      {"noise", one_of_or_number(&NoiseOptions::kind, &NoiseOptions::sigma, "noise", {"auto", "none"}, 0, 1)}};
  return t;
}
NoiseOptions read_noise(const std::string& yaml) {
  YamlMap m(YAML::Load(yaml), "t.yaml", "variance");
  NoiseOptions o;
  read_options(m, noise_table(), o);
  m.finish();
  return o;
}
std::string noise_error(const std::string& yaml) {
  try {
    read_noise(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("a choice-or-number key: names set the enum, a number in range sets the value, both write back") {
  CHECK(read_noise("{}").kind == NoiseOptions::Kind::kAuto);
  CHECK(read_noise("{noise: none}").kind == NoiseOptions::Kind::kNone);
  const NoiseOptions n = read_noise("{noise: 0.25}");
  CHECK(n.kind == NoiseOptions::Kind::kSigma);
  CHECK(n.sigma == 0.25);
  YAML::Node w;
  write_options(w, noise_table(), n);
  CHECK(w["noise"].as<double>() == 0.25);
  YAML::Node w2;
  write_options(w2, noise_table(), read_noise("{noise: none}"));
  CHECK(w2["noise"].as<std::string>() == "none");
  CHECK(option_names(noise_table()[0]) == std::vector<std::string>{"auto", "none"});
  CHECK(option_default(noise_table()[0]) == "auto");
  // Errors name the file and the dotted key; a typo gets the nearest name.
  const std::string typo = noise_error("{noise: nome}");
  CHECK(typo.find("t.yaml") != std::string::npos);
  CHECK(typo.find("variance.noise") != std::string::npos);
  CHECK(typo.find("did you mean 'none'") != std::string::npos);
  CHECK(typo.find("a number in [0, 1]") != std::string::npos);
  const std::string range = noise_error("{noise: 1.5}");
  CHECK(range.find("variance.noise") != std::string::npos);
  CHECK(range.find("got 1.5") != std::string::npos);
  CHECK(noise_error("{noise: -0.1}").find("auto or none or a number in [0, 1]") != std::string::npos);
}

namespace {

// The dotted keys of a YAML map, depth first ("report.window.warmup_s"); a list's
// items are not entered (cluster.overrides, workload.clients: their own docs).
void collect_keys(const YAML::Node& n, const std::string& prefix, std::vector<std::string>& out) {
  if (!n.IsMap()) return;
  for (const auto& kv : n) {
    const std::string key = prefix + kv.first.as<std::string>();
    out.push_back(key);
    collect_keys(kv.second, key + ".", out);
  }
}

template <class S>
void add_keys(std::set<std::string>& keys, const OptionTable<S>& table, const std::string& section) {
  for (const OptionField<S>& f : table) keys.insert(section.empty() ? f.key : section + "." + f.key);
}

}  // namespace

// The reverse of the check above: every key of docs/configuration.md's reference
// scenario is a row of an option table (scenario_options() and the tables its rows
// read), or is named here with the reason it is not. A key read outside a table fails
// this test until it is a row.
TEST_CASE("every key of the documented scenario is a row of an option table") {
  std::string block;
  bool in = false;
  for (const std::string& l : doc_lines()) {
    if (!in && l == "```yaml") {
      in = true;
      continue;
    }
    if (in && l == "```") break;
    if (in) block += l + "\n";
  }
  REQUIRE(!block.empty());
  std::vector<std::string> documented;
  collect_keys(YAML::Load(block), "", documented);
  CHECK(documented.size() > 60);

  std::set<std::string> tabled;
  add_keys(tabled, scenario_options(), "");  // the top level: every section is a row
  add_keys(tabled, batching_options(), "batching");
  add_keys(tabled, memory_options(), "batching");
  add_keys(tabled, batching_mode_options(), "batching");
  add_keys(tabled, cluster_options(), "cluster");
  add_keys(tabled, cost_model_options(), "cost_model");
  add_keys(tabled, roofline_options(), "cost_model");
  add_keys(tabled, calibrated_options(), "cost_model");
  add_keys(tabled, profile_options(), "cost_model");
  add_keys(tabled, fixed_options(), "cost_model");
  add_keys(tabled, kv_cache_options(), "kv_cache");
  add_keys(tabled, kv_tier_options(), "kv_cache.host");
  add_keys(tabled, kv_tier_options(), "kv_cache.ssd");
  add_keys(tabled, report_section_options(), "report");
  add_keys(tabled, window_options(), "report.window");
  add_keys(tabled, slo_section_options(), "slo");
  add_keys(tabled, variance_options(), "variance");
  add_keys(tabled, policy_options(), "policy");
  add_keys(tabled, attention_options(), "attention");
  for (const AttentionMethodType& t : attention_method_types())
    if (!t.params_key.empty()) {
      tabled.insert("attention." + t.params_key);
      for (const AttentionParamDoc& p : t.params) tabled.insert("attention." + t.params_key + "." + p.key);
    }

  // Not a table's key, each with its reason: names the user chooses, and the workload's
  // keys, which depend on its type. A prefix ending in '.' covers its subtree.
  const std::map<std::string, std::string> hand_read = {
      {"attention.minference.patterns", "a map of pattern names to shares (MInference's pattern list)"},
      {"attention.minference.patterns.", "pattern names (MInference's pattern list)"},
      {"workload.", "the keys of the workload's type (traces/); checked against docs/traces.md"},
  };
  auto listed = [&](const std::string& key) {
    if (hand_read.count(key)) return true;
    for (const auto& kv : hand_read)
      if (kv.first.back() == '.' && key.starts_with(kv.first)) return true;
    return false;
  };
  for (const std::string& key : documented) {
    INFO("docs/configuration.md, key " << key);
    CHECK_MESSAGE((tabled.count(key) || listed(key)), "read by neither a table nor the hand-read list");
  }
  // And the list holds no stale entry: each names a documented key (or a subtree of one).
  for (const auto& kv : hand_read) {
    const std::string& key = kv.first;
    INFO("hand-read entry " << key);
    const bool found = std::any_of(documented.begin(), documented.end(), [&key](const std::string& d) {
      return d == key || (key.back() == '.' && d.starts_with(key));
    });
    CHECK(found);
  }
  // And every top-level row is documented: the reference scenario shows every section.
  for (const auto& f : scenario_options()) {
    INFO("scenario_options() row " << f.key);
    CHECK(std::find(documented.begin(), documented.end(), std::string(f.key)) != documented.end());
  }
}
