// Stateless seeded randomness: a value derived from (seed, key) alone, so a
// decision about one row (sample it? which client?) does not depend on how
// many rows came before it or on other transformations. SplitMix64 finalizer
// (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", 2014).
#pragma once
#include <cstdint>

namespace servesim {

inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// A well-mixed 64-bit value of (seed, salt, key); salt separates uses.
inline std::uint64_t seeded_hash(std::uint64_t seed, std::uint64_t salt, std::uint64_t key) {
  return mix64(mix64(seed ^ mix64(salt)) ^ key);
}

// Uniform in [0, 1) from a hash (53 high bits).
inline double unit_interval(std::uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

}  // namespace servesim
