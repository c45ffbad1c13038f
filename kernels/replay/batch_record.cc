// The batch record reader; see batch_record.h.
#include "kernels/replay/batch_record.h"

#include <charconv>
#include <cstdlib>
#include <sstream>

namespace servesim::kernels {
namespace {

const char* const kFixed[] = {"iteration", "worker",         "start_ns",      "predicted_ns", "attention",
                              "prefill_tokens", "decode_tokens", "prefills", "decodes"};
constexpr std::size_t kFixedCount = sizeof(kFixed) / sizeof(kFixed[0]);

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) return out;
    start = p + 1;
  }
}

int64_t parse_count(const std::string& s) {
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) throw std::invalid_argument("not an integer: '" + s + "'");
  if (v < 0) throw std::invalid_argument("negative: '" + s + "'");
  return v;
}

double parse_number(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !(v >= 0) || v > 1e300)
    throw std::invalid_argument("not a finite non-negative number: '" + s + "'");
  return v;
}

}  // namespace

int64_t RecordedIteration::prefill_tokens() const {
  int64_t n = 0;
  for (const auto& c : prefills) n += c.new_tokens;
  return n;
}

int64_t RecordedIteration::logit_rows() const {
  int64_t n = static_cast<int64_t>(decodes.size());
  for (const auto& c : prefills) n += c.completes ? 1 : 0;
  return n;
}

std::vector<RecordedChunk> parse_prefill_list(const std::string& s) {
  std::vector<RecordedChunk> out;
  if (s.empty()) return out;
  for (const std::string& item : split(s, ';')) {
    const auto f = split(item, ':');
    if (f.size() != 3) throw std::invalid_argument("chunk '" + item + "' is not new:context:completes");
    RecordedChunk c{parse_count(f[0]), parse_count(f[1]), false};
    if (f[2] != "0" && f[2] != "1") throw std::invalid_argument("completes must be 0 or 1 in '" + item + "'");
    if (c.new_tokens < 1) throw std::invalid_argument("chunk '" + item + "' has no new tokens");
    c.completes = f[2] == "1";
    out.push_back(c);
  }
  return out;
}

std::vector<int64_t> parse_decode_list(const std::string& s) {
  std::vector<int64_t> out;
  if (s.empty()) return out;
  for (const std::string& item : split(s, ';')) out.push_back(parse_count(item));
  return out;
}

void BatchRecordReader::fail(const std::string& field, const std::string& msg) const {
  std::ostringstream m;
  m << path_ << ":" << line_ << ": " << (field.empty() ? "" : "field '" + field + "': ") << msg;
  throw BatchRecordError(m.str());
}

BatchRecordReader::BatchRecordReader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
  if (!in_) throw BatchRecordError(path + ": cannot open the batch record");
  std::string line;
  bool magic = false;
  while (std::getline(in_, line)) {
    ++line_;
    if (line.rfind("#", 0) != 0) break;
    std::string text = line.substr(line.size() > 1 && line[1] == ' ' ? 2 : 1);
    if (line_ == 1) {
      if (text != "servesim batch record v1") fail("", "not a servesim batch record: the first line must be '# servesim batch record v1'");
      magic = true;
      continue;
    }
    if (text.rfind("model=", 0) == 0) for (const std::string& kv : split(text, ' ')) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
      try {
        if (key == "model") header_.model = value;
        if (key == "tp") header_.tp = static_cast<int>(parse_count(value));
        if (key == "record_every") header_.record_every = parse_count(value);
      } catch (const std::invalid_argument& e) {
        fail(key, e.what());
      }
    }
    header_.comments.push_back(std::move(text));
    line.clear();
  }
  if (!magic) fail("", "not a servesim batch record: the first line must be '# servesim batch record v1'");
  if (line.empty() || line[0] == '#') fail("", "missing the column header line");
  columns_ = split(line, ',');
  if (columns_.size() < kFixedCount) fail("", "the header has fewer columns than the fixed ones");
  for (std::size_t i = 0; i < kFixedCount; ++i)
    if (columns_[i] != kFixed[i]) fail(columns_[i], std::string("expected column '") + kFixed[i] + "'");
  for (std::size_t i = kFixedCount; i < columns_.size(); ++i) {
    const std::string& c = columns_[i];
    if (c.size() < 4 || c.compare(c.size() - 3, 3, "_us") != 0) fail(c, "a part column must end in _us");
    header_.parts.push_back(c.substr(0, c.size() - 3));
  }
  if (header_.model.empty()) fail("model", "no 'model=' in the header comments");
}

bool BatchRecordReader::next(RecordedIteration* out) {
  std::string line;
  while (true) {
    if (!std::getline(in_, line)) return false;
    ++line_;
    if (!line.empty()) break;
  }
  const auto f = split(line, ',');
  if (f.size() != columns_.size())
    fail("", "has " + std::to_string(f.size()) + " fields, the header has " + std::to_string(columns_.size()));
  std::size_t i = 0;
  try {
    out->iteration = parse_count(f[i]);
    out->worker = parse_count(f[++i]);
    out->start_ns = parse_count(f[++i]);
    out->predicted_ns = parse_count(f[++i]);
    out->attention = f[++i];
    if (out->attention.empty()) throw std::invalid_argument("empty");
    const int64_t prefill_tokens = parse_count(f[++i]);
    const int64_t decode_tokens = parse_count(f[++i]);
    out->prefills = parse_prefill_list(f[++i]);
    out->decodes = parse_decode_list(f[++i]);
    if (out->prefill_tokens() != prefill_tokens) {
      i = 5;
      throw std::invalid_argument("is " + std::to_string(prefill_tokens) + " but the prefills list adds up to " +
                                  std::to_string(out->prefill_tokens()));
    }
    if (static_cast<int64_t>(out->decodes.size()) != decode_tokens) {
      i = 6;
      throw std::invalid_argument("is " + std::to_string(decode_tokens) + " but the decodes list has " +
                                  std::to_string(out->decodes.size()) + " entries");
    }
    if (out->prefills.empty() && out->decodes.empty()) {
      i = 7;
      throw std::invalid_argument("an iteration with neither prefills nor decodes");
    }
    out->parts_us.clear();
    for (++i; i < f.size(); ++i) out->parts_us.push_back(parse_number(f[i]));
  } catch (const std::invalid_argument& e) {
    fail(columns_[std::min(i, columns_.size() - 1)], e.what());
  }
  return true;
}

}  // namespace servesim::kernels
