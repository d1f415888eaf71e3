// Bitwise determinism of the built-in CUDA kernels, in the manner of benchdnn's bitwise mode:
//   - the same call repeated gives the same bits, every output;
//   - a row's result (a channel's, for batch norm) does not depend on how many other rows share
//     the call: rows [a, b) computed alone are bit for bit rows [a, b) of the whole call. The
//     kernels choose their launch plan from the shape, so this is what keeps a tape that batches
//     or splits its work differently from changing a single bit;
//   - calls from several host threads at once give the bits a call alone gives;
//   - 16-byte-aligned buffers (vector loads and stores) give the bits of buffers one float off
//     (scalar ones): the same arithmetic in the same order.
// Outputs that are sums over rows (layer norm's dgamma/dbeta, a loss) are not compared between
// a sub-range and the whole call, only in the other three. Without a visible GPU (or without
// the cuda table) these tests say so and pass.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>  // after Catch: its logging headers define a CHECK of their own (an
                         // abort), so this file uses Catch's REQUIRE only

#include <atomic>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gpu_support.h"
#include "tapecheck/device/kernel_table.h"

using namespace tapecheck::device;
using namespace tapecheck::device::testing;

namespace {

// Shapes that reach every launch plan: short rows packed per warp, warp- and block-per-row,
// register- or shared-memory-held rows, re-read rows, and few very long rows (split across
// blocks), each with ragged and vector-friendly widths.
struct GridShape {
  std::uint32_t rows, cols;
};
const std::vector<GridShape>& shapes() {
  static const std::vector<GridShape> s = {
      {1000, 1},   {1000, 3},    {999, 32},    {700, 33},    {500, 128},   {300, 257},
      {300, 1024}, {200, 1025},  {64, 4096},   {40, 8192},   {33, 8193},   {20, 16384},
      {9, 32768},  {300, 65536}, {2, 65537},   {3, 131072},  {1, 200003},
  };
  return s;
}

// The inputs of every entry point for one [rows, cols] shape (batch norm: channels = rows,
// spatial = cols; cross entropy: outer = rows, n = cols, inner = 1). `offset`: where every
// input and output starts in its buffer (0: 16-byte aligned).
struct Inputs {
  at::Tensor x, y, dy, xhat, target, logp, colParam, colShift, rowParam, rowShift, rowInvStd, dloss;
  std::size_t offset = 0;
  // The same values as `from`, each `offset` floats into its buffer.
  Inputs(const Inputs& from, std::size_t off) : offset(off) {
    auto copy = [off](const at::Tensor& t) {
      return gpuBufferAt(static_cast<std::size_t>(t.numel()), off).copy_(t);
    };
    x = copy(from.x), y = copy(from.y), dy = copy(from.dy), xhat = copy(from.xhat);
    target = copy(from.target), logp = copy(from.logp), colParam = copy(from.colParam);
    colShift = copy(from.colShift), rowParam = copy(from.rowParam);
    rowShift = copy(from.rowShift), rowInvStd = copy(from.rowInvStd), dloss = copy(from.dloss);
  }
  explicit Inputs(const GridShape& s) {
    const std::size_t n = static_cast<std::size_t>(s.rows) * s.cols;
    x = onGpu(uniformValues(n, 1, -6.f, 6.f));
    y = onGpu(uniformValues(n, 2, 0.f, 1.f));
    dy = onGpu(uniformValues(n, 3, -2.f, 2.f));
    xhat = onGpu(uniformValues(n, 4, -3.f, 3.f));
    target = onGpu(uniformValues(n, 5, 0.f, 2.f));
    logp = onGpu(uniformValues(n, 6, -12.f, 0.f));
    colParam = onGpu(uniformValues(s.cols, 7, 0.5f, 1.5f));
    colShift = onGpu(uniformValues(s.cols, 8, -1.f, 1.f));
    rowParam = onGpu(uniformValues(s.rows, 9, 0.5f, 1.5f));
    rowShift = onGpu(uniformValues(s.rows, 10, -1.f, 1.f));
    rowInvStd = onGpu(uniformValues(s.rows, 11, 0.25f, 4.f));
    dloss = onGpu({0.75f});
  }
};

// One output of a call: its values, and whether it holds `perRow` values for each row of the
// call (comparable between a sub-range call and the whole one) or is a reduction over rows.
struct Output {
  std::string name;
  at::Tensor values;
  std::size_t perRow = 0;  // 0: a sum over rows, compared for repetition only
};

struct Entry {
  const char* name;
  // Calls the entry point on rows [first, first + count) of `in`; returns its outputs.
  std::function<std::vector<Output>(const tapecheck_kernels_v1&, const Inputs&, GridShape,
                                    std::uint32_t first, std::uint32_t count, int& status)>
      call;
};

const float* rowsOf(const at::Tensor& t, std::uint32_t first, std::uint32_t cols) {
  return t.data_ptr<float>() + static_cast<std::size_t>(first) * cols;
}

// An output buffer of n floats placed as the inputs are (with offset 1, every row of a width
// that is a multiple of 4 starts one float past a 16-byte boundary).
at::Tensor outBuffer(const Inputs& in, std::size_t n) { return gpuBufferAt(n, in.offset); }

const std::vector<Entry>& entries() {
  using K = const tapecheck_kernels_v1&;
  static const std::vector<Entry> e = {
      {"softmax_fwd",
       [](K k, const Inputs& in, GridShape s, std::uint32_t f, std::uint32_t c, int& st) {
         at::Tensor y = outBuffer(in, std::size_t{c} * s.cols);
         st = k.softmax_fwd(nullptr, c, s.cols, rowsOf(in.x, f, s.cols), y.data_ptr<float>());
         return std::vector<Output>{{"y", y, s.cols}};
       }},
      {"softmax_bwd",
       [](K k, const Inputs& in, GridShape s, std::uint32_t f, std::uint32_t c, int& st) {
         at::Tensor dx = outBuffer(in, std::size_t{c} * s.cols);
         st = k.softmax_bwd(nullptr, c, s.cols, rowsOf(in.y, f, s.cols),
                            rowsOf(in.dy, f, s.cols), dx.data_ptr<float>());
         return std::vector<Output>{{"dx", dx, s.cols}};
       }},
      {"log_softmax_fwd",
       [](K k, const Inputs& in, GridShape s, std::uint32_t f, std::uint32_t c, int& st) {
         at::Tensor y = outBuffer(in, std::size_t{c} * s.cols);
         st = k.log_softmax_fwd(nullptr, c, s.cols, rowsOf(in.x, f, s.cols),
                                y.data_ptr<float>());
         return std::vector<Output>{{"y", y, s.cols}};
       }},
      {"log_softmax_bwd",
       [](K k, const Inputs& in, GridShape s, std::uint32_t f, std::uint32_t c, int& st) {
         at::Tensor dx = outBuffer(in, std::size_t{c} * s.cols);
         st = k.log_softmax_bwd(nullptr, c, s.cols, rowsOf(in.logp, f, s.cols),
                                rowsOf(in.dy, f, s.cols), dx.data_ptr<float>());
         return std::vector<Output>{{"dx", dx, s.cols}};
       }},
      {"topk_mask",
       [](K k, const Inputs& in, GridShape s, std::uint32_t f, std::uint32_t c, int& st) {
         at::Tensor mask = outBuffer(in, std::size_t{c} * s.cols);
         const std::uint32_t kk = s.cols < 8 ? s.cols : 8;
         st = k.topk_mask(nullptr, c, s.cols, kk, rowsOf(in.x, f, s.cols),
                          mask.data_ptr<float>());
         return std::vector<Output>{{"mask", mask, s.cols}};
       }},
      {"layer_norm_fwd",
       [](K k, const Inputs& in, GridShape s, std::uint32_t f, std::uint32_t c, int& st) {
         at::Tensor y = outBuffer(in, std::size_t{c} * s.cols),
                    xhat = outBuffer(in, std::size_t{c} * s.cols), inv = outBuffer(in, c);
         st = k.layer_norm_fwd(nullptr, c, s.cols, 1e-5f, rowsOf(in.x, f, s.cols),
                               in.colParam.data_ptr<float>(), in.colShift.data_ptr<float>(),
                               y.data_ptr<float>(), xhat.data_ptr<float>(), inv.data_ptr<float>());
         return std::vector<Output>{{"y", y, s.cols}, {"xhat", xhat, s.cols}, {"inv_std", inv, 1}};
       }},
      {"layer_norm_bwd",
       [](K k, const Inputs& in, GridShape s, std::uint32_t f, std::uint32_t c, int& st) {
         at::Tensor dx = outBuffer(in, std::size_t{c} * s.cols), dg = outBuffer(in, s.cols),
                    db = outBuffer(in, s.cols);
         st = k.layer_norm_bwd(nullptr, c, s.cols, rowsOf(in.dy, f, s.cols),
                               rowsOf(in.xhat, f, s.cols), rowsOf(in.rowInvStd, f, 1),
                               in.colParam.data_ptr<float>(), dx.data_ptr<float>(),
                               dg.data_ptr<float>(), db.data_ptr<float>());
         return std::vector<Output>{{"dx", dx, s.cols}, {"dgamma", dg, 0}, {"dbeta", db, 0}};
       }},
      {"batch_norm_fwd",
       [](K k, const Inputs& in, GridShape s, std::uint32_t f, std::uint32_t c, int& st) {
         at::Tensor y = outBuffer(in, std::size_t{c} * s.cols),
                    xhat = outBuffer(in, std::size_t{c} * s.cols), inv = outBuffer(in, c);
         st = k.batch_norm_fwd(nullptr, c, s.cols, 1e-5f, rowsOf(in.x, f, s.cols),
                               rowsOf(in.rowParam, f, 1), rowsOf(in.rowShift, f, 1),
                               y.data_ptr<float>(), xhat.data_ptr<float>(), inv.data_ptr<float>());
         return std::vector<Output>{{"y", y, s.cols}, {"xhat", xhat, s.cols}, {"inv_std", inv, 1}};
       }},
      {"batch_norm_bwd",
       [](K k, const Inputs& in, GridShape s, std::uint32_t f, std::uint32_t c, int& st) {
         at::Tensor dx = outBuffer(in, std::size_t{c} * s.cols), dg = outBuffer(in, c), db = outBuffer(in, c);
         st = k.batch_norm_bwd(nullptr, c, s.cols, rowsOf(in.dy, f, s.cols),
                               rowsOf(in.xhat, f, s.cols), rowsOf(in.rowInvStd, f, 1),
                               rowsOf(in.rowParam, f, 1), dx.data_ptr<float>(),
                               dg.data_ptr<float>(), db.data_ptr<float>());
         return std::vector<Output>{{"dx", dx, s.cols}, {"dgamma", dg, 1}, {"dbeta", db, 1}};
       }},
      {"cross_entropy_fwd",
       [](K k, const Inputs& in, GridShape s, std::uint32_t f, std::uint32_t c, int& st) {
         at::Tensor loss = outBuffer(in, 1), logp = outBuffer(in, std::size_t{c} * s.cols);
         st = k.cross_entropy_fwd(nullptr, c, s.cols, 1, 1, rowsOf(in.x, f, s.cols),
                                  rowsOf(in.target, f, s.cols), loss.data_ptr<float>(),
                                  logp.data_ptr<float>());
         return std::vector<Output>{{"loss", loss, 0}, {"logp", logp, s.cols}};
       }},
      {"cross_entropy_bwd",
       // mean = 0: with mean = 1 the gradient is scaled by 1 / rows, which differs for a sub-range.
       [](K k, const Inputs& in, GridShape s, std::uint32_t f, std::uint32_t c, int& st) {
         at::Tensor dl = outBuffer(in, std::size_t{c} * s.cols), dt = outBuffer(in, std::size_t{c} * s.cols);
         st = k.cross_entropy_bwd(nullptr, c, s.cols, 1, 0, in.dloss.data_ptr<float>(),
                                  rowsOf(in.logp, f, s.cols), rowsOf(in.target, f, s.cols),
                                  dl.data_ptr<float>(), dt.data_ptr<float>());
         return std::vector<Output>{{"dlogits", dl, s.cols}, {"dtarget", dt, s.cols}};
       }},
  };
  return e;
}

// Bitwise comparison (NaN payloads included); the first difference, or "" when identical.
std::string firstDifference(const std::vector<float>& a, const std::vector<float>& b,
                            std::size_t offsetInA) {
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (std::memcmp(&a[offsetInA + i], &b[i], sizeof(float)) != 0)
      return "element " + std::to_string(offsetInA + i) + ": " + std::to_string(a[offsetInA + i]) +
             " vs " + std::to_string(b[i]);
  }
  return "";
}

