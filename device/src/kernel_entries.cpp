#include "tapecheck/device/kernel_entries.h"

#include <algorithm>

namespace tapecheck::device {

const std::vector<std::string>& kernelEntryNames() {
  static const std::vector<std::string> names = {
      "softmax_fwd",    "softmax_bwd",    "log_softmax_fwd", "log_softmax_bwd",
      "topk_mask",      "layer_norm_fwd", "layer_norm_bwd",  "batch_norm_fwd",
      "batch_norm_bwd", "cross_entropy_fwd", "cross_entropy_bwd"};
  return names;
}

bool provides(const tapecheck_kernels_v1& t, std::string_view e) {
  if (e == "softmax_fwd") return t.softmax_fwd != nullptr;
  if (e == "softmax_bwd") return t.softmax_bwd != nullptr;
  if (e == "log_softmax_fwd") return t.log_softmax_fwd != nullptr;
  if (e == "log_softmax_bwd") return t.log_softmax_bwd != nullptr;
  if (e == "topk_mask") return t.topk_mask != nullptr;
  if (e == "layer_norm_fwd") return t.layer_norm_fwd != nullptr;
  if (e == "layer_norm_bwd") return t.layer_norm_bwd != nullptr;
  if (e == "batch_norm_fwd") return t.batch_norm_fwd != nullptr;
  if (e == "batch_norm_bwd") return t.batch_norm_bwd != nullptr;
  if (e == "cross_entropy_fwd") return t.cross_entropy_fwd != nullptr;
  if (e == "cross_entropy_bwd") return t.cross_entropy_bwd != nullptr;
  return false;
}

bool providesAny(const tapecheck_kernels_v1& t) {
  const auto& names = kernelEntryNames();
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& e) { return provides(t, e); });
}

// How Tape<KernelBackend> implements each operation (reference/include/tapecheck/tape_*.h):
// distill's teacher is ATen's softmax, not a kernel; its loss is the cross-entropy kernels'.
OpEntries entriesOf(std::string_view op) {
  if (op == "softmaxLast") return {{"softmax_fwd"}, {"softmax_bwd"}};
  if (op == "logSoftmaxLast") return {{"log_softmax_fwd"}, {"log_softmax_bwd"}};
  if (op == "topKMask") return {{"topk_mask"}, {}};
  if (op == "layerNorm") return {{"layer_norm_fwd"}, {"layer_norm_bwd"}};
  if (op == "batchNorm") return {{"batch_norm_fwd"}, {"batch_norm_bwd"}};
  if (op == "crossEntropy" || op == "distill")
    return {{"cross_entropy_fwd"}, {"cross_entropy_bwd"}};
  return {};
}

std::vector<std::string> missingEntries(const tapecheck_kernels_v1& t,
                                        const std::vector<std::string>& needed) {
  std::vector<std::string> out;
  for (const std::string& e : needed)
    if (!provides(t, e) && std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  return out;
}

bool isBackwardEntry(std::string_view entry) {
  return entry.size() >= 4 && entry.substr(entry.size() - 4) == "_bwd";
}

}  // namespace tapecheck::device
