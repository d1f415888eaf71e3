// topk_mask's interpolating search for the k-th largest key
// (device/kernels/topk/topk_interpolate.cuh), run on the host, one row at a time, against counts
// made by brute force. The GPU tests (gpu_topk_tests.cpp) check the kernels that call it; these
// check the search itself wherever the suite runs, GPU or not.
//
// The keys here follow docs/spec.md's order, written from the spec: larger value, larger key; NaN
// below every number; -0 and +0 equal. An entry is kept iff fewer than k entries beat it, ties
// broken by index. From the search's result (lo, done) the kept entries are those with key > lo
// and, of those == lo, all of them when `done`, else the first k - count(key > lo) by index.
#include <catch2/catch.hpp>

#include "../kernels/topk/topk_interpolate.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

std::uint32_t orderKey(float x) {
  if (std::isnan(x)) return 0u;
  if (x == 0.0f) x = 0.0f;  // -0 ranks as +0
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return (u >> 31) != 0u ? ~u : (u | 0x80000000u);
}

// The team of one row: every collective is the row's own value.
struct OneRow {
  bool all(bool p) const { return p; }
};

struct SearchResult {
  std::uint32_t lo;
  bool done;
  int steps;
};

SearchResult search(const std::vector<std::uint32_t>& keys, std::uint32_t k) {
  const std::uint32_t low = *std::min_element(keys.begin(), keys.end());
  const std::uint32_t high = *std::max_element(keys.begin(), keys.end());
  OneRow team;
  bool done = false;
  int steps = 0;
  const std::uint32_t lo = tapecheck_cuda::search_interpolating(
      team, low, high, static_cast<std::uint32_t>(keys.size()), k, done, [&](std::uint32_t c) {
        ++steps;
        return static_cast<std::uint32_t>(
            std::count_if(keys.begin(), keys.end(), [&](std::uint32_t key) { return key >= c; }));
      });
  return {lo, done, steps};
}

// Kept iff fewer than k entries beat it (a stable sort by key, larger first, keeps index order
// among equal keys).
std::vector<bool> keptBySpec(const std::vector<std::uint32_t>& keys, std::uint32_t k) {
  std::vector<std::uint32_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return keys[a] > keys[b]; });
  std::vector<bool> kept(keys.size(), false);
  for (std::uint32_t rank = 0; rank < k; ++rank) kept[order[rank]] = true;
  return kept;
}

std::vector<bool> keptBySearch(const std::vector<std::uint32_t>& keys, std::uint32_t k,
                               const SearchResult& r) {
  std::uint32_t above = 0;
  for (std::uint32_t key : keys) above += key > r.lo ? 1u : 0u;
  std::uint32_t ties_left = r.done ? static_cast<std::uint32_t>(keys.size()) : k - above;
  std::vector<bool> kept(keys.size(), false);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] > r.lo) {
      kept[i] = true;
    } else if (keys[i] == r.lo && ties_left > 0) {
      kept[i] = true;
      --ties_left;
    }
  }
  return kept;
}

struct Pattern {
  const char* name;
  float (*value)(std::mt19937& gen, std::uint32_t col);
};

