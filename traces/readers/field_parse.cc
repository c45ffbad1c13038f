// Field parsing for the trace readers; see field_parse.h.
#include "traces/readers/field_parse.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace servesim {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool digits(const char* p, int n, int& out) {
  int v = 0;
  for (int i = 0; i < n; ++i) {
    unsigned c = static_cast<unsigned char>(p[i]) - '0';
    if (c > 9) return false;
    v = v * 10 + static_cast<int>(c);
  }
  out = v;
  return true;
}

}  // namespace

std::string_view trim_blank(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool parse_int(std::string_view s, std::int64_t& out) {
  if (s.empty() || s.front() == ' ' || s.back() == ' ') s = trim_blank(s);
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_decimal(std::string_view s, double& out) {
  if (s.empty() || s.front() == ' ' || s.back() == ' ') s = trim_blank(s);
  if (s.empty()) return false;
  const char* b = s.data();
  if (*b == '+') ++b;  // from_chars rejects a leading '+'
  auto r = std::from_chars(b, s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(out);
}

bool parse_integral(std::string_view s, std::int64_t& out) {
  if (parse_int(s, out)) return true;
  double d;
  if (!parse_decimal(s, d) || d != std::floor(d) || std::fabs(d) > 9e15) return false;
  out = static_cast<std::int64_t>(d);
  return true;
}

bool parse_datetime_ns(std::string_view s, std::int64_t& out, DateCache& cache) {
  s = trim_blank(s);
  if (s.size() < 19) return false;
  const char* p = s.data();
  if (p[4] != '-' || p[7] != '-' || (p[10] != ' ' && p[10] != 'T') || p[13] != ':' || p[16] != ':') return false;
  if (!cache.valid || std::memcmp(cache.date, p, 10) != 0) {
    int y, m, d;
    if (!digits(p, 4, y) || !digits(p + 5, 2, m) || !digits(p + 8, 2, d)) return false;
    if (m < 1 || m > 12 || d < 1 || d > 31) return false;
    // Years the int64 nanosecond clock holds with room for any zone offset
    // (it spans 1677..2262); readers narrow this to their documented range.
    if (y < kMinDatetimeYear || y > kMaxDatetimeYear) return false;
    std::memcpy(cache.date, p, 10);
    cache.day_ns = days_from_civil(y, static_cast<unsigned>(m), static_cast<unsigned>(d)) * 86'400'000'000'000LL;
    cache.valid = true;
  }
  int hh, mm, ss;
  if (!digits(p + 11, 2, hh) || !digits(p + 14, 2, mm) || !digits(p + 17, 2, ss)) return false;
  if (hh > 23 || mm > 59 || ss > 60) return false;
  std::int64_t ns = cache.day_ns + ((hh * 60LL + mm) * 60LL + ss) * 1'000'000'000LL;
  std::size_t i = 19;
  if (i < s.size() && s[i] == '.') {
    ++i;
    std::int64_t frac = 0;
    int n = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (n < 9) {
        frac = frac * 10 + (s[i] - '0');
        ++n;
      }
      ++i;
    }
    if (n == 0) return false;
    for (int k = n; k < 9; ++k) frac *= 10;
    ns += frac;
  }
  if (i < s.size()) {  // time zone: Z, +HH:MM, -HH:MM, +HHMM
    if (s[i] == 'Z' && i + 1 == s.size()) {
      i = s.size();
    } else if (s[i] == '+' || s[i] == '-') {
      int sign = s[i] == '+' ? 1 : -1;
      std::string_view z = s.substr(i + 1);
      int zh, zm;
      if (z.size() == 5 && z[2] == ':' && digits(z.data(), 2, zh) && digits(z.data() + 3, 2, zm)) {
      } else if (z.size() == 4 && digits(z.data(), 2, zh) && digits(z.data() + 2, 2, zm)) {
      } else {
        return false;
      }
      ns -= sign * (zh * 60LL + zm) * 60'000'000'000LL;
      i = s.size();
    } else {
      return false;
    }
  }
  out = ns;
  return true;
}

bool split_csv(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  const char* p = line.data();
  const char* end = p + line.size();
  for (;;) {
    if (p < end && *p == '"') {
      const char* q = p + 1;
      for (;;) {
        q = static_cast<const char*>(std::memchr(q, '"', static_cast<std::size_t>(end - q)));
        if (!q) return false;
        if (q + 1 < end && q[1] == '"') {  // "" escape inside a quoted field
          q += 2;
          continue;
        }
        break;
      }
      fields.emplace_back(p + 1, static_cast<std::size_t>(q - p - 1));
      p = q + 1;
      if (p == end) return true;
      if (*p != ',') return false;
      ++p;
      continue;
    }
    const char* c = static_cast<const char*>(std::memchr(p, ',', static_cast<std::size_t>(end - p)));
    if (!c) {
      fields.emplace_back(p, static_cast<std::size_t>(end - p));
      return true;
    }
    fields.emplace_back(p, static_cast<std::size_t>(c - p));
    p = c + 1;
  }
}

bool parse_id_list(std::string_view s, std::vector<std::uint64_t>& out) {
  out.clear();
  const char* p = s.data();
  const char* end = p + s.size();
  while (p < end) {
    if (*p == ' ' || *p == '\t') {
      ++p;
      continue;
    }
    std::uint64_t v;
    auto r = std::from_chars(p, end, v);
    if (r.ec != std::errc()) return false;
    if (r.ptr < end && *r.ptr != ' ' && *r.ptr != '\t') return false;
    out.push_back(v);
    p = r.ptr;
  }
  return true;
}

std::string quote_value(std::string_view s) {
  constexpr std::size_t kMax = 40;
  std::string out = "'";
  for (std::size_t i = 0; i < s.size() && i < kMax; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7F) {
      static const char* hex = "0123456789ABCDEF";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kMax) out += "...";
  return out + "'";
}

}  // namespace servesim
