// Tests of the bench's time budget and of the per-family profile merge (CPU only; the
// budget's clock is a fake advanced by hand, nothing sleeps or reads the real time).
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "kernels/bench/bench_budget.h"
#include "kernels/bench/cli_args.h"
#include "kernels/bench/profile_csv.h"
#include "kernels/bench/profile_merge.h"
#include "kernels/bench/registry.h"

using namespace servesim::kernels;

TEST_CASE("bench budget admits points until the budget is spent, then lists each refused point") {
  double now = 100.0;
  BenchBudget budget(10.0, [&] { return now; });
  BenchOptions opts;
  opts.budget = &budget;
  CHECK(bench_admit(opts, "decode B=1 ctx=512"));
  now = 109.9;
  CHECK(bench_admit(opts, "decode B=2 ctx=512"));  // starts before the limit: may run past it
  now = 110.0;
  CHECK_FALSE(bench_admit(opts, "decode B=4 ctx=512"));
  CHECK_FALSE(bench_admit(opts, "prefill B=1 q=256 ctx=256"));
  CHECK(budget.admitted() == 2);
  CHECK(budget.skipped() == std::vector<std::string>{"decode B=4 ctx=512", "prefill B=1 q=256 ctx=256"});
}

TEST_CASE("bench without a budget admits every point") {
  double now = 0;
  BenchBudget budget(0, [&] { return now; });
  BenchOptions opts;
  opts.budget = &budget;
  now = 1e9;
  CHECK(bench_admit(opts, "anything"));
  BenchOptions no_budget;
  CHECK(bench_admit(no_budget, "anything"));
  CHECK(budget.skipped().empty());
}

TEST_CASE("command line takes a bench budget and a merge with inputs") {
  KernelsCli cli;
  std::string err;
  const char* bench[] = {"k", "bench", "-o", "p.csv", "--budget-s", "120"};
  REQUIRE(parse_kernels_cli(6, bench, &cli, &err));
  CHECK(cli.budget_s == 120.0);
  const char* bad_budget[] = {"k", "bench", "-o", "p.csv", "--budget-s", "-3"};
  CHECK_FALSE(parse_kernels_cli(6, bad_budget, &cli, &err));
  const char* merge[] = {"k", "merge", "-o", "all.csv", "a.csv", "b.csv"};
  REQUIRE(parse_kernels_cli(6, merge, &cli, &err));
  CHECK(cli.command == "merge");
  CHECK(cli.inputs == std::vector<std::string>{"a.csv", "b.csv"});
  const char* merge_nothing[] = {"k", "merge", "-o", "all.csv"};
  CHECK_FALSE(parse_kernels_cli(4, merge_nothing, &cli, &err));
  const char* bench_extra[] = {"k", "bench", "-o", "p.csv", "a.csv"};
  CHECK_FALSE(parse_kernels_cli(5, bench_extra, &cli, &err));
}

namespace {

const std::string kSha = "0123456789abcdef0123456789abcdef01234567";

std::string family_profile(const std::string& family, const std::string& commit, int rows,
                           const std::string& uuid = "gpu-1") {
  std::ostringstream os;
  ProfileWriter w(os);
  w.write_provenance({{"format", "servesim-kernel-profile"}, {"schema_version", "1"}, {"gpu_uuid", uuid},
                      {"git_commit", commit}, {"mode", "full"}, {"families", family},
                      {"command", "servesim-kernels bench --family " + family}});
  for (int i = 0; i < rows; ++i) {
    ProfileRow r;
    r.kernel = family;
    r.variant = "v" + std::to_string(i);
    r.median_us = 1 + i;
    w.write_row(r);
  }
  return os.str();
}

}  // namespace

TEST_CASE("merge joins per-family profiles into one with every row and the union of families") {
  std::string merged, err;
  REQUIRE(merge_profiles({{"decode.csv", family_profile("decode", kSha, 2)},
                          {"quest.csv", family_profile("quest", kSha, 0)},  // measured nothing
                          {"andpro.csv", family_profile("andpro", kSha, 3)}},
                         &merged, &err));
  ParsedProfile p;
  REQUIRE(parse_profile(merged, &p, &err));
  CHECK(p.columns == kProfileColumns);
  REQUIRE(p.rows.size() == 5);
  CHECK(p.rows[0][0] == "decode");
  CHECK(p.rows[4][0] == "andpro");
  std::string families, commit;
  for (const auto& [k, v] : p.provenance) {
    if (k == "families") families = v;
    if (k == "git_commit") commit = v;
  }
  CHECK(families == "decode,quest,andpro");
  CHECK(commit == kSha);
}

