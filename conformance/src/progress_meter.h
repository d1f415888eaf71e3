// Progress of a run, for the person or the CI log waiting on it: the command, the share of cases
// done, the time spent and an estimate of the time left, on the progress stream (stderr on the
// command line, never stdout, which carries the report). On a terminal one line is rewritten in
// place; in a log a line at most every few seconds, so long runs do not flood it.
#pragma once

#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>

namespace tapecheck::conformance {

// "7 s", "1 min 05 s", "2 h 03 min": rounded to whole seconds, then to the two largest units.
inline std::string formatDuration(double seconds) {
  const long long s = seconds > 0 ? std::llround(seconds) : 0;
  auto two = [](long long v) { return (v < 10 ? "0" : "") + std::to_string(v); };
  if (s < 60) return std::to_string(s) + " s";
  if (s < 3600) return std::to_string(s / 60) + " min " + two(s % 60) + " s";
  return std::to_string(s / 3600) + " h " + two(s % 3600 / 60) + " min";
}

// "tapecheck run: 37% (1480/4000 cases, softmaxLast), 12 s elapsed, about 20 s left". The
// percentage is rounded down (100% only when every case is done); the estimate assumes the rest
// goes at the pace so far, and is left out before the first case and after the last.
inline std::string progressText(const std::string& label, std::uint64_t done, std::uint64_t total,
                                double elapsedSeconds, const std::string& subject) {
  const std::uint64_t percent = total == 0 ? 100 : done * 100 / total;
  std::string text = label + ": " + std::to_string(percent) + "% (" + std::to_string(done) + "/" +
                     std::to_string(total) + " cases" + (subject.empty() ? "" : ", " + subject) +
                     ")";
  if (done == 0) return text;
  text += ", " + formatDuration(elapsedSeconds) + " elapsed";
  if (done < total)
    text += ", about " +
            formatDuration(elapsedSeconds * static_cast<double>(total - done) /
                           static_cast<double>(done)) +
            " left";
  return text;
}

class ProgressMeter {
 public:
  // rewriteLine: `out` is a terminal; each line replaces the previous one ("\r", erase to the end).
  ProgressMeter(std::ostream& out, std::string label, std::uint64_t total, double intervalSeconds,
                bool rewriteLine)
      : out_(out), label_(std::move(label)), total_(total), interval_(intervalSeconds),
        rewrite_(rewriteLine) {}

  // The first line, at once: what runs and how many cases it has.
  void start() { show(progressText(label_, 0, total_, 0, "")); }

  // `done` cases finished after `elapsedSeconds`, the last of `subject`; shown if the previous
  // line is at least the interval old.
  void update(std::uint64_t done, const std::string& subject, double elapsedSeconds) {
    if (elapsedSeconds - shownAt_ < interval_) return;
    shownAt_ = elapsedSeconds;
    show(progressText(label_, done, total_, elapsedSeconds, subject));
  }

  // On a terminal the line ends with the final count, so later messages start on a line of their
  // own; in a log the last periodic line stands.
  void finish(double elapsedSeconds) {
    if (!rewrite_) return;
    show(progressText(label_, total_, total_, elapsedSeconds, ""));
    out_ << "\n" << std::flush;
  }

 private:
  void show(const std::string& text) {
    if (rewrite_)
      out_ << "\r" << text << "\x1b[K" << std::flush;
    else
      out_ << text << "\n" << std::flush;
  }

  std::ostream& out_;
  std::string label_;
  std::uint64_t total_;
  double interval_;
  bool rewrite_;
  double shownAt_ = 0;
};

}  // namespace tapecheck::conformance
