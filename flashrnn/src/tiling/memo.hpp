// The solved configurations of a tiling family, kept per device and problem: a training loop asks for
// the same sizes thousands of times and each is solved (or compiled) once.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>

namespace flashrnn::tiling {

// A thread-safe memo: each key's value is computed once, under the lock (a thread that asks for a
// key being computed waits for it), and kept; a computation that throws keeps nothing.
template <class Key, class Value> class Memo {
  public:
    // At most `capacity` values (0: no limit): a full memo is emptied before it keeps the next one.
    explicit Memo(std::size_t capacity = 0) : capacity_(capacity) {}

    template <class Compute> Value get(const Key& key, Compute compute) {
        std::lock_guard lock(mutex_);
        if (auto it = values_.find(key); it != values_.end()) return it->second;
        Value value = compute();
        if (capacity_ > 0 && values_.size() >= capacity_) values_.clear();
        values_.emplace(key, value);
        return value;
    }

  private:
    std::mutex mutex_;
    std::map<Key, Value> values_;
    std::size_t capacity_;
};

} // namespace flashrnn::tiling
