// Flat JSON object scanning for JSONL traces; see json_scanner.h.
#include "traces/readers/json_scanner.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "sim/core/error.h"
#include "traces/readers/field_parse.h"

namespace servesim {

JsonScanner::JsonScanner(std::string_view line) : p_(line.data()), end_(line.data() + line.size()), key_("(json)") {
  skip_ws();
  if (p_ == end_ || *p_ != '{') fail("expected a JSON object starting with '{'");
  ++p_;
}

void JsonScanner::fail(const std::string& msg) const {
  std::string m = msg;
  if (p_ >= end_) m += " (the line ends early: truncated?)";
  throw RowError{key_, m};
}

void JsonScanner::skip_ws() {
  while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\r' || *p_ == '\n')) ++p_;
}

char JsonScanner::peek() {
  skip_ws();
  if (p_ == end_) fail("unexpected end of line");
  return *p_;
}

void JsonScanner::expect(char c) {
  if (peek() != c) fail(fmt::format("expected '{}', got '{}'", c, *p_));
  ++p_;
}

bool JsonScanner::next_key(std::string_view& key) {
  key_ = "(json)";
  char c = peek();
  if (c == '}') {
    ++p_;
    skip_ws();
    if (p_ != end_) fail("unexpected text after the closing '}'");
    return false;
  }
  if (!first_) {
    if (c != ',') fail(fmt::format("expected ',' or '}}', got '{}'", c));
    ++p_;
    c = peek();
  }
  first_ = false;
  if (c != '"') fail(fmt::format("expected a quoted key, got '{}'", c));
  ++p_;
  const char* q = static_cast<const char*>(std::memchr(p_, '"', static_cast<std::size_t>(end_ - p_)));
  if (!q) {
    p_ = end_;
    fail("unterminated key");
  }
  key = std::string_view(p_, static_cast<std::size_t>(q - p_));
  p_ = q + 1;
  key_.assign(key);
  expect(':');
  skip_ws();
  return true;
}

std::string_view JsonScanner::number_token() {
  peek();
  const char* b = p_;
  while (p_ < end_ && (std::isdigit(static_cast<unsigned char>(*p_)) || *p_ == '-' || *p_ == '+' || *p_ == '.' ||
                       *p_ == 'e' || *p_ == 'E'))
    ++p_;
  return std::string_view(b, static_cast<std::size_t>(p_ - b));
}

std::int64_t JsonScanner::read_int() {
  const char* at = p_;
  std::string_view t = number_token();
  std::int64_t v;
  if (t.empty() || !parse_integral(t, v)) {
    p_ = at;
    skip_ws();
    std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(end_ - p_), 20);
    throw RowError{key_, "expected an integer, got " + quote_value(std::string_view(p_, n))};
  }
  return v;
}

double JsonScanner::read_number() {
  const char* at = p_;
  std::string_view t = number_token();
  double v;
  if (t.empty() || !parse_decimal(t, v)) {
    p_ = at;
    skip_ws();
    std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(end_ - p_), 20);
    throw RowError{key_, "expected a number, got " + quote_value(std::string_view(p_, n))};
  }
  return v;
}

void JsonScanner::read_string(std::string& out) {
  out.clear();
  if (peek() != '"') fail("expected a string");
  ++p_;
  while (p_ < end_) {
    char c = *p_++;
    if (c == '"') return;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (p_ == end_) break;
    char e = *p_++;
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        if (end_ - p_ < 4) fail("bad \\u escape");
        unsigned cp = 0;
        auto r = std::from_chars(p_, p_ + 4, cp, 16);
        if (r.ptr != p_ + 4) fail("bad \\u escape");
        p_ += 4;
        // Basic-plane code points only (surrogate pairs are not needed for client names).
        if (cp < 0x80) {
          out += static_cast<char>(cp);
        } else if (cp < 0x800) {
          out += static_cast<char>(0xC0 | (cp >> 6));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
          out += static_cast<char>(0xE0 | (cp >> 12));
          out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        }
        break;
      }
      default: fail(fmt::format("bad escape '\\{}'", e));
    }
  }
  fail("unterminated string");
}

void JsonScanner::read_int_array(std::vector<std::uint64_t>& out) {
  out.clear();
  expect('[');
  skip_ws();
  if (p_ < end_ && *p_ == ']') {
    ++p_;
    return;
  }
  for (;;) {
    skip_ws();
    std::uint64_t v;
    auto r = std::from_chars(p_, end_, v);
    if (r.ec != std::errc() || (r.ptr < end_ && (*r.ptr == '.' || *r.ptr == 'e' || *r.ptr == 'E'))) {
      std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(end_ - p_), 20);
      if (n == 0) fail("unterminated list");
      throw RowError{key_, fmt::format("element {}: expected a non-negative integer, got {}", out.size(),
                                       quote_value(std::string_view(p_, n)))};
    }
    out.push_back(v);
    p_ = r.ptr;
    char c = peek();
    ++p_;
    if (c == ']') return;
    if (c != ',') fail(fmt::format("expected ',' or ']' in the list, got '{}'", c));
  }
}

bool JsonScanner::read_null() {
  skip_ws();
  if (end_ - p_ >= 4 && std::memcmp(p_, "null", 4) == 0) {
    p_ += 4;
    return true;
  }
  return false;
}

void JsonScanner::skip_value() {
  char c = peek();
  if (c == '"') {
    std::string tmp;
    read_string(tmp);
    return;
  }
  if (c == '[' || c == '{') {
    int depth = 0;
    bool in_str = false;
    for (; p_ < end_; ++p_) {
      char d = *p_;
      if (in_str) {
        if (d == '\\') ++p_;
        else if (d == '"') in_str = false;
        continue;
      }
      if (d == '"') in_str = true;
      else if (d == '[' || d == '{') ++depth;
      else if ((d == ']' || d == '}') && --depth == 0) {
        ++p_;
        return;
      }
    }
    fail("unterminated value");
  }
  if (end_ - p_ >= 4 && (std::memcmp(p_, "true", 4) == 0 || std::memcmp(p_, "null", 4) == 0)) {
    p_ += 4;
    return;
  }
  if (end_ - p_ >= 5 && std::memcmp(p_, "false", 5) == 0) {
    p_ += 5;
    return;
  }
  read_number();
}

}  // namespace servesim
