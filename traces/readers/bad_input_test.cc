// Bad trace input: each problem is an InputError naming file, line and field
// (or, with skip_bad_rows, a skipped and counted row) — never a crash.
#include <doctest/doctest.h>

#include <random>

#include "traces/test_files.h"
#include "traces/readers/trace_reader.h"

using namespace servesim;
using servesim::testing::input_error;
using servesim::testing::contains;
using servesim::testing::count_rows;
using servesim::testing::TempDir;

namespace {

const char* kAzureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\n";

}  // namespace

TEST_CASE("a missing column is an error naming the file, the header line and the column") {
  TempDir dir;
  std::string err = input_error([&] {
    count_rows(dir.write("a.csv", "TIMESTAMP,ContextTokens\n2023-11-16 18:17:03.9799600,4808\n"),
               {"azure"});
  });
  CHECK(contains(err, "a.csv:1:"));
  CHECK(contains(err, "GeneratedTokens"));
  err = input_error([&] { count_rows(dir.write("n.csv", "arrival_ns,prompt_tokens\n0,5\n"), {"native_csv"}); });
  CHECK(contains(err, "n.csv:1:"));
  CHECK(contains(err, "output_tokens"));
}

TEST_CASE("a non-numeric field is an error naming the line, the field and the value") {
  TempDir dir;
  std::string err = input_error([&] {
    count_rows(dir.write("a.csv", std::string(kAzureHeader) + "2023-11-16 18:17:03.9799600,4808,10\n"
                                                               "2023-11-16 18:17:04.0319600,31x0,8\n"));
  });
  CHECK(contains(err, "a.csv:3:"));
  CHECK(contains(err, "ContextTokens"));
  CHECK(contains(err, "'31x0'"));
  err = input_error([&] {
    count_rows(dir.write("a2.csv", std::string(kAzureHeader) + "yesterday,4808,10\n"));
  });
  CHECK(contains(err, "a2.csv:2:"));
  CHECK(contains(err, "TIMESTAMP"));
  err = input_error([&] {
    count_rows(dir.write("m.jsonl", "{\"timestamp\": 0, \"input_length\": \"many\", \"output_length\": 3, \"hash_ids\": [0]}\n"));
  });
  CHECK(contains(err, "m.jsonl:1:"));
  CHECK(contains(err, "input_length"));
}

TEST_CASE("zero or negative token counts are errors where they are impossible") {
  TempDir dir;
  std::string err = input_error([&] {
    count_rows(dir.write("a.csv", std::string(kAzureHeader) + "2023-11-16 18:17:03.9799600,0,10\n"));
  });
  CHECK(contains(err, "a.csv:2:"));
  CHECK(contains(err, "ContextTokens"));
  err = input_error([&] {
    count_rows(dir.write("v.csv", "req_id,client,arrival_s,prompt_tokens,output_tokens\n0,a,0.0,5,-3\n"));
  });
  CHECK(contains(err, "v.csv:2:"));
  CHECK(contains(err, "output_tokens"));
  err = input_error([&] {
    count_rows(dir.write("m.jsonl", "{\"timestamp\": 0, \"input_length\": 0, \"output_length\": 3, \"hash_ids\": []}\n"));
  });
  CHECK(contains(err, "input_length"));
}

TEST_CASE("decreasing timestamps are an error unless sorting is asked for") {
  TempDir dir;
  std::string path = dir.write("a.csv", std::string(kAzureHeader) + "2023-11-16 18:17:05.0,10,10\n"
                                                                      "2023-11-16 18:17:04.0,20,8\n"
                                                                      "2023-11-16 18:17:06.0,30,8\n");
  std::string err = input_error([&] { count_rows(path); });
  CHECK(contains(err, "a.csv:3:"));
  CHECK(contains(err, "decreases"));
  CHECK(contains(err, "line 2"));
  TraceReadOptions sort;
  sort.sort = true;
  auto r = open_trace(path, sort);
  TraceRow row;
  std::vector<std::int64_t> prompts;
  while (r->next(row)) prompts.push_back(row.spec.prompt_tokens);
  CHECK(prompts == std::vector<std::int64_t>{20, 10, 30});
  TraceReadOptions skip;
  skip.skip_bad_rows = true;
  CHECK(count_rows(path, skip) == 2);
}

