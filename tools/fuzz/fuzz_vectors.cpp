// Fuzz target `vectors`: JSON text -> the golden-vector loader `tapecheck vectors check` uses
// (vectors::parseVectorText, what loadVectorFile calls on a file's text), then, for text it
// accepts, the rest of that command: vectors::checkVectorFiles on the reference target (the
// multi-precision oracle) and on the device target (`aten` on the CPU). Properties:
//   - the loader returns an Error naming the input, never throws or crashes;
//   - an accepted file writes back (vectors::formatVectorFile) to text that loads to the same
//     file (every field, value bits included);
//   - checking an accepted file returns a result (passes or failures), never throws or crashes.
#include <cmath>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>

#include "fuzz_entry.h"
#include "tapecheck/conformance/device_tapes.h"
#include "tapecheck/device/kernel_table.h"
#include "tapecheck/vectors/check.h"
#include "tapecheck/vectors/load.h"
#include "tapecheck/vectors/write.h"

namespace tapecheck::fuzz {
namespace {

constexpr const char* kLabel = "fuzz-input.json";

using conformance::TensorData;
using vectors::VectorFile;
using vectors::VectorTest;

bool sameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}
bool same(const TensorData& a, const TensorData& b) {
  return a.shape == b.shape && sameBits(a.values, b.values);
}
template <class T, class Eq>
bool sameOpt(const std::optional<T>& a, const std::optional<T>& b, Eq eq) {
  return a.has_value() == b.has_value() && (!a || eq(*a, *b));
}

// Field by field; epsilon by value (-0 and 0 are the same epsilon), tensors by bits.
std::string firstDifference(const VectorFile& a, const VectorFile& b) {
  if (a.op != b.op) return "op";
  if (a.generator.name != b.generator.name || a.generator.version != b.generator.version ||
      a.generator.provenance != b.generator.provenance)
    return "generator";
  if (a.header != b.header) return "header";
  if (a.notes != b.notes) return "notes";
  if (a.tests.size() != b.tests.size()) return "number of tests";
  const auto eqT = [](const TensorData& x, const TensorData& y) { return same(x, y); };
  const auto eq = [](const auto& x, const auto& y) { return x == y; };
  for (std::size_t i = 0; i < a.tests.size(); ++i) {
    const VectorTest& s = a.tests[i];
    const VectorTest& t = b.tests[i];
    const std::string at = "tests[" + std::to_string(i) + "].";
    if (s.tcId != t.tcId) return at + "tcId";
    if (s.comment != t.comment) return at + "comment";
    if (s.flags != t.flags) return at + "flags";
    if (s.result != t.result) return at + "result";
    const auto& c = s.testCase;
    const auto& d = t.testCase;
    if (c.op != d.op) return at + "op";
    if (c.leaves.size() != d.leaves.size()) return at + "leaves";
    for (std::size_t l = 0; l < c.leaves.size(); ++l)
      if (c.leaves[l].requiresGrad != d.leaves[l].requiresGrad ||
          !same(c.leaves[l].value, d.leaves[l].value))
        return at + "leaves[" + std::to_string(l) + "]";
    if (c.call != d.call) return at + "call";
    const auto& x = c.attrs;
    const auto& y = d.attrs;
    if (!sameOpt(x.s, y.s, eq) || !sameOpt(x.k, y.k, eq) || !sameOpt(x.axis, y.axis, eq) ||
        !sameOpt(x.mean, y.mean, eq) || !sameOpt(x.epsilon, y.epsilon, eq) ||
        !sameOpt(x.seqLen, y.seqLen, eq) || !sameOpt(x.embedDim, y.embedDim, eq) ||
        !sameOpt(x.channels, y.channels, eq) || !sameOpt(x.spatial, y.spatial, eq))
      return at + "attrs";
    if (!sameOpt(c.upstream, d.upstream, eqT)) return at + "upstream";
    if (s.expected.error != t.expected.error) return at + "expected.error";
    if (!sameOpt(s.expected.value, t.expected.value, eqT)) return at + "expected.value";
    const auto eqGrads = [&](const std::vector<TensorData>& g, const std::vector<TensorData>& h) {
      if (g.size() != h.size()) return false;
      for (std::size_t k = 0; k < g.size(); ++k)
        if (!same(g[k], h[k])) return false;
      return true;
    };
    if (!sameOpt(s.expected.grads, t.expected.grads, eqGrads)) return at + "expected.grads";
  }
  return "";
}

bool finiteEpsilons(const VectorFile& f) {
  for (const VectorTest& t : f.tests)
    if (t.testCase.attrs.epsilon && !std::isfinite(*t.testCase.attrs.epsilon)) return false;
  return true;
}

const conformance::TapeFactory& atenTape() {
  static const conformance::TapeFactory factory = [] {
    auto t = device::loadKernelTable("aten", device::DeviceKind::Cpu);
    if (!t) violated("the aten kernel table does not load: " + t.message());
    return conformance::TapeFactory(
        [table = std::move(t).value()] { return conformance::makeDeviceTape(table); });
  }();
  return factory;
}

void checkAccepted(const VectorFile& f, const std::string& text) {
  // Round trip through the writer.
  if (finiteEpsilons(f)) {
    auto written = vectors::formatVectorFile(f);
    if (!written) violated("an accepted file does not write back: " + written.message());
    auto again = vectors::parseVectorText(written.value(), kLabel);
    if (!again)
      violated("a written file does not load: " + again.message() + "\n--- written:\n" +
               written.value());
    const std::string diff = firstDifference(f, again.value());
    if (!diff.empty())
      violated("writing and loading again changes " + diff + "\n--- input:\n" + text +
               "\n--- written:\n" + written.value());
  }

  // The rest of `tapecheck vectors check`, on both targets.
  std::ostringstream log;
  vectors::VectorCheckOptions reference;
  reference.target = vectors::Target::Reference;
  reference.verbose = true;
  auto r = vectors::checkVectorFiles({f}, reference, log);
  if (!r) violated("checking on the reference returned an error: " + r.message());
  vectors::printVectorCheckReport(r.value(), reference.target, log);

  vectors::VectorCheckOptions device;
  device.target = vectors::Target::Device;
  device.deviceTape = atenTape();
  device.verbose = true;
  auto d = vectors::checkVectorFiles({f}, device, log);
  if (!d) violated("checking on the device returned an error: " + d.message());
  vectors::printVectorCheckReport(d.value(), device.target, log);
}

}  // namespace
}  // namespace tapecheck::fuzz

TAPECHECK_FUZZ_TARGET(vectors) {
  using namespace tapecheck::fuzz;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto f = tapecheck::vectors::parseVectorText(text, kLabel);
    if (!f) {
      if (f.message().rfind(kLabel, 0) != 0)
        violated("a loader error does not name the input: " + f.message());
      return 0;
    }
    checkAccepted(f.value(), text);
  } catch (const std::exception& e) {
    violated(std::string("an exception escaped: ") + e.what() + "\n--- input:\n" + text);
  }
  return 0;
}
