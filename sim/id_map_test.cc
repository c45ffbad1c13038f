// IdMap (sim/core/id_map.h) against std::unordered_map over random insertions,
// lookups and erasures, with ids in sequence, far apart and colliding in the table.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "sim/core/id_map.h"

namespace servesim {
namespace {

struct Value {
  std::vector<std::uint64_t> items;  // moved by erase's backward shift and by growth
  int count = 0;
};

void check_same(IdMap<Value>& m, const std::unordered_map<std::uint64_t, Value>& ref,
                const std::vector<std::uint64_t>& keys) {
  REQUIRE(m.size() == ref.size());
  for (std::uint64_t k : keys) {
    const auto it = ref.find(k);
    Value* v = m.find(k);
    REQUIRE((v != nullptr) == (it != ref.end()));
    if (v) {
      REQUIRE(v->count == it->second.count);
      REQUIRE(v->items == it->second.items);
    }
  }
}

TEST_CASE("IdMap agrees with std::unordered_map under random insertions and erasures") {
  for (int shape = 0; shape < 3; ++shape) {
    std::mt19937_64 rng(17 + static_cast<unsigned>(shape));
    std::vector<std::uint64_t> keys;  // the ids drawn from: sequential, spread out, or multiples of 2^32
    for (std::uint64_t i = 0; i < 600; ++i)
      keys.push_back(shape == 0 ? i : shape == 1 ? rng() : i << 32);
    IdMap<Value> m;
    std::unordered_map<std::uint64_t, Value> ref;
    for (int step = 0; step < 40000; ++step) {
      const std::uint64_t k = keys[rng() % keys.size()];
      switch (rng() % 4) {
        case 0:
        case 1: {  // insert or update (operator[] default-constructs an absent value)
          Value& v = m[k];
          Value& r = ref[k];
          REQUIRE(v.count == r.count);
          ++v.count;
          ++r.count;
          v.items.push_back(static_cast<std::uint64_t>(step));
          r.items.push_back(static_cast<std::uint64_t>(step));
          break;
        }
        case 2:
          REQUIRE(m.erase(k) == (ref.erase(k) == 1));
          break;
        default: {
          Value* v = m.find(k);
          const auto it = ref.find(k);
          REQUIRE((v != nullptr) == (it != ref.end()));
          if (v) REQUIRE(v->items == it->second.items);
        }
      }
      if (step % 5000 == 0) check_same(m, ref, keys);
    }
    check_same(m, ref, keys);
    for (std::uint64_t k : keys) m.erase(k);
    CHECK(m.empty());
    CHECK(m.find(keys.front()) == nullptr);
  }
}

TEST_CASE("IdMap: an erased entry's value is gone, a new one starts from the default") {
  IdMap<Value> m;
  m[5].count = 3;
  m[5].items = {1, 2};
  CHECK(m.erase(5));
  CHECK_FALSE(m.erase(5));
  CHECK(m.find(5) == nullptr);
  CHECK(m[5].count == 0);
  CHECK(m[5].items.empty());
  CHECK(m.size() == 1);
}

}  // namespace
}  // namespace servesim
