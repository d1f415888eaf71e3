// check_lean_api --exporter TapecheckExport.lean --manifest torchlean-api.txt
//                --lakefile lakefile.lean --toolchain lean-toolchain [--sample DIR]
//
// The TorchLean exporter cannot be compiled here (no Lean toolchain), so what it names is checked
// against vectors/lean/torchlean-api.txt instead, and the pins against each other:
//   - every TorchLean declaration the exporter names is listed: a dotted name whose root is
//     neither Lean's (Lean, Json, IO, List, ...) nor the exporter's own; a name made reachable by
//     `open NS (a b)`; a `.field` on a value, unless Lean's or the exporter's own. A whole-
//     namespace `open` of TorchLean, a `namespace`/`export` of one, and a leading-dot name
//     (`.c`, resolved in the expected type's namespace) other than Lean's constructors are
//     refused, since the names they make reachable cannot be listed;
//   - every listed declaration is used, and has a file and a signature;
//   - the manifest's commit is the lakefile's `require TorchLean ... @ "<commit>"` and the
//     exporter's `torchLeanCommit`; its repository is the lakefile's; its toolchain is
//     lean-toolchain's;
//   - with --sample, every file of DIR is in the exporter's output layout (compact JSON, keys in
//     sorted order, as Lean.Json.compress writes it), with the exporter's generator, version and
//     header line for the pinned commit.
// Exit 0: all hold; 1: something does not (each printed); 2: usage or an unreadable file.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api_manifest.h"
#include "lean_scan.h"

namespace fs = std::filesystem;
using namespace tapecheck::lean_api;

namespace {

// Roots of Lean core and Std names the exporter may write qualified.
const std::set<std::string> kCoreRoots = {
    "Lean", "Json",  "IO",     "System", "String", "List",   "Array",  "Nat",   "Int",
    "Float", "Float32", "UInt8", "UInt32", "UInt64", "Except", "Option", "Bool", "Char",
    "Std",  "Id",    "ByteArray", "Fin", "Prod", "Unit", "EIO", "BaseIO", "Decidable"};

// Lean core methods (`x.m`) the exporter calls. A method not here, not the exporter's own and
// not a listed TorchLean declaration fails the check: if it is Lean's, add it here.
const std::set<std::string> kCoreMethods = {
    "getObjVal?", "getObjValD", "getObjValAs?", "getArr?", "getNat?", "getInt?", "getStr?",
    "getBool?", "getNum?", "setObjVal!", "compress", "pretty", "toList", "toArray", "mapM",
    "map", "filter", "filterMap", "find?", "length", "zip", "foldl", "foldr", "push", "size",
    "startsWith", "toOption", "isSome", "isNone", "getD", "get?", "fileName", "contains",
    "append", "reverse", "isEmpty", "toNat", "toFloat", "toString"};

// Constructors a leading-dot name may be in the exporter: Lean's own (Except, Option, Json, Bool).
const std::set<std::string> kCoreLeadingDots = {"ok",  "error", "some", "none",  "str",  "arr",
                                                "num", "null",  "obj",  "bool", "true", "false"};

// TorchLean's top-level namespaces, besides the roots of the manifest's declarations.
const std::set<std::string> kTorchLeanRoots = {"Spec", "TorchLean", "Activation", "Runtime", "NN",
                                               "MathFunctions"};

std::string rootOf(const std::string& name) { return name.substr(0, name.find('.')); }
std::string lastOf(const std::string& name) {
  const auto dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}
std::vector<std::string> components(const std::string& name) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto dot = name.find('.', start);
    out.push_back(name.substr(start, dot - start));
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}
bool startsLowercase(const std::string& name) {
  return !name.empty() && ((name[0] >= 'a' && name[0] <= 'z') || name[0] == '_');
}

bool readFile(const std::string& path, std::string& out) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// The string a `def NAME : String := "..."` of the exporter gives, or "".
std::string stringConstant(const std::string& source, const std::string& name) {
  std::smatch m;
  if (std::regex_search(source, m,
                        std::regex("def\\s+" + name + "\\s*:\\s*String\\s*:=\\s*\"([^\"]*)\"")))
    return m[1];
  return "";
}

