// Tests of the calibrated backend's configuration (backend auto and its
// profile lookup, attention methods and their errors, Quest's KV metadata)
// and of the visible effects of attention methods on small scenarios, with a
// profile GENERATED from known formulas (costmodel/synthetic_profile.h).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "configs/cost_noise.h"
#include "configs/run_builder.h"
#include "configs/sensitivity.h"
#include "configs/config_test_util.h"
#include "costmodel/synthetic_profile.h"

using namespace servesim;
using servesim::testing::synthetic_profile_path;
using servesim::testing::temp_dir;
namespace fs = std::filesystem;

namespace {

std::string scenario(const std::string& extra, const std::string& workload) {
  return "name: t\nseed: 5\nmodel: llama-3.1-8b\nhardware: h100-sxm\ncluster: {workers: 1}\n"
         "report: {requests_csv: false, timeline_interval_s: 0}\n" +
         extra + "\nworkload:\n" + workload;
}

const char* kSmallWorkload = R"(  type: synthetic
  requests: 20
  clients:
    - {name: a, rate: 5, prompt: {dist: fixed, value: 1000}, output: {dist: fixed, value: 20}}
)";

ScenarioConfig parse(const std::string& yaml) {
  fs::path p = temp_dir() / "scenario.yaml";
  std::ofstream(p) << yaml;
  return load_scenario(p.string(), {});
}

