// The workload tables are the schema of a scenario's `workload:` section: one
// table per workload type (and per list item: clients, pools, nodes) reads the
// keys, writes them back into config.resolved.yaml and is checked here against
// docs/traces.md, which lists every key with the table's default. Also: the
// column kinds of sim/core/option_table.h the tables use (optional numbers,
// custom rows, list_of, lift, lift_base, nested with a check), errors naming
// file, line and dotted key, and parse(resolved(w)) == w for every type.
#include <doctest/doctest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "traces/generators/agent_workload.h"
#include "traces/generators/arrival_spec.h"
#include "traces/generators/empirical_workload.h"
#include "traces/generators/session_workload.h"
#include "traces/generators/synthetic_workload.h"
#include "traces/generators/template_workload.h"
#include "traces/test_files.h"
#include "traces/trace_options.h"
#include "traces/trace_workload.h"
#include "sim/core/test_util.h"

using namespace servesim;
using servesim::testing::contains;
using servesim::testing::input_error;
using servesim::testing::TempDir;
using R = OptionRange;

namespace {

// ---- the column kinds, on a small struct ----

struct Inner {
  enum class Mode { kSlow, kFast } mode = Mode::kSlow;
  std::optional<std::int64_t> count;
  std::optional<double> limit_s;
  std::vector<std::string> tags;
};

struct Base {
  double weight = 2;
};

struct Outer : Base {
  Inner inner;
  Inner sub;
  int level = 3;
  std::string label = "x";  // written back upper-case, read in either case
};

const OptionTable<Inner>& inner_options() {
  static const OptionTable<Inner> t = {
      {"mode", one_of(&Inner::mode, "mode", {"slow", "fast"})},
      {"count", &Inner::count, R::kPositive, "", 100},
      {"limit_s", &Inner::limit_s, R::kNonNegative},
      {"tags", list_of(&Inner::tags)},
  };
  return t;
}

const OptionTable<Base>& base_options() {
  static const OptionTable<Base> t = {{"weight", &Base::weight, R::kPositive}};
  return t;
}

void check_sub(YamlMap& m, Inner& s) {
  if (s.count && s.limit_s && *s.limit_s > static_cast<double>(*s.count)) m.fail("limit_s", "must be <= count");
}

const OptionTable<Outer>& outer_options() {
  static const OptionTable<Outer> t = concat<Outer>({
      lift_base<Outer>(base_options()),
      lift(&Outer::inner, inner_options()),
      {{"sub", nested(&Outer::sub, &inner_options, &check_sub)},
       {"level", &Outer::level, R::kAtLeastOne},
       {"label", custom<Outer>(
                     [](YamlMap& m, const char* key, Outer& o) {
                       std::string v = m.get<std::string>(key, o.label);
                       for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                       o.label = v;
                     },
                     [](const Outer& o) {
                       std::string v = o.label;
                       for (char& c : v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
                       return YAML::Node(v);
                     })}},
  });
  return t;
}

Outer read_outer(const std::string& yaml) {
  YamlMap m(YAML::Load(yaml), "outer.yaml", "outer");
  Outer o;
  read_options(m, outer_options(), o);
  m.finish();
  return o;
}

std::string written(const Outer& o) {
  YAML::Node n(YAML::NodeType::Map);
  write_options(n, outer_options(), o);
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

const OptionField<Outer>& row(const std::string& key) {
  for (const auto& f : outer_options())
    if (f.key == key) return f;
  throw std::logic_error("no row " + key);
}

// ---- docs/traces.md ----

std::vector<std::string> doc_lines() {
  std::ifstream in(std::string(SERVESIM_SOURCE_DIR) + "/docs/traces.md");
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

using servesim::testing::trim_cell;

using servesim::testing::same_scalar;

bool same_node(const YAML::Node& a, const YAML::Node& b) {
  if (a.Type() != b.Type()) return false;
  if (a.IsScalar()) return same_scalar(a.Scalar(), b.Scalar());
  if (a.IsSequence() || a.IsMap()) {
    if (a.size() != b.size()) return false;
    auto i = a.begin();
    auto j = b.begin();
    for (; i != a.end(); ++i, ++j) {
      if (a.IsMap() ? !(i->first.Scalar() == j->first.Scalar() && same_node(i->second, j->second)) : !same_node(*i, *j))
        return false;
    }
  }
  return true;
}

// The documented default and the table's, as YAML values: numbers equal as
// numbers, maps key by key in order ({dist: lognormal, median: 400, sigma: 0.6}).
bool same_value(const std::string& doc, const std::string& table) {
  if (doc == table) return true;
  try {
    return same_node(YAML::Load(doc), YAML::Load(table));
  } catch (const YAML::Exception&) {
    return false;
  }
}

// A key's default as the docs write it: the value of a default-constructed S in
// flow style ({dist: fixed, value: 1024}), or "none" for a key not written by
// default (an unset optional number: a stop rule's count and duration_s, a
// template client's pool).
template <class S>
std::string documented_default(const OptionField<S>& f) {
  static const S defaults{};
  if ((f.written && !f.written(defaults)) || !option_detail::has_value(f, defaults)) return "none";
  const YAML::Node v = option_value(f, defaults);
  if (v.IsNull()) return "null";
  YAML::Emitter e;
  e << YAML::Flow << v;
  return e.c_str();
}

// The keys read by hand, not by a table's default: checked to be documented,
// not their default. Each with the reason.
struct HandRead {
  const char* table;
  const char* key;
  const char* why;
};
const HandRead kHandRead[] = {
    {"synthetic", "clients", "a list of maps: each item read by synthetic_client_options()"},
    {"synthetic client", "name", "derived default: client<i>, from the item's index"},
    {"templates", "pools", "a list of maps: each item read by template_pool_options()"},
    {"templates", "clients", "a list of maps: each item read by template_client_options()"},
    {"templates pool", "name", "derived default: pool<i>, from the item's index"},
    {"templates client", "name", "derived default: client<i>, from the item's index"},
    {"empirical", "path", "required: no default"},
    {"agent_dag", "nodes", "a list of maps, each item read by agent_node_options(); default: default_agent_nodes()"},
    {"agent_dag node", "name", "required: no default"},
    {"trace", "path", "required: no default"},
};

bool hand_read(const std::string& table, const std::string& key) {
  for (const HandRead& h : kHandRead)
    if (table == h.table && key == h.key) return true;
  return false;
}

std::map<std::string, std::pair<std::string, std::string>> key_table(const std::string& intro) {
  return servesim::testing::key_table(doc_lines(), intro);
}

// Every row of `table` has a row in the docs table under "`<name>` keys" with the
// table's default, and the names its value accepts.
template <class S>
void check_key_table(const OptionTable<S>& table, const std::string& name) {
  const std::string intro = "`" + name.substr(0, name.find(' ')) + "` " +
                            (name.find(' ') == std::string::npos ? "" : name.substr(name.find(' ') + 1) + " ") + "keys";
  const auto rows = key_table(intro);
  REQUIRE_MESSAGE(!rows.empty(), "docs/traces.md has no key table after " << intro);
  for (const OptionField<S>& f : table) {
    INFO("docs/traces.md, " << intro << ": " << f.key);
    const auto it = rows.find(f.key);
    REQUIRE_MESSAGE(it != rows.end(), "key not in the table");
    if (!hand_read(name, f.key))
      CHECK_MESSAGE(same_value(it->second.first, documented_default(f)),
                    "documented default " << it->second.first << ", table default " << documented_default(f));
    for (const std::string& n : option_names(f))
      CHECK_MESSAGE(it->second.second.find(n) != std::string::npos, "name '" << n << "' not in the row");
  }
  for (const HandRead& h : kHandRead)  // the hand-read keys are documented too
    if (name == h.table) CHECK_MESSAGE(rows.count(h.key) == 1, intro << ": " << h.key << " not documented");
}

// The text of the `## Transformations` section (the trace workload) and its YAML example.
std::pair<std::string, std::string> trace_section() {
  std::string text, yaml;
  bool in = false, in_yaml = false;
  for (const std::string& l : doc_lines()) {
    if (l.starts_with("## ")) in = l == "## Transformations";
    if (!in) continue;
    text += l + "\n";
    if (l.starts_with("```")) {
      in_yaml = !in_yaml && yaml.empty();  // the section's first example only
      continue;
    }
    if (in_yaml) yaml += l + "\n";
  }
  return {text, yaml};
}

using servesim::testing::doc_value;

// The trace workload's keys in the YAML example of "## Transformations", with their
// defaults; a nested map's keys (window, spread, clients) in the example's line of it.
template <class S>
void check_trace_block(const OptionTable<S>& table, const std::string& yaml, const std::string& text,
                       const std::string& within) {
  std::string scope = yaml;
  if (!within.empty()) {
    const std::size_t at = yaml.find("\n  " + within + ": ");
    REQUIRE_MESSAGE(at != std::string::npos, within << " not in the trace example");
    scope = yaml.substr(at + 1, yaml.find('\n', at + 1) - at - 1);
  }
  for (const OptionField<S>& f : table) {
    INFO("docs/traces.md, Transformations: " << (within.empty() ? "" : within + ".") << f.key);
    const auto v = doc_value(scope, f.key);
    REQUIRE_MESSAGE(v.has_value(), "key not in the example");
    if (std::holds_alternative<OptionNested<S>>(f.member)) continue;  // its keys are checked on their own
    if (!hand_read("trace", within.empty() ? f.key : within + "." + f.key))
      CHECK_MESSAGE(same_value(*v, documented_default(f)), "documented default " << *v << ", table default "
                                                                                  << documented_default(f));
    for (const std::string& n : option_names(f))
      CHECK_MESSAGE(text.find(n) != std::string::npos, "name '" << n << "' not documented");
  }
}

// ---- workloads ----

std::unique_ptr<Workload> parse_yaml_workload(const std::string& yaml) {
  YamlMap m(YAML::Load(yaml), "test.yaml", "workload");
  return parse_workload(m);
}

std::string dump(const YAML::Node& n) {
  YAML::Emitter e;
  e << n;
  return e.c_str();
}

// parse(resolved(w)) states the same settings as w.
void check_round_trip(const std::string& yaml) {
  INFO(yaml);
  const YAML::Node first = parse_yaml_workload(yaml)->resolved();
  YamlMap again(first, "resolved.yaml", "workload");
  const YAML::Node second = parse_workload(again)->resolved();
  CHECK(dump(second) == dump(first));
}

}  // namespace

TEST_CASE("option columns: optional numbers are unset when absent and written only when set") {
  const Outer none = read_outer("{}");
  CHECK_FALSE(none.inner.count.has_value());
  CHECK_FALSE(none.inner.limit_s.has_value());
  CHECK(written(none) == "{weight: 2, mode: slow, tags: [], sub: {mode: slow, tags: []}, level: 3, label: X}");
  CHECK(option_default(row("count")) == "~");
  const Outer set = read_outer("{count: 7, limit_s: 0.5, sub: {count: 4, limit_s: 4}}");
  CHECK(set.inner.count == 7);
  CHECK(set.inner.limit_s == 0.5);
  CHECK(written(set) ==
        "{weight: 2, mode: slow, count: 7, limit_s: 0.5, tags: [], sub: {mode: slow, count: 4, limit_s: 4, tags: []}, "
        "level: 3, label: X}");
  CHECK(contains(input_error([] { read_outer("{count: 0}"); }), "outer.yaml:1:9: outer.count: must be a positive integer, got 0"));
  CHECK(contains(input_error([] { read_outer("{count: 1.5}"); }), "outer.count: expected"));
  CHECK(contains(input_error([] { read_outer("{count: 101}"); }), "outer.count: must be at most 100"));
  CHECK(contains(input_error([] { read_outer("{limit_s: -1}"); }), "outer.limit_s: must be >= 0"));
  CHECK(contains(input_error([] { read_outer("{count: ~}"); }), "outer.count: is null"));
}

TEST_CASE("option columns: lift and lift_base read a sub-struct's keys at the struct's own level, with its defaults") {
  const Outer o = read_outer("{weight: 5, mode: fast, tags: [a, b], level: 2, label: AbC}");
  CHECK(o.weight == 5);
  CHECK(o.inner.mode == Inner::Mode::kFast);
  CHECK(o.inner.tags == std::vector<std::string>{"a", "b"});
  CHECK(o.level == 2);
  CHECK(o.label == "abc");  // the custom row's read
  CHECK(written(o) == "{weight: 5, mode: fast, tags: [a, b], sub: {mode: slow, tags: []}, level: 2, label: ABC}");
  CHECK(read_outer("{tags: solo}").inner.tags == std::vector<std::string>{"solo"});  // one value: a list of one
  CHECK(option_names(row("mode")) == std::vector<std::string>{"slow", "fast"});     // a lifted one_of keeps its names
  CHECK(option_default(row("weight")) == "2");
  CHECK(contains(input_error([] { read_outer("{mode: fas}"); }),
                 "outer.mode: unknown mode 'fas'; expected slow or fast (did you mean 'fast'?)"));
  CHECK(contains(input_error([] { read_outer("{weight: -1}"); }), "outer.weight: must be > 0, got -1"));
  CHECK(contains(input_error([] { read_outer("{levle: 1}"); }), "outer.levle: unknown key"));
  // Reading again over a value keeps what is absent (a list too).
  YamlMap m(YAML::Load("{level: 9}"), "outer.yaml", "outer");
  Outer again = o;
  read_options(m, outer_options(), again);
  CHECK(again.inner.tags == o.inner.tags);
  CHECK(again.level == 9);
}

TEST_CASE("option columns: a nested map's check runs after its keys and names the key in the sub-map") {
  CHECK(read_outer("{sub: {count: 5, limit_s: 2}}").sub.limit_s == 2);
  CHECK(contains(input_error([] { read_outer("{sub: {count: 5, limit_s: 6}}"); }), "outer.sub.limit_s: must be <= count"));
  CHECK(contains(input_error([] { read_outer("{sub: {count: 5, extra: 1}}"); }), "outer.sub.extra: unknown key"));
}

TEST_CASE("docs/traces.md lists every workload key with its table's default") {
  // Every registered workload type is covered here.
  const std::set<std::string> covered = {"synthetic", "templates", "trace", "empirical", "sessions", "agent_dag"};
  for (const WorkloadType& t : workload_types()) CHECK_MESSAGE(covered.count(t.name) == 1, t.name << " not checked");

  check_key_table(synthetic_options(), "synthetic");
  check_key_table(synthetic_client_options(), "synthetic client");
  check_key_table(template_options(), "templates");
  check_key_table(template_pool_options(), "templates pool");
  check_key_table(template_client_options(), "templates client");
  check_key_table(empirical_options(), "empirical");
  check_key_table(session_options(), "sessions");
  check_key_table(agent_options(), "agent_dag");
  check_key_table(agent_node_options(), "agent_dag node");

  const auto [text, yaml] = trace_section();
  REQUIRE(!yaml.empty());
  check_trace_block(trace_options(), yaml, text, "");
  check_trace_block(trace_window_options(), yaml, text, "window");
  check_trace_block(spread_options(), yaml, text, "spread");
  check_trace_block(client_rule_options(), yaml, text, "clients");

  // The names of a distribution's `dist:` and of an arrival process are documented.
  std::string all;
  for (const std::string& l : doc_lines()) all += l + "\n";
  for (const std::string& n : option_names(length_kind_options().front())) CHECK(all.find("dist: " + n) != std::string::npos);
  for (const std::string& n : option_names(duration_kind_options().front())) CHECK(all.find("dist: " + n) != std::string::npos);
  for (const std::string& n : option_names(arrival_process_options().front())) CHECK(all.find(n) != std::string::npos);
}

TEST_CASE("workload errors name the file, the line and the dotted key, and suggest the nearest name") {
  auto error = [](const std::string& yaml) { return input_error([&yaml] { parse_yaml_workload(yaml); }); };
  // A typo in a key.
  CHECK(contains(error("type: synthetic\nrequests: 5\nclients:\n  - {name: a, rtae: 2}\n"),
                 "test.yaml:4:15: workload.clients[0].rtae: unknown key; expected one of: arrival, name, output, prompt, rate"));
  CHECK(contains(error("{type: sessions, sessions: 3, sytem_prompt_tokens: 5}"), "workload.sytem_prompt_tokens: unknown key"));
  // A bad name: the choices and the nearest one.
  CHECK(contains(error("type: synthetic\nrequests: 5\nclients:\n  - name: a\n    arrival: {process: gama, cv: 2}\n"),
                 "test.yaml:5:24: workload.clients[0].arrival.process: unknown arrival process 'gama'; expected poisson "
                 "or gamma (did you mean 'gamma'?)"));
  CHECK(contains(error("{type: synthetic, requests: 5, clients: [{prompt: {dist: lognormla, median: 5}}]}"),
                 "workload.clients[0].prompt.dist: unknown length distribution 'lognormla'; expected fixed, uniform or "
                 "lognormal (did you mean 'lognormal'?)"));
  CHECK(contains(error("{type: sessions, sessions: 3, think_time_s: {dist: exponentail}}"),
                 "workload.think_time_s.dist: unknown duration distribution 'exponentail'"));
  CHECK(contains(error("{type: trace, path: x.csv, spread: {mode: evn}}"),
                 "workload.spread.mode: unknown spread mode 'evn'; expected none, even or uniform (did you mean 'even'?)"));
  CHECK(contains(error("{type: trace, path: x.csv, clients: {by: rnadom}}"), "(did you mean 'random'?)"));
  CHECK(contains(error("{type: trace, path: x.csv, failed: dorp}"), "workload.failed: unknown failed-row rule 'dorp'"));
  CHECK(contains(error("{type: trace, path: x.csv, time_origin: first}"), "workload.time_origin: unknown time origin"));
  CHECK(contains(error("{type: synthetic, requests: 5, clients: [{arrival: gamma}]}"),
                 "workload.clients[0].arrival: expected poisson or {process: gamma, cv: X}, got 'gamma'"));
  CHECK(contains(error("{type: synthetic, requests: 5, clients: [{arrival: {process: poisson, cv: 2}}]}"),
                 "workload.clients[0].arrival.cv: applies to process: gamma only"));
  // A negative number.
  CHECK(contains(error("type: templates\nrequests: 5\nblock_size: -16\nclients: [{rate: 1}]\n"),
                 "test.yaml:3:13: workload.block_size: must be a positive integer, got -16"));
  CHECK(contains(error("{type: templates, requests: 5, clients: [{rate: 1, on_s: -1}]}"), "workload.clients[0].on_s: must be >= 0"));
  CHECK(contains(error("{type: templates, requests: 5, pools: [{zipf: -1}], clients: [{rate: 1}]}"),
                 "workload.pools[0].zipf: must be >= 0"));
  CHECK(contains(error("{type: agent_dag, workflows: 2, nodes: [{name: a, count: -2}]}"), "workload.nodes[0].count: must be a positive integer"));
  CHECK(contains(error("{type: trace, path: x.csv, max_requests: -1}"), "workload.max_requests: must be >= 0"));
  CHECK(contains(error("{type: trace, path: x.csv, clients: {count: -1}}"), "workload.clients.count: must be >= 0"));
  CHECK(contains(error("{type: synthetic, requests: 5, clients: [{rate: 1}], rate_scale: -2}"), "workload.rate_scale: must be > 0"));
  // Rules across keys stay: a stop rule, unique names, known pools, required keys.
  CHECK(contains(error("{type: synthetic, clients: [{rate: 1}]}"), "set `requests` or `duration_s` (or both)"));
  CHECK(contains(error("{type: sessions, rate: 1}"), "set `sessions` or `duration_s` (or both)"));
  CHECK(contains(error("{type: synthetic, requests: 5, clients: [{name: a}, {name: a}]}"),
                 "workload.clients[1].name: duplicate client name 'a'"));
  CHECK(contains(error("{type: templates, requests: 5, clients: [{pool: docs}]}"), "no pool named 'docs' in workload.pools"));
  CHECK(contains(error("{type: agent_dag, workflows: 2, nodes: [{count: 2}]}"), "missing required key 'name'"));
  CHECK(contains(error("{type: empirical, requests: 5}"), "missing required key 'path'"));
  CHECK(contains(error("{type: trace, path: x.csv, window: {start_s: 5, end_s: 2}}"), "workload.window.end_s: must be > start_s (5)"));
  CHECK(contains(error("{type: trace, path: x.csv, clients: {by: random, count: 0}}"), "workload.clients.count: must be >= 1 for by: random"));
}

TEST_CASE("every workload type: parse(resolved(w)) states the same settings, with every key away from its default") {
  TempDir dir;
  const std::string trace = dir.write("t.csv", "arrival_ns,prompt_tokens,output_tokens\n0,4,4\n1000000000,8,2\n");
  check_round_trip("{type: synthetic, requests: 40, duration_s: 9.5, rate_scale: 1.5, clients: [{name: a, rate: 3, "
                   "arrival: {process: gamma, cv: 2.5}, prompt: {dist: lognormal, median: 30, sigma: 0.5, min: 2, max: 90}, "
                   "output: 7}, {rate: 2, output: {dist: uniform, min: 3, max: 9}}]}");
  check_round_trip("{type: templates, duration_s: 30, block_size: 32, pools: [{name: docs, count: 4, zipf: 0.5, tokens: 300}, "
                   "{count: 2}], clients: [{name: t, rate: 4, pool: docs, template_share: 0.25, prompt: 20, output: 10, "
                   "on_s: 2, off_s: 3, phase_s: 1}, {rate: 1, pool: pool1}, {rate: 1}]}");
  check_round_trip("{type: empirical, path: " + trace + ", format: native_csv, skip_bad_rows: true, max_rows: 1, "
                   "joint: false, requests: 5, rate: 2, arrival: {process: gamma, cv: 0.5}, client: solo}");
  check_round_trip("{type: sessions, sessions: 6, duration_s: 100, rate: 0.25, turns: 3, system_prompt_tokens: 64, "
                   "first_prompt: 50, user_prompt: {dist: uniform, min: 5, max: 9}, output: 40, "
                   "think_time_s: {dist: lognormal, median: 2, sigma: 0.3}, max_context_tokens: 4096, block_size: 32, clients: 3}");
  check_round_trip("{type: agent_dag, workflows: 3, rate: 0.5, system_prompt_tokens: 0, task: 12, block_size: 8, clients: 2, "
                   "nodes: [{name: a, prompt: 5, output: 6}, {name: b, count: 3, after: [a], "
                   "think_time_s: {dist: uniform, min: 1, max: 2}}, {name: c, after: [a, b]}]}");
  check_round_trip("{type: trace, path: " + trace + ", format: auto, skip_bad_rows: true, sort: true, failed: keep, "
                   "time_origin: zero, window: {start_s: 0.5, end_s: 100}, spread: {mode: uniform, bucket_s: 2}, "
                   "sample: 0.5, rate_scale: 2, max_requests: 9, clients: {by: random, name: x, count: 3, common_blocks: 2, "
                   "weights: [1, 2, 0], zipf: 0.5}}");
  check_round_trip("{type: trace, path: " + trace + ", window: {end_s: ~}, clients: {by: prefix_block, count: 0}}");
  // The defaults are the structs': a bare workload states them.
  const YAML::Node s = parse_yaml_workload("{type: sessions, sessions: 2}")->resolved();
  CHECK(s["rate"].as<double>() == 0.5);
  CHECK(dump(s["think_time_s"]) == "dist: exponential\nmean: 20");
  CHECK_FALSE(s["duration_s"]);  // an unset stop key is not written
  const YAML::Node a = parse_yaml_workload("{type: agent_dag, duration_s: 5}")->resolved();
  CHECK(a["rate"].as<double>() == 0.2);
  CHECK(a["nodes"].size() == 3);
  CHECK_FALSE(a["workflows"]);
  const YAML::Node t = parse_yaml_workload("{type: templates, requests: 1, clients: [{rate: 1}]}")->resolved();
  CHECK_FALSE(t["clients"][0]["pool"]);  // no pool: not written
  CHECK(t["clients"][0]["name"].as<std::string>() == "client0");
}
