// Profile CSV reading; see profile_table.h and docs/kernels.md.
#include "costmodel/profile_table.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <array>
#include <map>
#include <set>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "costmodel/cell_numbers.h"
#include "sim/core/error.h"
#include "sim/core/huge_page_allocator.h"
#include "sim/core/text_split.h"

namespace servesim {
namespace {

constexpr int kSchemaVersion = 1;


// The columns the cost model reads (and `source`, optional), in one order: a row's
// cells are found by position, the header's names resolved once per file.
enum Col : std::size_t {
  kKernel, kVariant, kBatch, kCtx, kQLen, kPrefix, kHeads, kKvHeads, kHeadDim, kPageSize, kBudget, kM, kN, kK,
  kParams, kMedian, kP10, kP90, kBytes, kFlops, kSource, kColumns
};
const std::array<const char*, kColumns> kColumnNames = {
    "kernel", "variant", "batch",  "ctx",    "q_len",  "prefix",    "heads",  "kv_heads", "head_dim", "page_size",
    "budget", "m",       "n",      "k",      "params", "median_us", "p10_us", "p90_us",   "bytes",    "flops", "source"};
constexpr std::size_t kRequired = kSource;  // every column before `source` is required

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// `s` without leading and trailing blanks (trim_blanks, without a copy).
std::string_view trim_ends(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && is_blank(s[b])) ++b;
  while (e > b && is_blank(s[e - 1])) --e;
  return s.substr(b, e - b);
}
// The same; cells rarely have blanks, so the common case is two tests, inline
// (every blank is <= ' ').
inline std::string_view trimmed(std::string_view s) {
  return s.empty() || (s.front() > ' ' && s.back() > ' ') ? s : trim_ends(s);
}

// Bit 7 of each byte of the result is set exactly where `w` has a ',' byte
// (no carry crosses a byte: (x & 0x7f) + 0x7f <= 0xfe).
std::uint64_t comma_bytes(std::uint64_t w) {
  constexpr std::uint64_t kLow7 = 0x7f7f7f7f7f7f7f7f, kCommas = 0x0101010101010101 * ',';
  const std::uint64_t x = w ^ kCommas;  // zero bytes where w has commas
  return ~(((x & kLow7) + kLow7) | x | kLow7);
}

// Stores the fields of `line` between commas, each trimmed (split_fields and
// trim_blanks, without copies), into cells[0..), as many as fit, and returns
// how many fields the line has. Eight bytes at a time where bytes load
// little-endian (the lowest set bit of comma_bytes is the first comma).
std::size_t split_cells(std::string_view line, std::span<std::string_view> cells) {
  std::size_t n = 0;
  const char* start = line.data();
  const char* p = start;
  const char* const end = start + line.size();
  auto cell_until = [&](const char* stop) {
    if (n < cells.size()) cells[n] = trimmed(std::string_view(start, static_cast<std::size_t>(stop - start)));
    ++n;
    start = stop + 1;
  };
  if constexpr (std::endian::native == std::endian::little) {
    for (; end - p >= 8; p += 8) {
      std::uint64_t w;
      std::memcpy(&w, p, sizeof w);
      for (std::uint64_t commas = comma_bytes(w); commas != 0; commas &= commas - 1)
        cell_until(p + std::countr_zero(commas) / 8);
    }
  }
  for (; p != end; ++p)
    if (*p == ',') cell_until(p);
  cell_until(end);
  return n;
}

// Reads the (trimmed) cells of one data row; `index` maps a Col to the cell's position.
class RowReader {
 public:
  RowReader(const std::string& file, long line, const std::vector<std::string_view>& cells,
            const std::array<std::size_t, kColumns>& index)
      : file_(file), line_(line), cells_(cells), index_(index) {}

  std::string_view text(Col c) const { return cells_[index_[c]]; }
  // Empty cells (most, in imported tables) are answered inline, without a call.
  std::int64_t integer(Col col) const {
    const std::string_view c = text(col);
    return c.empty() ? -1 : read_integer(col, c);
  }
  double number(Col col, bool positive, bool empty_is_zero = false) const {
    const std::string_view c = text(col);
    return empty_is_zero && c.empty() ? 0 : read_number(col, c, positive);
  }

