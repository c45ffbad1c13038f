// Importing public GPU measurements into servesim's kernel-profile format
// (profile_table.h), so that one calibrated backend prices every source: our
// own bench profiles and others' published tables (docs/costmodel.md,
// "Measured public data").
//
// Formats read, each recognized by its header row (files are read unchanged):
//   vidur_mlp         Vidur per-op profile (compute/<gpu>/<org>/<model>/mlp.csv): per
//                     layer and TP shard, ms; the GEMMs become `gemm` rows at the
//                     shard's (n, k), the small ops `elementwise` rows over the bytes
//                     the operation list gives that op (operation_list.h)
//   vidur_collective  Vidur all_reduce.csv / send_recv.csv (size in bytes, ms):
//                     `allreduce` / `send_recv` rows, rank 0, one node only
//   vidur_attention   Vidur attention.csv (decode: batch × KV length; prefill: chunk ×
//                     KV already cached): `decode` / `prefill` rows
//   vidur_cpu         Vidur cpu_overheads.csv: `cpu_overhead` rows (sum of the stages)
//   vidur_allreduce_legacy  Vidur V100 all_reduce.csv (num_tokens × n_embd fp16)
//   aic_gemm          AIConfigurator gemm_perf (m, n, k, ms): `gemm` rows
//   aic_context       AIConfigurator context_attention_perf: `prefill` rows
//   aic_generation    AIConfigurator generation_attention_perf: `decode` rows
//   aic_nccl          AIConfigurator nccl_perf: all_reduce → `allreduce` (variant nccl),
//                     other collectives → `collective`
//   aic_custom_ar     AIConfigurator custom_allreduce_perf: `allreduce` rows (variant =
//                     kernel_source)
//   llmcompass        LLMCompass matmul_A100.csv: `gemm` rows
//
// Strict: a missing column, a malformed or negative cell is an InputError naming
// the file, line and column. A zero time is a row the source did not measure
// (Vidur writes 0 for an op it skipped): it is not imported, and counted.
//
// Provenance: every input file is one source (`# source.N=` line; repo, commit,
// path and git blob from a provenance table when one is given — the corpus
// README's markdown table — else the local path and size), every output row
// names its source in the `source` column, and rows taken from another engine
// stack than the profile's (`borrowed`) carry `borrowed=<stack>` in params.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace servesim {

struct ImportInput {
  std::string path;
  std::string borrowed_from;         // empty: the profile's own stack; else the stack these rows come from
  std::vector<std::string> kernels;  // empty: every row; else only rows of these kernels (e.g. elementwise)
};

struct ImportOptions {
  std::string gpu;           // e.g. "NVIDIA A100-SXM4-80GB" (provenance `gpu`)
  std::int64_t gpu_sms = 0;  // provenance `gpu_sms` (GEMM wave quantization); required
  std::string stack;         // e.g. "vllm-0.14" (provenance `stack`)
  std::string stack_description;
  std::string provenance_table;  // optional: markdown table (file, rows, repo, commit, path, blob, bytes)
  std::string command;           // the command line, written as provenance
};

struct ImportReport {
  struct File {
    std::string path, format;
    std::int64_t rows_read = 0, rows_written = 0, zero_skipped = 0, filtered = 0;  // filtered: other rank,
                                                                                  // node or kernel
  };
  std::vector<File> files;
  std::string text;  // the profile CSV
};

// Reads every input (a file, or a directory searched recursively for *.csv in
// sorted order) and returns the profile text. Throws InputError on bad input.
ImportReport import_measured(const std::vector<ImportInput>& inputs, const ImportOptions& opt);

// The format a CSV header row belongs to ("" when none).
std::string detect_import_format(const std::vector<std::string>& header);

}  // namespace servesim
