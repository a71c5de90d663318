#include "propagators/relations.hpp"

namespace constrint::engine {

PropStatus Divides::propagate(Store& s) {
    if (!s.remove(divisor_, 0)) return PropStatus::Fail;
    if (s.fixed(divisor_)) {
        const Integer& d = s.value(divisor_);
        return s.restrict_congruence(dividend_, d < 0 ? Integer(-d) : d, 0) ? PropStatus::Ok
                                                                            : PropStatus::Fail;
    }
    // Every divisor left is a multiple of gcd(modulus, residue) of its domain, so the dividend is
    // too: a chain a % b == 0, b % c == 0, c % 7 == 0 makes a a multiple of 7 without search.
    if (const Domain& d = s.dom(divisor_); d.modulus() > 1) {
        const Integer common = gcd(d.modulus(), d.residue());
        if (common > 1 && !s.restrict_congruence(dividend_, common, 0)) return PropStatus::Fail;
    }
    if (s.fixed(dividend_)) {
        const Integer& n = s.value(dividend_);
        if (n == 0) return PropStatus::Subsumed; // every non-zero number divides 0
        if (const Domain* divisors = s.divisors(n)) {
            return s.intersect(divisor_, *divisors) ? PropStatus::Ok : PropStatus::Fail;
        }
    }
    // |divisor| <= |dividend| unless the dividend may be 0.
    if (s.min(dividend_) > 0 || s.max(dividend_) < 0) {
        const Integer bound = std::max(Integer(-s.min(dividend_)), s.max(dividend_));
        if (!s.set_bounds(divisor_, -bound, bound)) return PropStatus::Fail;
    }
    return PropStatus::Ok;
}

Entailment Divides::entailment(const Store& s) const {
    if (s.fixed(divisor_)) {
        const Integer& d = s.value(divisor_);
        if (d == 0) return Entailment::False;
        const Domain& n = s.dom(dividend_);
        if (n.fixed()) return n.value() % d == 0 ? Entailment::True : Entailment::False;
        if (n.modulus() % d == 0 && n.residue() % d == 0) return Entailment::True;
        Domain multiples = n;
        multiples.restrict_congruence(d < 0 ? Integer(-d) : d, 0);
        return multiples.empty() ? Entailment::False : Entailment::Unknown;
    }
    if (s.fixed(dividend_) && s.value(dividend_) == 0 && !s.dom(divisor_).contains(0))
        return Entailment::True;
    return Entailment::Unknown;
}

} // namespace constrint::engine
