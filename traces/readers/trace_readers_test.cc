// Trace readers on the shared real traces (the README's numbers) and on
// small hand-made files for the features those traces do not exercise.
#include <doctest/doctest.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <unistd.h>
#include <fstream>

#include <sys/resource.h>

#include "traces/native_writer.h"
#include "traces/test_files.h"
#include "traces/readers/trace_reader.h"
#include "traces/readers/trace_stats.h"
#include "traces/workload.h"

using namespace servesim;
using servesim::testing::shared_trace;
using servesim::testing::TempDir;

namespace {

std::vector<TraceRow> read_all(const std::string& path, TraceReadOptions opt = {}) {
  auto r = open_trace(path, opt);
  std::vector<TraceRow> rows;
  TraceRow row;
  while (r->next(row)) rows.push_back(row);
  return rows;
}

}  // namespace

TEST_CASE("trace stats reproduces the row counts, spans and hit rates stated for the shared traces") {
  TraceReadOptions opt;
  {
    TraceStats s = compute_trace_stats(shared_trace("mooncake/conversation_trace.jsonl"), opt);
    CHECK(s.format == "mooncake");
    CHECK(s.rows == 12031);
    CHECK(s.last_arrival - s.first_arrival == 3'536'999 * kNsPerMs);
    CHECK(s.distinct_timestamps == 1180);
    CHECK(s.block_refs == 288500);
    CHECK(s.distinct_blocks == 182790);
    CHECK(s.distinct_first_blocks == 1);
    CHECK(std::round(100 * s.hit_rate_blocks) == 37);
    CHECK(s.prompt.p50 == 6909);
    CHECK(s.prompt.p99 == 85401);
    CHECK(s.prompt.max == 126195);
    CHECK(s.prompt.min == 891);
    CHECK(s.output.max == 2000);
  }
  {
    TraceStats s = compute_trace_stats(shared_trace("mooncake/synthetic_trace.jsonl"), opt);
    CHECK(s.rows == 3993);
    CHECK(s.last_arrival - s.first_arrival == 1'022'025 * kNsPerMs);
    CHECK(s.distinct_timestamps == 3982);
    CHECK(s.block_refs == 121877);
    CHECK(s.distinct_blocks == 43924);
    CHECK(s.distinct_first_blocks == 2211);
    CHECK(std::round(100 * s.hit_rate_blocks) == 64);
    CHECK(s.prompt.p50 == 11587);
    CHECK(s.output.p50 == 69);
  }
  {
    TraceStats s = compute_trace_stats(shared_trace("azure_llm_2023/AzureLLMInferenceTrace_code.csv"), opt);
    CHECK(s.format == "azure");
    CHECK(s.rows == 8819);
    CHECK(std::round(s.span_s) == 3436);
    CHECK(std::round(100 * s.mean_rate) == 257);
    CHECK(s.prompt.p50 == 1469);
    CHECK(s.prompt.max == 7437);
    CHECK(s.output.p50 == 13);
    CHECK(s.output.min == 6);
    CHECK(!s.has_prefix);
    CHECK(s.clients.empty());
  }
  {
    TraceStats s = compute_trace_stats(shared_trace("azure_llm_2023/AzureLLMInferenceTrace_conv.csv"), opt);
    CHECK(s.rows == 19366);
    CHECK(std::round(s.span_s) == 3502);
    CHECK(std::round(100 * s.mean_rate) == 553);
    CHECK(s.prompt.p50 == 1020);
    CHECK(s.prompt.max == 14050);
    CHECK(s.output.p50 == 129);
    CHECK(s.output.max == 1000);
  }
  {
    TraceStats s = compute_trace_stats(shared_trace("vtc_lmsys/real_trace.csv"), opt);
    CHECK(s.format == "vtc");
    CHECK(s.rows == 1500);
    CHECK(s.span_s == doctest::Approx(600.0));
    REQUIRE(s.clients.size() == 27);
    CHECK(s.clients[0].second == 296);
    CHECK(s.clients[1].second == 262);
    CHECK(s.clients.back().second == 1);
    CHECK(s.prompt.p50 == 40);
    CHECK(s.output.p50 == 211);
  }
}

TEST_CASE("the azure reader turns wall-clock timestamps with 7 fractional digits or a zone into ns") {
  TempDir dir;
  auto rows = read_all(dir.write("a.csv",
                                 "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                 "2023-11-16 18:17:03.9799600,4808,10\n"
                                 "2023-11-16 18:17:04.0319600,3180,8\n"
                                 "2024-05-10 00:00:00.5+00:00,10,1\n"
                                 "2024-05-10T02:00:01.25+02:00,11,2"));  // no trailing newline, as upstream
  REQUIRE(rows.size() == 4);
  CHECK(rows[1].spec.arrival - rows[0].spec.arrival == 52'000'000);
  CHECK(rows[0].spec.prompt_tokens == 4808);
  CHECK(rows[0].spec.output_tokens == 10);
  CHECK(rows[3].spec.arrival - rows[2].spec.arrival == 750'000'000);
  CHECK(rows[3].spec.id == 3);
}

