// result = base ^ exponent with a variable exponent (FlatZinc's int_pow when the exponent is not a
// constant; a constant one uses Power). The exponent is kept >= 0; the result is computed once base
// and exponent are fixed,.
#pragma once

#include "engine/store.hpp"

namespace constrint::engine {

class PowerVariable final : public Propagator {
  public:
    PowerVariable(VarId result, VarId base, VarId exponent) : result_(result), base_(base), exponent_(exponent) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override {
        return {{result_, Event::Fixed}, {base_, Event::Fixed}, {exponent_, Event::Fixed}};
    }
    const char* name() const override { return "power_variable"; }

  private:
    VarId result_, base_, exponent_;
};

}  // namespace constrint::engine
