// Tests of DecodeGrid (decode_grid.h): dense decode priced from uniform decode rows.
#include <doctest/doctest.h>

#include <cmath>

#include "costmodel/decode_grid.h"

using namespace servesim;

namespace {

// (batch, KV length) -> us: two batch rows, the second with a dip the grid must not keep.
std::map<std::pair<double, double>, double> points() {
  return {{{1, 1024}, 10}, {{1, 4096}, 20}, {{1, 16384}, 50},
          {{16, 1024}, 40}, {{16, 4096}, 30}, {{16, 16384}, 200}};
}

}  // namespace

TEST_CASE("a decode grid needs two batch sizes and four points") {
  CHECK_FALSE(DecodeGrid::build({{{1, 1024}, 10}, {{1, 4096}, 20}, {{1, 16384}, 50}}).has_value());
  CHECK_FALSE(DecodeGrid::build({{{1, 1024}, 10}, {{2, 4096}, 20}, {{4, 16384}, 50}}).has_value());
  const auto g = DecodeGrid::build(points());
  REQUIRE(g.has_value());
  CHECK(g->batches() == 2);
  CHECK(g->points() == 6);
  CHECK(g->describe() == "2 batches x 3-3 KV lengths, batch 1-16, KV 1024-16384");
}

TEST_CASE("the grid returns its rows at measured points and interpolates in log batch and log KV length") {
  const auto g = DecodeGrid::build(points());
  REQUIRE(g.has_value());
  const FeatureFit none;  // no fit: outside the grid, the nearest point unscaled
  const HeadShape h;
  CHECK(g->us(1, 1 * 4096, none, h) == doctest::Approx(20));
  CHECK(g->us(16, 16 * 16384, none, h) == doctest::Approx(200));
  CHECK(g->us(1, 2048, none, h) == doctest::Approx(15));             // halfway in log KV length
  CHECK(g->us(4, 4 * 1024, none, h) == doctest::Approx((10 + 40) / 2.0));  // halfway in log batch
  // The dip (16, 4096) = 30 < (16, 1024) = 40 is lifted to 40: monotone in KV length.
  CHECK(g->us(16, 16 * 4096, none, h) == doctest::Approx(40));
  double last = 0;
  for (double kv = 512; kv <= 65536; kv *= 1.25) {
    for (double b : {1.0, 3.0, 16.0, 40.0}) CHECK(g->us(b, b * kv, none, h) > 0);
    const double t = g->us(8, 8 * kv, none, h);
    CHECK(t >= last);
    last = t;
  }
  // A ragged batch is priced as the uniform batch of its mean KV length.
  CHECK(g->us(16, 16 * 4096, none, h) == g->us(16, 8 * 1024 + 8 * 7168, none, h));
}

TEST_CASE("outside the grid the nearest measured point is moved by the fit's ratio") {
  // A fit t = 1 + kv_bytes / 1e6 (the decode features: 1, kv_bytes, seqs, bytes per seq and head).
  const FeatureFit fit = FeatureFit::fit({"1", "kv_bytes", "seqs", "kv_bytes_per_seq_head"},
                                         {{1, 1e6, 1, 1e6 / 8}, {1, 4e6, 1, 4e6 / 8}, {1, 2e7, 2, 1e7 / 8},
                                          {1, 5e7, 4, 1.25e7 / 8}, {1, 1e8, 8, 1.25e7 / 8}},
                                         {2, 5, 21, 51, 101});
  const HeadShape h;  // 32/8/128: 4096 B per KV token
  auto f = [&](double b, double kv) {
    DecodeWork w;
    w.seqs = b;
    w.kv_tokens = b * kv;
    return fit.predict(decode_features(h, w));
  };
  const auto g = DecodeGrid::build(points());
  REQUIRE(g.has_value());
  // Beyond the longest KV length of batch 1: its row at 16384 times fit(1, 65536) / fit(1, 16384).
  CHECK(g->us(1, 65536, fit, h) == doctest::Approx(50 * f(1, 65536) / f(1, 16384)));
  // Beyond the largest batch: batch 16's price times fit(64, kv) / fit(16, kv).
  CHECK(g->us(64, 64 * 4096.0, fit, h) == doctest::Approx(g->us(16, 16 * 4096.0, fit, h) * f(64, 4096) / f(16, 4096)));
}

