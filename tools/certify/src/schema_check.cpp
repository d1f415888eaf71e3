#include "tapecheck/certify/schema_check.h"

#include <cmath>
#include <regex>
#include <set>

#include "certificate_schema_text.h"  // generated: kCertificateSchemaText

namespace tapecheck::certify {
namespace {

using nlohmann::json;

class Validator {
 public:
  explicit Validator(const json& root) : root_(root) {}

  void check(const json& value, const json& schema, const std::string& where) {
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) fail(where, "no value is allowed here");
      return;
    }
    if (!schema.is_object()) {
      fail(where, "schema is neither an object nor a boolean");
      return;
    }
    for (const auto& [key, sub] : schema.items()) {
      if (key == "$ref") {
        checkRef(value, sub, where);
      } else if (key == "type") {
        checkType(value, sub, where);
      } else if (key == "const") {
        if (!(value == sub)) fail(where, "must be " + sub.dump());
      } else if (key == "enum") {
        bool found = false;
        for (const json& option : sub) found = found || value == option;
        if (!found) fail(where, "must be one of " + sub.dump());
      } else if (key == "properties") {
        if (value.is_object())
          for (const auto& [name, propSchema] : sub.items())
            if (value.contains(name)) check(value.at(name), propSchema, where + "/" + name);
      } else if (key == "required") {
        if (value.is_object())
          for (const json& name : sub)
            if (!value.contains(name.get<std::string>()))
              fail(where, "missing required member \"" + name.get<std::string>() + "\"");
      } else if (key == "additionalProperties") {
        if (!value.is_object()) continue;
        const json* props = schema.contains("properties") ? &schema.at("properties") : nullptr;
        for (const auto& [name, member] : value.items()) {
          if (props && props->contains(name)) continue;
          if (sub.is_boolean() && !sub.get<bool>())
            fail(where, "unexpected member \"" + name + "\"");
          else
            check(member, sub, where + "/" + name);
        }
      } else if (key == "items") {
        if (value.is_array())
          for (std::size_t i = 0; i < value.size(); ++i)
            check(value[i], sub, where + "/" + std::to_string(i));
      } else if (key == "minItems") {
        if (value.is_array() && value.size() < sub.get<std::size_t>())
          fail(where, "needs at least " + sub.dump() + " items");
      } else if (key == "maxItems") {
        if (value.is_array() && value.size() > sub.get<std::size_t>())
          fail(where, "allows at most " + sub.dump() + " items");
      } else if (key == "minimum") {
        if (value.is_number() && value.get<double>() < sub.get<double>())
          fail(where, "must be >= " + sub.dump());
      } else if (key == "maximum") {
        if (value.is_number() && value.get<double>() > sub.get<double>())
          fail(where, "must be <= " + sub.dump());
      } else if (key == "minLength") {
        if (value.is_string() && codePoints(value.get<std::string>()) < sub.get<std::size_t>())
          fail(where, "needs at least " + sub.dump() + " characters");
      } else if (key == "pattern") {
        if (value.is_string() &&
            !std::regex_search(value.get<std::string>(), std::regex(sub.get<std::string>())))
          fail(where, "does not match " + sub.dump());
      } else if (key == "anyOf" || key == "oneOf") {
        std::size_t matches = 0;
        for (const json& option : sub) matches += valid(value, option, where) ? 1 : 0;
        if (key == "anyOf" && matches == 0) fail(where, "matches no alternative of anyOf");
        if (key == "oneOf" && matches != 1)
          fail(where, "matches " + std::to_string(matches) + " alternatives of oneOf, not 1");
      } else if (key == "allOf") {
        for (const json& option : sub) check(value, option, where);
      } else if (key == "not") {
        if (valid(value, sub, where)) fail(where, "must not match " + sub.dump());
      } else if (key == "if") {
        const bool cond = valid(value, sub, where);
        if (cond && schema.contains("then")) check(value, schema.at("then"), where);
        if (!cond && schema.contains("else")) check(value, schema.at("else"), where);
      } else if (key == "then" || key == "else" || key == "$schema" || key == "$id" ||
                 key == "title" || key == "description" || key == "$comment" || key == "$defs") {
        // annotations, or handled with "if"
      } else {
        fail(where, "unsupported schema keyword \"" + key + "\"");
      }
    }
  }

  std::vector<std::string> errors;

 private:
  static std::size_t codePoints(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
    return n;
  }

  bool valid(const json& value, const json& schema, const std::string& where) {
    Validator inner(root_);
    inner.depth_ = depth_;
    inner.check(value, schema, where);
    return inner.errors.empty();
  }

  void fail(const std::string& where, const std::string& what) {
    errors.push_back((where.empty() ? std::string("/") : where) + ": " + what);
  }

  void checkRef(const json& value, const json& ref, const std::string& where) {
    const std::string prefix = "#/$defs/";
    const std::string text = ref.is_string() ? ref.get<std::string>() : "";
    if (text.rfind(prefix, 0) != 0 || !root_.contains("$defs") ||
        !root_.at("$defs").contains(text.substr(prefix.size()))) {
      fail(where, "unresolvable $ref " + ref.dump());
      return;
    }
    if (++depth_ > 64) {
      fail(where, "$ref nesting too deep");
      --depth_;
      return;
    }
    check(value, root_.at("$defs").at(text.substr(prefix.size())), where);
    --depth_;
  }

  static bool hasType(const json& value, const std::string& type) {
    if (type == "object") return value.is_object();
    if (type == "array") return value.is_array();
    if (type == "string") return value.is_string();
    if (type == "boolean") return value.is_boolean();
    if (type == "null") return value.is_null();
    if (type == "number") return value.is_number();
    if (type == "integer") {
      if (value.is_number_integer()) return true;
      if (!value.is_number_float()) return false;
      const double d = value.get<double>();
      return std::isfinite(d) && d == std::floor(d);
    }
    return false;
  }

  void checkType(const json& value, const json& type, const std::string& where) {
    if (type.is_string()) {
      if (!hasType(value, type.get<std::string>())) fail(where, "must be of type " + type.dump());
      return;
    }
    for (const json& t : type)
      if (hasType(value, t.get<std::string>())) return;
    fail(where, "must be of type " + type.dump());
  }

  const json& root_;
  int depth_ = 0;
};

}  // namespace

std::vector<std::string> validateAgainstSchema(const nlohmann::json& instance,
                                               const nlohmann::json& schema) {
  Validator v(schema);
  try {
    v.check(instance, schema, "");
  } catch (const std::exception& e) {  // a malformed schema (wrong keyword value types)
    v.errors.push_back(std::string("/: malformed schema: ") + e.what());
  }
  return v.errors;
}

const nlohmann::json& certificateSchema() {
  static const nlohmann::json schema = nlohmann::json::parse(kCertificateSchemaText);
  return schema;
}

}  // namespace tapecheck::certify