TEST_CASE("merge refuses a profile whose commit is unknown or whose inputs disagree") {
  std::string merged, err;
  CHECK_FALSE(merge_profiles({{"a.csv", family_profile("decode", "unknown", 1)}}, &merged, &err));
  CHECK(err.find("SERVESIM_GIT_COMMIT") != std::string::npos);
  CHECK_FALSE(merge_profiles({{"a.csv", family_profile("decode", "unknown (build)", 1)}}, &merged, &err));
  CHECK_FALSE(merge_profiles({{"a.csv", family_profile("decode", "", 1)}}, &merged, &err));
  CHECK_FALSE(merge_profiles({{"a.csv", family_profile("decode", kSha, 1)}, {"b.csv", family_profile("gemm", kSha + "-dirty", 1)}},
                             &merged, &err));
  CHECK(err.find("git_commit") != std::string::npos);
  CHECK_FALSE(merge_profiles({{"a.csv", family_profile("decode", kSha, 1)}, {"b.csv", family_profile("gemm", kSha, 1, "gpu-2")}},
                             &merged, &err));
  CHECK(err.find("gpu_uuid") != std::string::npos);
  CHECK_FALSE(merge_profiles({{"a.csv", "not a profile"}}, &merged, &err));
  CHECK_FALSE(merge_profiles({}, &merged, &err));
}

TEST_CASE("merge --sessions joins families measured in two sessions of one stack and says where each came from") {
  const std::string other = "fedcba9876543210fedcba9876543210fedcba98";
  std::string merged, err;
  const std::vector<ProfileInput> two = {{"a.csv", family_profile("decode", kSha, 2)},
                                         {"b.csv", family_profile("elementwise", other, 1, "gpu-2")}};
  CHECK_FALSE(merge_profiles(two, &merged, &err));  // one run: refused
  REQUIRE(merge_profiles(two, &merged, &err, true));
  ParsedProfile p;
  REQUIRE(parse_profile(merged, &p, &err));
  CHECK(p.rows.size() == 3);
  std::string commit, s1, s2;
  for (const auto& [k, v] : p.provenance) {
    if (k == "git_commit") commit = v;
    if (k == "session.1") s1 = v;
    if (k == "session.2") s2 = v;
  }
  CHECK(commit == kSha);
  CHECK(s1 == "families:decode;gpu_uuid:gpu-1;git_commit:" + kSha + ";date_utc:");
  CHECK(s2 == "families:elementwise;gpu_uuid:gpu-2;git_commit:" + other + ";date_utc:");
  // A family measured twice, an unknown commit: refused.
  CHECK_FALSE(merge_profiles({{"a.csv", family_profile("decode", kSha, 1)}, {"b.csv", family_profile("decode", other, 1)}},
                             &merged, &err, true));
  CHECK(err.find("already") != std::string::npos);
  CHECK_FALSE(merge_profiles({{"a.csv", family_profile("decode", kSha, 1)}, {"b.csv", family_profile("gemm", "unknown", 1)}},
                             &merged, &err, true));
}

TEST_CASE("merge --sessions of an already merged profile keeps its session lines and adds one") {
  const std::string other = "fedcba9876543210fedcba9876543210fedcba98";
  const std::string third = "0123456789012345678901234567890123456789";
  std::string first, merged, err;
  REQUIRE(merge_profiles({{"a.csv", family_profile("decode", kSha, 2)}, {"b.csv", family_profile("quest", other, 1, "gpu-2")}},
                         &first, &err, true));
  REQUIRE(merge_profiles({{"profile.csv", first}, {"c.csv", family_profile("minference", third, 1, "gpu-3")}}, &merged,
                         &err, true));
  ParsedProfile p;
  REQUIRE(parse_profile(merged, &p, &err));
  CHECK(p.rows.size() == 4);
  std::vector<std::pair<std::string, std::string>> sessions;
  std::string families;
  for (const auto& [k, v] : p.provenance) {
    if (k.rfind("session.", 0) == 0) sessions.emplace_back(k, v);
    if (k == "families") families = v;
  }
  REQUIRE(sessions.size() == 3);
  CHECK(sessions[0] == std::make_pair(std::string("session.1"), "families:decode;gpu_uuid:gpu-1;git_commit:" + kSha + ";date_utc:"));
  CHECK(sessions[1] == std::make_pair(std::string("session.2"), "families:quest;gpu_uuid:gpu-2;git_commit:" + other + ";date_utc:"));
  CHECK(sessions[2] ==
        std::make_pair(std::string("session.3"), "families:minference;gpu_uuid:gpu-3;git_commit:" + third + ";date_utc:"));
  CHECK(families == "decode,quest,minference");
  // A family the merged profile already holds is refused.
  CHECK_FALSE(merge_profiles({{"profile.csv", first}, {"c.csv", family_profile("quest", third, 1, "gpu-3")}}, &merged,
                             &err, true));
  CHECK(err.find("already") != std::string::npos);
}

