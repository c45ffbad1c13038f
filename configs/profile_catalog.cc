// Profile locations per GPU and stack; see profile_catalog.h.
#include "configs/profile_catalog.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "configs/scenario_config.h"
#include "sim/core/text_split.h"

namespace servesim {
namespace fs = std::filesystem;
namespace {

// exists() that never throws: a path the OS cannot look up (a name component
// longer than NAME_MAX, a permission error) holds no profile.
bool exists_quietly(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

std::size_t data_rows(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::size_t rows = 0;
  bool header = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (!header) header = true;
    else ++rows;
  }
  return rows;
}

}  // namespace

const std::vector<std::string>& auto_stack_order() {
  static const std::vector<std::string> order = {kOwnStack, "vllm-0.14", "vidur-2024"};
  return order;
}

std::string stack_profile_path(const std::string& hardware_name, const std::string& stack) {
  const fs::path dir = fs::path(profile_dir()) / ascii_lower(hardware_name);
  return (stack == kOwnStack ? dir / "profile.csv" : dir / stack / "profile.csv").string();
}

std::string find_stack_profile(const std::string& hardware_name, const std::string& stack, std::string* chosen) {
  if (stack != "auto") {
    const std::string p = stack_profile_path(hardware_name, stack);
    if (chosen) *chosen = stack;
    return exists_quietly(p) ? p : "";
  }
  for (const auto& s : auto_stack_order())
    if (const std::string p = stack_profile_path(hardware_name, s); exists_quietly(p)) {
      if (chosen) *chosen = s;
      return p;
    }
  return "";
}

std::vector<ShippedProfile> shipped_profiles() {
  std::vector<ShippedProfile> out;
  std::error_code ec;
  for (const auto& hw : fs::directory_iterator(profile_dir(), ec)) {
    if (!hw.is_directory()) continue;
    const std::string name = hw.path().filename().string();
    std::string def;
    find_stack_profile(name, "auto", &def);
    auto add = [&](const std::string& stack, const fs::path& p) {
      if (exists_quietly(p)) out.push_back({name, stack, p.string(), data_rows(p.string()), stack == def});
    };
    add(kOwnStack, hw.path() / "profile.csv");
    for (const auto& sub : fs::directory_iterator(hw.path(), ec))
      if (sub.is_directory()) add(sub.path().filename().string(), sub.path() / "profile.csv");
  }
  std::sort(out.begin(), out.end(), [](const ShippedProfile& a, const ShippedProfile& b) {
    return std::tie(a.hardware, a.stack) < std::tie(b.hardware, b.stack);
  });
  return out;
}

}  // namespace servesim
