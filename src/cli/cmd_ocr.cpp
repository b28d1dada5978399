// minnow ocr: read the text in an image (PP-OCRv4 detection, angle classification and
// recognition through minnow's ONNX runtime).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "cli/common.hpp"
#include "minnow/ocr.hpp"

namespace minnow::cli {

void register_ocr(CLI::App& app) {
  struct Opts {
    std::vector<std::string> images;
    std::string models = "models/rapidocr";
    int threads = 0, runs = 1;
    bool json = false, boxes = false, timing = false, no_cls = false;
    float box_thresh = 0.5f, text_score = 0.5f, unclip_ratio = 1.6f;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("ocr", "Read the text in images (PP-OCRv4 models from RapidOCR, run by minnow)");
  cmd->footer(
      "Prints the lines of text in reading order. The models come from scripts/fetch-models --ocr.\n"
      "Examples:\n"
      "  minnow ocr photo.png\n"
      "  minnow ocr --boxes scan.jpg            # x0,y0 x1,y1 x2,y2 x3,y3<TAB>score<TAB>text\n"
      "  minnow ocr --json a.png b.png          # one JSON object per image\n"
      "  minnow ocr --timing --runs 5 page.png  # detection / classification / recognition times");
  cmd->add_option("images", o->images, "Image files (PNG, JPEG, BMP, ...)")->required();
  cmd->add_option("--models", o->models, "Directory with det.onnx, cls.onnx and rec.onnx (default models/rapidocr)");
  cmd->add_option("-t,--threads", o->threads, "Threads (default: one per core)");
  cmd->add_flag("--json", o->json, "One JSON object per image: {\"image\", \"lines\": [{\"text\", \"score\", \"box\"}]}");
  cmd->add_flag("--boxes", o->boxes, "Print each line's box corners and score before its text");
  cmd->add_flag("--no-cls", o->no_cls, "Skip the angle classifier (upside-down lines stay unread)");
  cmd->add_option("--box-thresh", o->box_thresh, "Mean text probability a box needs (default 0.5)")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--text-score", o->text_score, "Lines with a lower mean confidence are dropped (default 0.5)")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--unclip-ratio", o->unclip_ratio, "How far boxes grow beyond the detected core (default 1.6)")->check(CLI::Range(0.5, 5.0));
  cmd->add_option("--runs", o->runs, "Read each image this many times (timing)")->check(CLI::Range(1, 1000));
  cmd->add_flag("--timing", o->timing, "Report the time of each stage on stderr (median over --runs)");
  cmd->callback([o] {
    if (!Ocr::can_read_files()) throw Error("ocr: this build has no image reader (install libstb-dev and rebuild)");
    OcrOptions opts{.n_threads = o->threads, .classify_angle = !o->no_cls, .box_thresh = o->box_thresh,
                    .unclip_ratio = o->unclip_ratio, .text_score = o->text_score};
    auto ocr = Ocr::load(o->models, opts);
    for (const auto& path : o->images) {
      std::vector<OcrLine> lines;
      std::vector<OcrTiming> times;
      for (int r = 0; r < o->runs; ++r) {
        OcrTiming t;
        lines = ocr->read_file(path, &t);
        times.push_back(t);
      }
      if (o->json) {
        nlohmann::json j{{"image", path}, {"lines", nlohmann::json::array()}};
        for (auto& l : lines)
          j["lines"].push_back({{"text", l.text}, {"score", l.score},
                                {"box", {{l.box[0][0], l.box[0][1]}, {l.box[1][0], l.box[1][1]}, {l.box[2][0], l.box[2][1]}, {l.box[3][0], l.box[3][1]}}}});
        std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      } else {
        if (o->images.size() > 1) std::printf("== %s\n", path.c_str());
        for (auto& l : lines) {
          if (o->boxes)
            std::printf("%.0f,%.0f %.0f,%.0f %.0f,%.0f %.0f,%.0f\t%.3f\t", l.box[0][0], l.box[0][1], l.box[1][0], l.box[1][1],
                        l.box[2][0], l.box[2][1], l.box[3][0], l.box[3][1], l.score);
          std::printf("%s\n", l.text.c_str());
        }
      }
      if (o->timing) {
        auto med = [&](double OcrTiming::*f) {
          std::vector<double> v;
          for (auto& t : times) v.push_back(t.*f);
          std::sort(v.begin(), v.end());
          return v[v.size() / 2];
        };
        const double d = med(&OcrTiming::detect_ms), c = med(&OcrTiming::classify_ms), r = med(&OcrTiming::recognize_ms);
        std::fprintf(stderr, "ocr: %s: %zu lines; detect %.1f ms, classify %.1f ms, recognize %.1f ms, total %.1f ms (median of %d)\n",
                     path.c_str(), lines.size(), d, c, r, d + c + r, o->runs);
      }
    }
  });
}

}  // namespace minnow::cli
