// The fitting side of an attention method (attention_registry.h): which
// profile kernels are its own, how their rows are fitted, how a row of them is
// predicted and summarized. KernelFits (kernel_fits.h) fits the kernels every
// method shares (dense decode and prefill, GEMMs, elementwise, all-reduce) and
// hands each row of a method's own kernels to that method's MethodFitter, found
// through the registry: KernelFits names no method. A method's pricer reads its
// fits back with KernelFits::method_fits<T>(name).
//
// Contract:
//   - MethodFitting::fitted lists the kernels whose rows the fitter receives
//     (add(), in file order, only rows the caller's filter accepts);
//     MethodFitting::composite lists kernels that are predicted but never
//     fitted (end-to-end rows, the dense baselines measured beside the sparse
//     kernels). A kernel name belongs to at most one method.
//   - finish() runs once, after every row; fitting problems (families with rows
//     but no usable fit) are appended to `problems`, in a stable order.
//   - MethodFits is immutable and shared by every worker that uses the profile.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/feature_fit.h"
#include "costmodel/profile_table.h"

namespace servesim {

class KernelFits;

// One fitted model, for `servesim calibrate fit` reports.
struct FitSummaryRow {
  std::string family;  // decode, gemm, quest_topk, ...
  std::string key;     // head shape, (n,k), variant
  std::string form;    // coefficients or "monotone over M=1..16384"
  RelativeError residuals;
};

class MethodFits {
 public:
  virtual ~MethodFits() = default;
  // The prediction (µs) of a row of one of the method's kernels (fitted or
  // composite); `all` gives the shared fits (dense baselines). nullopt when a
  // needed fit is missing.
  virtual std::optional<double> predict(const ProfilePoint& p, const KernelFits& all) const = 0;
  // Appends one row per fitted model.
  virtual void summarize(std::vector<FitSummaryRow>& out) const = 0;
};

class MethodFitter {
 public:
  virtual ~MethodFitter() = default;
  // A row of one of the fitted kernels; rows it cannot use for lack of a
  // parameter are InputErrors naming `file` and the line.
  virtual void add(const ProfilePoint& p, const std::string& file) = 0;
  virtual std::shared_ptr<const MethodFits> finish(const std::string& file, std::vector<std::string>& problems) = 0;
};

// The part of a registry entry that fits the method's own kernels (empty for
// a method priced from the shared kernels only, e.g. dense).
struct MethodFitting {
  std::vector<std::string_view> fitted, composite;
  std::function<std::unique_ptr<MethodFitter>()> make_fitter;
};

}  // namespace servesim
