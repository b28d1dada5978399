// minnow's text recognition (OCR) over the PP-OCR models that RapidOCR ships: text
// detection (DB), a 0/180-degree angle classifier and CTC recognition, each an ONNX model
// run by minnow's runtime (minnow/onnx.hpp).
//
//   auto ocr = minnow::Ocr::load("models/rapidocr");
//   for (const auto& line : ocr->read_file("receipt.png")) std::cout << line.text << "\n";
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#ifndef MINNOW_API
#define MINNOW_API __attribute__((visibility("default")))
#endif

namespace minnow {

struct OcrOptions {
  int n_threads = 0;          // <= 0: one per core
  bool classify_angle = true; // run the angle classifier (turns upside-down lines)
  float box_thresh = 0.5f;    // mean text probability a box needs
  float unclip_ratio = 1.6f;  // how far boxes grow beyond the detected core
  float text_score = 0.5f;    // lines recognized with a lower mean confidence are dropped
};

struct OcrLine {
  std::array<std::array<float, 2>, 4> box;  // corners: top-left, top-right, bottom-right, bottom-left
  std::string text;                          // UTF-8
  float score = 0;                           // mean confidence of the recognized characters
};

struct OcrTiming {
  double detect_ms = 0, classify_ms = 0, recognize_ms = 0;
};

class MINNOW_API Ocr {
 public:
  // A directory holding det.onnx, rec.onnx and cls.onnx (scripts/fetch-models --ocr).
  static std::unique_ptr<Ocr> load(const std::string& dir, const OcrOptions& options = {});
  ~Ocr();
  // Lines of text in reading order (top to bottom, left to right).
  std::vector<OcrLine> read_file(const std::string& image_path, OcrTiming* timing = nullptr);
  // From pixels: rows of width * channels bytes, RGB (3), RGBA (4, alpha ignored) or gray (1).
  std::vector<OcrLine> read_pixels(const uint8_t* pixels, int width, int height, int channels,
                                   OcrTiming* timing = nullptr);
  static bool can_read_files();  // false in builds without an image reader (stb)

  struct Impl;

 private:
  explicit Ocr(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace minnow
