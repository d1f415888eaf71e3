// serveKernelWorker (isolation.h): the worker's side of the isolation protocol (src/wire.h).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include <ATen/ops/empty.h>

#include "tapecheck/conformance/device_tapes.h"
#include "tapecheck/conformance/isolation.h"
#include "wire.h"

namespace tapecheck::conformance {
namespace {

using wire::Kind;
using wire::OpCode;

class Server {
 public:
  Server(int socket, device::KernelTable kernels) : socket_(socket), kernels_(std::move(kernels)) {
    kernels_.observer = [this](const char* entry, const std::string& dims, bool returned) {
      wire::Writer w(Kind::Call);
      w.str(entry).str(dims).u8(returned ? 1 : 0);
      wire::sendFrame(socket_, w.body());
    };
    tape_ = makeDeviceTape(kernels_);
  }

  int serve() {
    wire::Writer ready(Kind::Ready);
    ready.str(tape_->description());
    if (!wire::sendFrame(socket_, ready.body())) return 1;
    wire::FrameReader reader(socket_);
    std::string body;
    while (reader.next(body) == wire::FrameReader::Status::Frame) {
      wire::Reader r(body);
      const auto kind = static_cast<Kind>(r.u8());
      if (kind == Kind::Reset) {
        tape_ = makeDeviceTape(kernels_);
        faultSent_ = false;
        continue;
      }
      if (!wire::sendFrame(socket_, answer(kind, r).body())) return 1;
    }
    return 0;  // the run closed the socket
  }

 private:
  template <class T, class Encode>
  wire::Writer reply(const Result<T>& result, Encode encode) {
    wire::Writer w(Kind::Reply);
    w.u8(result ? 1 : 0);
    if (result)
      encode(w, result.value());
    else
      w.str(result.message());
    const std::optional<device::KernelFault> fault = kernelFaultOf(*tape_);
    if (fault && !faultSent_) {
      faultSent_ = true;
      w.u8(1).str(fault->entry).str(fault->message).u8(fault->backward ? 1 : 0).u8(
          static_cast<std::uint8_t>(fault->kind));
    } else {
      w.u8(0);
    }
    return w;
  }

  wire::Writer node(const Result<NodeId>& id) {
    return reply(id, [](wire::Writer& w, NodeId n) { w.u64(n); });
  }

  wire::Writer answer(Kind kind, wire::Reader& r) {
    const Error malformed{"tapecheck: a malformed request to the kernel worker"};
    switch (kind) {
      case Kind::Leaf: {
        const TensorData value = r.tensor();
        const bool requiresGrad = r.u8() != 0;
        if (!r.ok()) return node(malformed);
        return node(tape_->leaf(value, requiresGrad));
      }
      case Kind::Value: {
        const NodeId id = r.u64();
        const auto encode = [](wire::Writer& w, const TensorData& t) { w.tensor(t); };
        if (!r.ok()) return reply(Result<TensorData>(malformed), encode);
        return reply(tape_->value(id), encode);
      }
      case Kind::Size:
        return node(static_cast<NodeId>(tape_->size()));
      case Kind::Op:
        return node(op(r));
      case Kind::Backward: {
        const NodeId out = r.u64();
        const TensorData seed = r.tensor();
        using Grads = std::vector<TensorData>;
        const auto encode = [](wire::Writer& w, const Grads& grads) {
          w.u64(grads.size());
          for (const TensorData& g : grads) w.tensor(g);
        };
        if (!r.ok()) return reply(Result<Grads>(malformed), encode);
        return reply(tape_->backward(out, seed), encode);
      }
      default:
        return node(malformed);
    }
  }

