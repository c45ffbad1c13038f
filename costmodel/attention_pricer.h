// AttentionPricer: one attention method's share of an iteration's time, as
// one object per method. Both backends build their
// attention pricing from make_attention_pricers(): the roofline and the
// calibrated backend differ only in how they price the two *dense* kernels
// (DenseAttentionKernels, which each backend implements); every method is a
// pricer that composes the dense kernels with its own measured kernel
// families (kernel_fits.h), so a method's pricing rule lives in one file,
// beside its registry entry (attention_registry.h):
//
//   dense_pricer.cc        prefill: dense   decode: dense   kv: none (both backends)
//   minference_pricer.cc   prefill: minference               (calibrated only)
//   quest_pricer.cc        decode: quest                     (calibrated only)
//   andpro_pricer.cc       kv: andpro (scoring at prompt end) (calibrated only)
//   attention_registry.cc  the list of methods; make_attention_pricers() iterates it
//
// Contract: us() is µs of one iteration summed over layers, a pure function
// of the batch, >= 0, monotone non-decreasing in every token count, and 0
// when the batch has none of the method's work. Constructing a pricer
// resolves what it needs from the profile once and throws InputError naming
// the missing family (and the bench command) when it cannot; scaled
// (unmeasured) shapes are appended to ctx.notes, which go into identity().
// A sparse method whose family the profile lacks entirely is priced from the
// profile's dense kernels when ctx.allow_scaling (derived_sparse.h; a note).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "costmodel/attention_method.h"
#include "costmodel/batch_shape.h"
#include "costmodel/kernel_features.h"

namespace servesim {

class KernelFits;

// The dense attention kernels, priced by a backend: µs of one launch in one
// layer (a varlen causal prefill over the chunks, a ragged split-KV decode).
class DenseAttentionKernels {
 public:
  virtual ~DenseAttentionKernels() = default;
  virtual double prefill_us(const PrefillWork& w) const = 0;
  virtual double decode_us(const DecodeWork& w) const = 0;
  // Whether decode_us reads DecodeWork::max_kv (a ragged-decode factor): a pricer that
  // sums the contexts itself finds the longest only then (its sums loop vectorizes
  // without the max).
  virtual bool uses_max_kv() const { return false; }
};

struct AttentionPricingContext {
  const DenseAttentionKernels* dense = nullptr;  // outlives the pricers (the backend owns both)
  const KernelFits* fits = nullptr;              // the profile's fits; null: no profile (roofline)
  HeadShape shape;                               // one GPU's heads
  std::int64_t layers = 32;
  int tp = 1;
  bool allow_scaling = true;                     // false: an unmeasured shape is an InputError
  std::vector<std::string>* notes = nullptr;     // scaling notes for identity(); may be null
  // What an isolated-kernel row overstates per launch (cost_model.launch_excess;
  // 0: none): a method's own measured kernels are charged queued_us(row, it), as
  // the dense kernels are (their DenseAttentionKernels already are).
  double launch_excess_us = 0;
};

// A row-priced kernel's time less the launch excess, never below half the row.
inline double queued_us(double row_us, double excess_us) { return row_us - std::min(excess_us, 0.5 * row_us); }

class AttentionPricer {
 public:
  virtual ~AttentionPricer() = default;
  virtual double us(const BatchShape& b) const = 0;
};

// The pricers of one worker's methods: prefill and decode always, kv null for none.
struct AttentionPricers {
  std::unique_ptr<AttentionPricer> prefill, decode, kv;
};
// Throws InputError when a method needs kernels the context cannot price
// (a sparse method without a profile, or a profile without its family).
AttentionPricers make_attention_pricers(const AttentionMethods& a, const AttentionPricingContext& ctx);

}  // namespace servesim
