// What a Lean 4 source file names, as far as the TorchLean manifest check needs it: a small lexer
// (comments, string and char literals, interpolated strings, dotted identifiers, projections)
// and the commands that change name resolution (`open`, `namespace`, `export`). It does not
// elaborate: it reports every name as written, and the check (check_lean_api.cpp) decides which
// could be TorchLean's.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace tapecheck::lean_api {

// A name as written, with its line.
struct Name {
  std::string text;
  int line = 0;
};

// `open NS`, `open NS (a b)`, `open NS hiding a`, `open NS renaming a → b`, `open scoped NS`.
struct Open {
  std::string ns;
  bool onlyListed = false;          // the `(a b)` form: only these names become reachable
  std::vector<std::string> listed;  // a, b
  int line = 0;
};

struct LeanNames {
  std::vector<Name> qualified;     // identifiers as written, dotted or not (binders included)
  std::vector<Name> methods;       // `.m` after a value: `x.m`'s m, `(e).m`, `⟨..⟩.m`
  std::vector<Name> leadingDots;   // `.c` where the expected type picks the namespace
  std::vector<Open> opens;
  std::vector<Name> namespaces;    // `namespace X`, `export X`, `section`s are not names
  std::set<std::string> declared;  // full names the file itself declares (defs, structures,
                                   // their fields, inductive constructors)
};

// Scans Lean source; an error (an unterminated comment or string) is returned as a message.
struct ScanResult {
  LeanNames names;
  std::string error;
};
ScanResult scanLean(const std::string& source);

}  // namespace tapecheck::lean_api
