#include "wire.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace tapecheck::conformance::wire {

Writer& Writer::raw(const void* p, std::size_t n) {
  if (n == 0) return *this;
  body_.append(static_cast<const char*>(p), n);
  return *this;
}

Writer& Writer::str(const std::string& s) {
  u64(s.size());
  return raw(s.data(), s.size());
}

Writer& Writer::shape(const Shape& s) {
  u64(s.size());
  for (Dim d : s) u64(d);
  return *this;
}

Writer& Writer::tensor(const TensorData& t) {
  shape(t.shape);
  u64(t.values.size());
  std::vector<float> values(t.values.begin(), t.values.end());
  return raw(values.data(), values.size() * sizeof(float));
}

bool Reader::raw(void* out, std::size_t n) {
  // An empty tensor reads zero bytes into a vector whose data() may be null, and memcpy's
  // pointers must never be null, even for zero bytes.
  if (n == 0) return ok_;
  if (!ok_ || static_cast<std::size_t>(end_ - p_) < n) {
    ok_ = false;
    std::memset(out, 0, n);
    return false;
  }
  std::memcpy(out, p_, n);
  p_ += n;
  return true;
}

std::uint8_t Reader::u8() {
  std::uint8_t v;
  raw(&v, sizeof v);
  return v;
}

std::uint64_t Reader::u64() {
  std::uint64_t v;
  raw(&v, sizeof v);
  return v;
}

double Reader::f64() {
  double v;
  raw(&v, sizeof v);
  return v;
}

std::string Reader::str() {
  const std::uint64_t n = u64();
  if (!ok_ || static_cast<std::uint64_t>(end_ - p_) < n) {
    ok_ = false;
    return {};
  }
  std::string s(p_, static_cast<std::size_t>(n));
  p_ += n;
  return s;
}

Shape Reader::shape() {
  const std::uint64_t rank = u64();
  Shape s;
  for (std::uint64_t i = 0; ok_ && i < rank; ++i) s.push_back(u64());
  return s;
}

TensorData Reader::tensor() {
  TensorData t;
  t.shape = shape();
  const std::uint64_t n = u64();
  if (!ok_ || static_cast<std::uint64_t>(end_ - p_) / sizeof(float) < n) {
    ok_ = false;
    return t;
  }
  std::vector<float> values(static_cast<std::size_t>(n));
  raw(values.data(), values.size() * sizeof(float));
  t.values.assign(values.begin(), values.end());
  return t;
}

bool sendFrame(int fd, const std::string& body) {
  const std::uint32_t length = static_cast<std::uint32_t>(body.size());
  std::string frame(reinterpret_cast<const char*>(&length), sizeof length);
  frame += body;
  std::size_t sent = 0;
  while (sent < frame.size()) {
    const ssize_t n = ::send(fd, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

bool FrameReader::takeFrame(std::string& body) {
  std::uint32_t length = 0;
  if (buffer_.size() < sizeof length) return false;
  std::memcpy(&length, buffer_.data(), sizeof length);
  if (buffer_.size() - sizeof length < length) return false;
  body.assign(buffer_, sizeof length, length);
  buffer_.erase(0, sizeof length + length);
  return true;
}

FrameReader::Status FrameReader::next(std::string& body, Clock::time_point deadline) {
  char chunk[1 << 16];
  for (;;) {
    if (takeFrame(body)) return Status::Frame;
    int waitMs = -1;
    if (deadline != Clock::time_point::max()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - Clock::now()).count();
      if (left <= 0) return Status::TimedOut;
      waitMs = static_cast<int>(std::min<long long>(left, INT_MAX));
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, waitMs);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return Status::Closed;
    if (ready == 0) return Status::TimedOut;
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return Status::Closed;
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace tapecheck::conformance::wire
