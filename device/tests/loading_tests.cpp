// Resolving kernel tables: the built-in `aten` table, the correct host plugin, every rejection,
// `cuda` without a GPU, and what the backend does with a failing or throwing kernel.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <tuple>

#include <unistd.h>

#include "support.h"
#include "tapecheck/device/plugin_gallery.h"

using namespace tapecheck;
using namespace tapecheck::device;
using namespace tapecheck::device::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

TEST_CASE("Devices parse, print and default", "[loading]") {
  REQUIRE(parseDevice("cpu"));
  CHECK(parseDevice("cpu").value() == DeviceKind::Cpu);
  REQUIRE(parseDevice("cuda"));
  CHECK(parseDevice("cuda").value() == DeviceKind::Cuda);
  auto bad = parseDevice("gpu");
  REQUIRE_FALSE(bad);
  CHECK(bad.message() == "tapecheck: unknown device 'gpu' (expected cpu or cuda)");
  CHECK(std::string(deviceName(DeviceKind::Cpu)) == "cpu");
  CHECK(std::string(deviceName(DeviceKind::Cuda)) == "cuda");
  CHECK(defaultKernels(DeviceKind::Cpu) == "aten");
  CHECK(defaultKernels(DeviceKind::Cuda) == "cuda");
  CHECK(defaultDevice() == (gpuVisible() ? DeviceKind::Cuda : DeviceKind::Cpu));
  CHECK_THAT(describeDevice(DeviceKind::Cpu), StartsWith("cpu (LibTorch "));
  if (!gpuVisible()) CHECK_THAT(describeDevice(DeviceKind::Cuda), Contains("no GPU visible"));
}

TEST_CASE("The aten table and the host reference plugin load and describe themselves",
          "[loading]") {
  const KernelTable& aten = atenCpu();
  REQUIRE(aten.table);
  CHECK(aten.table->abi_version == 1u);
  CHECK(std::string(aten.table->name) == "tapecheck-aten");
  CHECK(aten.table->memory == 0u);
  CHECK(aten.source == "aten");
  CHECK(aten.device == DeviceKind::Cpu);
  CHECK_THAT(describeDevice(DeviceKind::Cpu), Contains(aten.table->version));

  const KernelTable& host = hostReference();
  REQUIRE(host.table);
  CHECK(std::string(host.table->name) == "tapecheck-host-reference");
  CHECK(std::string(host.table->version) == "1.0.0");
  CHECK(host.table->memory == 0u);
  CHECK(host.source == plugins::kHostReference);
  CHECK(host.library != nullptr);
}

TEST_CASE("Plugins that break the ABI contract are rejected with a clear message", "[loading]") {
  SECTION("a missing file") {
    auto t = loadKernelTable("/nonexistent/libnothing.so", DeviceKind::Cpu);
    REQUIRE_FALSE(t);
    CHECK(t.message() == "tapecheck: kernel plugin '/nonexistent/libnothing.so' does not exist");
  }
  SECTION("a file that is not a shared library") {
    const auto path = std::filesystem::temp_directory_path() /
                      ("tapecheck-not-a-plugin-" + std::to_string(::getpid()) + ".so");
    std::ofstream(path) << "not an ELF file\n";
    auto t = loadKernelTable(path.string(), DeviceKind::Cpu);
    std::filesystem::remove(path);
    REQUIRE_FALSE(t);
    CHECK_THAT(t.message(), StartsWith("tapecheck: cannot load kernel plugin '" + path.string() +
                                       "': "));
    CHECK_THAT(t.message(), Contains(path.string() + ":"));  // dlerror() names the file
  }
  SECTION("no tapecheck_kernels_v1_get") {
    auto t = loadKernelTable(plugins::kRejectNoSymbol, DeviceKind::Cpu);
    REQUIRE_FALSE(t);
    CHECK_THAT(t.message(), StartsWith(std::string("tapecheck: kernel plugin '") +
                                       plugins::kRejectNoSymbol +
                                       "' does not export tapecheck_kernels_v1_get: "));
  }
  SECTION("abi_version 2") {
    auto t = loadKernelTable(plugins::kRejectAbiV2, DeviceKind::Cpu);
    REQUIRE_FALSE(t);
    CHECK(t.message() == std::string("tapecheck: kernel plugin '") + plugins::kRejectAbiV2 +
                             "' has abi_version 2; this tapecheck supports kernel ABI version 1");
  }
  SECTION("no entry point at all") {
    auto t = loadKernelTable(plugins::kRejectNoEntries, DeviceKind::Cpu);
    REQUIRE_FALSE(t);
    CHECK(t.message() == std::string("tapecheck: kernel plugin '") + plugins::kRejectNoEntries +
                             "' (tapecheck-host-reference 1.0.0) provides no kernel entry point "
                             "(every function pointer is null)");
  }
  SECTION("CUDA memory requested on the cpu") {
    auto t = loadKernelTable(plugins::kRejectMemoryCuda, DeviceKind::Cpu);
    REQUIRE_FALSE(t);
    CHECK(t.message() == std::string("tapecheck: kernel plugin '") + plugins::kRejectMemoryCuda +
                             "' (tapecheck-host-reference 1.0.0) works on CUDA device memory "
                             "(memory = 1) but the requested device is cpu (use --device cuda)");
  }
  SECTION("an empty --kernels") {
    auto t = loadKernelTable("", DeviceKind::Cpu);
    REQUIRE_FALSE(t);
    CHECK_THAT(t.message(), Contains("empty --kernels"));
  }
}

