// Importing public measured tables (measured_import.h) and cross-validating
// the imported profile (profile_crossval.h).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "costmodel/calibrated_cost_model.h"
#include "costmodel/kernel_fits.h"
#include "costmodel/measured_import.h"
#include "costmodel/profile_crossval.h"
#include "costmodel/profile_table.h"
#include "sim/core/error.h"

namespace servesim {
namespace {
namespace fs = std::filesystem;

struct TempDir {
  fs::path dir;
  TempDir() {
    dir = fs::temp_directory_path() / fs::path("servesim_import_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  ~TempDir() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = dir / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
};

const char* kMlpHeader =
    "time_stats.emb.median,time_stats.input_layernorm.median,time_stats.attn_pre_proj.median,"
    "time_stats.attn_rope.median,time_stats.attn_post_proj.median,time_stats.post_attention_layernorm.median,"
    "time_stats.mlp_up_proj.median,time_stats.mlp_act.median,time_stats.mlp_down_proj.median,time_stats.add.median,"
    "n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,use_gated_mlp,num_tokens,num_tensor_parallel_workers\n";

// A made-up model whose op times grow with tokens (ms), TP 1 and 2.
std::string mlp_csv(int heads, int kv, int hidden, int inter, double scale) {
  std::string s = kMlpHeader;
  for (int tp : {1, 2})
    for (int t : {1, 16, 64, 256, 1024, 4096}) {
      const double g = scale * (0.01 + 1e-5 * t) / tp;
      s += std::to_string(0.002 * scale) + "," + std::to_string(0.003 + 1e-6 * t) + "," + std::to_string(g) + "," +
           std::to_string(0.004 + 1e-6 * t) + "," + std::to_string(g / 3) + "," + std::to_string(0.003 + 1e-6 * t) +
           "," + std::to_string(2 * g) + "," + std::to_string(0.005 + 2e-6 * t) + "," + std::to_string(g) + "," +
           std::to_string(0.002 + 1e-6 * t) + "," + std::to_string(heads) + "," + std::to_string(kv) + "," +
           std::to_string(hidden) + "," + std::to_string(inter) + ",32000,True," + std::to_string(t) + "," +
           std::to_string(tp) + "\n";
    }
  return s;
}

ImportOptions options() { return ImportOptions{"Test GPU", 108, "test-stack", "", "", "test"}; }

}  // namespace

TEST_CASE("import: formats are recognized by their header rows") {
  auto cols = [](const std::string& header) {
    std::vector<std::string> out;
    std::size_t a = 0;
    while (true) {
      const auto b = header.find(',', a);
      out.push_back(header.substr(a, b == std::string::npos ? std::string::npos : b - a));
      if (b == std::string::npos) return out;
      a = b + 1;
    }
  };
  std::string mlp = kMlpHeader;
  mlp.pop_back();
  CHECK(detect_import_format(cols(mlp)) == "vidur_mlp");
  CHECK(detect_import_format(cols("m,n,k,latency")) == "aic_gemm");
  CHECK(detect_import_format(cols("batch_size,isl,num_heads,num_key_value_heads,head_dim,latency")) == "aic_context");
  CHECK(detect_import_format(cols("batch_size,step,num_heads,num_key_value_heads,head_dim,latency")) ==
        "aic_generation");
  CHECK(detect_import_format(cols("op_name,num_gpus,message_size,latency")) == "aic_nccl");
  CHECK(detect_import_format(cols("kernel_source,num_gpus,message_size,latency")) == "aic_custom_ar");
  CHECK(detect_import_format(cols("M,N,K,latency_ms,throughput_tflops")) == "llmcompass");
  CHECK(detect_import_format(cols(
            "time_stats.all_reduce.median,rank,num_workers,size,collective,devices_per_node,max_devices_per_node")) ==
        "vidur_collective");
  CHECK(detect_import_format(cols("a,b,c")).empty());
}

TEST_CASE("import: Vidur per-op rows become GEMMs at the TP shard's shape and small ops over part bytes") {
  TempDir tmp;
  const std::string f = tmp.write("compute/x/org/Model-A/mlp.csv", mlp_csv(32, 8, 4096, 14336, 1.0));
  const ImportReport r = import_measured({{f, "", {}}}, options());
  REQUIRE(r.files.size() == 1);
  CHECK(r.files[0].format == "vidur_mlp");
  CHECK(r.files[0].rows_read == 12);
  CHECK(r.files[0].rows_written == 12 * 10);
  const ProfileTable t = ProfileTable::parse(r.text, "imported.csv");
  CHECK(t.provenance_value("stack") == "test-stack");
  CHECK(t.provenance_value("mode") == "imported");
  CHECK(t.provenance_value("source.1").find("format:vidur_mlp") != std::string::npos);
  bool qkv_tp2 = false, norm = false;
  for (const auto& p : t.points()) {
    CHECK(p.source == 1);
    if (p.kernel == "gemm" && p.param("layer") == "qkv" && p.param("tp") == "2") {
      qkv_tp2 = true;
      CHECK(p.n == (16 + 2 * 4) * 128);  // 16 query and 4 KV heads per GPU, head dim 128
      CHECK(p.k == 4096);
      CHECK(p.param("model") == "Model-A");
    }
    if (p.kernel == "elementwise" && p.variant == "rmsnorm" && p.m == 1024 && p.param("tp") == "1") {
      norm = true;
      CHECK(p.bytes == doctest::Approx(8.0 * 1024 * 4096));  // the operation list's attn_norm bytes
      CHECK(p.median_us == doctest::Approx(1e3 * (0.003 + 1e-6 * 1024)));
    }
  }
  CHECK(qkv_tp2);
  CHECK(norm);
}

TEST_CASE("import: bad cells name file, line and column, and zero times are skipped and counted") {
  TempDir tmp;
  std::string text = mlp_csv(32, 8, 4096, 14336, 1.0);
  const auto bad = text.find("True");
  text.replace(bad, 4, "maybe");
  const std::string f = tmp.write("bad/mlp.csv", text);
  try {
    import_measured({{f, "", {}}}, options());
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    const std::string m = e.what();
    CHECK(m.find("mlp.csv:2") != std::string::npos);
    CHECK(m.find("use_gated_mlp") != std::string::npos);
  }
  const std::string g = tmp.write("gemm/gemm_perf.csv", "m,n,k,latency\n1,4096,4096,0.02\n2,4096,4096,0\n");
  const ImportReport r = import_measured({{g, "", {}}}, options());
  CHECK(r.files[0].rows_written == 1);
  CHECK(r.files[0].zero_skipped == 1);
  const std::string h = tmp.write("gemm2/gemm_perf.csv", "m,n,k,latency\n1,4096,-5,0.02\n");
  CHECK_THROWS_WITH_AS(import_measured({{h, "", {}}}, options()),
                       doctest::Contains("gemm_perf.csv:2: column 'k'"), InputError);
  CHECK_THROWS_AS(import_measured({{tmp.write("x.csv", "a,b\n1,2\n"), "", {}}}, options()), InputError);
}

TEST_CASE("import: borrowed rows are marked, filtered by kernel, and the all-reduce is priced from the table") {
  TempDir tmp;
  const std::string gemm = tmp.write("a/gemm_perf.csv", [] {
    std::string s = "m,n,k,latency\n";
    for (int n : {3072, 4096, 6144, 8192, 28672})
      for (int k : {4096, 14336})
        for (int m : {1, 8, 64, 256, 1024, 4096})
          s += std::to_string(m) + "," + std::to_string(n) + "," + std::to_string(k) + "," +
               std::to_string(0.005 + 2.0 * m * n * k / 250e12 * 1e3 + 2.0 * n * k / 1.6e12 * 1e3) + "\n";
    return s;
  }());
  std::string att = "batch_size,step,num_heads,num_key_value_heads,head_dim,latency\n";
  for (int b : {1, 4, 16})
    for (int s : {128, 1024, 8192}) att += fmt::format("{},{},16,4,128,{}\n", b, s, 0.01 + b * s * 2048.0 / 1.5e12 * 1e3);
  const std::string dec = tmp.write("a/generation_attention_perf.csv", att);
  std::string ctx = "batch_size,isl,num_heads,num_key_value_heads,head_dim,latency\n";
  for (int b : {1, 4})
    for (int s : {128, 1024, 4096}) ctx += fmt::format("{},{},16,4,128,{}\n", b, s, 0.01 + 2.0 * b * s * s * 2048 / 150e12 * 1e3);
  const std::string pre = tmp.write("a/context_attention_perf.csv", ctx);
  std::string ar = "op_name,num_gpus,message_size,latency\n";
  for (double bytes = 1024; bytes <= 1 << 28; bytes *= 4) ar += fmt::format("all_reduce,2,{},{}\n", bytes, 0.02 + bytes / 150e9 * 1e3);
  const std::string nccl = tmp.write("a/nccl_perf.csv", ar);
  const std::string mlp = tmp.write("v/org/Model-A/mlp.csv", mlp_csv(32, 8, 4096, 14336, 1.0));
  const ImportReport r = import_measured(
      {{gemm, "", {}}, {dec, "", {}}, {pre, "", {}}, {nccl, "", {}}, {mlp, "vidur-2024", {"elementwise"}}}, options());
  const ProfileTable t = ProfileTable::parse(r.text, "imported.csv");
  CHECK(t.provenance_value("borrowed_stacks") == "vidur-2024");
  for (const auto& p : t.points()) {
    if (p.source == 5) {
      CHECK(p.kernel == "elementwise");  // the borrowed GEMMs were filtered out
      CHECK(p.param("borrowed") == "vidur-2024");
    }
  }
  CHECK(r.files[4].filtered == 12 * 4);
  auto fits = std::make_shared<const KernelFits>(KernelFits::fit(t));
  REQUIRE(fits->allreduce().count(2));
  ModelSpec m;  // Llama-3-8B shape
  m.name = "test-8b";
  m.layers = 32, m.hidden = 4096, m.heads = 32, m.kv_heads = 8, m.head_dim = 128, m.intermediate = 14336, m.vocab = 128256;
  HardwareSpec hw;
  CalibratedOptions o;
  o.tp = 2;
  const CalibratedCostModel cm(fits, m, hw, AttentionMethods{}, o);
  CHECK(cm.identity().find("allreduce=measured (2 gpus; nccl)") != std::string::npos);
  BatchShape b;
  b.decode_contexts = {1000, 2000};
  const auto parts = cm.parts(b);
  const double message = 2.0 * 4096 * 2;  // [2 tokens, hidden] bf16
  CHECK(parts[static_cast<std::size_t>(Part::kAllreduce)] ==
        doctest::Approx(32 * 2 * fits->allreduce().at(2)(message)));
  // Norms run as two measured kernels (residual add + RMSNorm) in the borrowed stack.
  CHECK(parts[static_cast<std::size_t>(Part::kAttnNorm)] > 0);
  CHECK(cm.identity().find("kv_write priced as the measured residual add") != std::string::npos);
}

TEST_CASE("crossval: leave one model out predicts a model's layer from the others") {
  TempDir tmp;
  const std::string a = tmp.write("v/org/Model-A/mlp.csv", mlp_csv(32, 8, 4096, 14336, 1.0));
  const std::string b = tmp.write("v/org/Model-B/mlp.csv", mlp_csv(64, 8, 8192, 28672, 3.5));
  const std::string c = tmp.write("v/org/Model-C/mlp.csv", mlp_csv(40, 40, 5120, 13824, 1.8));
  const ImportReport r = import_measured({{tmp.dir.string() + "/v", "", {}}}, options());
  CHECK(r.files.size() == 3);
  const CrossvalResult cv = crossval_profile(ProfileTable::parse(r.text, "imported.csv"));
  bool layer = false, tp = false, tokens = false;
  for (const auto& row : cv.rows) {
    CHECK(row.error.points > 0);
    CHECK(std::isfinite(row.error.median));
    if (row.experiment == "model-out" && row.part == "layer_sum") {
      layer = true;
      CHECK(row.target_median == 0.05);
    }
    tp = tp || row.experiment == "tp";
    tokens = tokens || row.experiment == "tokens";
  }
  CHECK(layer);
  CHECK(tp);
  CHECK(tokens);
  CHECK(crossval_csv(cv).starts_with("experiment,part,points"));
}

}  // namespace servesim

namespace servesim {

TEST_CASE("size-out holds out whole message sizes and compares with the envelope the model prices") {
  // Two implementations, NCCL with every row twice and a custom kernel that is
  // cheaper at every size. Both are straight lines in bytes, so a size held out with
  // all its rows is predicted exactly from its neighbours' envelope. Comparing it with
  // NCCL's own time would measure the implementation choice (here 2-4x), and keeping
  // NCCL's repeated row would leak the held-out size.
  std::string csv = "# format=servesim-kernel-profile\n# schema_version=1\n"
                    "kernel,variant,batch,ctx,q_len,prefix,heads,kv_heads,head_dim,page_size,budget,m,n,k,params,"
                    "median_us,p10_us,p90_us,bytes,flops\n";
  for (double mib = 0.25; mib <= 64; mib *= 2) {
    const double bytes = mib * 1048576;
    for (int rep = 0; rep < 2; ++rep)
      csv += fmt::format("allreduce,nccl,,,,,,,,,,,,,gpus=8,{},,,{},0\n", 20 + 10 * mib, bytes);
    csv += fmt::format("allreduce,custom,,,,,,,,,,,,,gpus=8,{},,,{},0\n", 5 + 8 * mib, bytes);
  }
  const CrossvalResult cv = crossval_profile(ProfileTable::parse(csv, "ar.csv"));
  REQUIRE(cv.rows.size() == 1);
  CHECK(cv.rows[0].experiment == "size-out");
  CHECK(cv.rows[0].part == "allreduce/8gpu");
  CHECK(cv.rows[0].error.points == 4);  // sizes 0.5, 2, 8, 32 MiB: every other interior size
  CHECK(cv.rows[0].error.max < 1e-9);
}

TEST_CASE("stack disagreement: identical shapes of two stacks compared, never averaged") {
  TempDir tmp;
  const std::string a = tmp.write("a/gemm_perf.csv", "m,n,k,latency\n4096,12288,4096,1.517\n1,4096,4096,0.02\n");
  const std::string b = tmp.write("b/org/Model/mlp.csv", mlp_csv(32, 32, 4096, 11008, 1.0));
  const ProfileTable ta = ProfileTable::parse(import_measured({{a, "", {}}}, options()).text, "a.csv");
  const ProfileTable tb = ProfileTable::parse(import_measured({{b, "", {}}}, options()).text, "b.csv");
  const auto d = stack_disagreement(ta, tb);
  REQUIRE(d.size() == 1);
  CHECK(d[0].kernel == "gemm");
  // The MHA model's QKV at 4,096 tokens (n = 3 x 4096 at TP 1) and its O projection at 1 token.
  CHECK(d[0].matches == 2);
  CHECK(d[0].p10 == doctest::Approx((0.01 + 1e-5 * 4096) / 1.517).epsilon(1e-4));
  CHECK(d[0].p90 == doctest::Approx((0.01 + 1e-5) / 3 / 0.02).epsilon(1e-4));
  CHECK(d[0].example.find("4096x12288x4096") != std::string::npos);
}

}  // namespace servesim
