// ModelSpec: the shape of a decoder-only transformer (Llama family), and the
// quantities derived from it that the cost model and KV accounting need.
// Loaded from configs/models/*.yaml or inline in a scenario.
#pragma once
#include <cstdint>
#include <string>

namespace servesim {

struct ModelSpec {
  std::string name;
  std::int64_t layers = 32;
  std::int64_t hidden = 4096;          // model dimension
  std::int64_t heads = 32;             // query heads
  std::int64_t kv_heads = 8;           // GQA key/value heads
  std::int64_t head_dim = 128;
  std::int64_t intermediate = 14336;   // MLP hidden size (SwiGLU: gate, up, down)
  std::int64_t vocab = 128256;
  std::int64_t max_context = 8192;     // longest prompt+output the model accepts
  bool tie_embeddings = false;         // LM head shares the embedding matrix
  int weight_bytes = 2;                // bf16
  int kv_bytes = 2;                    // bf16 KV cache
  bool operator==(const ModelSpec&) const = default;

  // Parameters of one layer's linear weights (q, k, v, o, gate, up, down).
  std::int64_t linear_params_per_layer() const {
    return hidden * heads * head_dim            // q
           + 2 * hidden * kv_heads * head_dim   // k, v
           + heads * head_dim * hidden          // o
           + 3 * hidden * intermediate;         // gate, up, down
  }
  std::int64_t total_params() const {
    return layers * (linear_params_per_layer() + 2 * hidden)  // + 2 RMSNorm vectors
           + vocab * hidden * (tie_embeddings ? 1 : 2) + hidden;
  }
  double weight_bytes_total() const { return static_cast<double>(total_params()) * weight_bytes; }
  // KV bytes one token occupies across all layers (K and V).
  std::int64_t kv_bytes_per_token() const { return 2 * layers * kv_heads * head_dim * kv_bytes; }
};

}  // namespace servesim