class Checker {
 public:
  Checker(std::string exporterPath, const ApiManifest& manifest)
      : exporter_(std::move(exporterPath)), manifest_(manifest) {
    for (const auto& [name, entry] : manifest_.entries) torchLeanRoots_.insert(rootOf(name));
    torchLeanRoots_.insert(kTorchLeanRoots.begin(), kTorchLeanRoots.end());
  }

  void fail(const std::string& where, const std::string& what) {
    std::printf("check_lean_api: %s: %s\n", where.c_str(), what.c_str());
    ++violations_;
  }
  int violations() const { return violations_; }

  void checkNames(const LeanNames& names) {
    std::set<std::string> localRoots, localLasts;
    for (const auto& d : names.declared) {
      localRoots.insert(rootOf(d));
      localLasts.insert(lastOf(d));
    }
    for (const auto& ns : names.namespaces) {
      if (torchLeanRoots_.count(rootOf(ns.text)))
        fail(at(ns.line), "`namespace`/`export` " + ns.text +
                              " makes TorchLean's " + ns.text + ".* reachable unqualified");
      else
        localRoots.insert(rootOf(ns.text));
    }

    // Names reachable through `open NS (a b)`: a -> NS.a.
    std::map<std::string, std::string> opened;
    for (const auto& o : names.opens) {
      const std::string root = rootOf(o.ns);
      if (kCoreRoots.count(root) || localRoots.count(root)) continue;
      if (!o.onlyListed) {
        fail(at(o.line), "`open " + o.ns + "` makes every declaration of TorchLean's " + o.ns +
                             " reachable; open only named ones, `open " + o.ns + " (a b)`, or " +
                             "write them qualified");
        continue;
      }
      for (const auto& name : o.listed) {
        opened[name] = o.ns + "." + name;
        reference(o.ns + "." + name, o.line, "opened by `open " + o.ns + " (...)`");
      }
    }

    for (const auto& n : names.qualified) {
      const auto parts = components(n.text);
      const std::string& root = parts[0];
      if (auto it = opened.find(root); it != opened.end()) {
        reference(it->second + n.text.substr(root.size()), n.line, "through its `open`");
        continue;
      }
      if (parts.size() == 1) continue;  // a plain name: a binder, a local or Lean's
      if (localRoots.count(root) || kCoreRoots.count(root)) continue;
      if (startsLowercase(root)) {      // a value: x.f.g is field access
        for (std::size_t i = 1; i < parts.size(); ++i) method(parts[i], n.line, localLasts);
        continue;
      }
      reference(n.text, n.line, "");
    }
    for (const auto& m : names.methods) method(m.text, m.line, localLasts);
    for (const auto& d : names.leadingDots)
      if (!kCoreLeadingDots.count(d.text) && !localLasts.count(d.text))
        fail(at(d.line), "leading-dot name ." + d.text +
                             " resolves in its expected type's namespace, which may be " +
                             "TorchLean's; write it qualified");

    for (const auto& [name, entry] : manifest_.entries)
      if (!used_.count(name))
        fail("torchlean-api.txt:" + std::to_string(entry.line),
             "lists " + name + ", which the exporter does not use");
  }

 private:
  std::string at(int line) const { return exporter_ + ":" + std::to_string(line); }

  void reference(const std::string& full, int line, const std::string& how) {
    if (manifest_.entries.count(full)) {
      used_.insert(full);
      return;
    }
    fail(at(line), "names TorchLean declaration " + full + (how.empty() ? "" : " (" + how + ")") +
                       ", which torchlean-api.txt does not list");
  }

  void method(const std::string& m, int line, const std::set<std::string>& localLasts) {
    bool listed = false;
    for (const auto& [name, entry] : manifest_.entries)
      if (lastOf(name) == m) {
        used_.insert(name);
        listed = true;
      }
    if (listed || kCoreMethods.count(m) || localLasts.count(m)) return;
    fail(at(line), "." + m + " is neither a Lean core method this check knows, nor the " +
                       "exporter's own, nor a declaration torchlean-api.txt lists");
  }

