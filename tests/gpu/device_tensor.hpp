// Comparisons of GPU results with the float64 reference for the GPU tests (DeviceTensor, in
// flashrnn/device_tensor.hpp, moves the data).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "testing/device_tensor.hpp"

namespace flashrnn::testing {

inline void cuda_ok(cudaError_t status, const char* what) {
    device_tensor_check(status, what);
}

// |gpu - reference| <= abs_tol * max(1, max |reference|) + rel_tol * |reference| everywhere; NaN fails.
struct Tolerance {
    double abs_tol, rel_tol;
};

struct Comparison {
    bool ok = true;
    std::size_t worst_index = 0;
    double worst_excess = -1, gpu = 0, reference = 0;
    std::string describe(const std::string& tensor) const {
        return tensor + ": worst element " + std::to_string(worst_index) + " gpu " + std::to_string(gpu) +
               " reference " + std::to_string(reference);
    }
};

inline Comparison compare(const std::vector<double>& gpu, const std::vector<double>& reference,
                          Tolerance tol) {
    Comparison result;
    double scale = 1.0;
    for (double r : reference)
        scale = std::max(scale, std::abs(r));
    for (std::size_t i = 0; i < gpu.size(); ++i) {
        const double bound = tol.abs_tol * scale + tol.rel_tol * std::abs(reference[i]);
        const double error = std::abs(gpu[i] - reference[i]);
        const double excess = std::isnan(gpu[i]) ? 1e300 : error - bound;
        if (excess > result.worst_excess) {
            result.worst_excess = excess;
            result.worst_index = i;
            result.gpu = gpu[i];
            result.reference = reference[i];
        }
    }
    result.ok = gpu.size() == reference.size() && result.worst_excess <= 0;
    return result;
}

} // namespace flashrnn::testing
