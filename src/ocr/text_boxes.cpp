#include "ocr/text_boxes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace minnow::ocr {

namespace {

using Pt = std::array<float, 2>;

double cross(const Pt& o, const Pt& a, const Pt& b) {
  return (static_cast<double>(a[0]) - o[0]) * (static_cast<double>(b[1]) - o[1]) -
         (static_cast<double>(a[1]) - o[1]) * (static_cast<double>(b[0]) - o[0]);
}

std::vector<Pt> convex_hull(std::vector<Pt> p) {  // Andrew's monotone chain, counter-clockwise
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  if (p.size() < 3) return p;
  std::vector<Pt> h(2 * p.size());
  size_t k = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    while (k >= 2 && cross(h[k - 2], h[k - 1], p[i]) <= 0) --k;
    h[k++] = p[i];
  }
  for (size_t i = p.size() - 1, t = k + 1; i-- > 0;) {
    while (k >= t && cross(h[k - 2], h[k - 1], p[i]) <= 0) --k;
    h[k++] = p[i];
  }
  h.resize(k - 1);
  return h;
}

// get_mini_boxes' order: by x, then the upper of the two left points first, the upper of
// the two right points second.
Quad order_mini_box(std::array<Pt, 4> c) {
  std::stable_sort(c.begin(), c.end(), [](const Pt& a, const Pt& b) { return a[0] < b[0]; });
  Pt tl = c[1][1] > c[0][1] ? c[0] : c[1], bl = c[1][1] > c[0][1] ? c[1] : c[0];
  Pt tr = c[3][1] > c[2][1] ? c[2] : c[3], br = c[3][1] > c[2][1] ? c[3] : c[2];
  return {tl, tr, br, bl};
}

// Mean of pred over the pixels of the (integer-truncated) quad, within its bounding box.
float box_score(const float* pred, int w, int h, const Quad& q) {
  float minx = q[0][0], maxx = q[0][0], miny = q[0][1], maxy = q[0][1];
  for (auto& p : q) {
    minx = std::min(minx, p[0]); maxx = std::max(maxx, p[0]);
    miny = std::min(miny, p[1]); maxy = std::max(maxy, p[1]);
  }
  const int x0 = std::clamp(static_cast<int>(std::floor(minx)), 0, w - 1), x1 = std::clamp(static_cast<int>(std::ceil(maxx)), 0, w - 1);
  const int y0 = std::clamp(static_cast<int>(std::floor(miny)), 0, h - 1), y1 = std::clamp(static_cast<int>(std::ceil(maxy)), 0, h - 1);
  Quad t;
  for (int i = 0; i < 4; ++i)
    t[i] = {static_cast<float>(static_cast<int>(q[i][0] - x0)), static_cast<float>(static_cast<int>(q[i][1] - y0))};
  // Inside or within half a pixel of an edge (fillPoly draws the outline too).
  double area2 = 0;
  for (int i = 0; i < 4; ++i) area2 += cross(t[0], t[i], t[(i + 1) % 4]);
  const double sign = area2 >= 0 ? 1 : -1;
  double sum = 0;
  int64_t count = 0;
  for (int y = y0; y <= y1; ++y)
    for (int x = x0; x <= x1; ++x) {
      const Pt p{static_cast<float>(x - x0), static_cast<float>(y - y0)};
      bool inside = true;
      for (int i = 0; i < 4 && inside; ++i) {
        const Pt& a = t[i];
        const Pt& b = t[(i + 1) % 4];
        const double len = std::hypot(b[0] - a[0], b[1] - a[1]);
        inside = sign * cross(a, b, p) >= -0.5 * std::max(len, 1e-9);
      }
      if (inside) {
        sum += pred[static_cast<size_t>(y) * w + x];
        ++count;
      }
    }
  return count ? static_cast<float>(sum / static_cast<double>(count)) : 0.0f;
}

