// SHA-256 (FIPS 180-4), self-contained: the digests a certificate records (the kernels' file,
// the golden-vector corpus, the certificate itself).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tapecheck/result.h"

namespace tapecheck::certify {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  std::array<std::uint8_t, 32> digest();  // finishes; the object is then spent
  std::string hexDigest();                // lower-case, 64 characters

 private:
  void compress(const std::uint8_t* block);
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t totalBytes_ = 0;
};

std::string sha256Hex(std::string_view bytes);
// The digest of a file's bytes; an Error naming the file when it cannot be read.
Result<std::string> sha256File(const std::string& path);

}  // namespace tapecheck::certify
