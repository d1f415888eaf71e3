// The messages between a conformance run and its kernel workers (isolation.h): frames of a
// 32-bit length and a body, on a local stream socket. Both ends are the same executable, so
// numbers travel in the machine's byte order. Tensor values travel as binary32: the device tape
// rounds every value it receives to binary32 (KernelBackend::fromHost) and every value it returns
// is a binary32, so nothing is lost on the way.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tapecheck/conformance/tensor_data.h"

namespace tapecheck::conformance::wire {

// The first byte of a body.
enum class Kind : std::uint8_t {
  // run -> worker
  Reset = 1,  // a fresh, empty device tape (no reply)
  Leaf,       // tensor, requiresGrad -> NodeId
  Value,      // NodeId -> tensor
  Size,       // -> u64
  Op,         // OpCode, arguments -> NodeId
  Backward,   // NodeId, seed tensor -> tensors
  // worker -> run
  Ready,      // description: the worker loaded the kernels and waits for requests
  Call,       // entry, dims, returned: a kernel call starts or returned (KernelCallObserver)
  Reply,      // ok, result or error message, then the tape's kernel fault if it has a new one
};

enum class OpCode : std::uint8_t {
  SoftmaxLast,
  LogSoftmaxLast,
  TopKMask,
  LayerNorm,
  BatchNorm,
  CrossEntropy,
  Distill,
};

class Writer {
 public:
  explicit Writer(Kind kind) { u8(static_cast<std::uint8_t>(kind)); }
  Writer& u8(std::uint8_t v) { return raw(&v, sizeof v); }
  Writer& u64(std::uint64_t v) { return raw(&v, sizeof v); }
  Writer& f64(double v) { return raw(&v, sizeof v); }
  Writer& str(const std::string& s);
  Writer& shape(const Shape& s);
  Writer& tensor(const TensorData& t);  // values rounded to binary32
  const std::string& body() const { return body_; }

 private:
  Writer& raw(const void* p, std::size_t n);
  std::string body_;
};

// Reads a body; any read past its end makes ok() false and yields zeros from then on.
class Reader {
 public:
  explicit Reader(const std::string& body) : p_(body.data()), end_(body.data() + body.size()) {}
  std::uint8_t u8();
  std::uint64_t u64();
  double f64();
  std::string str();
  Shape shape();
  TensorData tensor();
  bool ok() const { return ok_; }
  bool atEnd() const { return p_ == end_; }

 private:
  bool raw(void* out, std::size_t n);
  const char* p_;
  const char* end_;
  bool ok_ = true;
};

// Writes one frame, however long the socket takes to accept it. False when the peer is gone
// (no SIGPIPE is raised).
bool sendFrame(int fd, const std::string& body);

// Reads frames from a socket, up to a deadline.
class FrameReader {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Status { Frame, Closed, TimedOut };

  explicit FrameReader(int fd) : fd_(fd) {}
  // The next frame's body into `body`; Closed when the peer closed the socket or it failed.
  Status next(std::string& body, Clock::time_point deadline = Clock::time_point::max());

 private:
  bool takeFrame(std::string& body);
  int fd_;
  std::string buffer_;
};

}  // namespace tapecheck::conformance::wire
