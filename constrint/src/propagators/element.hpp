// Element: result = array[index] (FlatZinc's array_*_element, 1-based there: `first` is the index
// of the array's first entry).
#pragma once

#include "engine/store.hpp"

namespace constrint::engine {

// An array of constants: domain-consistent on index and result.
class ElementConstant final : public Propagator {
  public:
    ElementConstant(VarId index, std::vector<Integer> values, VarId result, Integer first)
        : index_(index), values_(std::move(values)), result_(result), first_(std::move(first)) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override {
        return {{index_, Event::Domain}, {result_, Event::Domain}};
    }
    bool idempotent() const override { return true; }
    const char* name() const override { return "element"; }

  private:
    VarId index_;
    std::vector<Integer> values_;
    VarId result_;
    Integer first_;
};

// An array of variables: an index stays while its entry's bounds meet the result's; the result
// lies within the hull of the entries left; a fixed index makes result and entry equal.
class ElementVariable final : public Propagator {
  public:
    ElementVariable(VarId index, std::vector<VarId> vars, VarId result, Integer first)
        : index_(index), vars_(std::move(vars)), result_(result), first_(std::move(first)) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override;
    const char* name() const override { return "element"; }

  private:
    VarId index_;
    std::vector<VarId> vars_;
    VarId result_;
    Integer first_;
};

} // namespace constrint::engine
