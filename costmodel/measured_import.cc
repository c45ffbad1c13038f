// Public measured tables → servesim kernel profile; see measured_import.h.
#include "costmodel/measured_import.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "sim/core/error.h"
#include "sim/core/text_split.h"

namespace servesim {
namespace fs = std::filesystem;
namespace {


// One CSV file, read strictly: every row has the header's cell count; cells are
// fetched by column name and parsed with the file, line and column in errors.
class StrictCsv {
 public:
  explicit StrictCsv(const std::string& path) : path_(path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(fmt::format("{}: cannot open", path));
    std::string line;
    long no = 0;
    while (std::getline(in, line)) {
      ++no;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (trim_blanks(line).empty()) continue;
      std::vector<std::string> cells = split_fields(line, ',');
      if (header_.empty()) {
        for (auto& c : cells) header_.push_back(trim_blanks(c));
        for (std::size_t i = 0; i < header_.size(); ++i) col_[header_[i]] = i;
        continue;
      }
      if (cells.size() != header_.size())
        throw InputError(located(path, no, fmt::format("{} cells, the header has {}", cells.size(), header_.size())));
      rows_.push_back({no, std::move(cells)});
    }
    if (header_.empty()) throw InputError(fmt::format("{}: empty file (no header row)", path));
  }
  struct Row {
    long line;
    std::vector<std::string> cells;
  };
  const std::vector<std::string>& header() const { return header_; }
  const std::vector<Row>& rows() const { return rows_; }
  bool has(const std::string& c) const { return col_.count(c) > 0; }
  void require(const std::vector<std::string>& cols) const {
    for (const auto& c : cols)
      if (!has(c)) throw InputError(fmt::format("{}: header lacks column '{}'", path_, c));
  }
  std::string text(const Row& r, const std::string& c) const { return trim_blanks(r.cells[col_.at(c)]); }
  double number(const Row& r, const std::string& c) const {
    const std::string s = text(r, c);
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v) || v < 0)
      fail(r, c, "a number >= 0", s);
    return v;
  }
  std::int64_t integer(const Row& r, const std::string& c, std::int64_t min = 0) const {
    const std::string s = text(r, c);
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < min)
      fail(r, c, fmt::format("an integer >= {}", min).c_str(), s);
    return v;
  }
  bool boolean(const Row& r, const std::string& c) const {
    const std::string s = text(r, c);
    if (s == "True" || s == "true" || s == "1") return true;
    if (s == "False" || s == "false" || s == "0") return false;
    fail(r, c, "True or False", s);
  }
  [[noreturn]] void fail(const Row& r, const std::string& c, const char* what, const std::string& got) const {
    throw InputError(located(path_, r.line, fmt::format("column '{}': expected {}, got '{}'", c, what, got)));
  }

 private:
  std::string path_;
  std::vector<std::string> header_;
  std::map<std::string, std::size_t> col_;
  std::vector<Row> rows_;
};

// One output row (profile columns; -1 = empty).
struct OutRow {
  std::string kernel, variant;
  std::int64_t batch = -1, ctx = -1, q_len = -1, prefix = -1, heads = -1, kv_heads = -1, head_dim = -1;
  std::int64_t m = -1, n = -1, k = -1;
  std::string params;
  double median_us = 0, bytes = 0, flops = 0;
  int source = 0;
};

OutRow out_row(std::string kernel, std::string variant) {
  OutRow o;
  o.kernel = std::move(kernel);
  o.variant = std::move(variant);
  return o;
}

std::string format_row(const OutRow& r) {
  return fmt::format("{},{},{},{},{},{},{},{},{},,,{},{},{},{},{:.6g},,,{:.6g},{:.6g},{}\n", r.kernel, r.variant,
                     optional_cell(r.batch), optional_cell(r.ctx), optional_cell(r.q_len), optional_cell(r.prefix), optional_cell(r.heads), optional_cell(r.kv_heads),
                     optional_cell(r.head_dim), optional_cell(r.m), optional_cell(r.n), optional_cell(r.k), r.params, r.median_us, r.bytes, r.flops,
                     r.source);
}

