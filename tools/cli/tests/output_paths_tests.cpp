// Output path probes: what they accept, what they refuse with the OS's reason, and that they leave
// nothing behind either way.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "output_paths.h"

using namespace tapecheck::cli;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::size_t entries(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

std::string readAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("a new file in an existing folder is accepted and not left behind", "[paths]") {
  TempDir tmp("tapecheck-cli-probe-new");
  CHECK(probeOutputFile("--json", (tmp.path / "report.json").string()));
  CHECK(entries(tmp.path) == 0);
}

TEST_CASE("an existing file is accepted and keeps its contents", "[paths]") {
  TempDir tmp("tapecheck-cli-probe-existing");
  std::ofstream(tmp.path / "old.xml") << "previous";
  CHECK(probeOutputFile("--junit", (tmp.path / "old.xml").string()));
  CHECK(readAll(tmp.path / "old.xml") == "previous");
}

TEST_CASE("a file in a missing folder is refused with the path and the reason", "[paths]") {
  TempDir tmp("tapecheck-cli-probe-nofolder");
  const std::string path = (tmp.path / "missing" / "r.json").string();
  const tapecheck::Status s = probeOutputFile("--json", path);
  REQUIRE_FALSE(s);
  CHECK(s.message() == "cannot write --json " + path + ": No such file or directory");
  CHECK(entries(tmp.path) == 0);
}

TEST_CASE("a folder given as an output file is refused", "[paths]") {
  TempDir tmp("tapecheck-cli-probe-isdir");
  const tapecheck::Status s = probeOutputFile("--junit", tmp.path.string());
  REQUIRE_FALSE(s);
  CHECK(s.message() == "cannot write --junit " + tmp.path.string() + ": Is a directory");
}

TEST_CASE("a missing nested output folder is accepted and nothing of it is left", "[paths]") {
  TempDir tmp("tapecheck-cli-probe-nested");
  CHECK(probeOutputDir("--out", (tmp.path / "a" / "b" / "c").string()));
  CHECK(probeOutputDir("--out", (tmp.path / "x" / "y").string() + "/"));
  CHECK(entries(tmp.path) == 0);
}

TEST_CASE("an existing output folder is accepted and left as it was", "[paths]") {
  TempDir tmp("tapecheck-cli-probe-folder");
  std::ofstream(tmp.path / "keep") << "k";
  CHECK(probeOutputDir("--out", tmp.path.string()));
  CHECK(entries(tmp.path) == 1);
}

TEST_CASE("an output folder below a file is refused", "[paths]") {
  TempDir tmp("tapecheck-cli-probe-belowfile");
  std::ofstream(tmp.path / "file") << "x";
  const std::string path = (tmp.path / "file" / "below").string();
  const tapecheck::Status s = probeOutputDir("--out", path);
  REQUIRE_FALSE(s);
  CHECK(s.message() == "cannot write --out " + path + ": Not a directory");
  CHECK_FALSE(probeOutputDir("--out", (tmp.path / "file").string()));
  CHECK(entries(tmp.path) == 1);
}

TEST_CASE("a folder where the kernel allows no new entry is refused", "[paths]") {
  if (!fs::is_directory("/proc/self")) return;  // Linux's /proc only
  const tapecheck::Status dir = probeOutputDir("--out", "/proc/tapecheck-probe/x");
  REQUIRE_FALSE(dir);
  CHECK_THAT(dir.message(), Catch::StartsWith("cannot write --out /proc/tapecheck-probe/x: "));
  CHECK_FALSE(probeOutputFile("--json", "/proc/tapecheck-probe.json"));
  CHECK_FALSE(fs::exists("/proc/tapecheck-probe"));
}

TEST_CASE("an output file gets exactly the text", "[paths]") {
  TempDir tmp("tapecheck-cli-write");
  REQUIRE(writeOutputFile((tmp.path / "out.txt").string(), "line 1\nline 2\n"));
  CHECK(readAll(tmp.path / "out.txt") == "line 1\nline 2\n");
  const tapecheck::Status s = writeOutputFile((tmp.path / "no" / "out.txt").string(), "x");
  REQUIRE_FALSE(s);
  CHECK_THAT(s.message(), Catch::EndsWith(": No such file or directory"));
}
