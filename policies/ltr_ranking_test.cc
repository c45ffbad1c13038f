// LTR ranking components: Kendall τ-b against an O(n²) reference, the noisy
// oracle's τ accuracy, the learned ranker (honest features, beats random,
// model files round-trip), and both on the shared real traces.
#include <doctest/doctest.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>

#include <sys/resource.h>
#include <unistd.h>

#include "policies/kendall_tau.h"
#include "policies/ltr_ranker.h"
#include "policies/noisy_oracle.h"
#include "sim/core/error.h"
#include "sim/core/rng.h"
#include "traces/trace_workload.h"

using namespace servesim;

namespace {

// τ-b by definition: every pair once.
double naive_tau_b(const std::vector<double>& x, const std::vector<double>& y) {
  double con = 0, dis = 0, tx = 0, ty = 0, n0 = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = i + 1; j < x.size(); ++j) {
      ++n0;
      const double a = x[i] - x[j], b = y[i] - y[j];
      if (a == 0) ++tx;
      if (b == 0) ++ty;
      if (a * b > 0) ++con;
      if (a * b < 0) ++dis;
    }
  if (n0 == tx || n0 == ty) return 0;
  return (con - dis) / std::sqrt((n0 - tx) * (n0 - ty));
}

// A heavy-tailed integer output length (lognormal, median ~e^4.5, capped like max_tokens).
std::int64_t heavy_tailed_output(Rng& rng) {
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::exp(4.5 + 1.1 * rng.normal())), 1, 2000);
}

// Synthetic requests whose output length depends on honest features: the
// client (8 tenants with different typical lengths), the prompt length, the
// session turn, plus lognormal noise.
std::vector<RequestSpec> feature_driven_requests(int n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<RequestSpec> v;
  for (int i = 0; i < n; ++i) {
    RequestSpec r;
    r.id = static_cast<RequestId>(i);
    r.client = static_cast<ClientId>(rng.below(8));
    r.prompt_tokens = 16 + static_cast<std::int64_t>(std::exp(5 + 1.2 * rng.normal()));
    r.turn = static_cast<std::int32_t>(rng.below(5));
    r.session = 1 + rng.below(100);
    const double mu = 3.0 + 0.35 * r.client - 0.25 * std::log(static_cast<double>(r.prompt_tokens)) + 0.2 * r.turn;
    r.output_tokens = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::exp(mu + 0.6 * rng.normal())), 1, 4000);
    v.push_back(r);
  }
  return v;
}

}  // namespace

TEST_CASE("kendall tau-b matches the O(n^2) definition, with and without ties") {
  CHECK(kendall_tau_b(std::vector<double>{12, 2, 1, 12, 2}, std::vector<double>{1, 4, 7, 1, 0}) ==
        doctest::Approx(-0.47140452079103173));  // scipy.stats.kendalltau's example
  CHECK(kendall_tau_b(std::vector<double>{1, 2, 3}, std::vector<double>{10, 20, 30}) == doctest::Approx(1));
  CHECK(kendall_tau_b(std::vector<double>{1, 2, 3}, std::vector<double>{3, 2, 1}) == doctest::Approx(-1));
  CHECK(kendall_tau_b(std::vector<double>{1, 1, 1}, std::vector<double>{3, 2, 1}) == 0);
  CHECK(kendall_tau_b(std::vector<double>{}, std::vector<double>{}) == 0);
  Rng rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 1 + rng.below(300);
    const std::uint64_t levels = 1 + rng.below(trial % 2 ? 8 : 1000);  // heavy ties on odd trials
    std::vector<double> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = static_cast<double>(rng.below(levels));
      y[i] = rng.uniform() < 0.5 ? x[i] + static_cast<double>(rng.below(levels)) : static_cast<double>(rng.below(levels));
    }
    REQUIRE(kendall_tau_b(x, y) == doctest::Approx(naive_tau_b(x, y)).epsilon(1e-12));
  }
}