TEST_CASE("Without a GPU, --device cuda is refused for every kernel table", "[loading]") {
  if (gpuVisible()) {
    // With a GPU, host-memory tables are refused on cuda instead.
    auto t = loadKernelTable(plugins::kHostReference, DeviceKind::Cuda);
    REQUIRE_FALSE(t);
    CHECK_THAT(t.message(), Contains("works on host memory (memory = 0) but the requested "
                                     "device is cuda (use --device cpu)"));
    return;
  }
  for (const char* spec : {"aten", "cuda", plugins::kHostReference}) {
    INFO(spec);
    auto t = loadKernelTable(spec, DeviceKind::Cuda);
    REQUIRE_FALSE(t);
    CHECK(t.message() == "tapecheck: --device cuda was requested but LibTorch sees no CUDA GPU");
  }
}

TEST_CASE("The built-in cuda kernels resolve to a path, overridable by TAPECHECK_CUDA_KERNELS",
          "[loading]") {
  if (!std::getenv("TAPECHECK_CUDA_KERNELS")) {
    // On the cpu the built-in CUDA kernels (memory = 1) are refused, or were never built.
    auto t = loadKernelTable("cuda", DeviceKind::Cpu);
    REQUIRE_FALSE(t);
    const bool notBuilt =
        t.message() ==
        "tapecheck: the built-in cuda kernels were not built (no CUDA compiler at configure time)";
    const bool refused = t.message().find("but the requested device is cpu") != std::string::npos;
    INFO(t.message());
    CHECK((notBuilt || refused));
  }
  ::setenv("TAPECHECK_CUDA_KERNELS", plugins::kHostReference, 1);
  auto t = loadKernelTable("cuda", DeviceKind::Cpu);
  ::unsetenv("TAPECHECK_CUDA_KERNELS");
  REQUIRE(t);
  CHECK(std::string(t.value().table->name) == "tapecheck-host-reference");
  CHECK(t.value().source == "cuda");
}

namespace {

// A table whose softmax_fwd fails (returns 7) or throws, the rest being the host reference's.
int failingSoftmax(void*, std::uint32_t, std::uint32_t, const float*, float*) { return 7; }
int throwingSoftmax(void*, std::uint32_t, std::uint32_t, const float*, float*) {
  throw std::runtime_error("boom");
}

KernelTable withSoftmax(const char* name,
                        int (*fwd)(void*, std::uint32_t, std::uint32_t, const float*, float*)) {
  static std::vector<std::unique_ptr<tapecheck_kernels_v1>> keep;
  KernelTable k = hostReference();
  keep.push_back(std::make_unique<tapecheck_kernels_v1>(*k.table));
  keep.back()->name = name;
  keep.back()->softmax_fwd = fwd;
  k.table = keep.back().get();
  k.source = name;
  return k;
}

}  // namespace

TEST_CASE("A kernel that fails or throws is an error naming the kernel entry; the tape is "
          "unchanged",
          "[loading]") {
  for (auto [name, fwd, expected] :
       {std::tuple{"test-failing", &failingSoftmax,
                   "tapecheck: softmax_fwd: kernel test-failing returned 7"},
        std::tuple{"test-throwing", &throwingSoftmax, "tapecheck: softmax_fwd: boom"}}) {
    INFO(name);
    auto tape = conformance::makeDeviceTape(withSoftmax(name, fwd));
    REQUIRE(tape->leaf(tensor({2, 2}, {1, 2, 3, 4}), true));
    auto r = tape->softmaxLast({2, 2}, 0);
    REQUIRE_FALSE(r);
    CHECK(r.message() == expected);
    CHECK(tape->size() == 1);
    // The other entries still work.
    CHECK(tape->logSoftmaxLast({2, 2}, 0));
  }
}

TEST_CASE("The host reference plugin honours NULL outputs of cross_entropy_bwd", "[loading]") {
  const tapecheck_kernels_v1& k = *hostReference().table;
  const float logits[] = {0.5f, -1.0f, 2.0f, 0.0f};
  const float target[] = {1.0f, 0.0f, 0.25f, 0.75f};
  float loss = 0, logp[4], dlogits[4], dtarget[4];
  REQUIRE(k.cross_entropy_fwd(nullptr, 2, 2, 1, 1, logits, target, &loss, logp) == 0);
  const float dloss = 1.0f;
  REQUIRE(k.cross_entropy_bwd(nullptr, 2, 2, 1, 1, &dloss, logp, target, dlogits, nullptr) == 0);
  REQUIRE(k.cross_entropy_bwd(nullptr, 2, 2, 1, 1, &dloss, logp, target, nullptr, dtarget) == 0);
  REQUIRE(k.cross_entropy_bwd(nullptr, 2, 2, 1, 1, &dloss, logp, target, nullptr, nullptr) == 0);
  CHECK(dtarget[0] == Approx(-logp[0] / 2));
  // The same for the aten table.
  const tapecheck_kernels_v1& a = *atenCpu().table;
  float dlogits2[4] = {}, dtarget2[4] = {};
  REQUIRE(a.cross_entropy_bwd(nullptr, 2, 2, 1, 1, &dloss, logp, target, dlogits2, nullptr) == 0);
  REQUIRE(a.cross_entropy_bwd(nullptr, 2, 2, 1, 1, &dloss, logp, target, nullptr, dtarget2) == 0);
  for (int i = 0; i < 4; ++i) {
    CHECK(dlogits2[i] == Approx(dlogits[i]).margin(1e-6));
    CHECK(dtarget2[i] == Approx(dtarget[i]).margin(1e-6));
  }
}
