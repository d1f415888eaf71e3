#include "lean_scan.h"

#include <cstdint>

namespace tapecheck::lean_api {

namespace {

// ---- characters ------------------------------------------------------------------------------

// One UTF-8 code point at `i` (a stray byte counts as itself), and its length in bytes.
std::uint32_t codePoint(const std::string& s, std::size_t i, std::size_t& len) {
  const auto b = static_cast<unsigned char>(s[i]);
  int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
  if (i + static_cast<std::size_t>(n) > s.size()) n = 1;
  std::uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
  for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  len = static_cast<std::size_t>(n);
  return cp;
}

// Lean 4's identifier characters (Lean.isLetterLike, isSubScriptAlnum): ASCII letters and `_`,
// Greek and Coptic except λ Π Σ, extended Greek, letterlike symbols, mathematical alphanumerics.
bool isLetterLike(std::uint32_t c) {
  return (0x3B1 <= c && c <= 0x3C9 && c != 0x3BB) || (0x391 <= c && c <= 0x3A9 && c != 0x3A0 &&
                                                      c != 0x3A3) ||
         (0x3CA <= c && c <= 0x3FB) || (0x1F00 <= c && c <= 0x1FFE) ||
         (0x2100 <= c && c <= 0x214F) || (0x1D49C <= c && c <= 0x1D59F);
}
bool isSubscript(std::uint32_t c) {
  return (0x2080 <= c && c <= 0x2089) || (0x2090 <= c && c <= 0x209C) ||
         (0x1D62 <= c && c <= 0x1D6A);
}
bool isAsciiLetter(std::uint32_t c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
bool isDigit(std::uint32_t c) { return c >= '0' && c <= '9'; }
bool isIdStart(std::uint32_t c) { return isAsciiLetter(c) || c == '_' || isLetterLike(c); }
bool isIdRest(std::uint32_t c) {
  return isIdStart(c) || isDigit(c) || c == '\'' || c == '!' || c == '?' || isSubscript(c);
}

// ---- tokens ----------------------------------------------------------------------------------

enum class Kind { Ident, Method, LeadingDot, Symbol, Number, String };

struct Token {
  Kind kind;
  std::string text;
  int line;
  int column;            // in bytes from the start of the line
  bool firstOnLine;
};

class Lexer {
 public:
  Lexer(const std::string& src, int firstLine) : s_(src), line_(firstLine) {}

  bool run(std::vector<Token>& out, std::string& error) {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\n') {
        ++line_;
        ++i_;
        lineStart_ = i_;
        sawTokenOnLine_ = false;
        spaceBefore_ = true;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
        spaceBefore_ = true;
        continue;
      }
      if (s_.compare(i_, 2, "--") == 0) {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
        continue;
      }
      if (s_.compare(i_, 2, "/-") == 0) {
        if (!blockComment(error)) return false;
        spaceBefore_ = true;
        continue;
      }
      if (c == '"') {
        const bool interpolated =
            !out.empty() && !spaceBefore_ && out.back().kind == Kind::Ident &&
            (out.back().text == "s!" || out.back().text == "m!" || out.back().text == "f!");
        if (!stringLiteral(interpolated, out, error)) return false;
        continue;
      }
      std::size_t len = 0;
      const std::uint32_t cp = codePoint(s_, i_, len);
      if (c == '\'' && !(prevIsIdChar())) {
        if (!charLiteral(error)) return false;
        continue;
      }
      if (c == '`') {  // a name literal (`foo, ``foo) refers to no declaration by itself
        while (i_ < s_.size() && s_[i_] == '`') ++i_;
        skipIdent();
        spaceBefore_ = false;
        continue;
      }
      if (isIdStart(cp) || s_.compare(i_, 2, "\xC2\xAB") == 0) {  // « starts an escaped name
        const std::size_t start = i_;
        skipIdent();
        push(out, Kind::Ident, s_.substr(start, i_ - start), start);
        continue;
      }
      if (isDigit(cp)) {
        const std::size_t start = i_;
        while (i_ < s_.size() && (isDigit(static_cast<unsigned char>(s_[i_])) ||
                                  isAsciiLetter(static_cast<unsigned char>(s_[i_])) ||
                                  s_[i_] == '_' || s_[i_] == '.'))
          ++i_;
        push(out, Kind::Number, s_.substr(start, i_ - start), start);
        continue;
      }
      if (c == '.' && i_ + 1 < s_.size()) {
        std::size_t nlen = 0;
        const std::uint32_t next = codePoint(s_, i_ + 1, nlen);
        if (isIdStart(next)) {
          const std::string& before = out.empty() ? std::string() : out.back().text;
          const bool afterValue = !spaceBefore_ && !out.empty() &&
                                  (before == ")" || before == "]" || before == "}" ||
                                   before == "\xE2\x9F\xA9" /* ⟩ */ ||
                                   before == "\xC2\xB7" /* · */);
          const std::size_t start = i_;
          ++i_;
          const std::size_t nameStart = i_;
          skipIdent(false);
          push(out, afterValue ? Kind::Method : Kind::LeadingDot,
               s_.substr(nameStart, i_ - nameStart), start);
          continue;
        }
        if (isDigit(next)) {  // a projection `.1`: names nothing
          const std::size_t start = i_;
          ++i_;
          while (i_ < s_.size() && isDigit(static_cast<unsigned char>(s_[i_]))) ++i_;
          push(out, Kind::Symbol, s_.substr(start, i_ - start), start);
          continue;
        }
      }
      // Any other character is a symbol of its own (`:=` is kept whole for named arguments).
      const std::size_t start = i_;
      if (s_.compare(i_, 2, ":=") == 0) {
        i_ += 2;
      } else {
        i_ += len;
      }
      push(out, Kind::Symbol, s_.substr(start, i_ - start), start);
    }
    return true;
  }

