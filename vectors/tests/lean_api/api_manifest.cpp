#include "api_manifest.h"

#include <regex>
#include <sstream>

namespace tapecheck::lean_api {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// "key rest" -> key, rest.
void splitKey(const std::string& line, std::string& key, std::string& rest) {
  const auto space = line.find(' ');
  key = line.substr(0, space);
  rest = space == std::string::npos ? "" : trim(line.substr(space + 1));
}

}  // namespace

ManifestResult parseManifest(const std::string& text) {
  ManifestResult r;
  ApiManifest& m = r.manifest;
  std::istringstream in(text);
  std::string raw;
  int lineNo = 0;
  ApiEntry* current = nullptr;
  std::string* continued = nullptr;  // the field a continuation line extends
  auto error = [&](const std::string& what) {
    r.errors.push_back("line " + std::to_string(lineNo) + ": " + what);
  };
  auto finish = [&] {
    if (!current) return;
    if (current->file.empty()) r.errors.push_back("decl " + current->name + ": no `file` line");
    if (current->signature.empty())
      r.errors.push_back("decl " + current->name + ": no `signature` line");
    current = nullptr;
  };
  while (std::getline(in, raw)) {
    ++lineNo;
    if (trim(raw).empty() || trim(raw)[0] == '#') {
      continued = nullptr;
      continue;
    }
    if (raw[0] == ' ' || raw[0] == '\t') {
      if (!continued) {
        error("a continuation line continues nothing");
        continue;
      }
      *continued += "\n" + trim(raw);
      continue;
    }
    std::string key, rest;
    splitKey(trim(raw), key, rest);
    continued = nullptr;
    if (key == "commit") {
      if (!std::regex_match(rest, std::regex("[0-9a-f]{40}")))
        error("commit must be 40 lowercase hex digits, got '" + rest + "'");
      m.commit = rest;
    } else if (key == "repository") {
      m.repository = rest;
    } else if (key == "toolchain") {
      m.toolchain = rest;
    } else if (key == "decl") {
      finish();
      if (rest.empty() || rest.find(' ') != std::string::npos) {
        error("decl needs one full name");
        continue;
      }
      if (m.entries.count(rest)) {
        error("decl " + rest + " is listed twice");
        continue;
      }
      current = &m.entries[rest];
      current->name = rest;
      current->line = lineNo;
    } else if (key == "file" || key == "context" || key == "signature") {
      if (!current) {
        error("'" + key + "' outside a decl block");
        continue;
      }
      std::string& field = key == "file"      ? current->file
                           : key == "context" ? current->context
                                              : current->signature;
      field = rest;
      continued = &field;
      if (key == "file" && (rest.rfind("NN/", 0) != 0 || rest.size() < 8 ||
                            rest.compare(rest.size() - 5, 5, ".lean") != 0))
        error("decl " + current->name + ": file must be a path NN/....lean in TorchLean");
    } else {
      error("unknown line '" + key + "' (expected commit, repository, toolchain, decl, file, "
                                     "context, signature)");
    }
  }
  finish();
  if (m.commit.empty()) r.errors.push_back("no `commit` line");
  if (m.repository.empty()) r.errors.push_back("no `repository` line");
  if (m.toolchain.empty()) r.errors.push_back("no `toolchain` line");
  return r;
}

}  // namespace tapecheck::lean_api
