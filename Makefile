# Thin wrappers; the real work is in scripts/ and CMake.
MODEL ?= models/SmolLM2-135M-Instruct.Q4_1.gguf
PROMPT ?= What is the capital of France? Answer in one sentence.
JOBS ?= $(shell nproc)

.PHONY: all setup models build build-asan build-aarch64 dist demo serve test test-unit test-asan test-aarch64 test-e2e test-java test-python bench bench-tokenizer bench-compare bench-serve bench-arm golden clean

all: build

setup:
	@scripts/setup

models: setup
	@scripts/fetch-models --gemma3 --minilm --qwen05 --ocr
	@[ -f build/onnx-node/.complete ] || { .venv/bin/python tests/reference/gen_onnx_node_tests.py build/onnx-node && touch build/onnx-node/.complete; }

build: setup
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS)

# Only what test-asan runs: the tests (the CLI, server and benchmarks are the release build's).
build-asan: setup
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS) --target minnow_tests

# aarch64 Linux (phones, boards), cross-compiled and statically linked: cmake/aarch64-linux-gnu.cmake.
build-aarch64: setup
	@cmake --preset aarch64 >/dev/null
	@cmake --build --preset aarch64 -j $(JOBS) --target minnow minnow_tests

# A stripped static aarch64 minnow for an Android adb shell, Termux or any ARM Linux board.
dist: build-aarch64
	@mkdir -p dist
	@aarch64-linux-gnu-strip -o dist/minnow-aarch64-linux build/aarch64/minnow
	@echo "dist/minnow-aarch64-linux: $$(stat -c %s dist/minnow-aarch64-linux) bytes (static, stripped, armv8-a; dotprod/i8mm kernels chosen at run time)"

demo: build models
	@echo "minnow: streaming an answer from $(MODEL)"
	@build/release/minnow run -m $(MODEL) --chat --temp 0 -n 64 -p "$(PROMPT)"

# The OpenAI-compatible server with the web chat page at http://127.0.0.1:8080/
serve: build models
	@build/release/minnow serve -m $(MODEL)

# The stages in turn, each timed (scripts/run-stages prints the table CI's budget is read from).
test:
	@scripts/run-stages setup build build-asan build-aarch64 models test-unit test-asan test-aarch64 test-e2e test-java test-python

test-unit: build models
	@echo "== unit + golden tests (Release, SIMD kernels; the Vulkan kernels on lavapipe)"
	@MINNOW_REQUIRE_VULKAN=1 build/release/minnow_tests --gtest_brief=1
	@echo "== unit + golden tests (Release, scalar kernels forced; two of the five golden prompts)"
	@# The scalar kernels are the SIMD kernels' oracle (Kernels.*, many shapes); the golden check with them forced
	@# needs a text and a chat prompt, not all five (170 s saved). The GPU path is the same.
	@# Qwen2.5-Coder-0.5B's golden check runs in the SIMD run above only (38 s scalar; same kernels as SmolLM2's and Gemma's).
	@MINNOW_GOLDEN_PROMPTS=english,chat MINNOW_FORCE_SCALAR=1 build/release/minnow_tests --gtest_brief=1 --gtest_filter='-*Vulkan*:GoldenModels.Qwen*'

test-asan: build-asan models
	@echo "== unit + golden tests (ASan + UBSan; SmolLM2's golden check on two of the five prompts)"
	@# The release run has the rest: the Vulkan golden checks and six of the seven tiny models
	@# on lavapipe (the device's time is not ASan's to check; llama.gguf covers the host code,
	@# partial offload too), Qwen 0.5B (large) and Gemma 3's golden check (its weights' kernels
	@# are PackedFile.Gemma3*'s here, its family code the tiny gemma3's).
	@ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp UBSAN_OPTIONS=print_stacktrace=1 \
		MINNOW_GOLDEN_PROMPTS=english,chat build/asan/minnow_tests --gtest_brief=1 \
		--gtest_filter='-GoldenModels.*Vulkan:GoldenModels.Qwen*:GoldenModels.Gemma3:Families/TinyModelsVulkan.*/llama:Families/TinyModelsVulkan.*/qwen*:Families/TinyModelsVulkan.*/gemma3'

# The aarch64 build under qemu-aarch64 at three ISA levels (what runs where: docs/arm.md).
test-aarch64: build-aarch64 models
	@scripts/test-aarch64

test-e2e: build models
	@echo "== CLI end-to-end tests"
	@.venv/bin/python -m pytest -q --durations=12 tests/e2e  # lists the slowest: the CI budget

# The JNI binding (bindings/java) against the CLI: docs/java.md.
test-java: build models
	@scripts/test-java

# The Python package (pip install . into build/python-venv) against the CLI.
test-python: build models
	@scripts/test-python

bench: build models
	@build/release/minnow bench -m $(MODEL) -p 128 -n 64 -t 2

# Encode throughput against the `tokenizers` package (single thread, same corpus).
bench-tokenizer: build
	@.venv/bin/python bench/tokenizer_compare.py

# Side by side with llama.cpp (built once from the pinned llama-cpp-python sdist into .cache/llama.cpp/).
# COMPARE_ARGS: e.g. "--rounds 1" for a quick look, "--perplexity" for wikitext-2 perplexity.
COMPARE_ARGS ?=
bench-compare: build models
	@.venv/bin/python bench/compare/compare.py $(COMPARE_ARGS)

# Aggregate decode throughput of minnow serve with 1, 2 and 4 concurrent streams.
SERVE_BENCH_ARGS ?=
bench-serve: build models
	@.venv/bin/python bench/serve_bench.py --model $(MODEL) $(SERVE_BENCH_ARGS)

# Instructions per token of the aarch64 build against llama.cpp's, under qemu (bench/arm/README.md).
# ARM_ARGS: e.g. --quick, or --llama-from .cache/arm-insn/runs/DATE.json to re-measure minnow alone.
ARM_ARGS ?=
bench-arm: build-aarch64 models
	@cmake --build --preset aarch64 -j $(JOBS) --target minnow_packed_insns
	@.venv/bin/python bench/arm/insn_compare.py $(ARM_ARGS)

# Regenerates the golden data with transformers (big: torch in its own virtualenv).
golden: models
	@tests/reference/setup-venv.sh
	@.venv-ref/bin/python tests/reference/make_golden_smollm2.py
	@.venv-ref/bin/python tests/reference/make_golden_minilm.py

clean:
	rm -rf build
