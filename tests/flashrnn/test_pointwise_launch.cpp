// The pointwise kernels' launch model: every chosen configuration respects the device and covers
// the problem exactly; preferences hold; impossible inputs are refused with a message.
#include "flashrnn/core/error.hpp"
#include "tiling/pointwise_launch.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>

using namespace flashrnn;

TEST_CASE("pointwise launch: every preset and shape gets a configuration that fits and covers the work") {
    for (std::string_view name : preset_names()) {
        const DeviceLimits limits = preset(name);
        for (int bytes : {2, 4}) {
            for (auto [batch, heads, head_dim] :
                 {std::tuple{1, 1, 1}, std::tuple{3, 3, 24}, std::tuple{16, 12, 64}, std::tuple{16, 1, 768},
                  std::tuple{256, 48, 16}, std::tuple{5, 7, 13}}) {
                const std::int64_t elements = std::int64_t(batch) * heads * head_dim;
                CAPTURE(name);
                CAPTURE(elements);
                CAPTURE(bytes);
                const PointwiseLaunch l = choose_pointwise_launch(limits, {elements, head_dim, bytes});
                CHECK(l.threads_per_block % limits.warp_size == 0);
                CHECK(l.threads_per_block <= limits.max_threads_per_block);
                CHECK(l.vector_width * bytes <= 16);
                CHECK(head_dim % l.vector_width == 0);
                CHECK(l.elements_per_thread % l.vector_width == 0);
                const std::int64_t per_block = std::int64_t(l.threads_per_block) * l.elements_per_thread;
                CHECK(l.blocks * per_block >= elements);
                CHECK((l.blocks - 1) * per_block < elements);
                const std::int64_t warp_work = std::int64_t(limits.warp_size) * l.vector_width;
                CHECK(l.blocks >=
                      std::min<std::int64_t>(2 * limits.sm_count, (elements + warp_work - 1) / warp_work));
            }
        }
    }
}

TEST_CASE("pointwise launch: the widest vector that divides the head, then one vector per thread") {
    const DeviceLimits h100 = preset("h100_sxm");
    const PointwiseLaunch bf16 = choose_pointwise_launch(h100, {16 * 12 * 64, 64, 2});
    CHECK(bf16.vector_width == 8);
    CHECK(bf16.elements_per_thread == 8);
    const PointwiseLaunch fp32 = choose_pointwise_launch(h100, {16 * 12 * 64, 64, 4});
    CHECK(fp32.vector_width == 4);
    const PointwiseLaunch odd = choose_pointwise_launch(h100, {3 * 13, 13, 2});
    CHECK(odd.vector_width == 1);
    CHECK(odd.blocks == 2); // 39 elements: two blocks of 32 threads, as wanted for 2 warps of work
}

TEST_CASE("pointwise launch: problems without elements are refused") {
    const DeviceLimits h100 = preset("h100_sxm");
    CHECK_THROWS_AS(choose_pointwise_launch(h100, {0, 64, 2}), ShapeError);
    CHECK_THROWS_AS(choose_pointwise_launch(h100, {64, 64, 3}), ShapeError);
}

TEST_CASE("device presets: the short names h100 and a100 are the SXM and 80 GB parts") {
    CHECK(preset("h100").name == preset("h100_sxm").name);
    CHECK(preset("h100").sm_count == 132);
    CHECK(preset("a100").sm_count == 108);
    CHECK_THROWS_WITH_AS(preset("h800"), doctest::Contains("valid presets: h100_sxm"), UnsupportedError);
}

TEST_CASE(
    "pointwise launch: the compiled kernel's thread limit and the tensors' alignment bound the choice") {
    const DeviceLimits limits = preset("h100_sxm");
    for (int kernel_limit : {32, 96, 256, 640}) {
        CAPTURE(kernel_limit);
        const PointwiseLaunch l = choose_pointwise_launch(limits, {16 * 12 * 64, 64, 2, 16, kernel_limit});
        CHECK(l.threads_per_block <= kernel_limit);
        CHECK(l.threads_per_block % limits.warp_size == 0);
        CHECK(l.blocks * l.threads_per_block * l.elements_per_thread >= 16 * 12 * 64);
    }
    for (int alignment : {2, 4, 8, 16}) {
        CAPTURE(alignment);
        const PointwiseLaunch l = choose_pointwise_launch(limits, {16 * 12 * 64, 64, 2, alignment});
        CHECK(l.vector_width * 2 == alignment); // the widest the alignment allows
    }
}
