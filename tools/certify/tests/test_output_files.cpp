#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "tapecheck/certify/output_files.h"
#include "tapecheck/certify/sha256.h"

using namespace tapecheck::certify;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) : path(fs::temp_directory_path() / name) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void writeText(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("the certificate folder gets three complete files and no temporary", "[files]") {
  TempDir tmp("tapecheck-certify-test-write");
  const fs::path out = tmp.path / "nested" / "out";
  REQUIRE(writeCertificateDir(out.string(), "{\"a\": 1}\n", "<p>hi</p>"));
  CHECK(readFileText((out / "certificate.json").string()).value() == "{\"a\": 1}\n");
  CHECK(readFileText((out / "report.html").string()).value() == "<p>hi</p>");
  CHECK(readFileText((out / "certificate.sha256").string()).value() ==
        sha256Hex("{\"a\": 1}\n") + "  certificate.json\n");
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(out)) {
    ++files;
    CHECK(entry.path().filename().string().find(".tmp-") == std::string::npos);
  }
  CHECK(files == 3);
}

TEST_CASE("a certificate folder that is a file is refused", "[files]") {
  TempDir tmp("tapecheck-certify-test-outfile");
  writeText(tmp.path / "file", "x");
  CHECK_FALSE(writeCertificateDir((tmp.path / "file").string(), "{}", ""));
}

TEST_CASE("the corpus digest covers sorted paths and contents", "[files]") {
  TempDir tmp("tapecheck-certify-test-corpus");
  const fs::path root = tmp.path / "golden";
  writeText(root / "b.json", "B");
  writeText(root / "a" / "x.json", "X");
  auto first = hashCorpus(root.string());
  REQUIRE(first);
  CHECK(first.value().files == 2);
  // The documented construction, by hand.
  Sha256 h;
  for (auto [rel, body] : {std::pair<std::string, std::string>{"a/x.json", "X"}, {"b.json", "B"}}) {
    h.update(rel);
    h.update(std::string_view("\0", 1));
    h.update(std::to_string(body.size()));
    h.update(std::string_view("\0", 1));
    h.update(body);
  }
  CHECK(first.value().sha256 == h.hexDigest());

  writeText(root / "b.json", "C");
  auto changed = hashCorpus(root.string());
  REQUIRE(changed);
  CHECK(changed.value().sha256 != first.value().sha256);

  writeText(root / "b.json", "B");
  fs::rename(root / "a" / "x.json", root / "a" / "y.json");
  auto renamed = hashCorpus(root.string());
  REQUIRE(renamed);
  CHECK(renamed.value().sha256 != first.value().sha256);

  fs::create_directories(tmp.path / "empty");
  CHECK_FALSE(hashCorpus((tmp.path / "empty").string()));
  CHECK_FALSE(hashCorpus((tmp.path / "none").string()));
}
