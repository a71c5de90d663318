#include "tiling/solve_or_explain.hpp"

namespace flashrnn::tiling {

std::string explanation_of(const constrint::Model& model, const constrint::Result& result,
                           std::string no_configuration, const constrint::SolveOptions& explain_options) {
    std::string why = std::move(no_configuration);
    if (result.status == constrint::Status::Unknown)
        return why + ": the solver stopped before an answer (" + result.stop_reason + ")";
    if (auto conflict = constrint::explain_conflict(model, explain_options)) {
        why += "; these limits cannot hold together:";
        for (std::size_t i : conflict->constraints)
            why += "\n  - " + model.constraints()[i].origin.text;
    }
    return why;
}

} // namespace flashrnn::tiling
