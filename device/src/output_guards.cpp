#include "output_guards.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include <ATen/ATen.h>

namespace tapecheck::device::detail {
namespace {

constexpr std::int64_t G = kGuardFloats;

std::string floats(std::int64_t n) {
  return std::to_string(n) + (n == 1 ? " float" : " floats");
}

// How far a kernel wrote outside: the changed guard word farthest from the interior.
struct Reach {
  std::int64_t before = 0, after = 0;
};

Reach reachOf(const std::uint32_t* head, const std::uint32_t* tail) {
  Reach r;
  for (std::int64_t i = 0; i < G; ++i) {
    if (head[i] != kCanaryBits && r.before == 0) r.before = G - i;
    if (tail[i] != kCanaryBits) r.after = i + 1;
  }
  return r;
}

std::string describe(const char* name, Reach r) {
  if (r.before && r.after)
    return std::string("wrote outside its output ") + name + " (" + floats(r.before) +
           " before the start, " + floats(r.after) + " after the end)";
  if (r.before)
    return std::string("wrote before its output ") + name + " (" + floats(r.before) +
           " before the start)";
  return std::string("wrote past its output ") + name + " (" + floats(r.after) + " after the end)";
}

}  // namespace

at::Tensor GuardedOutputs::add(const char* name, std::int64_t n, const at::Tensor& like) {
  at::Tensor whole = at::empty({n + 2 * G}, like.options());
  if (whole.is_cpu()) {
    float* p = whole.data_ptr<float>();
    for (std::int64_t i = 0; i < G; ++i) {
      std::memcpy(p + i, &kCanaryBits, sizeof kCanaryBits);
      std::memcpy(p + G + n + i, &kCanaryBits, sizeof kCanaryBits);
    }
    std::fill(p + G, p + G + n, std::numeric_limits<float>::quiet_NaN());
  } else {
    const at::Tensor bits = whole.view(at::kInt);
    const auto canary = static_cast<std::int32_t>(kCanaryBits);
    bits.narrow(0, 0, G).fill_(canary);
    bits.narrow(0, G + n, G).fill_(canary);
    whole.narrow(0, G, n).fill_(std::numeric_limits<float>::quiet_NaN());
  }
  outputs_.push_back(Output{name, whole, n});
  return whole.narrow(0, G, n);
}

std::optional<std::string> GuardedOutputs::violation() const {
  if (outputs_.empty()) return std::nullopt;
  if (outputs_.front().whole.is_cpu()) {
    for (const Output& o : outputs_) {
      const auto* words = static_cast<const std::uint32_t*>(o.whole.data_ptr());
      const Reach r = reachOf(words, words + G + o.n);
      if (r.before || r.after) return describe(o.name, r);
    }
    return std::nullopt;
  }
  // Device memory: every guard in one copy to the host, two per output, in order.
  std::vector<at::Tensor> guards;
  for (const Output& o : outputs_) {
    const at::Tensor bits = o.whole.view(at::kInt);
    guards.push_back(bits.narrow(0, 0, G));
    guards.push_back(bits.narrow(0, G + o.n, G));
  }
  const at::Tensor host = at::cat(guards).to(at::kCPU).contiguous();
  const auto* words = static_cast<const std::uint32_t*>(host.data_ptr());
  for (std::size_t i = 0; i < outputs_.size(); ++i) {
    const Reach r = reachOf(words + 2 * G * i, words + 2 * G * i + G);
    if (r.before || r.after) return describe(outputs_[i].name, r);
  }
  return std::nullopt;
}

}  // namespace tapecheck::device::detail
