// topk_mask of the built-in CUDA kernels against docs/spec.md's definition, exactly: an entry is kept
// iff fewer than k entries of its row beat it, where a beats b when a > b, or when they are equal
// (-0 == +0, NaN == NaN, NaN below every number) and a has the lower index.
//
// The kernels select by searching for the k-th largest value, bit by bit or by interpolation,
// with shortcuts that hold only for some data (a bound from per-thread maxima, an early stop
// when exactly k entries pass): so the data here are chosen to defeat them as well as to meet
// them: ties at the boundary, all-equal and all-NaN rows, sorted rows, signed zeros and
// infinities, magnitudes spread over every exponent, over every launch plan's range of widths
// and values of k on both sides of the threads per row.
#include <catch2/catch.hpp>

#include "gpu_support.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace tapecheck::device;
using namespace tapecheck::device::testing;

namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr float kInff = std::numeric_limits<float>::infinity();

// Each entry's rank within its row: how many entries of the row beat it (docs/spec.md's order).
std::vector<std::uint32_t> ranksOf(const std::vector<float>& x, std::uint32_t rows,
                                   std::uint32_t cols) {
  auto beats = [](float a, float b) {  // strict: equal values (and two NaNs) beat neither way
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    return a > b;
  };
  std::vector<std::uint32_t> rank(x.size());
  std::vector<std::uint32_t> order(cols);
  for (std::uint32_t r = 0; r < rows; ++r) {
    const float* row = x.data() + static_cast<std::size_t>(r) * cols;
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return beats(row[a], row[b]); });
    for (std::uint32_t pos = 0; pos < cols; ++pos)
      rank[static_cast<std::size_t>(r) * cols + order[pos]] = pos;
  }
  return rank;
}

struct Pattern {
  const char* name;
  float (*value)(std::mt19937& gen, std::size_t row, std::uint32_t col, std::uint32_t cols);
};

const std::vector<Pattern>& patterns() {
  static const std::vector<Pattern> p = {
      {"uniform", [](std::mt19937& g, std::size_t, std::uint32_t, std::uint32_t) {
         return std::uniform_real_distribution<float>(-4.f, 4.f)(g);
       }},
      {"four values (ties everywhere)", [](std::mt19937& g, std::size_t, std::uint32_t, std::uint32_t) {
         return static_cast<float>(std::uniform_int_distribution<int>(0, 3)(g));
       }},
      {"half the row distinct, then ties", [](std::mt19937& g, std::size_t, std::uint32_t, std::uint32_t cols) {
         return static_cast<float>(std::uniform_int_distribution<std::uint32_t>(0, cols / 2)(g));
       }},
      {"all equal", [](std::mt19937&, std::size_t, std::uint32_t, std::uint32_t) { return 2.5f; }},
      {"ascending", [](std::mt19937&, std::size_t, std::uint32_t c, std::uint32_t) {
         return static_cast<float>(c);
       }},
      {"descending", [](std::mt19937&, std::size_t, std::uint32_t c, std::uint32_t) {
         return -static_cast<float>(c);
       }},
      {"specials (NaN, +-inf, +-0, denormals)", [](std::mt19937& g, std::size_t, std::uint32_t, std::uint32_t) {
         static const float pick[] = {kNaNf, kInff, -kInff, 0.0f, -0.0f, 1e-40f, -1e-40f, 1.0f};
         const int i = std::uniform_int_distribution<int>(0, 15)(g);
         return i < 8 ? pick[i] : std::uniform_real_distribution<float>(-1.f, 1.f)(g);
       }},
      {"rows of NaN, rows of one number", [](std::mt19937&, std::size_t r, std::uint32_t c, std::uint32_t) {
         return r % 2 == 0 ? kNaNf : (c % 3 == 0 ? 7.0f : kNaNf);
       }},
      {"narrow range (shared leading bits)", [](std::mt19937& g, std::size_t, std::uint32_t, std::uint32_t) {
         return 1000.0f + std::uniform_int_distribution<int>(0, 1 << 12)(g) * (1.0f / 64);
       }},
      // Values spread evenly over exponents, where interpolating in value (topk_interpolate.cuh)
      // guesses far off and the search falls back to bisecting.
      {"log-uniform magnitudes, both signs", [](std::mt19937& g, std::size_t, std::uint32_t, std::uint32_t) {
         const float m = std::ldexp(std::uniform_real_distribution<float>(1.f, 2.f)(g),
                                    std::uniform_int_distribution<int>(-120, 120)(g));
         return std::uniform_int_distribution<int>(0, 1)(g) == 0 ? m : -m;
       }},
  };
  return p;
}

