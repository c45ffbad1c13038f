#include "kernels/gemm/gemm_ref.h"

namespace servesim::kernels {

void gemm_ref(const std::vector<float>& x, const std::vector<float>& w, int64_t m, int64_t n, int64_t k,
              std::vector<float>* y) {
  y->assign(static_cast<size_t>(m * n), 0.0f);
  for (int64_t i = 0; i < m; ++i) {
    const float* xr = x.data() + i * k;
    for (int64_t j = 0; j < n; ++j) {
      const float* wr = w.data() + j * k;
      double acc = 0;
      for (int64_t t = 0; t < k; ++t) acc += static_cast<double>(xr[t]) * wr[t];
      (*y)[static_cast<size_t>(i * n + j)] = static_cast<float>(acc);
    }
  }
}

}  // namespace servesim::kernels