std::string error_of(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string calibrated(const std::string& attention) {
  return "cost_model: {backend: calibrated, profile: " + synthetic_profile_path() + "}\nattention: " + attention;
}

double summary_value(const RunOutput& out, const std::string& key) {
  for (const auto& [k, v] : out.summary)
    if (k == key) return std::stod(v);
  FAIL("no summary field " << key);
  return 0;
}

RunOutput run(const std::string& yaml, const std::string& name) {
  ScenarioConfig c = parse(yaml);
  RunOptions o;
  o.out_dir = (temp_dir() / name).string();
  o.progress = false;
  return execute_run(c, o);
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) { setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

}  // namespace

TEST_CASE("backend auto is roofline and says uncalibrated while no measured profile exists") {
  ScopedEnv env("SERVESIM_PROFILE_DIR", (temp_dir() / "empty_profiles").string());
  ScenarioConfig c = parse(scenario("", kSmallWorkload));
  CHECK(c.cost_model.backend == CostBackend::kRoofline);
  CHECK(c.cost_model.auto_selected.value);
  CHECK(make_cost_model(c, c.workers[0])->identity().find("uncalibrated") != std::string::npos);
}

TEST_CASE("backend auto uses a measured profile found under the profile folder, and refuses a synthetic one") {
  fs::path dir = temp_dir() / "profiles";
  fs::create_directories(dir / "h100-sxm");
  // A stand-in for a measured profile: the generated one without its synthetic
  // flag (test only; real profiles come from servesim-kernels bench).
  SyntheticOptions o;
  std::string text = synthetic_profile_csv(o);
  text.erase(text.find("# synthetic=true\n"), 17);
  std::ofstream(dir / "h100-sxm" / "profile.csv") << text;
  ScopedEnv env("SERVESIM_PROFILE_DIR", dir.string());
  ScenarioConfig c = parse(scenario("", kSmallWorkload));
  CHECK(c.cost_model.backend == CostBackend::kCalibrated);
  CHECK(c.workers[0].profile == fs::absolute(dir / "h100-sxm" / "profile.csv").lexically_normal().string());
  auto m = make_cost_model(c, c.workers[0]);
  CHECK(m->calibrated());
  CHECK(m->identity().find("calibrated: profile") == 0);
  CHECK(c.resolved()["cost_model"]["backend"].as<std::string>() == "calibrated");
  std::ofstream(dir / "h100-sxm" / "profile.csv") << synthetic_profile_csv(o);
  CHECK(error_of(scenario("", kSmallWorkload)).find("is a SYNTHETIC profile") != std::string::npos);
}

TEST_CASE("a measured profile prices only its own GPU: a same-name hardware with other speeds is roofline under "
          "auto and an error under calibrated") {
  fs::path dir = temp_dir() / "profiles_speed";
  fs::create_directories(dir / "h100-sxm");
  SyntheticOptions o;
  std::string text = synthetic_profile_csv(o);
  text.erase(text.find("# synthetic=true\n"), 17);  // stand-in for a measured profile, as above
  std::ofstream(dir / "h100-sxm" / "profile.csv") << text;
  ScopedEnv env("SERVESIM_PROFILE_DIR", dir.string());
  auto with_hw = [](const std::string& hw, const std::string& extra) {
    std::string y = scenario(extra, kSmallWorkload);
    y.replace(y.find("hardware: h100-sxm"), 18, "hardware: " + hw);
    return y;
  };
  // Memory is read from the spec by the calibrated model too: still calibrated.
  CHECK(parse(with_hw("{name: H100-SXM, memory_gb: 40}", "")).cost_model.backend == CostBackend::kCalibrated);
  for (const char* hw : {"{name: H100-SXM, mem_bandwidth_gbps: 1000}", "{name: H100-SXM, bf16_tflops: 500}",
                         "{name: H100-SXM, sms: 66}"}) {
    CAPTURE(hw);
    ScenarioConfig c = parse(with_hw(hw, ""));
    CHECK(c.cost_model.backend == CostBackend::kRoofline);
    const std::string e = error_of(with_hw(hw, "cost_model: {backend: calibrated}"));
    CHECK(e.find("cannot price it") != std::string::npos);
    CHECK(e.find("where its hardware file") != std::string::npos);
  }
  // A worker override with other speeds under worker 0's name: the whole run is roofline.
  ScenarioConfig c = parse(scenario("", kSmallWorkload));
  CHECK(c.cost_model.backend == CostBackend::kCalibrated);
  std::string y = scenario("", kSmallWorkload);
  y.replace(y.find("cluster: {workers: 1}"), 21,
            "cluster: {workers: 2, overrides: [{worker: 1, hardware: {name: H100-SXM, mem_bandwidth_gbps: 1000}}]}");
  CHECK(parse(y).cost_model.backend == CostBackend::kRoofline);
}

TEST_CASE("attention methods and their parameters are parsed, resolved and checked") {
  ScenarioConfig c = parse(scenario(calibrated(R"({prefill: minference, decode: quest, kv: andpro,
  quest: {budget: 1024}, minference: {patterns: {vs_30_2048: 0.5, bs_100: 0.5}, min_length: 16384},
  andpro: {budget: 1024, window: 64}})"), kSmallWorkload));
  const AttentionConfig& a = c.workers[0].attention;
  CHECK(a.prefill == PrefillMethod::kMInference);
  CHECK(a.quest.budget == 1024);
  CHECK(a.minference.patterns.size() == 2);
  CHECK(a.minference.min_length == 16384);
  CHECK(a.andpro.window == 64);
  YAML::Node r = c.resolved();
  CHECK(r["attention"]["minference"]["patterns"]["bs_100"].as<double>() == 0.5);
  CHECK(r["attention"]["andpro"]["budget"].as<int>() == 1024);
  CHECK(a.andpro.layer_topk);  // issue 20 item 4: the paper's allocation is the default
  CHECK(r["attention"]["andpro"]["allocation"].as<std::string>() == "layer_topk");
  CHECK(parse(scenario(calibrated("{kv: andpro, andpro: {allocation: equal}}"), kSmallWorkload))
            .workers[0].attention.andpro.layer_topk == false);
  CHECK(error_of(scenario(calibrated("{kv: andpro, andpro: {allocation: adaptive}}"), kSmallWorkload))
            .find("allocation: expected layer_topk or equal, got 'adaptive'") != std::string::npos);
  CHECK(error_of(scenario(calibrated("{decode: sparse}"), kSmallWorkload))
            .find("attention.decode: unknown attention method 'sparse'; expected dense or quest") != std::string::npos);
  CHECK(error_of(scenario(calibrated("{minference: {patterns: {vs_30_2048: 0.5}}}"), kSmallWorkload))
            .find("head shares must sum to 1") != std::string::npos);
  CHECK(error_of(scenario(calibrated("{andpro: {budget: 1000}}"), kSmallWorkload))
            .find("must be a multiple of block (16)") != std::string::npos);
  CHECK(error_of(scenario(calibrated("{prefill: minference, minference: {patterns: vs_1000_6096}}"), kSmallWorkload))
            .find("pattern 'vs_1000_6096' has no measured minf_attention rows") != std::string::npos);
  CHECK(error_of(scenario("cost_model: {backend: roofline}\nattention: {decode: quest}", kSmallWorkload))
            .find("only the calibrated backend prices") != std::string::npos);
  CHECK(error_of(scenario("cost_model: {backend: calibrated, profile: nope.csv}", kSmallWorkload))
            .find("nope.csv: cannot open kernel profile") != std::string::npos);
}

TEST_CASE("Quest's page metadata costs KV capacity, the other methods keep the pool") {
  ScenarioConfig dense = parse(scenario(calibrated("{prefill: dense}"), kSmallWorkload));
  ScenarioConfig quest = parse(scenario(calibrated("{decode: quest}"), kSmallWorkload));
  ScenarioConfig andpro = parse(scenario(calibrated("{kv: andpro, prefill: minference}"), kSmallWorkload));
  const double share = 30.0 / (32.0 * 16.0);  // 2 key vectors per page on 30 of 32 layers
  CHECK(static_cast<double>(quest.workers[0].kv.pages) ==
        doctest::Approx(static_cast<double>(dense.workers[0].kv.pages) / (1 + share)).epsilon(1e-4));
  CHECK(andpro.workers[0].kv.pages == dense.workers[0].kv.pages);
}

TEST_CASE("visible effect: Quest lowers TPOT on long-context decode-heavy work") {
  const std::string work = R"(  type: synthetic
  requests: 24
  clients:
    - {name: a, rate: 2, prompt: {dist: fixed, value: 32000}, output: {dist: fixed, value: 400}}
)";
  const RunOutput dense = run(scenario(calibrated("{decode: dense}"), work), "quest_dense");
  const RunOutput quest = run(scenario(calibrated("{decode: quest}"), work), "quest_sparse");
  const double d = summary_value(dense, "tpot_mean_s"), q = summary_value(quest, "tpot_mean_s");
  MESSAGE("TPOT mean: dense " << d * 1e3 << " ms, quest " << q * 1e3 << " ms");
  CHECK(q < 0.8 * d);
}

TEST_CASE("visible effect: MInference lowers TTFT on long prompts and changes nothing on short ones") {
  auto work = [](int prompt) {
    return "  type: synthetic\n  requests: 12\n  clients:\n    - {name: a, rate: 0.5, prompt: {dist: fixed, value: " +
           std::to_string(prompt) + "}, output: {dist: fixed, value: 8}}\n";
  };
  const RunOutput long_dense = run(scenario(calibrated("{prefill: dense}"), work(65536)), "minf_long_dense");
  const RunOutput long_minf = run(scenario(calibrated("{prefill: minference}"), work(65536)), "minf_long_sparse");
  const RunOutput short_dense = run(scenario(calibrated("{prefill: dense}"), work(4096)), "minf_short_dense");
  const RunOutput short_minf = run(scenario(calibrated("{prefill: minference}"), work(4096)), "minf_short_sparse");
  const double ld = summary_value(long_dense, "ttft_mean_s"), lm = summary_value(long_minf, "ttft_mean_s");
  const double sd = summary_value(short_dense, "ttft_mean_s"), sm = summary_value(short_minf, "ttft_mean_s");
  MESSAGE("TTFT mean 64K: dense " << ld * 1e3 << " ms, minference " << lm * 1e3 << " ms; 4K: dense " << sd * 1e3
                                  << " ms, minference " << sm * 1e3 << " ms");
  CHECK(lm < 0.7 * ld);
  CHECK(sm == sd);  // below min_length MInference falls back to the dense kernel
}

TEST_CASE("visible effect: AnDPro fits more requests in memory and raises throughput under memory pressure") {
  // memory_utilization 0.3 leaves about 45K KV tokens on one H100: three 12K
  // prompts. After its prefill an AnDPro request keeps 2048 + 32 tokens.
  const std::string memory = "batching: {memory_utilization: 0.3}\n";
  const std::string work = R"(  type: synthetic
  requests: 60
  clients:
    - {name: a, rate: 20, prompt: {dist: fixed, value: 12000}, output: {dist: fixed, value: 300}}
)";
  const RunOutput dense = run(scenario(memory + calibrated("{kv: none}"), work), "andpro_dense");
  const RunOutput andpro = run(scenario(memory + calibrated("{kv: andpro}"), work), "andpro_evict");
  const WorkerStats& d = dense.workers[0];
  const WorkerStats& a = andpro.workers[0];
  const double dt = summary_value(dense, "output_tokens_per_s"), at = summary_value(andpro, "output_tokens_per_s");
  MESSAGE("peak running: dense " << d.peak_running << ", andpro " << a.peak_running << "; output tok/s: dense " << dt
                                 << ", andpro " << at << "; preemptions: dense " << d.preemptions << ", andpro "
                                 << a.preemptions << "; KV capacity " << d.kv_capacity_pages << " pages");
  CHECK(summary_value(andpro, "finished") == 60);
  CHECK(a.kv_evicted_tokens >= 60 * (12000 - 2080));  // more when a preempted request recomputes
  CHECK(d.kv_evicted_tokens == 0);
  CHECK(a.peak_running >= 2 * d.peak_running);
  CHECK(at > 1.5 * dt);
  CHECK(a.peak_kv_pages <= a.kv_capacity_pages);
}

