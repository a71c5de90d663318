#include "propagators/relations.hpp"

namespace constrint::engine {

PropStatus Equal::propagate(Store& s) {
    if (x_.fixed(s) && y_.fixed(s))
        return x_.value(s) == y_.value(s) ? PropStatus::Subsumed : PropStatus::Fail;
    if (x_.identity() && y_.identity()) {
        if (!s.intersect(x_.var, s.dom(y_.var)) || !s.intersect(y_.var, s.dom(x_.var)))
            return PropStatus::Fail;
    } else if (!x_.intersect(s, y_.domain(s)) || !y_.intersect(s, x_.domain(s))) {
        return PropStatus::Fail;
    }
    return settle(entailment(s)); // both sides may view one variable (x + 1 == x)
}

Entailment Equal::entailment(const Store& s) const {
    if (x_.fixed(s) && y_.fixed(s)) return x_.value(s) == y_.value(s) ? Entailment::True : Entailment::False;
    if (x_.max(s) < y_.min(s) || y_.max(s) < x_.min(s)) return Entailment::False;
    if (x_.fixed(s)) return y_.contains(s, x_.value(s)) ? Entailment::Unknown : Entailment::False;
    if (y_.fixed(s)) return x_.contains(s, y_.value(s)) ? Entailment::Unknown : Entailment::False;
    Domain common = x_.domain(s);
    common.intersect(y_.domain(s));
    return common.empty() ? Entailment::False : Entailment::Unknown;
}

} // namespace constrint::engine
