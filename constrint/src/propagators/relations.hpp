// Propagators of the relations between two terms' variables, divisibility and membership.
#pragma once

#include "engine/store.hpp"
#include "engine/view.hpp"

namespace constrint::engine {

// The subscriptions of the views that are variables.
inline std::vector<Subscription> subscribe(std::initializer_list<const View*> views, Event event) {
    std::vector<Subscription> subs;
    for (const View* v : views) {
        if (!v->constant()) subs.push_back({v->var, event});
    }
    return subs;
}

// x == y: both domains become their intersection (domain-consistent, idempotent).
class Equal final : public Propagator {
  public:
    Equal(View x, View y)
        : x_(std::move(x)), y_(std::move(y)),
          variable_is_constant_((x_.identity() && y_.constant()) || (y_.identity() && x_.constant())) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override { return subscribe({&x_, &y_}, Event::Domain); }
    bool idempotent() const override { return x_.var != y_.var; }
    const char* name() const override { return "equal"; }

  private:
    View x_, y_;
    // x == c for a plain variable x (FlatZinc's int_eq_reif with a constant, woken on every change of
    // x): entailment is one membership test, no view value copied.
    bool variable_is_constant_;
    // The values each side must lose (offset views in words), kept to reuse their storage.
    std::vector<std::pair<Word, Word>> x_gaps_, y_gaps_;
};

// x != y: once one side is fixed its value leaves the other.
class NotEqual final : public Propagator {
  public:
    NotEqual(View x, View y) : x_(std::move(x)), y_(std::move(y)) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override { return subscribe({&x_, &y_}, Event::Fixed); }
    bool idempotent() const override { return true; }
    const char* name() const override { return "not_equal"; }

  private:
    View x_, y_;
};

// x + offset <= y (x < y is offset 1), bounds-consistent.
class LessEqual final : public Propagator {
  public:
    LessEqual(View x, View y, Integer offset);
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override { return subscribe({&x_, &y_}, Event::Bounds); }
    // x's new maximum comes from y's maximum and y's new minimum from x's minimum, so neither
    // narrowing feeds the other (rounding on scaled views included): one run is a fixpoint, unless
    // both sides view the same variable.
    bool idempotent() const override { return x_.constant() || y_.constant() || x_.var != y_.var; }
    const char* name() const override { return "less_equal"; }

  private:
    // The same reasoning in machine words; nothing when a bound or a step does not fit 64 bits.
    std::optional<PropStatus> propagate_words(Store& s);
    View x_, y_;
    Integer offset_;
    // x, y and the offset as machine words, when all three fit (decided once, at post time).
    struct Words {
        WordView x, y;
        Word offset;
    };
    std::optional<Words> words_;
};

// divisor divides dividend, divisor != 0. A fixed divisor becomes a congruence of the dividend
// (exact on any range); a fixed dividend restricts the divisor to its divisors.
class Divides final : public Propagator {
  public:
    Divides(VarId divisor, VarId dividend) : divisor_(divisor), dividend_(dividend) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override {
        return {{divisor_, Event::Domain}, {dividend_, Event::Domain}};
    }
    const char* name() const override { return "divides"; }

  private:
    VarId divisor_, dividend_;
};

// x takes one of the values of a set.
class Member final : public Propagator {
  public:
    Member(VarId x, Domain set) : x_(x), set_(std::move(set)) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override { return {{x_, Event::Domain}}; }
    bool idempotent() const override { return true; }
    const char* name() const override { return "member"; }

  private:
    VarId x_;
    Domain set_;
};

} // namespace constrint::engine
