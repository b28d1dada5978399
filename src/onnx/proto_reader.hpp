// A bounds-checked reader of the protocol buffers wire format (varints, fixed32/64,
// length-delimited fields), enough to decode ONNX files without linking libprotobuf into
// the on-device library. Every read is checked against the end of its message; a malformed
// file throws minnow::Error naming what was being read.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace minnow::onnx {

class ProtoReader {
 public:
  ProtoReader(std::span<const uint8_t> data, const char* what) : p_(data.data()), end_(data.data() + data.size()), what_(what) {}

  // Reads the next field's key; false at the end of the message.
  bool next();
  uint32_t field() const { return field_; }
  int wire_type() const { return wire_; }

  uint64_t varint();
  int64_t int64() { return static_cast<int64_t>(varint()); }
  float f32();
  double f64();
  std::span<const uint8_t> bytes();  // a length-delimited field's contents
  std::string string();
  void skip();  // the current field's value

  // A repeated scalar field, packed (one length-delimited run) or not (this value alone).
  void append_ints(std::vector<int64_t>& out);
  void append_floats(std::vector<float>& out);
  void append_doubles(std::vector<double>& out);

  [[noreturn]] void fail(const std::string& why) const;

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  const char* what_;
  uint32_t field_ = 0;
  int wire_ = 0;
};

}  // namespace minnow::onnx
