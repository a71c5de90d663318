#include "propagators/count.hpp"

namespace constrint::engine {

PropStatus Count::propagate(Store& s) {
    if (!s.set_bounds(count_, 0, vars_.size())) return PropStatus::Fail;
    if (!s.fixed(value_)) {
        // Only the x_i whose bounds meet y's can equal it.
        std::size_t possible = 0;
        for (VarId x : vars_)
            possible += !(s.max(x) < s.min(value_) || s.min(x) > s.max(value_));
        return s.set_max(count_, possible) ? PropStatus::Ok : PropStatus::Fail;
    }
    const Integer v = s.value(value_);
    std::size_t equal = 0, possible = 0;
    for (VarId x : vars_) {
        if (!s.dom(x).contains(v)) continue;
        ++possible;
        equal += s.fixed(x);
    }
    if (!s.set_bounds(count_, equal, possible)) return PropStatus::Fail;
    if (equal == possible) return PropStatus::Subsumed;
    // Enough x_i equal y: the rest differ. As many as can: all of them equal y.
    const bool all_differ = s.max(count_) == equal, all_equal = s.min(count_) == possible;
    if (!all_differ && !all_equal) return PropStatus::Ok;
    for (VarId x : vars_) {
        if (s.fixed(x) || !s.dom(x).contains(v)) continue;
        if (!(all_differ ? s.remove(x, v) : s.assign(x, v))) return PropStatus::Fail;
    }
    return PropStatus::Subsumed;
}

Entailment Count::entailment(const Store& s) const {
    if (!s.fixed(value_) || !s.fixed(count_)) return Entailment::Unknown;
    const Integer& v = s.value(value_);
    std::size_t equal = 0;
    for (VarId x : vars_) {
        if (!s.fixed(x)) return Entailment::Unknown;
        equal += s.value(x) == v;
    }
    return s.value(count_) == equal ? Entailment::True : Entailment::False;
}

std::vector<Subscription> Count::subscriptions() const {
    return subscribe(vars_, Event::Domain, {{value_, Event::Fixed}, {count_, Event::Bounds}});
}

} // namespace constrint::engine
