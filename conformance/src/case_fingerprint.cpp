#include "tapecheck/conformance/case_fingerprint.h"

#include <cstring>
#include <string>

namespace tapecheck::conformance {
namespace {

// FNV-1a over 64-bit words, each word first mixed (splitmix64's finalizer) so that neighbouring
// values spread over every bit.
class Hasher {
 public:
  void word(std::uint64_t w) {
    w ^= w >> 30;
    w *= 0xBF58476D1CE4E5B9ull;
    w ^= w >> 27;
    w *= 0x94D049BB133111EBull;
    w ^= w >> 31;
    h_ = (h_ ^ w) * 0x100000001B3ull;
  }
  void number(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    word(bits);
  }
  void text(const std::string& s) {
    word(s.size());
    for (unsigned char ch : s) word(ch);
  }
  void shape(const Shape& s) {
    word(s.size());
    for (Dim d : s) word(d);
  }
  void tensor(const TensorData& t) {
    shape(t.shape);
    word(t.values.size());
    for (double v : t.values) number(v);
  }
  template <class T, class F>
  void optional(const std::optional<T>& v, F&& f) {
    word(v ? 1 : 0);
    if (v) f(*v);
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 0xCBF29CE484222325ull;
};

}  // namespace

std::uint64_t caseFingerprint(const TestCase& c) {
  Hasher h;
  h.text(c.op);
  h.word(c.leaves.size());
  for (const Leaf& l : c.leaves) {
    h.word(l.requiresGrad ? 1 : 0);
    h.tensor(l.value);
  }
  h.word(c.call.size());
  for (const auto& [name, id] : c.call) {
    h.text(name);
    h.word(id);
  }
  const Attrs& a = c.attrs;
  const auto unsignedValue = [&](std::uint64_t v) { h.word(v); };
  h.optional(a.s, [&](const Shape& s) { h.shape(s); });
  h.optional(a.k, unsignedValue);
  h.optional(a.axis, unsignedValue);
  h.optional(a.mean, [&](bool v) { h.word(v ? 1 : 0); });
  h.optional(a.epsilon, [&](double v) { h.number(v); });
  h.optional(a.seqLen, unsignedValue);
  h.optional(a.embedDim, unsignedValue);
  h.optional(a.channels, unsignedValue);
  h.optional(a.spatial, [&](const Shape& s) { h.shape(s); });
  h.optional(c.upstream, [&](const TensorData& t) { h.tensor(t); });
  return h.value();
}

}  // namespace tapecheck::conformance
