// fit_roofline_knobs: the roofline's hardware knobs derived from a measured
// kernel profile (`servesim calibrate fit-roofline`). Each
// knob comes from the rows that isolate it, as the roofline charges it
// (roofline_cost_model.h), and is a median over those rows:
//   sms                        provenance gpu_sms
//   bandwidth_fraction         best copy-ceiling row: GB/s / datasheet bandwidth
//   gemm_flops_fraction        GEMM rows with M >= 1024: tile/wave-charged FLOPs / (time · peak)
//   prefill_attention_flops_fraction  dense prefill rows with chunk >= 1024:
//                              FLOPs / (time · peak · wave fill of 128-row query tiles × heads)
//   decode_attention_bandwidth_fraction  dense decode rows whose split-KV items fill the SMs
//                              and that take >= 20 µs: KV bytes / (time · datasheet bandwidth)
//   min_kernel_us              the fastest GEMM or decode row (the latency floor)
// A knob without usable rows keeps the hardware file's value, and the note
// says so. Fractions are clamped to (0, 1]. The same knobs then serve other
// GPUs of the family with their own datasheet ceilings.
#pragma once
#include <string>
#include <vector>

#include "costmodel/hardware_spec.h"
#include "costmodel/profile_table.h"

namespace servesim {

struct RooflineKnobFit {
  HardwareSpec hardware;            // the input hardware with the fitted knobs set
  std::vector<std::string> notes;   // one per knob: its rows and value, or "kept"
};

RooflineKnobFit fit_roofline_knobs(const ProfileTable& profile, const HardwareSpec& hw);

// The knob YAML the roofline loads (cost_model.knobs): every key of
// roofline_knob_options() (the fitted ones, the rest as the input hardware has them),
// with the notes and the profile's provenance as comments.
std::string roofline_knobs_yaml(const RooflineKnobFit& fit, const ProfileTable& profile);

}  // namespace servesim