TEST_CASE("the burstgpt reader drops failed zero-response rows by default, or keeps or rejects them") {
  TempDir dir;
  std::string path = dir.write("b.csv",
                               "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                               "5,ChatGPT,472,18,490,Conversation log\n"
                               "45,ChatGPT,1087,0,1087,Conversation log\n"
                               "118.5,GPT-4,417,276,693,API log\n");
  auto reader = open_trace(path, {});
  std::vector<TraceRow> rows;
  TraceRow row;
  while (reader->next(row)) rows.push_back(row);
  REQUIRE(rows.size() == 2);
  CHECK(reader->rows_dropped() == 1);
  CHECK(rows[0].group == "ChatGPT/Conversation log");
  CHECK(rows[1].group == "GPT-4/API log");
  CHECK(rows[0].spec.category == 1);
  CHECK(rows[1].spec.category == 2);
  CHECK(rows[1].spec.arrival == 118'500'000'000);
  CHECK(rows[1].spec.id == 2);  // ids are data-row ordinals, dropped rows included

  TraceReadOptions keep;
  keep.burstgpt.failed = FailedRows::kKeep;
  auto kept = read_all(path, keep);
  REQUIRE(kept.size() == 3);
  CHECK(kept[1].spec.output_tokens == 1);

  TraceReadOptions strict;
  strict.burstgpt.failed = FailedRows::kError;
  std::string err = servesim::testing::input_error([&] { read_all(path, strict); });
  CHECK(err.find("b.csv:3:") != std::string::npos);
  CHECK(err.find("Response tokens") != std::string::npos);
}

TEST_CASE("the burstgpt reader numbers the turns of each Session ID and checks Elapsed time") {
  TempDir dir;
  auto rows = read_all(dir.write("b.csv",
                                 "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,"
                                 "Total tokens,Log Type\n"
                                 "1,s-a,0.8,ChatGPT,10,5,15,Conversation log\n"
                                 "2,s-b,1.5,ChatGPT,11,5,16,Conversation log\n"
                                 "3,s-a,2.0,ChatGPT,40,5,45,Conversation log\n"
                                 "4,,,GPT-4,12,7,19,API log\n"));
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].spec.session == 1);
  CHECK(rows[1].spec.session == 2);
  CHECK(rows[2].spec.session == 1);
  CHECK(rows[2].spec.turn == 1);
  CHECK(rows[3].spec.session == 0);
  CHECK(rows[2].spec.parents.empty());  // the trace's own timestamps already include think time
}

TEST_CASE("the mooncake reader maps hash_ids to 512-token prefix blocks") {
  auto rows = read_all(shared_trace("mooncake/conversation_trace.jsonl"));
  REQUIRE(rows.size() == 12031);
  CHECK(rows[0].spec.prompt_tokens == 6758);
  CHECK(rows[0].spec.output_tokens == 500);
  CHECK(rows[0].spec.prefix_block_size == 512);
  CHECK(rows[0].spec.prefix_blocks.size() == 14);
  CHECK(rows[1].spec.prefix_blocks[0] == 0);
  CHECK(rows[1].spec.prefix_blocks[1] == 14);
}

TEST_CASE("the vtc reader keeps client names and request ids") {
  auto rows = read_all(shared_trace("vtc_lmsys/real_trace.csv"));
  REQUIRE(rows.size() == 1500);
  CHECK(rows[0].client == "dummy-lora-7b-rank-8-13");
  CHECK(rows[1].spec.id == 1);
  CHECK(rows[1].spec.arrival == 207'937'542);  // 0.20793754160099873 s, rounded to ns
  CHECK(rows[1499].spec.arrival == 600 * kNsPerSec);
}

