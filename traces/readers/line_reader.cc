// Buffered line reading and UTF-8 validation; see line_reader.h.
#include "traces/readers/line_reader.h"

#include <cerrno>
#include <cstring>

#include "sim/core/error.h"
#include "sim/core/input_file.h"

namespace servesim {

LineReader::LineReader(std::string path, std::size_t buffer_bytes)
    : path_(std::move(path)), buf_(buffer_bytes < 4096 ? 4096 : buffer_bytes) {
  require_regular_file(path_);  // a FIFO would block forever
  file_ = std::fopen(path_.c_str(), "rb");
  if (!file_) throw InputError(located(path_, 0, fmt::format("cannot open file: {}", std::strerror(errno))));
}

std::unique_ptr<LineReader> LineReader::from_text(std::string name, std::string_view text) {
  std::unique_ptr<LineReader> r(new LineReader());
  r->path_ = std::move(name);
  r->buf_.resize(text.size() + 1);  // never empty: memchr must get a real pointer
  if (!text.empty()) std::memcpy(r->buf_.data(), text.data(), text.size());
  r->end_ = text.size();
  r->eof_ = true;  // the whole "file" is in the buffer: fill() never reads
  return r;
}

std::unique_ptr<LineReader> LineReader::from_stream(std::string name, std::FILE* stream, std::size_t buffer_bytes) {
  std::unique_ptr<LineReader> r(new LineReader());
  r->path_ = std::move(name);
  r->file_ = stream;
  r->buf_.resize(buffer_bytes < 4096 ? 4096 : buffer_bytes);
  return r;
}

LineReader::~LineReader() {
  if (file_) std::fclose(file_);
}

bool LineReader::fill() {
  if (eof_) return false;
  if (begin_ > 0) {  // slide the unread tail to the front
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);  // a line longer than the buffer
  std::size_t n = std::fread(buf_.data() + end_, 1, buf_.size() - end_, file_);
  if (n == 0) {
    if (std::ferror(file_)) throw InputError(located(path_, line_number_ + 1, "read error"));
    eof_ = true;
    return false;
  }
  end_ += n;
  return true;
}

bool LineReader::next(std::string_view& line) {
  std::size_t scanned = begin_;
  for (;;) {
    const char* start = buf_.data() + scanned;
    const void* nl = std::memchr(start, '\n', end_ - scanned);
    if (nl) {
      std::size_t pos = static_cast<const char*>(nl) - buf_.data();
      std::size_t len = pos - begin_;
      if (len > 0 && buf_[pos - 1] == '\r') --len;
      line = std::string_view(buf_.data() + begin_, len);
      begin_ = pos + 1;
      terminated_ = true;
      ++line_number_;
      return true;
    }
    std::size_t unread = end_ - begin_;
    if (!fill()) {
      if (begin_ == end_) return false;
      std::size_t len = end_ - begin_;
      if (buf_[end_ - 1] == '\r') --len;
      line = std::string_view(buf_.data() + begin_, len);
      begin_ = end_;
      terminated_ = false;
      ++line_number_;
      return true;
    }
    scanned = begin_ + unread;  // fill() moved the tail to the front
  }
}

std::size_t find_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  // Fast path: 8 bytes at a time while everything is ASCII.
  while (i + 8 <= n) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w & 0x8080808080808080ULL) break;
    i += 8;
  }
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    std::uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    // Reject overlong encodings, surrogates and code points past U+10FFFF.
    static constexpr std::uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace servesim
