#include "tapecheck/certify/html_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "tapecheck/certify/verdict.h"
#include "tapecheck/conformance/format.h"

namespace tapecheck::certify {

using conformance::formatFigure;
namespace {

const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not valid.
std::size_t utf8Length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) n = 2, cp = c & 0x1F;
  else if ((c & 0xF0) == 0xE0) n = 3, cp = c & 0x0F;
  else if ((c & 0xF8) == 0xF0) n = 4, cp = c & 0x07;
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  const std::uint32_t minimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < minimum[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

std::string num(std::uint64_t n) { return std::to_string(n); }

std::string fixed(double v, int digits = 1) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

std::string binLabel(std::size_t bin) {
  if (bin == 0) return "0";
  if (bin == 1) return "<1/" + std::to_string(1 << -kFirstBinExponent);
  const int e = kFirstBinExponent + static_cast<int>(bin) - 2;
  if (e < 0) return "1/" + std::to_string(1 << -e);
  if (e < 10) return std::to_string(1 << e);
  if (e < 20) return std::to_string(1 << (e - 10)) + "k";
  if (e < 30) return std::to_string(1 << (e - 20)) + "M";
  return "2^" + std::to_string(e);
}

std::size_t binOf(double e) {
  if (e <= 0) return 0;
  int exp = 0;
  std::frexp(e, &exp);  // e = m * 2^exp, m in [0.5, 1): floor(log2 e) = exp - 1
  const int k = exp - 1 - kFirstBinExponent + 2;
  return k < 2 ? 1 : static_cast<std::size_t>(k);
}

// Where `ulps` lies on the bin axis, in bins (fractional inside a bin, log2 scale).
double binPosition(double ulps) {
  const std::size_t bin = binOf(ulps);
  if (bin <= 1) return bin + 0.5;
  const double lower = std::ldexp(1.0, kFirstBinExponent + static_cast<int>(bin) - 2);
  return static_cast<double>(bin) + std::log2(ulps / lower);
}

const char* verdictClass(Verdict v) {
  return v == Verdict::Certified ? "ok" : v == Verdict::NotProvided ? "na" : "bad";
}

std::string verdictBadge(Verdict v) {
  return std::string("<span class=\"badge ") + verdictClass(v) + "\">" +
         (v == Verdict::Certified ? "CERTIFIED" : v == Verdict::NotProvided ? "NOT PROVIDED"
                                                                            : "REJECTED") +
         "</span>";
}

std::string row(std::initializer_list<std::string> cells, const char* tag = "td") {
  std::string out = "<tr>";
  for (const std::string& c : cells) out += std::string("<") + tag + ">" + c + "</" + tag + ">";
  return out + "</tr>\n";
}

std::string reasonsList(const std::vector<std::string>& reasons) {
  if (reasons.empty()) return "";
  std::string out = "<ul class=\"reasons\">\n";
  for (const std::string& r : reasons) out += "<li>" + htmlEscape(r) + "</li>\n";
  return out + "</ul>\n";
}

std::string anchorOf(const std::string& op) {
  std::string id = "op-";
  for (unsigned char c : op) id += std::isalnum(c) ? static_cast<char>(c) : '-';
  return id;
}

const char* kStyle = R"css(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px;
       color: #1f2328; max-width: 1150px; }
h1 { font-size: 20px; margin: 0 0 4px 0; font-weight: 600; }
h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px 0; }
.verdict { font-size: 44px; font-weight: 800; letter-spacing: 2px; color: #fff;
           padding: 18px 24px; border-radius: 8px; margin: 8px 0 12px 0; }
.verdict.ok { background: #1a7f37; } .verdict.bad { background: #cf222e; }
.verdict small { display: block; font-size: 16px; font-weight: 500; letter-spacing: 0; }
.shardnote { background: #fff8c5; border: 1px solid #d4a72c; padding: 8px 12px;
             border-radius: 6px; }
.badge { font-size: 12px; font-weight: 700; padding: 2px 6px; border-radius: 4px; color: #fff; }
.badge.ok { background: #1a7f37; } .badge.bad { background: #cf222e; }
.badge.na { background: #6e7781; }
table { border-collapse: collapse; margin: 6px 0; font-size: 13px; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.bad td { background: #ffebe9; } tr.na td { color: #57606a; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
            font-size: 12px; }
pre { background: #f6f8fa; padding: 6px 8px; border-radius: 4px; white-space: pre-wrap;
      word-break: break-all; margin: 2px 0; }
ul.reasons li { color: #a40e26; margin: 2px 0; }
.hist { display: inline-block; margin: 4px 16px 4px 0; vertical-align: top; }
.muted { color: #656d76; font-size: 12px; }
)css";

}  // namespace

std::string htmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8Length(text, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    const char c = text[i++];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\t': case '\n': case '\r': out += c; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) out += kReplacement;
        else out += c;
    }
  }
  return out;
}

Histogram histogramOf(const std::vector<double>& errorsUlps) {
  Histogram h;
  h.bins.assign(binOf(1.0) + 1, 0);  // always show up to the [1, 2) bin
  for (double e : errorsUlps) {
    if (!std::isfinite(e)) {
      ++h.nonFinite;
      continue;
    }
    const std::size_t bin = binOf(e);
    if (bin >= h.bins.size()) h.bins.resize(bin + 1, 0);
    ++h.bins[bin];
  }
  return h;
}

std::string svgHistogram(const std::vector<double>& errorsUlps, double budgetUlps,
                         const std::string& caption) {
  Histogram h = histogramOf(errorsUlps);
  const bool showBudget = budgetUlps > 0 && std::isfinite(budgetUlps);
  if (showBudget && binOf(budgetUlps) >= h.bins.size()) h.bins.resize(binOf(budgetUlps) + 1, 0);
  const std::size_t columns = h.bins.size() + (h.nonFinite > 0 ? 1 : 0);
  const double barW = 24, gap = 4, left = 40, top = 28, chartH = 110, bottom = 34;
  const double width = left + columns * (barW + gap) + 16;
  const double height = top + chartH + bottom;
  std::uint64_t maxCount = h.nonFinite;
  for (std::uint64_t c : h.bins) maxCount = std::max(maxCount, c);
  const auto barHeight = [&](std::uint64_t c) {
    if (c == 0 || maxCount == 0) return 0.0;
    return std::max(2.0, chartH * std::log10(1.0 + double(c)) / std::log10(1.0 + double(maxCount)));
  };
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"" << fixed(width, 0)
    << "\" height=\"" << fixed(height, 0) << "\" viewBox=\"0 0 " << fixed(width, 0) << " "
    << fixed(height, 0) << "\" aria-label=\"" << htmlEscape(caption) << "\">\n";
  s << "<title>" << htmlEscape(caption) << "</title>\n";
  s << "<rect x=\"0\" y=\"0\" width=\"" << fixed(width, 0) << "\" height=\"" << fixed(height, 0)
    << "\" fill=\"#ffffff\" stroke=\"#d0d7de\"/>\n";
  s << "<text x=\"6\" y=\"14\" font-size=\"11\" font-weight=\"600\" fill=\"#1f2328\">"
    << htmlEscape(caption) << "</text>\n";
  const double baseY = top + chartH;
  s << "<line x1=\"" << fixed(left - 4) << "\" y1=\"" << fixed(baseY) << "\" x2=\""
    << fixed(width - 8) << "\" y2=\"" << fixed(baseY) << "\" stroke=\"#57606a\"/>\n";
  s << "<text x=\"4\" y=\"" << fixed(top + 10) << "\" font-size=\"9\" fill=\"#656d76\">"
    << num(maxCount) << "</text>\n";
  s << "<text x=\"4\" y=\"" << fixed(baseY) << "\" font-size=\"9\" fill=\"#656d76\">0</text>\n";
  const auto drawBar = [&](std::size_t column, std::uint64_t count, const std::string& label,
                           bool over, const std::string& tip) {
    const double x = left + column * (barW + gap);
    const double bh = barHeight(count);
    s << "<g><title>" << htmlEscape(tip) << ": " << count << "</title>";
    s << "<rect x=\"" << fixed(x) << "\" y=\"" << fixed(baseY - bh) << "\" width=\""
      << fixed(barW) << "\" height=\"" << fixed(bh) << "\" fill=\""
      << (over ? "#cf222e" : "#0969da") << "\"/>";
    if (count > 0)
      s << "<text x=\"" << fixed(x + barW / 2) << "\" y=\"" << fixed(baseY - bh - 3)
        << "\" font-size=\"9\" text-anchor=\"middle\" fill=\"#1f2328\">" << count << "</text>";
    s << "<text x=\"" << fixed(x + barW / 2) << "\" y=\"" << fixed(baseY + 12)
      << "\" font-size=\"9\" text-anchor=\"middle\" fill=\"#57606a\">" << htmlEscape(label)
      << "</text></g>\n";
  };
  for (std::size_t b = 0; b < h.bins.size(); ++b) {
    const double lower = b < 2 ? 0 : std::ldexp(1.0, kFirstBinExponent + int(b) - 2);
    const bool over = showBudget && lower >= budgetUlps;
    drawBar(b, h.bins[b], binLabel(b), over,
            b == 0 ? "exactly 0 ulps" : "from " + binLabel(b) + " ulps");
  }
  if (h.nonFinite > 0)
    drawBar(h.bins.size(), h.nonFinite, "NaN/inf", true, "non-finite error");
  if (showBudget) {
    const double x = left + binPosition(budgetUlps) * (barW + gap);
    s << "<line x1=\"" << fixed(x) << "\" y1=\"" << fixed(top - 6) << "\" x2=\"" << fixed(x)
      << "\" y2=\"" << fixed(baseY) << "\" stroke=\"#cf222e\" stroke-dasharray=\"4 3\"/>\n";
    const bool nearRight = x > width - 70;  // keep the label inside the picture
    s << "<text x=\"" << fixed(nearRight ? x - 3 : x + 3) << "\" y=\"" << fixed(top - 2)
      << "\" font-size=\"9\" fill=\"#cf222e\" text-anchor=\"" << (nearRight ? "end" : "start")
      << "\">budget " << htmlEscape(formatFigure(budgetUlps)) << "</text>\n";
  }
  s << "<text x=\"" << fixed(left) << "\" y=\"" << fixed(height - 6)
    << "\" font-size=\"9\" fill=\"#656d76\">error in ulps (log2 bins; counts on a log scale; "
    << errorsUlps.size() << " judged)</text>\n";
  s << "</svg>";
  return s.str();
}

std::string renderHtmlReport(const Certificate& cert) {
  const Identity& id = cert.identity;
  const std::string what = id.kernelsName + " " + id.kernelsVersion;
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    << "<title>tapecheck " << (cert.shard ? "shard " : "") << "certificate: " << htmlEscape(what)
    << " \xE2\x80\x94 " << verdictWord(cert.verdict) << "</title>\n<style>" << kStyle
    << "</style>\n</head>\n<body>\n";

  // The verdict first.
  h << "<h1>tapecheck certification of " << htmlEscape(what) << "</h1>\n";
  h << "<div class=\"verdict " << verdictClass(cert.verdict) << "\" id=\"verdict\">"
    << (cert.verdict == Verdict::Certified ? "CERTIFIED" : "REJECTED") << "<small>"
    << htmlEscape(what) << " on " << htmlEscape(id.device) << " \xE2\x80\x94 ";
  if (cert.reasons.empty())
    h << "every op and pass within its budget, no failing case";
  else
    h << cert.reasons.size() << (cert.reasons.size() == 1 ? " reason" : " reasons")
      << " to reject";
  h << "</small></div>\n";
  if (const std::string coverage = coverageSummary(cert); !coverage.empty())
    h << "<p class=\"shardnote\" id=\"coverage\">A partial kernel table: it is certified for "
      << "what it provides only. " << htmlEscape(coverage) << ".</p>\n";
  if (cert.shard)
    h << "<p class=\"shardnote\">This is shard " << cert.shard->index << " of "
      << cert.shard->count << ": a part of the work, not a certificate. Combine the shards with "
      << "<code>tapecheck certify merge</code>.</p>\n";
  if (!cert.reasons.empty()) {
    h << "<h2>Every reason</h2>\n" << reasonsList(cert.reasons);
  }

  // What was certified.
  h << "<h2>What was certified</h2>\n<table>\n";
  h << row({"Kernels", htmlEscape(what) + " (source <code>" + htmlEscape(id.kernelsSource) +
                           "</code>)"});
  h << row({"Kernels file", "<code>" + htmlEscape(id.kernelsFile) + "</code>"});
  h << row({"Kernels SHA-256", "<code>" + htmlEscape(id.kernelsSha256) + "</code>"});
  h << row({"Harness", "tapecheck " + htmlEscape(id.harnessVersion) + ", git <code>" +
                           htmlEscape(id.gitRevision) + "</code>"});
  h << row({"Vector corpus", num(id.corpusFiles) + " files, SHA-256 <code>" +
                                 htmlEscape(id.corpusSha256) + "</code>"});
  h << row({"Device", htmlEscape(id.device)});
  h << row({"Seed / cases per op", num(id.seed) + " / " + num(id.casesPerOp)});
  h << row({"Tests", num(cert.totals.tests) + " tests: " + num(cert.totals.passed) + " passed, " +
                         num(cert.totals.failed) + " failed, " + num(cert.totals.mistrusted) +
                         " mistrusted, " + num(cert.totals.skipped) + " skipped"});
  if (cert.mergedShards > 0) h << row({"Shards", "merged from " + num(cert.mergedShards)});
  h << row({"Created", htmlEscape(cert.created)});
  h << "</table>\n";

  // The baseline.
  if (cert.baseline) {
    const BaselineInfo& b = *cert.baseline;
    h << "<h2>Changes since the baseline</h2>\n<p>Baseline: " << htmlEscape(b.kernelsName) << " "
      << htmlEscape(b.kernelsVersion) << " (git <code>" << htmlEscape(b.gitRevision)
      << "</code>, certificate SHA-256 <code>" << htmlEscape(b.sha256) << "</code>). Rule: a "
      << "max error more than " << htmlEscape(formatFigure(b.growthFactor))
      << "&times; the baseline's and by more than " << htmlEscape(formatFigure(b.growthSlackUlps))
      << " ulp rejects, even within budget.";
    if (b.corpusSha256 != id.corpusSha256)
      h << " <strong>The vector corpus differs from the baseline's.</strong>";
    h << "</p>\n";
    std::size_t notable = 0;
    for (const BaselineChange& c : cert.changes) notable += c.kind != "unchanged" ? 1 : 0;
    h << "<p>" << notable << " of " << cert.changes.size() << " passes changed.</p>\n";
    h << "<table>\n"
      << row({"Op", "Pass", "Change", "Failures (baseline &rarr; now)",
              "Max ulps (baseline &rarr; now)", "p99 ulps (baseline &rarr; now)"},
             "th");
    for (int pass = 0; pass < 2; ++pass)  // notable changes first
      for (const BaselineChange& c : cert.changes) {
        if ((c.kind == "unchanged") != (pass == 1)) continue;
        h << (c.rejects ? "<tr class=\"bad\">" : "<tr>") << "<td>" << htmlEscape(c.op)
          << "</td><td>" << htmlEscape(c.pass) << "</td><td>" << htmlEscape(c.kind)
          << "</td><td class=\"n\">" << c.baselineFailures << " &rarr; " << c.failures
          << "</td><td class=\"n\">" << htmlEscape(formatFigure(c.baselineMaxUlps)) << " &rarr; "
          << htmlEscape(formatFigure(c.maxUlps)) << "</td><td class=\"n\">"
          << htmlEscape(formatFigure(c.baselineP99Ulps)) << " &rarr; "
          << htmlEscape(formatFigure(c.p99Ulps)) << "</td></tr>\n";
      }
    h << "</table>\n";
  }

  // Summary of the ops.
  h << "<h2>Operations</h2>\n<table>\n"
    << row({"Op", "Verdict", "Passes", "Cases", "Failures", "Mistrusted", "Worst max ulps"}, "th");
  for (const OpRecord& op : cert.ops) {
    std::uint64_t cases = 0, failures = 0, mistrusted = 0;
    double worst = 0;
    std::string passes;
    for (const PassRecord& p : op.passes) {
      cases += p.cases;
      failures += p.failures;
      mistrusted += p.mistrusted;
      worst = std::max(worst, p.maxUlps);
      passes += (passes.empty() ? "" : ", ") + p.pass;
    }
    h << (op.verdict == Verdict::Rejected ? "<tr class=\"bad\">" : "<tr>") << "<td><a href=\"#"
      << anchorOf(op.op) << "\">" << htmlEscape(op.op) << "</a></td><td>"
      << verdictBadge(op.verdict) << "</td><td>" << htmlEscape(passes) << "</td><td class=\"n\">"
      << cases << "</td><td class=\"n\">" << failures << "</td><td class=\"n\">" << mistrusted
      << "</td><td class=\"n\">" << htmlEscape(formatFigure(worst)) << "</td></tr>\n";
  }
  h << "</table>\n";

  // One section per op.
  for (const OpRecord& op : cert.ops) {
    h << "<h2 id=\"" << anchorOf(op.op) << "\">" << htmlEscape(op.op) << " "
      << verdictBadge(op.verdict) << "</h2>\n";
    h << reasonsList(op.reasons);
    if (op.passes.empty()) {
      h << "<p class=\"muted\">No pass of this op was run.</p>\n";
      continue;
    }
    h << "<table>\n"
      << row({"Pass", "Verdict", "Cases", "Failures", "Mistrusted", "Skipped", "Max ulps",
              "p99 ulps", "Mean ulps", "Budget ulps"},
             "th");
    for (const PassRecord& p : op.passes) {
      if (!p.provided()) {
        std::string missing;
        for (const std::string& e : p.missingEntries)
          missing += (missing.empty() ? "" : ", ") + ("<code>" + htmlEscape(e) + "</code>");
        h << "<tr class=\"na\"><td>" << htmlEscape(p.pass) << "</td><td>"
          << verdictBadge(p.verdict) << "</td><td colspan=\"8\">not provided by the kernels: "
          << missing << "</td></tr>\n";
        continue;
      }
      h << (p.verdict == Verdict::Rejected ? "<tr class=\"bad\">" : "<tr>") << "<td>"
        << htmlEscape(p.pass) << "</td><td>" << verdictBadge(p.verdict) << "</td><td class=\"n\">"
        << p.cases << "</td><td class=\"n\">" << p.failures << "</td><td class=\"n\">"
        << p.mistrusted << "</td><td class=\"n\">" << p.skipped << "</td><td class=\"n\">"
        << htmlEscape(formatFigure(p.maxUlps)) << "</td><td class=\"n\">"
        << htmlEscape(formatFigure(p.p99Ulps)) << "</td><td class=\"n\">"
        << htmlEscape(formatFigure(p.meanUlps)) << "</td><td class=\"n\">"
        << htmlEscape(formatFigure(p.budgetUlps)) << "</td></tr>\n";
    }
    h << "</table>\n";
    for (const PassRecord& p : op.passes) h << reasonsList(p.reasons);
    h << "<div>\n";
    for (const PassRecord& p : op.passes) {
      if (!p.provided()) continue;
      h << "<div class=\"hist\">";
      if (p.errorsUlps.empty())
        h << "<p class=\"muted\">" << htmlEscape(op.op + " " + p.pass)
          << ": no error list recorded</p>";
      else
        h << svgHistogram(p.errorsUlps, p.budgetUlps, op.op + " " + p.pass);
      h << "</div>\n";
    }
    h << "</div>\n";
    for (const PassRecord& p : op.passes) {
      if (p.examples.empty()) continue;
      h << "<h3>" << htmlEscape(op.op + " " + p.pass) << ": failing cases (worst first)</h3>\n"
        << "<table>\n" << row({"Group", "Shape", "Error ulps", "Reason", "Reproducer"}, "th");
      for (const conformance::CaseExample& e : p.examples) {
        std::string repro = "<pre><code>" + htmlEscape(e.reproducer) + "</code></pre>";
        if (!e.valuesFile.empty())
          repro += "<span class=\"muted\">inputs: <code>" + htmlEscape(e.valuesFile) +
                   "</code></span>";
        h << row({htmlEscape(e.group), "<code>" + htmlEscape(e.shape) + "</code>",
                  htmlEscape(formatFigure(e.errorUlps)), htmlEscape(e.reason), repro});
      }
      h << "</table>\n";
    }
  }
  h << "<p class=\"muted\">Written by tapecheck " << htmlEscape(id.harnessVersion)
    << ". The machine-readable statement is certificate.json (format " << kCertificateFormat
    << "), verified by certificate.sha256.</p>\n</body>\n</html>\n";
  return h.str();
}

}  // namespace tapecheck::certify
