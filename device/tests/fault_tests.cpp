// Partial tables and misbehaving kernels at the device tape: a null entry point loads as "not
// provided", and a kernel that returns nonzero, throws or writes outside its outputs is an error
// naming the entry point and also the backend's fault.
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "support.h"
#include "tapecheck/device/kernel_entries.h"
#include "tapecheck/device/plugin_gallery.h"

using namespace tapecheck;
using namespace tapecheck::device;
using namespace tapecheck::device::testing;

namespace {

using SoftmaxFwd = int (*)(void*, std::uint32_t, std::uint32_t, const float*, float*);

// The host reference's table with softmax_fwd replaced (kept alive for the whole test run).
KernelTable withSoftmaxFwd(const char* name, SoftmaxFwd fwd) {
  static std::vector<std::unique_ptr<tapecheck_kernels_v1>> keep;
  KernelTable k = hostReference();
  keep.push_back(std::make_unique<tapecheck_kernels_v1>(*k.table));
  keep.back()->name = name;
  keep.back()->softmax_fwd = fwd;
  k.table = keep.back().get();
  k.source = name;
  return k;
}

// Correct softmax of rows of two ones (0.5 each), plus a write outside y.
int writesPast(void*, std::uint32_t rows, std::uint32_t cols, const float*, float* y) {
  for (std::uint32_t i = 0; i < rows * cols; ++i) y[i] = 0.5f;
  for (std::uint32_t i = 0; i < 3; ++i) y[rows * cols + i] = 0.0f;
  return 0;
}
int writesBefore(void*, std::uint32_t rows, std::uint32_t cols, const float*, float* y) {
  for (std::uint32_t i = 0; i < rows * cols; ++i) y[i] = 0.5f;
  y[-2] = 0.0f;
  return 0;
}
int writesWithin(void*, std::uint32_t rows, std::uint32_t cols, const float*, float* y) {
  for (std::uint32_t i = 0; i < rows * cols; ++i) y[i] = 0.5f;
  return 0;
}
int returnsThree(void*, std::uint32_t, std::uint32_t, const float*, float*) { return 3; }
int throwsBoom(void*, std::uint32_t, std::uint32_t, const float*, float*) {
  throw std::runtime_error("boom");
}

// A device tape over `k` (no ATen here: its logging headers define a CHECK of their own).
struct Device {
  explicit Device(const KernelTable& k) : tape(conformance::makeDeviceTape(k)) {}
  std::unique_ptr<conformance::AnyTape> tape;
  std::optional<KernelFault> fault() const { return conformance::kernelFaultOf(*tape); }
};

// softmaxLast of a [rows, cols] tensor of ones: one softmax_fwd call on [rows, cols].
Result<NodeId> softmaxOfOnes(Device& d, std::uint32_t rows, std::uint32_t cols) {
  const Shape s{rows, cols};
  auto x = d.tape->leaf(tensor(s, std::vector<double>(std::size_t{rows} * cols, 1.0)), false);
  REQUIRE(x);
  return d.tape->softmaxLast(s, x.value());
}

}  // namespace

TEST_CASE("A partial table loads; its null entry points are not provided", "[loading]") {
  auto t = loadKernelTable(plugins::kPartialSoftmax, DeviceKind::Cpu);
  REQUIRE(t);
  const tapecheck_kernels_v1& k = *t.value().table;
  CHECK(provides(k, "softmax_fwd"));
  CHECK(provides(k, "softmax_bwd"));
  CHECK_FALSE(provides(k, "layer_norm_fwd"));
  CHECK_FALSE(provides(k, "no_such_entry"));
  const std::vector<std::string> needed{"softmax_fwd", "layer_norm_fwd", "layer_norm_bwd",
                                       "layer_norm_fwd"};
  CHECK(missingEntries(k, needed) == std::vector<std::string>{"layer_norm_fwd", "layer_norm_bwd"});
  CHECK(missingEntries(*hostReference().table, kernelEntryNames()).empty());
  CHECK(kernelEntryNames().size() == 11);
}