// Widths around every plan boundary: a thread or a group of lanes per row (up to 512), whole
// warps (up to 4096; 1028 and 3000 are rows that a staged warp copies whole but that end before
// its last keys, 3001 one it cannot copy), warp pairs (4100, 6000 and 8192; 8191 cannot be
// copied), groups of four warps (12000 and 16384), blocks holding rows in registers (below
// 16384, and the rows no other plan takes), streamed rows from 16384 (with the histogram
// kernels for large k) and the split of a few very long rows.
const std::vector<std::uint32_t>& widths() {
  static const std::vector<std::uint32_t> w = {
      2,    3,    5,    8,    16,   17,    31,    32,    33,    64,    100,   128,
      255,  256,  257,  511,  512,  513,   1000,  1024,  1025,  1028,  2048,  3000,
      3001, 4096, 4100, 6000, 8191, 8192, 12000, 16384, 16385, 20000, 32768, 40000, 57345,
      65536, 70001};
  return w;
}

std::uint32_t rowsFor(std::uint32_t cols) {
  if (cols >= 65536) return 3;  // a few very long rows: the split plan
  if (cols > 16384) return 260;  // enough rows for one block per row
  return std::clamp<std::uint32_t>(300000 / cols, 3, 333);
}

std::vector<std::uint32_t> ksFor(std::uint32_t cols) {
  // Each side of the sorted plans' list lengths (2, 4, 8, 16; k == length needs no final sort)
  // and of their limit, kSortedMaxK = 16.
  std::vector<std::uint32_t> ks = {0,  1,  2,  3,  4,  5,  7,    8,    15,       16,       17,
                                   31, 32, 33, 64, 65, 1023, 1025, cols / 2, cols - 1, cols, cols + 5};
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  ks.erase(std::remove_if(ks.begin(), ks.end(), [&](std::uint32_t k) { return k > cols + 5; }), ks.end());
  return ks;
}

// Calls topk_mask on x (already on the GPU as xg) and requires every entry to be kept iff its
// rank is below k. One REQUIRE per call keeps the assertion count readable.
void requireRankBelowK(const tapecheck_kernels_v1& table, const std::vector<float>& x,
                       const at::Tensor& xg, const std::vector<std::uint32_t>& rank,
                       std::uint32_t rows, std::uint32_t cols, std::uint32_t k) {
  const std::size_t n = x.size();
  at::Tensor mask = gpuBuffer(n);
  const int st = table.topk_mask(nullptr, rows, cols, k, xg.data_ptr<float>(), mask.data_ptr<float>());
  REQUIRE(st == 0);
  const std::vector<float> got = toHost(mask);
  for (std::size_t i = 0; i < n; ++i) {
    const float want = rank[i] < k ? 1.0f : 0.0f;
    if (got[i] != want) {
      INFO("row " << i / cols << " col " << i % cols << " x=" << x[i] << " rank " << rank[i]
                  << ": got " << got[i] << ", want " << want);
      REQUIRE(got[i] == want);
    }
  }
}

}  // namespace

TEST_CASE("On a GPU, topk_mask keeps exactly the entries of rank below k", "[gpu]") {
  auto kernels = cudaKernelsOrSkip();
  if (!kernels) return;
  const tapecheck_kernels_v1& table = *kernels->table;
  std::size_t calls = 0;
  for (std::uint32_t cols : widths()) {
    const std::uint32_t rows = rowsFor(cols);
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    for (const Pattern& p : patterns()) {
      std::mt19937 gen(cols * 31u + static_cast<std::uint32_t>(&p - patterns().data()));
      std::vector<float> x(n);
      for (std::size_t i = 0; i < n; ++i) x[i] = p.value(gen, i / cols, static_cast<std::uint32_t>(i % cols), cols);
      const std::vector<std::uint32_t> rank = ranksOf(x, rows, cols);
      const at::Tensor xg = onGpu(x);
      for (std::uint32_t k : ksFor(cols)) {
        INFO("[" << rows << "," << cols << "] " << p.name << " k=" << k);
        requireRankBelowK(table, x, xg, rank, rows, cols, k);
        ++calls;
      }
    }
  }
  WARN("topk_mask: " << calls << " calls compared element by element");
}