const std::vector<Pattern>& patterns() {
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  constexpr float kInf = std::numeric_limits<float>::infinity();
  static const std::vector<Pattern> p = {
      {"uniform(-4, 4)", [](std::mt19937& g, std::uint32_t) {
         return std::uniform_real_distribution<float>(-4.f, 4.f)(g);
       }},
      {"normal", [](std::mt19937& g, std::uint32_t) { return std::normal_distribution<float>()(g); }},
      {"four values", [](std::mt19937& g, std::uint32_t) {
         return static_cast<float>(std::uniform_int_distribution<int>(0, 3)(g));
       }},
      {"all equal", [](std::mt19937&, std::uint32_t) { return -1.5f; }},
      {"ascending", [](std::mt19937&, std::uint32_t c) { return static_cast<float>(c); }},
      {"specials", [](std::mt19937& g, std::uint32_t) {
         static const float pick[] = {kNaN, kInf, -kInf, 0.0f, -0.0f, 1e-40f, -1e-40f, 1.0f};
         const int i = std::uniform_int_distribution<int>(0, 11)(g);
         return i < 8 ? pick[i] : std::uniform_real_distribution<float>(-1.f, 1.f)(g);
       }},
      {"mostly NaN", [](std::mt19937& g, std::uint32_t) {
         return std::uniform_int_distribution<int>(0, 9)(g) == 0 ? 3.0f : kNaN;
       }},
      {"log-uniform magnitudes, both signs", [](std::mt19937& g, std::uint32_t) {
         const float m = std::ldexp(std::uniform_real_distribution<float>(1.f, 2.f)(g),
                                    std::uniform_int_distribution<int>(-120, 120)(g));
         return std::uniform_int_distribution<int>(0, 1)(g) == 0 ? m : -m;
       }},
      {"narrow range", [](std::mt19937& g, std::uint32_t) {
         return 1000.0f + std::uniform_int_distribution<int>(0, 1 << 12)(g) * (1.0f / 64);
       }},
  };
  return p;
}

}  // namespace

TEST_CASE("topk_mask's interpolating search keeps exactly the entries of rank below k, in at most 40 steps", "[search]") {
  std::size_t rows = 0;
  for (const Pattern& p : patterns()) {
    for (std::uint32_t cols : {2u, 3u, 5u, 17u, 64u, 100u, 128u, 255u, 512u, 1000u}) {
      std::mt19937 gen(cols * 7919u + static_cast<std::uint32_t>(&p - patterns().data()));
      for (int row = 0; row < 6; ++row) {
        std::vector<std::uint32_t> keys(cols);
        for (std::uint32_t c = 0; c < cols; ++c) keys[c] = orderKey(p.value(gen, c));
        const std::uint32_t random_k = std::uniform_int_distribution<std::uint32_t>(1, cols - 1)(gen);
        for (std::uint32_t k : {1u, 2u, cols / 2, cols - 1, random_k}) {
          if (k < 1 || k >= cols) continue;
          INFO(p.name << ", " << cols << " columns, row " << row << ", k = " << k);
          const SearchResult r = search(keys, k);
          REQUIRE(r.steps <= tapecheck_cuda::kInterpolatedSteps + 32);
          REQUIRE(keptBySearch(keys, k, r) == keptBySpec(keys, k));
          ++rows;
        }
      }
    }
  }
  WARN("interpolating search: " << rows << " rows compared with docs/spec.md's ranks");
}

// The point of interpolating: on rows of data in random order the guesses land near the k-th
// key, where a search bit by bit spends a step on each of the sign and exponent bits. In a
// simulation of rows of 128 entries at k = 64, the bit search took about 10 steps a row on
// uniform(-4, 4) and normal data, this search about 4 and 5. Bisecting alone would fail this.
TEST_CASE("topk_mask's interpolating search takes few steps on rows of data in random order", "[search]") {
  std::mt19937 gen(2024);
  std::uniform_real_distribution<float> uniform(-4.f, 4.f);
  std::normal_distribution<float> normal;
  for (const bool use_normal : {false, true}) {
    long steps = 0;
    const int rows = 2000;
    for (int row = 0; row < rows; ++row) {
      std::vector<std::uint32_t> keys(128);
      for (std::uint32_t& key : keys) key = orderKey(use_normal ? normal(gen) : uniform(gen));
      steps += search(keys, 64).steps;
    }
    const double per_row = static_cast<double>(steps) / rows;
    WARN((use_normal ? "normal" : "uniform(-4, 4)") << " rows of 128, k = 64: " << per_row
                                                    << " steps a row");
    CHECK(per_row < 7.0);
  }
}
