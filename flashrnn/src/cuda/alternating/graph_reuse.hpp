// How a pass of the alternating backend reaches the caller's stream: replayed from a graph kept for
// its shape and pointers, or launched directly (alternating.hpp; which graphs are kept:
// graph_cache.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "flashrnn/core/stream.hpp"

namespace flashrnn::alternating {

// Everything but the pointers that decides a pass's launches: pass, cell, dtype, sizes, layout and
// gradient policy, as integers (the device is implied: graphs are kept per device).
using PassKey = std::array<std::int64_t, 10>;

// A buffer the pass's launches read or write, and how: a staged call (graph_cache.hpp) copies inputs
// into the backend's buffers before the graph and outputs out after it; scratch is neither.
struct PassBuffer {
    enum class Use : std::uint8_t { input, output, scratch };
    void* data = nullptr; // null where absent
    std::size_t bytes = 0;
    Use use = Use::scratch;

    friend bool operator==(const PassBuffer& a, const PassBuffer& b) {
        return a.data == b.data && a.bytes == b.bytes && a.use == b.use;
    }
};
inline constexpr std::size_t kMaxPassBuffers = 10;
// Every buffer of the pass, the workspace included; unused entries absent.
using PassBuffers = std::array<PassBuffer, kMaxPassBuffers>;

// Enqueues the pass on `stream`. `enqueue(s, buffers)` makes the pass's launches on stream `s` over
// `buffers` (the caller's, or the backend's of the same sizes, entry for entry) and nothing else
// (arguments checked, launch configurations solved before): it runs directly on `stream`, or on the
// backend's capture stream to record a graph that is then launched on `stream`.
void run_pass(const PassKey& key, const PassBuffers& buffers, Stream stream,
              const std::function<void(Stream, const PassBuffers&)>& enqueue);

} // namespace flashrnn::alternating
