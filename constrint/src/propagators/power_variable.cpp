#include "propagators/arithmetic.hpp"

namespace constrint::engine {

namespace {
// Exponents above this are refused rather than computed (the result would have millions of digits).
constexpr unsigned kMaxExponent = 1 << 16;
} // namespace

PropStatus PowerVariable::propagate(Store& s) {
    if (!s.set_bounds(exponent_, 0, kMaxExponent)) return PropStatus::Fail;
    if (!s.fixed(base_) || !s.fixed(exponent_)) return PropStatus::Ok;
    const Integer value = power(s.value(base_), static_cast<unsigned>(s.value(exponent_)));
    return s.assign(result_, value) ? PropStatus::Subsumed : PropStatus::Fail;
}

Entailment PowerVariable::entailment(const Store& s) const {
    if (!s.fixed(result_) || !s.fixed(base_) || !s.fixed(exponent_)) return Entailment::Unknown;
    const Integer& k = s.value(exponent_);
    if (k < 0 || k > kMaxExponent) return Entailment::False;
    return power(s.value(base_), static_cast<unsigned>(k)) == s.value(result_) ? Entailment::True
                                                                               : Entailment::False;
}

} // namespace constrint::engine
