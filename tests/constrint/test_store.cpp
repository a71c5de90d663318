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

    // The same entries saving interval bounds of words, then Integers beyond a word, then words again.
    const Integer beyond = Integer(1) << 70;
    const VarId big = store.new_var(Domain::values({beyond, beyond + 2, beyond + 4}));
    const Domain big_before = store.dom(big);
    for (int round = 0; round < 2; ++round) {
        store.push_level();
        REQUIRE(store.remove(big, beyond + 2));
        REQUIRE(store.remove(x, 7));
        REQUIRE(store.set_min(y, 3));
        store.pop_level();
        CHECK(store.dom(big) == big_before);
        CHECK(store.dom(x) == x_before);
        CHECK(store.dom(y) == y_before);
        store.push_level();
        REQUIRE(store.remove(x, 3));
        REQUIRE(store.remove(big, beyond));
        store.push_level();
        REQUIRE(store.set_max(x, 5));
        store.pop_level();
        CHECK(store.dom(x) == Domain::values({1, 5, 7, 9, 11}));
        store.pop_level();
        CHECK(store.dom(x) == x_before);
        CHECK(store.dom(big) == big_before);
    }

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

namespace {
const Integer kWordMax = (Integer(1) << 63) - 1; // 2^63 - 1
const Integer kWordMin = -(Integer(1) << 63);    // -2^63

// The store's cached word bounds and fixed() agree with its domain.
void check_word_bounds(const Store& store, VarId x) {
    const Domain& d = store.dom(x);
    Word lo = 0, hi = 0, min = 0, max = 0;
    const bool fit = read_word(d.min(), min) && read_word(d.max(), max);
    CHECK(store.word_bounds(x, lo, hi) == fit);
    if (fit) CHECK((lo == min && hi == max));
    CHECK(store.fixed(x) == d.fixed());
}
} // namespace

// Each narrowing is done on a plain Domain too: the store must agree (an empty result is a failure that
// leaves the domain as it was), keep its word bounds in step, and restore the domain on backtracking,
// whether the trail saved it as a copy or, for a range of words, as its two bounds.
TEST_CASE("store narrowing and trail at the 64-bit boundaries: word bounds, word and Integer paths agree") {
    const Integer two62 = Integer(1) << 62;
    const std::vector<Domain> starts = {
        Domain::range(0, 6),
        Domain::values({1, 3, 4, 8}),
        Domain::range(kWordMin, kWordMin + 5),
        Domain::range(kWordMax - 5, kWordMax),
        Domain::range(kWordMin, kWordMax),
        Domain::range(two62 - 2, two62 + 2),
        Domain::range(kWordMax - 2, kWordMax + 2), // the maximum does not fit a word
        Domain::range(kWordMin - 3, kWordMin + 1), // nor the minimum
        Domain::values({kWordMin, 0, kWordMax}),
        Domain::single(kWordMax),
        // Holes next to the ends of a word (saved as interval bounds), and beyond them (saved as a copy).
        Domain::values({kWordMax - 6, kWordMax - 5, kWordMax - 3, kWordMax - 1, kWordMax}),
        Domain::values({kWordMin, kWordMin + 2, kWordMin + 3, kWordMin + 5}),
        Domain::values({two62 - 3, two62 - 1, two62, two62 + 2}),
        Domain::values({kWordMax - 2, kWordMax, kWordMax + 2}),
        Domain::values({kWordMin - 2, kWordMin, kWordMin + 2}),
        // A hole and intervals long enough that the probes fall inside them (a removal splits one).
        Domain::values(
            {kWordMax - 8, kWordMax - 7, kWordMax - 6, kWordMax - 3, kWordMax - 2, kWordMax - 1, kWordMax}),
        Domain::values({kWordMin, kWordMin + 1, kWordMin + 2, kWordMin + 3, kWordMin + 6, kWordMin + 7}),
    };
    for (const Domain& start : starts) {
        Domain with_congruence = start;
        with_congruence.restrict_congruence(3, 1);
        for (const Domain& before : {start, with_congruence}) {
            if (before.empty()) continue;
            std::vector<Integer> probes;
            for (const Integer& edge : {before.min(), before.max(), Integer(0), two62, kWordMax, kWordMin})
                for (int delta = -2; delta <= 2; ++delta)
                    probes.push_back(edge + delta);
            for (int op = 0; op < 6; ++op) {
                for (const Integer& v : probes) {
                    Word w = 0;
                    if (op >= 4 && !read_word(v, w)) continue; // the word operations take words only
                    CAPTURE(before.to_string());
                    CAPTURE(op);
                    CAPTURE(to_string(v));
                    Domain expected = before;
                    switch (op) {
                    case 0:
                        expected.restrict_min(v);
                        break;
                    case 1:
                        expected.restrict_max(v);
                        break;
                    case 2:
                        expected.remove(v);
                        break;
                    case 3:
                        if (expected.contains(v))
                            expected.assign(v);
                        else
                            expected = Domain();
                        break;
                    case 4:
                        expected.restrict_min(v);
                        break;
                    default:
                        expected.restrict_max(v);
                        break;
                    }
                    Store store;
                    const VarId other = store.new_var(Domain::range(0, 1)); // x is not the first variable
                    const VarId x = store.new_var(before);
                    store.push_level();
                    REQUIRE(store.assign(other, 1)); // an entry before x's in the trail
                    const bool kept = op == 0   ? store.set_min(x, v)
                                      : op == 1 ? store.set_max(x, v)
                                      : op == 2 ? store.remove(x, v)
                                      : op == 3 ? store.assign(x, v)
                                      : op == 4 ? store.set_min_word(x, w)
                                                : store.set_max_word(x, w);
                    CHECK(kept == !expected.empty());
                    CHECK(store.dom(x) == (expected.empty() ? before : expected));
                    check_word_bounds(store, x);
                    store.pop_level();
                    CHECK(store.dom(x) == before);
                    CHECK(store.dom(other) == Domain::range(0, 1));
                    check_word_bounds(store, x);
                }
            }
        }
    }
}

