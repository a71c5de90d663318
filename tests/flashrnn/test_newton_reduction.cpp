// The reference of the Newton step's reduction (newton/reduction.hpp): exact tests (Jacobian entries
// in {+1, -1}, or signed permutations where products of dense +-1 blocks would outgrow float64's
// integers; right-hand sides unit vectors) on odd and prime lengths, diagonal and 2x2, forward and
// reverse, by forward substitution and by the chunked prefix scan; both methods on random data; the
// argument checks of the public reduction.
#include <string>

#include "flashrnn/core/error.hpp"
#include "newton_test_support.hpp"

using namespace flashrnn;
using namespace flashrnn::testing;

namespace {

struct System {
    newton::ReductionProblem problem;
    std::vector<double> jacobians, rhs;

    int n() const { return newton::block_size(problem.structure); }
    std::size_t at(int row, std::int64_t s, std::int64_t l) const {
        return static_cast<std::size_t>((row * problem.shape.sequences + s) * problem.shape.length + l);
    }
    reference::Tensor solve(reference::ReductionMethod method, int chunk_size) const {
        return reference::newton_reduce(problem, {jacobians, sizes_of(newton::jacobians_shape(problem))},
                                        {rhs, sizes_of(newton::rhs_shape(problem))}, method, chunk_size);
    }
    // Whether x satisfies every equation x_l = J_l x_{l-1} + r_l (reverse: x_{l+1}) exactly.
    bool satisfied_exactly_by(const std::vector<double>& x) const {
        const std::int64_t L = problem.shape.length;
        for (std::int64_t s = 0; s < problem.shape.sequences; ++s)
            for (std::int64_t l = 0; l < L; ++l) {
                const std::int64_t previous = problem.reverse ? l + 1 : l - 1;
                for (int i = 0; i < n(); ++i) {
                    double value = rhs[at(i, s, l)];
                    if (previous >= 0 && previous < L)
                        for (int j = 0; j < n(); ++j)
                            value += jacobians[at(i * n() + j, s, l)] * x[at(j, s, previous)];
                    if (value != x[at(i, s, l)]) return false;
                }
            }
        return true;
    }
};

// Sequences whose right-hand side is one unit vector: at the first, the middle, the last and a
// random position of the traversal, on a random component.
System exact_system(newton::JacobianStructure structure, std::int64_t length, bool reverse,
                    std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    System sys{{DType::fp32, structure, {.sequences = 5, .length = length}, reverse}, {}, {}};
    const int n = sys.n();
    sys.jacobians.assign(static_cast<std::size_t>(n * n * 5 * length), 0.0);
    sys.rhs.assign(static_cast<std::size_t>(n * 5 * length), 0.0);
    std::bernoulli_distribution coin(0.5);
    const auto sign = [&] { return coin(rng) ? 1.0 : -1.0; };
    // Products of k dense +-1 2x2 blocks reach 2^(k-1): exact in float64 up to 50 steps.
    const bool dense_blocks = n == 1 || length <= 50;
    for (std::int64_t s = 0; s < 5; ++s)
        for (std::int64_t l = 0; l < length; ++l) {
            if (dense_blocks) {
                for (int k = 0; k < n * n; ++k)
                    sys.jacobians[sys.at(k, s, l)] = sign();
            } else { // a signed permutation: [[+-1, 0], [0, +-1]] or [[0, +-1], [+-1, 0]]
                const bool swap = coin(rng);
                sys.jacobians[sys.at(swap ? 1 : 0, s, l)] = sign();
                sys.jacobians[sys.at(swap ? 2 : 3, s, l)] = sign();
            }
        }
    const std::int64_t middle = length / 2,
                       random = std::uniform_int_distribution<std::int64_t>(0, length - 1)(rng);
    const std::array<std::int64_t, 5> steps{0, middle, length - 1, random, length > 1 ? 1 : 0};
    for (std::int64_t s = 0; s < 5; ++s) {
        const std::int64_t step = steps[static_cast<std::size_t>(s)];
        const std::int64_t l = reverse ? length - 1 - step : step;
        sys.rhs[sys.at(static_cast<int>(s % n), s, l)] = 1.0;
    }
    return sys;
}

} // namespace

TEST_CASE(
    "newton reduction: exact solutions at odd and prime lengths, diagonal and 2x2, forward and reverse") {
    std::uint64_t seed = 1;
    for (auto structure : {newton::JacobianStructure::diagonal, newton::JacobianStructure::block2x2})
        for (bool reverse : {false, true})
            for (std::int64_t length : {1, 2, 3, 5, 31, 32, 33, 47, 127, 128, 1009, 4099, 65537}) {
                const System sys = exact_system(structure, length, reverse, ++seed);
                const std::vector<double> sequential =
                    sys.solve(reference::ReductionMethod::sequential, 1).values;
                INFO(sys.n(), "x", sys.n(), " blocks, L = ", length,
                     std::string(reverse ? ", reverse" : ", forward"));
                CHECK(sys.satisfied_exactly_by(sequential));
                for (int chunk : {1, 2, 3, 4, 32}) {
                    INFO("prefix scan in chunks of ", chunk);
                    const std::vector<double> prefix =
                        sys.solve(reference::ReductionMethod::prefix, chunk).values;
                    CHECK(sys.satisfied_exactly_by(prefix));
                    CHECK(prefix == sequential);
                }
            }
}

