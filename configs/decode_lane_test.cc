// The worker's decode lane (sim/worker.h, "Decode lane") is a speed path only:
// every output file of a run must be byte-identical with it on and off (the
// step-by-step passes). Cases cover what changes the lane: preemption under KV
// pressure, finishes and joins in the same iteration, the policies that count
// decode tokens (DLPM, VTC) or read the running set (LTR: lane off after its
// first look), prefix caching, KV eviction (AnDPro), lower KV tiers, PD
// hand-offs (accepted requests join the lane), prefill-first mode (no lane) and
// page sizes (the lane's page calendar).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "configs/config_test_util.h"
#include "configs/run_builder.h"
#include "policies/testing/policy_runs.h"

using namespace servesim;
using namespace servesim::testing;

namespace {

// Runs the scenario with the lane on or off; returns every output file's bytes by name
// (with `record`, the batch record too: reports/batch_recorder.h).
FolderFiles outputs(const std::vector<std::string>& sets, bool lane, const std::string& name, bool record = false) {
  YAML::Node root = YAML::Load(kMemoryTightWorkload);  // policies/testing/policy_runs.h
  for (const auto& s : sets) apply_override(root, s);
  ScenarioConfig c = parse_scenario(root, "<" + name + ">");
  c.batching.decode_lane = lane;
  for (PoolConfig& p : c.pools) p.batching.decode_lane = lane;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "servesim_decode_lane_test" / (name + (lane ? "_on" : "_off"));
  std::filesystem::remove_all(dir);
  RunOptions o{dir.string(), false};
  if (record) o.record_batches = (dir / "batches.csv").string();
  execute_run(c, o);
  return folder_files(dir);
}

}  // namespace

TEST_CASE("every output file is the same with the decode lane on and off") {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"fcfs", {}},
      // The roofline prices from the lane's sums: the lane leaves its context values
      // unwritten (nobody reads them here; sim/worker.h).
      {"roofline", {"cost_model.backend=roofline"}},
      {"roofline_small_batch", {"cost_model.backend=roofline", "policy.local=lpm", "batching.max_batch_tokens=16"}},
      {"dlpm", {"policy.local=dlpm"}},
      {"vtc", {"policy.local=vtc"}},
      {"ltr", {"policy.local=ltr"}},
      {"lpm_small_batch", {"policy.local=lpm", "batching.max_batch_tokens=16"}},
      {"andpro", {"attention.kv=andpro", "attention.andpro.budget=256"}},
      // Page sizes for the page calendar (sim/worker.h): every step a member's page
      // step (1: a member a page ahead waits, then is due at once), page sizes that
      // are not powers of two (48, 200), a power of two (64) and the largest the lane
      // takes (4096, kLaneMaxPageSize: a page outlasts most requests).
      {"page_1", {"batching.page_size=1"}},
      {"page_48", {"batching.page_size=48"}},
      {"page_200", {"batching.page_size=200"}},
      {"page_64", {"batching.page_size=64"}},
      {"page_4096", {"batching.page_size=4096"}},
      {"host_tier", {"kv_cache.host.capacity_gb=1"}},
      {"prefill_first", {"batching.mode=prefill_first"}},
      {"pd",
       {"cluster={pools: [{name: p, role: prefill, workers: 1}, {name: d, role: decode, workers: 1}], pd: {link: "
        "rdma, decider: always}}"}},
      // More decoding requests than the budget (hand-offs need none to join): the
      // lane gives way to the step-by-step pass, which leaves some out.
      {"pd_small_batch",
       {"cluster={pools: [{name: p, role: prefill, workers: 1}, {name: d, role: decode, workers: 1, batching: "
        "{max_batch_tokens: 6}}], pd: {link: rdma, decider: always}}"}},
  };
  for (const auto& c : cases) {
    const std::string& name = c.first;  // (no structured binding: CAPTURE's lambda cannot capture one under clang)
    const std::vector<std::string>& sets = c.second;
    CAPTURE(name);
    check_same_files(outputs(sets, true, name), outputs(sets, false, name));
  }
}

TEST_CASE("the batch record is the same with the decode lane on and off") {
  // With the roofline or the calibrated backend and the dense methods the lane leaves its context values
  // unwritten unless the batch is read (sim/worker.h, last_batch): a batch record
  // reads every iteration's contexts, so they must be written then, exactly as the
  // step-by-step pass writes them, also under preemption (memory-tight) and with
  // hand-offs joining the lane (PD).
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"record_fcfs", {"cost_model.backend=roofline"}},
      {"record_small_batch", {"cost_model.backend=roofline", "policy.local=lpm", "batching.max_batch_tokens=16"}},
      {"record_pd",
       {"cost_model.backend=roofline",
        "cluster={pools: [{name: p, role: prefill, workers: 1}, {name: d, role: decode, workers: 1}], pd: {link: "
        "rdma, decider: always}}"}},
      {"record_calibrated", {"cost_model.backend=calibrated"}},
      // A sparse decode method reads the values: the lane writes them as it goes.
      {"record_quest", {"cost_model.backend=calibrated", "attention.decode=quest"}},
  };
  for (const auto& c : cases) {
    const std::string& name = c.first;
    const std::vector<std::string>& sets = c.second;
    CAPTURE(name);
    const FolderFiles on = outputs(sets, true, name, true), off = outputs(sets, false, name, true);
    CHECK(std::count_if(on.begin(), on.end(), [](const auto& f) { return f.first == "batches.csv"; }) == 1);
    check_same_files(on, off);
  }
}
