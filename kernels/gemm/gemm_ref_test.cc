#include "kernels/gemm/gemm_ref.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>

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
