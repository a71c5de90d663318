// The on-disk cache of compiled kernels. File layout (integers little-endian u64):
//   "FLASHRNN-KERNEL-CACHE-2\n"
//   fields, each a length and its bytes: key, architecture, lowered name, log, registers, cubin
//   FNV-1a 64 of everything before it
// Writers never touch a file in place: they write a temporary file in the same folder and rename(2)
// it over the entry, so a reader sees either the old file or the new one, whole.
#include "cuda/fused/fused_compiler.hpp"
#include "flashrnn/core/error.hpp"

#include "cuda/fused/fnv1a.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace flashrnn {
namespace {

constexpr std::string_view kMagic = "FLASHRNN-KERNEL-CACHE-2\n";

void put_u64(std::string& out, std::uint64_t value) {
    for (int i = 0; i < 8; ++i)
        out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

bool get_u64(std::string_view in, std::size_t& at, std::uint64_t& value) {
    if (in.size() - at < 8) return false;
    value = 0;
    for (int i = 0; i < 8; ++i)
        value |= std::uint64_t(static_cast<unsigned char>(in[at + i])) << (8 * i);
    at += 8;
    return true;
}

void put_field(std::string& out, std::string_view bytes) {
    put_u64(out, bytes.size());
    out.append(bytes);
}

bool get_field(std::string_view in, std::size_t& at, std::string& field) {
    std::uint64_t size = 0;
    if (!get_u64(in, at, size) || in.size() - at < size) return false;
    field.assign(in.substr(at, size));
    at += size;
    return true;
}

std::string registers_text(const RegisterReport& r) {
    return std::to_string(r.registers_per_thread) + " " + std::to_string(r.spill_store_bytes) + " " +
           std::to_string(r.spill_load_bytes) + " " + std::to_string(r.stack_frame_bytes) + " " +
           std::to_string(static_cast<int>(r.source));
}

bool parse_registers(const std::string& text, RegisterReport& r) {
    std::istringstream in(text);
    int source = -1;
    if (!(in >> r.registers_per_thread >> r.spill_store_bytes >> r.spill_load_bytes >> r.stack_frame_bytes >>
          source) ||
        source < 0 || source > static_cast<int>(RegisterSource::cubin_attributes))
        return false;
    r.source = static_cast<RegisterSource>(source);
    return true;
}

std::string serialize(const std::string& key, const CompiledKernel& kernel) {
    std::string out(kMagic);
    put_field(out, key);
    put_field(out, kernel.architecture);
    put_field(out, kernel.lowered_name);
    put_field(out, kernel.log);
    put_field(out, registers_text(kernel.registers));
    put_field(out, std::string_view(kernel.cubin.data(), kernel.cubin.size()));
    put_u64(out, fused::fnv1a(out));
    return out;
}

std::optional<CompiledKernel> deserialize(std::string_view in, const std::string& key) {
    if (in.size() < kMagic.size() + 8 || in.substr(0, kMagic.size()) != kMagic) return std::nullopt;
    std::size_t checksum_at = in.size() - 8;
    std::uint64_t checksum = 0;
    if (!get_u64(in, checksum_at, checksum) || checksum != fused::fnv1a(in.substr(0, in.size() - 8)))
        return std::nullopt;
    const std::string_view body = in.substr(0, in.size() - 8);
    std::size_t at = kMagic.size();
    std::string stored_key, registers, cubin;
    CompiledKernel kernel;
    if (!get_field(body, at, stored_key) || stored_key != key || !get_field(body, at, kernel.architecture) ||
        !get_field(body, at, kernel.lowered_name) || !get_field(body, at, kernel.log) ||
        !get_field(body, at, registers) || !parse_registers(registers, kernel.registers) ||
        !get_field(body, at, cubin) || at != body.size())
        return std::nullopt;
    kernel.cubin.assign(cubin.begin(), cubin.end());
    kernel.from_cache = true;
    kernel.cache_key = key;
    return kernel;
}

std::string hex(std::uint64_t value) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
    return text;
}

// A name no other writer (thread or process) uses at the same time.
std::string temporary_suffix() {
    static std::atomic<std::uint64_t> counter{0};
    thread_local std::mt19937_64 random{std::random_device{}()};
    return ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++) + "." + hex(random());
}

void write_all(int fd, std::string_view bytes, const std::filesystem::path& path) {
    while (!bytes.empty()) {
        const ssize_t written = ::write(fd, bytes.data(), bytes.size());
        if (written < 0) {
            if (errno == EINTR) continue;
            throw DeviceError("flashrnn kernel cache: cannot write " + path.string() + ": " +
                              std::strerror(errno));
        }
        bytes.remove_prefix(static_cast<std::size_t>(written));
    }
}

} // namespace

std::filesystem::path default_kernel_cache_dir() {
    if (const char* dir = std::getenv("FLASHRNN_CACHE_DIR"); dir && *dir) return dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return std::filesystem::path(xdg) / "flashrnn";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::filesystem::path(home) / ".cache" / "flashrnn";
    return std::filesystem::temp_directory_path() / "flashrnn-cache";
}

KernelCache::KernelCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

std::filesystem::path KernelCache::path_of(const std::string& key) const {
    return dir_ / (hex(fused::fnv1a(key)) + ".cubin-entry");
}

std::optional<CompiledKernel> KernelCache::load(const std::string& key) const {
    std::ifstream file(path_of(key), std::ios::binary);
    if (!file) return std::nullopt;
    const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (file.bad()) return std::nullopt;
    return deserialize(bytes, key);
}

void KernelCache::store(const std::string& key, const CompiledKernel& kernel) const {
    std::error_code error;
    std::filesystem::create_directories(dir_, error); // another process may create it at the same time
    if (!std::filesystem::is_directory(dir_))
        throw DeviceError("flashrnn kernel cache: cannot create the folder " + dir_.string() +
                          (error ? ": " + error.message() : ""));
    const std::filesystem::path target = path_of(key);
    const std::filesystem::path temporary = target.string() + temporary_suffix();
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        throw DeviceError("flashrnn kernel cache: cannot create " + temporary.string() + ": " +
                          std::strerror(errno));
    try {
        write_all(fd, serialize(key, kernel), temporary);
        // The data reaches the disk before the name does: after a crash the entry is whole or absent.
        if (::fsync(fd) != 0)
            throw DeviceError("flashrnn kernel cache: cannot sync " + temporary.string() + ": " +
                              std::strerror(errno));
    } catch (...) {
        ::close(fd);
        ::unlink(temporary.c_str());
        throw;
    }
    ::close(fd);
    if (::rename(temporary.c_str(), target.c_str()) != 0) {
        const int rename_error = errno;
        ::unlink(temporary.c_str());
        throw DeviceError("flashrnn kernel cache: cannot rename " + temporary.string() + " to " +
                          target.string() + ": " + std::strerror(rename_error));
    }
}

} // namespace flashrnn
