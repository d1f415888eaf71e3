// The worker processes that run the kernels under test for a conformance run (isolation.h): one
// started with posix_spawn, talking over a socket pair, and a pool of idle ones. A worker whose
// kernels crashed or hung is stopped, reaped and replaced; the pool never hands it out again.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tapecheck/device/kernel_table.h"
#include "tapecheck/result.h"
#include "wire.h"

namespace tapecheck::conformance {

struct WorkerSpec {
  std::vector<std::string> command;  // runs serveKernelWorker; the options below are appended
  std::string kernels;
  device::DeviceKind device = device::DeviceKind::Cpu;
  double caseTimeoutSeconds = 10;
  double startTimeoutSeconds = 120;  // loading LibTorch and the kernels (and a CUDA context)
};

class WorkerProcess {
 public:
  // Spawns a worker and waits until it has loaded the kernels. An Error says why it did not.
  static Result<std::unique_ptr<WorkerProcess>> start(const WorkerSpec& spec);
  // Closes the socket (an idle worker then exits) and reaps the process.
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  int socket() const { return socket_; }
  // Closes the socket now (an idle worker then exits); the process is reaped on destruction.
  void hangUp();
  // Whether the process is still running (an idle worker may have been killed from outside).
  bool alive();
  wire::FrameReader& reader() { return reader_; }
  const std::string& description() const { return description_; }

  // After the socket closed or a deadline passed: ends the process (SIGKILL when `kill`, or when
  // it still runs 5 s after its socket closed), reaps it and says how it ended: "crashed with
  // SIGSEGV", "exited with status 3", "was stopped".
  std::string stop(bool kill);

 private:
  WorkerProcess(pid_t pid, int socket) : pid_(pid), socket_(socket), reader_(socket) {}
  pid_t pid_;
  int socket_;
  wire::FrameReader reader_;
  std::string description_;
  bool reaped_ = false;
};

class WorkerPool {
 public:
  explicit WorkerPool(WorkerSpec spec) : spec_(std::move(spec)) {}
  // Every idle worker is told to exit at once, then reaped.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  const WorkerSpec& spec() const { return spec_; }
  // An idle worker that is still running, or a new one.
  Result<std::unique_ptr<WorkerProcess>> acquire();
  // Back to the idle list: only workers that answered every request.
  void release(std::unique_ptr<WorkerProcess> worker);

 private:
  WorkerSpec spec_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<WorkerProcess>> idle_;
};

// "SIGSEGV", "SIGABRT", ... or "signal N".
std::string signalName(int signal);

}  // namespace tapecheck::conformance