TEST_CASE("a truncated last line is an error that says the file may be truncated") {
  TempDir dir;
  std::string err = input_error([&] {
    count_rows(dir.write("a.csv", std::string(kAzureHeader) + "2023-11-16 18:17:03.9799600,4808,10\n"
                                                               "2023-11-16 18:17:04.0319600,31"));
  });
  CHECK(contains(err, "a.csv:3:"));
  CHECK(contains(err, "GeneratedTokens"));
  CHECK(contains(err, "truncated"));
  err = input_error([&] {
    count_rows(dir.write("m.jsonl", "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 3, \"hash_ids\": [0]}\n"
                                    "{\"timestamp\": 3000, \"input_length\": 600, \"output_length\": 3, \"hash_ids\": [0, 1"));
  });
  CHECK(contains(err, "m.jsonl:2:"));
  // simdjson checks a record's structure before any field is read, so a cut
  // line is named as a whole, not by the key where it was cut.
  CHECK(contains(err, "field '(json)': the line ends inside an object or list (truncated?)"));
}

TEST_CASE("non-UTF-8 bytes are an error naming the line and column") {
  TempDir dir;
  std::string err = input_error([&] {
    count_rows(dir.write("v.csv", "req_id,client,arrival_s,prompt_tokens,output_tokens\n0,caf\xE9,0.0,5,3\n"));
  });
  CHECK(contains(err, "v.csv:2:"));
  CHECK(contains(err, "UTF-8"));
  CHECK(contains(err, "column 6"));
  // Valid multi-byte UTF-8 is fine.
  CHECK(count_rows(dir.write("ok.csv", "req_id,client,arrival_s,prompt_tokens,output_tokens\n0,caf\xC3\xA9,0.0,5,3\n")) == 1);
}

TEST_CASE("skip_bad_rows skips bad rows, counts them and keeps the first reason") {
  TempDir dir;
  std::string path = dir.write("a.csv", std::string(kAzureHeader) + "2023-11-16 18:17:03.0,4808,10\n"
                                                                      "2023-11-16 18:17:04.0,abc,8\n"
                                                                      "2023-11-16 18:17:05.0,5,\xFF\n"
                                                                      "2023-11-16 18:17:06.0,7\n"
                                                                      "2023-11-16 18:17:07.0,7,7\n");
  TraceReadOptions skip;
  skip.skip_bad_rows = true;
  auto r = open_trace(path, skip);
  TraceRow row;
  std::int64_t n = 0;
  while (r->next(row)) ++n;
  CHECK(n == 2);
  CHECK(r->rows_skipped() == 3);
  CHECK(contains(r->first_skip_reason(), "a.csv:3:"));
  // Header problems stay fatal even when skipping rows.
  CHECK(contains(input_error([&] { count_rows(dir.write("h.csv", "TIMESTAMP,Context\n"), {"azure", true}); }),
                 "h.csv:1:"));
}

