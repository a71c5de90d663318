// libFuzzer target: the `flashrnn` command's argument parser, and `tune` on the presets (the tiling
// solvers with any sizes). The input is the argument list, one argument a line. The parser may only
// throw UsageError, ShapeError or UnsupportedError; `tune` may refuse with the library's errors (TilingError:
// nothing fits).
#include "cli_command.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace flashrnn::tools;
    std::vector<std::string> arguments(1);
    for (std::size_t i = 0; i < size; ++i) {
        if (data[i] == '\n')
            arguments.emplace_back();
        else
            arguments.back() += static_cast<char>(data[i]);
    }
    Command command;
    try {
        command = parse_command(arguments);
    } catch (const UsageError&) {
        return 0;
    } catch (const flashrnn::ShapeError&) {
        return 0;
    } catch (const flashrnn::UnsupportedError&) {
        return 0;
    }
    static std::FILE* const null_output = std::fopen("/dev/null", "w");
    try {
        if (const auto* tune = std::get_if<TuneCommand>(&command); tune && tune->gpu != "device")
            run_tune(*tune, null_output);
        if (const auto* scan = std::get_if<TuneScanCommand>(&command); scan && scan->gpu != "device")
            run_tune_scan(*scan, null_output);
        if (const auto* newton = std::get_if<TuneNewtonCommand>(&command); newton && newton->gpu != "device")
            run_tune_newton(*newton, null_output);
    } catch (const flashrnn::Error&) { // TilingError: no configuration fits; the library's refusals
    }
    return 0;
}