TEST_CASE("estimate noise changes what policies see, not the simulated truth") {
  const std::string work = R"(  type: synthetic
  requests: 200
  clients:
    - {name: a, rate: 40, prompt: {dist: uniform, min: 100, max: 4000}, output: {dist: uniform, min: 10, max: 300}}
)";
  auto yaml = [&](const char* global, double noise) {
    return "name: t\nseed: 5\nmodel: llama-3.1-8b\nhardware: h100-sxm\ncluster: {workers: 3}\n"
           "report: {requests_csv: false, timeline_interval_s: 0}\npolicy: {global: " + std::string(global) +
           "}\ncost_model: {backend: calibrated, profile: " + synthetic_profile_path() +
           ", estimate_noise: " + std::to_string(noise) + "}\nworkload:\n" + work;
  };
  auto ttft = [&](const char* global, double noise, const char* name) {
    return summary_value(run(yaml(global, noise), name), "ttft_mean_s");
  };
  // Round robin ignores estimates: identical runs. Least-load routes by them.
  CHECK(ttft("round_robin", 0, "rr0") == ttft("round_robin", 0.5, "rr5"));
  CHECK(ttft("least_load", 0, "ll0") != ttft("least_load", 0.5, "ll5"));
  CHECK(parse(yaml("least_load", 0.5)).resolved()["cost_model"]["estimate_noise"].as<double>() == 0.5);
}

