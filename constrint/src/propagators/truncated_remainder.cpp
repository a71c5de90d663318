#include "propagators/arithmetic.hpp"

#include <algorithm>

namespace constrint::engine {

PropStatus TruncatedRemainder::propagate(Store& s) {
    if (!s.remove(divisor_, 0)) return PropStatus::Fail;
    // |r| < max |divisor| and |r| <= |dividend|.
    const Integer bound = std::max(Integer(-s.min(divisor_)), s.max(divisor_)) - 1;
    if (!s.set_bounds(remainder_, -bound, bound)) return PropStatus::Fail;
    // The sign of the remainder follows the dividend's, and the other way round.
    if (s.min(dividend_) >= 0 && !s.set_bounds(remainder_, 0, s.max(dividend_))) return PropStatus::Fail;
    if (s.max(dividend_) <= 0 && !s.set_bounds(remainder_, s.min(dividend_), 0)) return PropStatus::Fail;
    if (s.min(remainder_) > 0 && !s.set_min(dividend_, s.min(remainder_))) return PropStatus::Fail;
    if (s.max(remainder_) < 0 && !s.set_max(dividend_, s.max(remainder_))) return PropStatus::Fail;
    return settle(entailment(s));
}

Entailment TruncatedRemainder::entailment(const Store& s) const {
    if (!s.fixed(remainder_) || !s.fixed(dividend_) || !s.fixed(divisor_)) return Entailment::Unknown;
    const Integer &r = s.value(remainder_), &x = s.value(dividend_), &y = s.value(divisor_);
    if (y == 0 || abs(r) >= abs(y)) return Entailment::False;
    return r == 0 || (r > 0) == (x > 0) ? Entailment::True : Entailment::False;
}

std::vector<Subscription> TruncatedRemainder::subscriptions() const {
    return {{remainder_, Event::Bounds}, {dividend_, Event::Bounds}, {divisor_, Event::Domain}};
}

} // namespace constrint::engine
