// The option tables (option_tables.h, and each policy's table in policies/)
// are the schema: docs/configuration.md lists every key of every table with
// the table's default, docs/policies.md every policy parameter with its
// default, tables read and write back the same values, and range errors name
// file, line and key.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "configs/option_tables.h"
#include "policies/policy_registry.h"
#include "policies/vtc_policy.h"

using namespace servesim;

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

// The value after "key: " in `text` (up to a space, comma, brace or newline).
std::optional<std::string> doc_value(const std::string& text, const std::string& key) {
  for (std::size_t at = text.find(key + ": "); at != std::string::npos; at = text.find(key + ": ", at + 1)) {
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_')) continue;
    const std::size_t from = at + key.size() + 2;
    const std::size_t to = text.find_first_of(" ,}\n#", from);
    return text.substr(from, to - from);
  }
  return std::nullopt;
}

bool same_value(const std::string& doc, const std::string& table) {
  char* e1 = nullptr;
  char* e2 = nullptr;
  const double a = std::strtod(doc.c_str(), &e1), b = std::strtod(table.c_str(), &e2);
  if (*e1 == '\0' && *e2 == '\0' && !doc.empty() && !table.empty()) return a == b;
  return doc == table;
}

template <class S>
void check_documented(const OptionTable<S>& table, const std::string& section) {
  const std::string text = doc_section(doc_lines(), section);
  REQUIRE_MESSAGE(!text.empty(), "docs/configuration.md has no section " << section);
  for (const OptionField<S>& f : table) {
    INFO("docs/configuration.md, " << section << "." << f.key);
    auto v = doc_value(text, f.key);
    REQUIRE_MESSAGE(v.has_value(), "key not documented");
    CHECK_MESSAGE(same_value(*v, option_default(f)), "documented default " << *v << ", table default "
                                                                             << option_default(f));
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

std::string trim(std::string s) {
  const std::size_t a = s.find_first_not_of(" `"), b = s.find_last_not_of(" `");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<std::string> split_list(const std::string& cell) {
  std::vector<std::string> out;
  std::stringstream in(cell);
  for (std::string part; std::getline(in, part, ',');) out.push_back(trim(part));
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
      CHECK_MESSAGE(same_value(it->second, p.default_value),
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
  check_documented(quest_options(), "attention.quest");
  check_documented(minference_options(), "attention.minference");
  check_documented(andpro_options(), "attention.andpro");
  check_documented(roofline_options(), "cost_model");
  check_documented(calibrated_options(), "cost_model");
  check_documented(report_options(), "report");
  check_documented(window_options(), "report.window");
  check_documented(slo_options(), "slo");
  check_listed(model_options(), "## Models");
  check_listed(hardware_options(), "## Hardware");
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

  AndproParams a;
  YamlMap empty(YAML::Node(), "t.yaml", "andpro");
  read_options(empty, andpro_options(), a);
  CHECK(a == AndproParams{});

  YamlMap bad(YAML::Load("{memory_efficiency: 1.5}"), "t.yaml", "cost_model");
  RooflineOptions x;
  try {
    read_options(bad, roofline_options(), x);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("cost_model.memory_efficiency: must be in (0, 1], got 1.5") != std::string::npos);
  }
}