// Many streamed rows (topk_stream.cuh) with small k, where a sample of 4096 entries gives the
// bound. With four values, the largest of them passes the bound: about a quarter of 16385
// entries, around the 4096 candidate slots, so some rows fit them and others take the
// fallback. (Up to kernels 1.9.2 this shape ran the cluster plan of sorting networks,
// whose per-row state came in two sets used by row parity: hence 3 x 1024 rows and more.)
TEST_CASE("On a GPU, topk_mask stays exact over thousands of streamed rows with small k", "[gpu]") {
  auto kernels = cudaKernelsOrSkip();
  if (!kernels) return;
  const tapecheck_kernels_v1& table = *kernels->table;
  const std::uint32_t rows = 3100, cols = 16385;
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  for (std::size_t pick : {std::size_t{0}, std::size_t{1}}) {  // uniform; four values (ties)
    const Pattern& p = patterns()[pick];
    std::mt19937 gen(static_cast<std::uint32_t>(7 + pick));
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = p.value(gen, i / cols, static_cast<std::uint32_t>(i % cols), cols);
    const std::vector<std::uint32_t> rank = ranksOf(x, rows, cols);
    const at::Tensor xg = onGpu(x);
    for (std::uint32_t k : {2u, 5u, 8u}) {
      INFO("[" << rows << "," << cols << "] " << p.name << " k=" << k);
      requireRankBelowK(table, x, xg, rank, rows, cols, k);
    }
  }
}

// The whole warps of 513-4096 columns take row after row through one stage of shared memory each,
// its barrier's phase flipping every row (topk_warp_stage.cuh), and so do the warp groups of
// 4097-16384 columns (topk_warp_groups.cu: pairs up to 8192, fours beyond). The grid is capped
// (8192 blocks of 4 or 8 warps, of 2 pairs or of 1 four), so only this many rows give each warp
// or group two or three turns. Each row is a permutation of 0 .. cols - 1 (7 is prime to every
// width here), so the entry of value v has rank cols - 1 - v without sorting 700 million entries.
TEST_CASE("On a GPU, topk_mask stays exact when every whole warp takes several rows", "[gpu]") {
  auto kernels = cudaKernelsOrSkip();
  if (!kernels) return;
  const tapecheck_kernels_v1& table = *kernels->table;
  struct Shape {
    std::uint32_t cols, warps;  // warps (or groups): the plan's a block times the grid's cap
  };
  for (const Shape& shape : {Shape{1024, 8 * 8192}, Shape{2048, 8 * 8192}, Shape{3000, 4 * 8192},
                             Shape{4096, 4 * 8192}, Shape{6000, 2 * 8192},
                             Shape{8192, 2 * 8192}, Shape{12000, 8192}, Shape{16384, 8192}}) {
    const std::uint32_t cols = shape.cols, rows = 2 * shape.warps + 3;
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    std::vector<float> x(n);
    std::vector<std::uint32_t> rank(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t r = i / cols, j = i % cols;
      const auto v = static_cast<std::uint32_t>((j * 7 + r * 13) % cols);
      x[i] = static_cast<float>(v);
      rank[i] = cols - 1 - v;
    }
    const at::Tensor xg = onGpu(x);
    for (std::uint32_t k : {2u, 8u, 16u, 17u, 64u}) {
      INFO("[" << rows << "," << cols << "] permuted rows, k=" << k);
      requireRankBelowK(table, x, xg, rank, rows, cols, k);
    }
  }
}

