// Which executable CUDA graphs of the alternating backend's passes are kept (graph_reuse.cpp uses it
// with cudaGraphExec_t). Free of CUDA so that the policy is tested on the CPU
// (tests/flashrnn/test_alternating_graph_cache.cpp).
//
// A captured pass is a function of its shape key (device, pass, cell, dtype, sizes, gradient policy)
// and of the pointers it was captured with, nothing else: a call whose shape key and pointers equal a
// kept graph's replays that graph. Any other call needs a capture. While its shape key has fewer than
// `per_shape` graphs, the capture becomes a new graph (the least recently used graph of the cache goes
// when it holds `capacity`), so that a loop alternating between a few sets of buffers replays each.
// Once the shape key has its `per_shape` graphs, a call with yet other pointers is `staged`: it runs
// the shape's one graph over buffers of the backend's own, its inputs copied in and outputs copied
// out (graph_reuse.cpp), because a training loop that allocates new tensors on every call would
// otherwise pay a capture (thousands of launches recorded) per call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <string_view>
#include <utility>

namespace flashrnn::alternating {

enum class GraphOutcome { replayed, made, staged };

template <class ShapeKey, class Pointers, class Graph> class GraphCache {
  public:
    GraphCache(std::size_t capacity, std::size_t per_shape)
        : capacity_(capacity < 1 ? 1 : capacity), per_shape_(per_shape < 1 ? 1 : per_shape) {}

    // The graph for (shape, pointers), most recently used from now on: a kept one (`replayed`) or
    // `make()`'s, kept (`made`). Null with `staged` when the shape has its graphs and none is for
    // these pointers. If `make` throws, the exception passes through and nothing is kept.
    template <class Make>
    Graph* get(const ShapeKey& shape, const Pointers& pointers, Make&& make, GraphOutcome& outcome) {
        std::size_t of_shape = 0;
        for (auto it = entries_.begin(); it != entries_.end(); ++it) {
            if (!(it->shape == shape)) continue;
            if (it->pointers == pointers) {
                entries_.splice(entries_.begin(), entries_, it);
                outcome = GraphOutcome::replayed;
                return &entries_.front().graph;
            }
            ++of_shape;
        }
        if (of_shape >= per_shape_) {
            outcome = GraphOutcome::staged;
            return nullptr;
        }
        Graph graph = make();
        if (entries_.size() >= capacity_) entries_.pop_back();
        entries_.push_front(Entry{shape, pointers, std::move(graph)});
        outcome = GraphOutcome::made;
        return &entries_.front().graph;
    }

    std::size_t size() const { return entries_.size(); }
    void clear() { entries_.clear(); }

  private:
    struct Entry {
        ShapeKey shape;
        Pointers pointers;
        Graph graph;
    };
    std::size_t capacity_, per_shape_;
    std::list<Entry> entries_; // most recently used first
};

// The switch FLASHRNN_ALTERNATING_GRAPHS: graphs are kept unless it is "0", "off", "false" or "no".
inline bool graph_reuse_from_environment(const char* value) {
    if (!value) return true;
    const std::string_view v(value);
    return !(v == "0" || v == "off" || v == "false" || v == "no" || v == "OFF" || v == "FALSE" || v == "NO");
}

} // namespace flashrnn::alternating
