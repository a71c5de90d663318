// A fused tiling request in one expression, for the tests of the fused tiling model and its kernels.
#pragma once

#include "flashrnn/tiling/fused_tiling.hpp"

namespace flashrnn::testing {

inline FusedTilingRequest request_of(FusedPass pass, Cell cell, DType dtype, int heads, int head_dim,
                                     int batch) {
    FusedTilingRequest r;
    r.pass = pass;
    r.cell = cell;
    r.dtype = dtype;
    r.heads = heads;
    r.head_dim = head_dim;
    r.batch = batch;
    return r;
}

} // namespace flashrnn::testing