// Clipper's offset of a closed polygon with round joins (arc tolerance 0.25), on the
// polygon's coordinates truncated to integers, every output point rounded half away from zero.
std::vector<Pt> round_offset(const Quad& q, double delta) {
  double x[4], y[4];
  for (int i = 0; i < 4; ++i) { x[i] = static_cast<double>(static_cast<int64_t>(q[i][0])); y[i] = static_cast<double>(static_cast<int64_t>(q[i][1])); }
  double area2 = 0;
  for (int i = 0; i < 4; ++i) area2 += x[i] * y[(i + 1) % 4] - x[(i + 1) % 4] * y[i];
  int idx[4] = {0, 1, 2, 3};
  if (area2 < 0) std::swap(idx[1], idx[3]);  // Clipper orients closed paths positively first
  double px[4], py[4], nx[4], ny[4];
  for (int i = 0; i < 4; ++i) { px[i] = x[idx[i]]; py[i] = y[idx[i]]; }
  for (int j = 0; j < 4; ++j) {
    const double dx = px[(j + 1) % 4] - px[j], dy = py[(j + 1) % 4] - py[j], len = std::hypot(dx, dy);
    nx[j] = len > 0 ? dy / len : 0;
    ny[j] = len > 0 ? -dx / len : 0;
  }
  const double pi = 3.14159265358979323846;
  double tol = 0.25;
  if (tol > std::abs(delta) * 0.25) tol = std::abs(delta) * 0.25;
  double steps = pi / std::acos(1 - tol / std::abs(delta));
  if (steps > std::abs(delta) * pi) steps = std::abs(delta) * pi;
  const double sn = std::sin(2 * pi / steps), cs = std::cos(2 * pi / steps), steps_per_rad = steps / (2 * pi);
  auto round = [](double v) { return static_cast<float>(v < 0 ? static_cast<int64_t>(v - 0.5) : static_cast<int64_t>(v + 0.5)); };
  std::vector<Pt> out;
  for (int j = 0, k = 3; j < 4; k = j, ++j) {
    double sin_a = nx[k] * ny[j] - nx[j] * ny[k];
    const double cos_a = nx[k] * nx[j] + ny[k] * ny[j];
    if (std::abs(sin_a * delta) < 1.0 && cos_a > 0) {
      out.push_back({round(px[j] + nx[k] * delta), round(py[j] + ny[k] * delta)});
      continue;
    }
    sin_a = std::clamp(sin_a, -1.0, 1.0);
    if (sin_a * delta < 0) {
      out.push_back({round(px[j] + nx[k] * delta), round(py[j] + ny[k] * delta)});
      out.push_back({static_cast<float>(px[j]), static_cast<float>(py[j])});
      out.push_back({round(px[j] + nx[j] * delta), round(py[j] + ny[j] * delta)});
      continue;
    }
    const double a = std::atan2(sin_a, cos_a);
    const int n = std::max(static_cast<int>(round(steps_per_rad * std::abs(a))), 1);
    double vx = nx[k], vy = ny[k];
    for (int i = 0; i < n; ++i) {
      out.push_back({round(px[j] + vx * delta), round(py[j] + vy * delta)});
      const double t = vx;
      vx = vx * cs - sn * vy;
      vy = t * sn + vy * cs;
    }
    out.push_back({round(px[j] + nx[j] * delta), round(py[j] + ny[j] * delta)});
  }
  return out;
}

Quad order_clockwise(Quad q) {  // order_points_clockwise: left pair by y (tl, bl), right pair by y (tr, br)
  std::stable_sort(q.begin(), q.end(), [](const Pt& a, const Pt& b) { return a[0] < b[0]; });
  Pt l0 = q[0], l1 = q[1], r0 = q[2], r1 = q[3];
  if (l1[1] < l0[1]) std::swap(l0, l1);
  if (r1[1] < r0[1]) std::swap(r0, r1);
  return {l0, r0, r1, l1};
}

}  // namespace

MinRect min_area_rect(std::vector<Pt> points) {
  MinRect best;
  std::vector<Pt> hull = convex_hull(std::move(points));
  if (hull.empty()) return best;
  if (hull.size() == 1) {
    best.corners = {hull[0], hull[0], hull[0], hull[0]};
    return best;
  }
  double best_area = -1;
  for (size_t i = 0; i < hull.size(); ++i) {
    const Pt& a = hull[i];
    const Pt& b = hull[(i + 1) % hull.size()];
    double ux = b[0] - a[0], uy = b[1] - a[1];
    const double len = std::hypot(ux, uy);
    if (len == 0) continue;
    ux /= len;
    uy /= len;
    double lo_u = 1e300, hi_u = -1e300, lo_v = 1e300, hi_v = -1e300;
    for (const Pt& p : hull) {
      const double du = (p[0] - a[0]) * ux + (p[1] - a[1]) * uy, dv = -(p[0] - a[0]) * uy + (p[1] - a[1]) * ux;
      lo_u = std::min(lo_u, du); hi_u = std::max(hi_u, du);
      lo_v = std::min(lo_v, dv); hi_v = std::max(hi_v, dv);
    }
    const double area = (hi_u - lo_u) * (hi_v - lo_v);
    if (best_area < 0 || area < best_area - 1e-9) {
      best_area = area;
      auto corner = [&](double u, double v) -> Pt {
        return {static_cast<float>(a[0] + u * ux - v * uy), static_cast<float>(a[1] + u * uy + v * ux)};
      };
      best.corners = {corner(lo_u, lo_v), corner(hi_u, lo_v), corner(hi_u, hi_v), corner(lo_u, hi_v)};
      best.w = static_cast<float>(hi_u - lo_u);
      best.h = static_cast<float>(hi_v - lo_v);
    }
  }
  return best;
}