TEST_CASE("merge --sessions --add-variants adds a later session's new variants of a family, never a second measurement") {
  const std::string other = "fedcba9876543210fedcba9876543210fedcba98";
  std::string first, merged, err;
  REQUIRE(merge_profiles({{"a.csv", family_profile("ceiling", kSha, 2)}, {"b.csv", family_profile("decode", kSha, 1)}},
                         &first, &err));
  // The later session measured v0, v1 again (dropped: the first session's stay) and v2, v3 (new).
  const std::vector<ProfileInput> two = {{"profile.csv", first}, {"c.csv", family_profile("ceiling", other, 4, "gpu-2")}};
  CHECK_FALSE(merge_profiles(two, &merged, &err, true));  // without the flag: one session per family
  CHECK(err.find("--add-variants") != std::string::npos);
  CHECK_FALSE(merge_profiles(two, &merged, &err, false, true));  // the flag needs --sessions
  REQUIRE(merge_profiles(two, &merged, &err, true, true));
  ParsedProfile p;
  REQUIRE(parse_profile(merged, &p, &err));
  REQUIRE(p.rows.size() == 5);
  std::vector<std::string> medians;  // of kernel ceiling, in file order
  for (const auto& r : p.rows)
    if (r[0] == "ceiling") medians.push_back(r[1] + "=" + r[16]);
  CHECK(medians == std::vector<std::string>{"v0=1.000", "v1=2.000", "v2=3.000", "v3=4.000"});
  std::string s2, families;
  for (const auto& [k, v] : p.provenance) {
    if (k == "session.2") s2 = v;
    if (k == "families") families = v;
  }
  CHECK(s2 == "families:ceiling;added:v2+v3;dropped_rows:2;gpu_uuid:gpu-2;git_commit:" + other + ";date_utc:");
  CHECK(families == "ceiling,decode");
  // Nothing new: refused.
  CHECK_FALSE(merge_profiles({{"profile.csv", first}, {"c.csv", family_profile("ceiling", other, 2, "gpu-2")}}, &merged,
                             &err, true, true));
  CHECK(err.find("adds no kernel variant") != std::string::npos);
}

TEST_CASE("a known commit is a hex SHA, optionally dirty") {
  CHECK(is_known_commit(kSha));
  CHECK(is_known_commit("e471fb1"));
  CHECK(is_known_commit(kSha + "-dirty"));
  CHECK_FALSE(is_known_commit("unknown"));
  CHECK_FALSE(is_known_commit(""));
  CHECK_FALSE(is_known_commit(kSha + " (build)"));
  CHECK_FALSE(is_known_commit("-dirty"));
}

