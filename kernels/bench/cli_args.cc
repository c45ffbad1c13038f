#include "kernels/bench/cli_args.h"

#include <cstdlib>
#include <string_view>

#include "kernels/bench/profile_csv.h"

namespace servesim::kernels {

namespace {

bool parse_u64(const std::string& text, uint64_t* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (*end != '\0') return false;
  *out = v;
  return true;
}

}  // namespace

std::string kernels_cli_usage() {
  return "usage: servesim-kernels <command> [options]\n"
         "commands:\n"
         "  list                     list the registered kernel families\n"
         "  check                    run every GPU kernel against its CPU reference\n"
         "                           (exit 0 pass, 1 failure, 77 no GPU)\n"
         "  bench -o FILE            time the calibration grid, write the profile CSV\n"
         "  merge -o FILE IN...      join per-family profiles of one run (refuses an unknown commit)\n"
         "  replay FILE --model NAME -o OUT   replay a batch record (servesim run --record-batches)\n"
         "                           as real forward passes, measured vs predicted per iteration\n"
         "options:\n"
         "  --quick                  small shapes / few points (smoke test)\n"
         "  --family a,b             only these families (see `list`)\n"
         "  --seed N                 base seed of random inputs (default 1)\n"
         "  --verbose                more detail\n"
         "  -o, --output FILE        bench: CSV to write\n"
         "  --git-commit SHA         bench: provenance commit (default: git rev-parse HEAD)\n"
         "  --target-ms X            bench: timed work per point in ms (default 40, quick 5)\n"
         "  --budget-s S             bench: start no grid point after S seconds; the skipped\n"
         "                           points are listed at the end (default: no limit)\n"
         "  --model NAME             replay: llama3-8b, llama3-70b, llama2-7b or tiny\n"
         "  --tp N                   replay: tensor-parallel degree (default 1; one GPU's shard)\n"
         "  --warmup N, --reps N     replay: untimed and timed runs per iteration (default 2, 5)\n"
         "  --kv-gb G                replay: GPU memory for the KV cache (default 40)\n"
         "  --sessions               merge: inputs from several sessions of one GPU model and stack\n"
         "  --add-variants           merge --sessions: a family an earlier input has adds only its new\n"
         "                           kernel variants (e.g. new ceiling rows); the rest are dropped\n"
         "  --repeat R.csv           merge [--sessions]: R is a second run, on the same card, of one\n"
         "                           input's families; that input's rows R measured more than 5% away\n"
         "                           are dropped\n"
         "  --prefill-variant V      replay: auto (hopper_wgmma on H100/H200, else fa2) | fa2 | hopper_wgmma\n";
}

bool parse_kernels_cli(int argc, const char* const* argv, KernelsCli* cli, std::string* error) {
  *cli = KernelsCli{};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) {
        *error = "option " + arg + " needs a value";
        return false;
      }
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (arg == "-h" || arg == "--help" || arg == "help") {
      cli->command = "help";
      return true;
    } else if (arg == "--quick") {
      cli->quick = true;
    } else if (arg == "--verbose" || arg == "-v") {
      cli->verbose = true;
    } else if (arg == "--family") {
      if (!value(&cli->families)) return false;
    } else if (arg == "-o" || arg == "--output") {
      if (!value(&cli->output)) return false;
    } else if (arg == "--git-commit") {
      if (!value(&cli->git_commit)) return false;
    } else if (arg == "--seed") {
      if (!value(&v)) return false;
      if (!parse_u64(v, &cli->seed)) {
        *error = "--seed expects a non-negative integer, got '" + v + "'";
        return false;
      }
    } else if (arg == "--target-ms") {
      if (!value(&v)) return false;
      if (!parse_positive_number(v, &cli->target_ms)) {
        *error = "--target-ms expects a positive number, got '" + v + "'";
        return false;
      }
    } else if (arg == "--budget-s") {
      if (!value(&v)) return false;
      if (!parse_positive_number(v, &cli->budget_s)) {
        *error = "--budget-s expects a positive number of seconds, got '" + v + "'";
        return false;
      }
    } else if (arg == "--model") {
      if (!value(&cli->model)) return false;
    } else if (arg == "--tp" || arg == "--warmup" || arg == "--reps") {
      uint64_t n = 0;
      if (!value(&v)) return false;
      if (!parse_u64(v, &n) || n > 1024 || (n == 0 && arg != "--warmup")) {
        *error = arg + " expects an integer" + (arg == "--warmup" ? " >= 0" : " >= 1") + " (at most 1024), got '" + v + "'";
        return false;
      }
      (arg == "--tp" ? cli->tp : arg == "--warmup" ? cli->warmup : cli->reps) = static_cast<int>(n);
    } else if (arg == "--sessions") {
      cli->sessions = true;
    } else if (arg == "--add-variants") {
      cli->add_variants = true;
    } else if (arg == "--repeat") {
      if (!value(&cli->repeat)) return false;
    } else if (arg == "--prefill-variant") {
      if (!value(&cli->prefill_variant)) return false;
      if (cli->prefill_variant != "auto" && cli->prefill_variant != "fa2" && cli->prefill_variant != "hopper_wgmma") {
        *error = "--prefill-variant expects auto, fa2 or hopper_wgmma, got '" + cli->prefill_variant + "'";
        return false;
      }
    } else if (arg == "--kv-gb") {
      if (!value(&v)) return false;
      if (!parse_positive_number(v, &cli->kv_gb)) {
        *error = "--kv-gb expects a positive number, got '" + v + "'";
        return false;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      *error = "unknown option '" + arg + "'";
      return false;
    } else if (cli->command.empty() && (arg == "list" || arg == "check" || arg == "bench" || arg == "merge" ||
                                          arg == "replay")) {
      cli->command = arg;
    } else if (cli->command == "merge" || (cli->command == "replay" && cli->inputs.empty())) {
      cli->inputs.push_back(arg);
    } else {
      *error = "unexpected argument '" + arg + "'";
      return false;
    }
  }
  if (cli->command.empty()) {
    *error = "missing command (list, check, bench, merge or replay)";
    return false;
  }
  if (cli->command == "replay" && (cli->inputs.empty() || cli->model.empty())) {
    *error = "replay needs a batch record FILE and --model NAME";
    return false;
  }
  if ((cli->command == "bench" || cli->command == "merge" || cli->command == "replay") && cli->output.empty()) {
    *error = cli->command + " needs -o FILE";
    return false;
  }
  if (cli->command == "merge" && cli->inputs.empty()) {
    *error = "merge needs at least one input profile";
    return false;
  }
  return true;
}

}  // namespace servesim::kernels
