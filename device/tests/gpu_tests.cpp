// On a GPU: the `aten` table on CUDA memory and the built-in CUDA kernels against the oracle.
// Without a visible GPU these tests say so and pass.
#include <catch2/catch.hpp>

#include "support.h"

using namespace tapecheck;
using namespace tapecheck::device;
using namespace tapecheck::device::testing;

namespace {

void checkEveryCase(const KernelTable& kernels, const std::string& label) {
  for (const NamedCase& nc : allCases()) {
    const Verdict v = runAgainstOracle(kernels, nc);
    recordWorst(label, nc.c.op, v);
    INFO(nc.name << ": " << v.detail);
    CHECK(v.ok);
  }
}

}  // namespace

TEST_CASE("On a GPU, the aten table on CUDA memory matches the oracle", "[gpu]") {
  if (!gpuVisible()) {
    WARN("no CUDA GPU visible to LibTorch: skipped");
    return;
  }
  auto kernels = loadKernelTable("aten", DeviceKind::Cuda);
  REQUIRE(kernels);
  CHECK(kernels.value().table->memory == 1u);
  CHECK(conformance::makeDeviceTape(kernels.value())->description().find("@cuda") !=
        std::string::npos);
  WARN("device: " << describeDevice(DeviceKind::Cuda));
  checkEveryCase(kernels.value(), "aten@cuda");
}

TEST_CASE("On a GPU, the built-in cuda kernels match the oracle", "[gpu]") {
  if (!gpuVisible()) {
    WARN("no CUDA GPU visible to LibTorch: skipped");
    return;
  }
  auto kernels = loadKernelTable("cuda", DeviceKind::Cuda);
  if (!kernels) {
    WARN("built-in cuda kernels unavailable: " << kernels.message());
    return;
  }
  checkEveryCase(kernels.value(), "cuda@cuda");
}
