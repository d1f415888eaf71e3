// A kernel that misbehaved: it returned nonzero, threw, wrote outside the outputs it was given,
// or -- when the kernels run in a supervised worker process -- crashed the process or did not
// return in time. The device tape reports it as an error like any other; a conformance run asks
// for the fault behind that error and counts it as a failure of the pass the entry point belongs
// to, never as an error-handling case.
#pragma once

#include <functional>
#include <string>

namespace tapecheck::device {

enum class FaultKind : unsigned char {
  Returned,      // a nonzero return status
  Threw,         // an exception escaped the call (host memory kernels)
  DeviceError,   // an exception or a CUDA error, from a kernel on CUDA memory: the CUDA context
                 // may be unusable from then on
  WroteOutside,  // a guard region around an output changed
  Crashed,       // the worker process died
  TimedOut,      // the worker process ran past the case's time limit and was stopped
};

struct KernelFault {
  std::string entry;      // "layer_norm_fwd"; empty when no kernel call can be blamed
  std::string message;    // "layer_norm_fwd returned 3 on [4, 7]"
  bool backward = false;  // the failing call belongs to a backward pass
  FaultKind kind = FaultKind::Returned;
};

// Whether the process that ran the kernel cannot be trusted with another case: it died, was
// stopped, had its memory written where it should not have been, or may hold a broken CUDA
// context.
inline bool spoilsWorker(FaultKind k) {
  return k == FaultKind::WroteOutside || k == FaultKind::DeviceError ||
         k == FaultKind::Crashed || k == FaultKind::TimedOut;
}

// Told about every kernel call: before it (`returned` false) and after it returned. `dims` are
// the call's sizes as the message of a fault writes them, e.g. "[4, 7]".
using KernelCallObserver =
    std::function<void(const char* entry, const std::string& dims, bool returned)>;

}  // namespace tapecheck::device
