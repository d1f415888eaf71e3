#include "tapecheck/vectors/torchlean_stream.h"

#include <cstdint>
#include <cstring>

#include "torchlean_words.h"

namespace tapecheck::vectors {

namespace {

// Reads little-endian fields off the front of the bytes, keeping the offset for messages.
class Cursor {
 public:
  explicit Cursor(const std::string& bytes) : bytes_(bytes) {}

  std::size_t offset() const { return pos_; }
  std::size_t remaining() const { return bytes_.size() - pos_; }

  bool u64(std::uint64_t& out) {
    if (remaining() < 8) return false;
    out = 0;
    for (int i = 7; i >= 0; --i)
      out = (out << 8) | static_cast<unsigned char>(bytes_[pos_ + static_cast<std::size_t>(i)]);
    pos_ += 8;
    return true;
  }
  std::uint32_t u32() {  // the caller has checked remaining()
    std::uint32_t out = 0;
    for (int i = 3; i >= 0; --i)
      out = (out << 8) | static_cast<unsigned char>(bytes_[pos_ + static_cast<std::size_t>(i)]);
    pos_ += 4;
    return out;
  }
  void skip(std::size_t n) { pos_ += n; }

 private:
  const std::string& bytes_;
  std::size_t pos_ = 0;
};

// The number of elements of a shape, or false when it exceeds 2^64 - 1 (TorchLean's sizes are
// unbounded naturals, so a saturated product would wrongly agree with a count of 2^64 - 1).
bool exactSize(const Shape& shape, std::uint64_t& out) {
  out = 1;
  for (std::uint64_t d : shape)
    if (d == 0) {
      out = 0;
      return true;
    }
  for (std::uint64_t d : shape) {
    if (out > UINT64_MAX / d) return false;
    out *= d;
  }
  return true;
}

}  // namespace

Result<std::vector<conformance::TensorData>> parseFloat32Stream(const std::string& bytes,
                                                                const std::string& label) {
  const std::size_t magicSize = std::strlen(kFloat32StreamMagic);
  if (bytes.compare(0, magicSize, kFloat32StreamMagic) != 0)
    return Error{label + ": not a TLSF32B stream (it does not start with the magic 'TLSF32B')"};
  Cursor in(bytes);
  in.skip(magicSize);
  auto truncated = [&](const std::string& where, const std::string& what, std::size_t need) {
    return Error{label + ": " + where + "truncated at byte " + std::to_string(in.offset()) +
                 ": " + what + " needs " + std::to_string(need) + " bytes, " +
                 std::to_string(in.remaining()) + " remain"};
  };
  std::uint64_t version = 0, count = 0;
  if (!in.u64(version)) return truncated("", "the version", 8);
  if (version != kFloat32StreamVersion)
    return Error{label + ": unsupported TLSF32B version " + std::to_string(version) +
                 " (this reader knows version " + std::to_string(kFloat32StreamVersion) + ")"};
  if (!in.u64(count)) return truncated("", "the tensor count", 8);

  std::vector<conformance::TensorData> out;
  // Each tensor takes at least 16 bytes (rank and element count), so the loop ends on truncation
  // long before a huge count could matter; nothing is reserved from the count.
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::string where = "tensor " + std::to_string(i) + ": ";
    const std::size_t start = in.offset();
    std::uint64_t rank = 0;
    if (!in.u64(rank)) return truncated(where, "the rank", 8);
    if (rank > in.remaining() / 8)
      return truncated(where, "a shape of rank " + std::to_string(rank),
                       static_cast<std::size_t>(rank > SIZE_MAX / 8 ? SIZE_MAX : rank * 8));
    conformance::TensorData td;
    td.shape.reserve(static_cast<std::size_t>(rank));
    for (std::uint64_t d = 0; d < rank; ++d) {
      std::uint64_t dim = 0;
      in.u64(dim);  // the rank check above guarantees the bytes
      td.shape.push_back(dim);
    }
    std::uint64_t elements = 0;
    if (!in.u64(elements)) return truncated(where, "the element count", 8);
    std::uint64_t size = 0;
    const bool fits = exactSize(td.shape, size);
    if (!fits || elements != size)
      return Error{label + ": " + where + "(byte " + std::to_string(start) + ") element count " +
                   std::to_string(elements) + " disagrees with shape " + toString(td.shape) +
                   (fits ? " of " + std::to_string(size) + " elements"
                         : ", whose size exceeds 2^64 - 1")};
    if (elements > in.remaining() / 4)
      return truncated(where, "the payload of " + std::to_string(elements) + " binary32 values",
                       static_cast<std::size_t>(elements > SIZE_MAX / 4 ? SIZE_MAX : elements * 4));
    td.values.reserve(static_cast<std::size_t>(elements));
    for (std::uint64_t k = 0; k < elements; ++k)
      td.values.push_back(torchlean::binary32Value(in.u32()));
    out.push_back(std::move(td));
  }
  if (in.remaining() != 0)
    return Error{label + ": " + std::to_string(in.remaining()) +
                 " trailing bytes after the last tensor (byte " + std::to_string(in.offset()) +
                 ")"};
  return out;
}

}  // namespace tapecheck::vectors