std::string label(const Entry& e, GridShape s) {
  return std::string(e.name) + " [" + std::to_string(s.rows) + "," + std::to_string(s.cols) + "]";
}

}  // namespace

TEST_CASE("On a GPU, the cuda kernels repeat bit for bit", "[gpu]") {
  auto kernels = cudaKernelsOrSkip();
  if (!kernels) return;
  const tapecheck_kernels_v1& k = *kernels->table;
  for (const GridShape& s : shapes()) {
    const Inputs in(s);
    for (const Entry& e : entries()) {
      int st = 0;
      const std::vector<Output> first = e.call(k, in, s, 0, s.rows, st);
      REQUIRE(st == 0);
      for (int repeat = 0; repeat < 2; ++repeat) {
        const std::vector<Output> again = e.call(k, in, s, 0, s.rows, st);
        REQUIRE(st == 0);
        for (std::size_t o = 0; o < first.size(); ++o) {
          INFO(label(e, s) << " output " << first[o].name << " repeat " << repeat + 1);
          REQUIRE(firstDifference(toHost(first[o].values), toHost(again[o].values), 0) == "");
        }
      }
    }
  }
}

TEST_CASE("On a GPU, a row's result does not depend on the rows beside it", "[gpu]") {
  auto kernels = cudaKernelsOrSkip();
  if (!kernels) return;
  const tapecheck_kernels_v1& k = *kernels->table;
  for (const GridShape& s : shapes()) {
    const Inputs in(s);
    // A middle range, and the last row alone (one row: the plan for few rows).
    const std::uint32_t a = s.rows / 3;
    const std::uint32_t count = s.rows > 2 ? s.rows / 2 : 1;
    const std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges = {{a, count},
                                                                         {s.rows - 1, 1}};
    for (const Entry& e : entries()) {
      int st = 0;
      const std::vector<Output> whole = e.call(k, in, s, 0, s.rows, st);
      REQUIRE(st == 0);
      for (const auto& [first, n] : ranges) {
        const std::vector<Output> part = e.call(k, in, s, first, n, st);
        REQUIRE(st == 0);
        for (std::size_t o = 0; o < whole.size(); ++o) {
          if (whole[o].perRow == 0) continue;
          INFO(label(e, s) << " output " << whole[o].name << ": rows [" << first << ", "
                           << first + n << ") alone vs within all rows");
          const std::vector<float> all = toHost(whole[o].values);
          const std::vector<float> sub = toHost(part[o].values);
          REQUIRE(sub.size() == std::size_t{n} * whole[o].perRow);
          REQUIRE(firstDifference(all, sub, std::size_t{first} * whole[o].perRow) == "");
        }
      }
    }
  }
}

