#include "kernels/bench/registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace servesim::kernels {

namespace {
// Function-local static: registrars in other translation units may run before any
// namespace-scope object of this file is constructed.
std::vector<KernelFamily>& registry() {
  static std::vector<KernelFamily> families;
  return families;
}
}  // namespace

void register_kernel_family(KernelFamily family) {
  for (const auto& f : registry()) {
    if (f.name == family.name) {
      std::fprintf(stderr, "servesim-kernels: kernel family '%s' registered twice\n", family.name.c_str());
      std::abort();
    }
  }
  registry().push_back(std::move(family));
}

std::vector<KernelFamily> kernel_families() {
  std::vector<KernelFamily> sorted = registry();
  std::sort(sorted.begin(), sorted.end(), [](const KernelFamily& a, const KernelFamily& b) {
    return a.order != b.order ? a.order < b.order : a.name < b.name;
  });
  return sorted;
}

std::vector<KernelFamily> select_kernel_families(const std::string& comma_list, std::vector<std::string>* unknown) {
  std::vector<KernelFamily> all = kernel_families();
  if (comma_list.empty()) return all;
  std::vector<std::string> wanted;
  std::stringstream ss(comma_list);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) wanted.push_back(item);
  std::vector<KernelFamily> picked;
  for (const auto& f : all)
    if (std::find(wanted.begin(), wanted.end(), f.name) != wanted.end()) picked.push_back(f);
  if (unknown) {
    for (const auto& w : wanted) {
      const bool known = std::any_of(all.begin(), all.end(), [&](const KernelFamily& f) { return f.name == w; });
      if (!known) unknown->push_back(w);
    }
  }
  return picked;
}

}  // namespace servesim::kernels
