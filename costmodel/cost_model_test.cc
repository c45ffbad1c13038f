// Tests of the analytic cost-model backends and KV capacity arithmetic.
#include <doctest/doctest.h>

#include "costmodel/fixed_cost_model.h"
#include "costmodel/kv_capacity.h"
#include "costmodel/roofline_cost_model.h"
#include "sim/core/error.h"

using namespace servesim;

namespace {
ModelSpec llama3_8b() {
  ModelSpec m;
  m.name = "Llama-3-8B";
  return m;  // defaults are Llama-3-8B's shape
}
HardwareSpec h100() {
  HardwareSpec h;
  h.name = "H100-SXM";
  return h;
}
}  // namespace

TEST_CASE("Llama-3-8B has about 8.0 billion parameters and 128 KiB of KV per token") {
  ModelSpec m = llama3_8b();
  CHECK(m.total_params() == doctest::Approx(8.03e9).epsilon(0.01));
  CHECK(m.kv_bytes_per_token() == 2 * 32 * 8 * 128 * 2);
}

TEST_CASE("KV capacity follows memory minus weights and a model that does not fit is an error") {
  KvCapacity c = compute_kv_capacity(llama3_8b(), h100(), 1, 0.9, 1.0, 16);
  double expected_gb = 80 * 0.9 - 1.0 - llama3_8b().weight_bytes_total() / 1e9;
  CHECK(c.kv_gb == doctest::Approx(expected_gb).epsilon(0.001));
  CHECK(c.pages == static_cast<std::int64_t>(expected_gb * 1e9 / (131072.0 * 16)));

  ModelSpec big = llama3_8b();
  big.name = "Llama-3-70B";
  big.layers = 80;
  big.hidden = 8192;
  big.heads = 64;
  big.intermediate = 28672;
  CHECK_THROWS_AS(compute_kv_capacity(big, h100(), 1, 0.9, 1.0, 16), InputError);
  CHECK(compute_kv_capacity(big, h100(), 4, 0.9, 1.0, 16).pages > 0);
}

TEST_CASE("fixed backend is affine in prefill and decode tokens") {
  FixedCostModel f({1000, 10, 3});
  BatchShape b;
  CHECK(f.iteration_time(b) == 0);
  b.prefills.push_back({100, 0, true});
  b.decode_contexts = {5, 6};
  CHECK(f.iteration_time(b) == 1000 + 10 * 100 + 3 * 2);
  CHECK_FALSE(f.calibrated());
}

TEST_CASE("roofline decode time grows with context and prefill time with chunk size") {
  RooflineCostModel r(llama3_8b(), h100(), RooflineOptions{});
  BatchShape small, large;
  small.decode_contexts.assign(64, 1024);
  large.decode_contexts.assign(64, 32768);
  CHECK(r.iteration_time(large) > r.iteration_time(small));
  BatchShape p1, p2;
  p1.prefills.push_back({512, 0, true});
  p2.prefills.push_back({4096, 0, true});
  CHECK(r.iteration_time(p2) > r.iteration_time(p1));
  CHECK(r.identity().find("uncalibrated") != std::string::npos);
}

TEST_CASE("roofline single-token decode is memory bound near weights over bandwidth") {
  RooflineOptions o;
  o.model = RooflineModel::kFlat;  // the flat model's 0.8 x bandwidth (roofline_test.cc tests the hardware model)
  o.iteration_overhead_us = 0;
  o.kernels_per_layer = 0;
  RooflineCostModel r(llama3_8b(), h100(), o);
  BatchShape b;
  b.decode_contexts = {1};
  double t = time_to_seconds(r.iteration_time(b));
  double weights_time = llama3_8b().weight_bytes_total() / (3350e9 * 0.8);
  CHECK(t == doctest::Approx(weights_time).epsilon(0.05));
}
