// Batch record: record -> read -> same shapes; byte-identical reruns; sampling
// every k-th iteration; bad files are errors naming file, line and field.
#include "reports/batch_recorder.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "costmodel/cost_model.h"
#include "kernels/replay/batch_record.h"
#include "sim/core/error.h"
#include "sim/core/test_util.h"

namespace servesim {
namespace {
namespace fs = std::filesystem;
using servesim::testing::slurp;

// A cost with a known split: 1 µs per prefill token under qkv, 2 µs per decode under attention_decode.
class SplitCost final : public CostModel {
 public:
  Time iteration_time(const BatchShape& b) const override {
    return (b.prefill_tokens() * 1 + b.decode_tokens() * 2) * kNsPerUs;
  }
  PartTimes parts(const BatchShape& b) const override {
    PartTimes p{};
    p[static_cast<std::size_t>(Part::kQkv)] = static_cast<double>(b.prefill_tokens());
    p[static_cast<std::size_t>(Part::kAttentionDecode)] = 2.0 * static_cast<double>(b.decode_tokens());
    return p;
  }
  std::string identity() const override { return "split test, tp=7"; }
  bool calibrated() const override { return false; }
};

std::vector<BatchShape> shapes() {
  std::vector<BatchShape> v(5);
  v[0].prefills = {{128, 0, true}};
  v[1].prefills = {{64, 512, false}, {3, 17, true}};
  v[1].decode_contexts = {511, 37, 1002};
  v[2].decode_contexts = {0};
  v[3].prefills = {{1, 0, true}};
  v[4].decode_contexts = {5, 6, 7, 8};
  return v;
}

fs::path record(const std::string& name, std::int64_t every) {
  const fs::path dir = fs::temp_directory_path() / ("servesim_batch_recorder_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / name;
  auto cost = std::make_shared<SplitCost>();
  auto parts = [cost](const BatchShape& b) {
    const PartTimes p = cost->parts(b);
    return std::vector<double>(p.begin(), p.end());
  };
  BatchRecorder r({path.string(), every, "llama3-8b", 1, std::vector<std::string>(kPartNames.begin(), kPartNames.end())},
                  {{parts, cost->identity(), "dense/dense/none", "prefill=dense decode=dense kv=none", "h100"},
                   {parts, cost->identity(), "dense/quest/none",
                    "prefill=dense decode=quest(budget=2048 dense_layers=2) kv=none", "h100"}});
  const auto s = shapes();
  for (std::size_t i = 0; i < s.size(); ++i)
    r.on_iteration(static_cast<WorkerId>(i % 2), static_cast<Time>(i) * 1000, cost->iteration_time(s[i]), s[i]);
  CHECK(r.iterations_seen() == 5);
  r.close();
  return path;
}

}  // namespace

TEST_CASE("batch record round-trips: what the reader reads is what was recorded") {
  const fs::path p = record("all.csv", 1);
  kernels::BatchRecordReader reader(p.string());
  CHECK(reader.header().model == "llama3-8b");
  CHECK(reader.header().tp == 1);  // the identity's "tp=7" is not the header's
  CHECK(reader.header().record_every == 1);
  REQUIRE(reader.header().parts.size() == kPartCount);
  CHECK(reader.header().parts[2] == "qkv");
  const auto s = shapes();
  kernels::RecordedIteration it;
  for (std::size_t i = 0; i < s.size(); ++i) {
    REQUIRE(reader.next(&it));
    CHECK(it.iteration == static_cast<std::int64_t>(i));
    CHECK(it.worker == static_cast<std::int64_t>(i % 2));
    CHECK(it.start_ns == static_cast<std::int64_t>(i) * 1000);
    CHECK(it.attention == (i % 2 ? "dense/quest/none" : "dense/dense/none"));
    REQUIRE(it.prefills.size() == s[i].prefills.size());
    for (std::size_t j = 0; j < it.prefills.size(); ++j) {
      CHECK(it.prefills[j].new_tokens == s[i].prefills[j].new_tokens);
      CHECK(it.prefills[j].context == s[i].prefills[j].context);
      CHECK(it.prefills[j].completes == s[i].prefills[j].completes);
    }
    CHECK(it.decodes == s[i].decode_contexts);
    CHECK(it.predicted_ns == (s[i].prefill_tokens() + 2 * s[i].decode_tokens()) * 1000);
    double sum = 0;
    for (double x : it.parts_us) sum += x;
    CHECK(sum * 1000 == doctest::Approx(static_cast<double>(it.predicted_ns)));
  }
  CHECK_FALSE(reader.next(&it));
}

TEST_CASE("batch record is byte-identical on rerun and --record-every keeps iterations 0, k, 2k") {
  CHECK(slurp(record("a.csv", 1)) == slurp(record("b.csv", 1)));
  const fs::path p = record("every2.csv", 2);
  kernels::BatchRecordReader reader(p.string());
  CHECK(reader.header().record_every == 2);
  std::vector<std::int64_t> seen;
  kernels::RecordedIteration it;
  while (reader.next(&it)) seen.push_back(it.iteration);
  CHECK(seen == std::vector<std::int64_t>{0, 2, 4});
  CHECK_THROWS_AS(record("bad.csv", 0), InputError);
}

TEST_CASE("bad batch records are errors naming file, line and field") {
  const std::string good = slurp(record("src.csv", 1));
  const fs::path dir = fs::temp_directory_path() / ("servesim_batch_recorder_test_" + std::to_string(::getpid()));
  auto expect = [&](const std::string& text, const std::string& needle) {
    const fs::path p = dir / "broken.csv";
    std::ofstream(p, std::ios::binary) << text;
    std::string msg;
    try {
      kernels::BatchRecordReader r(p.string());
      kernels::RecordedIteration it;
      while (r.next(&it)) {
      }
    } catch (const kernels::BatchRecordError& e) {
      msg = e.what();
    }
    INFO(msg);
    CHECK(msg.find(p.string()) == 0);
    CHECK(msg.find(needle) != std::string::npos);
  };
  expect("", "not a servesim batch record");
  expect("iteration,worker\n", "not a servesim batch record");
  std::string t = good;
  t.replace(t.find(",128:0:1,"), 9, ",128:0:2,");
  expect(t, ":6: field 'prefills': completes must be 0 or 1");
  t = good;
  t.replace(t.find(",128:0:1,"), 9, ",127:0:1,");
  expect(t, ":6: field 'prefill_tokens': is 128 but the prefills list adds up to 127");
  t = good;
  t.replace(t.find(",511;37;1002"), 12, ",511;x;1002");
  expect(t, ":7: field 'decodes': not an integer: 'x'");
  t = good;
  t.replace(t.find(",511;37;1002"), 12, ",511;37");
  expect(t, ":7: field 'decode_tokens': is 3 but the decodes list has 2 entries");
  expect(good + "9,0,1\n", ":11: has 3 fields");
}

}  // namespace servesim
