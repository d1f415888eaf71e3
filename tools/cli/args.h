// A small argument parser for the tapecheck subcommands: `--name value` options, `--flag`
// switches and positional words. Unknown options are usage errors (exit 2), never ignored.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tapecheck/result.h"

namespace tapecheck::cli {

inline constexpr int kExitPassed = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

struct ParsedArgs {
  std::map<std::string, std::string> options;  // "--seed" -> "7"
  std::set<std::string> flags;                 // "--verbose"
  std::vector<std::string> positional;

  std::optional<std::string> get(const std::string& name) const {
    auto it = options.find(name);
    if (it == options.end()) return std::nullopt;
    return it->second;
  }
  bool has(const std::string& flag) const { return flags.count(flag) != 0; }
};

struct ArgSpec {
  std::set<std::string> valueOptions;  // options that take a value
  std::set<std::string> flagOptions;   // switches
};

inline Result<ParsedArgs> parseArgs(const std::vector<std::string>& words, const ArgSpec& spec) {
  ParsedArgs out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.rfind("--", 0) != 0 || w == "--") {
      out.positional.push_back(w);
      continue;
    }
    std::string name = w, value;
    bool inlineValue = false;
    if (auto eq = w.find('='); eq != std::string::npos) {
      name = w.substr(0, eq);
      value = w.substr(eq + 1);
      inlineValue = true;
    }
    if (spec.flagOptions.count(name)) {
      if (inlineValue) return Error{"option " + name + " takes no value"};
      out.flags.insert(name);
    } else if (spec.valueOptions.count(name)) {
      if (!inlineValue) {
        if (i + 1 >= words.size()) return Error{"option " + name + " needs a value"};
        value = words[++i];
      }
      if (out.options.count(name)) return Error{"option " + name + " given twice"};
      out.options[name] = value;
    } else {
      return Error{"unknown option " + name};
    }
  }
  return out;
}

// Parses an unsigned decimal integer option; a usage error otherwise.
inline Result<std::uint64_t> parseUnsigned(const std::string& option, const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 19)
    return Error{"option " + option + " needs an unsigned integer, got '" + text + "'"};
  return static_cast<std::uint64_t>(std::stoull(text));
}

// --shard I/N: one of N deterministic parts of a run, 0 <= I < N < 2^32.
struct ShardOption {
  std::uint32_t index = 0, count = 1;
};
inline Result<ShardOption> parseShard(const std::string& text) {
  const Error bad{"option --shard needs I/N with 0 <= I < N, got '" + text + "'"};
  const auto slash = text.find('/');
  if (slash == std::string::npos) return bad;
  auto index = parseUnsigned("--shard", text.substr(0, slash));
  auto count = parseUnsigned("--shard", text.substr(slash + 1));
  if (!index || !count || count.value() == 0 || index.value() >= count.value() ||
      count.value() > 0xFFFFFFFFu)
    return bad;
  return ShardOption{static_cast<std::uint32_t>(index.value()),
                     static_cast<std::uint32_t>(count.value())};
}

// --jobs N: worker threads, 1..1024 (more than any machine this runs on; beyond it a typo).
inline Result<unsigned> parseJobs(const std::string& text) {
  TAPECHECK_TRY(v, parseUnsigned("--jobs", text));
  if (v < 1 || v > 1024)
    return Error{"option --jobs needs a thread count from 1 to 1024, got '" + text + "'"};
  return static_cast<unsigned>(v);
}

}  // namespace tapecheck::cli