TEST_CASE("Each operation needs its own entry points; distill needs the cross-entropy pair",
          "[loading]") {
  CHECK(entriesOf("softmaxLast").fwd == std::vector<std::string>{"softmax_fwd"});
  CHECK(entriesOf("softmaxLast").bwd == std::vector<std::string>{"softmax_bwd"});
  CHECK(entriesOf("topKMask").bwd.empty());
  CHECK(entriesOf("distill").fwd == std::vector<std::string>{"cross_entropy_fwd"});
  CHECK(entriesOf("distill").bwd == std::vector<std::string>{"cross_entropy_bwd"});
  CHECK(entriesOf("noSuchOp").fwd.empty());
  CHECK(isBackwardEntry("layer_norm_bwd"));
  CHECK_FALSE(isBackwardEntry("topk_mask"));
}

TEST_CASE("Calling an entry point the table does not provide is an error, not a fault",
          "[loading]") {
  auto t = loadKernelTable(plugins::kPartialSoftmax, DeviceKind::Cpu);
  REQUIRE(t);
  Device d(t.value());
  auto x = d.tape->leaf(tensor({2, 2}, {1, 2, 3, 4}), false);
  REQUIRE(x);
  auto r = d.tape->logSoftmaxLast({2, 2}, x.value());
  REQUIRE_FALSE(r);
  CHECK(r.message() == "tapecheck: log_softmax_fwd: not provided by the kernel table "
                       "tapecheck-partial-softmax 1.0.0");
  CHECK_FALSE(d.fault());
  CHECK(d.tape->softmaxLast({2, 2}, x.value()));
}

TEST_CASE("A kernel writing outside its output is a fault naming the output and the reach",
          "[loading]") {
  SECTION("three floats past the end") {
    Device b(withSoftmaxFwd("test-writes-past", &writesPast));
    auto r = softmaxOfOnes(b, 4, 7);
    REQUIRE_FALSE(r);
    CHECK(r.message() ==
          "tapecheck: softmax_fwd: wrote past its output y (3 floats after the end) on [4, 7]");
    REQUIRE(b.fault());
    CHECK(b.fault()->entry == "softmax_fwd");
    CHECK(b.fault()->message ==
          "softmax_fwd wrote past its output y (3 floats after the end) on [4, 7]");
    CHECK_FALSE(b.fault()->backward);
    CHECK(b.fault()->kind == FaultKind::WroteOutside);
  }
  SECTION("two floats before the start") {
    Device b(withSoftmaxFwd("test-writes-before", &writesBefore));
    auto r = softmaxOfOnes(b, 1, 2);
    REQUIRE_FALSE(r);
    REQUIRE(b.fault());
    CHECK(b.fault()->message ==
          "softmax_fwd wrote before its output y (2 floats before the start) on [1, 2]");
  }
  SECTION("within the extent: no fault, and the result is the kernel's") {
    Device b(withSoftmaxFwd("test-writes-within", &writesWithin));
    auto r = softmaxOfOnes(b, 3, 2);
    REQUIRE(r);
    CHECK(b.tape->value(r.value()).value().values == std::vector<double>(6, 0.5));
    CHECK_FALSE(b.fault());
  }
}

TEST_CASE("A nonzero return and a throw are faults naming the entry point and the sizes",
          "[loading]") {
  Device returning(withSoftmaxFwd("test-returns-3", &returnsThree));
  auto r = softmaxOfOnes(returning, 4, 7);
  REQUIRE_FALSE(r);
  CHECK(r.message() == "tapecheck: softmax_fwd: kernel test-returns-3 returned 3");
  REQUIRE(returning.fault());
  CHECK(returning.fault()->message == "softmax_fwd returned 3 on [4, 7]");
  CHECK(returning.fault()->kind == FaultKind::Returned);

  Device throwing(withSoftmaxFwd("test-throws", &throwsBoom));
  REQUIRE_FALSE(softmaxOfOnes(throwing, 2, 3));
  REQUIRE(throwing.fault());
  CHECK(throwing.fault()->message == "softmax_fwd threw on [2, 3]: boom");
  CHECK(throwing.fault()->kind == FaultKind::Threw);
}

TEST_CASE("The observer hears every kernel call before and after it", "[loading]") {
  KernelTable k = hostReference();
  std::vector<std::string> heard;
  k.observer = [&](const char* entry, const std::string& dims, bool returned) {
    heard.push_back(std::string(returned ? "after " : "before ") + entry + " " + dims);
  };
  Device b(k);
  REQUIRE(softmaxOfOnes(b, 2, 5));
  CHECK(heard ==
        std::vector<std::string>{"before softmax_fwd [2, 5]", "after softmax_fwd [2, 5]"});
}
