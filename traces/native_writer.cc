// Writing the native trace format; see native_writer.h and docs/traces.md.
#include "traces/native_writer.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "sim/core/error.h"
#include "traces/readers/native_fields.h"

namespace servesim {
namespace {

constexpr std::size_t kFlushBytes = 1 << 20;

bool needs_csv_quotes(const std::string& s) { return s.find_first_of(",\"\n\r") != std::string::npos || s.empty(); }

void append_json_string(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", u);
    } else {
      out += c;
    }
  }
  out += '"';
}

template <class T>
void append_list(std::string& out, const std::vector<T>& v, char sep) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += sep;
    fmt::format_to(std::back_inserter(out), "{}", v[i]);
  }
}

}  // namespace

NativeWriter::Flavor NativeWriter::flavor_for(const std::string& path) {
  auto ends = [&](std::string_view x) {
    return path.size() >= x.size() && path.compare(path.size() - x.size(), x.size(), x) == 0;
  };
  return ends(".jsonl") || ends(".json") ? Flavor::kJsonl : Flavor::kCsv;
}

NativeWriter::NativeWriter(std::string path, Flavor flavor)
    : path_(std::move(path)), flavor_(flavor), out_(path_) {}

void NativeWriter::begin(const std::vector<std::string>& client_names) {
  buf_ += "# servesim native trace v1 (docs/traces.md)\n# clients: [";
  for (std::size_t i = 0; i < client_names.size(); ++i) {
    if (i) buf_ += ", ";
    append_json_string(buf_, client_names[i]);
  }
  buf_ += "]\n";
  if (flavor_ == Flavor::kCsv) {
    bool first = true;
    for (const char* c : kNativeColumns) {
      if (!first) buf_ += ',';
      buf_ += c;
      first = false;
    }
    buf_ += '\n';
  }
}

void NativeWriter::write(const RequestSpec& r, const std::vector<std::string>& names) {
  const std::string& client = names.at(r.client);
  auto out = std::back_inserter(buf_);
  if (flavor_ == Flavor::kCsv) {
    fmt::format_to(out, "{},", r.id);
    if (needs_csv_quotes(client)) {
      buf_ += '"';
      for (char c : client) {
        if (c == '"') buf_ += '"';
        buf_ += c;
      }
      buf_ += '"';
    } else {
      buf_ += client;
    }
    fmt::format_to(out, ",{},{},{},{},", r.arrival, r.prompt_tokens, r.output_tokens, r.prefix_block_size);
    append_list(buf_, r.prefix_blocks, ' ');
    fmt::format_to(out, ",{},{},", r.session, r.turn);
    append_list(buf_, r.parents, ' ');
    fmt::format_to(out, ",{},{},{}\n", r.dependents, r.think_time, r.category);
  } else {
    fmt::format_to(out, "{{\"id\": {}, \"client\": ", r.id);
    append_json_string(buf_, client);
    fmt::format_to(out, ", \"arrival_ns\": {}, \"prompt_tokens\": {}, \"output_tokens\": {}", r.arrival,
                   r.prompt_tokens, r.output_tokens);
    if (r.prefix_block_size != 0) fmt::format_to(out, ", \"prefix_block_size\": {}", r.prefix_block_size);
    if (!r.prefix_blocks.empty()) {
      buf_ += ", \"prefix_blocks\": [";
      append_list(buf_, r.prefix_blocks, ',');
      buf_ += ']';
    }
    if (r.session != 0) fmt::format_to(out, ", \"session\": {}", r.session);
    if (r.turn != 0) fmt::format_to(out, ", \"turn\": {}", r.turn);
    if (!r.parents.empty()) {
      buf_ += ", \"parents\": [";
      append_list(buf_, r.parents, ',');
      buf_ += ']';
    }
    if (r.dependents != 0) fmt::format_to(out, ", \"dependents\": {}", r.dependents);
    if (r.think_time != 0) fmt::format_to(out, ", \"think_time_ns\": {}", r.think_time);
    if (r.category != 0) fmt::format_to(out, ", \"category\": {}", r.category);
    buf_ += "}\n";
  }
  ++rows_;
  if (buf_.size() >= kFlushBytes) flush();
}

void NativeWriter::flush() {
  out_.write(buf_);
  buf_.clear();
}

void NativeWriter::append_file(const std::string& rows) {
  flush();
  std::FILE* src = std::fopen(rows.c_str(), "rb");
  if (!src) throw InputError(located(rows, 0, fmt::format("cannot read the staged rows: {}", std::strerror(errno))));
  std::vector<char> buf(1 << 16);
  for (std::size_t k; (k = std::fread(buf.data(), 1, buf.size(), src)) > 0;) {
    try {
      out_.write(std::string_view(buf.data(), k));
    } catch (...) {
      std::fclose(src);
      throw;
    }
  }
  const bool bad = std::ferror(src) != 0;
  std::fclose(src);
  if (bad) throw InputError(located(rows, 0, "read error in the staged rows"));
}

void NativeWriter::finish() {
  flush();
  out_.commit();
}

std::int64_t write_native_trace(RequestSource& source, const ClientTable& clients, const std::string& path) {
  const NativeWriter::Flavor flavor = NativeWriter::flavor_for(path);
  const std::string staged = path + ".rows";
  struct RemoveStaged {
    const std::string& p;
    ~RemoveStaged() {
      std::error_code ec;
      std::filesystem::remove(p, ec);
    }
  } cleanup{staged};
  std::int64_t n = 0;
  {
    NativeWriter rows(staged, flavor);
    RequestSpec r;
    while (source.next(r)) rows.write(r, clients.names());
    rows.finish();
    n = rows.rows();
  }
  NativeWriter out(path, flavor);
  out.begin(clients.names());
  out.append_file(staged);
  out.finish();
  return n;
}

}  // namespace servesim
