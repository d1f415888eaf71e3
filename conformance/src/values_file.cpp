#include "tapecheck/conformance/values_file.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tapecheck/vectors/vector_file.h"

namespace tapecheck::conformance {
namespace {

using nlohmann::json;

json bits(const std::vector<double>& values) {
  json out = json::array();
  for (double v : values) {
    std::uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    out.push_back(b);
  }
  return out;
}

json tensor(const TensorData& t) { return {{"shape", t.shape}, {"values", bits(t.values)}}; }

}  // namespace

std::string caseVectorJson(const TestCase& c, const Outcome& expected, const VectorFileInfo& info) {
  json leaves = json::array();
  for (const Leaf& l : c.leaves)
    leaves.push_back(
        {{"shape", l.value.shape}, {"requiresGrad", l.requiresGrad}, {"values", bits(l.value.values)}});
  json call = json::object();
  for (const auto& [name, id] : c.call) call[name] = id;
  json attrs = json::object();
  const Attrs& a = c.attrs;
  if (a.s) attrs["s"] = *a.s;
  if (a.k) attrs["k"] = *a.k;
  if (a.axis) attrs["axis"] = *a.axis;
  if (a.mean) attrs["mean"] = *a.mean;
  if (a.epsilon) attrs["epsilon"] = *a.epsilon;
  if (a.seqLen) attrs["seqLen"] = *a.seqLen;
  if (a.embedDim) attrs["embedDim"] = *a.embedDim;
  if (a.channels) attrs["channels"] = *a.channels;
  if (a.spatial) attrs["spatial"] = *a.spatial;

  json exp;
  if (expected.error) {
    exp = {{"error", *expected.error}};
  } else {
    json grads = json::array();
    for (const TensorData& g : expected.grads) grads.push_back(tensor(g));
    exp = {{"value", tensor(expected.value)}};
    if (c.upstream) exp["grads"] = grads;
  }
  json test = {{"tcId", 1},      {"comment", info.comment}, {"flags", info.flags},
               {"leaves", leaves}, {"call", call},         {"attrs", attrs},
               {"expected", exp}, {"result", expected.error ? "invalid" : "valid"}};
  if (c.upstream) test["upstream"] = tensor(*c.upstream);
  json notes = json::object();
  for (const std::string& f : info.flags)
    notes[f] = {{"description", "a value fill of tapecheck run's generators (conformance/README.md)"}};
  json doc = {{"schema", info.program ? vectors::kProgramCaseSchemaName : vectors::kSchemaName},
              {"op", c.op},
              {"generator",
               {{"name", "tapecheck run"}, {"version", "1"}, {"provenance", info.provenance}}},
              {"header", {"A case written by tapecheck run for its reproducer: the kernels under test "
                          "failed it, or their error on it grew; the comment says which."}},
              {"notes", notes},
              {"numberOfTests", 1},
              {"tests", json::array({test})}};
  return doc.dump(1) + "\n";
}

tapecheck::Status writeTextFile(const std::string& path, const std::string& text) {
  std::error_code ec;
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  if (ec) return Error{"cannot create " + p.parent_path().string() + ": " + ec.message()};
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error{"cannot write " + path};
  out << text;
  out.close();
  if (!out) return Error{"cannot write " + path};
  return okStatus();
}

}  // namespace tapecheck::conformance
