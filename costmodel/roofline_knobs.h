// The roofline's knobs: the keys of the hardware schema that say how close to the
// datasheet a GPU's kernels run (efficiencies, SMs and L2, GEMM tiles, launch and
// kernel floors), as one option table. It is the single list of them: the hardware
// table embeds it (configs/option_tables.cc, in this order), `cost_model.knobs`
// accepts exactly these keys (plus `source`), and `servesim calibrate fit-roofline`
// writes them (roofline_fit.h). Bounds: docs/configuration.md, "Ranges".
#pragma once
#include "costmodel/hardware_spec.h"
#include "sim/core/option_table.h"

namespace servesim {

// Floors of the positive hardware numbers a cost is divided by: 10^-3 of a GB, GB/s,
// TFLOP/s or MB, and an efficiency of 0.1%, far below any real GPU.
inline constexpr double kMinHardware = 1e-3;
inline constexpr double kMinFraction = 1e-3;

const OptionTable<HardwareSpec>& roofline_knob_options();

}  // namespace servesim
