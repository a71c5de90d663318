// The fused backend's tuning from the environment (fused_tuning.hpp), without a GPU: the defaults,
// each variable's accepted values, and a refusal naming the variable and its range for anything else.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "cuda/fused/fused_tuning.hpp"

namespace {

using namespace flashrnn;

constexpr const char* kVariables[] = {
    "FLASHRNN_FUSED_MAX_THREADS_PER_BLOCK", "FLASHRNN_FUSED_MAX_BLOCKS_PER_HEAD",
    "FLASHRNN_FUSED_MAX_ROW_WARPS",         "FLASHRNN_FUSED_MIN_K_BLOCKS",
    "FLASHRNN_FUSED_MAX_K_BLOCKS",          "FLASHRNN_FUSED_CLUSTER",
    "FLASHRNN_FUSED_DIRECT_R_LOAD"};

// Every variable unset, then `name` set to `value`, for the scope; all unset again after it.
struct Environment {
    Environment(const char* name = nullptr, const char* value = nullptr) {
        clear();
        if (name) setenv(name, value, 1);
    }
    ~Environment() { clear(); }
    Environment(const Environment&) = delete;
    Environment& operator=(const Environment&) = delete;
    static void clear() {
        for (const char* v : kVariables)
            unsetenv(v);
    }
};

// The ShapeError message of tiling_limits() under the environment; "" when it accepts it.
std::string refusal_of(const char* name, const char* value) {
    const Environment set(name, value);
    try {
        (void)fused::tiling_limits();
    } catch (const ShapeError& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("fused tuning: unset, the model's defaults with R loaded directly") {
    const Environment none;
    const fused::TilingLimits l = fused::tiling_limits();
    CHECK(l.max_threads_per_block == FusedTilingRequest{}.max_threads_per_block);
    CHECK(l.max_threads_per_block == 512);
    CHECK(l.max_blocks_per_head == 0);
    CHECK(l.max_row_warps == 0);
    CHECK(FusedTilingRequest{}.max_row_warps == 0);
    CHECK(l.min_k_blocks == 0);
    CHECK(FusedTilingRequest{}.min_k_blocks == 0);
    CHECK(l.max_k_blocks == 0);
    CHECK(FusedTilingRequest{}.max_k_blocks == 0);
    CHECK(l.cluster == FusedCluster::automatic);
    CHECK(l.direct_r_load);
    CHECK(FusedTilingRequest{}.direct_r_load);
    const Environment empty("FLASHRNN_FUSED_DIRECT_R_LOAD", ""); // empty is unset
    CHECK(fused::tiling_limits().direct_r_load);
}

TEST_CASE("fused tuning: each variable's values") {
    {
        const Environment off("FLASHRNN_FUSED_DIRECT_R_LOAD", "0");
        CHECK_FALSE(fused::tiling_limits().direct_r_load);
    }
    {
        const Environment on("FLASHRNN_FUSED_DIRECT_R_LOAD", "1");
        CHECK(fused::tiling_limits().direct_r_load);
    }
    for (const auto& [text, expected] : {std::pair{"auto", FusedCluster::automatic},
                                         {"0", FusedCluster::never},
                                         {"1", FusedCluster::always}}) {
        const FusedCluster want = expected; // named again: clang 14 does not capture a structured binding
        const Environment cluster("FLASHRNN_FUSED_CLUSTER", text);
        CHECK(fused::tiling_limits().cluster == want);
    }
    for (const char* threads : {"32", "256", "1024"}) {
        const Environment set("FLASHRNN_FUSED_MAX_THREADS_PER_BLOCK", threads);
        CHECK(fused::tiling_limits().max_threads_per_block == std::atoi(threads));
    }
    {
        const Environment blocks("FLASHRNN_FUSED_MAX_BLOCKS_PER_HEAD", "16");
        CHECK(fused::tiling_limits().max_blocks_per_head == 16);
    }
    {
        const Environment k_blocks("FLASHRNN_FUSED_MIN_K_BLOCKS", "4");
        CHECK(fused::tiling_limits().min_k_blocks == 4);
    }
    {
        const Environment k_blocks("FLASHRNN_FUSED_MAX_K_BLOCKS", "1");
        CHECK(fused::tiling_limits().max_k_blocks == 1);
    }
    const Environment row_warps("FLASHRNN_FUSED_MAX_ROW_WARPS", "2");
    CHECK(fused::tiling_limits().max_row_warps == 2);
}

TEST_CASE("fused tuning: the request limited as the environment asks, every field") {
    fused::TilingLimits l;
    l.max_threads_per_block = 256;
    l.max_blocks_per_head = 3;
    l.max_row_warps = 2;
    l.min_k_blocks = 3;
    l.max_k_blocks = 5;
    l.cluster = FusedCluster::never;
    l.direct_r_load = false;
    const FusedTilingRequest r = fused::limited(FusedTilingRequest{}, l);
    CHECK(r.max_threads_per_block == 256);
    CHECK(r.max_blocks_per_head == 3);
    CHECK(r.max_row_warps == 2);
    CHECK(r.min_k_blocks == 3);
    CHECK(r.max_k_blocks == 5);
    CHECK(r.cluster == FusedCluster::never);
    CHECK_FALSE(r.direct_r_load);
}

TEST_CASE("fused tuning: anything else is refused with the variable and what it takes") {
    struct Bad {
        const char* name;
        const char* value;
        const char* expected;
    };
    for (const Bad& bad : {Bad{"FLASHRNN_FUSED_DIRECT_R_LOAD", "2", "from 0 to 1"},
                           {"FLASHRNN_FUSED_DIRECT_R_LOAD", "yes", "from 0 to 1"},
                           {"FLASHRNN_FUSED_DIRECT_R_LOAD", "-1", "from 0 to 1"},
                           {"FLASHRNN_FUSED_MAX_THREADS_PER_BLOCK", "16", "from 32 to 1024"},
                           {"FLASHRNN_FUSED_MAX_THREADS_PER_BLOCK", "2048", "from 32 to 1024"},
                           {"FLASHRNN_FUSED_MAX_THREADS_PER_BLOCK", "512 ", "from 32 to 1024"},
                           {"FLASHRNN_FUSED_MAX_BLOCKS_PER_HEAD", "-3", "from 0 to"},
                           {"FLASHRNN_FUSED_MAX_BLOCKS_PER_HEAD", "99999999999", "from 0 to"},
                           {"FLASHRNN_FUSED_MAX_ROW_WARPS", "33", "from 0 to 32"},
                           {"FLASHRNN_FUSED_MAX_ROW_WARPS", "two", "from 0 to 32"},
                           {"FLASHRNN_FUSED_MIN_K_BLOCKS", "-1", "from 0 to 1024"},
                           {"FLASHRNN_FUSED_MIN_K_BLOCKS", "4096", "from 0 to 1024"},
                           {"FLASHRNN_FUSED_MAX_K_BLOCKS", "-2", "from 0 to 1024"},
                           {"FLASHRNN_FUSED_CLUSTER", "always", "expected auto, 0 or 1"}}) {
        const std::string message = refusal_of(bad.name, bad.value);
        CAPTURE(bad.name);
        CAPTURE(bad.value);
        CAPTURE(message);
        CHECK(message.find(std::string(bad.name) + "=" + bad.value + ":") == 0);
        CHECK(message.find(bad.expected) != std::string::npos);
    }
}
