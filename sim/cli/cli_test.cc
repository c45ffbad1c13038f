// Command-line tests: runs the servesim program and checks exit codes and
// messages of usage errors and bad paths (docs/failure.md): usage errors exit
// 2 with CLI11's message, never 104-109; a bad path exits 2 naming it.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>
#include <utility>
#include <string>
#include <vector>

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
  // One stderr file per test process: ctest runs the test cases in parallel.
  const fs::path err = temp_dir("stderr_" + std::to_string(::getpid())) / "err.txt";
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

TEST_CASE("command-line usage errors exit 2 with CLI11's message, and --help exits 0") {
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

TEST_CASE("a shard with no points (more shards than points) exits 0, and compare and report of it exit 2") {
  fs::path d = temp_dir("empty_shard");
  std::ofstream(d / "s.yaml") << "name: s\nbase: " << kScenario
                              << "\nset: {workload.requests: 20}\ngrid: {seed: [1, 2]}\n";
  CHECK(servesim("sweep " + (d / "s.yaml").string() + " --out " + (d / "out").string() + " --shard 3/4").code == 0);
  Result r = servesim("compare " + (d / "out").string());
  CHECK(r.code == 2);
  CHECK(r.err.find("no completed runs") != std::string::npos);
  CHECK(servesim("report " + (d / "out").string() + " -o " + (d / "r.html").string()).code == 2);
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

TEST_CASE("run prints its warnings on stdout after the summary, on stderr under --quiet") {
  // cache_aware on 4 workers and a light synthetic load without prefix blocks:
  // every request lands on one worker (docs/reports.md, "Warnings").
  const fs::path d = temp_dir("warnings");
  const std::string run = std::string(SERVESIM_BIN) + " run " + kScenario + " --out " + (d / "run").string() +
                          " --set policy.global=cache_aware --set workload.requests=20";
  auto capture = [&](const std::string& flags) {
    const std::string cmd = run + flags + " >" + (d / "out.txt").string() + " 2>" + (d / "err.txt").string();
    CHECK(std::system(cmd.c_str()) == 0);
    std::stringstream out, err;
    out << std::ifstream(d / "out.txt").rdbuf();
    err << std::ifstream(d / "err.txt").rdbuf();
    return std::pair{out.str(), err.str()};
  };
  auto [out, err] = capture("");
  CHECK(out.find("summary.json") != std::string::npos);  // listed among the outputs
  CHECK(out.find("\nwarning: worker 0 did 100.0% of the busy time of 4 workers") != std::string::npos);
  CHECK(err.find("warning:") == std::string::npos);
  std::tie(out, err) = capture(" --quiet");
  CHECK(out.empty());
  CHECK(err.find("warning: worker 0 did 100.0%") != std::string::npos);
  CHECK(err.find("cache_aware") != std::string::npos);
  // Without the cause, no warning.
  const std::string plain = std::string(SERVESIM_BIN) + " run " + kScenario + " --quiet --out " +
                            (d / "rr").string() + " --set workload.requests=20 2>" + (d / "err.txt").string();
  CHECK(std::system(plain.c_str()) == 0);
  std::stringstream e;
  e << std::ifstream(d / "err.txt").rdbuf();
  CHECK(e.str().find("warning:") == std::string::npos);
}

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("SERVESIM_HUGE_PAGES: off gives the same outputs, a bad value exits 2 naming it") {
  const fs::path d = temp_dir("huge_pages");
  const std::string run = std::string(SERVESIM_BIN) + " run " + kScenario + " --quiet --set workload.requests=200";
  for (const char* v : {"on", "off"}) {
    const std::string cmd = std::string("SERVESIM_HUGE_PAGES=") + v + " " + run + " --out " + (d / v).string();
    REQUIRE(std::system(cmd.c_str()) == 0);
  }
  for (const char* f : {"requests.csv", "summary.csv"}) {
    CHECK_FALSE(slurp(d / "on" / f).empty());
    CHECK(slurp(d / "on" / f) == slurp(d / "off" / f));
  }
  const std::string bad = "SERVESIM_HUGE_PAGES=maybe " + run + " --out " + (d / "bad").string() + " 2>" +
                          (d / "err.txt").string();
  const int status = std::system(bad.c_str());
  CHECK((WIFEXITED(status) ? WEXITSTATUS(status) : -1) == 2);
  const std::string err = slurp(d / "err.txt");
  CHECK(err.find("servesim: error:") != std::string::npos);
  CHECK(err.find("SERVESIM_HUGE_PAGES: 'maybe'") != std::string::npos);
  CHECK_FALSE(fs::exists(d / "bad"));
}

TEST_CASE("run --record-batches: byte-identical on rerun, the run's outputs unchanged, --record-every needs it") {
  // (sampling every k-th iteration: reports/batch_recorder_test.cc)
  const fs::path d = temp_dir("record");
  const std::string base = "run " + kScenario + " --quiet --set workload.requests=40";
  REQUIRE(servesim(base + " --out " + (d / "plain").string()).code == 0);
  REQUIRE(servesim(base + " --out " + (d / "a").string() + " --record-batches " + (d / "a.csv").string()).code == 0);
  REQUIRE(servesim(base + " --out " + (d / "b").string() + " --record-batches " + (d / "b.csv").string()).code == 0);
  const std::string rec = slurp(d / "a.csv");
  CHECK(rec.rfind("# servesim batch record v1\n", 0) == 0);
  CHECK(rec.find("\niteration,worker,start_ns,predicted_ns,attention,") != std::string::npos);
  CHECK(rec == slurp(d / "b.csv"));
  CHECK(slurp(d / "a" / "summary.csv") == slurp(d / "plain" / "summary.csv"));
  CHECK(slurp(d / "a" / "requests.csv") == slurp(d / "plain" / "requests.csv"));
  Result r = servesim(base + " --record-every 4");
  CHECK(r.code == 2);
  CHECK(r.err.find("--record-every requires --record-batches") != std::string::npos);
}

TEST_CASE("run --sensitivity: sensitivity.csv beside an unchanged run, the summary printed, bad values exit 2") {
  const fs::path d = temp_dir("sensitivity");
  const std::string base = "run " + kScenario + " --set workload.requests=40";
  REQUIRE(servesim(base + " --quiet --out " + (d / "plain").string()).code == 0);
  const std::string cmd = std::string(SERVESIM_BIN) + " " + base + " --out " + (d / "s").string() +
                          " --sensitivity 2 >" + (d / "out.txt").string();
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::stringstream printed;
  printed << std::ifstream(d / "out.txt").rdbuf();
  CHECK(printed.str().find("sensitivity: every iteration 2% faster / slower than priced") != std::string::npos);
  CHECK(slurp(d / "s" / "summary.csv") == slurp(d / "plain" / "summary.csv"));  // the run itself is unchanged
  const std::string csv = slurp(d / "s" / "sensitivity.csv");
  CHECK(csv.rfind("metric,stat,value,faster,slower,change_faster,change_slower\n", 0) == 0);
  CHECK(csv.find("\nttft_s,mean,") != std::string::npos);
  CHECK(csv.find("\ne2e_s,p99,") != std::string::npos);
  // A later run without the flag removes the stale file.
  REQUIRE(servesim(base + " --quiet --out " + (d / "s").string()).code == 0);
  CHECK(!fs::exists(d / "s" / "sensitivity.csv"));
  CHECK(servesim(base + " --quiet --sensitivity 25").code == 2);
  const Result r = servesim(base + " --quiet --sensitivity 1 --repeat 2");
  CHECK(r.code == 2);
  CHECK(r.err.find("--sensitivity") != std::string::npos);
}

TEST_CASE("calibrate fidelity: exact errors of a synthetic replay, a bad replay exits 2 naming file, line and field") {
  const fs::path d = temp_dir("fidelity");
  // measured = predicted / 1.25 (decode_only: error 0.25), predicted / 0.8 (prefill_heavy: error 0.2).
  std::ofstream(d / "replay.csv") << "iteration,prefills,decodes,measured_us,predicted_us\n"
                                     "0,,5;6,80,100\n"
                                     "1,64:0:1,,250,200\n";
  REQUIRE(servesim("calibrate fidelity " + (d / "replay.csv").string() + " --out " + (d / "out").string()).code == 0);
  const std::string csv = slurp(d / "out" / "fidelity.csv");
  CHECK(csv.find("recorded,kind,decode_only,1,0.250000,0.250000,0.250000,0.250000,0.800000\n") != std::string::npos);
  CHECK(csv.find("recorded,kind,prefill_heavy,1,0.200000,0.200000,0.200000,-0.200000,1.250000\n") != std::string::npos);
  CHECK(csv.find("recorded,all,all,2,0.225000,") != std::string::npos);
  CHECK(fs::exists(d / "out" / "DONE"));
  std::ofstream(d / "bad.csv") << "iteration,prefills,decodes,measured_us,predicted_us\n0,,5,-1,100\n";
  Result r = servesim("calibrate fidelity " + (d / "bad.csv").string() + " --out " + (d / "out2").string());
  CHECK(r.code == 2);
  CHECK(r.err.find((d / "bad.csv").string() + ":2: field 'measured_us'") != std::string::npos);
}

TEST_CASE("compare prints two runs side by side (exit 0) and plot --format with a bad entry exits 2 naming it") {
  fs::path d = temp_dir("compare");
  for (const char* r : {"a", "b"}) {
    Result run = servesim("run " + kScenario + " --quiet --set workload.requests=30 --out " + (d / r).string());
    REQUIRE(run.code == 0);
  }
  CHECK(servesim("compare " + (d / "a").string() + " " + (d / "b").string() + " --out " + (d / "cmp.csv").string())
            .code == 0);
  std::ifstream in(d / "cmp.csv");
  std::string header;
  std::getline(in, header);
  CHECK(header.rfind("config,runs,warnings,throughput_rps_mean,throughput_rps_ci95", 0) == 0);
  CHECK(servesim("compare " + (d / "a").string() + " " + (d / "b").string() + " --runs --out " + (d / "runs.csv").string())
            .code == 0);
  std::ifstream runs(d / "runs.csv");
  std::getline(runs, header);
  CHECK(header.rfind("run,finished,unfinished", 0) == 0);
  Result base = servesim("compare " + (d / "a").string() + " " + (d / "b").string() + " --baseline nosuch");
  CHECK(base.code == 2);
  CHECK(base.err.find("--baseline nosuch: no such configuration") != std::string::npos);
  Result bad = servesim("compare " + d.string());
  CHECK(bad.code == 2);
  CHECK(bad.err.find(d.string()) != std::string::npos);
  Result fmt = servesim("plot " + (d / "a").string() + " --format png,gif");
  CHECK(fmt.code == 2);
  CHECK(fmt.err.find("gif") != std::string::npos);
}

TEST_CASE("ltr train into a folder that does not exist yet creates it") {
  fs::path d = temp_dir("ltr");
  const fs::path model = d / "models" / "ltr" / "model.yaml";
  {
    std::ofstream t(d / "trace.csv");
    t << "arrival_s,prompt_tokens,output_tokens\n";
    for (int i = 0; i < 60; ++i) t << i * 0.1 << "," << 10 + (i * 37) % 490 << "," << 1 + (i * 53) % 300 << "\n";
  }
  Result r = servesim("ltr train " + (d / "trace.csv").string() + " --steps 20 -o " + model.string());
  CHECK(r.code == 0);
  CHECK(fs::is_regular_file(model));
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

namespace {
// Runs `servesim ARGS` with stdout and stderr as given (shell redirections); the exit
// code, or 128 + the signal that ended it.
int servesim_status(const std::string& args, const std::string& redirections) {
  const std::string cmd = std::string(SERVESIM_BIN) + " " + args + " " + redirections;
  const int status = std::system(("exec " + cmd).c_str());
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}
}  // namespace

TEST_CASE("a full disk on stdout or stderr is exit 2, never an abort or exit 0 (issue 34)") {
  fs::path d = temp_dir("full");
  if (!fs::exists("/dev/full")) return;  // Linux only
  // An error printed while stderr is on a full disk: was SIGABRT (a throw inside the catch).
  CHECK(servesim_status("run " + (d / "missing.yaml").string(), ">/dev/null 2>/dev/full") == 2);
  CHECK(servesim_status("frobnicate", ">/dev/null 2>/dev/full") == 2);
  // stdout lost: the summary of run, trace stats, compare and the sweep table.
  const std::string run = "run " + kScenario + " --set workload.requests=5 --out " + (d / "a").string();
  CHECK(servesim_status(run, ">/dev/full 2>/dev/null") == 2);
  REQUIRE(servesim_status(run, ">/dev/null 2>/dev/null") == 0);
  CHECK(servesim_status("compare " + (d / "a").string() + " " + (d / "a").string(), ">/dev/full 2>/dev/null") == 2);
  std::ofstream(d / "t.csv") << "arrival_ns,prompt_tokens,output_tokens\n0,4,4\n";
  CHECK(servesim_status("trace stats " + (d / "t.csv").string(), ">/dev/full 2>/dev/null") == 2);
  CHECK(servesim_status("trace stats " + (d / "t.csv").string(), ">/dev/null 2>/dev/null") == 0);
  std::ofstream(d / "s.yaml") << "name: s\nbase: " << kScenario << "\ngrid: {seed: [1]}\n";
  const std::string sweep = "sweep " + (d / "s.yaml").string() + " --set workload.requests=5 --out " + (d / "sw").string();
  CHECK(servesim_status(sweep, ">/dev/full 2>/dev/null") == 2);
  // The error names standard output.
  Result r;
  {
    const fs::path err = d / "err.txt";
    servesim_status(run, ">/dev/full 2>" + err.string());
    std::ifstream in(err);
    std::stringstream ss;
    ss << in.rdbuf();
    r.err = ss.str();
  }
  CHECK(r.err.find("servesim: error: writing standard output") != std::string::npos);
}

TEST_CASE("CLI messages: unknown commands suggest the nearest, integer options say so, usage errors say servesim: error:") {
  Result r = servesim("frobnicate");
  CHECK(r.code == 2);
  CHECK(r.err.find("servesim: error: unknown command 'frobnicate'") != std::string::npos);
  r = servesim("swep x.yaml");
  CHECK(r.err.find("did you mean 'sweep'?") != std::string::npos);
  fs::path d = temp_dir("msgs");
  std::ofstream(d / "s.yaml") << "name: s\nbase: " << kScenario << "\ngrid: {seed: [1]}\n";
  r = servesim("sweep " + (d / "s.yaml").string() + " --jobs 0");
  CHECK(r.code == 2);
  CHECK(r.err.find("0 is out of range: an integer from 1 to 2147483647") != std::string::npos);
  CHECK(r.err.find("1.797e308") == std::string::npos);
  r = servesim("sweep " + (d / "s.yaml").string() + " --repeat abc");
  CHECK(r.code == 2);
  CHECK(r.err.find("'abc' is not an integer") != std::string::npos);
  r = servesim("sweep " + (d / "s.yaml").string() + " --repeat 1001");
  CHECK(r.err.find("an integer from 1 to 1000") != std::string::npos);
  for (const char* usage : {"", "run", "run --no-such-flag", "sweep"}) {
    r = servesim(usage);
    CHECK(r.code == 2);
    CHECK(r.err.rfind("servesim: error: ", 0) == 0);
  }
}

TEST_CASE("run --out into a sweep's point folder is refused, and a FIFO as scenario or trace is refused, not waited on") {
  fs::path d = temp_dir("foreign");
  fs::create_directories(d / "sw" / "points" / "p0");
  std::ofstream(d / "sw" / "points" / "p0" / "point.yaml") << "config_key: x\n";
  Result r = servesim("run " + kScenario + " --quiet --set workload.requests=5 --out " + (d / "sw" / "points" / "p0").string());
  CHECK(r.code == 2);
  CHECK(r.err.find("is a point of a sweep") != std::string::npos);
  CHECK_FALSE(fs::exists(d / "sw" / "points" / "p0" / "summary.csv"));
  const fs::path fifo = d / "fifo.yaml";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  r = servesim("run " + fifo.string());
  CHECK(r.code == 2);
  CHECK(r.err.find(fifo.string() + ": is a FIFO, not a regular file") != std::string::npos);
  r = servesim("trace stats " + fifo.string() + " --format native_csv");
  CHECK(r.code == 2);
  CHECK(r.err.find("is a FIFO") != std::string::npos);
}

namespace {
// A 60-request native trace over 60 s and a one-worker scenario replaying it.
fs::path trace_scenario(const fs::path& d) {
  std::ofstream t(d / "trace.csv");
  t << "id,client,arrival_ns,prompt_tokens,output_tokens\n";
  for (int i = 0; i < 60; ++i)
    t << i << "," << (i % 3 ? "a" : "b") << "," << static_cast<long long>(i) * 1000000000LL << "," << 200 + 37 * (i % 7)
      << "," << 20 + 11 * (i % 5) << "\n";
  t.close();
  std::ofstream(d / "s.yaml") << "name: tiny_trace\nseed: 3\nmodel: llama-3-8b\nhardware: h100-sxm\n"
                                 "cluster: {workers: 1}\nworkload: {type: trace, path: "
                              << (d / "trace.csv").string() << "}\nreport: {timeline_interval_s: 0}\n";
  return d / "s.yaml";
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("run --repeat on a trace resamples it by default, and identical repetitions are a warning, not an interval") {
  fs::path d = temp_dir("repeat");
  const fs::path s = trace_scenario(d);
  // Default (variance.resample auto): the repetitions are block bootstraps of the trace: they differ.
  REQUIRE(servesim("run " + s.string() + " --repeat 3 --jobs 2 --set variance.block_s=5 --out " + (d / "boot").string())
              .code == 0);
  const std::string boot = read_text(d / "boot" / "sweep_summary.csv");
  CHECK(boot.find("repetitions are identical") == std::string::npos);
  CHECK(fs::exists(d / "boot" / "points" / "p0000-811c9dc5-r002" / "config.resolved.yaml"));
  CHECK(read_text(d / "boot" / "points" / "p0000-811c9dc5-r000" / "config.resolved.yaml").find("block_bootstrap") !=
        std::string::npos);
  // Resampling off, cost noise on by default (H100's own profile has a measured spread): the runs differ.
  Result noisy = servesim("run " + s.string() + " --repeat 3 --set variance.resample=none --out " + (d / "noisy").string());
  REQUIRE(noisy.code == 0);
  CHECK(read_text(d / "noisy" / "points" / "p0000-811c9dc5-r001" / "config.resolved.yaml").find("cost_noise: profile") !=
        std::string::npos);
  CHECK(read_text(d / "noisy" / "sweep_summary.csv").find("repetitions are identical") == std::string::npos);
  // Resampling and cost noise off: the seed moves nothing in this replay, so the runs are identical.
  const std::string out = (d / "same").string();
  const std::string cmd = std::string(SERVESIM_BIN) + " run " + s.string() +
                          " --repeat 3 --set variance.resample=none --set variance.cost_noise=none --out " + out +
                          " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string stdout_text;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) stdout_text.append(buf, n);
  CHECK(pclose(p) == 0);
  CHECK(stdout_text.find("warning: the 3 repetitions are identical") != std::string::npos);
  CHECK(stdout_text.find("identical_repetitions") != std::string::npos);
  const std::string same = read_text(d / "same" / "sweep_summary.csv");
  CHECK(same.find("repetitions are identical") != std::string::npos);
}

TEST_CASE("typos get the nearest command or option") {
  Result r = servesim("rn " + kScenario);
  CHECK(r.code == 2);
  CHECK(r.err.find("did you mean 'run'?") != std::string::npos);
  r = servesim("run " + kScenario + " --repeats 3");
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown option '--repeats' for 'run'; did you mean '--repeat'?") != std::string::npos);
  r = servesim("compare /tmp --basline x");
  CHECK(r.code == 2);
  CHECK(r.err.find("did you mean '--baseline'?") != std::string::npos);
}

TEST_CASE("an empty measurement window is an error-level warning with empty rates and fairness") {
  fs::path d = temp_dir("empty_window");
  const std::string out = (d / "run").string();
  Result r = servesim("run " + kScenario + " --quiet --set workload.requests=50 --set report.window.warmup_s=1e6 --out " +
                      out);
  CHECK(r.code == 0);
  CHECK(r.err.find("error: the measurement window") != std::string::npos);
  std::ifstream in(d / "run" / "summary.csv");
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  // The cells of jain_service_rate and throughput_rps are empty (",,"), not 1 and 0.
  auto cell = [&](const std::string& name) {
    std::vector<std::string> h, v;
    std::stringstream hs(header);
    for (std::string x; std::getline(hs, x, ',');) h.push_back(x);
    // The row has quoted cells with commas; the cost model column is quoted: split respecting quotes.
    std::string cur;
    bool q = false;
    for (char c : row) {
      if (c == '"') q = !q;
      else if (c == ',' && !q) v.push_back(cur), cur.clear();
      else cur += c;
    }
    v.push_back(cur);
    for (std::size_t i = 0; i < h.size() && i < v.size(); ++i)
      if (h[i] == name) return v[i];
    return std::string("<absent>");
  };
  CHECK(cell("jain_service_rate").empty());
  CHECK(cell("service_diff_max").empty());
  CHECK(cell("throughput_rps").empty());
  CHECK(cell("run_jain_service_rate") != "");
  CHECK(cell("warnings").rfind("error: ", 0) == 0);
}

TEST_CASE("trace gen writes the stream a run replays, its variance sources included") {
  fs::path d = temp_dir("gen_variance");
  const fs::path s = trace_scenario(d);
  REQUIRE(servesim("trace gen " + s.string() + " -o " + (d / "plain.csv").string()).code == 0);
  REQUIRE(servesim("trace gen " + s.string() + " -o " + (d / "same.csv").string()).code == 0);
  REQUIRE(servesim("trace gen " + s.string() + " -o " + (d / "boot.csv").string() +
                   " --set variance.resample=block_bootstrap --set variance.block_s=5")
              .code == 0);
  CHECK(read_text(d / "plain.csv") == read_text(d / "same.csv"));  // deterministic
  CHECK(read_text(d / "plain.csv") != read_text(d / "boot.csv"));  // resampled
}
