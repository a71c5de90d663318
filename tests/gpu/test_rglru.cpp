// The fused RG-LRU on the GPU against the float64 CPU reference (whose gradients are checked by
// finite differences in tests/flashrnn/test_scan_reference.cpp): forward with and without h0 and
// h_last, backward with and without dh_last and dh0, every compiled configuration, fp32 and bf16,
// row-strided views; outputs poisoned before each run.
#include <doctest/doctest.h>

#include <optional>
#include <random>
#include <tuple>
#include <vector>

#include "flashrnn/core/error.hpp"
#include "flashrnn/scan/reference.hpp"
#include "flashrnn/scan/rglru.hpp"
#include "scan_test_support.hpp"
#include "test_support.hpp"

using namespace flashrnn;
using namespace flashrnn::scan_testing;
using flashrnn::testing::uniform;

namespace {

std::vector<std::optional<ScanConfig>> rglru_configs() {
    std::vector<std::optional<ScanConfig>> configs{std::nullopt};
    for (int e : kRglruDomains.elements_per_thread)
        for (int t : kRglruDomains.threads_per_block)
            for (ScanAccess a : kRglruDomains.accesses)
                configs.push_back(ScanConfig{e, t, a});
    return configs;
}

// Tolerances relative to (1 + |value|). The gradients pass through the stored (rounded) h and a few
// more fp32 operations than linrec; dLambda is a sum over batch and time.
double rglru_tolerance(DType dtype) {
    return dtype == DType::bf16 ? 2e-2 : 1e-4;
}
double lambda_tolerance(DType dtype) {
    return dtype == DType::bf16 ? 2e-2 : 1e-3;
}

} // namespace

