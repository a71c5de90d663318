#include "propagators/arithmetic.hpp"

#include <algorithm>
#include <array>

namespace constrint::engine {

namespace {

bool contains_zero(const Store& s, VarId x) {
    return s.min(x) <= 0 && s.max(x) >= 0;
}

// Every value of d is a multiple of this (the gcd of the congruence's modulus and residue).
Integer common_factor(const Domain& d) {
    if (d.fixed()) return d.value() < 0 ? Integer(-d.value()) : d.value();
    return d.modulus() == 1 ? Integer(1) : gcd(d.modulus(), d.residue());
}

// The hull of {p / q : p in [p_lo, p_hi], q in [q_lo, q_hi]} for q of constant sign, rounded inwards
// to integers: quotients are monotone in each argument there, so the corners bound them.
void quotient_hull(const Integer& p_lo, const Integer& p_hi, const Integer& q_lo, const Integer& q_hi,
                   Integer& lo, Integer& hi, bool& any) {
    const std::array<Integer, 4> floors{floor_div(p_lo, q_lo), floor_div(p_lo, q_hi), floor_div(p_hi, q_lo),
                                        floor_div(p_hi, q_hi)};
    const std::array<Integer, 4> ceils{ceil_div(p_lo, q_lo), ceil_div(p_lo, q_hi), ceil_div(p_hi, q_lo),
                                       ceil_div(p_hi, q_hi)};
    const Integer c = *std::min_element(ceils.begin(), ceils.end());
    const Integer f = *std::max_element(floors.begin(), floors.end());
    if (!any || c < lo) lo = c;
    if (!any || f > hi) hi = f;
    any = true;
}

} // namespace

// Narrows factor x of product = x * other.
bool Times::factor(Store& s, VarId x, VarId other) {
    if (s.fixed(other)) {
        const Integer& c = s.value(other);
        if (c == 0) return s.assign(product_, 0);
        return s.intersect(x, s.dom(product_).divided_exactly(c));
    }
    if (!contains_zero(s, product_)) {
        if (!s.remove(other, 0) || !s.remove(x, 0)) return false;
        // A fixed non-zero product: x is one of its divisors.
        if (s.fixed(product_) && !s.fixed(x)) {
            if (const Domain* divisors = s.divisors(s.value(product_))) {
                if (!s.intersect(x, *divisors)) return false;
            }
        }
    }
    // x in product / other, over the parts of other that have one sign.
    const Integer &p_lo = s.min(product_), &p_hi = s.max(product_);
    Integer lo, hi;
    bool any = false;
    if (s.max(other) < 0 || s.min(other) > 0) {
        quotient_hull(p_lo, p_hi, s.min(other), s.max(other), lo, hi, any);
    } else if (!contains_zero(s, product_)) { // other != 0 here: split at zero
        if (s.min(other) < 0) quotient_hull(p_lo, p_hi, s.min(other), Integer(-1), lo, hi, any);
        if (s.max(other) > 0) quotient_hull(p_lo, p_hi, Integer(1), s.max(other), lo, hi, any);
    } else {
        return true; // 0 = x * 0 allows any x
    }
    return !any || s.set_bounds(x, lo, hi);
}

// With a <= b known, a * b lies between a^2 and b^2: the smaller factor is at most the square root of
// the product and the larger at least its ceiling (for negative factors the roles swap). This is where
// x * y == N jumps to x <= isqrt(N) in one step; quotients of the bounds alone leave x up to N.
bool Times::ordered_roots(Store& s, VarId low, VarId high) {
    if (s.min(low) > 0) { // 0 < low <= high: low^2 <= product <= high^2
        return s.set_max(low, floor_root(s.max(product_), 2)) &&
               s.set_min(high, ceil_root(s.min(product_), 2));
    }
    if (s.max(high) < 0) { // low <= high < 0: high^2 <= product <= low^2
        return s.set_min(high, -floor_root(s.max(product_), 2)) &&
               s.set_max(low, -ceil_root(s.min(product_), 2));
    }
    return true;
}

// Quotients of the bounds of a fixed product move a bound by about one value per round near the
// square root (the bounds-consistent factor is the next divisor, which is factoring): a run stops
// after kRoundsPerRun rounds and is scheduled again, after a limit check.

PropStatus Times::propagate(Store& s) {
    // x * x (FlatZinc's int_times(x, x, p)) is a square: integer roots narrow it at once, where
    // quotients of the bounds creep one value per round (issue 24).
    if (a_ == b_) return propagate_power(s, product_, a_, 2);
    const auto width = [&] {
        return s.max(product_) - s.min(product_) + s.max(a_) - s.min(a_) + s.max(b_) - s.min(b_);
    };
    // Each round narrows from the bounds the last one left: the loop ends at the propagator's own
    // fixpoint, so the store need not run it again for its own changes (idempotent()).
    for (int round = 0; round < kRoundsPerRun; ++round) {
        const Integer before = width();
        if (s.fixed(a_) && s.fixed(b_)) {
            return s.assign(product_, s.value(a_) * s.value(b_)) ? PropStatus::Subsumed : PropStatus::Fail;
        }
        if (s.fixed(a_) || s.fixed(b_)) {
            const VarId fixed = s.fixed(a_) ? a_ : b_, free = fixed == a_ ? b_ : a_;
            const Integer c = s.value(fixed);
            if (!s.intersect(product_, s.dom(free).scaled(c))) return PropStatus::Fail;
            if (c == 0) return PropStatus::Subsumed;
            if (!s.intersect(free, s.dom(product_).divided_exactly(c))) return PropStatus::Fail;
            return settle(entailment(s)); // free may be the product itself (not idempotent then)
        }
        // product in the hull of the corner products.
        const std::array<Integer, 4> corners{s.min(a_) * s.min(b_), s.min(a_) * s.max(b_),
                                             s.max(a_) * s.min(b_), s.max(a_) * s.max(b_)};
        if (!s.set_bounds(product_, *std::min_element(corners.begin(), corners.end()),
                          *std::max_element(corners.begin(), corners.end()))) {
            return PropStatus::Fail;
        }
        const Integer multiple = common_factor(s.dom(a_)) * common_factor(s.dom(b_));
        if (multiple > 1 && !s.restrict_congruence(product_, multiple, 0)) return PropStatus::Fail;
        if (s.fixed(product_) && s.value(product_) == 0) { // one factor is 0
            if (!contains_zero(s, a_) && !s.assign(b_, 0)) return PropStatus::Fail;
            if (!contains_zero(s, b_) && !s.assign(a_, 0)) return PropStatus::Fail;
        }
        if (!factor(s, a_, b_) || !factor(s, b_, a_)) return PropStatus::Fail;
        if (s.known_order(a_, b_) && !ordered_roots(s, a_, b_)) return PropStatus::Fail;
        if (s.known_order(b_, a_) && !ordered_roots(s, b_, a_)) return PropStatus::Fail;
        if (width() == before) return PropStatus::Ok;
    }
    s.reschedule_running(); // creeping: continue in a later run
    return PropStatus::Ok;
}

Entailment Times::entailment(const Store& s) const {
    if (!s.fixed(product_) || !s.fixed(a_) || !s.fixed(b_)) return Entailment::Unknown;
    return s.value(product_) == s.value(a_) * s.value(b_) ? Entailment::True : Entailment::False;
}

std::vector<Subscription> Times::subscriptions() const {
    return {{product_, Event::Domain}, {a_, Event::Domain}, {b_, Event::Domain}};
}

} // namespace constrint::engine
