#include "onnx/npy.hpp"

#include <cstring>
#include <fstream>
#include <regex>

#include "base/error.hpp"
#include "base/mapped_file.hpp"

namespace minnow::onnx {

namespace {
struct Descr {
  const char* code;
  DataType type;
};
constexpr Descr kDescrs[] = {{"<f4", DataType::Float}, {"<f8", DataType::Double}, {"<i4", DataType::Int32},
                             {"<i8", DataType::Int64}, {"|u1", DataType::UInt8},  {"|i1", DataType::Int8},
                             {"|b1", DataType::Bool}};
}  // namespace

Tensor read_npy(const std::string& path) {
  MappedFile file(path);
  auto b = file.bytes();
  auto fail = [&](const std::string& why) -> Error { return Error("npy: '" + path + "': " + why); };
  if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0) throw fail("not a .npy file");
  const int major = b[6];
  size_t header_len, start;
  if (major == 1) {
    header_len = b[8] | (b[9] << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) throw fail("truncated header");
    header_len = b[8] | (b[9] << 8) | (static_cast<size_t>(b[10]) << 16) | (static_cast<size_t>(b[11]) << 24);
    start = 12;
  } else {
    throw fail("format version " + std::to_string(major) + " is not supported");
  }
  if (header_len > b.size() - start) throw fail("truncated header");
  std::string header(reinterpret_cast<const char*>(b.data() + start), header_len);
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']*)'"))) throw fail("header has no descr");
  const std::string descr = m[1];
  DataType type = DataType::Undefined;
  for (auto& d : kDescrs)
    if (descr == d.code || (descr[0] == '=' && descr.substr(1) == std::string(d.code).substr(1))) type = d.type;
  if (type == DataType::Undefined) throw fail("element type '" + descr + "' is not supported");
  if (std::regex_search(header, std::regex("'fortran_order':\\s*True"))) throw fail("Fortran order is not supported");
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)"))) throw fail("header has no shape");
  std::vector<int64_t> shape;
  std::string dims = m[1];
  const std::regex digits("\\d+");
  for (std::sregex_iterator it(dims.begin(), dims.end(), digits), end; it != end; ++it) {
    if (it->str().size() > 12) throw fail("dimension too large");
    shape.push_back(std::stoll(it->str()));
  }
  Tensor t;
  t.resize(type, shape);
  const size_t data = start + header_len;
  if (b.size() - data != t.bytes())
    throw fail("holds " + std::to_string(b.size() - data) + " data bytes, its shape needs " + std::to_string(t.bytes()));
  if (t.bytes()) std::memcpy(t.raw(), b.data() + data, t.bytes());
  return t;
}

void write_npy(const std::string& path, const Tensor& t) {
  const char* code = nullptr;
  for (auto& d : kDescrs)
    if (d.type == t.dtype()) code = d.code;
  if (!code) throw Error("npy: cannot write element type " + std::string(dtype_name(t.dtype())));
  std::string shape;
  for (int64_t d : t.shape()) shape += std::to_string(d) + ", ";
  if (t.rank() > 1) shape.resize(shape.size() - 1);
  if (t.rank() > 1) shape.pop_back();
  std::string header = std::string("{'descr': '") + code + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  // The data starts at a multiple of 64 bytes; the header ends with a newline.
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw Error("npy: cannot write '" + path + "'");
    f.write("\x93NUMPY\x01\x00", 8);
    const uint16_t len = static_cast<uint16_t>(header.size());
    const char le[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
    f.write(le, 2);
    f.write(header.data(), static_cast<std::streamsize>(header.size()));
    f.write(static_cast<const char*>(t.raw()), static_cast<std::streamsize>(t.bytes()));
    if (!f) throw Error("npy: cannot write '" + path + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw Error("npy: cannot write '" + path + "'");
}

}  // namespace minnow::onnx
