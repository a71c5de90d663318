// The reference forward against each cell's textbook equations, written out here with plain loops on
// torch.nn-style dense tensors (hidden size d = NH * DH, a block-diagonal [G * d, d] recurrent weight),
// independently of the cell headers and of the layout helpers.
#include <cmath>

#include "test_support.hpp"

using namespace flashrnn;
using namespace flashrnn::testing;

namespace {

constexpr double tolerance = 1e-12;

double sigmoid(double x) {
    return 1.0 / (1.0 + std::exp(-x));
}

struct Sizes {
    int T, B, NH, DH;
    int d() const { return NH * DH; }
};

// A torch-style recurrent weight [G * d, d] (row = gate unit, column = previous hidden unit), nonzero
// only on the per-head diagonal blocks.
std::vector<double> block_diagonal_weight(int gates, Sizes z, std::mt19937_64& rng) {
    const int d = z.d();
    std::vector<double> w(static_cast<std::size_t>(gates * d * d), 0.0);
    std::uniform_real_distribution<double> dist(-0.6, 0.6);
    for (int g = 0; g < gates; ++g)
        for (int h = 0; h < z.NH; ++h)
            for (int i = 0; i < z.DH; ++i)
                for (int j = 0; j < z.DH; ++j)
                    w[(g * d + h * z.DH + i) * d + h * z.DH + j] = dist(rng);
    return w;
}

// The documented mapping: R[g, h, i, j] = W[g * d + h * DH + i, h * DH + j].
std::vector<double> to_recurrent_weights(const std::vector<double>& w, int gates, Sizes z) {
    const int d = z.d();
    std::vector<double> r(static_cast<std::size_t>(gates * z.NH * z.DH * z.DH));
    for (int g = 0; g < gates; ++g)
        for (int h = 0; h < z.NH; ++h)
            for (int i = 0; i < z.DH; ++i)
                for (int j = 0; j < z.DH; ++j)
                    r[((g * z.NH + h) * z.DH + i) * z.DH + j] = w[(g * d + h * z.DH + i) * d + h * z.DH + j];
    return r;
}

// (W h)[row] for a dense [rows, d] weight.
double matvec_row(const std::vector<double>& w, int row, const double* h, int d) {
    double sum = 0;
    for (int j = 0; j < d; ++j)
        sum += w[row * d + j] * h[j];
    return sum;
}

// states [S, T+1, B, d] of the reference.
double state_at(const reference::ForwardResult& r, Sizes z, int s, int t, int b, int unit) {
    return r.states.values[((s * (z.T + 1) + t) * z.B + b) * z.d() + unit];
}

reference::ForwardResult run(Cell cell, Sizes z, const std::vector<double>& wx, const std::vector<double>& r,
                             const std::vector<double>& bias, const std::vector<double>& initial) {
    const CellInfo info = cell_info(cell);
    const ProblemShape shape{z.T, z.B, z.NH, z.DH};
    return reference::forward(cell, shape,
                              {{wx, sizes_of(gate_inputs_shape(info, shape))},
                               {r, sizes_of(recurrent_weights_shape(info, shape))},
                               {bias, sizes_of(bias_shape(info, shape))},
                               {initial, sizes_of(states_shape(info, shape))}});
}

// last_state [S, B, d] is the sequence's time step T.
void check_last_state(const reference::ForwardResult& r, Sizes z, int num_states) {
    for (int s = 0; s < num_states; ++s)
        for (int b = 0; b < z.B; ++b)
            for (int u = 0; u < z.d(); ++u)
                CHECK(r.last_state.values[(s * z.B + b) * z.d() + u] == state_at(r, z, s, z.T, b, u));
}

const Sizes grid[] = {{1, 1, 1, 1}, {4, 2, 2, 3}, {3, 3, 3, 2}, {6, 1, 1, 5}};

} // namespace

