// Evaluates items 0..count-1 on `jobs` worker threads and hands the results to `consume` on the
// calling thread in index order, so whatever consume builds (a report) does not depend on the
// number of threads or on their timing.
//
// Results are produced at most kLookahead * jobs items ahead of the one being consumed, so memory
// stays bounded; the window is wide because one slow item (a case of millions of elements takes
// seconds) must not stall the other threads once they have run that far ahead of it.
// An exception thrown by `evaluate` stops the workers and is rethrown by this function.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tapecheck::conformance {

inline constexpr std::size_t kLookahead = 256;

template <class Evaluate, class Consume>
void evaluateInOrder(std::size_t count, unsigned jobs, Evaluate evaluate, Consume consume) {
  using Value = decltype(evaluate(std::size_t{0}));
  if (jobs <= 1 || count <= 1) {
    for (std::size_t n = 0; n < count; ++n) consume(n, evaluate(n));
    return;
  }

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::unique_ptr<Value>> slots(count);
  std::size_t nextToTake = 0, nextToConsume = 0;
  std::exception_ptr failure;
  const std::size_t window = kLookahead * jobs;

  auto work = [&] {
    for (;;) {
      std::size_t n;
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] {
          return failure || nextToTake >= count || nextToTake < nextToConsume + window;
        });
        if (failure || nextToTake >= count) return;
        n = nextToTake++;
      }
      std::unique_ptr<Value> value;
      std::exception_ptr error;
      try {
        value = std::make_unique<Value>(evaluate(n));
      } catch (...) {
        error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (error && !failure) failure = error;
        slots[n] = std::move(value);
      }
      changed.notify_all();
    }
  };

  std::vector<std::thread> workers;
  const std::size_t threads = jobs < count ? jobs : count;
  workers.reserve(threads);
  for (std::size_t t = 0; t < threads; ++t) workers.emplace_back(work);

  std::exception_ptr consumeFailure;
  for (; nextToConsume < count;) {
    std::unique_ptr<Value> value;
    {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait(lock, [&] { return failure || slots[nextToConsume] != nullptr; });
      if (failure) break;
      value = std::move(slots[nextToConsume]);
    }
    try {
      consume(nextToConsume, *value);
    } catch (...) {
      consumeFailure = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++nextToConsume;
      if (consumeFailure && !failure) failure = consumeFailure;
    }
    changed.notify_all();
    if (consumeFailure) break;
  }
  for (std::thread& w : workers) w.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace tapecheck::conformance