bool has_all(const std::set<std::string>& h, std::initializer_list<const char*> cols) {
  for (const char* c : cols)
    if (!h.count(c)) return false;
  return true;
}

struct Sink {
  std::vector<OutRow> rows;
  ImportReport::File* file = nullptr;
  std::string borrowed;
  std::vector<std::string> kernels;
  // A measured time in ms; false (and counted) when it is zero (not measured).
  bool add(OutRow r, double ms) {
    if (!kernels.empty() && std::find(kernels.begin(), kernels.end(), r.kernel) == kernels.end()) {
      ++file->filtered;
      return false;
    }
    if (!(ms > 0)) {
      ++file->zero_skipped;
      return false;
    }
    r.median_us = ms * 1e3;
    if (!borrowed.empty()) r.params += (r.params.empty() ? "" : ";") + std::string("borrowed=") + borrowed;
    rows.push_back(std::move(r));
    ++file->rows_written;
    return true;
  }
};

std::string model_of_path(const std::string& path) {
  // .../compute/<gpu>/<org>/<model>/mlp.csv → <model>
  const fs::path p(path);
  return p.parent_path().filename().string();
}

// Vidur per-op profile: one transformer layer, one TP shard, ms.
void read_vidur_mlp(const StrictCsv& csv, const std::string& path, Sink& out) {
  csv.require({"num_tokens", "num_tensor_parallel_workers", "n_head", "n_kv_head", "n_embd", "n_expanded_embd",
               "vocab_size", "use_gated_mlp"});
  const std::string model = model_of_path(path);
  for (const auto& r : csv.rows()) {
    ++out.file->rows_read;
    const std::int64_t t = csv.integer(r, "num_tokens", 1), tp = csv.integer(r, "num_tensor_parallel_workers", 1);
    const std::int64_t nh = csv.integer(r, "n_head", 1), nkv = csv.integer(r, "n_kv_head", 1);
    const std::int64_t h = csv.integer(r, "n_embd", 1), inter_full = csv.integer(r, "n_expanded_embd", 1);
    const bool gated = csv.boolean(r, "use_gated_mlp");
    if (h % nh != 0) csv.fail(r, "n_embd", "a multiple of n_head", csv.text(r, "n_embd"));
    const std::int64_t d = h / nh, hq = nh / tp, hk = std::max<std::int64_t>(1, nkv / tp), inter = inter_full / tp;
    const double T = static_cast<double>(t);
    const std::string tag = fmt::format("model={};tp={}", model, tp);
    auto time = [&](const char* op) -> double {
      const std::string c = fmt::format("time_stats.{}.median", op);
      if (!csv.has(c)) return 0;
      if (csv.text(r, c).empty()) return 0;  // an op this model does not run
      return csv.number(r, c);
    };
    auto gemm = [&](const char* op, const char* layer, std::int64_t n, std::int64_t k) {
      OutRow o = out_row("gemm", "vidur");
      o.m = t, o.n = n, o.k = k;
      o.params = fmt::format("{};layer={};op={}", tag, layer, op);
      o.flops = 2.0 * T * static_cast<double>(n) * static_cast<double>(k);
      out.add(o, time(op));
    };
    // The operation list's bytes of the part an op prices (operation_list.h), so
    // the cost model evaluates the curve at its own part's bytes.
    auto small = [&](const char* op, const char* variant, double bytes) {
      OutRow o = out_row("elementwise", variant);
      o.m = t;
      o.params = fmt::format("{};op={}", tag, op);
      o.bytes = bytes;
      out.add(o, time(op));
    };
    gemm("attn_pre_proj", "qkv", (hq + 2 * hk) * d, h);
    gemm("attn_post_proj", "o", h, hq * d);
    gemm("mlp_up_proj", "gate_up", (gated ? 2 : 1) * inter, h);
    gemm("mlp_down_proj", "down", h, inter);
    small("emb", "embedding", 4 * T * static_cast<double>(h));
    small("input_layernorm", "rmsnorm", 8 * T * static_cast<double>(h));
    small("post_attention_layernorm", "rmsnorm_post", 8 * T * static_cast<double>(h));
    small("attn_rope", "rope", 4 * T * static_cast<double>((hq + hk) * d));
    small("mlp_act", gated ? "silu_mul" : "gelu", (gated ? 6 : 4) * T * static_cast<double>(inter));
    small("add", "residual_add", 8 * T * static_cast<double>(h));
  }
}