TEST_CASE("LSTM forward equals torch.nn.LSTM's equations") {
    std::mt19937_64 rng(11);
    for (Sizes z : grid) {
        const int d = z.d();
        // x_proj = W_ih x + b_ih per step, gates i, f, g, o; the reference's Wx is this very buffer.
        const std::vector<double> x = uniform(static_cast<std::size_t>(z.T * z.B * 4 * d), -1, 1, rng);
        const std::vector<double> w_hh = block_diagonal_weight(4, z, rng);
        const std::vector<double> b_hh = uniform(static_cast<std::size_t>(4 * d), -0.5, 0.5, rng);
        const std::vector<double> initial =
            uniform(static_cast<std::size_t>(2 * z.B * d), -1, 1, rng); // h0, c0
        const reference::ForwardResult result =
            run(Cell::lstm, z, x, to_recurrent_weights(w_hh, 4, z), b_hh, initial);

        std::vector<double> h(initial.begin(), initial.begin() + z.B * d),
            c(initial.begin() + z.B * d, initial.end());
        double worst = 0;
        for (int t = 0; t < z.T; ++t) {
            std::vector<double> h_next(h.size()), c_next(c.size());
            for (int b = 0; b < z.B; ++b)
                for (int u = 0; u < d; ++u) {
                    double pre[4];
                    for (int g = 0; g < 4; ++g)
                        pre[g] = x[(t * z.B + b) * 4 * d + g * d + u] + b_hh[g * d + u] +
                                 matvec_row(w_hh, g * d + u, &h[b * d], d);
                    const double i = sigmoid(pre[0]), f = sigmoid(pre[1]), g = std::tanh(pre[2]),
                                 o = sigmoid(pre[3]);
                    c_next[b * d + u] = f * c[b * d + u] + i * g;
                    h_next[b * d + u] = o * std::tanh(c_next[b * d + u]);
                }
            h = h_next;
            c = c_next;
            for (int b = 0; b < z.B; ++b)
                for (int u = 0; u < d; ++u) {
                    worst = std::max(worst, std::abs(state_at(result, z, 0, t + 1, b, u) - h[b * d + u]));
                    worst = std::max(worst, std::abs(state_at(result, z, 1, t + 1, b, u) - c[b * d + u]));
                }
        }
        INFO("T=", z.T, " B=", z.B, " NH=", z.NH, " DH=", z.DH);
        CHECK(worst <= tolerance);
        check_last_state(result, z, 2);
    }
}

TEST_CASE("GRU forward equals torch.nn.GRU's equations") {
    std::mt19937_64 rng(12);
    for (Sizes z : grid) {
        const int d = z.d();
        const std::vector<double> x =
            uniform(static_cast<std::size_t>(z.T * z.B * 3 * d), -1, 1, rng); // W_ih x: r, z, n
        const std::vector<double> w_hh = block_diagonal_weight(3, z, rng);    // r, z, n
        const std::vector<double> b_ih = uniform(static_cast<std::size_t>(3 * d), -0.5, 0.5, rng);
        const std::vector<double> b_hh = uniform(static_cast<std::size_t>(3 * d), -0.5, 0.5, rng);
        const std::vector<double> h0 = uniform(static_cast<std::size_t>(z.B * d), -1, 1, rng);

        // The documented bias layout: r: b_ir + b_hr, z: b_iz + b_hz, n: b_in, hn: b_hn.
        std::vector<double> bias(static_cast<std::size_t>(4 * d));
        for (int u = 0; u < d; ++u) {
            bias[0 * d + u] = b_ih[0 * d + u] + b_hh[0 * d + u];
            bias[1 * d + u] = b_ih[1 * d + u] + b_hh[1 * d + u];
            bias[2 * d + u] = b_ih[2 * d + u];
            bias[3 * d + u] = b_hh[2 * d + u];
        }
        const reference::ForwardResult result =
            run(Cell::gru, z, x, to_recurrent_weights(w_hh, 3, z), bias, h0);

        std::vector<double> h = h0;
        double worst = 0;
        for (int t = 0; t < z.T; ++t) {
            std::vector<double> h_next(h.size());
            for (int b = 0; b < z.B; ++b)
                for (int u = 0; u < d; ++u) {
                    const double* x_t = &x[(t * z.B + b) * 3 * d];
                    const double r = sigmoid(x_t[0 * d + u] + b_ih[0 * d + u] +
                                             matvec_row(w_hh, 0 * d + u, &h[b * d], d) + b_hh[0 * d + u]);
                    const double up = sigmoid(x_t[1 * d + u] + b_ih[1 * d + u] +
                                              matvec_row(w_hh, 1 * d + u, &h[b * d], d) + b_hh[1 * d + u]);
                    const double n =
                        std::tanh(x_t[2 * d + u] + b_ih[2 * d + u] +
                                  r * (matvec_row(w_hh, 2 * d + u, &h[b * d], d) + b_hh[2 * d + u]));
                    h_next[b * d + u] = (1 - up) * n + up * h[b * d + u];
                }
            h = h_next;
            for (int b = 0; b < z.B; ++b)
                for (int u = 0; u < d; ++u)
                    worst = std::max(worst, std::abs(state_at(result, z, 0, t + 1, b, u) - h[b * d + u]));
        }
        INFO("T=", z.T, " B=", z.B, " NH=", z.NH, " DH=", z.DH);
        CHECK(worst <= tolerance);
        check_last_state(result, z, 1);
    }
}

