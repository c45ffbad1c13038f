// Linear-layer GEMM shapes of the models servesim simulates, per GPU under tensor
// parallelism (Megatron split: QKV, gate+up and the LM head are column-parallel and
// divide N; O and down are row-parallel and divide K). Every layer is
// Y[M][N] = X[M][K] * W[N][K]^T with M = tokens in the iteration.
//
// KV heads are replicated when TP exceeds their number (Llama-3-8B at TP 8 keeps one
// KV head per GPU), as vLLM does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace servesim::kernels {

struct ModelDims {
  std::string name;
  int64_t hidden = 0, num_q_heads = 0, num_kv_heads = 0, head_dim = 0, intermediate = 0, vocab = 0;
};

ModelDims llama3_8b();   // hidden 4096, 32/8 heads, head_dim 128, intermediate 14336, vocab 128256
ModelDims llama3_70b();  // hidden 8192, 64/8 heads, head_dim 128, intermediate 28672, vocab 128256
ModelDims llama2_7b();   // hidden 4096, 32/32 heads (MHA), head_dim 128, intermediate 11008, vocab 32000

// Every distinct linear-layer shape family of configs/models/: Llama-3-8B (= Llama-3.1-8B),
// Llama-3-70B (= Llama-3.1-70B) and Llama-2-7B. The full GEMM bench measures each at TP 1, 2,
// 4 and 8, so no shipped model is priced by a scaling rule.
std::vector<ModelDims> shipped_models();

struct LinearShape {
  std::string model;  // "llama3-8b"
  std::string layer;  // qkv, o, gate_up, down, lm_head
  int tp = 1;
  int64_t n = 0, k = 0;
};

// Tensor-parallel degrees the full GEMM bench measures.
inline constexpr int kGemmBenchTps[] = {1, 2, 4, 8};

// Every (model, TP, layer) shape the GEMM bench measures, in bench order: quick mode
// Llama-3-8B at TP 1 only; full mode every shipped_models() entry at every kGemmBenchTps
// degree. kernels/gemm/gemm_family.cu iterates exactly this list, and a CPU test checks
// that it covers the shapes the cost model derives (costmodel/gemm_shapes.h) for every
// model in configs/models/.
std::vector<LinearShape> gemm_bench_shapes(bool quick);

// The five linear layers of `model` at tensor-parallel degree tp.
// REQUIRES: tp divides num_q_heads, intermediate and hidden.
std::vector<LinearShape> linear_layer_shapes(const ModelDims& model, int tp);

}  // namespace servesim::kernels
