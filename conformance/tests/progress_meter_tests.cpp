// Progress lines: the share done, the time spent and left, how often they are shown, and the
// terminal form that rewrites one line.
#include <catch2/catch.hpp>

#include <sstream>

#include "../src/progress_meter.h"

using namespace tapecheck::conformance;

TEST_CASE("durations read in the two largest units", "[progress]") {
  CHECK(formatDuration(0) == "0 s");
  CHECK(formatDuration(-3) == "0 s");
  CHECK(formatDuration(7.4) == "7 s");
  CHECK(formatDuration(59.4) == "59 s");
  CHECK(formatDuration(59.6) == "1 min 00 s");
  CHECK(formatDuration(65) == "1 min 05 s");
  CHECK(formatDuration(3599) == "59 min 59 s");
  CHECK(formatDuration(3600 + 3 * 60 + 20) == "1 h 03 min");
}

TEST_CASE("a progress line gives the percentage done, the time spent and the time left",
          "[progress]") {
  // 1000 of 4000 cases in 12 s: 3000 more at the same pace take 36 s.
  CHECK(progressText("tapecheck certify", 1000, 4000, 12, "softmaxLast") ==
        "tapecheck certify: 25% (1000/4000 cases, softmaxLast), 12 s elapsed, about 36 s left");
  // 2/3 is 66.7%: rounded down. 1 left after 10 s for 2: 5 s.
  CHECK(progressText("tapecheck run", 2, 3, 10, "layerNorm") ==
        "tapecheck run: 66% (2/3 cases, layerNorm), 10 s elapsed, about 5 s left");
  // 3999 of 4000 is not yet 100%.
  CHECK(progressText("tapecheck run", 3999, 4000, 100, "") ==
        "tapecheck run: 99% (3999/4000 cases), 1 min 40 s elapsed, about 0 s left");
}

TEST_CASE("a progress line has no estimate before the first case and after the last",
          "[progress]") {
  CHECK(progressText("tapecheck run", 0, 500, 0, "") == "tapecheck run: 0% (0/500 cases)");
  CHECK(progressText("tapecheck run", 500, 500, 61, "topKMask") ==
        "tapecheck run: 100% (500/500 cases, topKMask), 1 min 01 s elapsed");
  CHECK(progressText("tapecheck run", 0, 0, 0, "") == "tapecheck run: 100% (0/0 cases)");
}

TEST_CASE("in a log the first line comes at once and then one per interval", "[progress]") {
  std::ostringstream out;
  ProgressMeter meter(out, "tapecheck run", 10, 3, false);
  meter.start();
  meter.update(1, "a", 1.0);  // too soon after the start
  meter.update(2, "a", 3.0);  // shown
  meter.update(3, "a", 5.9);  // too soon after 3.0
  meter.update(4, "b", 6.0);  // shown
  meter.finish(7);            // nothing more in a log
  CHECK(out.str() ==
        "tapecheck run: 0% (0/10 cases)\n"
        "tapecheck run: 20% (2/10 cases, a), 3 s elapsed, about 12 s left\n"
        "tapecheck run: 40% (4/10 cases, b), 6 s elapsed, about 9 s left\n");
}

TEST_CASE("on a terminal one line is rewritten and ends with the final count", "[progress]") {
  std::ostringstream out;
  ProgressMeter meter(out, "tapecheck certify", 4, 0.5, true);
  meter.start();
  meter.update(2, "a", 1.0);
  meter.finish(2);
  CHECK(out.str() ==
        "\rtapecheck certify: 0% (0/4 cases)\x1b[K"
        "\rtapecheck certify: 50% (2/4 cases, a), 1 s elapsed, about 1 s left\x1b[K"
        "\rtapecheck certify: 100% (4/4 cases), 2 s elapsed\x1b[K\n");
}