TEST_CASE("Elman forward equals h' = tanh(x + W h + b)") {
    std::mt19937_64 rng(13);
    for (Sizes z : grid) {
        const int d = z.d();
        const std::vector<double> x = uniform(static_cast<std::size_t>(z.T * z.B * d), -1, 1, rng);
        const std::vector<double> w = block_diagonal_weight(1, z, rng);
        const std::vector<double> bias = uniform(static_cast<std::size_t>(d), -0.5, 0.5, rng);
        const std::vector<double> h0 = uniform(static_cast<std::size_t>(z.B * d), -1, 1, rng);
        const reference::ForwardResult result =
            run(Cell::elman, z, x, to_recurrent_weights(w, 1, z), bias, h0);

        std::vector<double> h = h0;
        double worst = 0;
        for (int t = 0; t < z.T; ++t) {
            std::vector<double> h_next(h.size());
            for (int b = 0; b < z.B; ++b)
                for (int u = 0; u < d; ++u)
                    h_next[b * d + u] =
                        std::tanh(x[(t * z.B + b) * d + u] + matvec_row(w, u, &h[b * d], d) + bias[u]);
            h = h_next;
            for (int b = 0; b < z.B; ++b)
                for (int u = 0; u < d; ++u)
                    worst = std::max(worst, std::abs(state_at(result, z, 0, t + 1, b, u) - h[b * d + u]));
        }
        CHECK(worst <= tolerance);
    }
}

