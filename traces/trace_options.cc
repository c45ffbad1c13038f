// Parsing and stating trace replay settings; see trace_options.h.
#include "traces/trace_options.h"

#include <cmath>

#include "sim/core/error.h"
#include "traces/readers/field_limits.h"

namespace servesim {
namespace {

template <class E>
E pick(YamlMap& m, const std::string& key, const std::string& def,
       std::initializer_list<std::pair<const char*, E>> choices) {
  std::string v = m.get<std::string>(key, def);
  std::string known;
  for (const auto& [name, e] : choices) {
    if (v == name) return e;
    known += (known.empty() ? "" : ", ") + std::string(name);
  }
  m.fail(key, fmt::format("unknown value '{}'; expected one of: {}", v, known));
}

template <class E>
const char* name_of(E e, std::initializer_list<std::pair<const char*, E>> choices) {
  for (const auto& [name, v] : choices)
    if (v == e) return name;
  return "?";
}

const std::initializer_list<std::pair<const char*, FailedRows>> kFailed = {
    {"drop", FailedRows::kDrop}, {"keep", FailedRows::kKeep}, {"error", FailedRows::kError}};
const std::initializer_list<std::pair<const char*, TraceOptions::Origin>> kOrigin = {
    {"auto", TraceOptions::Origin::kAuto},
    {"first_row", TraceOptions::Origin::kFirstRow},
    {"zero", TraceOptions::Origin::kZero}};
const std::initializer_list<std::pair<const char*, SpreadOptions::Mode>> kSpread = {
    {"none", SpreadOptions::Mode::kNone}, {"even", SpreadOptions::Mode::kEven}, {"uniform", SpreadOptions::Mode::kUniform}};
const std::initializer_list<std::pair<const char*, ClientRule::By>> kBy = {
    {"auto", ClientRule::By::kAuto},   {"trace", ClientRule::By::kTrace},
    {"single", ClientRule::By::kSingle}, {"prefix_block", ClientRule::By::kPrefixBlock},
    {"group", ClientRule::By::kGroup}, {"random", ClientRule::By::kRandom}};

}  // namespace

TraceOptions parse_trace_options(YamlMap& m) {
  TraceOptions o;
  o.path = m.require<std::string>("path");
  if (o.path.empty()) m.fail("path", "must not be empty");
  try {
    o.read.format = parse_format(m.get<std::string>("format", "auto"), o.path);
  } catch (const InputError& e) {
    m.fail("format", e.what());
  }
  o.read.skip_bad_rows = m.get<bool>("skip_bad_rows", false);
  o.read.sort = m.get<bool>("sort", false);
  o.read.burstgpt.failed = pick(m, "failed", "drop", kFailed);
  o.time_origin = pick(m, "time_origin", "auto", kOrigin);

  YamlMap w = m.map("window");
  o.start_s = w.get<double>("start_s", 0.0);
  if (!(o.start_s >= 0 && o.start_s <= kMaxTraceTimeS))
    w.fail("start_s", fmt::format("must be in [0, {:.0f}] s, got {}", kMaxTraceTimeS, o.start_s));
  if (w.null_value("end_s")) {
    // null: no end (as config.resolved.yaml writes it)
  } else if (auto end = w.optional<double>("end_s")) {  // absent: no end
    o.end_s = *end;
    if (!(o.end_s > o.start_s)) w.fail("end_s", fmt::format("must be > start_s ({})", o.start_s));
    if (!(o.end_s <= kMaxTraceTimeS))
      w.fail("end_s", fmt::format("must be at most {:.0f} s (or null: no end), got {}", kMaxTraceTimeS, o.end_s));
  }
  w.finish();

  YamlMap sp = m.map("spread");
  o.spread.mode = pick(sp, "mode", "none", kSpread);
  o.spread.bucket_s = sp.positive("bucket_s", 3.0);
  if (!(o.spread.bucket_s <= kMaxSpreadBucketS))
    sp.fail("bucket_s", fmt::format("must be in (0, {:.0f}] s, got {}", kMaxSpreadBucketS, o.spread.bucket_s));
  sp.finish();

  o.sample = m.get<double>("sample", 1.0);
  if (!(o.sample > 0 && o.sample <= 1)) m.fail("sample", fmt::format("must be in (0, 1], got {}", o.sample));
  o.rate_scale = m.get<double>("rate_scale", 1.0);
  if (!(o.rate_scale >= kMinRateScale && o.rate_scale <= kMaxRateScale))
    m.fail("rate_scale", fmt::format("must be in [{}, {}], got {}", kMinRateScale, kMaxRateScale, o.rate_scale));
  o.max_requests = m.get<std::int64_t>("max_requests", 0);
  if (o.max_requests < 0) m.fail("max_requests", "must be >= 0 (0 = all)");

  YamlMap c = m.map("clients");
  o.clients.by = pick(c, "by", "auto", kBy);
  o.clients.name = c.get<std::string>("name", "default");
  if (o.clients.name.empty()) c.fail("name", "must not be empty");
  o.clients.count = c.get<int>("count", 8);
  if (o.clients.count < 0 || o.clients.count > 100000) c.fail("count", "must be in [0, 100000]");
  if (o.clients.by == ClientRule::By::kRandom && o.clients.count == 0) c.fail("count", "must be >= 1 for by: random");
  std::string common = c.get<std::string>("common_blocks", "auto");
  if (common != "auto") {
    o.clients.common_blocks = c.get<int>("common_blocks", 0);
    if (o.clients.common_blocks < 0) c.fail("common_blocks", "must be 'auto' or >= 0");
  }
  o.clients.weights = c.list<double>("weights");
  for (double x : o.clients.weights)
    if (!(x >= 0)) c.fail("weights", "weights must be >= 0");
  if (!o.clients.weights.empty()) {
    double sum = 0;
    for (double x : o.clients.weights) sum += x;
    if (!(sum > 0)) c.fail("weights", "at least one weight must be > 0");
    o.clients.count = static_cast<int>(o.clients.weights.size());
  }
  o.clients.zipf = c.get<double>("zipf", 0.0);
  if (o.clients.zipf < 0) c.fail("zipf", "must be >= 0");
  c.finish();

  m.finish();
  return o;
}

YAML::Node trace_options_yaml(const TraceOptions& o) {
  YAML::Node n;
  n["type"] = "trace";
  n["path"] = o.path;
  n["format"] = o.read.format;
  n["skip_bad_rows"] = o.read.skip_bad_rows;
  n["sort"] = o.read.sort;
  n["failed"] = name_of(o.read.burstgpt.failed, kFailed);
  n["time_origin"] = name_of(o.time_origin, kOrigin);
  n["window"]["start_s"] = o.start_s;
  if (std::isfinite(o.end_s)) n["window"]["end_s"] = o.end_s;
  else n["window"]["end_s"] = YAML::Node(YAML::NodeType::Null);  // no end
  n["spread"]["mode"] = name_of(o.spread.mode, kSpread);
  n["spread"]["bucket_s"] = o.spread.bucket_s;
  n["sample"] = o.sample;
  n["rate_scale"] = o.rate_scale;
  n["max_requests"] = o.max_requests;
  YAML::Node c;
  c["by"] = name_of(o.clients.by, kBy);
  c["name"] = o.clients.name;
  c["count"] = o.clients.count;
  if (o.clients.common_blocks < 0) c["common_blocks"] = "auto";
  else c["common_blocks"] = o.clients.common_blocks;
  YAML::Node w(YAML::NodeType::Sequence);
  for (double x : o.clients.weights) w.push_back(x);
  c["weights"] = w;
  c["zipf"] = o.clients.zipf;
  n["clients"] = c;
  return n;
}

}  // namespace servesim
