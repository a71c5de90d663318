// NVRTC: the fused kernels compiled at run time for their traits and the GPU's architecture, the
// compiler's register report kept for the tiling model, the result cached on disk.
#include "cuda/fused/fused_compiler.hpp"
#include "flashrnn/core/error.hpp"

#include "cuda/fused/fnv1a.hpp"
#include "flashrnn/core/stream.hpp"

#include <nvrtc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <regex>
#include <stdexcept>

#ifndef FLASHRNN_NVRTC_INCLUDE_DIRS
#define FLASHRNN_NVRTC_INCLUDE_DIRS ""
#endif

namespace flashrnn {
namespace {

void check(nvrtcResult result, const char* what) {
    if (result != NVRTC_SUCCESS)
        throw DeviceError(std::string("flashrnn: ") + what + ": " + nvrtcGetErrorString(result));
}

struct ProgramDeleter {
    void operator()(nvrtcProgram* program) const {
        nvrtcDestroyProgram(program);
        delete program;
    }
};
using Program = std::unique_ptr<nvrtcProgram, ProgramDeleter>;

// The '|'- or ':'-separated folders of `joined`, in order, empty entries skipped.
std::vector<std::string> split_dirs(std::string_view joined, char separator) {
    std::vector<std::string> dirs;
    std::size_t start = 0;
    while (start <= joined.size()) {
        const std::size_t end = std::min(joined.find(separator, start), joined.size());
        if (end > start) dirs.emplace_back(joined.substr(start, end - start));
        start = end + 1;
    }
    return dirs;
}

std::vector<std::string> nvrtc_options(std::string_view architecture, const CompileOptions& options) {
    std::vector<std::string> list{"--gpu-architecture=" + std::string(architecture), "-std=c++17",
                                  "--ptxas-options=-v"};
    for (const std::string& dir : nvrtc_include_dirs())
        list.push_back("-I" + dir);
    for (const std::string& dir : options.include_dirs)
        list.push_back("-I" + dir);
    for (const std::string& option : options.extra_options)
        list.push_back(option);
    return list;
}

std::string program_log(nvrtcProgram program) {
    std::size_t size = 0;
    check(nvrtcGetProgramLogSize(program, &size), "nvrtcGetProgramLogSize");
    std::string log(size, '\0');
    check(nvrtcGetProgramLog(program, log.data()), "nvrtcGetProgramLog");
    while (!log.empty() && log.back() == '\0')
        log.pop_back();
    return log;
}

std::string hex(std::uint64_t value) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
    return text;
}

} // namespace

std::vector<std::string> nvrtc_include_dirs() {
    std::vector<std::string> candidates;
    if (const char* dirs = std::getenv("FLASHRNN_CUDA_INCLUDE_DIRS")) candidates = split_dirs(dirs, ':');
    for (const char* root : {"CUDA_HOME", "CUDA_PATH"})
        if (const char* dir = std::getenv(root); dir && *dir)
            candidates.push_back(std::string(dir) + "/include");
    for (std::string& dir : split_dirs(FLASHRNN_NVRTC_INCLUDE_DIRS, '|'))
        candidates.push_back(std::move(dir));
    candidates.emplace_back("/usr/local/cuda/include");
    std::vector<std::string> dirs;
    for (std::string& dir : candidates) {
        std::error_code ignored;
        if (std::filesystem::is_directory(dir, ignored) &&
            std::find(dirs.begin(), dirs.end(), dir) == dirs.end())
            dirs.push_back(std::move(dir));
    }
    return dirs;
}

std::string nvrtc_version() {
    int major = 0, minor = 0;
    check(nvrtcVersion(&major, &minor), "nvrtcVersion");
    return std::to_string(major) + "." + std::to_string(minor);
}

std::string architecture_of(int compute_capability) {
    return "sm_" + std::to_string(compute_capability);
}

// The multicast bulk copy (FusedKernelTraits::multicast_gather) is an sm_90a instruction: such a kernel
// is compiled for sm_90a where sm_90 is asked for (the H100 and H200 run either).
std::string kernel_architecture(std::string_view architecture, const FusedKernelTraits& traits) {
    std::string target(architecture);
    if (traits.multicast_gather && target == "sm_90") target += "a";
    return target;
}

