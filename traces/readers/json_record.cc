// JSON Lines records on simdjson's On Demand API; see json_record.h.
#include "traces/readers/json_record.h"

#include <cmath>

#include <fmt/format.h>
#include <simdjson.h>

#include "traces/readers/field_parse.h"

namespace servesim {

namespace od = simdjson::ondemand;

class JsonRecordImpl {
 public:
  void start(std::string_view line) {
    key_ = "(json)";
    started_ = false;
    padded_.assign(line);
    padded_.reserve(line.size() + simdjson::SIMDJSON_PADDING);
    const simdjson::padded_string_view view(padded_.data(), line.size(), padded_.capacity());
    if (auto e = parser_.iterate(view).get(doc_)) fail(e, line);
    if (auto e = doc_.get_object().get(object_)) {
      if (e == simdjson::INCORRECT_TYPE) fail("expected a JSON object starting with '{'");
      fail(e, line);
    }
  }

  bool next_key(std::string_view& key) {
    key_ = "(json)";
    if (!started_) {
      if (auto e = object_.begin().get(it_)) fail(e);
      if (auto e = object_.end().get(end_)) fail(e);
      started_ = true;
    } else {
      ++it_;  // skips a value not read
    }
    if (it_ == end_) {
      const char* rest = nullptr;  // past the end of the line: OUT_OF_BOUNDS
      if (!doc_.current_location().get(rest)) fail("unexpected text after the closing '}'");
      return false;
    }
    od::field field;
    if (auto e = (*it_).get(field)) fail(e);
    std::string_view k;
    if (auto e = field.unescaped_key().get(k)) fail(e);
    key_.assign(k);
    value_ = field.value();
    key = key_;
    return true;
  }

  std::int64_t read_int() {
    std::int64_t v = 0;
    const auto e = value_.get_int64().get(v);
    if (!e) return v;
    double d = 0;  // 1000.0: a whole number written as a decimal
    if ((e == simdjson::INCORRECT_TYPE || e == simdjson::NUMBER_ERROR) && !value_.get_double().get(d) &&
        d == std::floor(d) && d >= -9.2e18 && d <= 9.2e18)
      return static_cast<std::int64_t>(d);
    fail("expected an integer, got " + shown(value_));
  }

  double read_number() {
    double v = 0;
    if (value_.get_double().get(v) || !std::isfinite(v)) fail("expected a number, got " + shown(value_));
    return v;
  }

  void read_string(std::string& out) {
    std::string_view v;
    if (auto e = value_.get_string().get(v)) {
      if (e == simdjson::INCORRECT_TYPE) fail("expected a string, got " + shown(value_));
      fail(e);
    }
    out.assign(v);
  }

  void read_int_array(std::vector<std::uint64_t>& out) {
    out.clear();
    od::array array;
    if (auto e = value_.get_array().get(array)) {
      if (e == simdjson::INCORRECT_TYPE) fail("expected a list of non-negative integers, got " + shown(value_));
      fail(e);
    }
    for (auto element : array) {
      od::value item;
      if (auto e = element.get(item)) fail(e);
      std::uint64_t v = 0;
      if (item.get_uint64().get(v))
        fail(fmt::format("element {}: expected a non-negative integer, got {}", out.size(), shown(item)));
      out.push_back(v);
    }
  }

  bool read_null() {
    bool null = false;
    if (auto e = value_.is_null().get(null)) fail(e);
    return null;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const { throw RowError{key_, msg}; }
  // A syntax error; `line` (at the start) tells a truncated line from extra text.
  [[noreturn]] void fail(simdjson::error_code e, std::string_view line = {}) const {
    if (e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) {
      while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
      if (!line.empty() && line.back() != '}' && line.back() != ']')
        fail("the line ends inside an object or list (truncated?)");
      fail("unbalanced braces or brackets, or text after the closing '}'");
    }
    fail(fmt::format("invalid JSON: {}", simdjson::error_message(e)));
  }
  // A value's text for messages (at most 20 characters).
  static std::string shown(od::value& v) {
    std::string_view raw = v.raw_json_token();
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t' || raw.back() == '\r')) raw.remove_suffix(1);
    return quote_value(raw.substr(0, 20));
  }

  od::parser parser_;
  std::string padded_;  // the line, with SIMDJSON_PADDING bytes of capacity after it
  od::document doc_;
  od::object object_;
  od::object_iterator it_, end_;
  od::value value_;     // the current key's value
  std::string key_ = "(json)";
  bool started_ = false;
};

JsonParser::JsonParser() : impl_(std::make_unique<JsonRecordImpl>()) {}
JsonParser::~JsonParser() = default;

JsonRecord::JsonRecord(JsonParser& parser, std::string_view line) : impl_(*parser.impl_) { impl_.start(line); }

bool JsonRecord::next_key(std::string_view& key) { return impl_.next_key(key); }
std::int64_t JsonRecord::read_int() { return impl_.read_int(); }
double JsonRecord::read_number() { return impl_.read_number(); }
void JsonRecord::read_string(std::string& out) { impl_.read_string(out); }
void JsonRecord::read_int_array(std::vector<std::uint64_t>& out) { impl_.read_int_array(out); }
bool JsonRecord::read_null() { return impl_.read_null(); }

const char* simdjson_kernels() { return SIMDJSON_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION); }

}  // namespace servesim