TEST_CASE("cost_model.time_scale multiplies the engine's iteration times, policies estimate unscaled") {
  // One request alone on a fixed-cost worker: every iteration 10 ms, so its TTFT is one
  // iteration and its E2E five; at time_scale 1.5 both are 1.5x, exactly.
  const std::string work = "  type: synthetic\n  requests: 1\n  clients:\n    - {name: a, rate: 1, "
                           "prompt: {dist: fixed, value: 100}, output: {dist: fixed, value: 5}}\n";
  auto yaml = [&](const std::string& scale) {
    return "name: t\nseed: 5\nmodel: llama-3.1-8b\nhardware: h100-sxm\ncluster: {workers: 1}\n"
           "report: {requests_csv: false, timeline_interval_s: 0}\n"
           "cost_model: {backend: fixed, base_ms: 10, per_prefill_token_us: 0, per_decode_token_us: 0" +
           scale + "}\nworkload:\n" + work;
  };
  const RunOutput plain = run(yaml(""), "scale_plain");
  const RunOutput scaled = run(yaml(", time_scale: 1.5"), "scale_1_5");
  CHECK(summary_value(plain, "ttft_mean_s") == doctest::Approx(0.010));
  CHECK(summary_value(scaled, "ttft_mean_s") == doctest::Approx(0.015));
  CHECK(summary_value(scaled, "e2e_mean_s") == doctest::Approx(1.5 * summary_value(plain, "e2e_mean_s")));
  CHECK(scaled.cost_identity.find("x time_scale=1.5") != std::string::npos);
  CHECK(plain.cost_identity.find("time_scale") == std::string::npos);
  // Written back only when not 1 (config.resolved.yaml of every other scenario unchanged).
  CHECK(parse(yaml(", time_scale: 1.5")).resolved()["cost_model"]["time_scale"].as<double>() == 1.5);
  CHECK(!parse(yaml("")).resolved()["cost_model"]["time_scale"]);
  CHECK_THROWS_WITH_AS(parse(yaml(", time_scale: 0")), doctest::Contains("time_scale"), InputError);
  CHECK_THROWS_WITH_AS(parse(yaml(", time_scale: 20")), doctest::Contains("time_scale"), InputError);
}

