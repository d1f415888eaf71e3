#include "output_paths.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace tapecheck::cli {
namespace {

namespace fs = std::filesystem;

Error cannot(const std::string& option, const std::string& path, const std::string& why) {
  return Error{"cannot write " + option + " " + path + ": " + why};
}

std::string osReason(int error) { return std::strerror(error); }

// Creates a uniquely named file in `dir` and removes it: the proof that files can be made there.
Status probeNewFileIn(const std::string& option, const std::string& path, const fs::path& dir) {
  std::string name = (dir / ".tapecheck-write-probe-XXXXXX").string();
  std::vector<char> buffer(name.begin(), name.end());
  buffer.push_back('\0');
  const int fd = ::mkstemp(buffer.data());
  if (fd < 0) return cannot(option, path, osReason(errno));
  ::close(fd);
  ::unlink(buffer.data());
  return okStatus();
}

}  // namespace

Status probeOutputFile(const std::string& option, const std::string& path) {
  if (path.empty()) return cannot(option, "''", "empty path");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return cannot(option, path, osReason(EISDIR));
    const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return cannot(option, path, osReason(errno));
    ::close(fd);
    return okStatus();
  }
  if (errno != ENOENT) return cannot(option, path, osReason(errno));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0644);
  if (fd < 0) return cannot(option, path, osReason(errno));
  ::close(fd);
  ::unlink(path.c_str());
  return okStatus();
}

Status probeOutputDir(const std::string& option, const std::string& path) {
  if (path.empty()) return cannot(option, "''", "empty path");
  std::error_code ec;
  fs::path dir = fs::absolute(path, ec).lexically_normal();
  if (ec) return cannot(option, path, ec.message());
  if (dir.filename().empty() && dir.has_parent_path() && dir != dir.root_path())
    dir = dir.parent_path();  // "out/" names the folder "out"
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return cannot(option, path, osReason(ENOTDIR));
    return probeNewFileIn(option, path, dir);
  }
  // The missing folders, outermost first; each is made, the probe runs, and they are removed in
  // the reverse order whatever happened.
  std::vector<fs::path> missing;
  for (fs::path p = dir; !p.empty(); p = p.parent_path()) {
    if (::stat(p.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return cannot(option, path, p.string() + " is not a folder");
      break;
    }
    if (errno != ENOENT) return cannot(option, path, osReason(errno));
    missing.insert(missing.begin(), p);
    if (p == p.root_path()) break;
  }
  std::vector<fs::path> made;
  Status result = okStatus();
  for (const fs::path& p : missing) {
    if (::mkdir(p.c_str(), 0777) != 0) {
      result = cannot(option, path, osReason(errno));
      break;
    }
    made.push_back(p);
  }
  if (result) result = probeNewFileIn(option, path, dir);
  for (auto it = made.rbegin(); it != made.rend(); ++it) ::rmdir(it->c_str());
  return result;
}

Status writeOutputFile(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY | O_CLOEXEC, 0644);
  if (fd < 0) return Error{"cannot write " + path + ": " + osReason(errno)};
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      ::close(fd);
      return Error{"cannot write " + path + ": " + osReason(error)};
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) return Error{"cannot write " + path + ": " + osReason(errno)};
  return okStatus();
}

}  // namespace tapecheck::cli
