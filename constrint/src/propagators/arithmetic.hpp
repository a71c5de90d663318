// Propagators that define a term's auxiliary variable from its operands, in both directions.
#pragma once

#include "engine/store.hpp"

#include <cstdint>

namespace constrint::engine {

// sum = a + b. Domain-consistent when an operand or the sum is fixed (the other domain is shifted),
// bounds-consistent otherwise; congruences carry through (sum of residues).
// Subtraction z = x - y is posted as x = z + y, negation z = -x as 0 = z + x.
class Plus final : public Propagator {
  public:
    Plus(VarId sum, VarId a, VarId b) : sum_(sum), a_(a), b_(b) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override;
    const char* name() const override { return "plus"; }

  private:
    VarId sum_, a_, b_;
};

// product = a * b. Exact scaling when a factor is fixed; interval products and quotients otherwise,
// to their fixpoint in one run; a fixed non-zero product restricts both factors to its divisors; with
// a <= b known to the store (Store::known_order), integer square roots of the product's bounds.
class Times final : public Propagator {
  public:
    Times(VarId product, VarId a, VarId b) : product_(product), a_(a), b_(b) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override;
    // Each run ends at its own fixpoint (or reschedules itself); with aliased variables a change
    // of one role is a change of another, which a second run must see.
    bool idempotent() const override { return product_ != a_ && product_ != b_ && a_ != b_; }
    const char* name() const override { return "times"; }

  private:
    bool factor(Store& s, VarId x, VarId other);
    bool ordered_roots(Store& s, VarId low, VarId high);
    VarId product_, a_, b_;
};

// result = base ^ exponent (exponent >= 2), with exact integer roots in the backward direction.
// Also the square x * x of a product whose factors are one variable (Times).
PropStatus propagate_power(Store& s, VarId result, VarId base, unsigned exponent);

class Power final : public Propagator {
  public:
    Power(VarId result, VarId base, unsigned exponent) : result_(result), base_(base), exponent_(exponent) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override;
    bool idempotent() const override { return result_ != base_; } // propagate_power runs to its fixpoint
    const char* name() const override { return "power"; }

  private:
    VarId result_, base_;
    unsigned exponent_;
};

// result = base ^ exponent with a variable exponent (FlatZinc's int_pow when the exponent is not a
// constant; a constant one uses Power). The exponent is kept >= 0; the result is computed once base
// and exponent are fixed.
class PowerVariable final : public Propagator {
  public:
    PowerVariable(VarId result, VarId base, VarId exponent)
        : result_(result), base_(base), exponent_(exponent) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override {
        return {{result_, Event::Fixed}, {base_, Event::Fixed}, {exponent_, Event::Fixed}};
    }
    const char* name() const override { return "power_variable"; }

  private:
    VarId result_, base_, exponent_;
};

// The remainder of floor division: divisor != 0, |remainder| < |divisor|, and the remainder has
// the sign of the divisor (or is 0). Together with Times and Plus it defines x / y and x mod y:
// x = y * q + r.
class Remainder final : public Propagator {
  public:
    Remainder(VarId remainder, VarId divisor) : remainder_(remainder), divisor_(divisor) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override;
    const char* name() const override { return "remainder"; }

  private:
    VarId remainder_, divisor_;
};

// The remainder of truncated division (MiniZinc's div and mod round towards zero): divisor != 0,
// |remainder| < |divisor|, and the remainder is 0 or has the sign of the dividend.
class TruncatedRemainder final : public Propagator {
  public:
    TruncatedRemainder(VarId remainder, VarId dividend, VarId divisor)
        : remainder_(remainder), dividend_(dividend), divisor_(divisor) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override;
    const char* name() const override { return "truncated_remainder"; }

  private:
    VarId remainder_, dividend_, divisor_;
};

enum class Rounding : std::uint8_t {
    Floor,    // the remainder has the sign of the divisor (ConstrINT's / and %)
    Truncate, // the remainder has the sign of the dividend (MiniZinc's div and mod)
};

// x = y * quotient + remainder: an auxiliary product over the hull of y * quotient, with Times,
// Plus and the remainder's rule (Remainder or TruncatedRemainder). The caller creates quotient
// and remainder with their bounds.
void post_division(Store& s, VarId x, VarId y, VarId quotient, VarId remainder, Rounding rounding);

// result = |x|.
class Absolute final : public Propagator {
  public:
    Absolute(VarId result, VarId x) : result_(result), x_(x) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override;
    const char* name() const override { return "abs"; }

  private:
    VarId result_, x_;
};

// result = min(a, b), or max(a, b) when is_max.
class MinMax final : public Propagator {
  public:
    MinMax(VarId result, VarId a, VarId b, bool is_max) : result_(result), a_(a), b_(b), is_max_(is_max) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override;
    const char* name() const override { return is_max_ ? "max" : "min"; }

  private:
    VarId result_, a_, b_;
    bool is_max_;
};

} // namespace constrint::engine
