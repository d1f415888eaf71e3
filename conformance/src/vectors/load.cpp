// The v1 loader. One function per schema object (file, generator, notes, test, leaf, tensor,
// call, attrs, expected), each checking its object against its row of schema_rules.h first and
// then its fields' types, in that order; cross-field rules follow, each in one place.
#include "tapecheck/vectors/load.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tapecheck/conformance/op_registry.h"
#include "tapecheck/vectors/bits.h"
#include "tapecheck/vectors/schema_rules.h"

namespace tapecheck::vectors {

const char* expectationName(Expectation e) {
  switch (e) {
    case Expectation::Valid: return "valid";
    case Expectation::Invalid: return "invalid";
    case Expectation::Acceptable: return "acceptable";
  }
  return "?";
}

namespace {

using Json = nlohmann::ordered_json;
using conformance::TensorData;

std::string typeName(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
      return j.get<std::int64_t>() < 0 ? "a negative integer" : "an integer";
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number with a fraction or exponent";
    default: return "an unsupported JSON value";
  }
}

std::string joinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

std::string index(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}
std::string field(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// Reads one file's JSON and remembers where we are, for messages.
class Reader {
 public:
  explicit Reader(std::string label) : label_(std::move(label)) {}

  Error fail(const std::string& path, const std::string& message) const {
    std::string s = label_ + ": ";
    if (tcId_) s += "tcId " + std::to_string(*tcId_) + ": ";
    if (!path.empty()) s += path + ": ";
    return Error{s + message};
  }
  void enterTest(std::optional<std::uint64_t> tcId) { tcId_ = tcId; }
  void leaveTest() { tcId_.reset(); }

  // additionalProperties: false, then required.
  Status object(const Json& j, const std::string& path, const schema::ObjectRule& rule) const {
    if (!j.is_object())
      return fail(path, std::string("expected an object (") + rule.name + "), got " + typeName(j));
    for (const auto& [key, value] : j.items()) {
      (void)value;
      if (std::find(rule.allowed.begin(), rule.allowed.end(), key) == rule.allowed.end())
        return fail(field(path, key), std::string("unexpected field (") + rule.name +
                                          " allows only " + joinNames(rule.allowed) + ")");
    }
    for (const auto& key : rule.required)
      if (!j.contains(key)) return fail(field(path, key), "missing required field");
    return okStatus();
  }

  Result<std::uint64_t> uint(const Json& j, const std::string& path) const {
    if (j.is_number_unsigned()) return j.get<std::uint64_t>();
    if (j.is_number_integer() && j.get<std::int64_t>() >= 0)
      return static_cast<std::uint64_t>(j.get<std::int64_t>());
    return fail(path, "expected an unsigned integer (0 to 2^64-1), got " + typeName(j));
  }
  Result<std::string> string(const Json& j, const std::string& path) const {
    if (!j.is_string()) return fail(path, "expected a string, got " + typeName(j));
    return j.get<std::string>();
  }
  Result<std::string> nonEmptyString(const Json& j, const std::string& path) const {
    TAPECHECK_TRY(s, string(j, path));
    if (s.empty()) return fail(path, "must not be empty");
    return s;
  }
  Result<bool> boolean(const Json& j, const std::string& path) const {
    if (!j.is_boolean()) return fail(path, "expected a boolean, got " + typeName(j));
    return j.get<bool>();
  }
  Result<double> number(const Json& j, const std::string& path) const {
    if (!j.is_number()) return fail(path, "expected a number, got " + typeName(j));
    return j.get<double>();
  }
  Status array(const Json& j, const std::string& path) const {
    if (!j.is_array()) return fail(path, "expected an array, got " + typeName(j));
    return okStatus();
  }

  Result<Shape> shape(const Json& j, const std::string& path) const {
    TAPECHECK_TRY_STATUS(array(j, path));
    Shape s;
    s.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      TAPECHECK_TRY(d, uint(j[i], index(path, i)));
      s.push_back(d);
    }
    return s;
  }

  // {shape, values}: values are binary64 bit patterns, exactly size(shape) of them.
  Result<TensorData> tensorFields(const Json& j, const std::string& path,
                                  bool binary32Inputs) const {
    TAPECHECK_TRY(s, shape(j.at("shape"), field(path, "shape")));
    const Json& vs = j.at("values");
    const std::string vpath = field(path, "values");
    TAPECHECK_TRY_STATUS(array(vs, vpath));
    const Dim need = sizeOf(s);
    if (vs.size() != need)
      return fail(vpath, "holds " + std::to_string(vs.size()) + " values but shape " +
                             toString(s) + " needs " + std::to_string(need));
    TensorData t{s, {}};
    t.values.reserve(vs.size());
    for (std::size_t i = 0; i < vs.size(); ++i) {
      TAPECHECK_TRY(b, uint(vs[i], index(vpath, i)));
      const double v = fromBits(b);
      if (binary32Inputs && !isBinary32(v)) {
        std::ostringstream msg;
        msg.precision(17);
        msg << "bits " << b << " (" << v
            << ") are not representable in binary32 (inputs must be, so that both tapes "
               "consume the same numbers)";
        return fail(index(vpath, i), msg.str());
      }
      t.values.push_back(v);
    }
    return t;
  }

  Result<TensorData> tensor(const Json& j, const std::string& path, bool binary32Inputs) const {
    TAPECHECK_TRY_STATUS(object(j, path, schema::kTensor));
    return tensorFields(j, path, binary32Inputs);
  }

  Result<conformance::Leaf> leaf(const Json& j, const std::string& path) const {
    TAPECHECK_TRY_STATUS(object(j, path, schema::kLeaf));
    TAPECHECK_TRY(requiresGrad, boolean(j.at("requiresGrad"), field(path, "requiresGrad")));
    TAPECHECK_TRY(value, tensorFields(j, path, /*binary32Inputs=*/true));
    return conformance::Leaf{std::move(value), requiresGrad};
  }

  Result<Generator> generator(const Json& j, const std::string& path) const {
    TAPECHECK_TRY_STATUS(object(j, path, schema::kGenerator));
    TAPECHECK_TRY(name, nonEmptyString(j.at("name"), field(path, "name")));
    TAPECHECK_TRY(version, nonEmptyString(j.at("version"), field(path, "version")));
    TAPECHECK_TRY(provenance, nonEmptyString(j.at("provenance"), field(path, "provenance")));
    return Generator{name, version, provenance};
  }

  // Optional provenance: anchors of docs/spec.md, each once.
  Result<std::vector<std::string>> specRules(const Json& j, const std::string& path) const {
    TAPECHECK_TRY_STATUS(array(j, path));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
      TAPECHECK_TRY(s, string(j[i], index(path, i)));
      if (!schema::isSpecRule(s))
        return fail(index(path, i), "'" + s + "' is not a rule of docs/spec.md "
                                              "(docs/spec.md#anchor)");
      if (std::find(out.begin(), out.end(), s) != out.end())
        return fail(index(path, i), "'" + s + "' is listed twice");
      out.push_back(s);
    }
    return out;
  }