  std::string exporter_;
  const ApiManifest& manifest_;
  std::set<std::string> torchLeanRoots_;
  std::set<std::string> used_;
  int violations_ = 0;
};

// The lakefile's `require TorchLean from git "URL" @ "REV"`.
bool lakefileRequire(const std::string& text, std::string& url, std::string& rev) {
  std::smatch m;
  if (!std::regex_search(text, m,
                         std::regex("require\\s+TorchLean\\s+from\\s+git\\s+\"([^\"]+)\"\\s*@\\s*"
                                    "\"([^\"]+)\"")))
    return false;
  url = m[1];
  rev = m[2];
  return true;
}

// JSON text as Lean.Json.compress writes it: no whitespace outside strings, one line, "\n" last.
std::string compactProblem(const std::string& text) {
  if (text.empty() || text.back() != '\n') return "does not end with a newline";
  bool inString = false;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\') ++i;
      else if (c == '"') inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      return "has whitespace outside strings at byte " + std::to_string(i) +
             " (the exporter writes Json.compress)";
    }
  }
  return "";
}

// Object keys in Lean's order (String's `<`, which is byte order on UTF-8) at every level.
std::string unsortedKey(const nlohmann::ordered_json& j, const std::string& path) {
  if (j.is_object()) {
    std::string prev;
    bool first = true;
    for (const auto& [key, value] : j.items()) {
      if (!first && !(prev < key)) return path + ": key '" + key + "' comes after '" + prev + "'";
      prev = key;
      first = false;
      auto inner = unsortedKey(value, path + "." + key);
      if (!inner.empty()) return inner;
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      auto inner = unsortedKey(j[i], path + "[" + std::to_string(i) + "]");
      if (!inner.empty()) return inner;
    }
  }
  return "";
}

void checkSample(Checker& c, const std::string& dir, const std::string& exporterText,
                 const std::string& commit) {
  const std::string marker = stringConstant(exporterText, "headerMarker");
  const std::string version = stringConstant(exporterText, "exporterVersion");
  std::smatch nameMatch;
  std::string generatorName;
  if (std::regex_search(exporterText, nameMatch,
                        std::regex("\\(\"name\",\\s*Json\\.str\\s*\"([^\"]+)\"\\)")))
    generatorName = nameMatch[1];
  if (marker.empty() || version.empty() || generatorName.empty()) {
    c.fail("exporter", "no headerMarker, exporterVersion or generator name found to check the "
                       "sample against");
    return;
  }
  const std::string headerLine = marker + "TorchLean@" + commit + ".";
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".json") files.push_back(it->path());
  std::sort(files.begin(), files.end());
  if (files.empty()) c.fail(dir, "no sample files");
  for (const auto& p : files) {
    const std::string where = p.string();
    std::string text;
    if (!readFile(p.string(), text)) {
      c.fail(where, "cannot read");
      continue;
    }
    if (auto problem = compactProblem(text); !problem.empty()) c.fail(where, problem);
    nlohmann::ordered_json j;
    try {
      j = nlohmann::ordered_json::parse(text);
    } catch (const std::exception& e) {
      c.fail(where, std::string("not JSON: ") + e.what());
      continue;
    }
    if (auto problem = unsortedKey(j, "$"); !problem.empty()) c.fail(where, problem);
    const nlohmann::ordered_json generator = {
        {"name", generatorName}, {"provenance", "lean:TorchLean@" + commit}, {"version", version}};
    if (!j.is_object() || j.value("schema", "") != "tapecheck-vectors-v1")
      c.fail(where, "schema is not tapecheck-vectors-v1");
    if (!j.contains("generator") || j["generator"] != generator)
      c.fail(where, "generator is not " + generator.dump());
    if (!j.contains("header") || !j["header"].is_array() || j["header"].empty() ||
        j["header"].back() != headerLine)
      c.fail(where, "the last header line is not \"" + headerLine + "\"");
    else
      for (std::size_t i = 0; i + 1 < j["header"].size(); ++i)
        if (j["header"][i].is_string() &&
            j["header"][i].get<std::string>().rfind(marker, 0) == 0)
          c.fail(where, "header line " + std::to_string(i) + " repeats the exporter's marker");
    if (!j.contains("tests") || !j["tests"].is_array() ||
        j.value("numberOfTests", -1) != static_cast<int>(j["tests"].size()))
      c.fail(where, "numberOfTests is not the number of tests");
    else
      for (const auto& t : j["tests"])
        if (t.value("result", "") != "valid" || !t.contains("expected") ||
            !t["expected"].contains("value"))
          c.fail(where, "tcId " + t.value("tcId", nlohmann::ordered_json()).dump() +
                            ": the exporter writes only valid tests with an expected value");
  }
}

