// ClientAssigner: gives each trace row a client (ClientRule in
// trace_options.h; rules documented in docs/traces.md "Client assignment"):
//   auto          the row's client column when it has one, else `name`
//   trace         the row's client column (a row without one is an error)
//   single        everyone is `name`
//   prefix_block  the first prefix block past the `common_blocks` leading
//                 blocks that every request shares (Mooncake: block 0 is a
//                 global system prompt, so block 1 — the start of the
//                 conversation — decides), hashed into `count` clients
//                 "client-0".."client-<count-1>" (count 0: one client per
//                 block id, "block-<id>"); a prompt with no block past the
//                 common ones uses its last block
//   group         the reader's group (BurstGPT "<Model>/<Log Type>")
//   random        seeded split into `count` clients with `weights` (or
//                 Zipf(`zipf`) shares, or equal shares), keyed by the row's
//                 session when it has one (sessions stay together), else id
// Bucketed rules register all their names up front, so the client table does
// not depend on which rows a window or sample keeps.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/request_source.h"
#include "traces/trace_options.h"

namespace servesim {

class ClientAssigner {
 public:
  // `path` names the trace in messages. Registers names in `table`.
  ClientAssigner(const ClientRule& rule, std::string path, std::uint64_t seed, ClientTable& table);

  // True until set_common_blocks() when the rule needs the auto value.
  bool needs_common_blocks() const { return rule_.by == ClientRule::By::kPrefixBlock && common_ < 0; }
  void set_common_blocks(int d) { common_ = d; }
  int common_blocks() const { return common_; }

  // Sets row.spec.client. Throws InputError (file:line) if the row lacks
  // what the rule needs (a client, a group, prefix blocks).
  void assign(TraceRow& row);

  // Leading blocks shared by every request in `rows` (0 when empty or none).
  static int common_leading_blocks(const std::vector<const std::vector<BlockHash>*>& rows);

 private:
  ClientId intern(const std::string& name);

  ClientRule rule_;
  std::string path_;
  std::uint64_t seed_;
  ClientTable& table_;
  int common_ = -1;
  std::vector<ClientId> bucket_ids_;  // prefix_block (count > 0) and random
  std::vector<double> cumulative_;    // random: cumulative shares, last = 1
  std::string last_name_;             // intern cache
  ClientId last_id_ = 0;
  bool have_last_ = false;
  std::string scratch_;
};

}  // namespace servesim