  Result<std::vector<std::string>> header(const Json& j, const std::string& path) const {
    TAPECHECK_TRY_STATUS(array(j, path));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
      TAPECHECK_TRY(s, string(j[i], index(path, i)));
      out.push_back(s);
    }
    return out;
  }

  Result<std::vector<std::pair<std::string, std::string>>> notes(const Json& j,
                                                                 const std::string& path) const {
    if (!j.is_object()) return fail(path, "expected an object (flag -> note), got " + typeName(j));
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [flag, note] : j.items()) {
      const std::string p = field(path, flag);
      if (!schema::isFlagName(flag))
        return fail(p, "flag names are letters and digits, starting with a letter");
      TAPECHECK_TRY_STATUS(object(note, p, schema::kNote));
      TAPECHECK_TRY(d, string(note.at("description"), field(p, "description")));
      out.emplace_back(flag, d);
    }
    return out;
  }

  Result<std::vector<std::string>> flags(const Json& j, const std::string& path,
                                         const std::set<std::string>& declared) const {
    TAPECHECK_TRY_STATUS(array(j, path));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
      const std::string p = index(path, i);
      if (!j[i].is_string()) return fail(p, "expected a string, got " + typeName(j[i]));
      const std::string f = j[i].get<std::string>();
      if (!schema::isFlagName(f))
        return fail(p, "flag names are letters and digits, starting with a letter");
      if (std::find(out.begin(), out.end(), f) != out.end())
        return fail(p, "flag '" + f + "' is listed twice");
      if (!declared.count(f)) return fail(p, "flag '" + f + "' has no entry in notes");
      out.push_back(f);
    }
    return out;
  }

  // call: exactly the op's tensor arguments, each a node id (ids may point past the leaves).
  Result<std::map<std::string, NodeId>> call(const Json& j, const std::string& path,
                                             const conformance::OpInfo& op) const {
    if (!j.is_object()) return fail(path, "expected an object (argument -> node id), got " +
                                              typeName(j));
    std::map<std::string, NodeId> out;
    for (const auto& [name, id] : j.items()) {
      const std::string p = field(path, name);
      if (std::find(schema::kCallNames.begin(), schema::kCallNames.end(), name) ==
          schema::kCallNames.end())
        return fail(p, "unexpected field (call allows only " + joinNames(schema::kCallNames) +
                           ")");
      if (std::find(op.tensorArgs.begin(), op.tensorArgs.end(), name) == op.tensorArgs.end())
        return fail(p, "'" + name + "' is not a tensor argument of " + op.name + " (it takes " +
                           joinNames(op.tensorArgs) + ")");
      TAPECHECK_TRY(v, uint(id, p));
      out[name] = v;
    }
    for (const auto& name : op.tensorArgs)
      if (!out.count(name)) return fail(field(path, name), "missing required field");
    return out;
  }

  // attrs: the docs/spec.md names only (schema), the op's own only, its required ones present.
  Result<conformance::Attrs> attrs(const Json& j, const std::string& path,
                                   const conformance::OpInfo& op) const {
    TAPECHECK_TRY_STATUS(object(j, path, schema::kAttrs));
    std::vector<std::string> takes = op.attrNames;
    takes.insert(takes.end(), op.optionalAttrNames.begin(), op.optionalAttrNames.end());
    conformance::Attrs a;
    for (const auto& [name, v] : j.items()) {
      const std::string p = field(path, name);
      if (std::find(takes.begin(), takes.end(), name) == takes.end())
        return fail(p, "'" + name + "' is not an argument of " + op.name + " (it takes " +
                           joinNames(takes) + ")");
      if (name == "s") {
        TAPECHECK_TRY(x, shape(v, p));
        a.s = x;
      } else if (name == "spatial") {
        TAPECHECK_TRY(x, shape(v, p));
        a.spatial = x;
      } else if (name == "k") {
        TAPECHECK_TRY(x, uint(v, p));
        a.k = x;
      } else if (name == "axis") {
        TAPECHECK_TRY(x, uint(v, p));
        a.axis = x;
      } else if (name == "seqLen") {
        TAPECHECK_TRY(x, uint(v, p));
        a.seqLen = x;
      } else if (name == "embedDim") {
        TAPECHECK_TRY(x, uint(v, p));
        a.embedDim = x;
      } else if (name == "channels") {
        TAPECHECK_TRY(x, uint(v, p));
        a.channels = x;
      } else if (name == "mean") {
        TAPECHECK_TRY(x, boolean(v, p));
        a.mean = x;
      } else if (name == "epsilon") {
        TAPECHECK_TRY(x, number(v, p));
        a.epsilon = x;
      }
    }
    for (const auto& name : op.attrNames)
      if (!j.contains(name)) return fail(field(path, name), "missing required field");
    return a;
  }

  // expected: {value, grads?} or {error} (the schema's oneOf).
  Result<Expected> expected(const Json& j, const std::string& path) const {
    if (!j.is_object())
      return fail(path, "expected an object ({value, grads?} or {error}), got " + typeName(j));
    Expected e;
    if (j.contains("error")) {
      if (j.contains("value") || j.contains("grads"))
        return fail(path, "holds 'error' and a value or grads; it must be either "
                          "{value, grads?} or {error}");
      TAPECHECK_TRY_STATUS(object(j, path, schema::kExpectedError));
      TAPECHECK_TRY(s, string(j.at("error"), field(path, "error")));
      e.error = s;
      return e;
    }
    TAPECHECK_TRY_STATUS(object(j, path, schema::kExpectedValue));
    TAPECHECK_TRY(value, tensor(j.at("value"), field(path, "value"), false));
    e.value = std::move(value);
    if (j.contains("grads")) {
      const std::string gp = field(path, "grads");
      const Json& gs = j.at("grads");
      TAPECHECK_TRY_STATUS(array(gs, gp));
      std::vector<TensorData> grads;
      for (std::size_t i = 0; i < gs.size(); ++i) {
        TAPECHECK_TRY(g, tensor(gs[i], index(gp, i), false));
        grads.push_back(std::move(g));
      }
      e.grads = std::move(grads);
    }
    return e;
  }

  Result<Expectation> result(const Json& j, const std::string& path) const {
    TAPECHECK_TRY(s, string(j, path));
    if (s == "valid") return Expectation::Valid;
    if (s == "invalid") return Expectation::Invalid;
    if (s == "acceptable") return Expectation::Acceptable;
    return fail(path, "'" + s + "' is not one of " + joinNames(schema::kResultNames));
  }

  Result<VectorTest> test(const Json& j, const std::string& path, const conformance::OpInfo& op,
                          const std::set<std::string>& declaredFlags) {
    if (!j.is_object()) return fail(path, "expected an object (test), got " + typeName(j));
    // Name the test in every later message when its tcId is readable.
    if (j.contains("tcId")) {
      auto id = uint(j.at("tcId"), "");
      if (id && id.value() >= 1) enterTest(id.value());
    }
    TAPECHECK_TRY_STATUS(object(j, path, schema::kTest));
    VectorTest t;
    TAPECHECK_TRY(tcId, uint(j.at("tcId"), field(path, "tcId")));
    if (tcId < 1) return fail(field(path, "tcId"), "must be at least 1");
    t.tcId = tcId;
    TAPECHECK_TRY(comment, string(j.at("comment"), field(path, "comment")));
    t.comment = comment;
    TAPECHECK_TRY(fl, flags(j.at("flags"), field(path, "flags"), declaredFlags));
    t.flags = fl;

    const std::string lp = field(path, "leaves");
    TAPECHECK_TRY_STATUS(array(j.at("leaves"), lp));
    t.testCase.op = op.name;
    for (std::size_t i = 0; i < j.at("leaves").size(); ++i) {
      TAPECHECK_TRY(l, leaf(j.at("leaves")[i], index(lp, i)));
      t.testCase.leaves.push_back(std::move(l));
    }
    TAPECHECK_TRY(c, call(j.at("call"), field(path, "call"), op));
    t.testCase.call = std::move(c);
    TAPECHECK_TRY(a, attrs(j.at("attrs"), field(path, "attrs"), op));
    t.testCase.attrs = std::move(a);
    if (j.contains("upstream")) {
      TAPECHECK_TRY(u, tensor(j.at("upstream"), field(path, "upstream"), /*binary32Inputs=*/true));
      t.testCase.upstream = std::move(u);
    }
    TAPECHECK_TRY(e, expected(j.at("expected"), field(path, "expected")));
    t.expected = std::move(e);
    TAPECHECK_TRY(r, result(j.at("result"), field(path, "result")));
    t.result = r;
    TAPECHECK_TRY_STATUS(consistent(t, path));
    return t;
  }

  // Cross-field rules of a test (the schema's if/then clauses and its $comment).
  Status consistent(const VectorTest& t, const std::string& path) const {
    const std::string ep = field(path, "expected");
    if (t.result == Expectation::Valid && !t.expected.value)
      return fail(ep, "result is 'valid' but expected has no value");
    if (t.result == Expectation::Invalid && !t.expected.error)
      return fail(ep, "result is 'invalid' but expected has no error");
    if (t.expected.value) {
      const bool hasUpstream = t.testCase.upstream.has_value();
      if (hasUpstream && !t.expected.grads)
        return fail(field(ep, "grads"),
                    "missing required field (the test has an upstream, so one gradient per "
                    "leaf is expected)");
      if (!hasUpstream && t.expected.grads)
        return fail(field(ep, "grads"), "unexpected field (the test has no upstream)");
      if (t.expected.grads) {
        const auto& grads = *t.expected.grads;
        const auto& leaves = t.testCase.leaves;
        if (grads.size() != leaves.size())
          return fail(field(ep, "grads"), "holds " + std::to_string(grads.size()) +
                                              " gradients but the test has " +
                                              std::to_string(leaves.size()) +
                                              " leaves (one per leaf)");
        for (std::size_t i = 0; i < grads.size(); ++i)
          if (grads[i].shape != leaves[i].value.shape)
            return fail(field(index(field(ep, "grads"), i), "shape"),
                        "gradient shape " + toString(grads[i].shape) + " differs from leaf " +
                            std::to_string(i) + "'s shape " + toString(leaves[i].value.shape));
      }
    }
    return okStatus();
  }

  Result<VectorFile> file(const Json& j) {
    TAPECHECK_TRY_STATUS(object(j, "", schema::kFile));
    TAPECHECK_TRY(schemaName, string(j.at("schema"), "schema"));
    if (schemaName != kSchemaName && schemaName != kProgramCaseSchemaName)
      return fail("schema", "'" + schemaName + "' is not '" + kSchemaName + "' (nor '" +
                                kProgramCaseSchemaName + "', a chained program's case)");
    const bool program = schemaName == kProgramCaseSchemaName;
    VectorFile f;
    f.path = label_;
    TAPECHECK_TRY(opName, string(j.at("op"), "op"));
    const conformance::OpInfo* op = conformance::findSubject(opName);
    if (!op || op->program != program) {
      std::vector<std::string> names;
      for (const auto& o : program ? conformance::programRegistry() : conformance::opRegistry())
        names.push_back(o.name);
      return fail("op", "'" + opName + "' is not a registry " +
                            (program ? "program" : "operation") + " (one of " +
                            joinNames(names) + ")");
    }
    f.op = opName;
    TAPECHECK_TRY(g, generator(j.at("generator"), "generator"));
    f.generator = g;
    if (j.contains("specRules")) {
      TAPECHECK_TRY(rules, specRules(j.at("specRules"), "specRules"));
      f.specRules = rules;
    }
    if (j.contains("torchleanCommit")) {
      TAPECHECK_TRY(commit, string(j.at("torchleanCommit"), "torchleanCommit"));
      if (!schema::isCommitHash(commit))
        return fail("torchleanCommit", "'" + commit + "' is not a commit hash (40 lowercase hex "
                                                      "digits)");
      f.torchleanCommit = commit;
    }
    TAPECHECK_TRY(h, header(j.at("header"), "header"));
    f.header = h;
    TAPECHECK_TRY(n, notes(j.at("notes"), "notes"));
    f.notes = n;
    std::set<std::string> declared;
    for (const auto& [flag, d] : f.notes) declared.insert(flag);

    TAPECHECK_TRY(count, uint(j.at("numberOfTests"), "numberOfTests"));
    const Json& tests = j.at("tests");
    TAPECHECK_TRY_STATUS(array(tests, "tests"));
    if (count != tests.size())
      return fail("numberOfTests", "is " + std::to_string(count) + " but tests holds " +
                                       std::to_string(tests.size()));
    std::map<std::uint64_t, std::size_t> seen;  // tcId -> index
    for (std::size_t i = 0; i < tests.size(); ++i) {
      const std::string p = index("tests", i);
      TAPECHECK_TRY(t, test(tests[i], p, *op, declared));
      if (auto it = seen.find(t.tcId); it != seen.end())
        return fail(field(p, "tcId"), "duplicate tcId (also tests[" +
                                          std::to_string(it->second) + "])");
      seen[t.tcId] = i;
      leaveTest();
      f.tests.push_back(std::move(t));
    }
    return f;
  }

 private:
  std::string label_;
  std::optional<std::uint64_t> tcId_;
};