TEST_CASE("empty files, unknown paths and malformed mooncake and native rows are errors, not crashes") {
  TempDir dir;
  CHECK(contains(input_error([&] { count_rows(dir.write("e.csv", ""), {"azure"}); }), "empty file"));
  CHECK(contains(input_error([&] { count_rows(dir.file("missing.csv"), {"azure"}); }), "cannot open"));
  std::string err = input_error([&] {
    count_rows(dir.write("m.jsonl", "{\"timestamp\": 0, \"input_length\": 1025, \"output_length\": 3, \"hash_ids\": [0, 1]}\n"));
  });
  CHECK(contains(err, "ceil(input_length/512) = 3"));
  err = input_error([&] {
    count_rows(dir.write("n.jsonl", "{\"id\": 1, \"arrival_ns\": 0, \"prompt_tokens\": 4, \"output_tokens\": 2, "
                                    "\"parents\": [7]}\n"));
  });
  CHECK(contains(err, "n.jsonl:1:"));
  CHECK(contains(err, "parent 7"));
  err = input_error([&] {
    count_rows(dir.write("n3.csv", "id,arrival_ns,prompt_tokens,output_tokens,parents,dependents\n"
                                   "1,0,4,2,,1\n2,0,4,2,1,0\n3,0,4,2,1,0\n"));
  });
  CHECK(contains(err, "n3.csv:4:"));  // parent 1 declared one dependent, not two
  CHECK(contains(input_error([&] {
                   count_rows(dir.write("n4.csv", "id,arrival_ns,prompt_tokens,output_tokens,parents\n1,0,4,2,\n"));
                 }),
                 "'dependents'"));
  err = input_error([&] {
    count_rows(dir.write("n2.jsonl", "{\"arrival_ns\": 0, \"prompt_tokens\": 4, \"output_tokens\": 2, \"prompt\": 1}\n"));
  });
  CHECK(contains(err, "field 'prompt': unknown key"));
}