// Vidur collectives (rank 0, one node).
void read_vidur_collective(const StrictCsv& csv, const std::string& path, Sink& out) {
  const bool ar = csv.has("time_stats.all_reduce.median");
  const std::string tcol = ar ? "time_stats.all_reduce.median" : "time_stats.send_recv.median";
  csv.require({tcol, "rank", "num_workers", "size", "devices_per_node"});
  const std::string topology = fs::path(path).parent_path().filename().string();
  for (const auto& r : csv.rows()) {
    ++out.file->rows_read;
    const std::int64_t gpus = csv.integer(r, "num_workers", 1), per_node = csv.integer(r, "devices_per_node", 1);
    if (csv.integer(r, "rank") != 0 || per_node < gpus) {  // other ranks repeat rank 0; multi-node is not TP
      ++out.file->filtered;
      continue;
    }
    OutRow o = out_row(ar ? "allreduce" : "send_recv", "vidur");
    o.bytes = csv.number(r, "size");
    o.params = fmt::format("gpus={};topology={}", gpus, topology);
    out.add(o, csv.number(r, tcol));
  }
}

// Vidur V100 all-reduce: message = num_tokens x n_embd fp16.
void read_vidur_allreduce_legacy(const StrictCsv& csv, Sink& out) {
  csv.require({"time_stats.all_reduce.median", "num_workers", "n_embd", "num_tokens"});
  for (const auto& r : csv.rows()) {
    ++out.file->rows_read;
    OutRow o = out_row("allreduce", "vidur");
    o.bytes = 2.0 * csv.number(r, "num_tokens") * csv.number(r, "n_embd");
    o.params = fmt::format("gpus={}", csv.integer(r, "num_workers", 1));
    out.add(o, csv.number(r, "time_stats.all_reduce.median"));
  }
}

// Vidur attention (one layer of one TP shard).
void read_vidur_attention(const StrictCsv& csv, Sink& out) {
  csv.require({"n_embd", "n_q_head", "n_kv_head", "num_tensor_parallel_workers", "batch_size", "prefill_chunk_size",
               "kv_cache_size", "is_prefill", "time_stats.attn_decode.median", "time_stats.attn_prefill.median"});
  for (const auto& r : csv.rows()) {
    ++out.file->rows_read;
    const std::int64_t tp = csv.integer(r, "num_tensor_parallel_workers", 1);
    const std::int64_t nh = csv.integer(r, "n_q_head", 1), nkv = csv.integer(r, "n_kv_head", 1);
    const std::int64_t h = csv.integer(r, "n_embd", 1);
    OutRow o;
    o.heads = nh / tp, o.kv_heads = std::max<std::int64_t>(1, nkv / tp), o.head_dim = h / nh;
    o.batch = csv.integer(r, "batch_size", 1);
    o.params = fmt::format("tp={}", tp);
    const std::int64_t kv = csv.integer(r, "kv_cache_size");
    if (csv.boolean(r, "is_prefill")) {
      o.kernel = "prefill", o.variant = "vidur_flash_attention";
      o.q_len = csv.integer(r, "prefill_chunk_size", 1);
      o.prefix = kv;
      o.ctx = kv + o.q_len;
      out.add(o, csv.number(r, "time_stats.attn_prefill.median"));
    } else {
      o.kernel = "decode", o.variant = "vidur_flash_attention";
      o.ctx = std::max<std::int64_t>(1, kv);
      out.add(o, csv.number(r, "time_stats.attn_decode.median"));
    }
  }
}