// JSON objects must not repeat a key (nlohmann would keep the last one silently).
struct DuplicateKey {
  std::string key;
};

Result<Json> parseJson(const std::string& text, const std::string& label) {
  std::vector<std::set<std::string>> keys;
  auto callback = [&keys](int, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start: keys.emplace_back(); break;
      case Json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
          throw DuplicateKey{parsed.get<std::string>()};
        break;
      default: break;
    }
    return true;
  };
  try {
    return Json::parse(text, callback);
  } catch (const DuplicateKey& d) {
    return Error{label + ": not valid v1 JSON: an object repeats the key '" + d.key + "'"};
  } catch (const nlohmann::json::exception& e) {
    return Error{label + ": not valid JSON: " + e.what()};
  }
}

}  // namespace

Result<std::string> readTextFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Error{path + ": is a folder, not a file"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot read: " + std::strerror(errno)};
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Error{path + ": cannot read: " + std::strerror(errno)};
  return ss.str();
}

Result<VectorFile> parseVectorText(const std::string& text, const std::string& label) {
  TAPECHECK_TRY(json, parseJson(text, label));
  try {
    Reader r(label);
    return r.file(json);
  } catch (const std::exception& e) {
    // Every field is type-checked before it is read, so this is a bug; still not a crash.
    return Error{label + ": internal error while reading: " + e.what()};
  }
}

Result<VectorFile> loadVectorFile(const std::string& path) {
  TAPECHECK_TRY(text, readTextFile(path));
  return parseVectorText(text, path);
}

Result<std::vector<std::string>> collectVectorFiles(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(p, ec);
    if (ec || !fs::exists(st)) return Error{p + ": no such file or folder"};
    if (!fs::is_directory(st)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    fs::recursive_directory_iterator it(p, ec), end;
    if (ec) return Error{p + ": cannot list: " + ec.message()};
    for (; it != end; it.increment(ec)) {
      if (ec) return Error{p + ": cannot list: " + ec.message()};
      if (it->is_regular_file(ec) && it->path().extension() == ".json")
        found.push_back(it->path().generic_string());
    }
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace tapecheck::vectors
