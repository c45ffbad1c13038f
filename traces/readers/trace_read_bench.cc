// Reader throughput: rows/s for each trace format on large synthetic files
// written to /tmp (removed afterwards). Targets: >= 1M rows/s for the CSV
// formats, >= 300K rows/s for Mooncake JSONL (rows shaped like the
// conversation trace: ~24 block ids each). Prints min/median/max over runs.
//   servesim_trace_read_bench [rows_csv=3000000] [rows_jsonl=1000000] [runs=3]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/core/rng.h"
#include "traces/readers/trace_reader.h"

using namespace servesim;

namespace {

// Writes `rows` rows produced by `row(i, rng, buf)` after `header`.
template <class F>
std::string make_file(const std::string& name, const std::string& header, std::int64_t rows, F row) {
  std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + path);
  std::string buf = header;
  Rng rng(42);
  for (std::int64_t i = 0; i < rows; ++i) {
    row(i, rng, buf);
    if (buf.size() > (1 << 20)) {
      std::fwrite(buf.data(), 1, buf.size(), f);
      buf.clear();
    }
  }
  std::fwrite(buf.data(), 1, buf.size(), f);
  std::fclose(f);
  return path;
}

std::int64_t len(Rng& rng, double median) {
  return std::max<std::int64_t>(1, std::llround(median * std::exp(rng.normal())));
}

void bench(const std::string& label, const std::string& path, int runs) {
  std::vector<double> rates;
  std::int64_t rows = 0;
  for (int r = 0; r < runs; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    auto reader = open_trace(path, {});
    TraceRow row;
    rows = 0;
    std::int64_t checksum = 0;
    while (reader->next(row)) {
      ++rows;
      checksum += row.spec.prompt_tokens;
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rates.push_back(static_cast<double>(rows) / s);
    if (checksum == 0) std::puts("");  // keep the loop observable
  }
  std::sort(rates.begin(), rates.end());
  auto mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  fmt::print("{:<14} {:>9} rows {:>7.1f} MB   rows/s min {:>10.0f}  median {:>10.0f}  max {:>10.0f}   ({:.0f} MB/s median)\n",
             label, rows, mb, rates.front(), rates[rates.size() / 2], rates.back(),
             mb * rates[rates.size() / 2] / static_cast<double>(rows));
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t n_csv = argc > 1 ? std::atoll(argv[1]) : 3'000'000;
  const std::int64_t n_json = argc > 2 ? std::atoll(argv[2]) : 1'000'000;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 3;
  std::vector<std::string> files;
  try {
    // Azure: wall-clock timestamps with 7 fractional digits, ~5.5 req/s.
    files.push_back(make_file("bench_azure.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n", n_csv,
                              [t = 0.0](std::int64_t, Rng& rng, std::string& b) mutable {
                                t += rng.exponential(0.18);
                                auto whole = static_cast<std::int64_t>(t);
                                std::int64_t day = 16 + whole / 86400, sod = whole % 86400;
                                fmt::format_to(std::back_inserter(b), "2023-11-{:02} {:02}:{:02}:{:02}.{:07},{},{}\n",
                                               day % 28 + 1, sod / 3600, sod / 60 % 60, sod % 60,
                                               static_cast<std::int64_t>((t - whole) * 1e7), len(rng, 1000),
                                               len(rng, 130));
                              }));
    bench("azure", files.back(), runs);
    files.push_back(make_file(
        "bench_burstgpt.csv", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n", n_csv,
        [](std::int64_t i, Rng& rng, std::string& b) {
          std::int64_t in = len(rng, 600), out = len(rng, 200);
          fmt::format_to(std::back_inserter(b), "{},{},{},{},{},{}\n", i / 3, i % 5 ? "ChatGPT" : "GPT-4", in, out,
                         in + out, i % 3 ? "Conversation log" : "API log");
        }));
    bench("burstgpt", files.back(), runs);
    files.push_back(make_file("bench_vtc.csv", "req_id,client,arrival_s,prompt_tokens,output_tokens\n", n_csv,
                              [t = 0.0](std::int64_t i, Rng& rng, std::string& b) mutable {
                                t += rng.exponential(0.4);
                                fmt::format_to(std::back_inserter(b), "{},dummy-lora-7b-rank-8-{},{},{},{}\n", i,
                                               rng.below(27), t, len(rng, 40), len(rng, 211));
                              }));
    bench("vtc", files.back(), runs);
    files.push_back(make_file("bench_native.csv",
                              "id,client,arrival_ns,prompt_tokens,output_tokens,prefix_block_size,prefix_blocks,"
                              "session,turn,parents,dependents,think_time_ns,category\n",
                              n_csv, [t = std::int64_t{0}](std::int64_t i, Rng& rng, std::string& b) mutable {
                                t += static_cast<std::int64_t>(rng.exponential(2e8));
                                fmt::format_to(std::back_inserter(b), "{},client-{},{},{},{},16,{} {} {},0,0,,0,0,0\n",
                                               i, rng.below(8), t, len(rng, 40) + 40, len(rng, 211), rng.below(100),
                                               rng.next_u64(), rng.next_u64());
                              }));
    bench("native_csv", files.back(), runs);
    // Mooncake: ~24 block ids per row, 3 s buckets, global block 0.
    files.push_back(make_file("bench_mooncake.jsonl", "", n_json,
                              [next = std::int64_t{1}](std::int64_t i, Rng& rng, std::string& b) mutable {
                                std::int64_t in = std::min<std::int64_t>(len(rng, 7000), 120000);
                                std::int64_t blocks = (in + 511) / 512;
                                fmt::format_to(std::back_inserter(b),
                                               "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": {}, "
                                               "\"hash_ids\": [0",
                                               i / 10 * 3000, in, len(rng, 350));
                                for (std::int64_t k = 1; k < blocks; ++k) fmt::format_to(std::back_inserter(b), ", {}", next++);
                                b += "]}\n";
                              }));
    bench("mooncake", files.back(), runs);
    files.push_back(make_file("bench_native.jsonl", "", n_json,
                              [t = std::int64_t{0}](std::int64_t i, Rng& rng, std::string& b) mutable {
                                t += static_cast<std::int64_t>(rng.exponential(2e8));
                                fmt::format_to(std::back_inserter(b),
                                               "{{\"id\": {}, \"client\": \"client-{}\", \"arrival_ns\": {}, "
                                               "\"prompt_tokens\": {}, \"output_tokens\": {}, \"prefix_block_size\": 16, "
                                               "\"prefix_blocks\": [{}, {}, {}]}}\n",
                                               i, rng.below(8), t, len(rng, 40) + 40, len(rng, 211), rng.below(100),
                                               rng.next_u64(), rng.next_u64());
                              }));
    bench("native_jsonl", files.back(), runs);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "servesim_trace_read_bench: %s\n", e.what());
    for (const auto& f : files) std::filesystem::remove(f);
    return 1;
  }
  for (const auto& f : files) std::filesystem::remove(f);
  return 0;
}