void check_rglru(const std::vector<std::int64_t>& lengths) {
    std::mt19937_64 rng(31);
    for (DType dtype : {DType::fp32, DType::bf16})
        for (std::int64_t length : lengths)
            for (bool with_states : {false, true}) {
                const RglruShape shape{2, 3, length};
                const std::int64_t rows = 6, stride = with_states ? length + 3 : length;
                const auto n = static_cast<std::size_t>(rows * length);
                const auto x = rounded_to(dtype, uniform(n, -1, 1, rng));
                const auto ga = rounded_to(dtype, uniform(n, -3, 3, rng));
                const auto gx = rounded_to(dtype, uniform(n, -3, 3, rng));
                const auto dh = rounded_to(dtype, uniform(n, -1, 1, rng));
                const auto lambda = uniform(3, -2, 3, rng);
                const auto lambda_f = rounded_to(DType::fp32, lambda);
                const auto h0 =
                    with_states ? rounded_to(DType::fp32, uniform(6, -1, 1, rng)) : std::vector<double>{};
                const auto dh_last =
                    with_states ? rounded_to(DType::fp32, uniform(6, -1, 1, rng)) : std::vector<double>{};
                DeviceRows dx_in(dtype, rows, length, stride), dga(dtype, rows, length, stride),
                    dgx(dtype, rows, length, stride), ddh(dtype, rows, length, stride);
                DeviceRows h_out(dtype, rows, length, stride), dx_out(dtype, rows, length, stride),
                    dga_out(dtype, rows, length, stride), dgx_out(dtype, rows, length, stride);
                DeviceFloats d_lambda_dev(3), lambda_dev(3), h0_dev(6), h_last_dev(6), dh_last_dev(6),
                    dh0_dev(6);
                dx_in.upload(x);
                dga.upload(ga);
                dgx.upload(gx);
                ddh.upload(dh);
                lambda_dev.upload(lambda_f);
                if (with_states) {
                    h0_dev.upload(h0);
                    dh_last_dev.upload(dh_last);
                }
                const auto want = reference::rglru_forward(shape, x, ga, gx, lambda_f, h0);
                for (const auto& config : rglru_configs()) {
                    CAPTURE(to_string(dtype));
                    CAPTURE(length);
                    CAPTURE(with_states);
                    CAPTURE(config ? describe(*config) : std::string("model's choice"));
                    const double tol = rglru_tolerance(dtype);
                    h_out.upload(std::vector<double>(n, NAN));
                    h_last_dev.poison();
                    const rglru::Problem problem{dtype, shape};
                    const rglru::ForwardArgs f{dx_in.in(),
                                               dga.in(),
                                               dgx.in(),
                                               lambda_dev.in(),
                                               with_states ? h0_dev.in() : ConstTensorView{},
                                               h_out.out(),
                                               with_states ? h_last_dev.out() : TensorView{}};
                    rglru::forward(problem, f, {config}, nullptr);
                    cuda_ok(cudaDeviceSynchronize(), "sync");
                    const auto h_raw = h_out.download();
                    const auto& h = h_raw.values;
                    const auto mh = worst_mismatch(h, want.h, tol);
                    CHECK_MESSAGE(mh.excess <= 0, "h " << describe(mh));
                    CHECK(h_raw.gaps_untouched);
                    if (with_states) {
                        const auto ml = worst_mismatch(h_last_dev.download(), want.h_last, 1e-4);
                        CHECK_MESSAGE(ml.excess <= 0, "h_last " << describe(ml));
                    }
                    // Backward from the stored h, as in training.
                    const auto g = reference::rglru_backward(shape, x, ga, gx, lambda_f, h0, h, dh, dh_last);
                    for (DeviceRows* out : {&dx_out, &dga_out, &dgx_out})
                        out->upload(std::vector<double>(n, NAN));
                    d_lambda_dev.poison();
                    dh0_dev.poison();
                    const rglru::BackwardArgs b{dx_in.in(),
                                                dga.in(),
                                                dgx.in(),
                                                lambda_dev.in(),
                                                with_states ? h0_dev.in() : ConstTensorView{},
                                                h_out.in(),
                                                ddh.in(),
                                                with_states ? dh_last_dev.in() : ConstTensorView{},
                                                dx_out.out(),
                                                dga_out.out(),
                                                dgx_out.out(),
                                                d_lambda_dev.out(),
                                                dh0_dev.out()};
                    rglru::backward(problem, b, {config}, nullptr);
                    cuda_ok(cudaDeviceSynchronize(), "sync");
                    for (auto [name, dev, ref] :
                         {std::tuple{"dx", &dx_out, &g.dx}, std::tuple{"d_gate_a", &dga_out, &g.d_gate_a},
                          std::tuple{"d_gate_x", &dgx_out, &g.d_gate_x}}) {
                        const auto raw = dev->download();
                        const auto m = worst_mismatch(raw.values, *ref, tol);
                        CHECK_MESSAGE(m.excess <= 0, name << " " << describe(m));
                        CHECK(raw.gaps_untouched);
                    }
                    const auto mlam =
                        worst_mismatch(d_lambda_dev.download(), g.d_lambda, lambda_tolerance(dtype));
                    CHECK_MESSAGE(mlam.excess <= 0, "d_lambda " << describe(mlam));
                    const auto mh0 = worst_mismatch(dh0_dev.download(), g.dh0, tol);
                    CHECK_MESSAGE(mh0.excess <= 0, "dh0 " << describe(mh0));
                }
            }
}

TEST_CASE("RG-LRU forward and backward against the reference") {
    check_rglru({1, 33, 1000, 4097, 65537});
}

TEST_CASE("RG-LRU small: a quick subset (for compute-sanitizer)") {
    check_rglru({1, 300});
}

TEST_CASE("RG-LRU: bad arguments are refused before any launch") {
    DeviceRows a(DType::fp32, 2, 8, 8);
    DeviceFloats lambda(2);
    rglru::ForwardArgs f{a.in(), a.in(), a.in(), lambda.in(), {}, a.out(), {}};
    CHECK_THROWS_WITH_AS(rglru::forward({DType::fp16, {1, 2, 8}}, f, {}, nullptr),
                         doctest::Contains("fp16 is not supported"), UnsupportedError);
    CHECK_THROWS_WITH_AS(rglru::forward({DType::fp32, {1, 0, 8}}, f, {}, nullptr),
                         doctest::Contains("got 1 and 0"), ShapeError);
    f.lambda.data = nullptr;
    CHECK_THROWS_WITH_AS(rglru::forward({DType::fp32, {1, 2, 8}}, f, {}, nullptr),
                         doctest::Contains("lambda is null"), ShapeError);
}
