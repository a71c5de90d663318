#include "propagators/linear.hpp"

namespace constrint::engine {

namespace {

Integer term_min(const Store& s, const LinearTerm& t) { return t.coefficient * (t.coefficient > 0 ? s.min(t.var) : s.max(t.var)); }
Integer term_max(const Store& s, const LinearTerm& t) { return t.coefficient * (t.coefficient > 0 ? s.max(t.var) : s.min(t.var)); }

Integer sum_min(const Store& s, const std::vector<LinearTerm>& terms) {
    Integer total = 0;
    for (const LinearTerm& t : terms) total += term_min(s, t);
    return total;
}

Integer sum_max(const Store& s, const std::vector<LinearTerm>& terms) {
    Integer total = 0;
    for (const LinearTerm& t : terms) total += term_max(s, t);
    return total;
}

// coefficient * x <= bound.
bool restrict_term_at_most(Store& s, const LinearTerm& t, const Integer& bound) {
    return t.coefficient > 0 ? s.set_max(t.var, floor_div(bound, t.coefficient))
                             : s.set_min(t.var, ceil_div(bound, t.coefficient));
}

// coefficient * x >= bound.
bool restrict_term_at_least(Store& s, const LinearTerm& t, const Integer& bound) {
    return t.coefficient > 0 ? s.set_min(t.var, ceil_div(bound, t.coefficient))
                             : s.set_max(t.var, floor_div(bound, t.coefficient));
}

}  // namespace

// sum <= constant: each term is at most constant minus the others' minimum.
PropStatus Linear::propagate_le(Store& s, bool& changed) {
    const Integer lowest = sum_min(s, terms_);
    if (lowest > constant_) return PropStatus::Fail;
    const Integer slack = constant_ - lowest;
    for (const LinearTerm& t : terms_) {
        const Integer current = term_min(s, t);
        if (term_max(s, t) - current <= slack) continue;
        if (!restrict_term_at_most(s, t, current + slack)) return PropStatus::Fail;
        changed = true;
    }
    return PropStatus::Ok;
}

// sum >= constant.
PropStatus Linear::propagate_ge(Store& s, bool& changed) {
    const Integer highest = sum_max(s, terms_);
    if (highest < constant_) return PropStatus::Fail;
    const Integer slack = highest - constant_;
    for (const LinearTerm& t : terms_) {
        const Integer current = term_max(s, t);
        if (current - term_min(s, t) <= slack) continue;
        if (!restrict_term_at_least(s, t, current - slack)) return PropStatus::Fail;
        changed = true;
    }
    return PropStatus::Ok;
}

PropStatus Linear::propagate_ne(Store& s) {
    const LinearTerm* open = nullptr;
    Integer fixed_sum = 0;
    for (const LinearTerm& t : terms_) {
        if (s.fixed(t.var)) {
            fixed_sum += t.coefficient * s.value(t.var);
        } else if (open) {
            return PropStatus::Ok;  // two unfixed variables: anything may still hold
        } else {
            open = &t;
        }
    }
    if (!open) return fixed_sum != constant_ ? PropStatus::Subsumed : PropStatus::Fail;
    const Integer rest = constant_ - fixed_sum;
    if (rest % open->coefficient != 0) return PropStatus::Subsumed;
    return s.remove(open->var, rest / open->coefficient) ? PropStatus::Subsumed : PropStatus::Fail;
}

PropStatus Linear::propagate(Store& s) {
    if (relation_ == LinearRelation::Ne) return propagate_ne(s);
    bool changed = false;
    if (propagate_le(s, changed) == PropStatus::Fail) return PropStatus::Fail;
    if (relation_ == LinearRelation::Eq) {
        // Holes and rounding can make one pass leave slack: repeat while a bound moves.
        do {
            changed = false;
            if (propagate_ge(s, changed) == PropStatus::Fail) return PropStatus::Fail;
            if (!changed) break;
            changed = false;
            if (propagate_le(s, changed) == PropStatus::Fail) return PropStatus::Fail;
        } while (changed);
    }
    return settle(entailment(s)) == PropStatus::Subsumed ? PropStatus::Subsumed : PropStatus::Ok;
}

Entailment Linear::entailment(const Store& s) const {
    const Integer lowest = sum_min(s, terms_), highest = sum_max(s, terms_);
    switch (relation_) {
    case LinearRelation::Le:
        if (highest <= constant_) return Entailment::True;
        return lowest > constant_ ? Entailment::False : Entailment::Unknown;
    case LinearRelation::Eq:
        if (lowest > constant_ || highest < constant_) return Entailment::False;
        return lowest == highest ? Entailment::True : Entailment::Unknown;
    case LinearRelation::Ne:
        if (lowest > constant_ || highest < constant_) return Entailment::True;
        return lowest == highest ? Entailment::False : Entailment::Unknown;
    }
    return Entailment::Unknown;
}

std::vector<Subscription> Linear::subscriptions() const {
    const Event event = relation_ == LinearRelation::Ne ? Event::Fixed : Event::Bounds;
    std::vector<Subscription> subs;
    subs.reserve(terms_.size());
    for (const LinearTerm& t : terms_) subs.push_back({t.var, event});
    return subs;
}

}  // namespace constrint::engine
