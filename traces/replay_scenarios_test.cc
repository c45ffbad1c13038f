// The shipped replay scenarios (configs/scenarios/*.yaml with a trace
// workload): their workload sections parse, their default paths (relative to
// the repository root) reach the shared traces, and they replay every row.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>

#include "traces/test_files.h"
#include "traces/workload.h"

using namespace servesim;

TEST_CASE("every shipped trace replay scenario reads its whole shared trace") {
  const std::map<std::string, std::size_t> expected = {
      {"mooncake_conversation", 12031}, {"mooncake_synthetic", 3993}, {"azure_code", 8819},
      {"azure_conv", 19366},            {"lmsys_multitenant", 1500},  {"mooncake_pd", 12031},
      {"mooncake_colocated", 12031}};
  std::size_t found = 0;
  for (const auto& [name, rows] : expected) {
    std::string file = std::string(SERVESIM_SOURCE_DIR) + "/configs/scenarios/" + name + ".yaml";
    INFO(file);
    REQUIRE(std::filesystem::exists(file));
    YAML::Node root = load_yaml_file(file);
    YAML::Node w = root["workload"];
    REQUIRE(w["type"].as<std::string>() == "trace");
    // Paths in scenarios are relative to the repository root (the README's working directory).
    w["path"] = std::string(SERVESIM_SOURCE_DIR) + "/" + w["path"].as<std::string>();
    YamlMap m(w, file, "workload");
    auto workload = parse_workload(m);
    ClientTable clients;
    auto src = workload->open(clients, 42);
    RequestSpec r;
    std::size_t n = 0;
    while (src->next(r)) ++n;
    CHECK(n == rows);
    CHECK(clients.size() >= 1);
    ++found;
  }
  CHECK(found == expected.size());
}
