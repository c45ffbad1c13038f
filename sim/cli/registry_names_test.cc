// Every registry name is typed once: trace formats, workload types, local and
// global policies, attention methods and summary.csv's columns are listed by
// their registries, and help texts, error messages and choices are built from
// them. This test reads every C++/CUDA source of the tree (SERVESIM_SOURCE_DIR,
// build folders, fuzz targets and tests left out) and fails on a hand-typed
// list: a string literal in which two names of one registry follow each other
// with only a separator between them ("azure, burstgpt", "fcfs,lpm",
// "quest or minference"; for summary columns five: a help text may name a few
// as an example or a default), or a file outside the registry's own that spells
// three or more names of one registry as whole literals (summary columns
// excepted: a file may pick the columns it shows).
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "costmodel/attention_registry.h"
#include "policies/policy_registry.h"
#include "reports/run_report.h"
#include "traces/readers/trace_reader.h"
#include "traces/workload.h"

namespace fs = std::filesystem;
using namespace servesim;

namespace {

struct Registry {
  std::string what;
  std::set<std::string> names;
  std::set<std::string> homes;  // files (relative paths) allowed to spell the names
  bool whole_literals = true;   // also check the three-whole-literals rule
  std::size_t min_list = 2;     // names in a row that make a hand-typed list
};

std::vector<Registry> registries() {
  std::vector<Registry> out;
  Registry formats{"trace format", {}, {"traces/readers/trace_reader.cc"}, true, 2};
  for (const auto& f : trace_formats()) formats.names.insert(f.name);
  out.push_back(formats);
  Registry workloads{"workload type", {}, {"traces/workload_registry.cc"}, true, 2};
  for (const auto& w : workload_types()) workloads.names.insert(w.name);
  out.push_back(workloads);
  Registry local{"local policy", {}, {"policies/policy_registry.cc"}, true, 2};
  for (const auto& p : local_policy_types()) local.names.insert(p.name);
  out.push_back(local);
  Registry global{"global policy", {}, {"policies/policy_registry.cc"}, true, 2};
  for (const auto& p : global_policy_types()) global.names.insert(p.name);
  out.push_back(global);
  Registry methods{"attention method", {}, {"costmodel/attention_method.h", "costmodel/attention_registry.cc"}, true, 2};
  for (const auto& m : attention_method_types()) methods.names.insert(std::string(m.name));
  out.push_back(methods);
  // A help text may name a few columns as an example or a default; five in a row copy the table.
  Registry columns{"summary.csv column", {}, {"reports/run_report.cc"}, false, 5};
  for (const auto& c : summary_column_names())
    if (c.find('_') != std::string::npos) columns.names.insert(c);  // plain words ("requests") are prose too
  out.push_back(columns);
  return out;
}

// Files that spell several names of a registry on purpose, each with its reason.
// Keep this short: a new entry needs a reason a reviewer accepts.
const std::map<std::string, std::string>& exemptions() {
  static const std::map<std::string, std::string> e = {
      {"reports/plots.cc",
       "a fixed plot colour per known policy name, so plots of different sweeps agree (reports does not link "
       "the policy registry; an unknown name gets a palette colour)"},
      {"reports/compare.cc",
       "the policies whose runs `compare` groups as cache-aware (a property of each policy that reports, which "
       "does not link the policy registry, reads from result names)"},
      {"costmodel/synthetic_profile.cc",
       "the synthetic profile's `# families=` header: kernel families of the profile format, which share some "
       "names with the attention methods"},
      {"traces/readers/trace_read_bench.cc", "a benchmark: it writes and times one file per format"},
      {"sim/cli/engine_bench.cc", "a benchmark: its scheduling systems pair a local and a global policy by name"},
  };
  return e;
}

// The string literals of C++ source text (comments and character literals skipped).
std::vector<std::string> string_literals(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    if (s.compare(i, 2, "//") == 0) {
      i = s.find('\n', i);
      if (i == std::string::npos) break;
    } else if (s.compare(i, 2, "/*") == 0) {
      i = s.find("*/", i + 2);
      if (i == std::string::npos) break;
      i += 2;
    } else if (s[i] == 'R' && i + 1 < n && s[i + 1] == '"' && (i == 0 || !(std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_'))) {
      const std::size_t open = s.find('(', i + 2);
      if (open == std::string::npos) break;
      const std::string close = ")" + s.substr(i + 2, open - i - 2) + "\"";
      const std::size_t end = s.find(close, open + 1);
      if (end == std::string::npos) break;
      out.push_back(s.substr(open + 1, end - open - 1));
      i = end + close.size();
    } else if (s[i] == '"') {
      std::string lit;
      ++i;
      while (i < n && s[i] != '"') {
        if (s[i] == '\\' && i + 1 < n) lit += s[i++];
        lit += s[i++];
      }
      out.push_back(lit);
      ++i;
    } else if (s[i] == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(s[i - 1])))) {
      // a character literal ('"', '\''); a digit separator (0x5E55'0000) is not one
      ++i;
      while (i < n && s[i] != '\'') i += s[i] == '\\' ? 2 : 1;
      ++i;
    } else {
      ++i;
    }
  }
  return out;
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The whole-word occurrences of registry names in `lit`: (start, end) of each.
std::vector<std::pair<std::size_t, std::size_t>> names_at(const std::string& lit, const std::set<std::string>& names) {
  std::vector<std::pair<std::size_t, std::size_t>> at;
  for (const auto& name : names)
    for (std::size_t p = lit.find(name); p != std::string::npos; p = lit.find(name, p + 1)) {
      const std::size_t e = p + name.size();
      if ((p == 0 || !word_char(lit[p - 1])) && (e == lit.size() || !word_char(lit[e]))) at.emplace_back(p, e);
    }
  std::sort(at.begin(), at.end());
  return at;
}

// Whether only a list separator stands between two names: a comma, slash or
// bar, or the word "or" or "and", with blanks around (blanks alone are prose:
// "quest dense prefill").
bool separator(std::string gap) {
  bool mark = gap.find_first_of(",/|") != std::string::npos;
  for (const std::string w : {" or ", " and "})
    for (std::size_t p = gap.find(w); p != std::string::npos; p = gap.find(w)) {
      gap.replace(p, w.size(), " ");
      mark = true;
    }
  return mark && gap.find_first_not_of(", /|") == std::string::npos;
}

// The longest run of names of `names` in `lit` that follow each other as a list
// ("a, b, c"): its text and its length (0 if no name).
std::pair<std::string, std::size_t> listed_run(const std::string& lit, const std::set<std::string>& names) {
  const auto at = names_at(lit, names);
  std::pair<std::string, std::size_t> best{"", at.empty() ? 0 : 1};
  std::size_t start = 0;
  for (std::size_t i = 0; i < at.size(); ++i) {
    const bool joined = i > 0 && at[i].first >= at[i - 1].second &&
                        separator(lit.substr(at[i - 1].second, at[i].first - at[i - 1].second));
    if (!joined) start = i;
    if (i - start + 1 > best.second || (joined && best.first.empty()))
      best = {lit.substr(at[start].first, at[i].second - at[start].first), i - start + 1};
  }
  return best;
}

bool is_source(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".h" || ext == ".cc" || ext == ".cu" || ext == ".cuh";
}

// Tests, test helpers and fuzz targets may spell names (they check them).
bool is_test(const std::string& rel) {
  const std::string stem = fs::path(rel).stem().string();
  return stem.ends_with("_test") || stem.ends_with("_testing") || rel.find("/testing/") != std::string::npos ||
         rel.starts_with("fuzz/");
}

// Every source file under the tree, relative paths; build folders, hidden folders and tests left out.
std::vector<std::string> source_files() {
  std::vector<std::string> out;
  const fs::path root(SERVESIM_SOURCE_DIR);
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.starts_with("build") || name.starts_with("."))) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || !is_source(it->path())) continue;
    const std::string rel = fs::relative(it->path(), root).generic_string();
    if (!is_test(rel)) out.push_back(rel);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string slurp(const std::string& rel) {
  std::ifstream in(fs::path(SERVESIM_SOURCE_DIR) / rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("the name scanner finds listed names in string literals, not in comments or prose") {
  const auto lits = string_literals("a = \"x, y\"; // \"no\"\n/* \"no\" */ c = '\"'; d = 0x5E55'0001; e = \"q\\\"r\";"
                                    " f = R\"(raw \"s\")\";");
  REQUIRE(lits.size() == 3);
  CHECK(lits[0] == "x, y");
  CHECK(lits[1] == "q\\\"r");
  CHECK(lits[2] == "raw \"s\"");
  const std::set<std::string> names = {"fcfs", "sjf", "lpm", "dense", "quest"};
  CHECK(listed_run("one of: fcfs, sjf", names) == std::pair<std::string, std::size_t>{"fcfs, sjf", 2});
  CHECK(listed_run("e.g. lpm_x,fcfs/sjf", names).first == "fcfs/sjf");
  CHECK(listed_run("dense, fcfs, sjf or lpm", names) == std::pair<std::string, std::size_t>{"dense, fcfs, sjf or lpm", 4});
  CHECK(listed_run("quest or dense", names).second == 2);
  CHECK(listed_run("quest derived from the dense kernels", names).second == 1);
  CHECK(listed_run("quest dense prefill", names).second == 1);
  CHECK(listed_run("fcfs_policy, sjfx", names).second == 0);
}

TEST_CASE("no hand-typed list of registry names in the sources") {
  const std::vector<Registry> regs = registries();
  for (const auto& r : regs) CHECK_MESSAGE(r.names.size() >= 2, r.what);
  const std::vector<std::string> files = source_files();
  REQUIRE(files.size() > 100);  // found the tree
  for (const auto& e : exemptions()) CHECK_MESSAGE(std::binary_search(files.begin(), files.end(), e.first), e.first);
  std::vector<std::string> problems;
  for (const auto& rel : files) {
    if (exemptions().count(rel)) continue;
    const std::vector<std::string> lits = string_literals(slurp(rel));
    for (const auto& r : regs) {
      if (r.homes.count(rel)) continue;
      std::set<std::string> whole;
      for (const auto& lit : lits) {
        if (r.names.count(lit)) whole.insert(lit);
        const auto run = listed_run(lit, r.names);
        if (run.second >= r.min_list)
          problems.push_back(rel + ": \"" + run.first + "\" lists " + r.what + " names by hand; build the text from the registry");
      }
      if (r.whole_literals && whole.size() >= 3) {
        std::string list;
        for (const auto& w : whole) list += (list.empty() ? "" : ", ") + w;
        problems.push_back(rel + ": spells the " + r.what + " names " + list + " by hand; use the registry");
      }
    }
  }
  for (const auto& p : problems) MESSAGE(p);
  CHECK(problems.empty());
}