TEST_CASE("noisy oracle lands within 0.03 of the target tau on 50K heavy-tailed requests") {
  constexpr int kN = 50000;
  for (double target : {0.3, 0.6, 0.9}) {
    NoisyOracle oracle(target, 42);
    Rng rng(7);
    std::vector<double> pred(kN), truth(kN);
    for (int i = 0; i < kN; ++i) {
      RequestSpec r;
      r.id = static_cast<RequestId>(i);
      r.output_tokens = heavy_tailed_output(rng);
      pred[i] = -oracle.score(r);
      truth[i] = static_cast<double>(r.output_tokens);
    }
    const double tau = kendall_tau_b(pred, truth);
    MESSAGE("noisy oracle target " << target << ": achieved tau " << tau << " (sigma " << oracle.sigma() << ")");
    CHECK(std::abs(tau - target) <= 0.03);
  }
}

TEST_CASE("the bivariate-normal sigma formula hits the target on continuous lengths") {
  constexpr int kN = 50000;
  for (double target : {0.3, 0.6, 0.9}) {
    Rng rng(3);
    const double sd = 1.1, sigma = noisy_oracle_sigma(target, sd * sd);
    std::vector<double> pred(kN), truth(kN);
    for (int i = 0; i < kN; ++i) {
      const double log_len = 4.5 + sd * rng.normal();
      truth[i] = log_len;
      pred[i] = log_len - sigma * rng.normal();  // = −(−log + σz)
    }
    const double tau = kendall_tau_b(pred, truth);
    MESSAGE("formula target " << target << ": tau " << tau);
    CHECK(std::abs(tau - target) <= 0.03);
  }
  CHECK(noisy_oracle_sigma(1.0, 2.0) == doctest::Approx(0).epsilon(1e-9));
  CHECK(std::isinf(noisy_oracle_sigma(0.0, 2.0)));
}

TEST_CASE("learned features never look at the output length") {
  for (const RequestSpec& r : feature_driven_requests(200, 5)) {
    RequestSpec other = r;
    other.output_tokens = r.output_tokens * 7 + 13;
    std::vector<SparseFeature> a, b;
    ltr_features(r, a);
    ltr_features(other, b);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].index == b[i].index);
      CHECK(a[i].value == b[i].value);
      CHECK(a[i].index < kLtrFeatureDim);
    }
  }
}

TEST_CASE("the learned ranker beats random on held-out requests when length depends on honest features") {
  const std::vector<RequestSpec> all = feature_driven_requests(10000, 9);
  const std::span<const RequestSpec> train(all.data(), 8000), test(all.data() + 8000, 2000);
  CHECK(ltr_tau(LtrModel(), test) == 0);  // an untrained model ranks nothing
  for (LtrLoss loss : {LtrLoss::kListMle, LtrLoss::kPairwise}) {
    LtrTrainOptions o;
    o.loss = loss;
    const LtrModel m = train_ltr_model(train, o);
    const double tau = ltr_tau(m, test);
    MESSAGE(ltr_loss_name(loss) << ": held-out tau " << tau << " (train " << ltr_tau(m, train) << ")");
    CHECK(tau > 0.1);
    // Deterministic for a seed.
    CHECK(train_ltr_model(train, o).weights() == m.weights());
  }
}

TEST_CASE("a model file round-trips and bad model files are errors naming the file") {
  const std::vector<RequestSpec> all = feature_driven_requests(2000, 4);
  LtrTrainOptions o;
  o.steps = 50;
  const LtrModel m = train_ltr_model(all, o);
  const std::string path = (std::filesystem::temp_directory_path() /
                           ("servesim_ltr_model_test_" + std::to_string(::getpid()) + ".yaml"))
                              .string();
  LtrModelInfo info;
  info.trained_on = "synthetic";
  info.train_requests = 2000;
  info.holdout_tau = 0.5;
  save_ltr_model(m, info, path);
  LtrModelInfo back;
  const LtrModel loaded = load_ltr_model(path, &back);
  CHECK(back.trained_on == "synthetic");
  CHECK(back.train_requests == 2000);
  for (const RequestSpec& r : all) CHECK(loaded.score(r) == doctest::Approx(m.score(r)).epsilon(1e-8));

  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("ltr_model: {features: ltr-v0, dim: 3, weights: {}}\n", f);
    std::fclose(f);
  }
  CHECK_THROWS_WITH_AS(load_ltr_model(path), doctest::Contains("feature layout 'ltr-v0'"), InputError);
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fprintf(f, "ltr_model: {features: ltr-v1, dim: %d, weights: {0: 1.5, 99999: 2}}\n", kLtrFeatureDim);
    std::fclose(f);
  }
  CHECK_THROWS_WITH_AS(load_ltr_model(path), doctest::Contains("99999"), InputError);
  std::filesystem::remove(path);
}