// Vidur per-iteration CPU overheads: scheduling + sampling + input preparation +
// output processing (+ Ray communication with TP > 1), ms.
void read_vidur_cpu(const StrictCsv& csv, Sink& out) {
  const std::vector<std::string> stages = {"SCHEDULE_MEDIAN", "SAMPLER_E2E_MEDIAN", "PREPARE_INPUTS_E2E_MEDIAN",
                                           "PROCESS_MODEL_OUTPUTS_MEDIAN"};
  csv.require(stages);
  csv.require({"model_name", "batch_size", "tensor_parallel_degree"});
  for (const auto& r : csv.rows()) {
    ++out.file->rows_read;
    double ms = 0;
    for (const auto& s : stages) ms += csv.number(r, s);
    const std::int64_t tp = csv.integer(r, "tensor_parallel_degree", 1);
    if (tp > 1 && csv.has("RAY_COMM_TIME_MEDIAN") && !csv.text(r, "RAY_COMM_TIME_MEDIAN").empty())
      ms += csv.number(r, "RAY_COMM_TIME_MEDIAN");
    OutRow o = out_row("cpu_overhead", "vidur");
    o.batch = csv.integer(r, "batch_size", 1);
    o.params = fmt::format("model={};tp={}", fs::path(csv.text(r, "model_name")).filename().string(), tp);
    out.add(o, ms);
  }
}

// A GEMM table: one row per (M, N, K) and a time in ms (AIConfigurator, LLMCompass).
void read_gemm_table(const StrictCsv& csv, const char* variant, const char* m, const char* n, const char* k,
                     const char* ms, Sink& out) {
  for (const auto& r : csv.rows()) {
    ++out.file->rows_read;
    OutRow o = out_row("gemm", variant);
    o.m = csv.integer(r, m, 1), o.n = csv.integer(r, n, 1), o.k = csv.integer(r, k, 1);
    o.flops = 2.0 * static_cast<double>(o.m) * static_cast<double>(o.n) * static_cast<double>(o.k);
    out.add(o, csv.number(r, ms));
  }
}

void read_aic_attention(const StrictCsv& csv, bool context, Sink& out) {
  for (const auto& r : csv.rows()) {
    ++out.file->rows_read;
    OutRow o = out_row(context ? "prefill" : "decode", "vllm_flash_attn");
    o.batch = csv.integer(r, "batch_size", 1);
    o.heads = csv.integer(r, "num_heads", 1), o.kv_heads = csv.integer(r, "num_key_value_heads", 1);
    o.head_dim = csv.integer(r, "head_dim", 1);
    if (context) {
      o.q_len = o.ctx = csv.integer(r, "isl", 1);
      o.prefix = 0;
    } else {
      o.ctx = csv.integer(r, "step", 1);
    }
    out.add(o, csv.number(r, "latency"));
  }
}

void read_aic_nccl(const StrictCsv& csv, Sink& out) {
  for (const auto& r : csv.rows()) {
    ++out.file->rows_read;
    const std::string op = csv.text(r, "op_name");
    if (op.empty()) csv.fail(r, "op_name", "a collective name", op);
    OutRow o = out_row(op == "all_reduce" ? "allreduce" : "collective", op == "all_reduce" ? "nccl" : op);
    o.bytes = csv.number(r, "message_size");
    o.params = fmt::format("gpus={}", csv.integer(r, "num_gpus", 1));
    out.add(o, csv.number(r, "latency"));
  }
}

void read_aic_custom_ar(const StrictCsv& csv, Sink& out) {
  for (const auto& r : csv.rows()) {
    ++out.file->rows_read;
    std::string src = csv.text(r, "kernel_source");
    if (src.empty()) csv.fail(r, "kernel_source", "a kernel name", src);
    OutRow o = out_row("allreduce", ascii_lower(src));
    o.bytes = csv.number(r, "message_size");
    o.params = fmt::format("gpus={}", csv.integer(r, "num_gpus", 1));
    out.add(o, csv.number(r, "latency"));
  }
}

