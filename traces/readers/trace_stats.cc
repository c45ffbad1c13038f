// One-pass trace statistics; see trace_stats.h.
#include "traces/readers/trace_stats.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "traces/seeded_hash.h"

namespace servesim {
namespace {

LengthSummary summarize(std::vector<std::int32_t>& v) {
  LengthSummary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (auto x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  s.p50 = percentile_sorted(v, 0.50);
  s.p90 = percentile_sorted(v, 0.90);
  s.p99 = percentile_sorted(v, 0.99);
  s.min = v.front();
  s.max = v.back();
  return s;
}

// Key of a radix-tree edge: (parent chain node, block id).
struct EdgeHash {
  std::size_t operator()(const std::pair<std::uint64_t, BlockHash>& e) const {
    return static_cast<std::size_t>(mix64(e.first * 0x9E3779B97F4A7C15ULL ^ e.second));
  }
};

std::string grouped(std::int64_t n) {
  std::string s = std::to_string(n < 0 ? -n : n), out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace

double percentile_sorted(const std::vector<std::int32_t>& v, double q) {
  if (v.empty()) return 0;
  double rank = std::ceil(q * static_cast<double>(v.size()));
  std::size_t i = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return v[std::min(i, v.size() - 1)];
}

TraceStats compute_trace_stats(const std::string& path, const TraceReadOptions& opt) {
  return compute_trace_stats(open_trace(path, opt));
}

TraceStats compute_trace_stats(std::unique_ptr<TraceReader> reader) {
  TraceStats st;
  st.path = reader->path();
  st.format = reader->format();
  std::vector<std::int32_t> prompts, outputs;
  std::unordered_map<std::string, std::int64_t> clients;
  std::unordered_set<std::uint64_t> sessions;
  std::unordered_map<std::pair<std::uint64_t, BlockHash>, std::uint64_t, EdgeHash> chains;  // -> node id
  std::unordered_set<BlockHash> blocks, first_blocks;
  std::int64_t prefix_prompt_tokens = 0, hit_tokens = 0;
  // Welford over inter-arrival gaps.
  double gap_mean = 0, gap_m2 = 0;
  std::int64_t gaps = 0;
  bool have_prev = false;
  Time prev = 0;
  long first_line = 0, prev_line = 0, gap_line = 0, gap_prev_line = 0;
  Time max_gap = 0;

  TraceRow row;
  while (reader->next(row)) {
    const RequestSpec& s = row.spec;
    ++st.rows;
    prompts.push_back(static_cast<std::int32_t>(std::min<std::int64_t>(s.prompt_tokens, INT32_MAX)));
    outputs.push_back(static_cast<std::int32_t>(std::min<std::int64_t>(s.output_tokens, INT32_MAX)));
    if (!row.client.empty()) ++clients[row.client];
    if (s.session != 0) sessions.insert(s.session);
    if (!s.parents.empty()) {
      ++st.dependent_rows;
    } else {
      if (!have_prev) {
        st.first_arrival = s.arrival;
        st.distinct_timestamps = 1;
        first_line = row.line;
      } else {
        if (s.arrival - prev > max_gap) {
          max_gap = s.arrival - prev;
          gap_line = row.line;
          gap_prev_line = prev_line;
        }
        double gap = static_cast<double>(s.arrival - prev) * 1e-9;
        ++gaps;
        double d = gap - gap_mean;
        gap_mean += d / static_cast<double>(gaps);
        gap_m2 += d * (gap - gap_mean);
        if (s.arrival != prev) ++st.distinct_timestamps;
      }
      have_prev = true;
      prev = s.arrival;
      prev_line = row.line;
      st.last_arrival = s.arrival;
    }
    if (!s.prefix_blocks.empty()) {
      st.has_prefix = true;
      st.block_size = s.prefix_block_size;
      first_blocks.insert(s.prefix_blocks.front());
      prefix_prompt_tokens += s.prompt_tokens;
      std::uint64_t node = 0;  // root
      bool matching = true;
      for (std::size_t i = 0; i < s.prefix_blocks.size(); ++i) {
        BlockHash b = s.prefix_blocks[i];
        blocks.insert(b);
        ++st.block_refs;
        auto [it, inserted] = chains.try_emplace({node, b}, chains.size() + 1);
        if (matching && !inserted) {
          ++st.hit_blocks;
          std::int64_t bs = s.prefix_block_size;
          hit_tokens += std::min<std::int64_t>(bs, s.prompt_tokens - static_cast<std::int64_t>(i) * bs);
        } else {
          matching = false;
        }
        node = it->second;
      }
    }
  }
  st.rows_skipped = reader->rows_skipped();
  st.first_skip_reason = reader->first_skip_reason();
  st.rows_dropped = reader->rows_dropped();
  st.span_s = static_cast<double>(st.last_arrival - st.first_arrival) * 1e-9;
  const std::int64_t independent = st.rows - st.dependent_rows;
  st.mean_rate = st.span_s > 0 ? static_cast<double>(independent) / st.span_s : 0;
  if (gaps > 1 && gap_mean > 0) st.interarrival_cv = std::sqrt(gap_m2 / static_cast<double>(gaps)) / gap_mean;
  const double first_s = static_cast<double>(st.first_arrival) * 1e-9;
  const double gap_s = static_cast<double>(max_gap) * 1e-9;
  if (have_prev && !trace_format(st.format).wall_clock && first_s >= kEpochLikeS)
    st.warnings.push_back(fmt::format(
        "line {}: the first arrival is {:.0f} s, which looks like a UNIX epoch time; `time_origin: auto` does not "
        "rebase {} traces, so a replay would first simulate {:.0f} s of idle time: set `time_origin: first_row`",
        first_line, first_s, st.format, first_s));
  if (st.span_s > kHugeSpanS)
    st.warnings.push_back(fmt::format("lines {}..{}: the arrivals span {:.1f} days (more than {:.0f})", first_line,
                                      prev_line, st.span_s / 86400, kHugeSpanS / 86400));
  if (gaps >= 2 && gap_s > kHugeGapS && gap_s > 0.5 * st.span_s)
    st.warnings.push_back(fmt::format("line {}: arrives {:.0f} s after line {}, {:.0f}% of the whole span: an "
                                      "outlier timestamp?",
                                      gap_line, gap_s, gap_prev_line, 100 * gap_s / st.span_s));
  st.prompt = summarize(prompts);
  st.output = summarize(outputs);
  st.clients.assign(clients.begin(), clients.end());
  std::sort(st.clients.begin(), st.clients.end(),
            [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  st.sessions = static_cast<std::int64_t>(sessions.size());
  st.distinct_blocks = static_cast<std::int64_t>(blocks.size());
  st.distinct_first_blocks = static_cast<std::int64_t>(first_blocks.size());
  if (st.block_refs > 0) st.hit_rate_blocks = static_cast<double>(st.hit_blocks) / static_cast<double>(st.block_refs);
  if (prefix_prompt_tokens > 0)
    st.hit_rate_tokens = static_cast<double>(hit_tokens) / static_cast<double>(prefix_prompt_tokens);
  return st;
}

std::string format_trace_stats(const TraceStats& s) {
  std::string o;
  auto out = std::back_inserter(o);
  fmt::format_to(out, "file:             {}\n", s.path);
  fmt::format_to(out, "format:           {}\n", s.format);
  fmt::format_to(out, "rows:             {}", grouped(s.rows));
  if (s.rows_skipped) fmt::format_to(out, " ({} bad rows skipped)", grouped(s.rows_skipped));
  if (s.rows_dropped) fmt::format_to(out, " ({} failed rows dropped)", grouped(s.rows_dropped));
  if (s.dependent_rows) fmt::format_to(out, " ({} with parents)", grouped(s.dependent_rows));
  o += '\n';
  if (s.rows_skipped) fmt::format_to(out, "first bad row:    {}\n", s.first_skip_reason);
  fmt::format_to(out, "span:             {:.3f} s ({:.3f} min)\n", s.span_s, s.span_s / 60);
  fmt::format_to(out, "mean rate:        {:.3f} req/s\n", s.mean_rate);
  fmt::format_to(out, "inter-arrival CV: {:.3f} (1 = Poisson)\n", s.interarrival_cv);
  fmt::format_to(out, "timestamps:       {} distinct\n", grouped(s.distinct_timestamps));
  auto lengths = [&](const char* name, const LengthSummary& l) {
    fmt::format_to(out, "{} mean {:.1f}  p50 {:.0f}  p90 {:.0f}  p99 {:.0f}  min {}  max {}\n", name, l.mean, l.p50,
                   l.p90, l.p99, l.min, l.max);
  };
  lengths("prompt tokens:   ", s.prompt);
  lengths("output tokens:   ", s.output);
  if (s.clients.empty()) {
    o += "clients:          none in the trace\n";
  } else {
    fmt::format_to(out, "clients:          {} (largest:", s.clients.size());
    for (std::size_t i = 0; i < s.clients.size() && i < 5; ++i)
      fmt::format_to(out, " {} {}", s.clients[i].first, s.clients[i].second);
    o += s.clients.size() > 5 ? " ...)\n" : ")\n";
  }
  if (s.sessions) fmt::format_to(out, "sessions:         {}\n", grouped(s.sessions));
  if (s.has_prefix) {
    fmt::format_to(out, "prefix blocks:    {} tokens each; {} references to {} distinct blocks; {} distinct first blocks\n",
                   s.block_size, grouped(s.block_refs), grouped(s.distinct_blocks), grouped(s.distinct_first_blocks));
    fmt::format_to(out, "ideal hit rate:   {:.2f}% of prompt blocks ({:.2f}% of prompt tokens), infinite cache, "
                        "leading-prefix match\n",
                   100 * s.hit_rate_blocks, 100 * s.hit_rate_tokens);
  } else {
    o += "prefix blocks:    none in the trace\n";
  }
  for (const std::string& w : s.warnings) fmt::format_to(out, "warning:          {}\n", w);
  return o;
}

}  // namespace servesim
