#include "propagators/relations.hpp"

namespace constrint::engine {

PropStatus NotEqual::propagate(Store& s) {
    if (x_.fixed(s)) return y_.remove(s, x_.value(s)) ? PropStatus::Subsumed : PropStatus::Fail;
    if (y_.fixed(s)) return x_.remove(s, y_.value(s)) ? PropStatus::Subsumed : PropStatus::Fail;
    return PropStatus::Ok;
}

Entailment NotEqual::entailment(const Store& s) const {
    if (x_.fixed(s) && y_.fixed(s)) return x_.value(s) != y_.value(s) ? Entailment::True : Entailment::False;
    if (x_.max(s) < y_.min(s) || y_.max(s) < x_.min(s)) return Entailment::True;
    if (x_.fixed(s) && !y_.contains(s, x_.value(s))) return Entailment::True;
    if (y_.fixed(s) && !x_.contains(s, y_.value(s))) return Entailment::True;
    return Entailment::Unknown;
}

} // namespace constrint::engine