 private:
  std::int64_t read_integer(Col col, std::string_view c) const {
    std::int64_t v = 0;
    if (!read_int64(c, v) || v < 0) fail(col, "a non-negative integer", c);
    return v;
  }
  double read_number(Col col, std::string_view c, bool positive) const {
    double v = 0;
    if (!read_double(c, v) || v < 0 || (positive && v <= 0))
      fail(col, positive ? "a number > 0" : "a number >= 0", c);
    return v;
  }
  [[noreturn]] void fail(Col col, const char* what, std::string_view got) const {
    throw InputError(
        located(file_, line_, fmt::format("column '{}': expected {}, got '{}'", kColumnNames[col], what, got)));
  }
  const std::string& file_;
  long line_;
  const std::vector<std::string_view>& cells_;
  const std::array<std::size_t, kColumns>& index_;
};

}  // namespace

std::optional<std::string> ProfilePoint::param(std::string_view key) const {
  // The fields are scanned in place (fits ask every row for a few keys: no copies).
  const std::string_view all(params);
  for (std::size_t start = 0;;) {
    const std::size_t end = all.find(';', start);
    const std::string_view kv = all.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    const std::size_t eq = kv.find('=');
    if (eq != std::string_view::npos && kv.substr(0, eq) == key) return std::string(kv.substr(eq + 1));
    if (end == std::string_view::npos) return std::nullopt;
    start = end + 1;
  }
}

double ProfilePoint::param_number(std::string_view key, double def, const std::string& file) const {
  auto v = param(key);
  if (!v) return def;
  double x = 0;
  if (!read_double(*v, x))
    throw InputError(located(file, line, fmt::format("column 'params': '{}' is not a number ('{}')", key, *v)));
  return x;
}

// Reads a profile line by line (parse: the lines of a text; load: those of a
// file read in blocks), remembering what earlier lines told: the provenance,
// the header's columns, the line number.
class ProfileTable::Reader {
 public:
  explicit Reader(const std::string& name) : name_(name) { t_.file_ = name; }

