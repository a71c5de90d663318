// Built when FlashRNN has no CUDA kernels (no nvcc at configure time): the sizes are still answered,
// the launches say why they cannot run. The graph-reuse switch is kept (there are no graphs).
#include "flashrnn/core/error.hpp"
#include <atomic>
#include <cstdlib>
#include <stdexcept>

#include "cuda/alternating/graph_cache.hpp"
#include "flashrnn/rnn/alternating.hpp"
#include "rnn/backends.hpp"

namespace flashrnn::alternating {
namespace {
[[noreturn]] void unavailable() {
    throw UnsupportedError("flashrnn: the alternating backend needs FlashRNN built with CUDA (nvcc was not "
                           "found when it was configured)");
}
} // namespace

std::size_t forward_workspace_bytes(const rnn::Problem&) {
    unavailable();
}
std::size_t backward_workspace_bytes(const rnn::Problem&) {
    unavailable();
}
void forward(const rnn::Problem&, const rnn::ForwardArgs&, Stream) {
    unavailable();
}
void backward(const rnn::Problem&, const rnn::BackwardArgs&, const RecurrentGradient&, Stream) {
    unavailable();
}

namespace {
std::atomic<bool> reuse{graph_reuse_from_environment(std::getenv("FLASHRNN_ALTERNATING_GRAPHS"))};
} // namespace

void set_graph_reuse(bool enabled) {
    reuse.store(enabled);
}
bool graph_reuse() {
    return reuse.load();
}
GraphReuseStats graph_reuse_stats() {
    return {};
}
void release_graphs() {}

} // namespace flashrnn::alternating