TEST_CASE("format names come from the registry: the choices list every format a user writes, and the trace "
          "workload's help and the undetectable-format error use it") {
  const std::string choices = trace_format_choices();
  for (const TraceFormatType& f : trace_formats())
    if (!f.native) CHECK_MESSAGE(choices.find(f.name) != std::string::npos, f.name);
  CHECK(choices.ends_with("native"));
  bool found = false;
  for (const WorkloadType& w : workload_types())
    if (w.name == "trace") found = w.help.find(choices) != std::string::npos;
  CHECK(found);
  const auto path = std::filesystem::temp_directory_path() / ("servesim_fmt_" + std::to_string(getpid()) + ".csv");
  { std::ofstream(path) << "what,is,this\n1,2,3\n"; }
  try {
    open_trace(path.string(), TraceReadOptions{});
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(choices) != std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST_CASE("the format is detected from the extension and the first line") {
  CHECK(detect_format(shared_trace("mooncake/synthetic_trace.jsonl")) == "mooncake");
  CHECK(detect_format(shared_trace("azure_llm_2023/AzureLLMInferenceTrace_conv.csv")) == "azure");
  CHECK(detect_format(shared_trace("vtc_lmsys/real_trace.csv")) == "vtc");
  TempDir dir;
  CHECK(detect_format(dir.write("b.csv", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n")) ==
        "burstgpt");
  CHECK(detect_format(dir.write("n.csv", "# comment\narrival_ns,prompt_tokens,output_tokens\n")) ==
        "native_csv");
  CHECK(detect_format(dir.write("n.jsonl", "{\"arrival_ns\": 0, \"prompt_tokens\": 1, \"output_tokens\": 1}\n")) ==
        "native_jsonl");
  std::string err = servesim::testing::input_error([&] { detect_format(dir.write("x.csv", "a,b,c\n1,2,3\n")); });
  CHECK(err.find("x.csv:1:") != std::string::npos);
  CHECK(err.find("format") != std::string::npos);
  CHECK(parse_format("native", "x.jsonl") == "native_jsonl");
  CHECK(parse_format("native", "x.csv") == "native_csv");
}

TEST_CASE("native CSV and JSONL carry every RequestSpec field and the client table exactly") {
  std::vector<RequestSpec> reqs(3);
  reqs[0].id = 10;
  reqs[0].client = 1;
  reqs[0].arrival = 123'456'789;
  reqs[0].prompt_tokens = 40;
  reqs[0].output_tokens = 7;
  reqs[0].prefix_blocks = {0, 18446744073709551615ULL, 5};
  reqs[0].prefix_block_size = 16;
  reqs[0].session = 3;
  reqs[0].category = -2;
  reqs[0].dependents = 2;
  reqs[1] = reqs[0];
  reqs[1].id = 11;
  reqs[1].client = 0;
  reqs[1].turn = 1;
  reqs[1].parents = {10};
  reqs[1].think_time = 2'500'000'000;
  reqs[1].dependents = 1;
  reqs[1].prefix_blocks.clear();
  reqs[1].prefix_block_size = 0;
  reqs[2] = reqs[1];
  reqs[2].id = 12;
  reqs[2].parents = {10, 11};
  reqs[2].arrival = 200'000'000'000;
  reqs[2].dependents = 0;
  std::vector<std::string> names = {"a, \"quoted\"", "b"};
  for (const char* file : {"t.csv", "t.jsonl"}) {
    TempDir dir;
    std::string path = dir.file(file);
    {
      NativeWriter w(path, NativeWriter::flavor_for(path));
      w.begin(names);
      for (const auto& r : reqs) w.write(r, names);
      w.finish();
    }
    auto reader = open_trace(path, {});
    std::vector<TraceRow> rows;
    TraceRow row;
    while (reader->next(row)) rows.push_back(row);
    CHECK(reader->declared_clients() == names);
    REQUIRE(rows.size() == reqs.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const RequestSpec& a = rows[i].spec;
      const RequestSpec& b = reqs[i];
      CHECK(a.id == b.id);
      CHECK(rows[i].client == names[b.client]);
      CHECK(a.arrival == b.arrival);
      CHECK(a.prompt_tokens == b.prompt_tokens);
      CHECK(a.output_tokens == b.output_tokens);
      CHECK(a.prefix_blocks == b.prefix_blocks);
      CHECK(a.prefix_block_size == b.prefix_block_size);
      CHECK(a.parents == b.parents);
      CHECK(a.think_time == b.think_time);
      CHECK(a.session == b.session);
      CHECK(a.turn == b.turn);
      CHECK(a.category == b.category);
      CHECK(a.dependents == b.dependents);
    }
  }
}

namespace {

// `n` requests of one client, arrivals 1 ms apart.
class CountingSource final : public RequestSource {
 public:
  explicit CountingSource(std::int64_t n) : n_(n) {}
  bool next(RequestSpec& r) override {
    if (i_ == n_) return false;
    r = RequestSpec{};
    r.id = static_cast<RequestId>(i_);
    r.arrival = i_ * 1'000'000;
    r.prompt_tokens = 100 + i_ % 7;
    r.output_tokens = 10;
    ++i_;
    return true;
  }
  std::string describe() const override { return "counting"; }

 private:
  std::int64_t n_, i_ = 0;
};

// Runs `f` with file sizes limited to `bytes` (a write past it fails with
// EFBIG, as on a full disk), then restores the limit.
template <class F>
void with_file_size_limit(rlim_t bytes, F&& f) {
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  rlimit l = saved;
  l.rlim_cur = bytes;
  setrlimit(RLIMIT_FSIZE, &l);
  try {
    f();
  } catch (...) {
    setrlimit(RLIMIT_FSIZE, &saved);
    throw;
  }
  setrlimit(RLIMIT_FSIZE, &saved);
}

}  // namespace

TEST_CASE("a native trace write that fails (full disk) is an error naming the file and leaves no file") {
  for (const char* file : {"t.csv", "t.jsonl"}) {
    CAPTURE(file);
    TempDir dir;
    const std::string path = dir.file(file);
    ClientTable clients;
    clients.intern("a");
    std::string err;
    with_file_size_limit(64 << 10, [&] {
      err = servesim::testing::input_error([&] {
        CountingSource src(200'000);  // ~4 MB of rows, past the 64 KiB limit
        write_native_trace(src, clients, path);
      });
    });
    CHECK(servesim::testing::contains(err, path));
    CHECK(servesim::testing::contains(err, "failed"));
    CHECK_FALSE(std::filesystem::exists(path));  // no partial trace
    CHECK(std::filesystem::is_empty(dir.file("")));  // no staged rows or temporaries left either
    // A writer given up without finish() leaves nothing either (and does not throw from its destructor).
    with_file_size_limit(1 << 10, [&] {
      err = servesim::testing::input_error([&] {
        NativeWriter w(path, NativeWriter::flavor_for(path));
        w.begin(clients.names());
        CountingSource src(100'000);
        for (RequestSpec r; src.next(r);) w.write(r, clients.names());
        w.finish();
      });
    });
    CHECK(servesim::testing::contains(err, path));
    CHECK(std::filesystem::is_empty(dir.file("")));
    // Unlimited, the same rows write and read back.
    CountingSource src(1000);
    CHECK(write_native_trace(src, clients, path) == 1000);
    CHECK(servesim::testing::count_rows(path) == 1000);
    CHECK_FALSE(std::filesystem::exists(path + ".rows"));
  }
}

TEST_CASE("a trace read from memory or a stream gives the rows and errors of the same file") {
  TempDir dir;
  const std::string good = "id,arrival_ns,prompt_tokens,output_tokens\r\n0,0,4,2\n\n1,5,8,3\n2,9,16,1";  // CRLF, blank, no final newline
  const std::string bad = "id,arrival_ns,prompt_tokens,output_tokens\n0,0,4,2\n1,5,x,3\n";
  TraceReadOptions opt;
  opt.format = "native_csv";
  auto rows = [&](std::unique_ptr<TraceReader> r) {
    std::vector<std::pair<std::int64_t, long>> out;
    for (TraceRow row; r->next(row);) out.emplace_back(row.spec.prompt_tokens, row.line);
    return out;
  };
  const auto from_file = rows(open_trace(dir.write("g.csv", good), opt));
  REQUIRE(from_file.size() == 3);
  CHECK(rows(open_trace(LineReader::from_text(dir.file("g.csv"), good), opt)) == from_file);
  std::FILE* f = fmemopen(const_cast<char*>(good.data()), good.size(), "rb");
  REQUIRE(f);
  CHECK(rows(open_trace(LineReader::from_stream(dir.file("g.csv"), f, 1), opt)) == from_file);  // 4 KiB minimum buffer
  // A line longer than the buffer grows it.
  const std::string long_line = "id,arrival_ns,prompt_tokens,output_tokens,client\n0,0,4,2," + std::string(10000, 'c') + "\n";
  f = fmemopen(const_cast<char*>(long_line.data()), long_line.size(), "rb");
  REQUIRE(f);
  CHECK(servesim::testing::count_rows(dir.write("l.csv", long_line)) == 1);
  CHECK(rows(open_trace(LineReader::from_stream("l.csv", f, 4096), opt)).size() == 1);
  // Errors name the given file and the same line.
  const std::string err_file = servesim::testing::input_error([&] { rows(open_trace(dir.write("b.csv", bad), opt)); });
  const std::string err_text =
      servesim::testing::input_error([&] { rows(open_trace(LineReader::from_text(dir.file("b.csv"), bad), opt)); });
  CHECK(servesim::testing::contains(err_file, "b.csv:3: field 'prompt_tokens'"));
  CHECK(err_text == err_file);
  // "auto" needs the file itself (detection reads it): an error, not a guess.
  CHECK_FALSE(servesim::testing::input_error([&] { open_trace(LineReader::from_text("x.csv", good), {}); }).empty());
}
