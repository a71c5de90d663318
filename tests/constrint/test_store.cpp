// The propagation store's search points (Store::stamp, on_branch), its trail and its wake lists.
#include "engine/store.hpp"

#include <doctest/doctest.h>

using namespace constrint;
using namespace constrint::engine;

TEST_CASE("store stamps: on the branch at the node and below it, off it after backtracking past it") {
    Store store;
    const Store::Stamp root = store.stamp();
    CHECK(store.on_branch(root));
    CHECK_FALSE(store.on_branch(Store::Stamp{})); // the default stamp is never on the branch

    store.push_level();
    const Store::Stamp left = store.stamp();
    store.push_level();
    const Store::Stamp left_left = store.stamp();
    CHECK(store.on_branch(root));
    CHECK(store.on_branch(left));
    CHECK(store.on_branch(left_left));

    store.pop_level(); // back at `left`
    CHECK(store.on_branch(left));
    CHECK_FALSE(store.on_branch(left_left));
    store.push_level(); // a sibling of left_left, at the same depth
    CHECK_FALSE(store.on_branch(left_left));
    CHECK(store.on_branch(left));

    store.pop_level();
    store.pop_level();  // back at the root
    store.push_level(); // a sibling of left
    CHECK_FALSE(store.on_branch(left));
    CHECK(store.on_branch(root));
}

TEST_CASE("store trail: reused entries restore each domain exactly") {
    Store store;
    const VarId x = store.new_var(Domain::values({1, 3, 5, 7, 9, 11}));
    const VarId y = store.new_var(Domain::range(0, 100));
    const Domain x_before = store.dom(x), y_before = store.dom(y);

    store.push_level();
    REQUIRE(store.remove(x, 5));
    REQUIRE(store.set_max(y, 50));
    store.pop_level();
    CHECK(store.dom(x) == x_before);
    CHECK(store.dom(y) == y_before);

    // The entries now hold x's and y's old buffers; save y first this time, then x twice deeper.
    store.push_level();
    REQUIRE(store.assign(y, 7));
    REQUIRE(store.remove(x, 1));
    const Domain x_middle = store.dom(x);
    store.push_level();
    REQUIRE(store.assign(x, 9));
    store.pop_level();
    CHECK(store.dom(x) == x_middle);
    CHECK(store.dom(y) == Domain::single(7));
    store.pop_level();
    CHECK(store.dom(x) == x_before);
    CHECK(store.dom(y) == y_before);
}

namespace {
// Counts its runs; subsumed once `done` is fixed. Subscribes to x's every change and done's fixing.
class CountingRuns final : public Propagator {
  public:
    CountingRuns(VarId x, VarId done, int& runs) : x_(x), done_(done), runs_(runs) {}
    PropStatus propagate(Store& s) override {
        ++runs_;
        return s.fixed(done_) ? PropStatus::Subsumed : PropStatus::Ok;
    }
    Entailment entailment(const Store&) const override { return Entailment::Unknown; }
    std::vector<Subscription> subscriptions() const override {
        return {{x_, Event::Domain}, {done_, Event::Fixed}};
    }
    const char* name() const override { return "counting_runs"; }

  private:
    VarId x_, done_;
    int& runs_;
};
} // namespace

TEST_CASE(
    "store wake lists: a subsumed propagator is not woken below its node, and is again after backtracking") {
    Store store;
    const VarId x = store.new_var(Domain::range(0, 20));
    std::vector<VarId> done;
    std::vector<int> runs(3, 0);
    for (int i = 0; i < 3; ++i) {
        done.push_back(store.new_var(Domain::range(0, 1)));
        store.add_propagator(std::make_unique<CountingRuns>(x, done.back(), runs[i]));
    }
    REQUIRE(store.propagate());
    CHECK(runs == std::vector<int>{1, 1, 1});

    store.push_level();
    REQUIRE(store.assign(done[0], 1)); // the first and the last subsumed, deeper and deeper
    REQUIRE(store.propagate());
    store.push_level();
    REQUIRE(store.assign(done[2], 1));
    REQUIRE(store.propagate());
    CHECK(runs == std::vector<int>{2, 1, 2});
    REQUIRE(store.remove(x, 5));
    REQUIRE(store.propagate());
    CHECK(runs == std::vector<int>{2, 2, 2}); // only the middle one is woken

    store.pop_level(); // the last one is back
    REQUIRE(store.remove(x, 6));
    REQUIRE(store.propagate());
    CHECK(runs == std::vector<int>{2, 3, 3});
    store.pop_level(); // all are back
    REQUIRE(store.set_max(x, 15));
    REQUIRE(store.propagate());
    CHECK(runs == std::vector<int>{3, 4, 4});
}