TEST_CASE("a CSV trace with a header and no data row is an error like an empty JSONL trace") {
  TempDir dir;
  struct Case {
    std::string name, format, text;
  };
  const Case cases[] = {
      {"azure.csv", "auto", "TIMESTAMP,ContextTokens,GeneratedTokens\n"},
      {"burst.csv", "auto", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"},
      {"vtc.csv", "auto", "req_id,arrival_ns,prompt_tokens,output_tokens\n"},
      {"native.csv", "auto", "# servesim native trace v1\n# clients: []\nid,arrival_ns,prompt_tokens,output_tokens\n\n"},
      {"native.jsonl", "native_jsonl", "# servesim native trace v1\n# clients: []\n"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    TraceReadOptions opt;
    opt.format = c.format;
    std::string err = input_error([&] { count_rows(dir.write(c.name, c.text), opt); });
    CHECK(contains(err, c.name));
    CHECK((contains(err, "no ") && (contains(err, "data rows") || contains(err, "rows (one JSON"))));
    // skip_bad_rows does not make an empty trace acceptable either.
    opt.skip_bad_rows = true;
    CHECK_FALSE(input_error([&] { count_rows(dir.file(c.name), opt); }).empty());
  }
  CHECK(contains(input_error([&] { count_rows(dir.file("native.csv")); }), "native.csv:3: header: no native_csv data rows"));
  // One data row is enough; a BurstGPT file whose rows are all dropped failed requests is not empty.
  CHECK(count_rows(dir.write("one.csv", "req_id,arrival_ns,prompt_tokens,output_tokens\n0,0,4,2\n")) == 1);
  CHECK(count_rows(dir.write("failed.csv", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                                           "5,ChatGPT,10,0,10,Conversation log\n")) == 0);
}

TEST_CASE("randomly corrupted trace files either read or fail with an InputError") {
  const std::vector<std::pair<std::string, std::string>> seeds = {
      {"a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,4808,10\n"
                "2023-11-16 18:17:04.0319600,3180,8\n"},
      {"b.csv", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,"
                "Conversation log\n45,GPT-4,1087,0,1087,API log\n"},
      {"m.jsonl", "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 1]}\n"
                  "{\"timestamp\": 3000, \"input_length\": 10, \"output_length\": 3, \"hash_ids\": [0]}\n"},
      {"v.csv", "req_id,client,arrival_s,prompt_tokens,output_tokens\n0,a,0.0,13,199\n1,b,0.2,36,137\n"},
      {"n.jsonl", "# clients: [\"a\"]\n{\"id\": 1, \"client\": \"a\", \"arrival_ns\": 5, \"prompt_tokens\": 40, "
                  "\"output_tokens\": 2, \"dependents\": 1, \"prefix_block_size\": 16, \"prefix_blocks\": [1, 2, 3]}\n"
                  "{\"id\": 2, \"arrival_ns\": 5, \"prompt_tokens\": 4, \"output_tokens\": 2, \"parents\": [1]}\n"},
  };
  std::mt19937_64 rng(7);
  TempDir dir;
  int failures = 0, successes = 0;
  for (int iter = 0; iter < 600; ++iter) {
    const auto& [name, text] = seeds[iter % seeds.size()];
    std::string s = text;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      std::size_t pos = rng() % s.size();
      switch (rng() % 4) {
        case 0: s[pos] = static_cast<char>(rng() % 256); break;
        case 1: s.erase(pos, 1 + rng() % 8); break;
        case 2: s.insert(pos, 1, "0,\"[]{}:-.9\n\xC3"[rng() % 14]); break;
        case 3: s.resize(pos); break;
      }
      if (s.empty()) s = "x";
    }
    std::string path = dir.write(name, s);
    for (bool skip : {false, true}) {
      TraceReadOptions opt;
      opt.skip_bad_rows = skip;
      try {
        count_rows(path, opt);
        ++successes;
      } catch (const InputError&) {
        ++failures;
      }  // any other exception fails the test
    }
  }
  CHECK(failures > 0);
  CHECK(successes > 0);
}

TEST_CASE("JSON Lines records are read by simdjson: decimals, escapes, nested values, nulls and syntax errors") {
  TempDir dir;
  // Whole numbers written as decimals, an unknown nested value (skipped), escapes in a key's neighbours.
  CHECK(count_rows(dir.write("ok.jsonl", "{\"timestamp\": 1000.0, \"input_length\": 600.0, \"output_length\": 3, "
                                         "\"hash_ids\": [0, 1], \"extra\": {\"a\": [1, {\"b\": \"x\\\"y\"}]}}\n")) == 1);
  auto r = open_trace(dir.write("c.jsonl", "{\"arrival_ns\": 0, \"prompt_tokens\": 4, \"output_tokens\": 2, "
                                           "\"client\": \"caf\\u00e9 \\\"a\\\"\", \"session\": null}\n"), {});
  TraceRow row;
  REQUIRE(r->next(row));
  CHECK(row.client == "caf\xC3\xA9 \"a\"");
  auto err = [&](const char* name, const std::string& text) { return input_error([&] { count_rows(dir.write(name, text)); }); };
  const std::string ok_tail = "\"output_length\": 3, \"hash_ids\": [0]}\n";
  CHECK(contains(err("f.jsonl", "{\"timestamp\": 0, \"input_length\": 10.5, " + ok_tail),
                 "f.jsonl:1: field 'input_length': expected an integer, got '10.5'"));
  CHECK(contains(err("b.jsonl", "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 3, \"hash_ids\": [0, -1]}\n"),
                 "field 'hash_ids': element 1: expected a non-negative integer, got '-1'"));
  CHECK(contains(err("s.jsonl", "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 3, \"hash_ids\": \"0\"}\n"),
                 "field 'hash_ids': expected a list of non-negative integers, got '\"0\"'"));
  CHECK(contains(err("t.jsonl", "{\"timestamp\": 0, \"input_length\": 10, " + ok_tail.substr(0, ok_tail.size() - 1) + " x\n"),
                 "t.jsonl:1: field '(json)'"));
  CHECK(contains(input_error([&] { count_rows(dir.write("a.jsonl", "[1, 2]\n"), {"mooncake"}); }),
                 "a.jsonl:1: field '(json)': expected a JSON object starting with '{'"));
  CHECK(contains(err("c2.jsonl", "{\"timestamp\": 0 \"input_length\": 10, " + ok_tail), "c2.jsonl:1:"));
  CHECK(contains(err("n.jsonl", "{\"arrival_ns\": 0, \"prompt_tokens\": 4, \"output_tokens\": 2, \"client\": 7}\n"),
                 "field 'client': expected a string, got '7'"));
  CHECK(contains(err("e.jsonl", "{\"arrival_s\": 1e999, \"prompt_tokens\": 4, \"output_tokens\": 2}\n"),
                 "field 'arrival_s': expected a number"));
}
