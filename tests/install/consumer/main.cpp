// A program built against the installed ConstrINT and FlashRNN packages (tests/install): it uses both
// libraries without a GPU and exits with status 1 on a wrong answer, naming it.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <constrint/constrint.hpp>
#include <flashrnn/flashrnn.hpp>

namespace {

int wrong_answers = 0;

void expect(bool correct, const std::string& what) {
    if (!correct) {
        std::fprintf(stderr, "consumer: wrong answer: %s\n", what.c_str());
        ++wrong_answers;
    }
}

// README's model: with x preferred large, x = 1024 .. 513 fail x * y <= 65536 for y = 128, and
// x != 64 requires y = 128, so the first solution is x = 512, y = 128.
void solve_the_readme_model() {
    using namespace constrint;
    Model m;
    Var x = m.var("x", 1, 1024), y = m.var("y", std::vector<Integer>{16, 32, 64, 128});
    m.add(x * y <= 65536);
    m.add(x % 16 == 0);
    m.add((x == 64) | (y == 128));
    m.prefer(x, Prefer::Max);
    const Result r = solve(m);
    expect(r.status == Status::Satisfiable, std::string("constrint status ") + to_string(r.status));
    expect(r.solutions.size() == 1, "constrint: " + std::to_string(r.solutions.size()) + " solutions");
    if (r.solutions.empty()) return;
    const Solution& s = r.solutions.front();
    expect(s[x] == 512 && s[y] == 128,
           "constrint: x = " + to_string(s[x]) + ", y = " + to_string(s[y]) + ", expected x = 512, y = 128");
}

double sigmoid(double v) {
    return 1.0 / (1.0 + std::exp(-v));
}

// One LSTM unit (B = NH = DH = 1) over three steps: the float64 reference against the textbook
// equations c' = s(f) c + s(i) tanh(z), h' = s(o) tanh(c'), gates i, f, z, o.
void run_the_lstm_reference() {
    using namespace flashrnn;
    const CellInfo info = cell_info(Cell::lstm);
    expect(info.num_gates == 4,
           "flashrnn: lstm has " + std::to_string(info.num_gates) + " gates, expected 4");

    constexpr std::size_t steps = 3;
    const ProblemShape shape{/*T=*/static_cast<std::int64_t>(steps), /*B=*/1, /*NH=*/1, /*DH=*/1};
    const std::vector<double> wx{0.5, -0.25, 0.75, 0.1, -0.3, 0.2, -0.6, 0.4, 0.9, 0.05, 0.3, -0.2}; // [T, G]
    const std::vector<double> r{0.3, -0.4, 0.6, 0.2};                                                // [G]
    const std::vector<double> bias{0.1, 0.5, -0.1, 0.0};                                             // [G]
    const std::vector<double> initial{0.2, -0.7};                                                    // h0, c0
    const reference::ForwardResult result =
        reference::forward(Cell::lstm, shape,
                           {{wx, sizes_of(gate_inputs_shape(info, shape))},
                            {r, sizes_of(recurrent_weights_shape(info, shape))},
                            {bias, sizes_of(bias_shape(info, shape))},
                            {initial, sizes_of(states_shape(info, shape))}});

    double h = initial[0], c = initial[1];
    for (std::size_t t = 0; t < steps; ++t) {
        double pre[4];
        for (std::size_t g = 0; g < 4; ++g)
            pre[g] = wx[4 * t + g] + r[g] * h + bias[g];
        c = sigmoid(pre[1]) * c + sigmoid(pre[0]) * std::tanh(pre[2]);
        h = sigmoid(pre[3]) * std::tanh(c);
        // states [S, T+1, B, NH, DH]: h then c, index 0 the initial states
        const std::vector<double>& states = result.states.values;
        const std::size_t h_at = t + 1, c_at = h_at + steps + 1;
        expect(states.size() == 2 * (steps + 1) && std::abs(states[h_at] - h) < 1e-12 &&
                   std::abs(states[c_at] - c) < 1e-12,
               "flashrnn: lstm reference at step " + std::to_string(t + 1) + " differs from the equations");
    }
}

void read_a_device_preset() {
    const flashrnn::DeviceLimits h100 = flashrnn::preset("h100");
    expect(h100.compute_capability() == 90 && h100.sm_count > 0,
           "flashrnn: preset h100 has compute capability " + std::to_string(h100.compute_capability()));
}

} // namespace

int main() {
    solve_the_readme_model();
    run_the_lstm_reference();
    read_a_device_preset();
    if (wrong_answers != 0) return 1;
    std::puts("consumer: constrint and flashrnn answered correctly");
    return 0;
}
