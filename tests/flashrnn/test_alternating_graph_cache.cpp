// The alternating backend's policy for kept CUDA graphs (graph_cache.hpp), without a GPU: which calls
// replay, which make a new one, which are staged (the shape's graphs are all kept for other pointers)
// and which graph goes when the cache is full; failures keep nothing; the FLASHRNN_ALTERNATING_GRAPHS
// switch.
#include <doctest/doctest.h>

#include <array>
#include <memory>
#include <stdexcept>
#include <vector>

// The header is private to the library (src/); it includes nothing of CUDA.
#include "../../flashrnn/src/cuda/alternating/graph_cache.hpp"

namespace {

using flashrnn::alternating::GraphCache;
using flashrnn::alternating::GraphOutcome;
using Shape = std::array<long, 2>;
using Pointers = std::array<int, 2>;

// A graph knows which pointers it was captured for; `alive` counts graphs not yet destroyed.
struct FakeGraph {
    Pointers pointers;
    std::shared_ptr<int> alive;
    FakeGraph(Pointers p, std::shared_ptr<int> counter) : pointers(p), alive(std::move(counter)) { ++*alive; }
    FakeGraph(FakeGraph&& other) noexcept : pointers(other.pointers), alive(std::move(other.alive)) {}
    FakeGraph(const FakeGraph&) = delete;
    ~FakeGraph() {
        if (alive) --*alive;
    }
};

struct Harness {
    GraphCache<Shape, Pointers, FakeGraph> cache;
    std::shared_ptr<int> alive = std::make_shared<int>(0);
    int made = 0;

    Harness(std::size_t capacity, std::size_t per_shape) : cache(capacity, per_shape) {}

    // One call: the outcome, and the graph it launches (none when staged) must be for exactly these
    // pointers.
    GraphOutcome call(Shape shape, Pointers pointers) {
        GraphOutcome outcome{};
        FakeGraph* graph = cache.get(
            shape, pointers,
            [&] {
                ++made;
                return FakeGraph(pointers, alive);
            },
            outcome);
        CHECK((graph == nullptr) == (outcome == GraphOutcome::staged));
        if (graph) CHECK(graph->pointers == pointers);
        return outcome;
    }
};

} // namespace

TEST_CASE("alternating graph cache: the same shape and pointers replay, new pointers make graphs up to the "
          "per-shape limit, then other pointers are staged and the kept graphs stay") {
    Harness h(16, 2);
    const Shape a{1, 64}, b{2, 64};
    CHECK(h.call(a, {1, 1}) == GraphOutcome::made);
    CHECK(h.call(a, {1, 1}) == GraphOutcome::replayed);
    CHECK(h.call(a, {2, 2}) == GraphOutcome::made); // double buffering: two graphs
    CHECK(h.call(a, {1, 1}) == GraphOutcome::replayed);
    CHECK(h.call(a, {2, 2}) == GraphOutcome::replayed);
    CHECK(h.call(a, {3, 3}) == GraphOutcome::staged); // a new tensor on every call from here on
    CHECK(h.call(a, {4, 4}) == GraphOutcome::staged);
    CHECK(h.call(a, {2, 2}) == GraphOutcome::replayed);
    CHECK(h.call(a, {1, 1}) == GraphOutcome::replayed);
    CHECK(h.call(b, {3, 3}) == GraphOutcome::made); // another shape has its own limit
    CHECK(h.cache.size() == 3);
    CHECK(*h.alive == 3);
    CHECK(h.made == 3);
}

TEST_CASE("alternating graph cache: shapes never share a graph; a full cache drops its least recently used") {
    Harness h(3, 4);
    const Shape a{1, 64}, b{2, 64}, c{1, 768}, d{3, 16};
    const Pointers p{7, 7};
    CHECK(h.call(a, p) == GraphOutcome::made);
    CHECK(h.call(b, p) == GraphOutcome::made); // same pointers, other shape: its own graph
    CHECK(h.call(c, p) == GraphOutcome::made);
    CHECK(h.call(a, p) == GraphOutcome::replayed); // b is now the least recently used
    CHECK(h.call(d, p) == GraphOutcome::made);     // drops b
    CHECK(h.cache.size() == 3);
    CHECK(*h.alive == 3);
    CHECK(h.call(a, p) == GraphOutcome::replayed);
    CHECK(h.call(c, p) == GraphOutcome::replayed);
    CHECK(h.call(d, p) == GraphOutcome::replayed);
    CHECK(h.call(b, p) == GraphOutcome::made); // b had gone; drops a
    CHECK(h.call(c, p) == GraphOutcome::replayed);
    CHECK(h.call(a, p) == GraphOutcome::made);
    h.cache.clear();
    CHECK(h.cache.size() == 0);
    CHECK(*h.alive == 0);
}

TEST_CASE("alternating graph cache: a failed capture keeps nothing") {
    Harness h(4, 1);
    const Shape a{1, 64};
    GraphOutcome outcome{};
    auto failing_make = [&]() -> FakeGraph { throw std::runtime_error("capture failed"); };
    CHECK_THROWS_AS(h.cache.get(a, {1, 1}, failing_make, outcome), std::runtime_error);
    CHECK(h.cache.size() == 0);
    CHECK(*h.alive == 0);
    CHECK(h.call(a, {1, 1}) == GraphOutcome::made);
    CHECK(h.call(a, {2, 2}) == GraphOutcome::staged);
}

TEST_CASE("alternating graph cache: FLASHRNN_ALTERNATING_GRAPHS turns graphs off with 0, off, false or no") {
    using flashrnn::alternating::graph_reuse_from_environment;
    CHECK(graph_reuse_from_environment(nullptr));
    CHECK(graph_reuse_from_environment("1"));
    CHECK(graph_reuse_from_environment("on"));
    CHECK(graph_reuse_from_environment(""));
    for (const char* off : {"0", "off", "false", "no", "OFF", "FALSE", "NO"})
        CHECK_FALSE(graph_reuse_from_environment(off));
}
