#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include "tapecheck/certify/sha256.h"

using namespace tapecheck::certify;

TEST_CASE("SHA-256 matches the FIPS 180-4 example digests", "[sha256]") {
  CHECK(sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
                  "klmnopqrlmnopqrsmnopqrstnopqrstu") ==
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST_CASE("SHA-256 of a million 'a' matches the FIPS 180-4 digest", "[sha256]") {
  Sha256 h;
  const std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i) h.update(chunk);
  CHECK(h.hexDigest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256 does not depend on how the input is split", "[sha256]") {
  std::string text;
  for (int i = 0; i < 300; ++i) text.push_back(static_cast<char>(i * 7 + 3));
  const std::string whole = sha256Hex(text);
  for (std::size_t split : {0u, 1u, 55u, 56u, 63u, 64u, 65u, 128u, 299u, 300u}) {
    Sha256 h;
    h.update(std::string_view(text).substr(0, split));
    h.update(std::string_view(text).substr(split));
    CHECK(h.hexDigest() == whole);
  }
  // Lengths around the padding boundary, against one-shot hashing of the same bytes.
  CHECK(sha256Hex(std::string(55, 'x')) != sha256Hex(std::string(56, 'x')));
}

TEST_CASE("sha256File hashes a file's bytes and names a missing file", "[sha256]") {
  const std::string path = "sha256_test_file.bin";
  {
    std::ofstream out(path, std::ios::binary);
    out << "abc";
  }
  auto digest = sha256File(path);
  REQUIRE(digest);
  CHECK(digest.value() == sha256Hex("abc"));
  std::remove(path.c_str());
  auto missing = sha256File("no/such/file.so");
  REQUIRE_FALSE(missing);
  CHECK(missing.message().find("no/such/file.so") != std::string::npos);
}
