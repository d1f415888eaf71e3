// The certificate as JSON, format "tapecheck-certificate-v1" (schema:
// tools/certify/tapecheck-certificate-v1.schema.json). Reading validates against that schema
// first, so a baseline or shard that does not conform is refused with every violation named.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tapecheck/certify/certificate.h"
#include "tapecheck/result.h"

namespace tapecheck::certify {

// Shard certificates carry every pass's errorsUlps; full certificates do not.
nlohmann::json certificateToJson(const Certificate& cert);
// The bytes written to certificate.json: 2-space indented, ending in a newline.
std::string certificateText(const Certificate& cert);

Result<Certificate> certificateFromJson(const nlohmann::json& doc);
// Reads and parses `path`; every problem is an Error naming the file.
Result<Certificate> readCertificateFile(const std::string& path);

// ulps in JSON: a number, or "inf" / "nan" for non-finite values.
nlohmann::json ulpsToJson(double ulps);
double ulpsFromJson(const nlohmann::json& value);

}  // namespace tapecheck::certify