// Streamed rows (topk_stream.cuh) whose large entries all fall in one warp's tiles. Each warp of
// the stream's 512-thread blocks appends the candidates of its own tiles (32 units of 4, or 32
// entries where the row is not 16-byte aligned) to its own region of shared memory, an equal
// share of the store. At k = 64 and 300, where the threads' bound lies below the large entries,
// one region overflows while the store as a whole would hold them, and the row must take the
// paths for overflowing rows (the whole row as the sample, then the bit-by-bit search over the
// re-read row); at k = 8 the bound lies among the large entries and the region holds them.
// Other rows keep their large entries at random places, for rows that fit next to rows that
// do not.
TEST_CASE("On a GPU, topk_mask stays exact when one warp's tiles hold a streamed row's largest entries", "[gpu]") {
  auto kernels = cudaKernelsOrSkip();
  if (!kernels) return;
  const tapecheck_kernels_v1& table = *kernels->table;
  constexpr std::uint32_t kThreads = 512, kWarpTile = 32;
  const std::uint32_t rows = 40;
  for (std::uint32_t cols : {20000u, 20001u, 32768u}) {
    const bool units = cols % 4 == 0;  // the 16-byte path: a lane's tile entry is 4 floats
    auto warp_of = [&](std::uint32_t j) { return ((units ? j / 4 : j) % kThreads) / kWarpTile; };
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    std::mt19937 gen(cols);
    std::uniform_real_distribution<float> small(-4.f, 4.f), large(100.f, 200.f);
    std::bernoulli_distribution scattered(0.01);
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t r = i / cols;
      const auto j = static_cast<std::uint32_t>(i % cols);
      const bool hot = r % 2 == 0 ? warp_of(j) == r / 2 % (kThreads / kWarpTile) : scattered(gen);
      x[i] = hot ? large(gen) : small(gen);
    }
    const std::vector<std::uint32_t> rank = ranksOf(x, rows, cols);
    const at::Tensor xg = onGpu(x);
    for (std::uint32_t k : {8u, 64u, 300u}) {
      INFO("[" << rows << "," << cols << "] one warp's tiles large, k=" << k);
      requireRankBelowK(table, x, xg, rank, rows, cols, k);
    }
  }
}

// The warps of 481-512 columns (16 keys a lane), for k >= 64, search by interpolation
// (topk_interpolate.cuh); up to kernels 1.23.0 they searched every key until at most 128 (4 a
// lane) were at or above the search's t, then packed those into shared memory. Each row here
// has c large entries above uniform(-4, 4), c around k and around that old capacity (127, 128,
// 129): all equal (ties at T, ranked by index), distinct but sharing their leading bits (a long
// search, whose guesses from the row's smallest and largest values land far off), or all in one
// lane's columns (one lane holding 16 of them).
TEST_CASE("On a GPU, topk_mask stays exact when a 512-column row has about k large entries far above the rest", "[gpu]") {
  auto kernels = cudaKernelsOrSkip();
  if (!kernels) return;
  const tapecheck_kernels_v1& table = *kernels->table;
  const std::uint32_t counts[] = {64, 100, 127, 128, 129, 200};
  const std::uint32_t rows = 3000;
  for (std::uint32_t cols : {500u, 512u}) {
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    std::mt19937 gen(cols + 5);
    std::uniform_real_distribution<float> small(-4.f, 4.f), narrow(50.f, 50.5f);
    std::vector<float> x(n);
    std::vector<std::uint32_t> order(cols);
    for (std::uint32_t r = 0; r < rows; ++r) {
      float* row = x.data() + static_cast<std::size_t>(r) * cols;
      for (std::uint32_t j = 0; j < cols; ++j) row[j] = small(gen);
      const std::uint32_t kind = r / 6 % 3;  // 0: all equal; 1: narrow; 2: one lane's columns
      const std::uint32_t c = kind == 2 ? 16 : counts[r % 6];
      std::iota(order.begin(), order.end(), 0u);
      std::shuffle(order.begin(), order.end(), gen);
      for (std::uint32_t i = 0; i < c; ++i) {
        const std::uint32_t j = kind == 2 ? (r % 32 + 32 * i) % cols : order[i];
        row[j] = kind == 0 ? 50.f : narrow(gen);
      }
    }
    const std::vector<std::uint32_t> rank = ranksOf(x, rows, cols);
    const at::Tensor xg = onGpu(x);
    for (std::uint32_t k : {64u, 65u, 100u, 127u, 128u, 129u, 300u}) {
      INFO("[" << rows << "," << cols << "] large entries around the store's size, k=" << k);
      requireRankBelowK(table, x, xg, rank, rows, cols, k);
    }
  }
}
