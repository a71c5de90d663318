// From a run-time ScanConfig to the compiled kernel: calls f.template operator()<E, kThreads, A>() for
// the configuration of `domains` (scan_launch.hpp) equal to `config`; false when it is not compiled.
#pragma once

#include <cstddef>
#include <utility>

#include "flashrnn/tiling/scan_launch.hpp"

namespace flashrnn::cuda::scan {

template <const auto& kDomains, class F> bool visit_scan_config(const ScanConfig& config, F&& f) {
    constexpr std::size_t kE = kDomains.elements_per_thread.size();
    constexpr std::size_t kT = kDomains.threads_per_block.size();
    constexpr std::size_t kA = kDomains.accesses.size();
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return ([&] {
            constexpr int E = kDomains.elements_per_thread[I / (kT * kA)];
            constexpr int kThreads = kDomains.threads_per_block[(I / kA) % kT];
            constexpr ScanAccess A = kDomains.accesses[I % kA];
            if (config.elements_per_thread != E || config.threads_per_block != kThreads || config.access != A)
                return false;
            f.template operator()<E, kThreads, A>();
            return true;
        }() || ...);
    }
    (std::make_index_sequence<kE * kT * kA>{});
}

} // namespace flashrnn::cuda::scan
