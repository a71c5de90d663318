// How the alternating backend carves its workspace: named parts, each 256-byte aligned, in the order
// they are declared. The same plan gives the size (for *_workspace_bytes) and the pointers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace flashrnn::alternating {

class WorkspacePlan {
  public:
    explicit WorkspacePlan(void* base = nullptr) : base_(static_cast<std::byte*>(base)) {}

    // Reserves `count` elements of `bytes_each` bytes and returns their address (null when the plan
    // only measures).
    void* take(std::int64_t count, int bytes_each) {
        const std::size_t offset = size_;
        size_ += (static_cast<std::size_t>(count) * static_cast<std::size_t>(bytes_each) + kAlignment - 1) /
                 kAlignment * kAlignment;
        return base_ ? base_ + offset : nullptr;
    }
    template <class T> T* take(std::int64_t count) { return static_cast<T*>(take(count, sizeof(T))); }

    std::size_t size() const { return size_; }

  private:
    static constexpr std::size_t kAlignment = 256;
    std::byte* base_;
    std::size_t size_ = 0;
};

} // namespace flashrnn::alternating