TEST_CASE("run_sensitivity reruns at time_scale x (1 -/+ pct) and compares each metric with the base run") {
  const std::string yaml =
      "name: t\nseed: 5\nmodel: llama-3.1-8b\nhardware: h100-sxm\ncluster: {workers: 1}\n"
      "report: {requests_csv: false, timeline_interval_s: 0}\n"
      "cost_model: {backend: fixed, base_ms: 10, per_prefill_token_us: 0, per_decode_token_us: 0}\nworkload:\n"
      "  type: synthetic\n  requests: 1\n  clients:\n    - {name: a, rate: 1, prompt: {dist: fixed, value: 100}, "
      "output: {dist: fixed, value: 5}}\n";
  const ScenarioConfig c = parse(yaml);
  const RunOutput base = run(yaml, "sens_base");
  const SensitivityResult s = run_sensitivity(c, base, 10);
  CHECK(s.faster_scale == doctest::Approx(0.9));
  CHECK(s.slower_scale == doctest::Approx(1.1));
  const SensitivityRow* ttft = nullptr;
  for (const SensitivityRow& r : s.rows)
    if (r.metric == "ttft_s" && r.stat == "mean") ttft = &r;
  REQUIRE(ttft != nullptr);
  CHECK(*ttft->value == doctest::Approx(0.010));
  CHECK(*ttft->faster == doctest::Approx(0.009));  // one request alone: exactly the scale
  CHECK(*ttft->slower == doctest::Approx(0.011));
  const std::string csv = sensitivity_csv(s);
  const std::size_t at = csv.find("\nttft_s,mean,");
  REQUIRE(at != std::string::npos);
  CHECK(csv.substr(at, csv.find('\n', at + 1) - at).ends_with(",-0.100000,0.100000"));
  CHECK_THROWS_AS(run_sensitivity(c, base, 0), InputError);
  CHECK_THROWS_AS(run_sensitivity(c, base, 21), InputError);
}

TEST_CASE("AnDPro keeps the uncompressed shared prefix in the prefix cache for later requests") {
  // Three 8192-token prompts sharing all 16 blocks of 512 tokens, 5 s apart.
  fs::path trace = temp_dir() / "shared_prefix.csv";
  std::ofstream(trace) << "id,client,arrival_ns,prompt_tokens,output_tokens,prefix_block_size,prefix_blocks\n"
                          "0,a,0,8192,50,512,1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
                          "1,a,5000000000,8192,50,512,1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
                          "2,a,10000000000,8192,50,512,1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n";
  const std::string work = "  type: trace\n  path: " + trace.string() + "\n";
  const RunOutput dense = run(scenario(calibrated("{kv: none}"), work), "andpro_prefix_dense");
  const RunOutput andpro = run(scenario(calibrated("{kv: andpro}"), work), "andpro_prefix_evict");
  // Later prompts match all but their last token (it is always computed: the
  // prefix cap is prompt - 1), either way.
  CHECK(andpro.workers[0].cached_tokens == 2 * (8192 - 1));
  CHECK(dense.workers[0].cached_tokens == andpro.workers[0].cached_tokens);
  CHECK(andpro.workers[0].kv_evicted_tokens == 3 * (8192 - 2080));
  CHECK(summary_value(andpro, "finished") == 3);
}