// The tape may be driven from several host threads (`tapecheck run --jobs`); the kernels' only
// process-wide state is CUDA's per-kernel attributes. Every entry point is called concurrently
// from 8 threads on shapes that reach the large-shared-memory tiles (wide rows whose width is
// not a multiple of 4), and each result must equal the one computed alone.
TEST_CASE("On a GPU, the cuda kernels give the same bits when called from many threads", "[gpu]") {
  auto kernels = cudaKernelsOrSkip();
  if (!kernels) return;
  const tapecheck_kernels_v1& k = *kernels->table;
  const std::vector<GridShape> wide = {{2, 3759}, {3, 4095}, {5, 3073}, {2, 2049}, {4, 8192}, {3, 6001}};
  std::vector<Inputs> inputs;
  std::vector<std::vector<std::vector<float>>> alone;  // [shape * entries + entry][output]
  for (const GridShape& s : wide) inputs.emplace_back(s);
  for (std::size_t si = 0; si < wide.size(); ++si)
    for (const Entry& e : entries()) {
      int st = 0;
      std::vector<std::vector<float>> outs;
      for (const Output& o : e.call(k, inputs[si], wide[si], 0, wide[si].rows, st))
        outs.push_back(toHost(o.values));
      REQUIRE(st == 0);
      alone.push_back(std::move(outs));
    }
  std::atomic<int> failures{0};
  std::vector<std::string> problems(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round)
        for (std::size_t si = 0; si < wide.size(); ++si) {
          const std::size_t shape = (si + static_cast<std::size_t>(t)) % wide.size();
          for (std::size_t ei = 0; ei < entries().size(); ++ei) {
            int st = 0;
            const auto outs = entries()[ei].call(k, inputs[shape], wide[shape], 0,
                                                 wide[shape].rows, st);
            const auto& expected = alone[shape * entries().size() + ei];
            bool same = st == 0 && outs.size() == expected.size();
            for (std::size_t o = 0; same && o < outs.size(); ++o)
              same = firstDifference(toHost(outs[o].values), expected[o], 0).empty();
            if (!same && failures++ == 0)
              problems[static_cast<std::size_t>(t)] =
                  label(entries()[ei], wide[shape]) + " status " + std::to_string(st);
          }
        }
    });
  for (std::thread& th : threads) th.join();
  std::string first;
  for (const std::string& p : problems) if (!p.empty()) first = p;
  INFO("first difference: " << first);
  REQUIRE(failures.load() == 0);
}