// The stabilised cell must equal the unstabilised recurrence c~' = sigmoid(f) c~ + exp(i) tanh(z),
// n~' = sigmoid(f) n~ + exp(i), h' = sigmoid(o) c~'/n~', with c = c~ exp(-m), n = n~ exp(-m) and
// m' = max(log sigmoid(f) + m, i).
TEST_CASE("sLSTM forward equals the unstabilised recurrence") {
    std::mt19937_64 rng(14);
    for (Sizes z : grid) {
        const int d = z.d();
        const std::vector<double> x =
            uniform(static_cast<std::size_t>(z.T * z.B * 4 * d), -2, 2, rng); // i, f, z, o
        const std::vector<double> w = block_diagonal_weight(4, z, rng);
        const std::vector<double> bias = uniform(static_cast<std::size_t>(4 * d), -0.5, 0.5, rng);
        std::vector<double> initial =
            uniform(static_cast<std::size_t>(4 * z.B * d), -1, 1, rng); // h, c, n, m
        for (int k = 0; k < z.B * d; ++k)
            initial[2 * z.B * d + k] = 0.5 + std::abs(initial[2 * z.B * d + k]);
        const reference::ForwardResult result =
            run(Cell::slstm, z, x, to_recurrent_weights(w, 4, z), bias, initial);

        const int n_units = z.B * d;
        std::vector<double> h(initial.begin(), initial.begin() + n_units), c_raw(n_units), n_raw(n_units),
            m(initial.begin() + 3 * n_units, initial.end());
        for (int k = 0; k < n_units; ++k) {
            c_raw[k] = initial[n_units + k] * std::exp(m[k]);
            n_raw[k] = initial[2 * n_units + k] * std::exp(m[k]);
        }
        double worst_h = 0, worst_m = 0, worst_scaled = 0;
        for (int t = 0; t < z.T; ++t) {
            std::vector<double> h_next(n_units);
            for (int b = 0; b < z.B; ++b)
                for (int u = 0; u < d; ++u) {
                    const int k = b * d + u;
                    double pre[4];
                    for (int g = 0; g < 4; ++g)
                        pre[g] = x[(t * z.B + b) * 4 * d + g * d + u] + bias[g * d + u] +
                                 matvec_row(w, g * d + u, &h[b * d], d);
                    c_raw[k] = sigmoid(pre[1]) * c_raw[k] + std::exp(pre[0]) * std::tanh(pre[2]);
                    n_raw[k] = sigmoid(pre[1]) * n_raw[k] + std::exp(pre[0]);
                    h_next[k] = sigmoid(pre[3]) * c_raw[k] / n_raw[k];
                    m[k] = std::max(std::log(sigmoid(pre[1])) + m[k], pre[0]);

                    worst_h = std::max(worst_h, std::abs(state_at(result, z, 0, t + 1, b, u) - h_next[k]));
                    worst_m = std::max(worst_m, std::abs(state_at(result, z, 3, t + 1, b, u) - m[k]));
                    const double scale = std::exp(state_at(result, z, 3, t + 1, b, u));
                    worst_scaled = std::max(worst_scaled,
                                            std::abs(state_at(result, z, 1, t + 1, b, u) * scale - c_raw[k]) /
                                                std::abs(c_raw[k]));
                    worst_scaled = std::max(worst_scaled,
                                            std::abs(state_at(result, z, 2, t + 1, b, u) * scale - n_raw[k]) /
                                                std::abs(n_raw[k]));
                }
            h = h_next;
        }
        INFO("T=", z.T, " B=", z.B, " NH=", z.NH, " DH=", z.DH);
        CHECK(worst_h <= tolerance);
        CHECK(worst_m <= tolerance);
        CHECK(worst_scaled <= tolerance); // relative
        check_last_state(result, z, 4);
    }
}

TEST_CASE("sLSTM from an empty state stays finite for an extreme input gate") {
    // n = c = m = 0: the first step takes m' = i, so i~ = 1 and n' = 1 even where exp(i) underflows.
    const Sizes z{2, 1, 1, 1};
    const std::vector<double> x{-800.0, 0.5, 0.7, 0.2, /* step 2: */ 0.3, -0.4, -0.6, 0.1};
    const std::vector<double> r{0.1, 0.2, 0.3, 0.4};
    const std::vector<double> bias{0.0, 0.0, 0.0, 0.0};
    const std::vector<double> initial{0.25, 0.0, 0.0, 0.0};
    const reference::ForwardResult result = run(Cell::slstm, z, x, r, bias, initial);
    const double i = -800.0 + 0.1 * 0.25, zval = std::tanh(0.7 + 0.3 * 0.25), o = sigmoid(0.2 + 0.4 * 0.25);
    CHECK(state_at(result, z, 3, 1, 0, 0) == doctest::Approx(i));
    CHECK(state_at(result, z, 2, 1, 0, 0) == doctest::Approx(1.0));
    CHECK(state_at(result, z, 1, 1, 0, 0) == doctest::Approx(zval));
    CHECK(state_at(result, z, 0, 1, 0, 0) == doctest::Approx(o * zval));
    for (double v : result.states.values)
        CHECK(std::isfinite(v));
}
