// The float64 references' products in parallel (reference/parallel_tasks.hpp): each product against
// plain loops, the same values bit for bit at every thread count, every task run once, a task's
// exception rethrown, and FLASHRNN_REFERENCE_THREADS read or refused.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "flashrnn/core/error.hpp"
#include "reference/parallel_tasks.hpp"
#include "reference/recurrent_products.hpp"

namespace {

using flashrnn::reference::detail::kParallelFlops;
using flashrnn::reference::detail::kTaskColumns;
using flashrnn::reference::detail::RecurrentProducts;
using flashrnn::reference::detail::reference_threads;
using flashrnn::reference::detail::run_tasks;

// FLASHRNN_REFERENCE_THREADS set to `value` (unset for nullptr) for the scope.
struct Threads {
    explicit Threads(const char* value) {
        if (value)
            setenv("FLASHRNN_REFERENCE_THREADS", value, 1);
        else
            unsetenv("FLASHRNN_REFERENCE_THREADS");
    }
    ~Threads() { unsetenv("FLASHRNN_REFERENCE_THREADS"); }
    Threads(const Threads&) = delete;
    Threads& operator=(const Threads&) = delete;
};

std::vector<double> random_vector(std::size_t n, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<double> v(n);
    for (double& x : v)
        x = dist(rng);
    return v;
}

struct Products {
    std::vector<double> y, d_weights, ds0;
};

// The three products of `p` on fixed random operands, with `threads` threads.
Products run_products(const RecurrentProducts& p, const char* threads) {
    const Threads set(threads);
    std::mt19937_64 rng(7);
    const std::vector<double> weights =
        random_vector(static_cast<std::size_t>(p.recurrent_gates * p.heads * p.head_dim * p.head_dim), rng);
    const std::vector<double> s0 =
        random_vector(static_cast<std::size_t>(p.batch * p.heads * p.head_dim), rng);
    const std::vector<double> dy = random_vector(static_cast<std::size_t>(p.size()), rng);
    Products out{std::vector<double>(static_cast<std::size_t>(p.size())),
                 random_vector(weights.size(), rng), // accumulated into: a nonzero start
                 std::vector<double>(s0.size(), 99.0)};
    p.forward(weights.data(), s0.data(), out.y.data());
    p.accumulate_weight_gradient(dy.data(), s0.data(), out.d_weights.data());
    p.backward_to_state(weights.data(), dy.data(), out.ds0.data());
    return out;
}

} // namespace