// The kernels take their 16-byte paths (vector loads and stores, the cluster kernels' rows
// staged in shared memory, the L2 prefetch) only when every pointer is 16-byte aligned; one
// float off, the same units are loaded as scalars and go through the same arithmetic in the
// same order. So the two must agree bit for bit. The shapes are the widths of the cluster
// kernels with more than three times as many rows as clusters, so that every cluster takes at
// least three rows and reuses its row-parity slots and its stage (row_cluster.cuh,
// cluster_count: at most 2112 clusters at 16K and 32K columns, 1056 at 64K), and a width of
// 16-byte units that leaves the last block of each cluster part of a run (40004 columns:
// clusters of 5 blocks, 844 or 1689 of them by tile).
TEST_CASE("On a GPU, the cuda kernels give the same bits from misaligned buffers", "[gpu]") {
  auto kernels = cudaKernelsOrSkip();
  if (!kernels) return;
  const tapecheck_kernels_v1& k = *kernels->table;
  const std::vector<GridShape> clusterWidths = {
      {6337, 16384}, {6337, 32768}, {3169, 65536}, {2600, 40004}};
  for (const GridShape& s : clusterWidths) {
    const Inputs aligned(s);
    const Inputs offByOne(aligned, 1);
    REQUIRE(reinterpret_cast<std::uintptr_t>(offByOne.x.data_ptr<float>()) % 16 != 0);
    for (const Entry& e : entries()) {
      int st = 0;
      const std::vector<Output> a = e.call(k, aligned, s, 0, s.rows, st);
      REQUIRE(st == 0);
      const std::vector<Output> b = e.call(k, offByOne, s, 0, s.rows, st);
      REQUIRE(st == 0);
      for (std::size_t o = 0; o < a.size(); ++o) {
        INFO(label(e, s) << " output " << a[o].name << ": aligned vs one float off");
        const bool same = at::equal(a[o].values.view(at::kInt), b[o].values.view(at::kInt));
        if (!same) REQUIRE(firstDifference(toHost(a[o].values), toHost(b[o].values), 0) == "");
        REQUIRE(same);
      }
    }
  }
}