int usage(const char* message) {
  std::fprintf(stderr,
               "check_lean_api: %s\nusage: check_lean_api --exporter FILE --manifest FILE "
               "--lakefile FILE --toolchain FILE [--sample DIR]\n",
               message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> args;
  for (int i = 1; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  if (argc % 2 == 0) return usage("options come in pairs");
  for (const char* required : {"--exporter", "--manifest", "--lakefile", "--toolchain"})
    if (!args.count(required)) return usage((std::string("missing ") + required).c_str());
  std::string exporterText, manifestText, lakefileText, toolchainText;
  for (auto [flag, out] : {std::pair{"--exporter", &exporterText}, {"--manifest", &manifestText},
                           {"--lakefile", &lakefileText}, {"--toolchain", &toolchainText}})
    if (!readFile(args[flag], *out)) {
      std::fprintf(stderr, "check_lean_api: %s: cannot read\n", args[flag].c_str());
      return 2;
    }

  const ScanResult scan = scanLean(exporterText);
  if (!scan.error.empty()) {
    std::fprintf(stderr, "check_lean_api: %s: %s\n", args["--exporter"].c_str(),
                 scan.error.c_str());
    return 2;
  }
  const ManifestResult parsed = parseManifest(manifestText);
  const ApiManifest& manifest = parsed.manifest;
  Checker c(args["--exporter"], manifest);
  for (const auto& e : parsed.errors) c.fail(args["--manifest"], e);

  c.checkNames(scan.names);

  std::string url, rev;
  if (!lakefileRequire(lakefileText, url, rev)) {
    c.fail(args["--lakefile"], "no `require TorchLean from git \"URL\" @ \"COMMIT\"`");
  } else {
    if (rev != manifest.commit)
      c.fail(args["--lakefile"], "requires TorchLean @ " + rev + " but torchlean-api.txt lists "
                                     "declarations at " + manifest.commit);
    if (url != manifest.repository)
      c.fail(args["--lakefile"], "requires TorchLean from " + url + " but torchlean-api.txt "
                                     "names " + manifest.repository);
  }
  const std::string exporterCommit = stringConstant(exporterText, "torchLeanCommit");
  if (exporterCommit != manifest.commit)
    c.fail(args["--exporter"], "torchLeanCommit is '" + exporterCommit +
                                   "' but torchlean-api.txt lists declarations at " +
                                   manifest.commit);
  if (trim(toolchainText) != manifest.toolchain)
    c.fail(args["--toolchain"], "is '" + trim(toolchainText) + "' but torchlean-api.txt names " +
                                    manifest.toolchain);

  if (args.count("--sample")) checkSample(c, args["--sample"], exporterText, manifest.commit);

  std::printf("lean api: %zu TorchLean declarations listed at %s, %zu names and %zu fields "
              "scanned, %d problems\n",
              manifest.entries.size(), manifest.commit.c_str(), scan.names.qualified.size(),
              scan.names.methods.size(), c.violations());
  return c.violations() == 0 ? 0 : 1;
}
