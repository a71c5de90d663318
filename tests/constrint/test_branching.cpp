// Variable selection by accumulated failure count (Store::afc, VarSelect::AfcSizeMax).
#include "engine/search.hpp"

#include "models/classic_models.hpp"

#include <doctest/doctest.h>

using namespace constrint;
using namespace constrint::engine;

namespace {

// Fails whenever its first variable is fixed to 0.
class FailsAtZero final : public Propagator {
  public:
    explicit FailsAtZero(std::vector<VarId> vars) : vars_(std::move(vars)) {}
    PropStatus propagate(Store& s) override {
        return s.fixed(vars_[0]) && s.value(vars_[0]) == 0 ? PropStatus::Fail : PropStatus::Ok;
    }
    Entailment entailment(const Store&) const override { return Entailment::Unknown; }
    std::vector<Subscription> subscriptions() const override { return subscribe(vars_, Event::Fixed); }
    const char* name() const override { return "fails_at_zero"; }

  private:
    std::vector<VarId> vars_;
};

// Fixes x to 0 below a choice point, propagates (which fails) and backtracks.
void fail_on(Store& store, VarId x) {
    store.push_level();
    REQUIRE(store.assign(x, 0));
    CHECK_FALSE(store.propagate());
    store.pop_level();
}

} // namespace

TEST_CASE("AFC: a propagator's failures count for each of its variables, recent ones more") {
    Store store;
    const VarId x = store.new_var(Domain::range(0, 1)), y = store.new_var(Domain::range(0, 1)),
                z = store.new_var(Domain::range(0, 1));
    store.add_propagator(std::make_unique<FailsAtZero>(std::vector<VarId>{x}));
    store.add_propagator(std::make_unique<FailsAtZero>(std::vector<VarId>{y, z}));
    REQUIRE(store.propagate());
    CHECK(store.afc(x) == doctest::Approx(1)); // every propagator starts at 1
    CHECK(store.afc(y) == doctest::Approx(1));

    fail_on(store, x);
    CHECK(store.afc(x) == doctest::Approx(2 * Store::kAfcDecay));
    CHECK(store.afc(y) == doctest::Approx(Store::kAfcDecay));
    CHECK(store.afc(x) == doctest::Approx(2 * store.afc(y)));

    // One failure each: the later one, y's, weighs more (the first has decayed once more).
    fail_on(store, y);
    CHECK(store.afc(y) > store.afc(x));
    CHECK(store.afc(z) == doctest::Approx(store.afc(y))); // z shares y's propagator
}

TEST_CASE("AFC: the counts survive rescaling after many failures") {
    Store store;
    const VarId x = store.new_var(Domain::range(0, 1)), y = store.new_var(Domain::range(0, 1));
    store.add_propagator(std::make_unique<FailsAtZero>(std::vector<VarId>{x}));
    store.add_propagator(std::make_unique<FailsAtZero>(std::vector<VarId>{y}));
    REQUIRE(store.propagate());
    // 0.99^25000 is far below 1e-100: the increment is rescaled several times on the way.
    for (int i = 0; i < 25000; ++i)
        fail_on(store, x);
    fail_on(store, y);
    // Each failure of x maps its count a to (a + 1) * decay, which converges to decay / (1 - decay);
    // y's failure decays it once more. y's own count is its one failure, decayed once (its start
    // value of 1 has decayed to nothing).
    constexpr double d = Store::kAfcDecay;
    CHECK(store.afc(x) == doctest::Approx(d * d / (1 - d)));
    CHECK(store.afc(y) == doctest::Approx(d));
}

TEST_CASE("AFC size max phase: the search stays complete (queens 8: 92 solutions)") {
    const auto model = std::make_shared<const Model>(constrint::examples::queens(8));
    Phase phase{{}, VarSelect::AfcSizeMax, Prefer::Min};
    for (int i = 0; i < static_cast<int>(model->variables().size()); ++i)
        phase.vars.push_back(i);
    Search search(model, compile(*model), {}, {phase});
    int solutions = 0;
    while (search.next())
        ++solutions;
    CHECK(solutions == 92);
    CHECK(search.status() == Status::AllSolutions);
    CHECK(search.stats().failures > 0); // there were failures to count
}