TEST_CASE("the ragged decode factor is 1 at a uniform batch and follows the measured pairs in spread and batch") {
  CHECK_FALSE(RaggedDecode::build({}).has_value());
  CHECK_FALSE(RaggedDecode::build({{16, 1.0, 1.2}}).has_value());  // spread 1 is no pair
  // Batch 16: 1.10 at spread e, 1.20 at spread e^3; batch 256: 1.05 at spread e.
  const auto r = RaggedDecode::build({{256, std::exp(1.0), 1.05}, {16, std::exp(3.0), 1.20}, {16, std::exp(1.0), 1.10}});
  REQUIRE(r.has_value());
  CHECK(r->pairs() == 3);
  CHECK(r->factor(16, 1.0) == doctest::Approx(1.0));
  CHECK(r->factor(16, std::exp(0.5)) == doctest::Approx(1.05));  // from 1 at spread 1 to the first pair
  CHECK(r->factor(16, std::exp(1.0)) == doctest::Approx(1.10));
  CHECK(r->factor(16, std::exp(2.0)) == doctest::Approx(1.15));
  CHECK(r->factor(16, std::exp(9.0)) == doctest::Approx(1.20));  // flat beyond the last pair
  CHECK(r->factor(4, std::exp(1.0)) == doctest::Approx(1.10));   // flat below the smallest batch
  CHECK(r->factor(1000, std::exp(1.0)) == doctest::Approx(1.05));
  CHECK(r->factor(64, std::exp(1.0)) == doctest::Approx(1.075));  // halfway in log batch
  CHECK(r->factor(64, 0.5) == 1.0);                                // (a spread below 1 cannot happen: 1)
}

TEST_CASE("the whole-batch table gives the same interval as computing it, bit for bit") {
  const std::vector<double> batches = {1, 3, 16, 64, 256};
  std::vector<double> logs;
  for (double b : batches) logs.push_back(std::log(b));
  const BatchSpans table(logs, batches), computed;  // the default one has no table: it always computes
  int whole = 0;
  for (double s = 1.5; s < 256; s += 0.5) {
    const BatchSpans::Span a = table.at(logs, s), b = computed.at(logs, s);
    CHECK(a.i == b.i);
    CHECK(a.w == b.w);  // exact: the table was filled by the same computation
    whole += s == std::floor(s) ? 1 : 0;
  }
  CHECK(whole == 254);
  CHECK(table.at(logs, 16).w == 0);  // a measured batch size: weight 0 on the next row
  CHECK(table.at(logs, 16).i == 2);
}

TEST_CASE("search hints never change a price: right, stale or out-of-range hints give us() and factor() bit for bit") {
  // Rows of different KV lengths, so the two batch rows' intervals differ.
  const auto g = DecodeGrid::build({{{1, 512}, 8}, {{1, 1024}, 10}, {{1, 2048}, 13}, {{1, 4096}, 20}, {{1, 16384}, 50},
                                    {{16, 1024}, 40}, {{16, 3000}, 55}, {{16, 16384}, 200}});
  const auto r = RaggedDecode::build({{1, 1.5, 1.02}, {1, 2.0, 1.05}, {1, 4.0, 1.2}, {16, 1.2, 1.01},
                                      {16, 3.0, 1.15}, {16, 6.0, 1.3}, {16, 9.0, 1.4}});
  REQUIRE(g.has_value());
  REQUIRE(r.has_value());
  const FeatureFit none;
  const HeadShape h;
  DecodeSearchHints hints;  // carried from one pricing to the next, as a worker's BatchShape does
  const std::uint16_t starts[] = {0, 1, 2, 7, 0xFFFF};
  int priced = 0;
  for (double seqs : {1.0, 3.0, 7.0, 16.0, 40.0}) {
    for (double x = 300; x < 40000; x *= 1.37) {
      const double kv_tokens = std::round(seqs * x), kv = kv_tokens / seqs;  // us_at takes us()'s mean
      for (double spread : {1.1, 1.7, 2.5, 5.0, 12.0}) {
        const double plain = g->us(seqs, kv_tokens, none, h);
        CHECK(g->us_at(seqs, kv, std::log(kv), none, h, hints.grid) == plain);
        CHECK(r->factor_at(seqs, spread, std::log(spread), hints.ragged) == r->factor(seqs, spread));
        for (std::uint16_t s : starts) {  // wrong hints: the search runs
          DecodeSearchHints wrong{{s, s}, {s, s}};
          CHECK(g->us_at(seqs, kv, std::log(kv), none, h, wrong.grid) == plain);
          CHECK(r->factor_at(seqs, spread, std::log(spread), wrong.ragged) == r->factor(seqs, spread));
        }
        ++priced;
      }
    }
  }
  CHECK(priced > 100);
}