 private:
  bool prevIsIdChar() const {
    if (i_ == 0 || spaceBefore_) return false;
    std::size_t k = i_ - 1;
    while (k > 0 && (static_cast<unsigned char>(s_[k]) & 0xC0) == 0x80) --k;
    std::size_t len = 0;
    return isIdRest(codePoint(s_, k, len));
  }

  void push(std::vector<Token>& out, Kind kind, std::string text, std::size_t start) {
    out.push_back({kind, std::move(text), line_, static_cast<int>(start - lineStart_),
                   !sawTokenOnLine_});
    sawTokenOnLine_ = true;
    spaceBefore_ = false;
  }

  // An identifier, dotted (`A.b.c`) unless `dotted` is false; `«...»` parts are kept whole.
  void skipIdent(bool dotted = true) {
    for (;;) {
      if (s_.compare(i_, 2, "\xC2\xAB") == 0) {
        const std::size_t close = s_.find("\xC2\xBB", i_);
        i_ = close == std::string::npos ? s_.size() : close + 2;
      } else {
        while (i_ < s_.size()) {
          std::size_t len = 0;
          if (!isIdRest(codePoint(s_, i_, len))) break;
          i_ += len;
        }
      }
      if (!dotted || i_ + 1 >= s_.size() || s_[i_] != '.') return;
      std::size_t len = 0;
      const std::uint32_t next = codePoint(s_, i_ + 1, len);
      if (!isIdStart(next) && s_.compare(i_ + 1, 2, "\xC2\xAB") != 0) return;
      ++i_;
    }
  }

  bool blockComment(std::string& error) {
    const int startLine = line_;
    int depth = 0;
    while (i_ < s_.size()) {
      if (s_.compare(i_, 2, "/-") == 0) {
        ++depth;
        i_ += 2;
      } else if (s_.compare(i_, 2, "-/") == 0) {
        i_ += 2;
        if (--depth == 0) return true;
      } else {
        if (s_[i_] == '\n') {
          ++line_;
          lineStart_ = i_ + 1;
          sawTokenOnLine_ = false;
        }
        ++i_;
      }
    }
    error = "line " + std::to_string(startLine) + ": unterminated comment";
    return false;
  }

  bool charLiteral(std::string& error) {
    const int startLine = line_;
    ++i_;
    if (i_ < s_.size() && s_[i_] == '\\') i_ += 2;
    while (i_ < s_.size() && s_[i_] != '\'' && s_[i_] != '\n') ++i_;
    if (i_ >= s_.size() || s_[i_] != '\'') {
      error = "line " + std::to_string(startLine) + ": unterminated character literal";
      return false;
    }
    ++i_;
    spaceBefore_ = false;
    sawTokenOnLine_ = true;
    return true;
  }

  // A string literal; an interpolated one's `{...}` parts are code, scanned like the rest.
  bool stringLiteral(bool interpolated, std::vector<Token>& out, std::string& error) {
    const int startLine = line_;
    ++i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\') {
        i_ += 2;
        continue;
      }
      if (s_[i_] == '\n') {
        ++line_;
        lineStart_ = i_ + 1;
      }
      if (interpolated && s_[i_] == '{') {
        const std::size_t codeStart = i_ + 1;
        const int codeLine = line_;
        int depth = 1;
        ++i_;
        while (i_ < s_.size() && depth > 0) {
          if (s_[i_] == '{') ++depth;
          if (s_[i_] == '}') --depth;
          if (s_[i_] == '"') {  // a string inside the code part
            ++i_;
            while (i_ < s_.size() && s_[i_] != '"') i_ += s_[i_] == '\\' ? 2 : 1;
          }
          if (depth > 0) ++i_;
        }
        if (i_ >= s_.size()) break;
        const std::string code = s_.substr(codeStart, i_ - codeStart);  // outlives `inner`
        Lexer inner(code, codeLine);
        if (!inner.run(out, error)) return false;
        ++i_;
        continue;
      }
      ++i_;
    }
    if (i_ >= s_.size()) {
      error = "line " + std::to_string(startLine) + ": unterminated string";
      return false;
    }
    ++i_;
    out.push_back({Kind::String, "", line_, 0, !sawTokenOnLine_});
    sawTokenOnLine_ = true;
    spaceBefore_ = false;
    return true;
  }

  const std::string& s_;
  std::size_t i_ = 0;
  std::size_t lineStart_ = 0;
  int line_;
  bool sawTokenOnLine_ = false;
  bool spaceBefore_ = true;
};

