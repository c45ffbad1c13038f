// Command-line tests: runs the servesim program and checks exit codes and
// messages of usage errors and bad paths (docs/failure.md): usage errors exit
// 2 with CLI11's message, never 104-109; a bad path exits 2 naming it.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {
struct Result {
  int code = -1;
  std::string err;
};

fs::path temp_dir(const std::string& name) {
  // Per process: CTest runs each case as its own process, several at once.
  fs::path d = fs::temp_directory_path() / ("servesim_cli_test_" + std::to_string(getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Runs `servesim ARGS` (a shell string), stdout discarded, stderr captured.
Result servesim(const std::string& args) {
  const fs::path err = temp_dir("stderr") / "err.txt";
  const std::string cmd = std::string(SERVESIM_BIN) + " " + args + " >/dev/null 2>" + err.string();
  const int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  return r;
}

const std::string kScenario = std::string(SERVESIM_SOURCE_DIR) + "/configs/scenarios/default.yaml";
}  // namespace

TEST_CASE("command-line usage errors exit 2 with CLI11's message; --help exits 0") {
  CHECK(servesim("--help").code == 0);
  CHECK(servesim("--version").code == 0);
  Result r = servesim("");  // no subcommand
  CHECK(r.code == 2);
  CHECK(r.err.find("subcommand") != std::string::npos);
  r = servesim("run");  // missing scenario
  CHECK(r.code == 2);
  CHECK(r.err.find("scenario") != std::string::npos);
  CHECK(servesim("run " + kScenario + " --no-such-flag").code == 2);
  CHECK(servesim("sweep x.yaml --jobs 0").code == 2);
}

TEST_CASE("--shard is K/N with 1 <= K <= N, checked while parsing") {
  fs::path d = temp_dir("shard");
  std::ofstream(d / "s.yaml") << "name: s\nbase: " << kScenario << "\ngrid: {seed: [1, 2]}\n";
  for (const char* bad : {"1/-2", "0/3", "4/3", "x"}) {
    Result r = servesim("sweep " + (d / "s.yaml").string() + " --out " + (d / "out").string() + " --shard " + bad);
    CHECK(r.code == 2);
    CHECK(r.err.find(std::string("--shard ") + bad) != std::string::npos);
  }
  CHECK_FALSE(fs::exists(d / "out"));  // refused before anything was written
}

TEST_CASE("a scenario path that is a folder, or an --out that is a file, exits 2 naming the path") {
  fs::path d = temp_dir("paths");
  Result r = servesim("run " + d.string());
  CHECK(r.code == 2);
  CHECK(r.err.find(d.string()) != std::string::npos);
  std::ofstream(d / "file") << "x";
  r = servesim("run " + kScenario + " --quiet --set workload.requests=5 --out " + (d / "file").string());
  CHECK(r.code == 2);
  CHECK(r.err.find((d / "file").string()) != std::string::npos);
  r = servesim("trace gen " + d.string() + " -o " + (d / "t.csv").string());
  CHECK(r.code == 2);  // was exit 1 with "basic_filebuf::underflow error reading the file"
  CHECK(r.err.find(d.string()) != std::string::npos);
  r = servesim("merge " + (d / "file").string());
  CHECK(r.code == 2);
  CHECK(r.err.find((d / "file").string()) != std::string::npos);
}

TEST_CASE("a sweep of 10^10 points is refused (exit 2) before it is expanded") {
  fs::path d = temp_dir("huge");
  std::ofstream f(d / "huge.yaml");
  f << "name: huge\nbase: " << kScenario << "\ngrid:\n";
  for (int k = 0; k < 10; ++k) f << "  seed" << k << ": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n";
  f.close();
  Result r = servesim("sweep " + (d / "huge.yaml").string() + " --out " + (d / "out").string());
  CHECK(r.code == 2);
  CHECK(r.err.find("above the limit of 100000 points") != std::string::npos);
}

TEST_CASE("calibrate on a full disk exits 2 naming the file and leaves no partial profile (issue 16)") {
  const fs::path d = temp_dir("calibrate_full");
  const std::string out = (d / "profile.csv").string();
  const std::string err = (d / "err.txt").string();
  // A 1 KiB file size limit fails writes as a full disk does (SIGXFSZ ignored: EFBIG instead).
  const std::string cmd = "trap '' XFSZ; ulimit -f 2; exec " + std::string(SERVESIM_BIN) +
                          " calibrate synth --quick -o " + out + " >/dev/null 2>" + err;
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  std::ifstream in(err);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str().find(out + ": write failed") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  CHECK_FALSE(fs::exists(out + ".tmp"));
  // Without the limit the same command writes the whole profile.
  CHECK(servesim("calibrate synth --quick -o " + out).code == 0);
  CHECK(fs::file_size(out) > 1024);
}
