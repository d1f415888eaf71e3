// Files a certification reads and writes: the golden-vector corpus digest, and the certificate
// directory, written under temporary names and renamed into place only when every file is
// complete (so no partial certificate is ever left looking finished).
#pragma once

#include <cstdint>
#include <string>

#include "tapecheck/result.h"

namespace tapecheck::certify {

struct CorpusDigest {
  std::string sha256;
  std::uint64_t files = 0;
};

// SHA-256 over every regular file under `root` (recursively), in byte order of the path relative
// to root ('/'-separated): for each file, its relative path, a NUL byte, its size in decimal, a
// NUL byte, then its contents. An Error when root is not a readable folder or holds no file.
Result<CorpusDigest> hashCorpus(const std::string& root);

// The detached digest file's text: "<hex>  certificate.json\n" (what `sha256sum -c` reads).
std::string detachedDigestText(const std::string& certificateText);

inline constexpr const char* kCertificateFile = "certificate.json";
inline constexpr const char* kDigestFile = "certificate.sha256";
inline constexpr const char* kReportFile = "report.html";

// Creates `dir` (and parents) if needed, writes the three files under hidden temporary names,
// then renames them into place: report.html, certificate.json, certificate.sha256 last. On any
// error the temporary files are removed and the previous contents of `dir` are untouched
// (save what was already renamed).
Status writeCertificateDir(const std::string& dir, const std::string& certificateText,
                           const std::string& reportHtml);

// Reads a whole file; an Error naming it when it cannot be read.
Result<std::string> readFileText(const std::string& path);

}  // namespace tapecheck::certify
