// A small JSON Schema validator for the subset of draft 2020-12 that the certificate schema uses:
// type, const, enum, properties, required, additionalProperties (false or a schema), items,
// minItems, maxItems, minimum, maximum, minLength, pattern (ECMAScript), anyOf, oneOf, allOf,
// not, if/then/else, and $ref to "#/$defs/NAME". Annotations ($schema, $id, title, description,
// $comment, $defs) are ignored. Any other keyword is reported as unsupported rather than
// silently skipped, so the schema cannot claim more than is checked.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tapecheck::certify {

// Every violation, as "JSON-pointer: what is wrong"; empty when `instance` is valid.
std::vector<std::string> validateAgainstSchema(const nlohmann::json& instance,
                                               const nlohmann::json& schema);

// The certificate schema (tools/certify/tapecheck-certificate-v1.schema.json), compiled in.
const nlohmann::json& certificateSchema();

}  // namespace tapecheck::certify
