// evaluateInOrder: results reach the consumer in index order whatever the threads' timing, only
// a bounded number are alive at once, and a worker's exception is rethrown to the caller.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "../src/in_order_pool.h"

using tapecheck::conformance::evaluateInOrder;
using tapecheck::conformance::kLookahead;

namespace {
// Later items finish first: item n sleeps (count - n) * 50 microseconds.
int slowFirst(std::size_t n, std::size_t count) {
  std::this_thread::sleep_for(std::chrono::microseconds(50 * (count - n)));
  return static_cast<int>(n) * 3;
}
}  // namespace

TEST_CASE("evaluateInOrder hands results over in index order", "[runner]") {
  for (unsigned jobs : {1u, 2u, 7u}) {
    const std::size_t count = 200;
    std::vector<std::size_t> seen;
    evaluateInOrder(count, jobs, [&](std::size_t n) { return slowFirst(n, count); },
                    [&](std::size_t n, int value) {
                      REQUIRE(value == static_cast<int>(n) * 3);
                      seen.push_back(n);
                    });
    REQUIRE(seen.size() == count);
    for (std::size_t n = 0; n < count; ++n) REQUIRE(seen[n] == n);
  }
}

TEST_CASE("evaluateInOrder keeps at most a window of results ahead of the consumer", "[runner]") {
  const unsigned jobs = 2;
  const std::size_t window = kLookahead * jobs;
  std::atomic<std::size_t> started{0};
  std::size_t worstLead = 0;
  evaluateInOrder(
      3 * window, jobs, [&](std::size_t n) { ++started; return n; },
      [&](std::size_t n, std::size_t) {
        const std::size_t lead = started.load() - n;
        worstLead = std::max(worstLead, lead);
        std::this_thread::sleep_for(std::chrono::microseconds(50));  // a slow consumer
      });
  REQUIRE(worstLead <= window + 1);
  REQUIRE(worstLead >= window / 2);  // and the workers did run ahead
}

TEST_CASE("evaluateInOrder rethrows an exception thrown while evaluating", "[runner]") {
  for (unsigned jobs : {1u, 3u}) {
    std::size_t consumed = 0;
    auto run = [&] {
      evaluateInOrder(
          100, jobs,
          [](std::size_t n) {
            if (n == 37) throw std::runtime_error("case 37 broke");
            return n;
          },
          [&](std::size_t, std::size_t) { ++consumed; });
    };
    REQUIRE_THROWS_WITH(run(), "case 37 broke");
    REQUIRE(consumed <= 37);
  }
}
