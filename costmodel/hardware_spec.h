// HardwareSpec: one GPU's memory, datasheet ceilings and the achievable
// fractions of them that the roofline backend prices with
// (roofline_cost_model.h; docs/costmodel.md, "Roofline defaults and their
// sources"). The calibrated backend replaces the ceilings with measured
// kernel profiles. Loaded from configs/hardware/*.yaml, where every number
// carries its source; `servesim calibrate fit-roofline` writes the fitted
// fractions as a YAML of these keys (cost_model.knobs).
#pragma once
#include <string>

namespace servesim {

// The links a KV transfer can use (a PD handoff, a cluster.kv_store load;
// docs/simulation.md, "KV transfer"), per GPU and direction: a worker of tp GPUs
// has tp of each. The hardware file's `interconnect:` map. Not the TP all-reduce
// (HardwareSpec::tp_allreduce_gbps).
struct InterconnectSpec {
  double nvlink_gbps = 450;          // NVLink, GB/s per direction
  double nvlink_latency_us = 5;      // per transfer
  double rdma_nic_gbps = 50;         // RDMA NIC (400 Gb/s), GB/s per direction
  double rdma_latency_us = 10;       // per transfer
  bool operator==(const InterconnectSpec&) const = default;
};

struct HardwareSpec {
  std::string name;
  double memory_gb = 80;             // HBM capacity, GB (1e9 bytes)
  double mem_bandwidth_gbps = 3350;  // HBM bandwidth, GB/s (datasheet)
  double bf16_tflops = 989;          // dense bf16 tensor-core peak, TFLOP/s (datasheet)
  double tp_allreduce_gbps = 450;    // per-direction NVLink bandwidth of the TP all-reduce, GB/s
  double kernel_launch_us = 4;       // host cost of one eager kernel launch (bounds the kernel rate)
  // Roofline knobs (the defaults are H100-SXM's; each hardware file states its sources).
  int sms = 132;                                   // streaming multiprocessors (waves of tiles)
  double l2_mb = 50;                               // L2 cache, MB (recorded; not used by the roofline yet)
  double bandwidth_fraction = 0.88;                // achievable / datasheet HBM bandwidth (streaming kernels)
  double gemm_flops_fraction = 0.8;                // achievable / peak tensor FLOP/s of a large GEMM
  double prefill_attention_flops_fraction = 0.35;  // achievable / peak of a full-wave causal prefill attention
  double decode_attention_bandwidth_fraction = 0.88;  // achievable / datasheet bandwidth of paged decode attention
  int gemm_tile_m = 128, gemm_tile_n = 256;        // largest output tile of the GEMM library
  double min_kernel_us = 2;                        // GPU-side floor of one kernel (latency floor)
  double pcie_gbps = 64;  // per-direction host link (PCIe) per GPU, GB/s: the KV host tier's default bandwidth
  InterconnectSpec interconnect;    // the KV transfer links

  // Identity is the value of every field, never the name alone: two GPUs
  // named alike but with different memory or bandwidth are different hardware.
  bool operator==(const HardwareSpec&) const = default;
};

}  // namespace servesim
