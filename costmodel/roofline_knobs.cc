// The roofline knob table; see roofline_knobs.h.
#include "costmodel/roofline_knobs.h"

namespace servesim {

const OptionTable<HardwareSpec>& roofline_knob_options() {
  using R = OptionRange;
  static const OptionTable<HardwareSpec> t = {
      {"kernel_launch_us", &HardwareSpec::kernel_launch_us, R::kNonNegative,
       "host cost of one eager kernel launch, us", 1e6},
      {"sms", &HardwareSpec::sms, R::kPositive, "streaming multiprocessors", 1e6},
      {"l2_mb", &HardwareSpec::l2_mb, R::kPositive, "L2 cache, MB", 1e6, kMinHardware},
      {"bandwidth_fraction", &HardwareSpec::bandwidth_fraction, R::kFraction,
       "achievable / datasheet HBM bandwidth (roofline)", kOptionMax, kMinFraction},
      {"gemm_flops_fraction", &HardwareSpec::gemm_flops_fraction, R::kFraction,
       "achievable / peak FLOP/s of a large GEMM (roofline)", kOptionMax, kMinFraction},
      {"prefill_attention_flops_fraction", &HardwareSpec::prefill_attention_flops_fraction, R::kFraction,
       "achievable / peak FLOP/s of full-wave prefill attention (roofline)", kOptionMax, kMinFraction},
      {"decode_attention_bandwidth_fraction", &HardwareSpec::decode_attention_bandwidth_fraction, R::kFraction,
       "achievable / datasheet bandwidth of decode attention (roofline)", kOptionMax, kMinFraction},
      {"gemm_tile_m", &HardwareSpec::gemm_tile_m, R::kPositive, "largest GEMM output tile, rows (roofline)"},
      {"gemm_tile_n", &HardwareSpec::gemm_tile_n, R::kPositive, "largest GEMM output tile, columns (roofline)"},
      {"min_kernel_us", &HardwareSpec::min_kernel_us, R::kNonNegative, "GPU-side floor of one kernel, us (roofline)", 1e6},
  };
  return t;
}

}  // namespace servesim
