// The pointwise cells on their own: backward against central finite differences of forward, the
// float instantiation (what kernels use) against double, and the registry.
#include <array>

#include "flashrnn/core/error.hpp"
#include "test_support.hpp"

using namespace flashrnn;
using namespace flashrnn::testing;

namespace {

constexpr double fd_step = 1e-6;
constexpr double tolerance = 1e-8; // absolute; values and derivatives are O(1)

template <class C> std::array<double, C::num_states> random_states(std::mt19937_64& rng) {
    std::array<double, C::num_states> s{};
    const std::vector<double> values = uniform(C::num_states, -1.0, 1.0, rng);
    std::copy(values.begin(), values.end(), s.begin());
    if constexpr (std::is_same_v<C, cells::Slstm>) {
        s[C::n] = uniform(1, 0.5, 2.0, rng)[0];
        s[C::m] = uniform(1, -1.0, 1.0, rng)[0];
    }
    return s;
}

// The cell's new states; for sLSTM at a frozen stabiliser, since its backward treats m as constant.
template <class C> struct FrozenForward {
    double frozen_m = 0;
    void operator()(const double* gates, const double* s_prev, double* s_new) const {
        if constexpr (std::is_same_v<C, cells::Slstm>)
            C::forward_given_stabilizer(gates, s_prev, frozen_m, s_new);
        else
            C::forward(gates, s_prev, s_new);
    }
};

template <class C> void check_cell_backward(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (int trial = 0; trial < 50; ++trial) {
        std::array<double, C::num_gates> gates{};
        const std::vector<double> g = uniform(C::num_gates, -2.0, 2.0, rng);
        std::copy(g.begin(), g.end(), gates.begin());
        std::array<double, C::num_states> s_prev = random_states<C>(rng);
        std::array<double, C::num_states> ds_new{};
        const std::vector<double> upstream = uniform(C::num_states, -1.0, 1.0, rng);
        std::copy(upstream.begin(), upstream.end(), ds_new.begin());

        std::array<double, C::num_states> s_new{};
        C::forward(gates.data(), s_prev.data(), s_new.data());
        std::array<double, C::num_gates> d_gates{};
        std::array<double, C::num_states> ds_prev{};
        C::backward(gates.data(), s_prev.data(), s_new.data(), ds_new.data(), d_gates.data(), ds_prev.data());

        FrozenForward<C> frozen;
        if constexpr (std::is_same_v<C, cells::Slstm>) frozen.frozen_m = s_new[C::m];
        const auto loss = [&] {
            std::array<double, C::num_states> out{};
            frozen(gates.data(), s_prev.data(), out.data());
            double total = 0;
            for (int s = 0; s < C::num_states; ++s)
                total += ds_new[s] * out[s];
            return total;
        };
        const auto derivative = [&](double& x) {
            const double saved = x;
            x = saved + fd_step;
            const double plus = loss();
            x = saved - fd_step;
            const double minus = loss();
            x = saved;
            return (plus - minus) / (2 * fd_step);
        };
        INFO("cell ", C::name, ", trial ", trial);
        for (int k = 0; k < C::num_gates; ++k) {
            INFO("gate ", C::gate_names[k]);
            CHECK(std::abs(d_gates[k] - derivative(gates[k])) <= tolerance);
        }
        for (int s = 0; s < C::num_states; ++s) {
            INFO("previous state ", C::state_names[s]);
            if constexpr (std::is_same_v<C, cells::Slstm>)
                if (s == C::m) { // no gradient through the stabiliser, by design
                    CHECK(ds_prev[s] == 0.0);
                    continue;
                }
            CHECK(std::abs(ds_prev[s] - derivative(s_prev[s])) <= tolerance);
        }
    }
}

template <class C> void check_float_matches_double(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (int trial = 0; trial < 20; ++trial) {
        const std::vector<double> g = uniform(C::num_gates, -2.0, 2.0, rng);
        const std::array<double, C::num_states> s = random_states<C>(rng);
        std::array<float, C::num_gates> gf{};
        std::array<float, C::num_states> sf{}, out_f{};
        std::array<double, C::num_states> out_d{};
        for (int k = 0; k < C::num_gates; ++k)
            gf[k] = static_cast<float>(g[k]);
        for (int k = 0; k < C::num_states; ++k)
            sf[k] = static_cast<float>(s[k]);
        std::array<double, C::num_gates> gd{};
        std::array<double, C::num_states> sd{};
        for (int k = 0; k < C::num_gates; ++k)
            gd[k] = gf[k]; // same inputs, exactly
        for (int k = 0; k < C::num_states; ++k)
            sd[k] = sf[k];
        C::forward(gf.data(), sf.data(), out_f.data());
        C::forward(gd.data(), sd.data(), out_d.data());
        for (int k = 0; k < C::num_states; ++k) {
            INFO("cell ", C::name, ", state ", C::state_names[k]);
            CHECK(std::abs(out_f[k] - out_d[k]) <= 1e-5 * (1 + std::abs(out_d[k]))); // float32, few ulps
        }
    }
}

} // namespace

TEST_CASE("cell backward is the derivative of cell forward") {
    check_cell_backward<cells::Lstm>(1);
    check_cell_backward<cells::Gru>(2);
    check_cell_backward<cells::Slstm>(3);
    check_cell_backward<cells::Elman>(4);
}

TEST_CASE("cells instantiated for float agree with double") {
    check_float_matches_double<cells::Lstm>(5);
    check_float_matches_double<cells::Gru>(6);
    check_float_matches_double<cells::Slstm>(7);
    check_float_matches_double<cells::Elman>(8);
}

TEST_CASE("cell registry") {
    const CellInfo lstm = cell_info(Cell::lstm);
    CHECK(lstm.name == "lstm");
    CHECK(lstm.num_states == 2);
    CHECK(lstm.num_gates == 4);
    CHECK(lstm.gate_names[0] == "i");
    CHECK(lstm.gate_names[3] == "o");

    const CellInfo gru = cell_info(Cell::gru);
    CHECK(gru.num_states == 1);
    CHECK(gru.num_gates == 4);
    CHECK(gru.num_input_gates == 3);
    CHECK(gru.num_recurrent_gates == 3);
    CHECK(cells::Gru::gate_of_recurrent_block(2) == cells::Gru::hn);
    CHECK(cells::Gru::gate_of_input_row(2) == cells::Gru::n);

    CHECK(cell_info(Cell::slstm).num_states == 4);
    CHECK(cell_info(Cell::slstm).state_names[3] == "m");
    CHECK(cell_info(Cell::elman).num_gates == 1);

    for (Cell cell : all_cells)
        CHECK(parse_cell(cell_info(cell).name) == cell);
    CHECK_THROWS_WITH_AS(parse_cell("lstn"),
                         "flashrnn: unknown cell 'lstn' (valid cells: lstm, gru, slstm, elman)",
                         UnsupportedError);
}
