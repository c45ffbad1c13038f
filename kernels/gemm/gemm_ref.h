// CPU reference of the linear-layer GEMM: Y[m][n] = sum_k X[m][k] * W[n][k] in double
// (row-major X and W, the PyTorch nn.Linear convention the cuBLASLt wrapper follows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace servesim::kernels {

void gemm_ref(const std::vector<float>& x, const std::vector<float>& w, int64_t m, int64_t n, int64_t k,
              std::vector<float>* y);

}  // namespace servesim::kernels
