// Running the kernels under test in supervised worker processes, so that a kernel that crashes,
// hangs or corrupts memory produces a verdict instead of ending the run.
//
// The run (the parent) holds a pool of workers, each a separate process started from the same
// executable (`tapecheck kernel-worker`, serveKernelWorker below) that loads the kernels and keeps
// a device tape. A device tape of the run is a proxy: each of its calls goes to one worker and
// waits for the answer. One case is evaluated by one worker, start to end, so a crash names the
// case; the worker reports each kernel call before and after it, so a crash or a hang names the
// entry point and its sizes too. The parent enforces the case's time limit, stops and reaps a
// worker that crashed or ran past it, and starts a new one for the next case.
//
// Every worker evaluates exactly what the tape in the parent would (the same device tape code on
// the same binary32 values), so for well-behaved kernels a run's report is the same with or
// without isolation. Workers are fresh processes (spawned, not forked): they initialize LibTorch
// and CUDA themselves, and their standard output goes to the run's standard error, so whatever
// a kernel prints never mixes with a report.
#pragma once

#include <string>
#include <vector>

#include "tapecheck/conformance/any_tape.h"
#include "tapecheck/device/kernel_table.h"
#include "tapecheck/result.h"

namespace tapecheck::conformance {

// The hidden command of `tapecheck` that runs serveKernelWorker.
inline constexpr const char* kKernelWorkerCommand = "kernel-worker";

struct IsolationOptions {
  // The command line that starts a worker, e.g. {"/usr/bin/tapecheck", "kernel-worker"}; the
  // kernels, device and socket options are appended.
  std::vector<std::string> workerCommand;
  std::string kernels;  // aten | cuda | PATH.so
  device::DeviceKind device = device::DeviceKind::Cpu;
  double caseTimeoutSeconds = 0;  // 0: defaultCaseTimeout(device)
};

// The time one case may take in a worker before it counts as hung: 10 s on the CPU (the largest
// CPU case takes milliseconds), 120 s on CUDA (a first launch may load or JIT-compile modules).
double defaultCaseTimeout(device::DeviceKind d);

// A factory of device tapes whose kernels run in workers. One worker is started now, so that a
// worker that cannot start is an Error here rather than a failure of every case.
Result<TapeFactory> isolatedDeviceTapes(const IsolationOptions& options);

// The worker: loads the kernels, then answers the requests of one run on the socket it was given
// until the run closes it. Returns the process's exit status.
//   args: --kernels SPEC --device cpu|cuda --socket FD --parent PID
int serveKernelWorker(const std::vector<std::string>& args);

// The path of the running executable (/proc/self/exe), for workerCommand.
Result<std::string> currentExecutable();

}  // namespace tapecheck::conformance