// A domain changes representation under the trail: held in Integers (a bound beyond a word, or a
// congruence), narrowed into words, narrowed again in words, and each level restored exactly; and a
// domain of words given a congruence, restored to words.
TEST_CASE("store trail: domains switching between Integer and word intervals are restored at every level") {
    Store store;
    const VarId x = store.new_var(Domain::values({kWordMax - 4, kWordMax - 2, kWordMax, kWordMax + 1}));
    const VarId y = store.new_var(Domain::values({-3, -1, 0, 4, 5, 9}));
    const Domain x_start = store.dom(x), y_start = store.dom(y);
    REQUIRE_FALSE(x_start.in_words());
    REQUIRE(y_start.in_words());
    for (int round = 0; round < 2; ++round) { // the second round reuses the trail entries
        store.push_level();
        REQUIRE(store.set_max(x, kWordMax));         // into words
        REQUIRE(store.restrict_congruence(y, 2, 1)); // out of words: {-3, -1, 5, 9} mod 2 = 1
        CHECK(store.dom(x).in_words());
        CHECK_FALSE(store.dom(y).in_words());
        check_word_bounds(store, x);
        check_word_bounds(store, y);
        const Domain x_middle = store.dom(x), y_middle = store.dom(y);
        store.push_level();
        Word lo = 0, hi = 0;
        REQUIRE(store.word_bounds(x, lo, hi));
        REQUIRE(store.remove(x, kWordMax - 2));
        REQUIRE(store.set_min_word(x, lo + 1)); // {kWordMax}
        CHECK(store.fixed(x));
        REQUIRE(store.set_max(y, 6)); // {-3, -1, 5}
        REQUIRE(store.remove(y, -1)); // {-3, 5}, still under the congruence
        store.pop_level();
        CHECK(store.dom(x) == x_middle);
        CHECK(store.dom(y) == y_middle);
        CHECK(store.dom(x).in_words());
        check_word_bounds(store, x);
        check_word_bounds(store, y);
        store.pop_level();
        CHECK(store.dom(x) == x_start);
        CHECK(store.dom(y) == y_start);
        CHECK_FALSE(store.dom(x).in_words());
        CHECK(store.dom(y).in_words());
        check_word_bounds(store, x);
        check_word_bounds(store, y);
    }
}
