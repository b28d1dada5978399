// 8-bit BGR images (the channel order the PP-OCR models were trained on) and the few
// operations the OCR pipeline needs, with OpenCV's conventions where the reference
// pipeline uses OpenCV (pixel centres at +0.5, replicated borders).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace minnow::ocr {

struct Image {
  int w = 0, h = 0;
  std::vector<uint8_t> bgr;  // h rows of w pixels, 3 bytes each
  const uint8_t* at(int x, int y) const { return bgr.data() + (static_cast<size_t>(y) * w + x) * 3; }
  uint8_t* at(int x, int y) { return bgr.data() + (static_cast<size_t>(y) * w + x) * 3; }
};

Image image_from_rgb(const uint8_t* rgb, int w, int h, int channels);  // channels 1, 3 or 4 (alpha dropped)
Image load_image(const std::string& path);  // PNG, JPEG, BMP... (throws if built without an image reader)
bool can_load_images();

// Bilinear resize as cv2.resize(INTER_LINEAR) computes it for 8-bit images (11-bit fixed-point weights).
Image resize_linear(const Image& src, int w, int h);
Image rotate_180(const Image& src);
Image rotate_90_ccw(const Image& src);  // numpy.rot90
// The quadrilateral p[0..3] (top-left, top-right, bottom-right, bottom-left) mapped onto a
// w x h image by the perspective transform through those corners; bicubic, replicated border.
Image warp_quad(const Image& src, const float p[4][2], int w, int h);

// (v / 255 - 0.5) / 0.5 per channel into dst (3 planes of dst_w x src.h floats; columns
// from src.w on are left as they are).
void normalize_into(const Image& src, float* dst, int dst_w);

}  // namespace minnow::ocr
