// Differentiable-binarization (DB) post-processing: the detector's probability map to
// text boxes, as PaddleOCR / RapidOCR compute it (threshold, 2 x 2 dilation, regions,
// minimum-area rectangles, mean probability inside, expansion by area * ratio / perimeter).
#pragma once
#include <array>
#include <vector>

namespace minnow::ocr {

using Quad = std::array<std::array<float, 2>, 4>;  // top-left, top-right, bottom-right, bottom-left

struct DbParams {
  float thresh = 0.3f, box_thresh = 0.5f, unclip_ratio = 1.6f;
  int max_candidates = 1000;
};

// pred: map_h x map_w probabilities; boxes are returned in a dest_w x dest_h image's
// coordinates, ordered clockwise from the top-left, tiny boxes dropped, sorted top to
// bottom and left to right within a line.
std::vector<Quad> db_boxes(const float* pred, int map_w, int map_h, int dest_w, int dest_h, const DbParams& p);

// The minimum-area rectangle around points (x, y pairs): its corners and shorter side.
struct MinRect {
  std::array<std::array<float, 2>, 4> corners;
  float w = 0, h = 0;
};
MinRect min_area_rect(std::vector<std::array<float, 2>> points);

}  // namespace minnow::ocr
