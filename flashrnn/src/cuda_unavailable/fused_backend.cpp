// Built when FlashRNN has no CUDA kernels: the fused backend says why it cannot run.
#include "flashrnn/core/error.hpp"
#include <stdexcept>

#include "flashrnn/rnn/fused.hpp"
#include "rnn/backends.hpp"

namespace flashrnn::fused {
namespace {
[[noreturn]] void unavailable() {
    throw UnsupportedError(
        "flashrnn: the fused backend needs FlashRNN built with CUDA (nvcc was not found when it "
        "was configured)");
}
} // namespace

FusedKernelTraits traits(const rnn::Problem&, FusedPass) {
    unavailable();
}
void prepare(const rnn::Problem&) {
    unavailable();
}
rnn::AutomaticChoice automatic_choice(const rnn::Problem&, FusedPass) {
    unavailable();
}
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

} // namespace flashrnn::fused
