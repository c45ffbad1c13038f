// Roofline knobs from a profile; see roofline_fit.h.
#include "costmodel/roofline_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "costmodel/kernel_features.h"
#include "costmodel/roofline_cost_model.h"
#include "costmodel/roofline_knobs.h"

namespace servesim {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

double clamp_fraction(double x) { return std::clamp(x, 1e-3, 1.0); }

// Sets `knob` to the median of `xs` (clamped), or keeps it; notes either way.
void set_fraction(double& knob, const std::vector<double>& xs, const std::string& name, const std::string& rows,
                  std::vector<std::string>& notes) {
  if (xs.empty()) {
    notes.push_back(fmt::format("{}: kept {} (no {} in the profile)", name, knob, rows));
    return;
  }
  knob = clamp_fraction(median(xs));
  notes.push_back(fmt::format("{}: {:.4f} = median over {} {}", name, knob, xs.size(), rows));
}

}  // namespace

RooflineKnobFit fit_roofline_knobs(const ProfileTable& t, const HardwareSpec& hw) {
  RooflineKnobFit f{hw, {}};
  HardwareSpec& h = f.hardware;
  const double bw = hw.mem_bandwidth_gbps * 1e9, peak = hw.bf16_tflops * 1e12;

  if (const int sms = std::atoi(t.provenance_value("gpu_sms").c_str()); sms > 0) {
    h.sms = sms;
    f.notes.push_back(fmt::format("sms: {} (provenance gpu_sms)", sms));
  } else {
    f.notes.push_back(fmt::format("sms: kept {} (no gpu_sms in the provenance)", h.sms));
  }

  double best_copy = 0;
  for (const ProfilePoint& p : t.points())
    if (p.kernel == "ceiling" && p.variant.starts_with("copy") && p.bytes > 0 && p.median_us > 0)
      best_copy = std::max(best_copy, p.bytes / (p.median_us * 1e-6));
  if (best_copy > 0) {
    h.bandwidth_fraction = clamp_fraction(best_copy / bw);
    f.notes.push_back(fmt::format("bandwidth_fraction: {:.4f} = best copy ceiling {:.0f} GB/s / datasheet {} GB/s",
                                  h.bandwidth_fraction, best_copy / 1e9, hw.mem_bandwidth_gbps));
  } else {
    f.notes.push_back(fmt::format("bandwidth_fraction: kept {} (no copy ceiling rows)", h.bandwidth_fraction));
  }

  std::vector<double> gemm, prefill, decode;
  double fastest = 0;
  for (const ProfilePoint& p : t.points()) {
    if (p.median_us <= 0) continue;
    const double s = p.median_us * 1e-6;
    if (p.kernel == "gemm" && p.m > 0 && p.n > 0 && p.k > 0) {
      fastest = fastest > 0 ? std::min(fastest, p.median_us) : p.median_us;
      if (p.m >= 1024 && !is_gemm_dense_row(p))  // grid rows: every shape counts alike
        gemm.push_back(roofline_gemm_compute_seconds(static_cast<double>(p.m), static_cast<double>(p.n),
                                                     static_cast<double>(p.k), h.gemm_tile_m, h.gemm_tile_n, h.sms,
                                                     peak) / s);
    } else if (p.kernel == "prefill" && p.variant == "fa2" && p.flops > 0 && p.q_len >= 1024 && p.heads > 0) {
      const double chunks = p.batch > 0 ? static_cast<double>(p.batch) : 1.0;
      const double ctas = chunks * std::ceil(static_cast<double>(p.q_len) / kPrefillQueryTile) *
                          static_cast<double>(p.heads);
      prefill.push_back(p.flops / (s * peak * wave_fill(ctas, h.sms)));
    } else if (p.kernel == "decode" && p.variant == "splitkv" && p.bytes > 0 && !is_ragged_pair_row(p)) {
      fastest = fastest > 0 ? std::min(fastest, p.median_us) : p.median_us;
      const double seqs = p.batch > 0 ? static_cast<double>(p.batch) : 1.0;
      const double items = seqs * std::ceil(static_cast<double>(std::max<std::int64_t>(1, p.ctx + 1)) /
                                            kDecodeSplitTokens) * static_cast<double>(std::max<std::int64_t>(1, p.kv_heads));
      if (items >= h.sms && p.median_us >= 20) decode.push_back(p.bytes / (s * bw));
    }
  }
  set_fraction(h.gemm_flops_fraction, gemm, "gemm_flops_fraction", "GEMM rows with M >= 1024 (charged FLOPs)", f.notes);
  set_fraction(h.prefill_attention_flops_fraction, prefill, "prefill_attention_flops_fraction",
               "dense prefill rows with chunk >= 1024 (over wave fill)", f.notes);
  set_fraction(h.decode_attention_bandwidth_fraction, decode, "decode_attention_bandwidth_fraction",
               "dense decode rows filling the SMs and >= 20 us", f.notes);
  if (fastest > 0) {
    h.min_kernel_us = fastest;
    f.notes.push_back(fmt::format("min_kernel_us: {:.3f} = fastest GEMM or decode row", fastest));
  } else {
    f.notes.push_back(fmt::format("min_kernel_us: kept {} (no GEMM or decode rows)", h.min_kernel_us));
  }
  return f;
}

std::string roofline_knobs_yaml(const RooflineKnobFit& f, const ProfileTable& t) {
  const HardwareSpec& h = f.hardware;
  std::string s = fmt::format("# Roofline knobs fitted by `servesim calibrate fit-roofline` from {}\n", t.file());
  s += fmt::format("# provenance: {}\n", t.provenance_summary());
  if (t.synthetic()) s += "# SYNTHETIC profile: these knobs describe the generator's formulas, not a GPU\n";
  for (const auto& n : f.notes) s += "# " + n + "\n";
  s += "# Use: cost_model: {backend: roofline, knobs: THIS_FILE}\n";
  s += "# Every knob of roofline_knob_options(): fitted where a note above says so, else the hardware file's\n";
  // Every knob is a number: 6 significant digits (a fit is not more exact than that).
  for (const OptionField<HardwareSpec>& k : roofline_knob_options())
    s += fmt::format("{}: {:.6g}\n", k.key, option_value(k, h).as<double>());
  std::string src = fmt::format("fit-roofline from {}", t.file());
  std::replace(src.begin(), src.end(), '"', '\'');
  s += fmt::format("source: \"{}\"\n", src);
  return s;
}

}  // namespace servesim
