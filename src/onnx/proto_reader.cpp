#include "onnx/proto_reader.hpp"

#include <cstring>

#include "base/error.hpp"

namespace minnow::onnx {

namespace {
enum Wire { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };
}

void ProtoReader::fail(const std::string& why) const { throw Error(std::string("onnx: ") + what_ + ": " + why); }

bool ProtoReader::next() {
  if (p_ == end_) return false;
  uint64_t key = varint();
  field_ = static_cast<uint32_t>(key >> 3);
  wire_ = static_cast<int>(key & 7);
  if (field_ == 0 || key >> 32) fail("invalid field key");
  return true;
}

uint64_t ProtoReader::varint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p_ == end_) fail("truncated varint");
    uint8_t b = *p_++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  fail("varint longer than 10 bytes");
}

float ProtoReader::f32() {
  if (wire_ != kFixed32) fail("expected a 32-bit float field");
  if (end_ - p_ < 4) fail("truncated float");
  float v;
  std::memcpy(&v, p_, 4);
  p_ += 4;
  return v;
}

double ProtoReader::f64() {
  if (wire_ != kFixed64) fail("expected a 64-bit double field");
  if (end_ - p_ < 8) fail("truncated double");
  double v;
  std::memcpy(&v, p_, 8);
  p_ += 8;
  return v;
}

std::span<const uint8_t> ProtoReader::bytes() {
  if (wire_ != kLengthDelimited) fail("expected a length-delimited field");
  uint64_t n = varint();
  if (n > static_cast<uint64_t>(end_ - p_)) fail("field length " + std::to_string(n) + " runs past the end");
  std::span<const uint8_t> s(p_, n);
  p_ += n;
  return s;
}

std::string ProtoReader::string() {
  auto s = bytes();
  return std::string(reinterpret_cast<const char*>(s.data()), s.size());
}

void ProtoReader::skip() {
  switch (wire_) {
    case kVarint: varint(); break;
    case kFixed64:
      if (end_ - p_ < 8) fail("truncated fixed64");
      p_ += 8;
      break;
    case kLengthDelimited: bytes(); break;
    case kFixed32:
      if (end_ - p_ < 4) fail("truncated fixed32");
      p_ += 4;
      break;
    default: fail("unsupported wire type " + std::to_string(wire_));
  }
}

void ProtoReader::append_ints(std::vector<int64_t>& out) {
  if (wire_ == kVarint) {
    out.push_back(int64());
    return;
  }
  ProtoReader packed(bytes(), what_);
  while (packed.p_ != packed.end_) out.push_back(packed.int64());
}

void ProtoReader::append_floats(std::vector<float>& out) {
  if (wire_ == kFixed32) {
    out.push_back(f32());
    return;
  }
  auto s = bytes();
  if (s.empty()) return;
  if (s.size() % 4) fail("packed floats not a multiple of 4 bytes");
  size_t n = out.size();
  out.resize(n + s.size() / 4);
  std::memcpy(out.data() + n, s.data(), s.size());
}

void ProtoReader::append_doubles(std::vector<double>& out) {
  if (wire_ == kFixed64) {
    out.push_back(f64());
    return;
  }
  auto s = bytes();
  if (s.empty()) return;
  if (s.size() % 8) fail("packed doubles not a multiple of 8 bytes");
  size_t n = out.size();
  out.resize(n + s.size() / 8);
  std::memcpy(out.data() + n, s.data(), s.size());
}

}  // namespace minnow::onnx
