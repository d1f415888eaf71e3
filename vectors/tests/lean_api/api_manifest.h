// vectors/lean/torchlean-api.txt: the TorchLean commit, repository and Lean toolchain the
// exporter is pinned to, and one block per TorchLean declaration it uses (`decl`, `file`,
// optional `context`, `signature`; a line starting with spaces continues the one before).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tapecheck::lean_api {

struct ApiEntry {
  std::string name;
  std::string file;
  std::string context;
  std::string signature;
  int line = 0;
};

struct ApiManifest {
  std::string commit;
  std::string repository;
  std::string toolchain;
  std::map<std::string, ApiEntry> entries;  // by full name
};

struct ManifestResult {
  ApiManifest manifest;
  std::vector<std::string> errors;  // "line N: ..."; a usable manifest has none
};

ManifestResult parseManifest(const std::string& text);

}  // namespace tapecheck::lean_api
