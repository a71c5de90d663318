// What the threads of a parallel search share (engine/parallel_search.hpp): the stop flag and the
// node and failure totals that the limits count, and the best objective values found so far.
#pragma once

#include "constrint/model.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace constrint::engine {

class SharedSearch {
  public:
    SharedSearch(std::vector<Sense> senses, std::chrono::steady_clock::time_point start)
        : senses_(std::move(senses)), start_(start) {}

    std::chrono::steady_clock::time_point start() const { return start_; }

    // Every thread stops at its next check; the first reason given is the one reported.
    void stop(const std::string& reason) {
        const std::lock_guard lock(mutex_);
        if (reason_.empty()) reason_ = reason;
        stopped_.store(true, std::memory_order_relaxed);
    }
    bool stopped() const { return stopped_.load(std::memory_order_relaxed); }
    std::string stop_reason() const {
        const std::lock_guard lock(mutex_);
        return reason_;
    }

    // Totals over the threads, for the node and failure limits.
    std::atomic<std::uint64_t> nodes{0};
    std::atomic<std::uint64_t> failures{0};

    // Objective values of a solution: true when they beat the best so far (lexicographically, in
    // each objective's sense), and they are the best from now on.
    bool offer(const std::vector<Integer>& values) {
        const std::lock_guard lock(mutex_);
        if (!best_.empty() && !better(values, best_)) return false;
        best_ = values;
        best_version_.fetch_add(1, std::memory_order_release);
        return true;
    }
    // The best values when they changed since `seen` (which is updated); empty otherwise.
    std::vector<Integer> best_if_newer(std::uint64_t& seen) const {
        if (best_version_.load(std::memory_order_acquire) == seen) return {};
        const std::lock_guard lock(mutex_);
        seen = best_version_.load(std::memory_order_relaxed);
        return best_;
    }
    std::vector<Integer> best() const {
        const std::lock_guard lock(mutex_);
        return best_;
    }

  private:
    bool better(const std::vector<Integer>& a, const std::vector<Integer>& b) const {
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (a[i] == b[i]) continue;
            return senses_[i] == Sense::Maximize ? a[i] > b[i] : a[i] < b[i];
        }
        return false;
    }

    const std::vector<Sense> senses_;
    const std::chrono::steady_clock::time_point start_;
    mutable std::mutex mutex_;
    std::atomic<bool> stopped_{false};
    std::string reason_;
    std::vector<Integer> best_;
    std::atomic<std::uint64_t> best_version_{0};
};

} // namespace constrint::engine
