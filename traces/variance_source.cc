#include "traces/variance_source.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "sim/core/error.h"
#include "sim/core/rng.h"

namespace servesim {
namespace {

// Independent streams per source, so turning one on does not move the others.
constexpr std::uint64_t kSaltBootstrap = 0xB0075;
constexpr std::uint64_t kSaltJitter = 0x717732;
constexpr std::uint64_t kSaltOutput = 0x0D7;

// A mean-one log-normal factor: exp(σ Z − σ²/2).
double lognormal_factor(Rng& rng, double sigma) { return std::exp(sigma * rng.normal() - sigma * sigma / 2); }

// The moving-block bootstrap over time (see the header). Buffers the stream.
class BlockBootstrapSource : public RequestSource {
 public:
  BlockBootstrapSource(std::unique_ptr<RequestSource> inner, Time block, std::uint64_t seed)
      : inner_(std::move(inner)) {
    std::vector<RequestSpec> reqs;
    for (RequestSpec r; inner_->next(r);) reqs.push_back(r);
    if (reqs.empty()) return;
    // Components: a request with parents joins its parents' component (union-find by index).
    std::vector<std::size_t> up(reqs.size());
    std::iota(up.begin(), up.end(), 0);
    auto find = [&](std::size_t i) {
      while (up[i] != i) i = up[i] = up[up[i]];
      return i;
    };
    std::unordered_map<RequestId, std::size_t> index;
    RequestId max_id = 0;
    std::uint64_t max_session = 0;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      index.emplace(reqs[i].id, i);
      max_id = std::max(max_id, reqs[i].id);
      max_session = std::max(max_session, reqs[i].session);
      for (RequestId p : reqs[i].parents)
        if (auto it = index.find(p); it != index.end()) up[find(i)] = find(it->second);
    }
    // A component's block: its first request's arrival (components are listed
    // in the order of their first request, whose arrival is non-decreasing).
    Time t0 = reqs.front().arrival;
    std::vector<std::int64_t> block_of(reqs.size(), -1);
    std::int64_t blocks = 0;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      const std::size_t root = find(i);
      if (block_of[root] < 0) block_of[root] = (reqs[root].arrival - t0) / block;
      block_of[i] = block_of[root];
      blocks = std::max(blocks, block_of[i] + 1);
    }
    std::vector<std::vector<std::size_t>> members(static_cast<std::size_t>(blocks));
    for (std::size_t i = 0; i < reqs.size(); ++i) members[static_cast<std::size_t>(block_of[i])].push_back(i);
    Rng rng = Rng::stream(seed, kSaltBootstrap);
    std::vector<bool> used(members.size(), false);
    RequestId next_id = max_id + 1;
    std::uint64_t next_session = max_session + 1;
    Time last = t0;
    for (std::int64_t j = 0; j < blocks; ++j) {
      const std::size_t src = static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(blocks)));
      const bool fresh = used[src];  // a block's second draw gets new ids
      used[src] = true;
      std::unordered_map<RequestId, RequestId> ids;
      std::unordered_map<std::uint64_t, std::uint64_t> sessions;
      for (std::size_t i : members[src]) {
        RequestSpec r = reqs[i];
        r.arrival = r.arrival + (j - static_cast<std::int64_t>(src)) * block;
        if (r.parents.empty()) last = r.arrival = std::max(r.arrival, last);  // order kept across components
        if (fresh) {
          r.id = ids[reqs[i].id] = next_id++;
          for (RequestId& p : r.parents)
            if (auto it = ids.find(p); it != ids.end()) p = it->second;
          if (r.session != 0) {
            auto [it, inserted] = sessions.try_emplace(r.session, next_session);
            if (inserted) ++next_session;
            r.session = it->second;
          }
        }
        out_.push_back(std::move(r));
      }
    }
    blocks_ = blocks;
  }

  bool next(RequestSpec& out) override {
    if (pos_ >= out_.size()) return false;
    out = std::move(out_[pos_++]);
    return true;
  }
  std::string describe() const override {
    return fmt::format("{} + block bootstrap ({} blocks)", inner_->describe(), blocks_);
  }

 private:
  std::unique_ptr<RequestSource> inner_;
  std::vector<RequestSpec> out_;
  std::size_t pos_ = 0;
  std::int64_t blocks_ = 0;
};