TEST_CASE("reference products: in parallel tasks, the plain loops' values, the same at every thread count") {
    // 300 units: two whole tasks of 128 columns and one of 44. Above kParallelFlops, so threads run.
    const RecurrentProducts p{32, 4, 2, 300};
    REQUIRE(p.flops() >= kParallelFlops);
    REQUIRE(p.head_dim % kTaskColumns != 0);
    const Products one = run_products(p, "1");

    // The plain loops, in the buffers' layouts (recurrent_products.hpp).
    std::mt19937_64 rng(7);
    const std::int64_t B = p.batch, K = p.recurrent_gates, NH = p.heads, DH = p.head_dim;
    const std::vector<double> weights = random_vector(static_cast<std::size_t>(K * NH * DH * DH), rng);
    const std::vector<double> s0 = random_vector(static_cast<std::size_t>(B * NH * DH), rng);
    const std::vector<double> dy = random_vector(static_cast<std::size_t>(p.size()), rng);
    std::vector<double> d_weights = random_vector(weights.size(), rng);
    const auto w = [&](std::int64_t k, std::int64_t h, std::int64_t i, std::int64_t j) {
        return weights[static_cast<std::size_t>(((k * NH + h) * DH + i) * DH + j)];
    };
    const auto state = [&](std::int64_t b, std::int64_t h, std::int64_t j) {
        return s0[static_cast<std::size_t>((b * NH + h) * DH + j)];
    };
    double worst = 0;
    const auto compare = [&](double got, double expected) {
        worst = std::max(worst, std::abs(got - expected) / std::max(1.0, std::abs(expected)));
    };
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t k = 0; k < K; ++k)
            for (std::int64_t h = 0; h < NH; ++h)
                for (std::int64_t i = 0; i < DH; ++i) {
                    double sum = 0;
                    for (std::int64_t j = 0; j < DH; ++j)
                        sum += w(k, h, i, j) * state(b, h, j);
                    compare(one.y[static_cast<std::size_t>(p.offset(b, k, h, i))], sum);
                }
    for (std::int64_t k = 0; k < K; ++k)
        for (std::int64_t h = 0; h < NH; ++h)
            for (std::int64_t i = 0; i < DH; ++i)
                for (std::int64_t j = 0; j < DH; ++j) {
                    double sum = d_weights[static_cast<std::size_t>(((k * NH + h) * DH + i) * DH + j)];
                    for (std::int64_t b = 0; b < B; ++b)
                        sum += dy[static_cast<std::size_t>(p.offset(b, k, h, i))] * state(b, h, j);
                    compare(one.d_weights[static_cast<std::size_t>(((k * NH + h) * DH + i) * DH + j)], sum);
                }
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < NH; ++h)
            for (std::int64_t j = 0; j < DH; ++j) {
                double sum = 0;
                for (std::int64_t k = 0; k < K; ++k)
                    for (std::int64_t i = 0; i < DH; ++i)
                        sum += dy[static_cast<std::size_t>(p.offset(b, k, h, i))] * w(k, h, i, j);
                compare(one.ds0[static_cast<std::size_t>((b * NH + h) * DH + j)], sum);
            }
    CHECK(worst < 1e-12);

    for (const char* threads : {"2", "3", "7"}) {
        CAPTURE(threads);
        const Products many = run_products(p, threads);
        CHECK(many.y == one.y); // bit for bit: the tasks do not depend on the thread count
        CHECK(many.d_weights == one.d_weights);
        CHECK(many.ds0 == one.ds0);
    }
}

TEST_CASE("reference products: run_tasks runs every task once, in the caller below the threshold") {
    const Threads set("4");
    for (double flops : {0.0, kParallelFlops}) {
        CAPTURE(flops);
        std::vector<std::atomic<int>> runs(1000);
        std::atomic<int> other_threads{0};
        const std::thread::id caller = std::this_thread::get_id();
        run_tasks(static_cast<std::int64_t>(runs.size()), flops, [&](std::int64_t i) {
            ++runs[static_cast<std::size_t>(i)];
            if (std::this_thread::get_id() != caller) ++other_threads;
        });
        for (const std::atomic<int>& r : runs)
            CHECK(r.load() == 1);
        if (flops < kParallelFlops) CHECK(other_threads.load() == 0);
    }
}

TEST_CASE("reference products: a task's exception reaches the caller after every thread stopped") {
    const Threads set("3");
    std::atomic<int> started{0};
    CHECK_THROWS_WITH_AS(run_tasks(64, kParallelFlops,
                                   [&](std::int64_t i) {
                                       ++started;
                                       if (i == 5) throw std::runtime_error("task 5 failed");
                                   }),
                         "task 5 failed", std::runtime_error);
    CHECK(started.load() <= 64);
}

TEST_CASE("reference products: FLASHRNN_REFERENCE_THREADS, or the machine's threads") {
    {
        const Threads unset(nullptr);
        CHECK(reference_threads() >= 1);
    }
    {
        const Threads two("2");
        CHECK(reference_threads() == 2);
    }
    for (const char* bad : {"0", "-1", "1025", "two", "4 "}) {
        CAPTURE(bad);
        const Threads set(bad);
        const std::string expected =
            std::string("FLASHRNN_REFERENCE_THREADS=") + bad + ": expected an integer from 1 to 1024";
        CHECK_THROWS_WITH_AS(reference_threads(), expected.c_str(), flashrnn::ShapeError);
    }
}
