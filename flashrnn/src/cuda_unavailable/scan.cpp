// The scan kernels (linrec, RG-LRU) in a build without CUDA: every call says so.
#include <stdexcept>

#include "flashrnn/linrec.hpp"
#include "flashrnn/rglru.hpp"

namespace flashrnn {

namespace {

[[noreturn]] void unavailable(const char* call) {
    throw std::runtime_error(std::string("flashrnn::") + call +
                             ": FlashRNN was built without CUDA (no nvcc at configure time)");
}

} // namespace

void linrec_forward(DType, const ScanShape&, ConstRows, ConstRows, Rows, bool, Stream, const LinrecOptions&) {
    unavailable("linrec_forward");
}
void linrec_backward(DType, const ScanShape&, ConstRows, ConstRows, ConstRows, Rows, Rows, bool, Stream,
                     const LinrecOptions&) {
    unavailable("linrec_backward");
}
ScanConfig linrec_config(DType, const ScanShape&, bool, bool) {
    unavailable("linrec_config");
}
void rglru_forward(DType, const RglruShape&, const RglruForwardArgs&, Stream) {
    unavailable("rglru_forward");
}
void rglru_backward(DType, const RglruShape&, const RglruBackwardArgs&, Stream) {
    unavailable("rglru_backward");
}

} // namespace flashrnn