  // The next line, without its '\n'.
  void line(std::string_view line) {
    ++line_no_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trimmed(line).empty()) return;
    if (line[0] == '#') return provenance(line);
    // Data rows store their cells into the header's count of places (the count is checked in row()).
    const std::size_t n_cells = split_cells(line, cells_);
    if (n_columns_ == 0) return header(line, n_cells);
    row(n_cells);
  }
  // The header's number of columns; 0 before the header row.
  std::size_t columns() const { return n_columns_; }
  std::vector<ProfilePoint>& points() { return t_.points_; }
  ProfileTable finish() {
    if (n_columns_ == 0) throw InputError(fmt::format("{}: no header row (empty kernel profile)", name_));
    if (t_.points_.empty()) throw InputError(fmt::format("{}: the profile has no measured rows", name_));
    return std::move(t_);
  }

 private:
  void provenance(std::string_view line) {
    if (n_columns_ > 0) throw InputError(located(name_, line_no_, "provenance line after the header row"));
    const std::string body = trim_blanks(std::string(line.substr(1)));
    const auto eq = body.find('=');
    if (eq == std::string::npos) throw InputError(located(name_, line_no_, "provenance line without key=value"));
    t_.provenance_.emplace_back(trim_blanks(body.substr(0, eq)), trim_blanks(body.substr(eq + 1)));
  }

  // The header row: checks the provenance first, then the columns.
  void header(std::string_view line, std::size_t n_cells) {
    if (t_.provenance_value("format") != "servesim-kernel-profile")
      throw InputError(located(name_, line_no_,
                               "not a servesim kernel profile (no '# format=servesim-kernel-profile' line before the "
                               "header); profiles are written by `servesim-kernels bench`"));
    const std::string sv = t_.provenance_value("schema_version");
    if (sv != std::to_string(kSchemaVersion))
      throw InputError(located(name_, line_no_, fmt::format("schema_version '{}' is not supported (this servesim reads "
                                                            "schema_version {})", sv, kSchemaVersion)));
    cells_.resize(n_cells);
    split_cells(line, cells_);
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < cells_.size(); ++i) col[std::string(cells_[i])] = i;
    for (std::size_t c = 0; c < kColumns; ++c) {
      auto it = col.find(kColumnNames[c]);
      if (it == col.end() && c < kRequired)
        throw InputError(located(name_, line_no_, fmt::format("header lacks column '{}'", kColumnNames[c])));
      if (it != col.end()) index_[c] = it->second;
    }
    n_columns_ = cells_.size();
    has_source_ = col.count("source") > 0;
    for (const auto& [k, v] : t_.provenance_)
      if (k.starts_with("source.")) {
        std::int64_t n = -1;
        const std::string_view digits = std::string_view(k).substr(7);
        auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
        if (ec == std::errc() && p == digits.data() + digits.size() && n >= 0) sources_.insert(n);
      }
  }

  // A data row of n_cells cells (those of the header's columns in cells_).
  void row(std::size_t n_cells) {
    if (n_cells != n_columns_)
      throw InputError(located(name_, line_no_, fmt::format("{} cells, the header has {}", n_cells, n_columns_)));
    RowReader r(name_, line_no_, cells_, index_);
    ProfilePoint& p = t_.points_.emplace_back();  // filled in place (an error discards the table)
    p.line = line_no_;
    p.kernel = r.text(kKernel);
    p.variant = r.text(kVariant);
    if (p.kernel.empty()) throw InputError(located(name_, line_no_, "column 'kernel': empty"));
    p.batch = r.integer(kBatch);
    p.ctx = r.integer(kCtx);
    p.q_len = r.integer(kQLen);
    p.prefix = r.integer(kPrefix);
    p.heads = r.integer(kHeads);
    p.kv_heads = r.integer(kKvHeads);
    p.head_dim = r.integer(kHeadDim);
    p.page_size = r.integer(kPageSize);
    p.budget = r.integer(kBudget);
    p.m = r.integer(kM);
    p.n = r.integer(kN);
    p.k = r.integer(kK);
    p.params = r.text(kParams);
    p.median_us = r.number(kMedian, true);
    p.p10_us = r.number(kP10, false, true);  // empty: not published (imported tables give medians)
    p.p90_us = r.number(kP90, false, true);
    p.bytes = r.number(kBytes, false);
    p.flops = r.number(kFlops, false);
    if (has_source_) {
      const std::int64_t src = r.integer(kSource);
      if (src >= 0 && src != known_source_ && !sources_.count(src))
        throw InputError(located(name_, line_no_, fmt::format("column 'source': {} has no '# source.{}=' line", src, src)));
      if (src >= 0) known_source_ = src;  // rows come in runs of one source
      p.source = static_cast<int>(src);
    }
  }

  ProfileTable t_;
  const std::string& name_;
  long line_no_ = 0;
  std::size_t n_columns_ = 0;
  bool has_source_ = false;  // imported profiles name each row's source (measured_import.h)
  std::array<std::size_t, kColumns> index_{};
  std::set<std::int64_t> sources_;  // N of every `# source.N=` line
  std::int64_t known_source_ = -1;  // the last row's source (in sources_), or -1
  std::vector<std::string_view> cells_;
};

namespace {
// The rows of a large profile fill megabytes first touched here, a page fault per
// 4 KiB (the A100 profile: 13 MB, ~3,200 faults, a fifth of a calibrated run's
// start-up). The reserved buffer is asked to be backed by 2 MiB pages where the
// kernel offers them (transparent huge pages in `madvise` mode; not with
// SERVESIM_HUGE_PAGES=off): a hint only, so nothing read or computed changes, and
// without it the pages are as before.
void ask_huge_pages(const std::vector<ProfilePoint>& v) {
  huge_pages::advise(v.data(), v.capacity() * sizeof(ProfilePoint));
}
}  // namespace

