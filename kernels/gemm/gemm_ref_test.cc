#include "kernels/gemm/gemm_ref.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include "costmodel/gemm_shapes.h"
#include "kernels/gemm/linear_shapes.h"

using namespace servesim::kernels;

TEST_CASE("GEMM reference multiplies X by the transpose of row-major W") {
  // X = [[1,2],[3,4],[5,6]] (3x2), W = [[1,0],[1,1]] (2x2): Y = X W^T = [[1,3],[3,7],[5,11]].
  std::vector<float> y;
  gemm_ref({1, 2, 3, 4, 5, 6}, {1, 0, 1, 1}, 3, 2, 2, &y);
  CHECK(y == std::vector<float>{1, 3, 3, 7, 5, 11});
}

TEST_CASE("Llama-3-8B linear shapes at TP 1 are the published layer sizes") {
  const auto s = linear_layer_shapes(llama3_8b(), 1);
  REQUIRE(s.size() == 5);
  CHECK((s[0].layer == "qkv" && s[0].n == 6144 && s[0].k == 4096));
  CHECK((s[1].layer == "o" && s[1].n == 4096 && s[1].k == 4096));
  CHECK((s[2].layer == "gate_up" && s[2].n == 28672 && s[2].k == 4096));
  CHECK((s[3].layer == "down" && s[3].n == 4096 && s[3].k == 14336));
  CHECK((s[4].layer == "lm_head" && s[4].n == 128256 && s[4].k == 4096));
}

TEST_CASE("tensor parallelism splits column-parallel N and row-parallel K and replicates scarce KV heads") {
  const auto s = linear_layer_shapes(llama3_70b(), 8);
  CHECK(s[0].n == (64 / 8 + 2 * 1) * 128);  // 8 q heads + 1 replicated K and V head
  CHECK(s[1].k == 8192 / 8);
  CHECK(s[2].n == 2 * 28672 / 8);
  CHECK(s[3].k == 28672 / 8);
  CHECK(s[4].n == 128256 / 8);
  const auto e = linear_layer_shapes(llama3_8b(), 8);
  CHECK(e[0].n == (4 + 2) * 128);
  CHECK(servesim::gemm_token_grid(16384).size() == 36);  // 7 powers of two, 15 + 12 tile rows, 8192, 16384
  CHECK(servesim::gemm_token_grid(1024).back() == 1024);
  const auto grid = servesim::gemm_token_grid(16384);
  CHECK(std::is_sorted(grid.begin(), grid.end()));
  CHECK(servesim::gemm_token_grid(16384).back() == 16384);
  // The bench adds the off-grid probes: 50 token counts, ascending, no repeats.
  const auto bench = servesim::gemm_bench_tokens(16384);
  CHECK(bench.size() == 36 + 14);
  CHECK(std::adjacent_find(bench.begin(), bench.end(), std::greater_equal<>()) == bench.end());
  CHECK(servesim::is_gemm_probe_token(333));
  CHECK(!servesim::is_gemm_probe_token(1024));
}

TEST_CASE("Llama-2-7B linear shapes: MHA QKV, intermediate 11008, vocab 32000, split at TP 8") {
  const auto s = linear_layer_shapes(llama2_7b(), 1);
  CHECK(s[0].n == 3 * 4096);
  CHECK((s[2].n == 2 * 11008 && s[3].k == 11008));
  CHECK(s[4].n == 32000);
  const auto t = linear_layer_shapes(llama2_7b(), 8);
  CHECK(t[0].n == (4 + 2 * 4) * 128);  // 32 KV heads divide: no replication
  CHECK(t[3].k == 11008 / 8);
  CHECK(t[4].n == 4000);
}

#ifdef SERVESIM_KERNELS_REPO_ROOT
TEST_CASE("the GEMM bench's models cover the linear dimensions of every model in configs/models") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(SERVESIM_KERNELS_REPO_ROOT) / "configs" / "models";
  REQUIRE(fs::is_directory(dir));
  const std::vector<ModelDims> models = shipped_models();
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    std::ifstream in(entry.path());
    std::map<std::string, int64_t> v;
    for (std::string line; std::getline(in, line);) {
      const auto colon = line.find(':');
      if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
      const std::string value = line.substr(colon + 1);
      if (value.find_first_not_of(" 0123456789") == std::string::npos && value.find_first_of("0123456789") != std::string::npos)
        v[line.substr(0, colon)] = std::stoll(value);
    }
    CAPTURE(entry.path().string());
    const bool covered = std::any_of(models.begin(), models.end(), [&](const ModelDims& m) {
      return m.hidden == v["hidden"] && m.num_q_heads == v["heads"] && m.num_kv_heads == v["kv_heads"] &&
             m.head_dim == v["head_dim"] && m.intermediate == v["intermediate"] && m.vocab == v["vocab"];
    });
    CHECK(covered);
  }
  CHECK(files >= 5);
}

// Issue 20 item 5: no shipped model priced by scaling. Reads every configs/models/*.yaml,
// derives its linear shapes at TP 1, 2, 4 and 8 with the cost model's own rule
// (costmodel/gemm_shapes.h: what the simulator looks up in a profile), and requires a
// full-bench shape (gemm_bench_shapes) with the same layer, TP, N and K for each, measured
// over every M of the cost model's token grid.
TEST_CASE("the GEMM bench grid has a row for every linear shape of every model in configs/models at TP 1, 2, 4 and 8") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(SERVESIM_KERNELS_REPO_ROOT) / "configs" / "models";
  REQUIRE(fs::is_directory(dir));
  const std::vector<LinearShape> bench = gemm_bench_shapes(false);
  int shapes = 0, models = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    std::ifstream in(entry.path());
    std::map<std::string, int64_t> v;
    for (std::string line; std::getline(in, line);) {
      const auto colon = line.find(':');
      if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
      const std::string value = line.substr(colon + 1);
      if (value.find_first_not_of(" 0123456789") == std::string::npos && value.find_first_of("0123456789") != std::string::npos)
        v[line.substr(0, colon)] = std::stoll(value);
    }
    CAPTURE(entry.path().string());
    for (const char* field : {"hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab"}) {
      CAPTURE(field);
      REQUIRE(v[field] > 0);
    }
    ++models;
    const servesim::LinearDims dims{v["hidden"], v["heads"], v["kv_heads"], v["head_dim"], v["intermediate"], v["vocab"]};
    for (int tp : {1, 2, 4, 8}) {
      for (const servesim::GemmShape& g : servesim::gemm_shapes(dims, tp)) {
        CAPTURE(tp);
        CAPTURE(std::string(g.layer));
        const bool measured = std::any_of(bench.begin(), bench.end(), [&](const LinearShape& b) {
          return b.tp == tp && b.layer == g.layer && b.n == g.n && b.k == g.k;
        });
        CHECK(measured);
        ++shapes;
      }
    }
  }
  CHECK(models >= 5);
  CHECK(shapes == models * 4 * 5);
  // Every M the cost model's grid interpolates over is measured (plus the held-out probes).
  const auto tokens = servesim::gemm_bench_tokens(16384);
  for (int64_t m : servesim::gemm_token_grid(16384)) CHECK(std::find(tokens.begin(), tokens.end(), m) != tokens.end());
  // Quick mode stays a smoke test: one model at TP 1.
  CHECK(gemm_bench_shapes(true).size() == 5);
}
#endif
