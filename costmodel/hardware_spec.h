// HardwareSpec: one GPU's memory and datasheet ceilings. The roofline backend
// uses the ceilings directly (scaled by its efficiency knobs); the calibrated
// backend replaces them with measured kernel profiles.
// Loaded from configs/hardware/*.yaml.
#pragma once
#include <string>

namespace servesim {

struct HardwareSpec {
  std::string name;
  double memory_gb = 80;             // HBM capacity, GB (1e9 bytes)
  double mem_bandwidth_gbps = 3350;  // HBM bandwidth, GB/s (datasheet)
  double bf16_tflops = 989;          // dense bf16 tensor-core peak, TFLOP/s (datasheet)
  double interconnect_gbps = 450;    // per-direction NVLink bandwidth for TP all-reduce, GB/s
  double kernel_launch_us = 4;       // per kernel launch (CUDA graph-less serving loop)

  // Identity is the value of every field, never the name alone: two GPUs
  // named alike but with different memory or bandwidth are different hardware.
  bool operator==(const HardwareSpec&) const = default;
};

}  // namespace servesim
