// Tests of reading kernel profile CSVs: provenance, cells, and clear errors.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "costmodel/profile_table.h"
#include "costmodel/synthetic_profile.h"
#include "sim/core/error.h"

using namespace servesim;

namespace {

const std::string kHeader =
    "kernel,variant,batch,ctx,q_len,prefix,heads,kv_heads,head_dim,page_size,budget,m,n,k,params,reps,median_us,p10_us,"
    "p90_us,min_us,max_us,bytes,flops,gbps,tflops\n";
const std::string kProvenance = "# format=servesim-kernel-profile\n# schema_version=1\n# gpu=Test GPU\n# future_key=x\n";
const std::string kDecodeRow =
    "decode,splitkv,4,1024,1,,32,8,128,16,,,,,model=llama3-8b;ragged=0;ctx_sum=4096,20,12.5,12.0,13.0,11.9,13.1,1e6,"
    "2e6,80.0,0.16\n";

std::string error_of(const std::string& text) {
  try {
    ProfileTable::parse(text, "p.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a profile keeps its provenance and typed cells and ignores unknown provenance keys") {
  ProfileTable t = ProfileTable::parse(kProvenance + kHeader + kDecodeRow, "p.csv");
  CHECK(t.provenance_value("gpu") == "Test GPU");
  CHECK(t.provenance_value("future_key") == "x");
  CHECK_FALSE(t.synthetic());
  REQUIRE(t.points().size() == 1);
  const ProfilePoint& p = t.points()[0];
  CHECK(p.kernel == "decode");
  CHECK(p.batch == 4);
  CHECK(p.prefix == -1);  // empty cell: not applicable
  CHECK(p.median_us == 12.5);
  CHECK(p.line == 6);
  CHECK(p.param("model") == "llama3-8b");
  CHECK(p.param_number("ctx_sum", 0, "p.csv") == 4096);
  CHECK_FALSE(p.param("missing"));
  CHECK(t.rows("decode", "splitkv").size() == 1);
  CHECK(t.rows("prefill").empty());
  CHECK(t.provenance_summary().find("gpu=Test GPU") != std::string::npos);
  CHECK(t.provenance_summary().find("sessions=") == std::string::npos);
}

TEST_CASE("a profile merged from several measuring sessions names their count and the latest in its identity") {
  const std::string sessions =
      "# session.1=families:decode;gpu_uuid:a;git_commit:0123456789abcdef0123;date_utc:2026-11-25T22:18:43Z\n"
      "# session.2=families:minference;gpu_uuid:b;git_commit:4e8720f88e5aa23a8f7f;date_utc:2026-11-26T10:35:27Z\n";
  ProfileTable t = ProfileTable::parse(kProvenance + sessions + kHeader + kDecodeRow, "p.csv");
  CHECK(t.provenance_summary().find(" sessions=2 latest=2026-11-26T10:35:27Z commit=4e8720f88e5a") != std::string::npos);
}

TEST_CASE("a file that is not a bench profile, or has another schema version, is rejected with the line") {
  CHECK(error_of(kHeader + kDecodeRow).find("p.csv:1: not a servesim kernel profile") == 0);
  std::string v2 = "# format=servesim-kernel-profile\n# schema_version=2\n" + kHeader + kDecodeRow;
  CHECK(error_of(v2).find("schema_version '2' is not supported") != std::string::npos);
}

TEST_CASE("profile errors name the file, the line and the column") {
  std::string bad = kDecodeRow;
  bad.replace(bad.find("12.5"), 4, "abc");
  CHECK(error_of(kProvenance + kHeader + bad) == "p.csv:6: column 'median_us': expected a number > 0, got 'abc'");
  std::string neg = kDecodeRow;
  neg.replace(neg.find(",4,1024"), 7, ",-4,1024");
  CHECK(error_of(kProvenance + kHeader + neg).find("p.csv:6: column 'batch'") == 0);
  CHECK(error_of(kProvenance + kHeader + "decode,splitkv,1\n").find("p.csv:6: 3 cells, the header has 25") == 0);
  std::string no_col = kHeader;
  no_col.replace(no_col.find("median_us"), 9, "med");
  CHECK(error_of(kProvenance + no_col + kDecodeRow).find("header lacks column 'median_us'") != std::string::npos);
  CHECK(error_of(kProvenance + kHeader).find("no measured rows") != std::string::npos);
  CHECK(error_of(kProvenance + kHeader + "# late=1\n" + kDecodeRow).find("p.csv:6: provenance line after") == 0);
}

TEST_CASE("profile cells may carry blanks, and a row with more cells than the header is an error") {
  std::string padded = kDecodeRow;
  padded.replace(padded.find(",4,1024"), 7, ", 4 ,\t1024");
  padded.replace(padded.find("12.5"), 4, " 1.25e1\t");
  padded.replace(0, 6, " decode ");
  ProfileTable t = ProfileTable::parse(kProvenance + kHeader + padded, "p.csv");
  REQUIRE(t.points().size() == 1);
  CHECK(t.points()[0].kernel == "decode");
  CHECK(t.points()[0].batch == 4);
  CHECK(t.points()[0].ctx == 1024);
  CHECK(t.points()[0].median_us == 12.5);
  std::string extra = kDecodeRow;
  extra.insert(extra.size() - 1, ",x");
  CHECK(error_of(kProvenance + kHeader + extra).find("p.csv:6: 26 cells, the header has 25") == 0);
  std::string spaced = kDecodeRow;
  spaced.replace(spaced.find("12.5"), 4, "12 .5");
  CHECK(error_of(kProvenance + kHeader + spaced) == "p.csv:6: column 'median_us': expected a number > 0, got '12 .5'");
}

TEST_CASE("a profile file reads as its text parses, across the reader's 1 MiB blocks") {
  // ~2.6 MiB of rows of varying length: block boundaries fall inside rows, between
  // '\r' and '\n', and next to blank lines; the last row has no newline.
  std::string text = kProvenance + kHeader;
  for (int i = 0; text.size() < (std::size_t{5} << 19); ++i) {
    std::string row = kDecodeRow;
    row.replace(row.find("12.5"), 4, std::to_string(i % 997 + 1) + "." + std::string(static_cast<std::size_t>(i % 7), '5'));
    if (i % 3 == 0) row.insert(row.size() - 1, "\r");
    if (i % 11 == 0) row += "\n";
    text += row;
  }
  text.pop_back();
  const auto path = std::filesystem::temp_directory_path() / "servesim_profile_table_test.csv";
  std::ofstream(path, std::ios::binary) << text;
  const ProfileTable from_file = ProfileTable::load(path.string());
  const ProfileTable from_text = ProfileTable::parse(text, path.string());
  std::filesystem::remove(path);
  REQUIRE(from_file.points().size() == from_text.points().size());
  CHECK(from_file.points().size() > 10000);
  for (std::size_t i = 0; i < from_text.points().size(); ++i) {
    const ProfilePoint &a = from_file.points()[i], &b = from_text.points()[i];
    REQUIRE(a.line == b.line);
    REQUIRE(a.median_us == b.median_us);
    REQUIRE(a.params == b.params);
    REQUIRE(a.flops == b.flops);
  }
  CHECK(from_file.provenance() == from_text.provenance());
}

TEST_CASE("a directory is not a profile: an error naming the path") {
  CHECK_THROWS_AS(ProfileTable::load(std::filesystem::temp_directory_path().string()), InputError);
}

TEST_CASE("a missing profile file is an error naming the path") {
  CHECK_THROWS_WITH_AS(ProfileTable::load("/nonexistent/profile.csv"),
                       "/nonexistent/profile.csv: cannot open kernel profile", InputError);
}

TEST_CASE("the synthetic profile is in the bench schema, deterministic, and flagged as not measured") {
  SyntheticOptions o;
  o.quick = true;
  const std::string a = synthetic_profile_csv(o);
  CHECK(a == synthetic_profile_csv(o));
  ProfileTable t = ProfileTable::parse(a, "synth.csv");
  CHECK(t.synthetic());
  CHECK(t.provenance_summary().find("SYNTHETIC") == 0);
  CHECK(!t.rows("decode").empty());
  CHECK(!t.rows("gemm").empty());
  CHECK(!t.rows("quest_topk", "kvhead").empty());
  CHECK(!t.rows("minf_attention", "vs_30_2048").empty());
  CHECK(!t.rows("andpro_score", "w32").empty());
  o.seed = 2;
  CHECK(synthetic_profile_csv(o) != a);
}

TEST_CASE("a row's params: the first field whose text before its first '=' is the key gives the rest") {
  ProfilePoint p;
  CHECK_FALSE(p.param("a"));  // no params at all
  p.params = "a=1;tp=2;ab=3;;x;=7;eq=a=b;a=9;long_key=a value longer than fifteen chars";
  CHECK(p.param("a") == "1");  // the first of two fields with the key
  CHECK(p.param("t") == std::nullopt);  // a key is the whole text before '=', not a prefix
  CHECK(p.param("ab") == "3");
  CHECK(p.param("x") == std::nullopt);  // a field without '='
  CHECK(p.param("") == "7");  // an empty key
  CHECK(p.param("eq") == "a=b");  // later '=' belong to the value
  CHECK(p.param("long_key") == "a value longer than fifteen chars");
  CHECK(p.param_number("tp", -1, "p.csv") == 2);
  CHECK(p.param_number("missing", -1, "p.csv") == -1);
  CHECK_THROWS_AS(p.param_number("eq", -1, "p.csv"), InputError);
  p.params = "dense=1;";  // a trailing ';': an empty last field
  CHECK(p.param("dense") == "1");
  CHECK_FALSE(p.param("dist"));
}