ProfileTable ProfileTable::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open kernel profile", path));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();  // -1 when not seekable
  in.seekg(0, std::ios::beg);
  in.clear();
  // Blocks of 1 MiB, not the whole file: a buffer of the file's size (MBs) costs a
  // page fault per 4 KiB touched. A line split by a block boundary is joined in `carry`.
  Reader reader(path);
  std::vector<char> block(std::size_t{1} << 20);
  std::string carry;
  std::streamoff consumed = 0;  // bytes handed to the reader
  bool reserved = false;
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const char* const end = block.data() + in.gcount();
    const char* start = block.data();
    for (const char* nl; (nl = static_cast<const char*>(std::memchr(start, '\n', static_cast<std::size_t>(end - start))));
         start = nl + 1) {
      const std::string_view piece(start, static_cast<std::size_t>(nl - start));
      if (carry.empty()) {
        reader.line(piece);
      } else {
        reader.line(carry.append(piece));
        carry.clear();
      }
      consumed += nl - start + 1;
      // Rows take at least (columns + 1) bytes each (the commas, a kernel, the newline): an
      // upper bound on the rows to come, reserved once (unused capacity is never touched).
      if (!reserved && reader.columns() > 0 && size > consumed) {
        reader.points().reserve(static_cast<std::size_t>(size - consumed) / (reader.columns() + 1) + 1);
        ask_huge_pages(reader.points());
        reserved = true;
      }
    }
    carry.append(start, end);
  }
  if (in.bad()) throw InputError(fmt::format("{}: cannot read kernel profile", path));
  if (!carry.empty()) reader.line(carry);  // the last line, without a newline
  return reader.finish();
}

ProfileTable ProfileTable::parse(const std::string& text, const std::string& name) {
  Reader reader(name);
  std::size_t lines = 1;
  for (const char* c = text.data(); (c = static_cast<const char*>(std::memchr(c, '\n', text.data() + text.size() - c)));
       ++c)
    ++lines;
  reader.points().reserve(lines);
  for (std::size_t pos = 0; pos < text.size();) {
    // One line (as std::getline: the last may lack its newline).
    const std::size_t nl = text.find('\n', pos);
    reader.line(std::string_view(text.data() + pos, (nl == std::string::npos ? text.size() : nl) - pos));
    pos = nl == std::string::npos ? text.size() : nl + 1;
  }
  return reader.finish();
}

std::string ProfileTable::provenance_value(const std::string& key) const {
  for (const auto& [k, v] : provenance_)
    if (k == key) return v;
  return "";
}

std::string ProfileTable::provenance_summary() const {
  auto or_unknown = [&](const char* k) {
    std::string v = provenance_value(k);
    return v.empty() ? std::string("unknown") : v;
  };
  std::string s = fmt::format("gpu={} commit={} date={} mode={}", or_unknown("gpu"), or_unknown("git_commit"),
                              or_unknown("date_utc"), or_unknown("mode"));
  // A profile joined by `servesim-kernels merge --sessions` carries one session line per
  // measuring session; its count and the latest session's date and commit go into the
  // identity, so a profile that gained a family is not mistaken for the one before.
  std::size_t sessions = 0;
  std::string latest;
  for (const auto& kv : provenance_)
    if (kv.first.starts_with("session.")) {
      ++sessions;
      const std::string& v = kv.second;  // not a structured binding: clang cannot capture those
      auto field = [&v](const std::string& name) {
        const std::size_t at = v.find(name + ":");
        if (at == std::string::npos) return std::string("unknown");
        const std::size_t from = at + name.size() + 1;
        return v.substr(from, v.find(';', from) - from);
      };
      if (latest.empty() || field("date_utc") >= latest.substr(0, latest.find(' ')))
        latest = field("date_utc") + " commit=" + field("git_commit").substr(0, 12);
    }
  if (sessions > 0) s += fmt::format(" sessions={} latest={}", sessions, latest);
  if (synthetic()) s = "SYNTHETIC (generated, not measured) " + s;
  if (const std::string stack = provenance_value("stack"); !stack.empty()) {
    std::size_t sources = 0;
    for (const auto& [k, v] : provenance_)
      if (k.starts_with("source.")) ++sources;
    s = fmt::format("gpu={} stack={} mode={} sources={}", or_unknown("gpu"), stack, or_unknown("mode"), sources);
    if (const std::string b = provenance_value("borrowed_stacks"); !b.empty()) s += " borrowed=" + b;
  }
  for (char& c : s)
    if (c == ',') c = ';';  // report cells stay comma-free
  return s;
}

std::vector<const ProfilePoint*> ProfileTable::rows(const std::string& kernel, const std::string& variant) const {
  std::vector<const ProfilePoint*> out;
  for (const auto& p : points_)
    if (p.kernel == kernel && (variant.empty() || p.variant == variant)) out.push_back(&p);
  return out;
}

}  // namespace servesim