TEST_CASE("cost_model.stack picks a measured profile per GPU and engine stack") {
  const std::string a100 = "name: t\nseed: 5\nmodel: llama-3.1-8b\nhardware: a100-80gb\ncluster: {workers: 1}\n"
                           "report: {requests_csv: false, timeline_interval_s: 0}\n";
  SUBCASE("a named stack") {
    const ScenarioConfig c =
        parse(a100 + "cost_model: {stack: vidur-2024}\nworkload:\n" + kSmallWorkload);
    CHECK(c.cost_model.backend == CostBackend::kCalibrated);
    CHECK(c.cost_model.stack == "vidur-2024");
    CHECK(c.workers.front().profile.ends_with("a100-80gb/vidur-2024/profile.csv"));
    CHECK(YAML::Dump(c.resolved()).find("stack: vidur-2024") != std::string::npos);
  }
  SUBCASE("an unknown stack names the known ones") {
    const std::string e = error_of(a100 + "cost_model: {stack: vllm-9}\nworkload:\n" + kSmallWorkload);
    CHECK(e.find("no measured profile of engine stack 'vllm-9'") != std::string::npos);
    CHECK(e.find("vidur-2024") != std::string::npos);
    CHECK(e.find("cost_model") != std::string::npos);
  }
  SUBCASE("a stack the GPU lacks: auto falls back to the roofline, calibrated is an error") {
    // h200 has only our own profile.
    const std::string h200 = "name: t\nseed: 5\nmodel: llama-3.1-8b\nhardware: h200\ncluster: {workers: 1}\n"
                             "report: {requests_csv: false, timeline_interval_s: 0}\n";
    CHECK(parse(h200 + "cost_model: {stack: vllm-0.14}\nworkload:\n" + kSmallWorkload).cost_model.backend ==
          CostBackend::kRoofline);
    const std::string e =
        error_of(h200 + "cost_model: {backend: calibrated, stack: vllm-0.14}\nworkload:\n" + kSmallWorkload);
    CHECK(e.find("no measured kernel profile for hardware 'H200' (stack vllm-0.14)") != std::string::npos);
  }
}

TEST_CASE("backend auto: our own profile first, then a public stack, else the roofline") {
  auto stack_of = [](const std::string& hw) {
    const ScenarioConfig c = parse("name: t\nseed: 5\nmodel: llama-3.1-8b\nhardware: " + hw +
                                   "\ncluster: {workers: 1}\nreport: {requests_csv: false, timeline_interval_s: 0}\n"
                                   "workload:\n" + kSmallWorkload);
    REQUIRE(c.cost_model.backend == CostBackend::kCalibrated);
    return c.workers.front().profile;
  };
  CHECK(stack_of("h100-sxm").ends_with("h100-sxm/profile.csv"));  // our own bench's
  CHECK(stack_of("h200").ends_with("h200/profile.csv"));
  CHECK(stack_of("a100-80gb").ends_with("a100-80gb/vllm-0.14/profile.csv"));  // no own profile: vLLM 0.14's tables
  const ScenarioConfig other = parse(
      "name: t\nseed: 5\nmodel: llama-3.1-8b\nhardware: {name: B200-Test, memory_gb: 180, mem_bandwidth_gbps: 8000, "
      "bf16_tflops: 2250, tp_allreduce_gbps: 900, sms: 148, l2_mb: 126}\ncluster: {workers: 1}\n"
      "report: {requests_csv: false, timeline_interval_s: 0}\nworkload:\n" + std::string(kSmallWorkload));
  CHECK(other.cost_model.backend == CostBackend::kRoofline);
}

TEST_CASE("variance.cost_noise: auto takes the measured profile's spread for repetitions, profile needs one") {
  auto on = [](const std::string& hw, const std::string& variance) {
    return "name: t\nseed: 5\nmodel: llama-3.1-8b\nhardware: " + hw +
           "\ncluster: {workers: 2}\nreport: {requests_csv: false, timeline_interval_s: 0}\nvariance: " + variance +
           "\nworkload:\n" + kSmallWorkload;
  };
  SUBCASE("auto: profile among repetitions on our own H100 profile, none for a single run") {
    const ScenarioConfig rep = parse(on("h100-sxm", "{repetitions: true}"));
    REQUIRE(rep.cost_model.backend == CostBackend::kCalibrated);
    CHECK(rep.variance.cost_noise == VarianceConfig::CostNoise::kProfile);
    const double sigma = rep.cost_model.fits.at(rep.workers.front().profile)->spread_sigma();
    CHECK(sigma > 0.001);
    CHECK(sigma < 0.1);  // kernel jitter, percent level
    CHECK(cost_noise_sigma(rep, rep.workers.back()) == sigma);
    CHECK(YAML::Dump(rep.resolved()).find("cost_noise: profile") != std::string::npos);
    const ScenarioConfig single = parse(on("h100-sxm", "{}"));
    CHECK(single.variance.cost_noise == VarianceConfig::CostNoise::kNone);
    CHECK(cost_noise_sigma(single, single.workers.front()) == 0);
    CHECK(!single.variance.active());
  }
  SUBCASE("auto on imported medians (A100, vLLM 0.14 tables) and on the roofline: none") {
    CHECK(parse(on("a100-80gb", "{repetitions: true}")).variance.cost_noise == VarianceConfig::CostNoise::kNone);
    const ScenarioConfig roof = parse(on("h100-sxm", "{repetitions: true}") + "cost_model: {backend: roofline}\n");
    CHECK(roof.variance.cost_noise == VarianceConfig::CostNoise::kNone);
  }
  SUBCASE("profile without a spread is an error naming the key and why") {
    std::string e = error_of(on("a100-80gb", "{cost_noise: profile}"));
    CHECK(e.find("variance.cost_noise") != std::string::npos);
    CHECK(e.find("medians only") != std::string::npos);
    e = error_of(on("h100-sxm", "{cost_noise: profile}") + "cost_model: {backend: roofline}\n");
    CHECK(e.find("variance.cost_noise") != std::string::npos);
    CHECK(e.find("roofline backend") != std::string::npos);
  }
  SUBCASE("a given sigma on any backend, bounded, and round-tripped") {
    const ScenarioConfig c = parse(on("h100-sxm", "{cost_noise: 0.02}") + "cost_model: {backend: roofline}\n");
    CHECK(c.variance.cost_noise == VarianceConfig::CostNoise::kSigma);
    CHECK(cost_noise_sigma(c, c.workers.front()) == 0.02);
    CHECK(YAML::Dump(c.resolved()).find("cost_noise: 0.02") != std::string::npos);
    CHECK(error_of(on("h100-sxm", "{cost_noise: 2}")).find("variance.cost_noise") != std::string::npos);
    const std::string e = error_of(on("h100-sxm", "{cost_noise: lots}"));
    CHECK(e.find("unknown cost noise 'lots'; expected auto, none, profile or a number in [0, 1]") != std::string::npos);
  }
}