  Result<NodeId> op(wire::Reader& r) {
    const auto code = static_cast<OpCode>(r.u8());
    const Error malformed{"tapecheck: a malformed request to the kernel worker"};
    switch (code) {
      case OpCode::SoftmaxLast: {
        const Shape s = r.shape();
        const NodeId x = r.u64();
        return r.ok() ? tape_->softmaxLast(s, x) : malformed;
      }
      case OpCode::LogSoftmaxLast: {
        const Shape s = r.shape();
        const NodeId x = r.u64();
        return r.ok() ? tape_->logSoftmaxLast(s, x) : malformed;
      }
      case OpCode::TopKMask: {
        const Shape s = r.shape();
        const std::uint64_t k = r.u64();
        const NodeId x = r.u64();
        return r.ok() ? tape_->topKMask(s, k, x) : malformed;
      }
      case OpCode::LayerNorm: {
        const std::uint64_t seqLen = r.u64(), embedDim = r.u64();
        const NodeId x = r.u64(), gamma = r.u64(), beta = r.u64();
        const double epsilon = r.f64();
        return r.ok() ? tape_->layerNorm(seqLen, embedDim, x, gamma, beta, epsilon) : malformed;
      }
      case OpCode::BatchNorm: {
        const std::uint64_t channels = r.u64();
        const Shape spatial = r.shape();
        const NodeId x = r.u64(), gamma = r.u64(), beta = r.u64();
        const double epsilon = r.f64();
        return r.ok() ? tape_->batchNorm(channels, spatial, x, gamma, beta, epsilon) : malformed;
      }
      case OpCode::CrossEntropy: {
        const Shape s = r.shape();
        const std::uint64_t axis = r.u64();
        const NodeId logits = r.u64(), target = r.u64();
        const bool mean = r.u8() != 0;
        return r.ok() ? tape_->crossEntropy(s, axis, logits, target, mean) : malformed;
      }
      case OpCode::Distill: {
        const Shape s = r.shape();
        const std::uint64_t axis = r.u64();
        const NodeId student = r.u64(), teacher = r.u64();
        return r.ok() ? tape_->distill(s, axis, student, teacher) : malformed;
      }
    }
    return malformed;
  }

  int socket_;
  device::KernelTable kernels_;
  std::unique_ptr<AnyTape> tape_;
  bool faultSent_ = false;
};

int usage(const std::string& message) {
  std::cerr << "tapecheck " << kKernelWorkerCommand << ": " << message
            << " (this command is started by `tapecheck run` and `tapecheck certify`)\n";
  return 2;
}

}  // namespace

int serveKernelWorker(const std::vector<std::string>& args) {
  std::map<std::string, std::string> options;
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) options[args[i]] = args[i + 1];
  if (args.size() % 2 != 0 || options.size() != 4 || !options.count("--kernels") ||
      !options.count("--device") || !options.count("--socket") || !options.count("--parent"))
    return usage("expected --kernels SPEC --device cpu|cuda --socket FD --parent PID");
  const int socket = std::atoi(options["--socket"].c_str());
  const long parent = std::atol(options["--parent"].c_str());
  // A worker never outlives its run, even one stuck in a kernel when the run is killed: once
  // it has another parent, it ends. (PR_SET_PDEATHSIG would fire when the run's thread that
  // started the worker ends, which happens while the run goes on.)
  if (::getppid() != parent) return 1;
  std::thread([parent] {
    while (::getppid() == parent) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::_Exit(1);
  }).detach();
  // What the kernels print goes to the run's standard error, never into its report.
  std::fflush(stdout);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);

  auto device = device::parseDevice(options["--device"]);
  if (!device) return usage(device.message());
  auto kernels = device::loadKernelTable(options["--kernels"], device.value());
  if (!kernels) {
    std::cerr << "tapecheck " << kKernelWorkerCommand << ": " << kernels.message() << "\n";
    return 2;
  }
  // The CUDA context is made before the first case, not within its time limit.
  if (device.value() == device::DeviceKind::Cuda) {
    try {
      (void)at::empty({1}, at::TensorOptions().device(at::kCUDA));
    } catch (const std::exception& e) {
      std::cerr << "tapecheck " << kKernelWorkerCommand << ": cannot use CUDA: " << e.what()
                << "\n";
      return 2;
    }
  }
  const int status = Server(socket, std::move(kernels).value()).serve();
  // Nothing left to tear down that the system does not: a kernel library's static destructors
  // must not be able to hold or crash the end of a worker.
  std::fflush(nullptr);
  std::_Exit(status);
}

}  // namespace tapecheck::conformance
