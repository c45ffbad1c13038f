// Issue 16: every number of a trace field has a documented range
// (field_limits.h, docs/traces.md) checked where it is parsed; duplicate ids
// of native traces and empty JSONL files are errors naming file and line.
#include <doctest/doctest.h>

#include "traces/readers/trace_reader.h"
#include "traces/readers/trace_stats.h"
#include "traces/test_files.h"

using namespace servesim;
using servesim::testing::input_error;
using servesim::testing::contains;
using servesim::testing::count_rows;
using servesim::testing::TempDir;

TEST_CASE("token counts near 2^63 are range errors naming file, line and field") {
  TempDir dir;
  std::string err = input_error([&] {
    count_rows(dir.write("n.csv", "id,arrival_ns,prompt_tokens,output_tokens\n0,0,9223372036854775807,5\n"));
  });
  CHECK(contains(err, "n.csv:2: field 'prompt_tokens': expected an integer in [1, 1000000000]"));
  err = input_error([&] {
    count_rows(dir.write("b.csv", "id,arrival_ns,prompt_tokens,output_tokens,prefix_block_size,prefix_blocks\n"
                                  "0,0,9223372036854775807,5,16,1\n"));
  });
  CHECK(contains(err, "b.csv:2: field 'prompt_tokens'"));
  err = input_error([&] {
    count_rows(dir.write("m.jsonl", "{\"timestamp\": 0, \"input_length\": 9223372036854775000, \"output_length\": 3, "
                                    "\"hash_ids\": [0]}\n"));
  });
  CHECK(contains(err, "m.jsonl:1: field 'input_length': expected an integer in [1, 1000000000]"));
  err = input_error([&] {
    count_rows(dir.write("a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,4,4000000000\n"));
  });
  CHECK(contains(err, "a.csv:2: field 'GeneratedTokens'"));
  err = input_error([&] {
    count_rows(dir.write("j.jsonl", "{\"arrival_ns\": 0, \"prompt_tokens\": 5, \"output_tokens\": 9.2e18}\n"));
  });
  CHECK(contains(err, "j.jsonl:1: field 'output_tokens'"));
}

TEST_CASE("timestamps outside the representable range are errors, not overflow") {
  TempDir dir;
  for (const char* ts : {"2300-01-01 00:00:00", "1960-05-01 00:00:00", "9999-12-31 23:59:59", "1970-01-01 00:00:00+05:00",
                         "0000-01-01 00:00:00", "2262-04-12 00:00:00"}) {
    CAPTURE(ts);
    std::string err = input_error([&] {
      count_rows(dir.write("a.csv", std::string("TIMESTAMP,ContextTokens,GeneratedTokens\n") + ts + ",4,4\n"));
    });
    CHECK(contains(err, "a.csv:2: field 'TIMESTAMP'"));
  }
  CHECK(count_rows(dir.write("ok.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2095-12-31 23:59:59,4,4\n")) == 1);
  std::string err = input_error([&] {
    count_rows(dir.write("m.jsonl", "{\"timestamp\": 9000000000000000, \"input_length\": 4, \"output_length\": 3, "
                                    "\"hash_ids\": [0]}\n"));
  });
  CHECK(contains(err, "m.jsonl:1: field 'timestamp'"));
  err = input_error([&] { count_rows(dir.write("n.csv", "arrival_ns,prompt_tokens,output_tokens\n9000000000000000000,4,4\n")); });
  CHECK(contains(err, "n.csv:2: field 'arrival_ns'"));
  err = input_error([&] { count_rows(dir.write("s.csv", "arrival_s,prompt_tokens,output_tokens\n5e9,4,4\n")); });
  CHECK(contains(err, "s.csv:2: field 'arrival_s'"));
  err = input_error([&] {
    count_rows(dir.write("t.csv", "arrival_ns,prompt_tokens,output_tokens,think_time_ns\n0,4,4,9000000000000000000\n"));
  });
  CHECK(contains(err, "t.csv:2: field 'think_time_ns'"));
  err = input_error([&] {
    count_rows(dir.write("c.csv", "arrival_ns,prompt_tokens,output_tokens,category,turn\n0,4,4,3000000000,0\n"));
  });
  CHECK(contains(err, "c.csv:2: field 'category'"));
  err = input_error([&] {
    count_rows(dir.write("k.csv", "arrival_ns,prompt_tokens,output_tokens,prefix_block_size,prefix_blocks\n"
                                  "0,4,4,4294967312,1\n"));
  });
  CHECK(contains(err, "k.csv:2: field 'prefix_block_size'"));
}

TEST_CASE("trace stats rejects the out-of-range rows that run rejects") {
  TempDir dir;
  std::string err = input_error([&] {
    compute_trace_stats(dir.write("n.csv", "arrival_ns,prompt_tokens,output_tokens\n0,4,4\n1,9200000000000000000,4\n"),
                        {});
  });
  CHECK(contains(err, "n.csv:3: field 'prompt_tokens'"));
}

