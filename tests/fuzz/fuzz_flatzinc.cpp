// libFuzzer target: the FlatZinc reader and solver under a small time limit. Any input must give a
// ParseError/ModelError or an answer: an uncaught exception, a sanitizer report or a hang is a finding.
#include <constrint/constrint.hpp>

#include <cstdint>
#include <sstream>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    constrint::FlatZincOptions options;
    options.time_limit_seconds = 0.05;
    options.solution_limit = 3;
    options.statistics = true;
    std::ostringstream out;
    try {
        constrint::solve_flatzinc(text, "fuzz.fzn", options, out);
    } catch (const constrint::Error&) {
    }
    return 0;
}
