// LineReader: streams a text file line by line through one large buffer, so a
// multi-gigabyte trace is never held in memory. Lines are returned as views
// into the buffer without the trailing "\n" or "\r\n"; a view stays valid only
// until the next call. The last line may lack a newline (Azure's CSVs do);
// last_line_terminated() tells callers that want to treat that as truncation.
// from_text() reads a string already in memory the same way (same line
// splitting, same messages naming `name`), without a file, and from_stream()
// an already open FILE*: the fuzz targets read one input several times at no
// I/O cost.
//
// Also here: UTF-8 validation for one line (trace readers reject non-UTF-8
// bytes with the file, line and column instead of passing garbage on).
#pragma once
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

class LineReader {
 public:
  // Opens `path` for reading. Throws InputError ("path: cannot open file: ...").
  explicit LineReader(std::string path, std::size_t buffer_bytes = 1 << 20);
  // Lines of `text` (copied), reported as lines of the file `name`.
  static std::unique_ptr<LineReader> from_text(std::string name, std::string_view text);
  // Lines of an open stream (owned: closed by the reader), read through the
  // buffer as a file is; `name` is the file name in messages. The fuzz targets
  // use it with fmemopen() to cover the buffered path without any file.
  static std::unique_ptr<LineReader> from_stream(std::string name, std::FILE* stream, std::size_t buffer_bytes);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Next line; false at end of file. Throws InputError on a read error.
  bool next(std::string_view& line);
  // 1-based number of the line last returned by next() (0 before the first).
  long line_number() const { return line_number_; }
  // False iff the line last returned was the file's last and had no newline.
  bool last_line_terminated() const { return terminated_; }
  const std::string& path() const { return path_; }

 private:
  LineReader() = default;
  bool fill();  // reads more bytes after end_; false at EOF

  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buf_;
  std::size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  bool terminated_ = true;
  long line_number_ = 0;
};

// Returns the byte offset of the first byte that is not part of valid UTF-8
// in `s`, or npos when `s` is valid. ASCII-only input takes a fast path.
std::size_t find_invalid_utf8(std::string_view s);

}  // namespace servesim