bool isDeclarationKeyword(const std::string& t) {
  return t == "def" || t == "abbrev" || t == "theorem" || t == "lemma" || t == "structure" ||
         t == "inductive" || t == "class" || t == "instance" || t == "opaque" || t == "axiom";
}

void declare(LeanNames& names, const std::string& full) {
  names.declared.insert(full);
}

}  // namespace

ScanResult scanLean(const std::string& source) {
  ScanResult result;
  std::vector<Token> tokens;
  Lexer lexer(source, 1);
  if (!lexer.run(tokens, result.error)) return result;

  LeanNames& names = result.names;
  std::string block;      // "structure X" or "inductive X" while inside its declaration
  bool inStructure = false;
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    const Token& t = tokens[k];
    if (t.firstOnLine && t.column == 0) block.clear();
    if (t.kind == Kind::Method) {
      names.methods.push_back({t.text, t.line});
      continue;
    }
    if (t.kind == Kind::LeadingDot) {
      names.leadingDots.push_back({t.text, t.line});
      continue;
    }
    if (t.kind != Kind::Ident) {
      // `| ctor` at the start of a line of an inductive declaration.
      if (!block.empty() && !inStructure && t.text == "|" && t.firstOnLine &&
          k + 1 < tokens.size() && tokens[k + 1].kind == Kind::Ident) {
        declare(names, block + "." + tokens[k + 1].text);
        declare(names, tokens[k + 1].text);
        ++k;
      }
      continue;
    }
    // A structure field: `name : T` at the start of a line of the structure.
    if (inStructure && !block.empty() && t.firstOnLine && k + 1 < tokens.size() &&
        tokens[k + 1].text == ":") {
      declare(names, block + "." + t.text);
      declare(names, t.text);
      continue;
    }
    if (t.text == "import" && t.firstOnLine) {  // module names, not declarations
      while (k + 1 < tokens.size() && tokens[k + 1].line == t.line) ++k;
      continue;
    }
    if (t.text == "open" && t.firstOnLine) {
      // open A B (x y) | open A hiding x | open A renaming x → y | open scoped A | open A in
      std::vector<Open> opened;
      bool otherForm = false;
      std::size_t j = k + 1;
      for (; j < tokens.size() && tokens[j].line == t.line; ++j) {
        const Token& u = tokens[j];
        if (u.kind == Kind::Ident && (u.text == "hiding" || u.text == "renaming" ||
                                      u.text == "scoped")) {
          otherForm = true;
        } else if (u.kind == Kind::Ident && u.text == "in") {
          break;
        } else if (u.kind == Kind::Ident) {
          opened.push_back({u.text, false, {}, u.line});
        } else if (u.text == "(" && !opened.empty()) {
          opened.back().onlyListed = true;
          for (++j; j < tokens.size() && tokens[j].text != ")"; ++j)
            if (tokens[j].kind == Kind::Ident) opened.back().listed.push_back(tokens[j].text);
        }
      }
      for (auto& o : opened) {
        if (otherForm) o.onlyListed = false;  // hiding/renaming/scoped: not a closed list
        names.opens.push_back(o);
      }
      k = j - 1;
      continue;
    }
    if ((t.text == "namespace" || t.text == "export") && k + 1 < tokens.size() &&
        tokens[k + 1].kind == Kind::Ident) {
      names.namespaces.push_back({tokens[k + 1].text, t.line});
      ++k;
      continue;
    }
    if (t.text == "end" || t.text == "section") {
      if (k + 1 < tokens.size() && tokens[k + 1].kind == Kind::Ident &&
          tokens[k + 1].line == t.line)
        ++k;
      continue;
    }
    if (isDeclarationKeyword(t.text) && k + 1 < tokens.size() &&
        tokens[k + 1].kind == Kind::Ident) {
      const std::string& name = tokens[k + 1].text;
      declare(names, name);
      if (t.text == "structure" || t.text == "inductive" || t.text == "class") {
        block = name;
        inStructure = t.text != "inductive";
      }
      ++k;
      continue;
    }
    names.qualified.push_back({t.text, t.line});
  }
  return result;
}

}  // namespace tapecheck::lean_api