TEST_CASE("cost noise varies the engine's times with the seed, and the same seed repeats them exactly") {
  const std::string base = "name: t\nmodel: llama-3.1-8b\nhardware: h100-sxm\ncluster: {workers: 1}\n"
                           "report: {requests_csv: false, timeline_interval_s: 0}\nvariance: {cost_noise: 0.05}\n"
                           "workload:\n" + std::string(kSmallWorkload);
  const RunOutput a = run("seed: 5\n" + base, "cn_a");
  const RunOutput again = run("seed: 5\n" + base, "cn_a2");
  const RunOutput b = run("seed: 6\n" + base, "cn_b");
  CHECK(summary_value(a, "e2e_mean_s") == summary_value(again, "e2e_mean_s"));
  CHECK(summary_value(a, "e2e_mean_s") != summary_value(b, "e2e_mean_s"));
  const RunOutput plain = run("seed: 5\n" + base.substr(0, base.find("variance:")) +
                                  base.substr(base.find("workload:")), "cn_plain");
  // Only the noise differs (the synthetic workload is drawn from the same seed).
  CHECK(summary_value(a, "e2e_mean_s") != summary_value(plain, "e2e_mean_s"));
  CHECK(summary_value(a, "e2e_mean_s") == doctest::Approx(summary_value(plain, "e2e_mean_s")).epsilon(0.05));
  CHECK(a.cost_identity.find("run-to-run noise sigma=0.05") != std::string::npos);
}

TEST_CASE("a hardware name longer than a file name can be is looked up without a filesystem exception") {
  // Found by fuzz_scenario (2026-11-26): backend auto looked for costmodel/profiles/<name>/profile.csv
  // with std::filesystem::exists(), which throws ENAMETOOLONG past 255 bytes.
  const std::string name(300, 'v');
  const std::string yaml = "name: t\nseed: 5\nmodel: llama-3.1-8b\nhardware: {name: " + name +
                           ", memory_gb: 80, mem_bandwidth_gbps: 3350, bf16_tflops: 989, tp_allreduce_gbps: 450, "
                           "sms: 132, l2_mb: 50}\ncluster: {workers: 1}\n"
                           "report: {requests_csv: false, timeline_interval_s: 0}\nworkload:\n" + kSmallWorkload;
  ScenarioConfig c;
  CHECK_NOTHROW(c = parse(yaml));
  CHECK(c.cost_model.backend == CostBackend::kRoofline);  // no profile can exist under such a name
  const std::string e = error_of(yaml + "cost_model: {backend: calibrated}\n");
  CHECK(e.find("cost_model") != std::string::npos);
  CHECK(error_of(yaml + "cost_model: {backend: roofline, knobs: " + name + ".yaml}\n").find("cost_model.knobs") !=
        std::string::npos);
}