// Arrival jitter and output-length noise, streaming.
class NoiseSource : public RequestSource {
 public:
  NoiseSource(std::unique_ptr<RequestSource> inner, const VarianceConfig& v, std::uint64_t seed)
      : inner_(std::move(inner)),
        jitter_(v.arrival_jitter),
        noise_(v.output_noise),
        jitter_rng_(Rng::stream(seed, kSaltJitter)),
        output_rng_(Rng::stream(seed, kSaltOutput)) {}

  bool next(RequestSpec& r) override {
    if (!inner_->next(r)) return false;
    if (jitter_ > 0 && r.parents.empty()) {
      if (started_) {
        const double gap = static_cast<double>(std::max<Time>(0, r.arrival - last_in_));
        last_in_ = r.arrival;
        r.arrival = last_out_ + static_cast<Time>(std::llround(gap * lognormal_factor(jitter_rng_, jitter_)));
      } else {
        started_ = true;
        last_in_ = r.arrival;
      }
      last_out_ = r.arrival;
    }
    if (noise_ > 0)
      r.output_tokens = std::max<std::int64_t>(
          1, std::llround(static_cast<double>(r.output_tokens) * lognormal_factor(output_rng_, noise_)));
    return true;
  }
  std::string describe() const override {
    return fmt::format("{} + arrival jitter {} + output noise {}", inner_->describe(), jitter_, noise_);
  }

 private:
  std::unique_ptr<RequestSource> inner_;
  double jitter_, noise_;
  Rng jitter_rng_, output_rng_;
  bool started_ = false;
  Time last_in_ = 0, last_out_ = 0;
};

}  // namespace

void VarianceConfig::resolve(bool trace_workload) {
  if (resample == Resample::kAuto)
    resample = trace_workload && repetitions ? Resample::kBlockBootstrap : Resample::kNone;
}

const OptionTable<VarianceConfig>& variance_options() {
  using R = OptionRange;
  using V = VarianceConfig;
  static const OptionTable<V> t = {
      {"resample", one_of(&V::resample, "resample", {"auto", "none", "block_bootstrap"}), R::kAny,
       "auto: block_bootstrap for a trace run as repetitions, else none"},
      {"block_s", &V::block_s, R::kPositive, "bootstrap block length, seconds of arrivals", 1e7, 1e-3},
      {"arrival_jitter", &V::arrival_jitter, R::kNonNegative, "σ of a mean-one log-normal factor on arrival gaps", 3},
      {"output_noise", &V::output_noise, R::kNonNegative, "σ of a mean-one log-normal factor on output lengths", 3},
      {"cost_noise", one_of_or_number(&V::cost_noise, &V::cost_sigma, "cost noise", {"auto", "none", "profile"}, 0, 1),
       R::kAny, "run-to-run noise of iteration times: a σ, or where to take it from"},
      // Set by --repeat / a sweep's repeat:, never written back.
      {"repetitions", &V::repetitions, R::kAny, "run as one of several repetitions", kOptionMax, 0,
       [](const V&) { return false; }},
  };
  return t;
}

VarianceConfig parse_variance(YamlMap& m) {
  VarianceConfig v;
  read_options(m, variance_options(), v);
  m.finish();
  return v;
}

YAML::Node variance_yaml(const VarianceConfig& v) {
  YAML::Node n;
  write_options(n, variance_options(), v);
  return n;
}

std::unique_ptr<RequestSource> with_variance(std::unique_ptr<RequestSource> inner, const VarianceConfig& v,
                                             std::uint64_t seed) {
  if (v.resample == VarianceConfig::Resample::kBlockBootstrap)
    inner = std::make_unique<BlockBootstrapSource>(std::move(inner), seconds_to_time(v.block_s), seed);
  if (v.arrival_jitter > 0 || v.output_noise > 0) inner = std::make_unique<NoiseSource>(std::move(inner), v, seed);
  return inner;
}

}  // namespace servesim
