// Empirical length resampling; see empirical_workload.h.
#include "traces/generators/empirical_workload.h"

#include <algorithm>
#include <climits>
#include <string_view>

#include <fmt/format.h>

#include "sim/core/error.h"
#include "traces/trace_options.h"

namespace servesim {

EmpiricalLengths::EmpiricalLengths(const std::string& path, const TraceReadOptions& opt, std::int64_t max_rows) {
  auto reader = open_trace(path, opt);
  TraceRow row;
  while ((max_rows == 0 || static_cast<std::int64_t>(rows_.size()) < max_rows) && reader->next(row))
    rows_.emplace_back(static_cast<std::int32_t>(std::min<std::int64_t>(row.spec.prompt_tokens, INT32_MAX)),
                       static_cast<std::int32_t>(std::min<std::int64_t>(row.spec.output_tokens, INT32_MAX)));
  if (rows_.empty()) throw InputError(located(path, 0, "no rows to resample lengths from"));
}

std::pair<std::int64_t, std::int64_t> EmpiricalLengths::sample(Rng& rng, bool joint) const {
  const auto& a = rows_[rng.below(rows_.size())];
  if (joint) return {a.first, a.second};
  const auto& b = rows_[rng.below(rows_.size())];
  return {a.first, b.second};
}

namespace {

class EmpiricalSource final : public RequestSource {
 public:
  EmpiricalSource(const EmpiricalSpec& spec, ClientTable& clients, std::uint64_t seed)
      : spec_(spec),
        lengths_(spec.path, spec.read, spec.max_rows),
        arrivals_(spec.arrivals, Rng::stream(seed, 0xE3B1), "workload (empirical)"),
        sizes_(Rng::stream(seed, 0xE3B2)),
        client_(clients.intern(spec.client)) {}

  bool next(RequestSpec& out) override {
    const std::optional<Time> arrival = arrivals_.next();
    if (!arrival) return false;
    out = RequestSpec{};
    out.id = arrivals_.count() - 1;
    out.client = client_;
    out.arrival = *arrival;
    auto [p, o] = lengths_.sample(sizes_, spec_.joint);
    out.prompt_tokens = p;
    out.output_tokens = o;
    return true;
  }

  std::string describe() const override {
    return fmt::format("empirical lengths from {} ({} rows)", spec_.path, lengths_.size());
  }

 private:
  const EmpiricalSpec& spec_;
  EmpiricalLengths lengths_;
  ArrivalClock arrivals_;
  Rng sizes_;
  ClientId client_;
};

}  // namespace

const OptionTable<EmpiricalSpec>& empirical_options() {
  // path: required (checked before the table reads: no default); format: converted by parse_format().
  using R = OptionRange;
  static const OptionTable<EmpiricalSpec> t = [] {
    OptionTable<EmpiricalSpec> read;  // the trace reading keys an empirical workload has: skip_bad_rows
    for (OptionField<EmpiricalSpec>& f : lift(&EmpiricalSpec::read, trace_read_options()))
      if (std::string_view(f.key) == "skip_bad_rows") read.push_back(std::move(f));
    return concat<EmpiricalSpec>({
        {{"path", &EmpiricalSpec::path, R::kAny, "the trace its lengths come from (required)"},
         {"format", trace_format_column<EmpiricalSpec>(), R::kAny, "as for type: trace"}},
        read,
        {{"max_rows", &EmpiricalSpec::max_rows, R::kNonNegative, "rows read from the trace (0 = all)"},
         {"joint", &EmpiricalSpec::joint, R::kAny, "draw (prompt, output) from one row; false: from two"}},
        lift(&EmpiricalSpec::arrivals, arrival_spec_options("requests")),
        {{"client", &EmpiricalSpec::client, R::kAny, "the client of every request"}},
    });
  }();
  return t;
}

YAML::Node EmpiricalWorkload::resolved() const {
  YAML::Node n;
  n["type"] = "empirical";
  write_options(n, empirical_options(), spec_);
  return n;
}

std::unique_ptr<RequestSource> EmpiricalWorkload::open(ClientTable& clients, std::uint64_t seed) const {
  return std::make_unique<EmpiricalSource>(spec_, clients, seed);
}

std::unique_ptr<Workload> parse_empirical_workload(YamlMap& m) {
  EmpiricalSpec s;
  if (!m.has("path")) m.require<std::string>("path");  // "missing required key 'path'"
  read_options(m, empirical_options(), s);
  check_stop_rule(m, s.arrivals.stop, "requests");
  if (s.client.empty()) m.fail("client", "must not be empty");
  m.finish();
  return std::make_unique<EmpiricalWorkload>(std::move(s));
}

}  // namespace servesim
