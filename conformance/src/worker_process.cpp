#include "worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace tapecheck::conformance {
namespace {

// The worker's end of the socket pair, always this descriptor in the worker.
constexpr int kWorkerSocket = 3;

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", s);
  return text;
}

std::string howItEnded(int status) {
  if (WIFSIGNALED(status)) return "crashed with " + signalName(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

}  // namespace

std::string signalName(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    default: return "signal " + std::to_string(signal);
  }
}

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::start(const WorkerSpec& spec) {
  if (spec.command.empty()) return Error{"no command to start a kernel worker"};
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    return Error{std::string("cannot create a socket pair: ") + std::strerror(errno)};
  // Every descriptor is close-on-exec, so a worker never holds another worker's socket (which
  // would hide that worker's end). The worker's end moves above kWorkerSocket first, so that
  // dup2 onto kWorkerSocket always makes a fresh descriptor that survives exec.
  const int theirs = ::fcntl(pair[1], F_DUPFD_CLOEXEC, 10);
  ::close(pair[1]);
  if (theirs < 0) {
    ::close(pair[0]);
    return Error{std::string("cannot duplicate a socket: ") + std::strerror(errno)};
  }
  std::vector<std::string> args = spec.command;
  for (const char* a : {"--kernels", spec.kernels.c_str(), "--device",
                        device::deviceName(spec.device), "--socket"})
    args.emplace_back(a);
  args.push_back(std::to_string(kWorkerSocket));
  args.emplace_back("--parent");
  args.push_back(std::to_string(::getpid()));
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, theirs, kWorkerSocket);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(theirs);
  if (spawned != 0) {
    ::close(pair[0]);
    return Error{"cannot start the kernel worker " + args[0] + ": " + std::strerror(spawned)};
  }
  std::unique_ptr<WorkerProcess> worker(new WorkerProcess(pid, pair[0]));
  std::string body;
  const auto deadline = wire::FrameReader::Clock::now() +
                        std::chrono::duration_cast<wire::FrameReader::Clock::duration>(
                            std::chrono::duration<double>(spec.startTimeoutSeconds));
  const auto status = worker->reader_.next(body, deadline);
  wire::Reader ready(body);
  if (status != wire::FrameReader::Status::Frame ||
      ready.u8() != static_cast<std::uint8_t>(wire::Kind::Ready)) {
    const bool late = status == wire::FrameReader::Status::TimedOut;
    const std::string how = worker->stop(late);
    return Error{"the kernel worker for '" + spec.kernels + "' " +
                 (late ? "did not start within " + seconds(spec.startTimeoutSeconds) + " s"
                       : "did not start: it " + how)};
  }
  worker->description_ = ready.str();
  return worker;
}

std::string WorkerProcess::stop(bool kill) {
  if (reaped_) return "ended";
  int status = 0;
  if (!kill) {
    // Its socket closed: the process is ending, or (a kernel closed the socket) it lives on.
    for (int waited = 0; waited < 500; ++waited) {
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_ || (done < 0 && errno != EINTR)) {
        reaped_ = true;
        return howItEnded(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  return kill ? "was stopped" : "closed its connection and was stopped";
}

bool WorkerProcess::alive() {
  if (reaped_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == 0) return true;
  reaped_ = true;
  return false;
}

void WorkerProcess::hangUp() {
  if (socket_ >= 0) ::close(socket_);
  socket_ = -1;
}

WorkerProcess::~WorkerProcess() {
  hangUp();
  if (reaped_) return;
  // An idle worker exits when its socket closes; one that lingers is killed after a while.
  stop(false);
}

Result<std::unique_ptr<WorkerProcess>> WorkerPool::acquire() {
  for (;;) {
    std::unique_ptr<WorkerProcess> w;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (idle_.empty()) break;
      w = std::move(idle_.back());
      idle_.pop_back();
    }
    if (w->alive()) return w;
  }
  return WorkerProcess::start(spec_);
}

WorkerPool::~WorkerPool() {
  for (auto& w : idle_) w->hangUp();
  idle_.clear();
}

void WorkerPool::release(std::unique_ptr<WorkerProcess> worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.push_back(std::move(worker));
}

}  // namespace tapecheck::conformance
