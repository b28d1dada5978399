// The OCR pipeline: RapidOCR's steps and parameters (PP-OCRv4 detection at a shorter side
// of 736, boxes in reading order, crops rotated upright, angle classification in batches
// of 6 at 48 x 192, recognition in batches of 6 at height 48, CTC greedy decoding).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "base/error.hpp"
#include "minnow/ocr.hpp"
#include "minnow/onnx.hpp"
#include "ocr/ctc.hpp"
#include "ocr/image.hpp"
#include "ocr/text_boxes.hpp"

namespace minnow {

using namespace minnow::ocr;

struct Ocr::Impl {
  OcrOptions options;
  std::unique_ptr<onnx::Interpreter> det_net, cls_net, rec_net;
  std::unique_ptr<onnx::Session> det, cls, rec;
  std::vector<std::string> charset;  // index 0: the CTC blank

  std::vector<OcrLine> run(const Image& img, OcrTiming* timing);
};

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Indices sorted by width / height (numpy argsort's order for distinct ratios).
std::vector<size_t> by_aspect(const std::vector<Image>& crops) {
  std::vector<size_t> idx(crops.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    return static_cast<double>(crops[a].w) / crops[a].h < static_cast<double>(crops[b].w) / crops[b].h;
  });
  return idx;
}

// Resized to height h keeping the aspect (width at most max_w), normalized, zero-padded to max_w.
void fill_line(const Image& crop, int h, int max_w, float* dst) {
  const double ratio = static_cast<double>(crop.w) / crop.h;
  const int w = static_cast<int>(std::min<double>(max_w, std::ceil(h * ratio)));
  Image r = resize_linear(crop, std::max(w, 1), h);
  normalize_into(r, dst, max_w);
}

}  // namespace

std::vector<OcrLine> Ocr::Impl::run(const Image& img, OcrTiming* timing) {
  OcrTiming t;
  // Detection: the shorter side scaled up to 736 (never down), both sides rounded to a multiple of 32.
  auto t0 = std::chrono::steady_clock::now();
  const double ratio = std::min(img.w, img.h) < 736 ? 736.0 / std::min(img.w, img.h) : 1.0;
  const int rh = std::max(32, static_cast<int>(std::nearbyint(static_cast<int>(img.h * ratio) / 32.0)) * 32);
  const int rw = std::max(32, static_cast<int>(std::nearbyint(static_cast<int>(img.w * ratio) / 32.0)) * 32);
  onnx::Tensor& x = det->input(det_net->inputs()[0].name);
  x.resize(onnx::DataType::Float, {1, 3, rh, rw});
  normalize_into(resize_linear(img, rw, rh), x.data<float>(), rw);
  det->run();
  const onnx::Tensor& map = det->output(det_net->outputs()[0].name);
  if (map.rank() != 4 || map.shape()[2] != rh || map.shape()[3] != rw) throw Error("ocr: the detector's output has an unexpected shape");
  DbParams db;
  db.box_thresh = options.box_thresh;
  db.unclip_ratio = options.unclip_ratio;
  std::vector<Quad> boxes = db_boxes(map.data<float>(), rw, rh, img.w, img.h, db);
  t.detect_ms = ms_since(t0);

  // Crops, upright.
  std::vector<Image> crops;
  for (const Quad& b : boxes) {
    auto dist = [&](int i, int j) { return std::hypot(b[i][0] - b[j][0], b[i][1] - b[j][1]); };
    const int cw = static_cast<int>(std::max(dist(0, 1), dist(2, 3)));
    const int ch = static_cast<int>(std::max(dist(0, 3), dist(1, 2)));
    float q[4][2];
    for (int i = 0; i < 4; ++i) { q[i][0] = b[i][0]; q[i][1] = b[i][1]; }
    Image c = warp_quad(img, q, std::max(cw, 1), std::max(ch, 1));
    if (static_cast<double>(c.h) / c.w >= 1.5) c = rotate_90_ccw(c);
    crops.push_back(std::move(c));
  }

  // Angle classification: upside-down lines (label 180 above 0.9) are turned.
  t0 = std::chrono::steady_clock::now();
  if (options.classify_angle && !crops.empty()) {
    std::vector<size_t> order = by_aspect(crops);
    for (size_t beg = 0; beg < order.size(); beg += 6) {
      const size_t n = std::min<size_t>(6, order.size() - beg);
      onnx::Tensor& in = cls->input(cls_net->inputs()[0].name);
      in = onnx::Tensor(onnx::DataType::Float, {static_cast<int64_t>(n), 3, 48, 192});
      for (size_t k = 0; k < n; ++k) fill_line(crops[order[beg + k]], 48, 192, in.data<float>() + k * 3 * 48 * 192);
      cls->run();
      const onnx::Tensor& prob = cls->output(cls_net->outputs()[0].name);
      if (prob.rank() != 2 || prob.shape()[1] != 2) throw Error("ocr: the angle classifier's output has an unexpected shape");
      for (size_t k = 0; k < n; ++k) {
        const float* p = prob.data<float>() + k * 2;
        if (p[1] > p[0] && p[1] > 0.9f) crops[order[beg + k]] = rotate_180(crops[order[beg + k]]);
      }
    }
  }
  t.classify_ms = ms_since(t0);

  // Recognition, in batches of similar aspect; each batch padded to its widest line (at least 320 / 48).
  t0 = std::chrono::steady_clock::now();
  std::vector<CtcResult> texts(crops.size());
  std::vector<size_t> order = by_aspect(crops);
  for (size_t beg = 0; beg < order.size(); beg += 6) {
    const size_t n = std::min<size_t>(6, order.size() - beg);
    double max_ratio = 320.0 / 48.0;
    for (size_t k = 0; k < n; ++k) max_ratio = std::max(max_ratio, static_cast<double>(crops[order[beg + k]].w) / crops[order[beg + k]].h);
    const int width = static_cast<int>(48 * max_ratio);
    onnx::Tensor& in = rec->input(rec_net->inputs()[0].name);
    in = onnx::Tensor(onnx::DataType::Float, {static_cast<int64_t>(n), 3, 48, width});
    for (size_t k = 0; k < n; ++k) fill_line(crops[order[beg + k]], 48, width, in.data<float>() + k * 3 * 48 * width);
    rec->run();
    const onnx::Tensor& prob = rec->output(rec_net->outputs()[0].name);
    if (prob.rank() != 3 || prob.shape()[0] != static_cast<int64_t>(n) || prob.shape()[2] != static_cast<int64_t>(charset.size()))
      throw Error("ocr: the recognizer's output does not match its character set");
    const int64_t steps = prob.shape()[1], classes = prob.shape()[2];
    for (size_t k = 0; k < n; ++k)
      texts[order[beg + k]] = ctc_greedy(prob.data<float>() + k * steps * classes, steps, classes, charset);
  }
  t.recognize_ms = ms_since(t0);

  std::vector<OcrLine> lines;
  for (size_t i = 0; i < boxes.size(); ++i) {
    if (texts[i].score < options.text_score) continue;
    lines.push_back({boxes[i], texts[i].text, texts[i].score});
  }
  if (timing) *timing = t;
  return lines;
}

