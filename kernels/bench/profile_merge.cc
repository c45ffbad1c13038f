#include "kernels/bench/profile_merge.h"

#include <cctype>
#include <sstream>

#include "kernels/bench/profile_csv.h"

namespace servesim::kernels {

namespace {

std::string lookup(const Provenance& p, const std::string& key) {
  for (const auto& [k, v] : p)
    if (k == key) return v;
  return {};
}

// Provenance-only input (no header: the family wrote no row).
bool parse_provenance_only(const std::string& text, Provenance* out) {
  std::istringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    if (line.empty()) continue;
    if (line[0] != '#') return false;
    const size_t start = line.find_first_not_of("# "), eq = line.find('=');
    if (start == std::string::npos || eq == std::string::npos || eq < start) return false;
    out->emplace_back(line.substr(start, eq - start), line.substr(eq + 1));
  }
  return !out->empty();
}

bool is_session_key(const std::string& key) { return key.rfind("session.", 0) == 0; }

}  // namespace

bool is_known_commit(const std::string& commit) {
  std::string sha = commit;
  const std::string dirty = "-dirty";
  if (sha.size() > dirty.size() && sha.compare(sha.size() - dirty.size(), dirty.size(), dirty) == 0)
    sha.resize(sha.size() - dirty.size());
  if (sha.size() < 7 || sha.size() > 40) return false;
  for (char c : sha)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool merge_profiles(const std::vector<ProfileInput>& inputs, std::string* merged, std::string* error, bool sessions) {
  if (inputs.empty()) {
    *error = "no profiles to merge";
    return false;
  }
  std::vector<ParsedProfile> parsed(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string why;
    if (!parse_profile(inputs[i].text, &parsed[i], &why)) {
      parsed[i] = ParsedProfile{};
      if (!parse_provenance_only(inputs[i].text, &parsed[i].provenance)) {
        *error = inputs[i].name + ": " + why;
        return false;
      }
    }
  }
  const Provenance& first = parsed[0].provenance;
  const std::string commit = lookup(first, "git_commit");
  if (!is_known_commit(commit)) {
    *error = inputs[0].name + ": git_commit '" + commit +
             "' is not a commit; pass it in: SERVESIM_GIT_COMMIT=$(git rev-parse HEAD) (expanded where .git exists)";
    return false;
  }
  std::vector<std::string> columns;
  std::string families, commands, session_lines;
  std::vector<std::string> seen_families;
  int session_count = 0;
  const std::vector<const char*> same_run = {"schema_version", "gpu_uuid", "git_commit", "mode"};
  const std::vector<const char*> same_stack = {"schema_version", "mode", "gpu", "gpu_cc", "gpu_sms", "nvidia_driver",
                                               "runtime_cuda_version", "cublaslt_version"};
  for (size_t i = 0; i < parsed.size(); ++i) {
    if (sessions) {
      const std::string c = lookup(parsed[i].provenance, "git_commit");
      if (!is_known_commit(c)) {
        *error = inputs[i].name + ": git_commit '" + c + "' is not a commit";
        return false;
      }
      std::stringstream fs(lookup(parsed[i].provenance, "families"));
      for (std::string f; std::getline(fs, f, ',');) {
        for (const auto& g : seen_families)
          if (g == f) {
            *error = inputs[i].name + ": family '" + f + "' is already in an earlier input (one session per family)";
            return false;
          }
        seen_families.push_back(f);
      }
      // An input that is itself a --sessions merge carries its own session lines: keep
      // them (renumbered) instead of crediting all its families to its first session.
      bool carried = false;
      for (const auto& [k, v] : parsed[i].provenance)
        if (is_session_key(k)) {
          session_lines += "# session." + std::to_string(++session_count) + "=" + v + "\n";
          carried = true;
        }
      if (!carried)
        session_lines += "# session." + std::to_string(++session_count) + "=families:" +
                         lookup(parsed[i].provenance, "families") + ";gpu_uuid:" + lookup(parsed[i].provenance, "gpu_uuid") +
                         ";git_commit:" + c + ";date_utc:" + lookup(parsed[i].provenance, "date_utc") + "\n";
    }
    for (const char* key : sessions ? same_stack : same_run) {
      if (lookup(parsed[i].provenance, key) != lookup(first, key)) {
        *error = inputs[i].name + ": " + key + " '" + lookup(parsed[i].provenance, key) + "' differs from " +
                 inputs[0].name + "'s '" + lookup(first, key) + "'";
        return false;
      }
    }
    if (!parsed[i].columns.empty()) {
      if (columns.empty()) columns = parsed[i].columns;
      if (parsed[i].columns != columns) {
        *error = inputs[i].name + ": columns differ from the other profiles";
        return false;
      }
    }
    families += (families.empty() ? "" : ",") + lookup(parsed[i].provenance, "families");
    commands += (commands.empty() ? "" : " ; ") + lookup(parsed[i].provenance, "command");
  }
  std::ostringstream out;
  for (const auto& [key, value] : first)
    if (!is_session_key(key))
      out << "# " << key << "=" << (key == "families" ? families : key == "command" ? commands : value) << "\n";
  out << session_lines;
  if (!columns.empty()) {
    for (size_t c = 0; c < columns.size(); ++c) out << (c ? "," : "") << columns[c];
    out << "\n";
  }
  for (const ParsedProfile& p : parsed)
    for (const auto& row : p.rows) {
      for (size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << row[c];
      out << "\n";
    }
  *merged = out.str();
  return true;
}

}  // namespace servesim::kernels
