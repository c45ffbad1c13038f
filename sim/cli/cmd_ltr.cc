// `servesim ltr train TRACE -o model.yaml`: trains the learned output-length
// ranker of the `ltr` policy offline (policies/ltr_ranker.h) and reports its
// Kendall τ on held-out requests. TRACE is a trace file (any format the
// trace readers know, clients as `clients: {by: auto}` assigns them) or a
// scenario YAML (its workload, seed and overrides). Only honest features are
// used; the held-out requests' lengths are read only to score the model.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "configs/scenario_config.h"
#include "policies/kendall_tau.h"
#include "policies/ltr_ranker.h"
#include "reports/output_dir.h"
#include "sim/cli/commands.h"
#include "sim/core/error.h"
#include "sim/core/rng.h"
#include "traces/trace_workload.h"
#include "traces/readers/trace_reader.h"

namespace servesim::cli {
namespace {

struct TrainArgs {
  std::string input;
  std::string out;
  std::string format = "auto";
  std::vector<std::string> sets;
  double holdout = 0.2;
  std::string split = "time";
  std::string loss = "listmle";
  int steps = LtrTrainOptions{}.steps;
  double l2 = LtrTrainOptions{}.l2;
  std::uint64_t seed = 1;
};

bool is_scenario(const std::string& path) {
  return path.ends_with(".yaml") || path.ends_with(".yml");
}

std::vector<RequestSpec> read_requests(const TrainArgs& a) {
  ClientTable clients;
  std::unique_ptr<RequestSource> src;
  if (is_scenario(a.input)) {
    ScenarioConfig c = load_scenario(a.input, a.sets);
    src = c.workload->open(clients, c.seed);
  } else {
    if (!a.sets.empty()) throw InputError("--set applies to a scenario YAML, not to a trace file");
    TraceOptions opt;
    opt.path = a.input;
    opt.read.format = parse_format(a.format, a.input);
    src = TraceWorkload(opt).open(clients, a.seed);
  }
  std::vector<RequestSpec> v;
  RequestSpec r;
  while (src->next(r)) v.push_back(r);
  return v;
}

void train(const TrainArgs& a) {
  if (!(a.holdout > 0 && a.holdout < 1)) throw InputError(fmt::format("--holdout must be in (0, 1), got {}", a.holdout));
  if (a.split != "time" && a.split != "random")
    throw InputError(fmt::format("--split must be time or random, got '{}'", a.split));
  LtrTrainOptions o;
  o.loss = parse_ltr_loss(a.loss);
  o.steps = a.steps;
  o.l2 = a.l2;
  o.seed = a.seed;

  std::vector<RequestSpec> all = read_requests(a);
  if (all.size() < 10) throw InputError(fmt::format("{}: {} requests; need at least 10 to train and hold out", a.input, all.size()));
  if (a.split == "random") {
    Rng shuffle(Rng::stream(a.seed, 0x5E1));
    for (std::size_t i = all.size(); i > 1; --i) std::swap(all[i - 1], all[shuffle.below(i)]);
  }
  // time: the source's order (arrival order); the last `holdout` share is held out.
  const auto n_test = std::max<std::size_t>(2, static_cast<std::size_t>(std::llround(a.holdout * static_cast<double>(all.size()))));
  const std::span<const RequestSpec> train_set(all.data(), all.size() - n_test), test_set(all.data() + all.size() - n_test, n_test);

  const LtrModel m = train_ltr_model(train_set, o);
  const double tau_test = ltr_tau(m, test_set), tau_train = ltr_tau(m, train_set);
  std::vector<double> prompt(test_set.size()), out(test_set.size());
  for (std::size_t i = 0; i < test_set.size(); ++i) {
    prompt[i] = static_cast<double>(test_set[i].prompt_tokens);
    out[i] = static_cast<double>(test_set[i].output_tokens);
  }
  LtrModelInfo info;
  info.trained_on = a.input;
  info.loss = o.loss;
  info.train_requests = static_cast<std::int64_t>(train_set.size());
  info.holdout_requests = static_cast<std::int64_t>(test_set.size());
  info.holdout_tau = tau_test;
  // The model's folder is created when missing (docs/ltr.md trains into models/ltr/...).
  if (const auto parent = std::filesystem::path(a.out).parent_path(); !parent.empty()) ensure_output_dir(parent.string());
  save_ltr_model(m, info, a.out);

  fmt::print("trained on {} requests of {} ({}, {} steps, {} split)\n", train_set.size(), a.input, ltr_loss_name(o.loss),
             o.steps, a.split);
  fmt::print("Kendall tau on {} held-out requests: {:.4f}   (training set: {:.4f}; prompt length alone: {:.4f})\n",
             test_set.size(), tau_test, tau_train, kendall_tau_b(prompt, out));
  std::vector<int> idx(static_cast<std::size_t>(kLtrFeatureDim));
  std::iota(idx.begin(), idx.end(), 0);
  std::partial_sort(idx.begin(), idx.begin() + 5, idx.end(),
                    [&](int x, int y) { return std::abs(m.weights()[x]) > std::abs(m.weights()[y]); });
  fmt::print("largest weights (positive = shorter):");
  for (int k = 0; k < 5; ++k) fmt::print(" {} {:+.3f}", ltr_feature_name(idx[k]), m.weights()[idx[k]]);
  fmt::print("\nwrote {} (use: policy: {{local: {{name: ltr, ranker: learned, model: {}}}}})\n", a.out, a.out);
}

}  // namespace

void add_ltr_commands(CLI::App& app) {
  CLI::App* ltr = app.add_subcommand("ltr", "Learned output-length ranker of the ltr policy");
  ltr->require_subcommand(1);
  auto a = std::make_shared<TrainArgs>();
  CLI::App* t = ltr->add_subcommand(
      "train", "Train the ranker on a trace (or a scenario's workload), print Kendall's tau on held-out requests, "
               "write the model YAML");
  t->add_option("input", a->input, "Trace file (" + trace_format_choices() + ") or scenario YAML")
      ->required()
      ->check(CLI::ExistingFile);
  t->add_option("-o,--out", a->out, "Model file to write (YAML)")->required();
  t->add_option("-f,--format", a->format, "Trace format: auto, " + trace_format_choices());
  t->add_option("--holdout", a->holdout, "Share of requests held out for evaluation (default 0.2)");
  t->add_option("--split", a->split, "time: hold out the last requests (default); random: a seeded random share");
  t->add_option("--loss", a->loss, "listmle (default, as the LTR paper) or pairwise");
  t->add_option("--steps", a->steps, "Training steps (full-batch Adam; default 300)");
  t->add_option("--l2", a->l2, fmt::format("L2 weight decay (default {})", LtrTrainOptions{}.l2));
  t->add_option("--seed", a->seed, "Seed of the list draws and the random split (default 1)");
  t->add_option("-s,--set", a->sets, "Override a key of a scenario input, e.g. --set workload.requests=5000")
      ->take_all()
      ->allow_extra_args(false);
  t->callback([a] { train(*a); });
}

}  // namespace servesim::cli
