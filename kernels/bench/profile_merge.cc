#include "kernels/bench/profile_merge.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
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

bool merge_profiles(const std::vector<ProfileInput>& inputs, std::string* merged, std::string* error, bool sessions,
                    bool add_variants, const ProfileInput* repeat) {
  if (inputs.empty()) {
    *error = "no profiles to merge";
    return false;
  }
  if (add_variants && !sessions) {
    *error = "--add-variants needs --sessions (it adds a later session's new kernel variants)";
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
  // --repeat: drop the rows of the input R repeats (same families, same card) that R did not
  // repeat within kRepeatTolerance.
  std::string repeat_note;
  size_t repeated_input = parsed.size();
  if (repeat) {
    ParsedProfile r;
    std::string why;
    if (!parse_profile(repeat->text, &r, &why)) {
      *error = repeat->name + ": " + why;
      return false;
    }
    const std::string families = lookup(r.provenance, "families");
    for (size_t i = 0; i < parsed.size() && repeated_input == parsed.size(); ++i)
      if (lookup(parsed[i].provenance, "families") == families) repeated_input = i;
    if (repeated_input == parsed.size()) {
      *error = repeat->name + ": no input holds exactly its families '" + families +
               "' (a repeat is a second run of one input's families on the same card)";
      return false;
    }
    ParsedProfile& target = parsed[repeated_input];
    const std::string& target_name = inputs[repeated_input].name;
    if (lookup(r.provenance, "gpu_uuid") != lookup(target.provenance, "gpu_uuid")) {
      *error = repeat->name + ": gpu_uuid '" + lookup(r.provenance, "gpu_uuid") + "' differs from " + target_name + "'s '" +
               lookup(target.provenance, "gpu_uuid") + "' (a repeat is measured on the same card)";
      return false;
    }
    if (r.columns != target.columns) {
      *error = repeat->name + ": columns differ from " + target_name;
      return false;
    }
    const auto col = [&](const char* name) {
      return static_cast<size_t>(std::find(r.columns.begin(), r.columns.end(), name) - r.columns.begin());
    };
    const size_t params = col("params"), median = col("median_us");
    if (params >= r.columns.size() || median >= r.columns.size()) {
      *error = repeat->name + ": no params or median_us column";
      return false;
    }
    // (parse_profile gave every row as many cells as the header.)
    const auto point = [&](const std::vector<std::string>& row) {
      std::string key;
      for (size_t c = 0; c <= params; ++c) key += row[c] + ",";
      return key;
    };
    // Row j's median: a number > 0, else an error naming the file, line and column.
    const auto median_of = [&](const ParsedProfile& p, const std::string& name, size_t j, double* out) {
      if (parse_positive_number(p.rows[j][median], out)) return true;
      *error = name + ": line " + std::to_string(p.row_lines[j]) + ", column median_us: '" + p.rows[j][median] +
               "' is not a positive number";
      return false;
    };
    std::map<std::string, double> again;
    for (size_t j = 0; j < r.rows.size(); ++j)
      if (!median_of(r, repeat->name, j, &again[point(r.rows[j])])) return false;
    ParsedProfile kept;
    size_t checked = 0, dropped = 0;
    for (size_t j = 0; j < target.rows.size(); ++j) {
      const auto it = again.find(point(target.rows[j]));
      if (it != again.end()) {
        ++checked;
        double a = 0;
        if (!median_of(target, target_name, j, &a)) return false;
        if (std::abs(it->second / a - 1) > kRepeatTolerance) {
          ++dropped;
          continue;
        }
      }
      kept.rows.push_back(std::move(target.rows[j]));
      kept.row_lines.push_back(target.row_lines[j]);
    }
    target.rows = std::move(kept.rows);
    target.row_lines = std::move(kept.row_lines);
    repeat_note = families + ";repeat_checked:" + std::to_string(checked) +
                  ";unrepeated_dropped:" + std::to_string(dropped);
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
  // --add-variants: inputs whose family an earlier input holds keep only their new
  // (kernel, variant) pairs; added[i] is the session line's ";added:..;dropped_rows:N".
  std::vector<bool> repeated(parsed.size(), false);
  std::vector<std::string> added(parsed.size());
  auto pair_of = [&](const ParsedProfile& p, const std::vector<std::string>& row) {
    std::string kernel, variant;
    for (size_t c = 0; c < p.columns.size() && c < row.size(); ++c) {
      if (p.columns[c] == "kernel") kernel = row[c];
      if (p.columns[c] == "variant") variant = row[c];
    }
    return kernel + "/" + variant;
  };
  auto keep_new_variants = [&](size_t i) {
    std::set<std::string> earlier;
    std::vector<std::string> kept_names;
    for (size_t j = 0; j < i; ++j)
      for (const auto& row : parsed[j].rows) earlier.insert(pair_of(parsed[j], row));
    std::vector<std::vector<std::string>> kept;
    size_t dropped = 0;
    for (auto& row : parsed[i].rows) {
      const std::string key = pair_of(parsed[i], row);
      if (earlier.count(key)) {
        ++dropped;
        continue;
      }
      const std::string variant = key.substr(key.find('/') + 1);
      if (std::find(kept_names.begin(), kept_names.end(), variant) == kept_names.end()) kept_names.push_back(variant);
      kept.push_back(std::move(row));
    }
    if (kept.empty()) {
      *error = inputs[i].name + ": adds no kernel variant that an earlier input does not already have";
      return false;
    }
    parsed[i].rows = std::move(kept);
    std::string names;
    for (const auto& n : kept_names) names += (names.empty() ? "" : "+") + n;
    added[i] = ";added:" + names + ";dropped_rows:" + std::to_string(dropped);
    return true;
  };
  // The repeat check of input i for its session line: this merge's, or one an earlier
  // (non-session) merge recorded in the input's own `# repeat=` line.
  auto repeat_of = [&](size_t i) {
    const std::string note = i == repeated_input ? repeat_note : lookup(parsed[i].provenance, "repeat");
    return note.empty() ? std::string() : ";repeat:" + note;
  };
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
        bool seen = false;
        for (const auto& g : seen_families) seen = seen || g == f;
        if (seen && !add_variants) {
          *error = inputs[i].name + ": family '" + f + "' is already in an earlier input (one session per family; " +
                   "--add-variants keeps only its kernel variants no earlier input has)";
          return false;
        }
        if (seen) repeated[i] = true;
        if (!seen) seen_families.push_back(f);
      }
      if (repeated[i] && !keep_new_variants(i)) return false;
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
                         lookup(parsed[i].provenance, "families") + added[i] +
                         repeat_of(i) +
                         ";gpu_uuid:" + lookup(parsed[i].provenance, "gpu_uuid") +
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
    if (!repeated[i]) families += (families.empty() ? "" : ",") + lookup(parsed[i].provenance, "families");
    commands += (commands.empty() ? "" : " ; ") + lookup(parsed[i].provenance, "command");
  }
  std::ostringstream out;
  // A `# repeat=` line of the first input is its provenance too: kept, unless this merge
  // writes its own check, or --sessions moves it into that input's session line.
  for (const auto& [key, value] : first)
    if (!is_session_key(key) && !(key == "repeat" && (sessions || !repeat_note.empty())))
      out << "# " << key << "=" << (key == "families" ? families : key == "command" ? commands : value) << "\n";
  if (!sessions && !repeat_note.empty()) out << "# repeat=" << repeat_note << "\n";
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