namespace {

// All rows of a shared trace, or empty when the file is not there.
std::vector<RequestSpec> shared_trace(const std::string& rel, ClientTable& clients) {
  const std::string path = std::string(SERVESIM_SHARED_DIR) + "/traces/" + rel;
  if (!std::filesystem::exists(path)) return {};
  TraceOptions opt;
  opt.path = path;
  auto src = TraceWorkload(opt).open(clients, 1);
  std::vector<RequestSpec> v;
  RequestSpec r;
  while (src->next(r)) v.push_back(r);
  return v;
}

}  // namespace

TEST_CASE("on real traces the learned ranker beats random on the last 20% and the oracle hits its target") {
  // The oracle's τ on 1,500 LMSYS requests has a sampling spread of ~0.015,
  // plus the lag of its online calibration: a looser bound there.
  for (auto [rel, tolerance] : {std::pair<std::string, double>{"azure_llm_2023/AzureLLMInferenceTrace_conv.csv", 0.03},
                                {"vtc_lmsys/real_trace.csv", 0.05}}) {
    ClientTable clients;
    const std::vector<RequestSpec> all = shared_trace(rel, clients);
    if (all.empty()) {
      MESSAGE("skipped: " << rel << " not found under " << SERVESIM_SHARED_DIR);
      continue;
    }
    const std::size_t cut = all.size() - all.size() / 5;  // time split, as `servesim ltr train`
    const LtrModel m = train_ltr_model(std::span(all).first(cut), LtrTrainOptions{});
    const double tau = ltr_tau(m, std::span(all).subspan(cut));
    std::vector<double> pred, truth;
    NoisyOracle oracle(0.6, 42);
    for (const RequestSpec& r : all) {
      pred.push_back(-oracle.score(r));
      truth.push_back(static_cast<double>(r.output_tokens));
    }
    const double oracle_tau = kendall_tau_b(pred, truth);
    MESSAGE(rel << ": learned held-out tau " << tau << " (" << all.size() - cut << " requests, " << clients.size()
                << " clients); noisy oracle target 0.6 -> " << oracle_tau);
    CHECK(tau > 0.15);
    CHECK(std::abs(oracle_tau - 0.6) <= tolerance);
  }
}

TEST_CASE("saving a model on a full disk is an error naming the file and keeps the previous model (issue 16)") {
  const std::vector<RequestSpec> all = feature_driven_requests(500, 4);
  LtrTrainOptions o;
  o.steps = 20;
  const LtrModel m = train_ltr_model(all, o);
  const std::string path = (std::filesystem::temp_directory_path() /
                           ("servesim_ltr_full_disk_test_" + std::to_string(::getpid()) + ".yaml"))
                              .string();
  LtrModelInfo info;
  info.trained_on = "first";
  save_ltr_model(m, info, path);
  const auto size = std::filesystem::file_size(path);
  REQUIRE(size > 256);
  // RLIMIT_FSIZE fails a write past 256 bytes with EFBIG, as a full disk would.
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  rlimit l = saved;
  l.rlim_cur = 256;
  setrlimit(RLIMIT_FSIZE, &l);
  std::string err;
  info.trained_on = "second";
  try {
    save_ltr_model(m, info, path);
  } catch (const InputError& e) {
    err = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  CHECK(err.find(path) != std::string::npos);
  CHECK(err.find("failed") != std::string::npos);
  CHECK(std::filesystem::file_size(path) == size);  // the earlier model, whole
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
  LtrModelInfo back;
  (void)load_ltr_model(path, &back);
  CHECK(back.trained_on == "first");
  std::filesystem::remove(path);
}
