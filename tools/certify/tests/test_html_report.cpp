#include <catch2/catch.hpp>

#include <limits>

#include "fixtures.h"
#include "tapecheck/certify/html_report.h"
#include "tapecheck/certify/verdict.h"

using namespace tapecheck::certify;
using namespace tapecheck::certify::testing;

namespace {

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("htmlEscape escapes markup and quotes", "[html]") {
  CHECK(htmlEscape("<script>alert('x') & \"y\"</script>") ==
        "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
  CHECK(htmlEscape("plain text, 1 < 2") == "plain text, 1 &lt; 2");
  CHECK(htmlEscape("&amp;") == "&amp;amp;");
}

TEST_CASE("htmlEscape keeps valid UTF-8 and replaces what is not text", "[html]") {
  CHECK(htmlEscape("caf\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x98\x80") ==
        "caf\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x98\x80");
  CHECK(htmlEscape("a\xFF" "b") == "a\xEF\xBF\xBD" "b");         // invalid byte
  CHECK(htmlEscape("\xC3") == "\xEF\xBF\xBD");                     // truncated sequence
  CHECK(htmlEscape("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");     // overlong '/'
  CHECK(htmlEscape("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  CHECK(htmlEscape(std::string("a\0b", 3)) == "a\xEF\xBF\xBD" "b");
  CHECK(htmlEscape("tab\tnew\nline") == "tab\tnew\nline");
}

TEST_CASE("histogram bins are log2 of ulps with zero and non-finite apart", "[html]") {
  Histogram h = histogramOf({0.0, 0.0, 0.01, 0.125, 0.2, 1.0, 1.5, 2.0, 1000.0,
                             std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN()});
  REQUIRE(h.bins.size() >= 15);
  CHECK(h.bins[0] == 2);  // exact zeros
  CHECK(h.bins[1] == 1);  // below 1/8
  CHECK(h.bins[2] == 2);  // [1/8, 1/4)
  CHECK(h.bins[5] == 2);  // [1, 2)
  CHECK(h.bins[6] == 1);  // [2, 4)
  CHECK(h.bins[14] == 1); // [512, 1024)
  CHECK(h.bins.size() == 15);
  CHECK(h.nonFinite == 2);
  CHECK(histogramOf({}).bins.size() == 6);  // always up to [1, 2)
}

TEST_CASE("the histogram is an SVG element with the budget marked", "[html]") {
  const std::string svg = svgHistogram({0.5, 1.0, 3.0, 9.0}, 4.0, "softmaxLast <fwd>");
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(svg.find("budget 4") != std::string::npos);
  CHECK(svg.find("softmaxLast &lt;fwd&gt;") != std::string::npos);
  CHECK(svg.find("<fwd>") == std::string::npos);
  CHECK(svg.find("#cf222e\"/>") != std::string::npos);  // the bar over budget is red
  CHECK(svgHistogram({0.0}, 0.0, "x").find("budget") == std::string::npos);
}

TEST_CASE("the report puts the verdict first and escapes every text", "[html]") {
  auto report = cleanReport();
  report.kernelsName = "<script>evil()</script>";
  report.passes[0].failures = 1;
  tapecheck::conformance::CaseExample ex;
  ex.group = "softmaxLast fwd <odd>";
  ex.shape = "[3,1025]";
  ex.reason = "y & z differ";
  ex.reproducer = "tapecheck run --ops softmaxLast --case 'a<b>'";
  ex.errorUlps = 9;
  report.passes[0].examples.push_back(ex);
  Certificate c = certificateOf(report);
  judge(c, JudgeOptions{{"softmaxLast", "topKMask"}});
  const std::string html = renderHtmlReport(c);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("&lt;script&gt;evil()&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("--case &#39;a&lt;b&gt;&#39;") != std::string::npos);
  CHECK(html.find("y &amp; z differ") != std::string::npos);
  const auto verdict = html.find("REJECTED");
  REQUIRE(verdict != std::string::npos);
  CHECK(verdict < html.find("<table"));
  CHECK(html.find("class=\"verdict bad\"") != std::string::npos);
  CHECK(occurrences(html, "<svg") == 3);  // one histogram per op and pass
  CHECK(html.find("1 of 40 cases failed") != std::string::npos);
  CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));  // no other URL
  CHECK(html.find("https://") == std::string::npos);
}

TEST_CASE("a certified report says so in green", "[html]") {
  Certificate c = certificateOf(cleanReport());
  judge(c, JudgeOptions{});
  const std::string html = renderHtmlReport(c);
  CHECK(html.find("class=\"verdict ok\"") != std::string::npos);
  CHECK(html.find(">CERTIFIED<") != std::string::npos);
  CHECK(html.find("REJECTED") == std::string::npos);
}

TEST_CASE("the report shows what changed since the baseline", "[html]") {
  Certificate base = certificateOf(cleanReport());
  judge(base, JudgeOptions{});
  auto report = cleanReport();
  report.passes[1].errorsUlps[5] = 13.5;
  Certificate c = certificateOf(report);
  judge(c, JudgeOptions{}, &base, std::string(64, 'c'));
  const std::string html = renderHtmlReport(c);
  CHECK(html.find("Changes since the baseline") != std::string::npos);
  CHECK(html.find("error-growth") != std::string::npos);
  CHECK(html.find("6 &rarr; 13.5") != std::string::npos);
}

TEST_CASE("a shard report says it is only a part", "[html]") {
  Certificate c = certificateOf(cleanReport());
  c.shard = ShardInfo{1, 4};
  judge(c, JudgeOptions{});
  const std::string html = renderHtmlReport(c);
  CHECK(html.find("shard 1 of 4") != std::string::npos);
}

TEST_CASE("failing errors are drawn red even in a histogram whose budget is 0", "[html]") {
  // topKMask fwd judges by its own exact criterion (budget 0): two of its cases failed.
  auto report = cleanReport();
  report.passes[2].errorsUlps[0] = 3.0;
  report.passes[2].errorsUlps[1] = std::numeric_limits<double>::infinity();
  report.passes[2].failures = 2;
  report.passes[2].failedErrorsUlps = {3.0, std::numeric_limits<double>::infinity()};
  Certificate c = certificateOf(report);
  judge(c, JudgeOptions{});
  const std::string svg = svgHistogram(c.findPass("topKMask", "fwd")->errorsUlps, 0.0,
                                       "topKMask fwd", c.findPass("topKMask", "fwd")->failedErrorsUlps);
  // The [2, 4) bin (3 ulps): red, counted as failing.
  CHECK(svg.find("from 2 ulps: 1 (1 failing)") != std::string::npos);
  CHECK(occurrences(svg, "fill=\"#cf222e\"") >= 2);  // that bar and the non-finite one
  CHECK(svg.find("exactly 0 ulps: 38<") != std::string::npos);  // the passing zeros stay blue
  const std::string html = renderHtmlReport(c);
  CHECK(html.find("from 2 ulps: 1 (1 failing)") != std::string::npos);
}

TEST_CASE("a histogram of many bins fits beside another on the page", "[html]") {
  std::vector<double> wide;
  for (int e = -20; e <= 40; ++e) wide.push_back(std::ldexp(1.0, e));
  const std::string svg = svgHistogram(wide, 16.0, "wide");
  const auto at = svg.find("width=\"") + 7;
  const double width = std::stod(svg.substr(at, svg.find('"', at) - at));
  CHECK(width <= kMaxHistogramWidth);
  CHECK(2 * kMaxHistogramWidth + 16 <= 1150);  // two per row within the page's 1150 px
  CHECK(svg.find("max-width: 100%") != std::string::npos);
}

TEST_CASE("the report says how the baseline was compared and where the error grew", "[html]") {
  auto before = withCases(cleanReport());
  for (std::size_t i = 20; i < 40; ++i) before.passes[1].errorsUlps[i] = 0.5;
  for (std::size_t i = 20; i < 40; ++i) before.passes[1].caseRecords[i].ulps = 0.5;
  Certificate base = certificateOf(before);
  judge(base, JudgeOptions{});
  auto after = before;
  after.passes[1].errorsUlps[25] = 3.0;
  after.passes[1].caseRecords[25].ulps = 3.0;
  Certificate c = certificateOf(after);
  JudgeOptions o;
  o.caseShape = [](const std::string&, std::uint64_t) { return std::string("[2,125]"); };
  judge(c, o, &base, std::string(64, 'c'));
  const std::string html = renderHtmlReport(c);
  CHECK(html.find("replayed the same cases and compared them one by one") != std::string::npos);
  CHECK(html.find("Where the error grew") != std::string::npos);
  CHECK(html.find("cols-long") != std::string::npos);
  CHECK(html.find("case 25 <code>[2,125]</code>") != std::string::npos);
  CHECK(html.find("--ops softmaxLast --seed 7 --case 25") != std::string::npos);
}
