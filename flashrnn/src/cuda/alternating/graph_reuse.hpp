// How a pass of the alternating backend reaches the caller's stream: replayed from a graph kept for
// its shape and pointers, or launched directly (alternating.hpp; which graphs are kept:
// graph_cache.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include "flashrnn/core/stream.hpp"

namespace flashrnn::alternating {

// Everything but the pointers that decides a pass's launches: pass, cell, dtype, sizes, layout and
// gradient policy, as integers (the device is implied: graphs are kept per device).
using PassKey = std::array<std::int64_t, 10>;
// Every pointer the pass's launches read or write, the workspace included (null where absent).
using PassPointers = std::array<const void*, 10>;

// Enqueues the pass on `stream`. `enqueue(s)` makes the pass's launches on stream `s` and nothing else
// (arguments checked, launch configurations solved and buffers planned before): it runs directly on
// `stream`, or on the backend's capture stream to record a graph that is then launched on `stream`.
void run_pass(const PassKey& key, const PassPointers& pointers, Stream stream,
              const std::function<void(Stream)>& enqueue);

} // namespace flashrnn::alternating
