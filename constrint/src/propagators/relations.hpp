// Propagators of the relations between two terms' variables, divisibility and membership.
#pragma once

#include "engine/store.hpp"

namespace constrint::engine {

// x == y: both domains become their intersection (domain-consistent, idempotent).
class Equal final : public Propagator {
  public:
    Equal(VarId x, VarId y) : x_(x), y_(y) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override { return {{x_, Event::Domain}, {y_, Event::Domain}}; }
    bool idempotent() const override { return true; }
    const char* name() const override { return "equal"; }

  private:
    VarId x_, y_;
};

// x != y: once one side is fixed its value leaves the other.
class NotEqual final : public Propagator {
  public:
    NotEqual(VarId x, VarId y) : x_(x), y_(y) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override { return {{x_, Event::Fixed}, {y_, Event::Fixed}}; }
    bool idempotent() const override { return true; }
    const char* name() const override { return "not_equal"; }

  private:
    VarId x_, y_;
};

// x + offset <= y (x < y is offset 1), bounds-consistent.
class LessEqual final : public Propagator {
  public:
    LessEqual(VarId x, VarId y, Integer offset) : x_(x), y_(y), offset_(std::move(offset)) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override { return {{x_, Event::Bounds}, {y_, Event::Bounds}}; }
    bool idempotent() const override { return true; }
    const char* name() const override { return "less_equal"; }

  private:
    VarId x_, y_;
    Integer offset_;
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

}  // namespace constrint::engine