std::vector<Quad> db_boxes(const float* pred, int w, int h, int dest_w, int dest_h, const DbParams& p) {
  // Threshold, then dilate by a 2 x 2 kernel (anchored at its centre: each pixel takes the
  // maximum of itself and its left, upper and upper-left neighbours).
  std::vector<uint8_t> bin(static_cast<size_t>(w) * h), mask(bin.size());
  for (size_t i = 0; i < bin.size(); ++i) bin[i] = pred[i] > p.thresh;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t v = bin[static_cast<size_t>(y) * w + x];
      if (x > 0) v |= bin[static_cast<size_t>(y) * w + x - 1];
      if (y > 0) v |= bin[static_cast<size_t>(y - 1) * w + x] | (x > 0 ? bin[static_cast<size_t>(y - 1) * w + x - 1] : 0);
      mask[static_cast<size_t>(y) * w + x] = v;
    }
  // 8-connected regions; each region's border pixels stand for its contour.
  std::vector<int32_t> label(mask.size(), -1);
  std::vector<Quad> boxes;
  std::vector<int> stack;
  int regions = 0;
  for (int sy = 0; sy < h && regions < p.max_candidates; ++sy)
    for (int sx = 0; sx < w && regions < p.max_candidates; ++sx) {
      const size_t s = static_cast<size_t>(sy) * w + sx;
      if (!mask[s] || label[s] >= 0) continue;
      std::vector<Pt> border;
      label[s] = regions;
      stack.assign(1, static_cast<int>(s));
      while (!stack.empty()) {
        const int i = stack.back();
        stack.pop_back();
        const int x = i % w, y = i / w;
        bool edge = false;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            if (!dx && !dy) continue;
            const int nx = x + dx, ny = y + dy;
            if (nx < 0 || ny < 0 || nx >= w || ny >= h) { edge = true; continue; }
            const size_t n = static_cast<size_t>(ny) * w + nx;
            if (!mask[n]) { edge = true; continue; }
            if (label[n] < 0) {
              label[n] = regions;
              stack.push_back(static_cast<int>(n));
            }
          }
        if (edge) border.push_back({static_cast<float>(x), static_cast<float>(y)});
      }
      ++regions;
      MinRect r = min_area_rect(border);
      if (std::min(r.w, r.h) < 3) continue;
      Quad box = order_mini_box(r.corners);
      if (box_score(pred, w, h, box) < p.box_thresh) continue;
      // Grow by area * ratio / perimeter: the rounded offset polygon pyclipper makes of the
      // integer-truncated box, then its minimum-area rectangle.
      double area2 = 0, perimeter = 0;
      for (int i = 0; i < 4; ++i) {
        area2 += static_cast<double>(box[i][0]) * box[(i + 1) % 4][1] - static_cast<double>(box[(i + 1) % 4][0]) * box[i][1];
        perimeter += std::hypot(box[(i + 1) % 4][0] - box[i][0], box[(i + 1) % 4][1] - box[i][1]);
      }
      const double d = std::abs(area2) / 2 * p.unclip_ratio / perimeter;
      MinRect grown = min_area_rect(round_offset(box, d));
      if (std::min(grown.w, grown.h) < 5) continue;
      box = order_mini_box(grown.corners);
      for (auto& q : box) {
        q[0] = std::clamp(static_cast<float>(std::nearbyint(q[0] / w * dest_w)), 0.0f, static_cast<float>(dest_w));
        q[1] = std::clamp(static_cast<float>(std::nearbyint(q[1] / h * dest_h)), 0.0f, static_cast<float>(dest_h));
      }
      // filter_tag_det_res: clockwise order, clipped to the image, at least 4 pixels each way.
      box = order_clockwise(box);
      for (auto& q : box) {
        q[0] = static_cast<float>(static_cast<int>(std::min(std::max(q[0], 0.0f), static_cast<float>(dest_w - 1))));
        q[1] = static_cast<float>(static_cast<int>(std::min(std::max(q[1], 0.0f), static_cast<float>(dest_h - 1))));
      }
      const int bw = static_cast<int>(std::hypot(box[0][0] - box[1][0], box[0][1] - box[1][1]));
      const int bh = static_cast<int>(std::hypot(box[0][0] - box[3][0], box[0][1] - box[3][1]));
      if (bw <= 3 || bh <= 3) continue;
      boxes.push_back(box);
    }
  // Top to bottom, then left to right among boxes whose tops are within 10 pixels.
  std::stable_sort(boxes.begin(), boxes.end(), [](const Quad& a, const Quad& b) {
    return a[0][1] != b[0][1] ? a[0][1] < b[0][1] : a[0][0] < b[0][0];
  });
  for (size_t i = 0; i + 1 < boxes.size(); ++i)
    for (size_t j = i + 1; j-- > 0;) {
      if (std::abs(boxes[j + 1][0][1] - boxes[j][0][1]) < 10 && boxes[j + 1][0][0] < boxes[j][0][0]) std::swap(boxes[j], boxes[j + 1]);
      else break;
    }
  return boxes;
}

}  // namespace minnow::ocr
