#include "tapecheck/certify/failure_files.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace tapecheck::certify {
namespace fs = std::filesystem;

Result<std::vector<std::string>> copyFailureFiles(const std::string& from, const std::string& to) {
  std::vector<std::string> names;
  std::error_code ec;
  if (from.empty() || !fs::is_directory(from, ec)) return names;
  for (fs::directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec)) names.push_back(it->path().filename().string());
  if (ec) return Error{"cannot list the failure files in " + from + ": " + ec.message()};
  std::sort(names.begin(), names.end());
  if (names.empty()) return names;
  fs::create_directories(to, ec);
  if (ec) return Error{"cannot create " + to + ": " + ec.message()};
  for (const std::string& name : names) {
    fs::copy_file(fs::path(from) / name, fs::path(to) / name, fs::copy_options::overwrite_existing,
                  ec);
    if (ec) return Error{"cannot copy " + (fs::path(from) / name).string() + " to " + to + ": " +
                         ec.message()};
  }
  return names;
}

namespace {

void relocate(conformance::CaseExample& e, const std::string& from, const std::string& to,
              const std::vector<std::string>& names) {
  if (e.valuesFile.empty()) return;
  const fs::path file(e.valuesFile);
  const std::string name = file.filename().string();
  if (!std::binary_search(names.begin(), names.end(), name)) return;
  if (!from.empty() && file.parent_path() != fs::path(from)) return;
  const std::string moved = (fs::path(to) / name).string();
  for (std::size_t at = e.reproducer.find(e.valuesFile); at != std::string::npos;
       at = e.reproducer.find(e.valuesFile, at + moved.size()))
    e.reproducer.replace(at, e.valuesFile.size(), moved);
  e.valuesFile = moved;
}

}  // namespace

void relocateFailureFiles(Certificate& cert, const std::string& from, const std::string& to,
                          const std::vector<std::string>& names) {
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  for (OpRecord& op : cert.ops)
    for (PassRecord& p : op.passes) {
      for (conformance::CaseExample& e : p.examples) relocate(e, from, to, sorted);
      if (p.worst) relocate(*p.worst, from, to, sorted);
    }
}

}  // namespace tapecheck::certify
