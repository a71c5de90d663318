#include "propagators/arithmetic.hpp"

namespace constrint::engine {

namespace {

// The congruence every value of d satisfies, reduced to a gcd-compatible form for sums.
Integer common_modulus(const Domain& x, const Domain& y) {
    return gcd(x.modulus(), y.modulus());
}

} // namespace

PropStatus Plus::propagate(Store& s) {
    if (s.fixed(a_) && s.fixed(b_))
        return s.assign(sum_, s.value(a_) + s.value(b_)) ? PropStatus::Subsumed : PropStatus::Fail;
    // One side fixed: the other two domains are shifts of each other.
    if (s.fixed(a_) || s.fixed(b_)) {
        const VarId free = s.fixed(a_) ? b_ : a_;
        const Integer offset = s.value(s.fixed(a_) ? a_ : b_);
        if (!s.intersect(sum_, s.dom(free).shifted(offset))) return PropStatus::Fail;
        if (!s.intersect(free, s.dom(sum_).shifted(-offset))) return PropStatus::Fail;
        return settle(entailment(s)); // free may be the sum itself (x - x)
    }
    if (s.fixed(sum_)) { // a = sum - b
        const Integer& total = s.value(sum_);
        if (!s.intersect(a_, s.dom(b_).negated().shifted(total))) return PropStatus::Fail;
        if (!s.intersect(b_, s.dom(a_).negated().shifted(total))) return PropStatus::Fail;
        return PropStatus::Ok;
    }
    // Bounds, to the local fixpoint (each pass narrows or stops).
    for (int pass = 0; pass < 8; ++pass) {
        const Integer lo = s.min(a_) + s.min(b_), hi = s.max(a_) + s.max(b_);
        if (!s.set_bounds(sum_, lo, hi)) return PropStatus::Fail;
        const Integer a_lo = s.min(sum_) - s.max(b_), a_hi = s.max(sum_) - s.min(b_);
        const bool a_changes = a_lo > s.min(a_) || a_hi < s.max(a_);
        if (!s.set_bounds(a_, a_lo, a_hi)) return PropStatus::Fail;
        const Integer b_lo = s.min(sum_) - s.max(a_), b_hi = s.max(sum_) - s.min(a_);
        const bool b_changes = b_lo > s.min(b_) || b_hi < s.max(b_);
        if (!s.set_bounds(b_, b_lo, b_hi)) return PropStatus::Fail;
        if (!a_changes && !b_changes) break;
    }
    // Congruences: sum = a + b modulo the common modulus of each pair.
    const Domain &da = s.dom(a_), &db = s.dom(b_), &ds = s.dom(sum_);
    if (da.modulus() != 1 && db.modulus() != 1) {
        const Integer m = common_modulus(da, db);
        if (m != 1 && !s.restrict_congruence(sum_, m, da.residue() + db.residue())) return PropStatus::Fail;
    }
    if (ds.modulus() != 1 && s.dom(b_).modulus() != 1 && !s.fixed(a_)) {
        const Integer m = common_modulus(s.dom(sum_), s.dom(b_));
        if (m != 1 && !s.restrict_congruence(a_, m, s.dom(sum_).residue() - s.dom(b_).residue()))
            return PropStatus::Fail;
    }
    if (s.dom(sum_).modulus() != 1 && s.dom(a_).modulus() != 1 && !s.fixed(b_)) {
        const Integer m = common_modulus(s.dom(sum_), s.dom(a_));
        if (m != 1 && !s.restrict_congruence(b_, m, s.dom(sum_).residue() - s.dom(a_).residue()))
            return PropStatus::Fail;
    }
    return PropStatus::Ok;
}

Entailment Plus::entailment(const Store& s) const {
    if (!s.fixed(sum_) || !s.fixed(a_) || !s.fixed(b_)) return Entailment::Unknown;
    return s.value(sum_) == s.value(a_) + s.value(b_) ? Entailment::True : Entailment::False;
}

std::vector<Subscription> Plus::subscriptions() const {
    return {{sum_, Event::Domain}, {a_, Event::Domain}, {b_, Event::Domain}};
}

} // namespace constrint::engine
