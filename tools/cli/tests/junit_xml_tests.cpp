// The JUnit writer: escaping, and whole documents written out by hand.
#include <catch2/catch.hpp>

#include "junit_xml.h"

using namespace tapecheck::cli;

TEST_CASE("markup characters in an attribute become entities", "[junit]") {
  CHECK(xmlEscape("a<b&c\"d'e>f") == "a&lt;b&amp;c&quot;d&apos;e&gt;f");
  CHECK(xmlEscape("&amp;") == "&amp;amp;");
  CHECK(xmlEscape("") == "");
}

TEST_CASE("line breaks survive in attributes as character references and stay in text",
          "[junit]") {
  CHECK(xmlEscape("one\ntwo\tthree\r") == "one&#10;two&#9;three&#13;");
  CHECK(xmlEscape("one\ntwo\tthree\r", false) == "one\ntwo\tthree&#13;");
}

TEST_CASE("control characters XML cannot carry become U+FFFD and UTF-8 passes through",
          "[junit]") {
  CHECK(xmlEscape(std::string("a\x01" "b\x1f", 4)) == "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
  CHECK(xmlEscape("\xC2\xB5s") == "\xC2\xB5s");  // "µs"
}

TEST_CASE("a document counts passed, failed and skipped cases per suite and in all",
          "[junit]") {
  JunitCase passed{"fwd rows", "softmaxLast", JunitOutcome::Passed, "", "", 12};
  JunitCase failed{"bwd <odd>", "softmaxLast", JunitOutcome::Failed,
                   "x > \"budget\" & 'more'; reproduce: tapecheck run --case 3",
                   "line 1 <b>\nline 2 & 'c'\n", 7};
  JunitCase skipped{"errors golden", "topKMask", JunitOutcome::Skipped, "SKIPPED: none ran", "",
                    std::nullopt};
  const std::string xml = junitXml("tapecheck run: \"aten\"",
                                   {JunitSuite{"softmaxLast", {passed, failed}},
                                    JunitSuite{"topKMask", {skipped}}, JunitSuite{"empty", {}}});
  const std::string expected =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"tapecheck run: &quot;aten&quot;\" tests=\"3\" failures=\"1\" "
      "errors=\"0\" skipped=\"1\">\n"
      "  <testsuite name=\"softmaxLast\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\">\n"
      "    <testcase name=\"fwd rows\" classname=\"softmaxLast\" assertions=\"12\"/>\n"
      "    <testcase name=\"bwd &lt;odd&gt;\" classname=\"softmaxLast\" assertions=\"7\">\n"
      "      <failure message=\"x &gt; &quot;budget&quot; &amp; &apos;more&apos;; reproduce: "
      "tapecheck run --case 3\" type=\"FAILED\">line 1 &lt;b&gt;\nline 2 &amp; &apos;c&apos;\n"
      "</failure>\n"
      "    </testcase>\n"
      "  </testsuite>\n"
      "  <testsuite name=\"topKMask\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\">\n"
      "    <testcase name=\"errors golden\" classname=\"topKMask\">\n"
      "      <skipped message=\"SKIPPED: none ran\"/>\n"
      "    </testcase>\n"
      "  </testsuite>\n"
      "  <testsuite name=\"empty\" tests=\"0\" failures=\"0\" errors=\"0\" skipped=\"0\"/>\n"
      "</testsuites>\n";
  CHECK(xml == expected);
}

TEST_CASE("a document without suites is still a complete testsuites element", "[junit]") {
  CHECK(junitXml("none", {}) ==
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<testsuites name=\"none\" tests=\"0\" failures=\"0\" errors=\"0\" skipped=\"0\">\n"
        "</testsuites>\n");
}
