// Numbered jobs on a few threads, ended early by a deadline or a stop of
// this process (common/interrupt.h): the calibration campaigns' loop.

#ifndef PTXDIFF_COMMON_PARALLEL_JOBS_H_
#define PTXDIFF_COMMON_PARALLEL_JOBS_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/interrupt.h"

namespace ptxdiff {

// Runs `job(i)` (an absl::StatusOr<R>) for i in [0, jobs) on `threads`
// threads (the caller's among them), each thread taking the next index,
// until all are done, `deadline` passes or a stop is recorded. Each result
// is handed to `merge(i, result)` under one lock, as jobs finish. The first
// error stops the rest and is returned; an error after a stop is none (the
// stop cut the job's child process), and the run ends as stopped.
template <typename Job, typename Merge>
absl::Status RunParallelJobs(int64_t jobs, int threads, absl::Time deadline,
                             const Job& job, const Merge& merge) {
  std::atomic<int64_t> next{0};
  std::mutex mu;
  absl::Status error;
  auto work = [&] {
    for (int64_t i = next++;
         i < jobs && absl::Now() < deadline && !Interrupted(); i = next++) {
      auto result = job(i);
      std::lock_guard<std::mutex> lock(mu);
      if (!result.ok()) {
        if (Interrupted()) return;
        if (error.ok()) error = result.status();
        next = jobs;
        return;
      }
      merge(i, *result);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return error;
}

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_PARALLEL_JOBS_H_
