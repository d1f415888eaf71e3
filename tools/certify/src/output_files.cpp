#include "tapecheck/certify/output_files.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "tapecheck/certify/sha256.h"

namespace tapecheck::certify {
namespace fs = std::filesystem;

Result<CorpusDigest> hashCorpus(const std::string& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return Error{"vector corpus " + root + " is not a folder"};
  std::vector<std::pair<std::string, fs::path>> files;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    files.emplace_back(fs::relative(it->path(), root, ec).generic_string(), it->path());
  }
  if (ec) return Error{"cannot list the vector corpus " + root + ": " + ec.message()};
  if (files.empty()) return Error{"vector corpus " + root + " holds no file"};
  std::sort(files.begin(), files.end());
  Sha256 h;
  for (const auto& [relative, path] : files) {
    TAPECHECK_TRY(bytes, readFileText(path.string()));
    h.update(relative);
    h.update(std::string_view("\0", 1));
    h.update(std::to_string(bytes.size()));
    h.update(std::string_view("\0", 1));
    h.update(bytes);
  }
  return CorpusDigest{h.hexDigest(), files.size()};
}

std::string detachedDigestText(const std::string& certificateText) {
  return sha256Hex(certificateText) + "  " + kCertificateFile + "\n";
}

Result<std::string> readFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot read " + path};
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error{"cannot read " + path};
  return text.str();
}

namespace {

Status writeFile(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error{"cannot write " + path.string()};
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (!out) return Error{"cannot write " + path.string()};
  return okStatus();
}

}  // namespace

Status writeCertificateDir(const std::string& dir, const std::string& certificateText,
                           const std::string& reportHtml) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{"cannot create output folder " + dir + ": " + ec.message()};
  const std::string suffix = ".tmp-" + std::to_string(::getpid());
  const std::vector<std::pair<std::string, std::string>> files = {
      {kReportFile, reportHtml},
      {kCertificateFile, certificateText},
      {kDigestFile, detachedDigestText(certificateText)},
  };
  std::vector<fs::path> temps;
  auto cleanup = [&] {
    for (const fs::path& t : temps) fs::remove(t, ec);
  };
  for (const auto& [name, bytes] : files) {
    const fs::path temp = fs::path(dir) / ("." + name + suffix);
    temps.push_back(temp);
    if (Status s = writeFile(temp, bytes); !s) {
      cleanup();
      return s;
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    fs::rename(temps[i], fs::path(dir) / files[i].first, ec);
    if (ec) {
      const std::string message = "cannot rename " + temps[i].string() + ": " + ec.message();
      cleanup();
      return Error{message};
    }
  }
  return okStatus();
}

}  // namespace tapecheck::certify
