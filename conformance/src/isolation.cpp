// The run's side of isolation.h: the tape factory over a pool of kernel workers.
#include "tapecheck/conformance/isolation.h"

#include <filesystem>
#include <memory>

#include "remote_tape.h"
#include "worker_process.h"

namespace tapecheck::conformance {

Result<std::string> currentExecutable() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return Error{"cannot locate the running executable: " + ec.message()};
  return self.string();
}

double defaultCaseTimeout(device::DeviceKind d) {
  return d == device::DeviceKind::Cuda ? 120.0 : 10.0;
}

Result<TapeFactory> isolatedDeviceTapes(const IsolationOptions& o) {
  WorkerSpec spec;
  spec.command = o.workerCommand;
  spec.kernels = o.kernels;
  spec.device = o.device;
  spec.caseTimeoutSeconds = o.caseTimeoutSeconds > 0 ? o.caseTimeoutSeconds
                                                     : defaultCaseTimeout(o.device);
  auto pool = std::make_shared<WorkerPool>(spec);
  auto first = WorkerProcess::start(spec);
  if (!first) return first.error();
  pool->release(std::move(first).value());
  return TapeFactory([pool] { return std::make_unique<RemoteTape>(pool); });
}

}  // namespace tapecheck::conformance
