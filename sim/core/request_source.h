// RequestSource: a pull-based stream of requests (a trace reader, a synthetic
// generator, a transformation chain). The engine pulls one request at a time, so
// a multi-million-row trace never has to be held in memory at once.
//
// Contract: next() returns requests with unique ids; requests without parents
// come in non-decreasing arrival order (a source that cannot guarantee this
// must sort or fail with an InputError naming file and line). Bad input throws
// InputError; end of stream returns false.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/core/request.h"

namespace servesim {

// Names of clients, indexed by ClientId. Sources register names as they meet
// them; the index is stable for the run (first-seen order, deterministic).
class ClientTable {
 public:
  ClientId intern(const std::string& name) {
    auto [it, inserted] = index_.try_emplace(name, static_cast<ClientId>(names_.size()));
    if (inserted) names_.push_back(name);
    return it->second;
  }
  const std::string& name(ClientId id) const { return names_.at(id); }
  std::size_t size() const { return names_.size(); }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, ClientId> index_;
};

class RequestSource {
 public:
  virtual ~RequestSource() = default;
  // Fills `out` with the next request; false at end of stream.
  virtual bool next(RequestSpec& out) = 0;
  // A one-line description for reports (e.g. "synthetic poisson 3 clients").
  virtual std::string describe() const = 0;
};

}  // namespace servesim