TEST_CASE("duplicate request ids in native traces are errors naming both rows") {
  TempDir dir;
  std::string err = input_error([&] {
    count_rows(dir.write("d.csv", "id,arrival_ns,prompt_tokens,output_tokens\n0,0,4,4\n1,5,4,4\n0,9,4,4\n"));
  });
  CHECK(contains(err, "d.csv:4: field 'id': duplicate request id 0: line 2 has the same id"));
  err = input_error([&] {
    count_rows(dir.write("d.jsonl", "{\"id\": 7, \"arrival_ns\": 0, \"prompt_tokens\": 4, \"output_tokens\": 2}\n\n"
                                    "{\"id\": 3, \"arrival_ns\": 1, \"prompt_tokens\": 4, \"output_tokens\": 2}\n"
                                    "{\"id\": 7, \"arrival_ns\": 2, \"prompt_tokens\": 4, \"output_tokens\": 2}\n"));
  });
  CHECK(contains(err, "d.jsonl:4: field 'id': duplicate request id 7: line 1 has the same id"));
  // Distinct ids in any order are fine; so are consecutive runs.
  CHECK(count_rows(dir.write("ok.csv", "id,arrival_ns,prompt_tokens,output_tokens\n5,0,4,4\n6,0,4,4\n1,0,4,4\n"
                                       "2,0,4,4\n7,0,4,4\n0,0,4,4\n")) == 6);
  TraceReadOptions skip;
  skip.skip_bad_rows = true;
  CHECK(count_rows(dir.write("s.csv", "id,arrival_ns,prompt_tokens,output_tokens\n0,0,4,4\n0,1,4,4\n1,2,4,4\n"), skip) ==
        2);
}

TEST_CASE("an empty JSONL trace is an error like an empty CSV") {
  TempDir dir;
  for (const char* fmt : {"native_jsonl", "mooncake"}) {
    CAPTURE(fmt);
    TraceReadOptions opt;
    opt.format = fmt;
    CHECK(contains(input_error([&] { count_rows(dir.write("e.jsonl", ""), opt); }), "e.jsonl: empty file"));
    CHECK(contains(input_error([&] { compute_trace_stats(dir.write("e.jsonl", ""), opt); }), "empty file"));
    CHECK(contains(input_error([&] { count_rows(dir.write("b.jsonl", "\n  \n"), opt); }), "empty file"));
  }
  TraceReadOptions native;
  native.format = "native_jsonl";
  CHECK(contains(input_error([&] { count_rows(dir.write("c.jsonl", "# clients: [\"a\"]\n"), native); }),
                 "empty file"));
  // The same with the format left to detection (it used to say "cannot tell the trace
  // format from the first line '# ...'").
  TraceReadOptions automatic;
  automatic.format = "auto";
  for (const char* name : {"c.jsonl", "c.csv"}) {
    CAPTURE(name);
    for (const char* text : {"", "\n\n", "# clients: [\"a\"]\n", "# one\n\n# two\n"}) {
      CAPTURE(text);
      const std::string e = input_error([&] { count_rows(dir.write(name, text), automatic); });
      CHECK(contains(e, std::string(name) + ": empty file"));
      CHECK(contains(input_error([&] { compute_trace_stats(dir.write(name, text), automatic); }), "empty file"));
    }
  }
}

TEST_CASE("trace stats warns about epoch-like arrivals, huge spans and an outlier gap, naming the row") {
  TempDir dir;
  TraceStats st = compute_trace_stats(
      dir.write("e.csv", "arrival_s,prompt_tokens,output_tokens\n1700000000,4,4\n1700000003,4,4\n1700000005,4,4\n"), {});
  REQUIRE(st.warnings.size() == 1);
  CHECK(contains(st.warnings[0], "line 2: the first arrival is 1700000000 s, which looks like a UNIX epoch time"));
  CHECK(contains(format_trace_stats(st), "warning:          line 2:"));
  st = compute_trace_stats(dir.write("g.csv", "arrival_s,prompt_tokens,output_tokens\n0,4,4\n1,4,4\n2,4,4\n"
                                              "5000000,4,4\n"),
                           {});
  REQUIRE(st.warnings.size() == 2);
  CHECK(contains(st.warnings[0], "lines 2..5: the arrivals span 57.9 days"));
  CHECK(contains(st.warnings[1], "line 5: arrives 4999998 s after line 4"));
  // Azure dates are rebased by time_origin: auto: no epoch warning; ordinary traces: none.
  st = compute_trace_stats(dir.write("a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,4,4\n"
                                              "2023-11-16 18:17:04,4,4\n"),
                           {});
  CHECK(st.warnings.empty());
}
