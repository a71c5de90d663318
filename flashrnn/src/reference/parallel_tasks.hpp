// The float64 references' large products split into tasks of fixed size and run on the machine's
// cores. The split does not depend on the number of threads, so every machine and thread count
// computes the same values; only the time changes. Below kParallelFlops a call runs its tasks in the
// calling thread (starting threads costs tens of microseconds each).
//
// Why: the GPU tests check every kernel against these references, and at the largest heads the
// references took most of the time (LSTM DH 2112, B 16, T 64: about 25 s in one thread; the device
// machine has 16 cores).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "core/environment.hpp"

namespace flashrnn::reference::detail {

// Columns (or rows) of one task: wide enough that Eigen's kernels run at speed, narrow enough that
// a head of 768 units makes 6 tasks per gate.
inline constexpr std::int64_t kTaskColumns = 128;
// About a millisecond of float64 products in one thread.
inline constexpr double kParallelFlops = 32e6;

// The threads a parallel call uses: FLASHRNN_REFERENCE_THREADS (1 to 1024) where set, else the
// machine's hardware threads.
inline int reference_threads() {
    const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return environment_integer("FLASHRNN_REFERENCE_THREADS", hardware, 1, 1024);
}

// The number of tasks of `columns` columns.
inline std::int64_t column_tasks(std::int64_t columns) {
    return (columns + kTaskColumns - 1) / kTaskColumns;
}

// Runs task(i) for i in [0, tasks), each exactly once, in parallel where the call's work (`flops`)
// pays for threads. The tasks must write disjoint memory. An exception of a task is rethrown here
// after every thread has stopped.
template <class Task> void run_tasks(std::int64_t tasks, double flops, const Task& task) {
    const int threads =
        flops < kParallelFlops ? 1 : static_cast<int>(std::min<std::int64_t>(reference_threads(), tasks));
    if (threads <= 1) {
        for (std::int64_t i = 0; i < tasks; ++i)
            task(i);
        return;
    }
    std::atomic<std::int64_t> next{0};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    const auto work = [&] {
        try {
            for (std::int64_t i = next++; i < tasks; i = next++)
                task(i);
        } catch (...) {
            const std::lock_guard lock(failure_mutex);
            if (!failure) failure = std::current_exception();
            next = tasks; // the others stop at their next task
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(threads - 1));
    for (int t = 1; t < threads; ++t) {
        try {
            pool.emplace_back(work);
        } catch (const std::system_error&) { // no more threads: the ones started do the rest
            break;
        }
    }
    work();
    for (std::thread& thread : pool)
        thread.join();
    if (failure) std::rethrow_exception(failure);
}

} // namespace flashrnn::reference::detail