Ocr::Ocr(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Ocr::~Ocr() = default;

std::unique_ptr<Ocr> Ocr::load(const std::string& dir, const OcrOptions& options) {
  namespace fs = std::filesystem;
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  for (const char* name : {"det.onnx", "rec.onnx", "cls.onnx"})
    if (!fs::exists(fs::path(dir) / name))
      throw Error("ocr: '" + dir + "' has no " + name + " (scripts/fetch-models --ocr puts the models in models/rapidocr)");
  impl->det_net = onnx::Interpreter::load(dir + "/det.onnx");
  impl->rec_net = onnx::Interpreter::load(dir + "/rec.onnx");
  impl->cls_net = onnx::Interpreter::load(dir + "/cls.onnx");
  for (auto* net : {impl->det_net.get(), impl->rec_net.get(), impl->cls_net.get()})
    if (net->inputs().size() != 1 || net->outputs().empty()) throw Error("ocr: each model must have one input");
  onnx::SessionOptions so{.n_threads = options.n_threads};
  impl->det = impl->det_net->create_session({{impl->det_net->inputs()[0].name, {1, 3, 32, 32}}}, so);
  impl->cls = impl->cls_net->create_session({{impl->cls_net->inputs()[0].name, {1, 3, 48, 192}}}, so);
  impl->rec = impl->rec_net->create_session({{impl->rec_net->inputs()[0].name, {1, 3, 48, 320}}}, so);
  impl->charset = ctc_charset(impl->rec_net->metadata("character"));
  if (impl->charset.size() < 3) throw Error("ocr: rec.onnx carries no character list (metadata 'character')");
  return std::unique_ptr<Ocr>(new Ocr(std::move(impl)));
}

std::vector<OcrLine> Ocr::read_file(const std::string& image_path, OcrTiming* timing) {
  return impl_->run(load_image(image_path), timing);
}

std::vector<OcrLine> Ocr::read_pixels(const uint8_t* pixels, int width, int height, int channels, OcrTiming* timing) {
  return impl_->run(image_from_rgb(pixels, width, height, channels), timing);
}

bool Ocr::can_read_files() { return can_load_images(); }

}  // namespace minnow
