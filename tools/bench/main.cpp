// tapecheck-bench: effective bandwidth of the `cuda` and `aten` kernel tables on a CUDA device,
// next to a device-to-device copy of the same number of bytes and a streaming kernel of the
// op's read/write mix (README.md in this folder).
//
// Exit status: 0 = benchmarked; 2 = usage error, no GPU, or a kernel / CUDA failure (the reason
// on stderr, no JSON written).
#include <ATen/Context.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#if __has_include(<torch/version.h>)
#include <torch/version.h>
#endif

#include "args.h"
#include "fill.h"
#include "native_aten.h"
#include "ops.h"
#include "stream_mix.h"
#include "tapecheck/device/kernel_table.h"
#include "tapecheck/result.h"

namespace tapecheck::bench {
namespace {

using cli::kExitPassed;
using cli::kExitUsage;

const char* kUsage =
    "usage: tapecheck-bench [--ops LIST] [--cols LIST] [--k LIST] [--elements N]\n"
    "                       [--repeats N] [--warmup N] [--json FILE] [--quick]\n"
    "\n"
    "Times every kernel ABI entry point of the `cuda` table and the `aten` table on the first\n"
    "CUDA device, PyTorch's own operator for it (\"native\"), a cudaMemcpyAsync moving the\n"
    "same bytes, and a streaming kernel reading and writing as many floats an element as the\n"
    "op (\"mix\"); prints effective GB/s.\n"
    "\n"
    "  --ops LIST       entry points or families, comma-separated (default all): softmax_fwd,\n"
    "                   softmax_bwd, log_softmax_fwd, log_softmax_bwd, topk_mask, layer_norm_fwd,\n"
    "                   layer_norm_bwd, batch_norm_fwd, batch_norm_bwd, cross_entropy_fwd,\n"
    "                   cross_entropy_bwd; families softmax, log_softmax, layer_norm,\n"
    "                   batch_norm, cross_entropy\n"
    "  --cols LIST      default 32,128,512,1024,2048,4096,8192,16384,32768,65536; rows = elements/cols\n"
    "  --k LIST         topk_mask's k, default 1,8,64 (k > cols is skipped)\n"
    "  --elements N     elements per tensor, N or 2^E (default 2^28: 1 GiB per float buffer)\n"
    "  --repeats N      timed calls per figure, the median is reported (default 20)\n"
    "  --warmup N       untimed calls before them (default 3)\n"
    "  --json FILE      also write the results as JSON\n"
    "  --quick          smoke run: cols 32,1024, elements 2^20, 3 repeats, 1 warm-up\n"
    "                   (explicit options still win; the figures are L2-resident, not HBM)\n"
    "\n"
    "exit status: 0 done, 2 usage error, no GPU, or a kernel/CUDA failure\n";

const std::vector<std::uint64_t> kDefaultCols = {32,   128,  512,   1024,  2048,
                                                 4096, 8192, 16384, 32768, 65536};
const std::vector<std::uint64_t> kDefaultK = {1, 8, 64};

struct Options {
  std::vector<const BenchKernel*> ops;
  std::vector<std::uint64_t> cols;
  std::vector<std::uint64_t> ks;
  std::uint64_t elements = std::uint64_t{1} << 28;
  std::uint64_t repeats = 20;
  std::uint64_t warmup = 3;
  std::optional<std::string> json;
  bool help = false;
};

std::string cudaText(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

Status cudaCheck(cudaError_t e, const std::string& what) {
  if (e == cudaSuccess) return okStatus();
  return Error{what + " failed (" + cudaText(e) + ")"};
}

// ---- options ------------------------------------------------------------------------------

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// N in decimal, or 2^E.
Result<std::uint64_t> parseCount(const std::string& option, const std::string& text) {
  if (text.rfind("2^", 0) == 0) {
    TAPECHECK_TRY(e, cli::parseUnsigned(option, text.substr(2)));
    if (e > 62) return Error{"option " + option + ": exponent too large in '" + text + "'"};
    return std::uint64_t{1} << e;
  }
  return cli::parseUnsigned(option, text);
}

Result<std::vector<std::uint64_t>> parseCountList(const std::string& option,
                                                  const std::string& text) {
  std::vector<std::uint64_t> out;
  for (const std::string& item : splitList(text)) {
    TAPECHECK_TRY(v, parseCount(option, item));
    if (v == 0) return Error{"option " + option + ": values must be > 0"};
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  if (out.empty()) return Error{"option " + option + " needs a non-empty list"};
  return out;
}

Result<std::vector<const BenchKernel*>> parseOps(const std::string& text) {
  std::vector<bool> chosen(allKernels().size(), false);
  for (const std::string& item : splitList(text)) {
    bool matched = false;
    for (std::size_t i = 0; i < allKernels().size(); ++i) {
      const BenchKernel& info = allKernels()[i];
      if (item == "all" || item == info.name || item == info.family) {
        chosen[i] = true;
        matched = true;
      }
    }
    if (!matched) return Error{"option --ops: unknown op '" + item + "'"};
  }
  std::vector<const BenchKernel*> out;
  for (std::size_t i = 0; i < allKernels().size(); ++i)
    if (chosen[i]) out.push_back(&allKernels()[i]);
  if (out.empty()) return Error{"option --ops needs a non-empty list"};
  return out;
}

Result<Options> parseOptions(const std::vector<std::string>& words) {
  cli::ArgSpec spec;
  spec.valueOptions = {"--ops", "--cols", "--k", "--elements", "--repeats", "--warmup", "--json"};
  spec.flagOptions = {"--quick", "--help", "-h"};
  TAPECHECK_TRY(args, cli::parseArgs(words, spec));
  if (!args.positional.empty())
    return Error{"unexpected argument '" + args.positional.front() + "'"};

  Options o;
  o.help = args.has("--help") || args.has("-h");
  o.cols = kDefaultCols;
  o.ks = kDefaultK;
  if (args.has("--quick")) {
    o.cols = {32, 1024};
    o.elements = std::uint64_t{1} << 20;
    o.repeats = 3;
    o.warmup = 1;
  }
  TAPECHECK_TRY(ops, parseOps(args.get("--ops").value_or("all")));
  o.ops = std::move(ops);
  if (auto t = args.get("--cols")) {
    TAPECHECK_TRY(v, parseCountList("--cols", *t));
    o.cols = std::move(v);
  }
  if (auto t = args.get("--k")) {
    TAPECHECK_TRY(v, parseCountList("--k", *t));
    o.ks = std::move(v);
  }
  if (auto t = args.get("--elements")) {
    TAPECHECK_TRY(v, parseCount("--elements", *t));
    o.elements = v;
  }
  if (auto t = args.get("--repeats")) {
    TAPECHECK_TRY(v, cli::parseUnsigned("--repeats", *t));
    o.repeats = v;
  }
  if (auto t = args.get("--warmup")) {
    TAPECHECK_TRY(v, cli::parseUnsigned("--warmup", *t));
    o.warmup = v;
  }
  o.json = args.get("--json");

  if (o.elements == 0) return Error{"option --elements must be > 0"};
  if (o.repeats == 0 || o.repeats > 100000) return Error{"option --repeats must be in 1..100000"};
  if (o.warmup > 100000) return Error{"option --warmup must be <= 100000"};
  for (std::uint64_t c : o.cols) {
    if (o.elements % c != 0)
      return Error{"cols " + std::to_string(c) + " does not divide --elements " +
                   std::to_string(o.elements)};
    if (c > UINT32_MAX || o.elements / c > UINT32_MAX)
      return Error{"cols " + std::to_string(c) + ": rows or cols exceed the ABI's uint32"};
  }
  for (std::uint64_t k : o.ks)
    if (k > UINT32_MAX) return Error{"option --k: " + std::to_string(k) + " exceeds uint32"};
  return o;
}

// ---- CUDA resources -----------------------------------------------------------------------

struct CudaFree {
  void operator()(void* p) const { cudaFree(p); }
};
using DeviceMemory = std::unique_ptr<void, CudaFree>;

struct EventDestroy {
  void operator()(cudaEvent_t e) const { cudaEventDestroy(e); }
};
using Event = std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, EventDestroy>;

Result<DeviceMemory> allocate(std::size_t bytes, const std::string& what) {
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess)
    return Error{"cudaMalloc of " + std::to_string(bytes) + " bytes for " + what + " failed (" +
                 cudaText(e) + ")"};
  return DeviceMemory(p);
}

// ---- timing -------------------------------------------------------------------------------

struct Timer {
  cudaStream_t stream;
  cudaEvent_t start;
  cudaEvent_t stop;
  std::uint64_t warmup;
  std::uint64_t repeats;

  // Median over `repeats` of the event-timed duration of one `launch`, in milliseconds.
  Result<double> medianMs(const std::function<Status()>& launch) const {
    for (std::uint64_t i = 0; i < warmup; ++i) TAPECHECK_TRY_STATUS(launch());
    TAPECHECK_TRY_STATUS(cudaCheck(cudaStreamSynchronize(stream), "warm-up"));
    std::vector<double> ms;
    ms.reserve(repeats);
    for (std::uint64_t i = 0; i < repeats; ++i) {
      TAPECHECK_TRY_STATUS(cudaCheck(cudaEventRecord(start, stream), "cudaEventRecord"));
      TAPECHECK_TRY_STATUS(launch());
      TAPECHECK_TRY_STATUS(cudaCheck(cudaEventRecord(stop, stream), "cudaEventRecord"));
      TAPECHECK_TRY_STATUS(cudaCheck(cudaEventSynchronize(stop), "the timed call"));
      float t = 0.0f;
      TAPECHECK_TRY_STATUS(
          cudaCheck(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime"));
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const std::size_t m = ms.size() / 2;
    return ms.size() % 2 ? ms[m] : 0.5 * (ms[m - 1] + ms[m]);
  }
};

double gbps(std::uint64_t bytes, double ms) { return static_cast<double>(bytes) / (ms * 1e6); }

// ---- report -------------------------------------------------------------------------------

struct Row {
  const BenchKernel* op;
  Shape shape;
  std::optional<double> ours, aten, copy;  // GB/s
  std::optional<double> mix;               // GB/s of the op's read/write mix (stream_mix.h)
  std::optional<double> native;            // GB/s of ATen's own operator (native_aten.h)
  std::string nativeWhat;                  // which operator that is
};

std::optional<double> ratio(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b || *b <= 0.0) return std::nullopt;
  return *a / *b;
}

nlohmann::json orNull(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// "2 read : 1 written", for messages.
std::string mixName(const BenchKernel& op) {
  return std::to_string(op.floatsRead) + " read : " + std::to_string(op.floatsWritten) +
         " written";
}

std::string cell(const std::optional<double>& v, const char* format) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, *v);
  return buf;
}

void printHeader() {
  std::printf("%-18s %6s %10s %3s %10s %10s %10s %10s %10s %9s %9s %9s %11s\n", "op", "cols",
              "rows", "k", "ours GB/s", "aten GB/s", "native GB/s", "copy GB/s", "mix GB/s",
              "ours/copy", "ours/mix", "ours/aten", "ours/native");
  std::fflush(stdout);
}

void printRow(const Row& r) {
  const std::string k = r.op->takesK ? std::to_string(r.shape.k) : "-";
  std::printf("%-18s %6u %10u %3s %10s %10s %11s %10s %10s %9s %9s %9s %11s\n", r.op->name,
              r.shape.cols, r.shape.rows, k.c_str(), cell(r.ours, "%.1f").c_str(),
              cell(r.aten, "%.1f").c_str(), cell(r.native, "%.1f").c_str(),
              cell(r.copy, "%.1f").c_str(), cell(r.mix, "%.1f").c_str(),
              cell(ratio(r.ours, r.copy), "%.3f").c_str(),
              cell(ratio(r.ours, r.mix), "%.3f").c_str(),
              cell(ratio(r.ours, r.aten), "%.3f").c_str(),
              cell(ratio(r.ours, r.native), "%.3f").c_str());
  std::fflush(stdout);
}

nlohmann::json rowJson(const Row& r) {
  nlohmann::json j;
  j["op"] = r.op->name;
  j["cols"] = r.shape.cols;
  j["rows"] = r.shape.rows;
  j["k"] = r.op->takesK ? nlohmann::json(r.shape.k) : nlohmann::json(nullptr);
  j["gbps_ours"] = orNull(r.ours);
  j["gbps_aten"] = orNull(r.aten);
  j["gbps_copy"] = orNull(r.copy);
  j["ours_over_copy"] = orNull(ratio(r.ours, r.copy));
  j["ours_over_aten"] = orNull(ratio(r.ours, r.aten));
  // PyTorch's own operator, the same bytes counted.
  j["aten_native_op"] = r.nativeWhat.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.nativeWhat);
  j["gbps_aten_native"] = orNull(r.native);
  j["ours_over_aten_native"] = orNull(ratio(r.ours, r.native));
  // The streaming kernel of the op's read/write mix, the same bytes counted.
  j["gbps_stream_mix"] = orNull(r.mix);
  j["ours_over_stream_mix"] = orNull(ratio(r.ours, r.mix));
  return j;
}

std::string versionText(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string libtorchVersion() {
#ifdef TORCH_VERSION
  return TORCH_VERSION;
#else
  return "unknown";
#endif
}

// ---- the run ------------------------------------------------------------------------------

struct LoadedTable {
  std::string spec;
  std::optional<device::KernelTable> table;  // absent: failed to load, see `error`
  std::string error;
};

LoadedTable load(const std::string& spec) {
  LoadedTable out{spec, std::nullopt, {}};
  auto r = device::loadKernelTable(spec, device::DeviceKind::Cuda);
  if (!r) {
    out.error = r.message();
  } else if (r.value().table == nullptr || r.value().table->memory != 1) {
    out.error = "not a CUDA device-memory table";
  } else {
    out.table = std::move(r).value();
  }
  return out;
}

nlohmann::json tableJson(const LoadedTable& t) {
  nlohmann::json j;
  j["spec"] = t.spec;
  if (t.table) {
    j["name"] = t.table->table->name ? t.table->table->name : "";
    j["version"] = t.table->table->version ? t.table->table->version : "";
  } else {
    j["error"] = t.error;
  }
  return j;
}

int run(const Options& o) {
  // A GPU first: nothing else means anything without one.
  int deviceCount = 0;
  if (cudaError_t e = cudaGetDeviceCount(&deviceCount); e != cudaSuccess || deviceCount == 0) {
    std::cerr << "tapecheck-bench: no CUDA GPU is visible"
              << (e != cudaSuccess ? " (" + cudaText(e) + ")" : std::string()) << "\n";
    return kExitUsage;
  }
  auto fail = [](const std::string& message) {
    std::cerr << "tapecheck-bench: " << message << "\n";
    return kExitUsage;
  };
  if (auto st = cudaCheck(cudaSetDevice(0), "cudaSetDevice(0)"); !st) return fail(st.message());
  cudaDeviceProp props{};
  int driver = 0, runtime = 0;
  if (auto st = cudaCheck(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties"); !st)
    return fail(st.message());
  if (auto st = cudaCheck(cudaDriverGetVersion(&driver), "cudaDriverGetVersion"); !st)
    return fail(st.message());
  if (auto st = cudaCheck(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion"); !st)
    return fail(st.message());

  // The tables: one that fails to load leaves its figures null.
  const LoadedTable ours = load("cuda");
  const LoadedTable aten = load("aten");
  std::printf("GPU %s (sm_%d%d, %.1f GiB), driver %s, runtime %s, LibTorch %s\n", props.name,
              props.major, props.minor,
              static_cast<double>(props.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0),
              versionText(driver).c_str(), versionText(runtime).c_str(),
              libtorchVersion().c_str());
  for (const LoadedTable* t : {&ours, &aten}) {
    if (t->table)
      std::printf("table %-4s: %s %s\n", t->spec.c_str(), t->table->table->name,
                  t->table->table->version);
    else
      std::fprintf(stderr, "tapecheck-bench: table %s not loaded, its figures are null: %s\n",
                   t->spec.c_str(), t->error.c_str());
  }
  if (!ours.table && !aten.table) return fail("neither the cuda nor the aten table loaded");
  // ATen's own operators need LibTorch built with CUDA (the aten table does too).
  const bool nativeAvailable = at::hasCUDA();
  if (!nativeAvailable)
    std::fprintf(stderr, "tapecheck-bench: LibTorch has no CUDA: ATen's own operators not timed\n");
  if (o.json) {  // fail now rather than after the run
    std::ofstream probe(*o.json, std::ios::app);
    if (!probe) return fail("cannot write " + *o.json);
  }

  // Memory: four [elements] buffers in one allocation (the copy uses it as two halves of
  // 2 x elements floats), and the per-row / per-column vectors in another.
  const std::size_t n = o.elements;
  std::size_t small = 0;
  for (std::uint64_t c : o.cols) small = std::max<std::size_t>({small, c, n / c});
  small = (small + 63) / 64 * 64;  // keep each vector 256-byte aligned
  auto bigMemory = allocate(4 * n * sizeof(float), "the tensors");
  if (!bigMemory) return fail(bigMemory.message());
  auto smallMemory = allocate((5 * small + 64) * sizeof(float), "the per-row vectors");
  if (!smallMemory) return fail(smallMemory.message());
  DeviceBuffers buffers;
  float* base = static_cast<float*>(bigMemory.value().get());
  for (std::size_t i = 0; i < 4; ++i) buffers.big[i] = base + i * n;
  buffers.bigCount = n;
  float* s = static_cast<float*>(smallMemory.value().get());
  buffers.gamma = s;
  buffers.beta = s + small;
  buffers.invStd = s + 2 * small;
  buffers.dgamma = s + 3 * small;
  buffers.dbeta = s + 4 * small;
  buffers.loss = s + 5 * small;
  buffers.dloss = s + 5 * small + 32;
  buffers.smallCount = small;

  // The legacy default stream, as the tape passes it (nullptr): the `aten` table ignores its
  // stream argument and runs on LibTorch's current stream, which is that one.
  cudaStream_t const stream = nullptr;
  cudaEvent_t rawStart = nullptr, rawStop = nullptr;
  if (auto st = cudaCheck(cudaEventCreate(&rawStart), "cudaEventCreate"); !st)
    return fail(st.message());
  Event start(rawStart);
  if (auto st = cudaCheck(cudaEventCreate(&rawStop), "cudaEventCreate"); !st)
    return fail(st.message());
  Event stop(rawStop);
  const Timer timer{stream, start.get(), stop.get(), o.warmup, o.repeats};

  std::map<std::uint64_t, double> copyGbpsByBytes;  // the copy depends only on the byte count
  std::map<std::pair<unsigned, unsigned>, double> mixGbps;  // by (floats read, floats written)
  std::vector<Row> rows;
  printHeader();
  for (const BenchKernel* op : o.ops) {
    for (std::uint64_t cols : o.cols) {
      const std::vector<std::uint64_t> ks = op->takesK ? o.ks : std::vector<std::uint64_t>{0};
      for (std::uint64_t k : ks) {
        if (op->takesK && k > cols) continue;  // not a valid call
        Shape shape;
        shape.rows = static_cast<std::uint32_t>(n / cols);
        shape.cols = static_cast<std::uint32_t>(cols);
        shape.k = static_cast<std::uint32_t>(k);
        const std::string where = std::string(op->name) + " rows=" + std::to_string(shape.rows) +
                                  " cols=" + std::to_string(shape.cols) +
                                  (op->takesK ? " k=" + std::to_string(k) : std::string());
        if (auto st = cudaCheck(fillInputs(op->op, shape, buffers, stream),
                                "filling the inputs of " + where);
            !st)
          return fail(st.message());
        if (auto st = cudaCheck(cudaStreamSynchronize(stream),
                                "filling the inputs of " + where);
            !st)
          return fail(st.message());

        const std::uint64_t bytes = std::uint64_t{op->bytesPerElement()} * shape.elements();
        Row row{op,           shape,        std::nullopt, std::nullopt,
                std::nullopt, std::nullopt, std::nullopt, {}};
        for (const LoadedTable* t : {&ours, &aten}) {
          if (!t->table) continue;
          const tapecheck_kernels_v1& table = *t->table->table;
          auto ms = timer.medianMs([&]() -> Status {
            const int rc = callKernel(table, op->op, shape, buffers, stream);
            if (rc != 0) return Error{"returned " + std::to_string(rc)};
            return cudaCheck(cudaGetLastError(), "the launch");
          });
          if (!ms) return fail("table " + t->spec + ", " + where + ": " + ms.message());
          (t == &ours ? row.ours : row.aten) = gbps(bytes, ms.value());
        }

        if (nativeAvailable) {
          std::optional<NativeCall> native;
          try {
            native = prepareNativeAten(op->op, shape, buffers);
          } catch (const std::exception& e) {
            return fail("ATen's own operator, " + where + ": " + e.what());
          }
          if (native) {
            auto ms = timer.medianMs([&]() -> Status {
              try {
                native->launch();
              } catch (const std::exception& e) {
                return Error{std::string(e.what())};
              }
              return cudaCheck(cudaGetLastError(), "the launch");
            });
            if (!ms) return fail(native->what + ", " + where + ": " + ms.message());
            row.native = gbps(bytes, ms.value());
            row.nativeWhat = native->what;
          }
        }

        auto cached = copyGbpsByBytes.find(bytes);
        if (cached == copyGbpsByBytes.end()) {
          // bytes/2 read plus bytes/2 written: copy bytes/2 from the first half of the four
          // buffers to the second (at most 2 x elements floats each).
          const std::size_t half = bytes / 2;
          float* src = buffers.big[0];
          float* dst = buffers.big[2];
          auto ms = timer.medianMs([&]() -> Status {
            return cudaCheck(
                cudaMemcpyAsync(dst, src, half, cudaMemcpyDeviceToDevice, stream),
                "cudaMemcpyAsync");
          });
          if (!ms) return fail("copy of " + std::to_string(half) + " bytes: " + ms.message());
          cached = copyGbpsByBytes.emplace(bytes, gbps(bytes, ms.value())).first;
        }
        row.copy = cached->second;

        // The mix depends only on its reads, writes and the element count (every shape of a
        // run has o.elements): inputs in big[0..reads), outputs after them.
        const auto mixKey = std::make_pair(op->floatsRead, op->floatsWritten);
        auto mixed = mixGbps.find(mixKey);
        if (mixed == mixGbps.end()) {
          if (op->floatsRead > kMaxMixReads || op->floatsWritten > kMaxMixWrites)
            return fail("no stream kernel for " + mixName(*op));
          const unsigned r = op->floatsRead;
          const float* in[kMaxMixReads] = {buffers.big[0], buffers.big[1]};
          float* out[kMaxMixWrites] = {buffers.big[r], buffers.big[r + 1]};
          const std::size_t count = shape.elements();
          auto ms = timer.medianMs([&]() -> Status {
            return cudaCheck(launchStreamMix(stream, in, r, out, op->floatsWritten, count),
                             "the stream mix kernel");
          });
          if (!ms) return fail("stream of " + mixName(*op) + ": " + ms.message());
          mixed = mixGbps.emplace(mixKey, gbps(bytes, ms.value())).first;
        }
        row.mix = mixed->second;
        printRow(row);
        rows.push_back(row);
      }
    }
  }
  if (auto st = cudaCheck(cudaDeviceSynchronize(), "the final synchronization"); !st)
    return fail(st.message());

  if (o.json) {
    nlohmann::json doc;
    doc["tool"] = "tapecheck-bench";
    doc["gpu"] = props.name;
    doc["compute_capability"] = std::to_string(props.major) + "." + std::to_string(props.minor);
    doc["driver_version"] = versionText(driver);
    doc["cuda_runtime_version"] = versionText(runtime);
    doc["libtorch_version"] = libtorchVersion();
    doc["date"] = utcNow();
    doc["elements"] = o.elements;
    doc["repeats"] = o.repeats;
    doc["warmup"] = o.warmup;
    doc["tables"] = {{"ours", tableJson(ours)}, {"aten", tableJson(aten)}};
    nlohmann::json bytesPerElement = nlohmann::json::object();
    nlohmann::json mixes = nlohmann::json::object();
    for (const BenchKernel* op : o.ops) {
      bytesPerElement[op->name] = op->bytesPerElement();
      mixes[op->name] = {{"floats_read", op->floatsRead}, {"floats_written", op->floatsWritten}};
    }
    doc["bytes_per_element"] = bytesPerElement;
    doc["stream_mix"] = mixes;
    doc["rows"] = nlohmann::json::array();
    for (const Row& r : rows) doc["rows"].push_back(rowJson(r));
    std::ofstream out(*o.json, std::ios::trunc);
    out << doc.dump(2) << "\n";
    out.close();
    if (!out) return fail("cannot write " + *o.json);
  }
  return kExitPassed;
}

}  // namespace
}  // namespace tapecheck::bench

int main(int argc, char** argv) {
  using namespace tapecheck::bench;
  const std::vector<std::string> words(argv + 1, argv + argc);
  try {
    auto options = parseOptions(words);
    if (!options) {
      std::cerr << "tapecheck-bench: " << options.message() << "\n" << kUsage;
      return kExitUsage;
    }
    if (options.value().help) {
      std::cout << kUsage;
      return kExitPassed;
    }
    return run(options.value());
  } catch (const std::exception& e) {
    // Every expected failure is a Result; reaching here is a bug, but still not an abort.
    std::cerr << "tapecheck-bench: internal error: " << e.what() << "\n";
    return kExitUsage;
  }
}
