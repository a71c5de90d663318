#include "tiling/solve_or_explain.hpp"

#include <vector>

namespace flashrnn::tiling {

TilingError tiling_error_of(const constrint::Model& model, const constrint::Result& result,
                            std::string no_configuration, const constrint::SolveOptions& explain_options) {
    std::string why = std::move(no_configuration);
    if (result.status == constrint::Status::Unknown)
        return TilingError(why + ": the solver stopped before an answer (" + result.stop_reason + ")");
    std::vector<std::string> conflicts;
    // The time limit of `explain_options` is one deadline for the whole explanation (a refusal must
    // come quickly); its node limit bounds each check.
    constrint::SolveOptions per_check = explain_options;
    per_check.time_limit_seconds.reset();
    if (auto conflict = constrint::explain_conflict(model, per_check, explain_options.time_limit_seconds)) {
        why += "; these limits cannot hold together:";
        for (std::size_t i : conflict->constraints) {
            conflicts.push_back(model.constraints()[i].origin.text);
            why += "\n  - " + conflicts.back();
        }
    }
    return TilingError(why, std::move(conflicts));
}

} // namespace flashrnn::tiling
