#include "ocr/image.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.hpp"

#ifdef MINNOW_HAVE_STB
#include <stb/stb_image.h>
#endif

namespace minnow::ocr {

Image image_from_rgb(const uint8_t* rgb, int w, int h, int channels) {
  if (w <= 0 || h <= 0 || (channels != 1 && channels != 3 && channels != 4))
    throw Error("ocr: image must be non-empty with 1, 3 or 4 channels");
  Image img{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
  for (size_t i = 0; i < static_cast<size_t>(w) * h; ++i) {
    const uint8_t* s = rgb + i * channels;
    uint8_t* d = img.bgr.data() + i * 3;
    if (channels == 1) d[0] = d[1] = d[2] = s[0];
    else { d[0] = s[2]; d[1] = s[1]; d[2] = s[0]; }
  }
  return img;
}

bool can_load_images() {
#ifdef MINNOW_HAVE_STB
  return true;
#else
  return false;
#endif
}

Image load_image(const std::string& path) {
#ifdef MINNOW_HAVE_STB
  int w = 0, h = 0, n = 0;
  if (!stbi_info(path.c_str(), &w, &h, &n)) throw Error("ocr: cannot read image '" + path + "': " + stbi_failure_reason());
  if (static_cast<int64_t>(w) * h > (int64_t{1} << 28)) throw Error("ocr: image '" + path + "' is too large");
  uint8_t* data = stbi_load(path.c_str(), &w, &h, &n, 3);
  if (!data) throw Error("ocr: cannot read image '" + path + "': " + stbi_failure_reason());
  Image img = image_from_rgb(data, w, h, 3);
  stbi_image_free(data);
  return img;
#else
  throw Error("ocr: this build reads no image files ('" + path + "'); pass pixels through the API");
#endif
}

namespace {
// cv2's linear-resize tables: source index and the two 11-bit weights per output index.
struct Taps {
  std::vector<int> i0;
  std::vector<short> a0, a1;
};
Taps linear_taps(int in, int out) {
  Taps t;
  const double scale = static_cast<double>(in) / out;
  for (int d = 0; d < out; ++d) {
    float f = static_cast<float>((d + 0.5) * scale - 0.5);
    int s = static_cast<int>(std::floor(f));
    f -= static_cast<float>(s);
    if (s < 0) { f = 0; s = 0; }
    if (s >= in - 1) { f = 0; s = in - 1; }
    t.i0.push_back(s);
    t.a0.push_back(static_cast<short>(std::lrint((1.0f - f) * 2048)));
    t.a1.push_back(static_cast<short>(std::lrint(f * 2048)));
  }
  return t;
}
}  // namespace

Image resize_linear(const Image& src, int w, int h) {
  if (w <= 0 || h <= 0) throw Error("ocr: resize to an empty image");
  Image dst{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
  const Taps tx = linear_taps(src.w, w), ty = linear_taps(src.h, h);
  std::vector<int> row0(static_cast<size_t>(w) * 3), row1(static_cast<size_t>(w) * 3);
  auto horizontal = [&](int sy, std::vector<int>& row) {
    for (int x = 0; x < w; ++x) {
      const int s = tx.i0[x], s1 = std::min(s + 1, src.w - 1);
      for (int c = 0; c < 3; ++c) row[x * 3 + c] = src.at(s, sy)[c] * tx.a0[x] + src.at(s1, sy)[c] * tx.a1[x];
    }
  };
  for (int y = 0; y < h; ++y) {
    const int s = ty.i0[y], s1 = std::min(s + 1, src.h - 1);
    horizontal(s, row0);
    horizontal(s1, row1);
    uint8_t* d = dst.at(0, y);
    for (int i = 0; i < w * 3; ++i) {
      int v = (((ty.a0[y] * (row0[i] >> 4)) >> 16) + ((ty.a1[y] * (row1[i] >> 4)) >> 16) + 2) >> 2;
      d[i] = static_cast<uint8_t>(std::clamp(v, 0, 255));
    }
  }
  return dst;
}

Image rotate_180(const Image& src) {
  Image dst{src.w, src.h, std::vector<uint8_t>(src.bgr.size())};
  for (int y = 0; y < src.h; ++y)
    for (int x = 0; x < src.w; ++x) std::memcpy(dst.at(src.w - 1 - x, src.h - 1 - y), src.at(x, y), 3);
  return dst;
}

Image rotate_90_ccw(const Image& src) {
  Image dst{src.h, src.w, std::vector<uint8_t>(src.bgr.size())};
  for (int y = 0; y < dst.h; ++y)
    for (int x = 0; x < dst.w; ++x) std::memcpy(dst.at(x, y), src.at(src.w - 1 - y, x), 3);
  return dst;
}

namespace {
// Solves the 8 x 8 system of the homography H (h33 = 1) with H * from[i] ~ to[i].
bool homography(const double from[4][2], const double to[4][2], double H[9]) {
  double a[8][9] = {};
  for (int i = 0; i < 4; ++i) {
    const double x = from[i][0], y = from[i][1], u = to[i][0], v = to[i][1];
    double r0[9] = {x, y, 1, 0, 0, 0, -u * x, -u * y, u};
    double r1[9] = {0, 0, 0, x, y, 1, -v * x, -v * y, v};
    std::memcpy(a[2 * i], r0, sizeof r0);
    std::memcpy(a[2 * i + 1], r1, sizeof r1);
  }
  for (int c = 0; c < 8; ++c) {
    int p = c;
    for (int r = c + 1; r < 8; ++r)
      if (std::abs(a[r][c]) > std::abs(a[p][c])) p = r;
    if (std::abs(a[p][c]) < 1e-12) return false;
    std::swap(a[p], a[c]);
    for (int r = 0; r < 8; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (int k = c; k < 9; ++k) a[r][k] -= f * a[c][k];
    }
  }
  for (int i = 0; i < 8; ++i) H[i] = a[i][8] / a[i][i];
  H[8] = 1;
  return true;
}

float cubic_weight(float t) {  // Keys' kernel with a = -0.75, as OpenCV
  const float a = -0.75f;
  t = std::abs(t);
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}
}  // namespace

Image warp_quad(const Image& src, const float p[4][2], int w, int h) {
  if (w <= 0 || h <= 0) throw Error("ocr: crop of an empty box");
  // Map destination pixels back to the source: H maps the output rectangle onto the quad.
  const double rect[4][2] = {{0, 0}, {static_cast<double>(w), 0}, {static_cast<double>(w), static_cast<double>(h)}, {0, static_cast<double>(h)}};
  double quad[4][2];
  for (int i = 0; i < 4; ++i) { quad[i][0] = p[i][0]; quad[i][1] = p[i][1]; }
  double H[9];
  Image dst{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
  if (!homography(rect, quad, H)) return dst;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double den = H[6] * x + H[7] * y + H[8];
      double sx = (H[0] * x + H[1] * y + H[2]) / den, sy = (H[3] * x + H[4] * y + H[5]) / den;
      // OpenCV quantizes the source position to 1/32 pixel.
      sx = std::floor(sx * 32 + 0.5) / 32;
      sy = std::floor(sy * 32 + 0.5) / 32;
      const int ix = static_cast<int>(std::floor(sx)), iy = static_cast<int>(std::floor(sy));
      const float fx = static_cast<float>(sx - ix), fy = static_cast<float>(sy - iy);
      float wx[4], wy[4];
      for (int k = 0; k < 4; ++k) {
        wx[k] = cubic_weight(fx - (k - 1));
        wy[k] = cubic_weight(fy - (k - 1));
      }
      for (int c = 0; c < 3; ++c) {
        float acc = 0;
        for (int j = 0; j < 4; ++j) {
          const int yy = std::clamp(iy - 1 + j, 0, src.h - 1);
          float row = 0;
          for (int i = 0; i < 4; ++i) row += wx[i] * src.at(std::clamp(ix - 1 + i, 0, src.w - 1), yy)[c];
          acc += wy[j] * row;
        }
        dst.at(x, y)[c] = static_cast<uint8_t>(std::clamp(std::lrint(acc), 0L, 255L));
      }
    }
  return dst;
}

void normalize_into(const Image& src, float* dst, int dst_w) {
  const size_t plane = static_cast<size_t>(dst_w) * src.h;
  for (int y = 0; y < src.h; ++y)
    for (int x = 0; x < src.w; ++x)
      for (int c = 0; c < 3; ++c)
        dst[c * plane + static_cast<size_t>(y) * dst_w + x] = (src.at(x, y)[c] / 255.0f - 0.5f) / 0.5f;
}

}  // namespace minnow::ocr