CompiledKernel compile_fused_kernel(const KernelSource& source, const FusedKernelTraits& traits,
                                    std::string_view requested_architecture, const CompileOptions& options) {
    const std::string architecture = kernel_architecture(requested_architecture, traits);
    static const std::regex valid_architecture(R"(sm_[0-9]{2,3}a?)");
    if (!std::regex_match(std::string(architecture), valid_architecture))
        throw ShapeError("flashrnn: architecture '" + std::string(architecture) +
                         "' is not of the form sm_90 or sm_90a");
    if (source.entry.empty())
        throw ShapeError("flashrnn: kernel source '" + source.name + "' names no entry function");

    // The traits first, then the kernel, whose lines keep their own numbers in messages.
    const std::string text = traits.to_source() + "#line 1 \"" + source.name + "\"\n" + source.text;
    const std::vector<std::string> option_list = nvrtc_options(architecture, options);
    std::string key = "nvrtc " + nvrtc_version() + "|" + std::string(architecture) + "|entry " +
                      source.entry + "|source " + hex(fused::fnv1a(text)) + "." +
                      std::to_string(text.size()) + "|headers";
    for (const auto& [include_name, contents] : source.headers)
        key += " " + include_name + ":" + hex(fused::fnv1a(contents)) + "." + std::to_string(contents.size());
    key += "|options";
    for (const std::string& option : option_list)
        key += " " + option;
    key += "|traits " + traits.key();

    const KernelCache cache(options.cache_dir.value_or(default_kernel_cache_dir()));
    if (options.use_cache) {
        if (auto cached = cache.load(key)) return *std::move(cached);
    }

    Program program(new nvrtcProgram{});
    std::vector<const char*> header_texts, header_names;
    for (const auto& [include_name, contents] : source.headers) {
        header_names.push_back(include_name.c_str());
        header_texts.push_back(contents.c_str());
    }
    check(nvrtcCreateProgram(program.get(), text.c_str(), source.name.c_str(),
                             static_cast<int>(header_texts.size()), header_texts.data(), header_names.data()),
          "nvrtcCreateProgram");
    check(nvrtcAddNameExpression(*program, source.entry.c_str()), "nvrtcAddNameExpression");
    std::vector<const char*> raw_options;
    for (const std::string& option : option_list)
        raw_options.push_back(option.c_str());
    const nvrtcResult compiled =
        nvrtcCompileProgram(*program, static_cast<int>(raw_options.size()), raw_options.data());
    CompiledKernel kernel;
    kernel.log = program_log(*program);
    if (compiled != NVRTC_SUCCESS) {
        std::string why = "flashrnn: NVRTC could not compile " + source.name + " for " +
                          std::string(architecture) + " (" + traits.key() +
                          "): " + nvrtcGetErrorString(compiled) + "\n" + kernel.log;
        if (kernel.log.find("cannot open source file") != std::string::npos) {
            why += "\nthe CUDA headers were looked for in:";
            for (const std::string& dir : nvrtc_include_dirs())
                why += " " + dir;
            why += " (set FLASHRNN_CUDA_INCLUDE_DIRS or CUDA_HOME to the toolkit's include folder)";
        }
        throw DeviceError(why);
    }
    const char* lowered = nullptr;
    check(nvrtcGetLoweredName(*program, source.entry.c_str(), &lowered), "nvrtcGetLoweredName");
    kernel.lowered_name = lowered;
    std::size_t cubin_size = 0;
    check(nvrtcGetCUBINSize(*program, &cubin_size), "nvrtcGetCUBINSize");
    kernel.cubin.resize(cubin_size);
    check(nvrtcGetCUBIN(*program, kernel.cubin.data()), "nvrtcGetCUBIN");
    kernel.architecture = std::string(architecture);
    if (auto report = parse_ptxas_report(kernel.log, kernel.lowered_name)) {
        kernel.registers = *report;
    } else {
        // No ptxas run (the driver's compute cache had the cubin): ask the driver, when the cubin
        // can be loaded here.
        kernel.registers.source = RegisterSource::none;
        if (cuda_device_available()) {
            try {
                kernel.registers = registers_from_cubin(kernel);
            } catch (const Error&) {
                // Another architecture than the GPU's: no report.
            }
        }
    }
    kernel.cache_key = key;
    if (options.use_cache) {
        try {
            cache.store(key, kernel);
        } catch (const Error& e) {
            // A read-only or full cache folder costs a recompilation next time, not this kernel.
            kernel.log += std::string("\nflashrnn: not cached: ") + e.what();
        }
    }
    return kernel;
}

KernelFeedback register_feedback(const FusedKernelTraits& traits, const CompiledKernel& kernel) {
    const RegisterReport& r = kernel.registers;
    return {traits, r.registers_per_thread,
            r.source == RegisterSource::cubin_attributes ? r.stack_frame_bytes : r.spill_store_bytes};
}

} // namespace flashrnn