TEST_CASE("newton reduction: a unit right-hand side spreads as the product of the Jacobians after it") {
    // Diagonal, forward: x_l = 0 before the unit at k, 1 at k, J_{k+1} ... J_l after it.
    const System sys = exact_system(newton::JacobianStructure::diagonal, 97, false, 99);
    const std::vector<double> x = sys.solve(reference::ReductionMethod::prefix, 2).values;
    for (std::int64_t s = 0; s < 5; ++s) {
        std::int64_t k = 0;
        while (sys.rhs[sys.at(0, s, k)] == 0)
            ++k;
        double product = 1;
        for (std::int64_t l = 0; l < 97; ++l) {
            if (l > k) product *= sys.jacobians[sys.at(0, s, l)];
            CHECK(x[sys.at(0, s, l)] == (l < k ? 0.0 : product));
        }
    }
}

TEST_CASE(
    "newton reduction: the prefix scan agrees with forward substitution on random contracting systems") {
    std::mt19937_64 rng(7);
    for (auto structure : {newton::JacobianStructure::diagonal, newton::JacobianStructure::block2x2})
        for (bool reverse : {false, true})
            for (std::int64_t length : {1, 6, 257, 3001}) {
                System sys{{DType::fp32, structure, {.sequences = 3, .length = length}, reverse}, {}, {}};
                const int n = sys.n();
                sys.jacobians = uniform(static_cast<std::size_t>(n * n * 3 * length), -0.7, 0.7, rng);
                sys.rhs = uniform(static_cast<std::size_t>(n * 3 * length), -1.0, 1.0, rng);
                const std::vector<double> sequential =
                    sys.solve(reference::ReductionMethod::sequential, 1).values;
                INFO(n, "x", n, " blocks, L = ", length, std::string(reverse ? ", reverse" : ", forward"));
                for (int chunk : {1, 3, 8})
                    CHECK(max_abs_difference(sys.solve(reference::ReductionMethod::prefix, chunk).values,
                                             sequential) <= 1e-12);
            }
}

TEST_CASE("newton reduction: bad arguments are refused naming the tensor") {
    const newton::ReductionProblem problem{
        DType::bf16, newton::JacobianStructure::block2x2, {.sequences = 6, .length = 11}, false};
    alignas(16) static unsigned char memory[16];
    const auto view = [&](const NamedShape& shape) { return TensorView{memory, DType::bf16, shape.sizes()}; };
    const newton::ReductionArgs good{view(newton::jacobians_shape(problem)), view(newton::rhs_shape(problem)),
                                     view(newton::rhs_shape(problem)), Workspace{}};
    CHECK_NOTHROW(newton::check_reduction_args("newton::reduce", problem, good));

    newton::ReductionArgs args = good;
    args.jacobians = TensorView{memory, DType::bf16, {1, 6, 11}}; // diagonal Jacobians for 2x2 blocks
    CHECK_THROWS_WITH_AS(
        newton::check_reduction_args("newton::reduce", problem, args),
        "flashrnn::newton::reduce(2x2, bf16): jacobians: expected [K=4, sequences=6, L=11] bf16, got "
        "[1, 6, 11] bf16",
        ShapeError);
    args = good;
    args.solution = {};
    CHECK_THROWS_WITH_AS(newton::check_reduction_args("newton::reduce", problem, args),
                         "flashrnn::newton::reduce(2x2, bf16): solution is null (a required tensor)",
                         ShapeError);
    newton::ReductionProblem empty = problem;
    empty.shape.length = 0;
    CHECK_THROWS_AS(newton::check_reduction_args("newton::reduce", empty, good), ShapeError);
    newton::ReductionProblem half = problem;
    half.dtype = DType::fp16;
    CHECK_THROWS_AS(newton::check_reduction_args("newton::reduce", half, good), UnsupportedError);

    // The reference: shapes and values.
    System sys = exact_system(newton::JacobianStructure::diagonal, 9, false, 3);
    CHECK_THROWS_WITH_AS(reference::newton_reduce(sys.problem, {sys.jacobians, {1, 5, 8}},
                                                  {sys.rhs, sizes_of(newton::rhs_shape(sys.problem))}),
                         "flashrnn::reference::newton_reduce: jacobians has shape [1, 5, 8], expected [K=1, "
                         "sequences=5, L=9]",
                         ShapeError);
    sys.rhs[sys.at(0, 2, 4)] = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH_AS(
        reference::newton_reduce(sys.problem, {sys.jacobians, {1, 5, 9}}, {sys.rhs, {1, 5, 9}}),
        "flashrnn::reference::newton_reduce: rhs has a non-finite value (nan) at [N=0, "
        "sequences=2, L=4]",
        NumericalError);
}