// The provenance table of a corpus README: rows "| file | rows | repo | commit | path | blob | bytes |".
std::map<std::string, std::string> read_provenance_table(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open provenance table", path));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("|")) continue;
    std::vector<std::string> c = split_fields(line, '|');
    if (c.size() < 8) continue;
    for (auto& x : c) x = trim_blanks(x);
    if (c[4].size() != 40 || c[4].find_first_not_of("0123456789abcdef") != std::string::npos) continue;  // header, rule
    out[c[1]] = fmt::format("repo:{};commit:{};path:{};blob:{};rows:{}", c[3], c[4], c[5], c[6], c[2]);
  }
  if (out.empty()) throw InputError(fmt::format("{}: no provenance rows (| file | rows | repo | commit | path | blob |)", path));
  return out;
}

std::vector<std::string> expand(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(fmt::format("{}: no such file or directory", path));
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(path))
    if (e.is_regular_file() && e.path().extension() == ".csv") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  if (out.empty()) throw InputError(fmt::format("{}: directory holds no .csv file", path));
  return out;
}

}  // namespace

std::string detect_import_format(const std::vector<std::string>& header) {
  const std::set<std::string> h(header.begin(), header.end());
  if (has_all(h, {"num_tokens", "num_tensor_parallel_workers", "n_embd"}) && h.count("time_stats.mlp_up_proj.median"))
    return "vidur_mlp";
  if (has_all(h, {"size", "num_workers", "rank"}) &&
      (h.count("time_stats.all_reduce.median") || h.count("time_stats.send_recv.median")))
    return "vidur_collective";
  if (has_all(h, {"time_stats.all_reduce.median", "num_workers", "n_embd", "num_tokens"})) return "vidur_allreduce_legacy";
  if (has_all(h, {"time_stats.attn_decode.median", "is_prefill", "kv_cache_size"})) return "vidur_attention";
  if (has_all(h, {"SCHEDULE_MEDIAN", "batch_size", "tensor_parallel_degree"})) return "vidur_cpu";
  if (has_all(h, {"m", "n", "k", "latency"}) && h.size() == 4) return "aic_gemm";
  if (has_all(h, {"batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "latency"})) return "aic_context";
  if (has_all(h, {"batch_size", "step", "num_heads", "num_key_value_heads", "head_dim", "latency"}))
    return "aic_generation";
  if (has_all(h, {"op_name", "num_gpus", "message_size", "latency"})) return "aic_nccl";
  if (has_all(h, {"kernel_source", "num_gpus", "message_size", "latency"})) return "aic_custom_ar";
  if (has_all(h, {"M", "N", "K", "latency_ms"})) return "llmcompass";
  return "";
}

ImportReport import_measured(const std::vector<ImportInput>& inputs, const ImportOptions& opt) {
  if (opt.gpu.empty()) throw InputError("calibrate import: --gpu is required (the GPU the tables were measured on)");
  if (opt.gpu_sms < 1) throw InputError("calibrate import: --gpu-sms must be >= 1 (the GPU's SM count)");
  if (opt.stack.empty()) throw InputError("calibrate import: --stack is required (the engine stack that measured them)");
  if (inputs.empty()) throw InputError("calibrate import: no input files");
  std::map<std::string, std::string> provenance;
  if (!opt.provenance_table.empty()) provenance = read_provenance_table(opt.provenance_table);
  const fs::path table_dir = opt.provenance_table.empty() ? fs::path() : fs::path(opt.provenance_table).parent_path();

  ImportReport rep;
  std::string sources;
  std::vector<OutRow> rows;
  std::set<std::string> borrowed_stacks;
  std::vector<std::pair<std::string, const ImportInput*>> files;
  for (const auto& in : inputs)
    for (const auto& f : expand(in.path)) files.emplace_back(f, &in);
  rep.files.reserve(files.size());
  for (const auto& [path, input] : files) {
    const std::string& borrowed = input->borrowed_from;
    const StrictCsv csv(path);
    const std::string format = detect_import_format(csv.header());
    if (format.empty())
      throw InputError(fmt::format("{}: not a known measured-table format (header: {}); known: Vidur mlp/attention/"
                                   "all_reduce/send_recv/cpu_overheads, AIConfigurator gemm/context/generation "
                                   "attention/nccl/custom all-reduce, LLMCompass matmul", path,
                                   csv.header().empty() ? std::string("none") : csv.header().front() + ",..."));
    rep.files.push_back({path, format});
    Sink sink{{}, &rep.files.back(), borrowed, input->kernels};
    if (format == "vidur_mlp") read_vidur_mlp(csv, path, sink);
    else if (format == "vidur_collective") read_vidur_collective(csv, path, sink);
    else if (format == "vidur_allreduce_legacy") read_vidur_allreduce_legacy(csv, sink);
    else if (format == "vidur_attention") read_vidur_attention(csv, sink);
    else if (format == "vidur_cpu") read_vidur_cpu(csv, sink);
    else if (format == "aic_gemm") read_gemm_table(csv, "vllm_default", "m", "n", "k", "latency", sink);
    else if (format == "aic_context") read_aic_attention(csv, true, sink);
    else if (format == "aic_generation") read_aic_attention(csv, false, sink);
    else if (format == "aic_nccl") read_aic_nccl(csv, sink);
    else if (format == "aic_custom_ar") read_aic_custom_ar(csv, sink);
    else read_gemm_table(csv, "llmcompass", "M", "N", "K", "latency_ms", sink);
    const int index = static_cast<int>(rep.files.size());
    // Provenance: the table's row for this file (matched by its path relative to the table), else the local file.
    std::string prov;
    if (!provenance.empty()) {
      const std::string rel = fs::path(path).lexically_normal().lexically_relative(table_dir.lexically_normal()).string();
      if (auto it = provenance.find(rel); it != provenance.end()) prov = it->second;
    }
    if (prov.empty()) prov = fmt::format("local:{};bytes:{}", fs::path(path).filename().string(), fs::file_size(path));
    sources += fmt::format("# source.{}=file:{};format:{};{}{}\n", index,
                           opt.provenance_table.empty() ? fs::path(path).filename().string()
                                                        : fs::path(path).lexically_normal().lexically_relative(table_dir.lexically_normal()).string(),
                           format, prov, borrowed.empty() ? "" : ";borrowed_from_stack:" + borrowed);
    if (!borrowed.empty()) borrowed_stacks.insert(borrowed);
    for (auto& r : sink.rows) {
      r.source = index;
      rows.push_back(std::move(r));
    }
  }
  if (rows.empty()) throw InputError("calibrate import: no measured rows in the inputs");
  std::string borrowed_list;
  for (const auto& b : borrowed_stacks) borrowed_list += (borrowed_list.empty() ? "" : ";") + b;
  std::string text = "# format=servesim-kernel-profile\n# schema_version=1\n";
  text += fmt::format("# gpu={}\n# gpu_sms={}\n# stack={}\n", opt.gpu, opt.gpu_sms, opt.stack);
  if (!opt.stack_description.empty()) text += fmt::format("# stack_description={}\n", opt.stack_description);
  text += "# mode=imported\n# measured_by=others (public tables; see the source lines)\n";
  if (!borrowed_list.empty()) text += fmt::format("# borrowed_stacks={}\n", borrowed_list);
  if (!opt.command.empty()) text += fmt::format("# command={}\n", opt.command);
  text += sources;
  text += "kernel,variant,batch,ctx,q_len,prefix,heads,kv_heads,head_dim,page_size,budget,m,n,k,params,median_us,"
          "p10_us,p90_us,bytes,flops,source\n";
  for (const auto& r : rows) text += format_row(r);
  rep.text = std::move(text);
  return rep;
}

}  // namespace servesim