TEST_CASE("merge --repeat drops the rows of the input a second run did not repeat, and records it") {
  const std::string other = "fedcba9876543210fedcba9876543210fedcba98";
  // A second run of family gemm on the same card: row v0 repeats within 1 %, v1 is 10 % off,
  // v2 was not measured again.
  std::ostringstream os;
  ProfileWriter w(os);
  w.write_provenance({{"format", "servesim-kernel-profile"}, {"schema_version", "1"}, {"gpu_uuid", "gpu-2"},
                      {"git_commit", other}, {"mode", "full"}, {"families", "gemm"}, {"command", "again"}});
  for (const auto& [variant, median] : std::vector<std::pair<std::string, double>>{{"v0", 1.01}, {"v1", 2.2}}) {
    ProfileRow r;
    r.kernel = "gemm";
    r.variant = variant;
    r.median_us = median;
    w.write_row(r);
  }
  const ProfileInput repeat{"again.csv", os.str()};
  const std::vector<ProfileInput> two = {{"a.csv", family_profile("decode", kSha, 2)},
                                         {"b.csv", family_profile("gemm", other, 3, "gpu-2")}};
  std::string merged, err;
  REQUIRE(merge_profiles(two, &merged, &err, true, false, &repeat));
  ParsedProfile p;
  REQUIRE(parse_profile(merged, &p, &err));
  std::vector<std::string> gemm_variants;
  for (const auto& row : p.rows)
    if (row[0] == "gemm") gemm_variants.push_back(row[1]);
  CHECK(gemm_variants == std::vector<std::string>{"v0", "v2"});
  std::string s2;
  for (const auto& [k, v] : p.provenance)
    if (k == "session.2") s2 = v;
  CHECK(s2 == "families:gemm;repeat:gemm;repeat_checked:2;unrepeated_dropped:1;gpu_uuid:gpu-2;git_commit:" + other +
               ";date_utc:");
  // One run's parts (no --sessions): the check applies to the input with R's families, wherever
  // it is, and a `# repeat=` line records it; a later --sessions merge carries it into that
  // input's session line.
  const std::vector<ProfileInput> run = {{"gemm.csv", family_profile("gemm", other, 3, "gpu-2")},
                                         {"decode.csv", family_profile("decode", other, 2, "gpu-2")}};
  std::string one_run;
  REQUIRE(merge_profiles(run, &one_run, &err, false, false, &repeat));
  CHECK(one_run.find("# repeat=gemm;repeat_checked:2;unrepeated_dropped:1\n") != std::string::npos);
  ParsedProfile q;
  REQUIRE(parse_profile(one_run, &q, &err));
  CHECK(q.rows.size() == 4);  // gemm v0 and v2, decode v0 and v1
  REQUIRE(merge_profiles({{"a.csv", family_profile("quest", kSha, 1)}, {"run.csv", one_run}}, &merged, &err, true));
  CHECK(merged.find("# session.2=families:gemm,decode;repeat:gemm;repeat_checked:2;unrepeated_dropped:1;gpu_uuid:gpu-2") !=
        std::string::npos);
  CHECK(merged.find("# repeat=") == std::string::npos);
  // A plain merge keeps the first input's `# repeat=` line, as the rest of its provenance.
  std::string again;
  REQUIRE(merge_profiles({{"run.csv", one_run}, {"andpro.csv", family_profile("andpro", other, 1, "gpu-2")}}, &again, &err));
  CHECK(again.find("# repeat=gemm;repeat_checked:2;unrepeated_dropped:1\n") != std::string::npos);
  // A repeat from another card, or of other families, is refused.
  const std::vector<ProfileInput> other_card = {{"a.csv", family_profile("decode", kSha, 2)},
                                                {"b.csv", family_profile("gemm", other, 3, "gpu-3")}};
  CHECK_FALSE(merge_profiles(other_card, &merged, &err, true, false, &repeat));
  CHECK(err.find("gpu_uuid") != std::string::npos);
  const ProfileInput not_gemm{"again.csv", family_profile("andpro", other, 2, "gpu-2")};
  CHECK_FALSE(merge_profiles(two, &merged, &err, true, false, &not_gemm));
  CHECK(err.find("families") != std::string::npos);
  // A median that is not a number > 0, in the repeat or in a row of the input it checks, is
  // refused with the file, the line and the column (it is not counted as a row that did not repeat).
  ProfileInput bad_repeat = repeat;
  bad_repeat.text.replace(bad_repeat.text.find("1.010"), 5, "abc");
  CHECK_FALSE(merge_profiles(two, &merged, &err, true, false, &bad_repeat));
  CHECK(err == "again.csv: line 9, column median_us: 'abc' is not a positive number");
  std::vector<ProfileInput> bad_input = two;
  bad_input[1].text.replace(bad_input[1].text.find("2.000"), 5, "0");
  CHECK_FALSE(merge_profiles(bad_input, &merged, &err, true, false, &repeat));
  CHECK(err.find("b.csv: line ") == 0);
  CHECK(err.find(", column median_us: '0' is not a positive number") != std::string::npos);
}
