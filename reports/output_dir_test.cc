// Output-folder tests: the folder lock (two writers, readers beside a
// writer), temp-name-and-rename files, checked writes (a write beyond
// RLIMIT_FSIZE fails like a full disk), and stale-output removal.
#include <doctest/doctest.h>

#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <vector>

#include "reports/csv_writer.h"
#include "reports/output_dir.h"
#include "sim/core/error.h"
#include "sim/core/test_util.h"
#include "sim/core/time.h"

using namespace servesim;
namespace fs = std::filesystem;
using servesim::testing::slurp;

namespace {
fs::path temp_dir(const std::string& name) { return testing::fresh_temp_dir("servesim_output_dir_test", name); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("a second writer of a locked folder fails at once, naming the folder, the lock ends with its holder") {
  fs::path d = temp_dir("lock") / "out";
  {
    OutputLock first(d.string());  // creates the folder
    CHECK(fs::is_directory(d));
    std::string e = error_of([&] { OutputLock second(d.string()); });
    CHECK(e.find(d.string()) != std::string::npos);
    CHECK(e.find("in use by another servesim process") != std::string::npos);
    CHECK(e.find(kLockFile) != std::string::npos);
    // A reader (merge reading a shard) is refused while a writer holds it.
    CHECK_THROWS_AS(OutputLock(d.string(), OutputLock::Mode::kShared), InputError);
  }
  OutputLock again(d.string());  // released with its holder
  CHECK(fs::exists(d / kLockFile));
}

TEST_CASE("readers share a folder, and a writer is refused while any of them reads it") {
  fs::path d = temp_dir("shared");
  OutputLock r1(d.string(), OutputLock::Mode::kShared);  // no lock file yet: nothing to lock
  { OutputLock w(d.string()); }                           // creates the lock file
  OutputLock r2(d.string(), OutputLock::Mode::kShared);
  OutputLock r3(d.string(), OutputLock::Mode::kShared);
  CHECK_THROWS_AS(OutputLock(d.string()), InputError);
}

TEST_CASE("an output folder path that is a file is an error naming it") {
  fs::path d = temp_dir("file");
  std::ofstream(d / "f") << "x";
  std::string e = error_of([&] { OutputLock l((d / "f").string()); });
  CHECK(e.find((d / "f").string()) != std::string::npos);
  CHECK(e.find("not a folder") != std::string::npos);
}

TEST_CASE("an OutputFile appears only when committed, abandoned, it leaves nothing") {
  fs::path d = temp_dir("file_commit");
  {
    OutputFile f((d / "a.csv").string());
    f.write("hello\n");
    CHECK(fs::exists(d / "a.csv.tmp"));
    CHECK_FALSE(fs::exists(d / "a.csv"));
    f.commit();
  }
  CHECK(slurp(d / "a.csv") == "hello\n");
  CHECK_FALSE(fs::exists(d / "a.csv.tmp"));
  std::ofstream(d / "b.csv") << "old";
  {
    OutputFile f((d / "b.csv").string());
    f.write("new, not finished");
  }
  CHECK(slurp(d / "b.csv") == "old");  // never replaced by a partial file
  CHECK_FALSE(fs::exists(d / "b.csv.tmp"));
  {
    CsvWriter w((d / "c.csv").string());
    w.field(std::string_view("x")).end_row();
  }  // no close(): no file
  CHECK_FALSE(fs::exists(d / "c.csv"));
  CHECK_FALSE(fs::exists(d / "c.csv.tmp"));
}

TEST_CASE("a failed write (as on a full disk) is an error naming the file, and leaves no file") {
  fs::path d = temp_dir("full");
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  rlimit l = saved;
  l.rlim_cur = 1000;
  setrlimit(RLIMIT_FSIZE, &l);
  std::string e1 = error_of([&] { write_file((d / "big.yaml").string(), std::string(5000, 'x')); });
  std::string e2 = error_of([&] {
    CsvWriter w((d / "big.csv").string());
    for (int i = 0; i < 1000; ++i) w.field(std::int64_t{i}).end_row();
    w.close();
  });
  setrlimit(RLIMIT_FSIZE, &saved);
  CHECK(e1.find((d / "big.yaml").string() + ": ") != std::string::npos);
  CHECK(e1.find("failed") != std::string::npos);
  CHECK(e2.find((d / "big.csv").string() + ": ") != std::string::npos);
  for (const char* f : {"big.yaml", "big.yaml.tmp", "big.csv", "big.csv.tmp"}) CHECK_FALSE(fs::exists(d / f));
}

TEST_CASE("remove_outputs deletes the named files and their temporaries, nothing else") {
  fs::path d = temp_dir("stale");
  for (const char* f : {"DONE", "summary.csv", "summary.csv.tmp", "mine.csv", "requests.csv.tmp"})
    std::ofstream(d / f) << "x";
  remove_outputs(d.string(), {"DONE", "summary.csv", "requests.csv", "absent.csv"});
  CHECK_FALSE(fs::exists(d / "DONE"));
  CHECK_FALSE(fs::exists(d / "summary.csv"));
  CHECK_FALSE(fs::exists(d / "summary.csv.tmp"));
  CHECK_FALSE(fs::exists(d / "requests.csv.tmp"));
  CHECK(fs::exists(d / "mine.csv"));
}

TEST_CASE("seconds_ns writes exactly what seconds(time_to_seconds(ns)) writes") {
  fs::path d = testing::fresh_temp_dir("servesim_output_dir_test", "seconds_ns");
  std::vector<std::int64_t> ns = {0, 1, 499, 500, 501, 999, 1000, 1500, 2500, 999'999'499, 999'999'500, 999'999'501,
                                  1'000'000'000, 123'456'789'500, 999'999'999'999'999, 1'000'000'000'000'000,
                                  4'000'000'000'000'000'123, -1, -1500};
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 200000; ++i) {  // random times from ns to ~1e7 s, ties and near-ties included
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const std::int64_t t = static_cast<std::int64_t>(x % (std::uint64_t{1} << (10 + i % 44)));
    ns.push_back(t);
    ns.push_back(t - t % 1000 + 500);
    ns.push_back(t - t % 1000 + 499);
  }
  {
    CsvWriter a((d / "a.csv").string()), b((d / "b.csv").string());
    for (std::int64_t t : ns) {
      a.seconds(time_to_seconds(t)).end_row();
      b.seconds_ns(t).end_row();
    }
    a.close();
    b.close();
  }
  std::ifstream fa(d / "a.csv"), fb(d / "b.csv");
  std::string la, lb;
  std::size_t rows = 0, differ = 0;
  while (std::getline(fa, la) && std::getline(fb, lb)) {
    ++rows;
    if (la != lb && differ++ < 5) CHECK_MESSAGE(la == lb, "row " << rows);
  }
  CHECK(rows == ns.size());
  CHECK(differ == 0);
}
