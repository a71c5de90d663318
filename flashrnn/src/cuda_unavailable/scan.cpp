// The scan kernels (linrec, RG-LRU) in a build without CUDA: every call says so.
#include <string>

#include "flashrnn/core/error.hpp"
#include "flashrnn/scan/linrec.hpp"
#include "flashrnn/scan/rglru.hpp"

namespace flashrnn {

namespace {

[[noreturn]] void unavailable(const char* call) {
    throw UnsupportedError(std::string("flashrnn::") + call +
                           ": FlashRNN was built without CUDA (no nvcc at configure time)");
}

} // namespace

namespace linrec {

void forward(const Problem&, const ForwardArgs&, const Options&, Stream) {
    unavailable("linrec::forward");
}
void backward(const Problem&, const BackwardArgs&, const Options&, Stream) {
    unavailable("linrec::backward");
}
ScanConfig config(const Problem&, bool, bool) {
    unavailable("linrec::config");
}

} // namespace linrec

namespace rglru {

void forward(const Problem&, const ForwardArgs&, const Options&, Stream) {
    unavailable("rglru::forward");
}
void backward(const Problem&, const BackwardArgs&, const Options&, Stream) {
    unavailable("rglru::backward");
}

} // namespace rglru

} // namespace flashrnn
