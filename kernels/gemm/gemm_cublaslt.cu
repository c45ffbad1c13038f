#include "kernels/gemm/gemm_cublaslt.cuh"

#include <stdexcept>
#include <string>

#include "kernels/common/cuda_util.cuh"

namespace servesim::kernels {

namespace {

void lt_check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLASLt ") + what + " failed with status " + std::to_string(int(status)));
}

}  // namespace

struct LtGemm::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  ~Plan() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

LtGemm::LtGemm() {
  lt_check(cublasLtCreate(&handle_), "create");
  SERVESIM_CUDA_CHECK(cudaMalloc(&workspace_, workspace_bytes_));
}

LtGemm::~LtGemm() {
  plans_.clear();
  if (workspace_) cudaFree(workspace_);
  if (handle_) cublasLtDestroy(handle_);
}

LtGemm::Plan& LtGemm::plan_for(int64_t m, int64_t n, int64_t k) {
  auto key = std::make_tuple(m, n, k);
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;

  auto plan = std::make_unique<Plan>();
  lt_check(cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul desc");
  const cublasOperation_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
  lt_check(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof(op_t)), "transa");
  lt_check(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_n, sizeof(op_n)), "transb");
  // Column-major views: W [n][k] row-major is k x n (ld k); X [m][k] is k x m (ld k);
  // Y [m][n] is n x m (ld n).
  lt_check(cublasLtMatrixLayoutCreate(&plan->a, CUDA_R_16BF, k, n, k), "layout A");
  lt_check(cublasLtMatrixLayoutCreate(&plan->b, CUDA_R_16BF, k, m, k), "layout B");
  lt_check(cublasLtMatrixLayoutCreate(&plan->c, CUDA_R_16BF, n, m, n), "layout C");

  cublasLtMatmulPreference_t pref = nullptr;
  lt_check(cublasLtMatmulPreferenceCreate(&pref), "preference");
  lt_check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes_,
                                                sizeof(workspace_bytes_)),
           "preference workspace");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(handle_, plan->desc, plan->a, plan->b, plan->c, plan->c,
                                                           pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  lt_check(st, "heuristic");
  if (found == 0)
    throw std::runtime_error("cuBLASLt: no algorithm for m=" + std::to_string(m) + " n=" + std::to_string(n) +
                             " k=" + std::to_string(k));
  plan->algo = result.algo;
  return *plans_.emplace(key, std::move(plan)).first->second;
}

void LtGemm::run(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t m, int64_t n, int64_t k,
                 cudaStream_t stream) {
  Plan& p = plan_for(m, n, k);
  const float alpha = 1.0f, beta = 0.0f;
  lt_check(cublasLtMatmul(handle_, p.desc, &alpha, w, p.a, x, p.b, &beta, y, p.c, y, p.c, &p.algo, workspace_,
                          workspace_bytes_, stream),
           "matmul");
}

}  // namespace servesim::kernels
