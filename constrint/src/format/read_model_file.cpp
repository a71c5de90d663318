// Reading a model file for every front end (load_cint, fzn-constrint, the constrint program): a
// directory or a file that cannot be read is an error, never an empty model.
#include "constrint/error.hpp"
#include "constrint/format.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace constrint {

std::string read_model_file(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw FileError("cannot read '" + path + "': it is a directory, not a model file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FileError("cannot open '" + path + "': " + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw FileError("cannot read '" + path + "'");
    return text.str();
}

} // namespace constrint
