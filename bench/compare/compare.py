#!/usr/bin/env python3
"""minnow against llama.cpp on the same machine, the same GGUF files and the same threads.

See bench/compare/README.md. Standard library only; run from anywhere:

    python3 bench/compare/compare.py                 # full run (5 rounds), writes bench/compare/results.md
    python3 bench/compare/compare.py --rounds 1      # quick look
    python3 bench/compare/compare.py --perplexity    # llama.cpp's wikitext-2 perplexity (and minnow's, once it has one)
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LLAMA_CPP_PYTHON_VERSION = "0.3.36"  # pinned: llama-cpp-python sdist on PyPI, vendors llama.cpp
CACHE = ROOT / ".cache" / "llama.cpp" / LLAMA_CPP_PYTHON_VERSION
SRC = CACHE / "sdist" / "vendor" / "llama.cpp"
BUILD = CACHE / "build"
BIN = BUILD / "bin"
TOOLS = ["llama-bench", "llama-quantize", "llama-perplexity", "llama-imatrix"]
DEFAULT_MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
WIKITEXT = ROOT.parent / "shared" / "data" / "wikitext-2-raw" / "wiki.test.raw"
RESULTS_MD = ROOT / "bench" / "compare" / "results.md"
PERPLEXITY_MD = ROOT / "bench" / "compare" / "perplexity.md"
TIME = "/usr/bin/time"


def log(msg: str) -> None:
    print(f"[compare] {msg}", file=sys.stderr, flush=True)


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], check=True, text=True, **kw)


# ----------------------------------------------------------------------------- set-up


def ensure_time_tool() -> None:
    if Path(TIME).exists():
        return
    log("installing GNU time (apt-get install time) for peak RSS")
    run(["apt-get", "update", "-qq"])
    run(["apt-get", "install", "-y", "-qq", "time"])


def ensure_llama_cpp(jobs: int) -> None:
    """Downloads the pinned llama-cpp-python sdist and builds the three llama.cpp tools (CPU only)."""
    if all((BIN / t).exists() for t in TOOLS):
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    tarball = CACHE / f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"
    if not tarball.exists():
        log(f"downloading the llama-cpp-python {LLAMA_CPP_PYTHON_VERSION} source distribution")
        run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
             f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}", "-d", CACHE])
    if not (SRC / "CMakeLists.txt").exists():
        log("unpacking")
        tmp = CACHE / "sdist.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        with tarfile.open(tarball) as tf:
            tf.extractall(tmp, filter="data") if hasattr(tarfile, "data_filter") else tf.extractall(tmp)
        (top,) = list(tmp.iterdir())
        shutil.rmtree(CACHE / "sdist", ignore_errors=True)
        top.rename(CACHE / "sdist")
        tmp.rmdir()
    for tool in TOOLS:
        sub = {"llama-bench": "llama-bench", "llama-quantize": "quantize", "llama-perplexity": "perplexity",
               "llama-imatrix": "imatrix"}[tool]
        if not (SRC / "tools" / sub).is_dir():
            sys.exit(f"this llama.cpp has no tools/{sub}: time llama.cpp through llama-cpp-python's API instead")
    log(f"building {', '.join(TOOLS)} with -j{jobs} (CPU only, GGML_NATIVE=ON) into {BUILD}")
    t0 = time.time()
    # -mno-amx-*: on Sapphire Rapids the native build's AMX kernels (tinygemm_kernel_amx, on
    # Q4_1) die with SIGILL; without them it runs (bench/compare/README.md).
    no_amx = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
    run(["cmake", "-S", SRC, "-B", BUILD, "-DCMAKE_BUILD_TYPE=Release", "-DGGML_NATIVE=ON",
         f"-DCMAKE_C_FLAGS={no_amx}", f"-DCMAKE_CXX_FLAGS={no_amx}",
         "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
         "-DLLAMA_BUILD_SERVER=OFF", "-DLLAMA_BUILD_APP=OFF", "-DLLAMA_OPENSSL=OFF", "-DLLAMA_CURL=OFF"],
        stdout=subprocess.DEVNULL)
    run(["cmake", "--build", BUILD, "-j", str(jobs), "--target", *TOOLS], stdout=subprocess.DEVNULL)
    secs = time.time() - t0
    (CACHE / "build-seconds.txt").write_text(f"{secs:.0f}\n")
    log(f"llama.cpp tools built in {secs / 60:.1f} min")


def llama_commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(SRC), "rev-parse", "--short=10", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown"


def ensure_membw() -> Path:
    """The streaming-read tool: the CMake-built one if present, else compiled here from bench/membw.cpp."""
    built = ROOT / "build" / "release" / "minnow_membw"
    src = ROOT / "bench" / "membw.cpp"
    if built.exists() and built.stat().st_mtime >= src.stat().st_mtime:
        return built
    out = CACHE / "minnow_membw"
    if not out.exists() or out.stat().st_mtime < src.stat().st_mtime:
        CACHE.mkdir(parents=True, exist_ok=True)
        run(["g++", "-std=c++20", "-O2", "-pthread", src, "-o", out])
    return out


def snapshot_minnow() -> Path:
    """A private copy of build/release/minnow: others may rebuild it while the comparison runs."""
    exe = ROOT / "build" / "release" / "minnow"
    if not exe.exists():
        sys.exit("build/release/minnow is missing: run `make build` first")
    snap = CACHE / "minnow-under-test"
    shutil.copy2(exe, snap)
    return snap


def quantized(src: Path, qtype: str) -> Path:
    out = CACHE / "models" / f"{src.stem.rsplit('.', 1)[0]}.{qtype}.gguf"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        log(f"llama-quantize --allow-requantize {src.name} -> {out.name}")
        tmp = out.with_suffix(".tmp")
        run([BIN / "llama-quantize", "--allow-requantize", src, tmp, qtype], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        tmp.rename(out)
    return out


# ----------------------------------------------------------------------------- GGUF


def gguf_tensor_data_bytes(path: Path) -> int:
    """Size of a GGUF file's tensor data section: file size minus the aligned end of the header."""
    with open(path, "rb") as f:
        if f.read(4) != b"GGUF":
            raise ValueError(f"{path}: not GGUF")
        (version,) = struct.unpack("<I", f.read(4))
        if version < 2:
            raise ValueError(f"{path}: GGUF v{version} not handled")
        n_tensors, n_kv = struct.unpack("<QQ", f.read(16))
        fixed = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

        def string() -> bytes:
            (n,) = struct.unpack("<Q", f.read(8))
            return f.read(n)

        def value(t: int):
            if t in fixed:
                raw = f.read(fixed[t])
                return int.from_bytes(raw, "little") if t in (0, 2, 4, 10) else raw
            if t == 8:
                return string()
            if t == 9:
                et, n = struct.unpack("<IQ", f.read(12))
                if et in fixed:
                    f.seek(fixed[et] * n, 1)
                else:
                    for _ in range(n):
                        value(et)
                return None
            raise ValueError(f"{path}: unknown GGUF value type {t}")

        alignment = 32
        for _ in range(n_kv):
            key = string()
            (t,) = struct.unpack("<I", f.read(4))
            v = value(t)
            if key == b"general.alignment" and isinstance(v, int):
                alignment = v
        for _ in range(n_tensors):
            string()
            (n_dims,) = struct.unpack("<I", f.read(4))
            f.seek(8 * n_dims + 4 + 8, 1)
        start = (f.tell() + alignment - 1) // alignment * alignment
    return path.stat().st_size - start


# ----------------------------------------------------------------------------- measuring


def timed(cmd: list, cwd: Path = ROOT) -> tuple[str, float]:
    """Runs cmd under GNU time; returns (stdout, peak RSS in MiB)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time", delete=False) as tf:
        tpath = tf.name
    try:
        p = subprocess.run([TIME, "-v", "-o", tpath, *[str(c) for c in cmd]], cwd=cwd, capture_output=True,
                           text=True)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stderr[-2000:]}")
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", Path(tpath).read_text())
        return p.stdout, (int(m.group(1)) / 1024.0 if m else float("nan"))
    finally:
        os.unlink(tpath)


def bench_llama(model: Path, threads: int) -> dict:
    """One llama-bench process: pp128, pp512, tg128 and pg128+1, one repetition each after its warm-up."""
    out, rss = timed([BIN / "llama-bench", "-m", model, "-t", threads, "-p", "128,512", "-n", "128",
                      "-pg", "128,1", "-r", "1", "-o", "json"])
    res = {"peak_rss_mib": rss}
    for test in json.loads(out):
        ts = statistics.median(test["samples_ts"])
        p, n = test["n_prompt"], test["n_gen"]
        if p and n:
            res[f"pg{p}+{n}"] = ts
        elif p:
            res[f"pp{p}"] = ts
        else:
            res[f"tg{n}"] = ts
        res["build_commit"] = test.get("build_commit", "")
    # TTFT: the first token is sampled from the prompt's logits, so it is the time of the 128-token prefill.
    res["ttft_ms"] = 128 / res["pp128"] * 1e3
    res["pp128_plus_decode_ms"] = 129 / res["pg128+1"] * 1e3
    return res


def bench_minnow(exe: Path, model: Path, threads: int, extra: list[str]) -> dict:
    """Three minnow bench processes (pp128 + TTFT, pp512, tg128), one repetition each after its warm-up."""
    res: dict = {}
    rss = []

    def call(p: int, n: int) -> dict:
        out, r = timed([exe, "bench", "-m", model, "-t", threads, "-p", p, "-n", n, "-r", "1",
                        "--ctx", p + n, "--json", *extra])
        rss.append(r)
        return json.loads(out.strip().splitlines()[-1])

    j = call(128, 1)
    res["pp128"], res["ttft_ms"] = j["prefill_tok_s"], j["ttft_ms"]
    res["weight_mb"] = j.get("weight_mb")
    res["pp512"] = call(512, 1)["prefill_tok_s"]
    res["tg128"] = call(1, 129)["decode_tok_s"]  # 128 decode steps after a 1-token prompt, like llama-bench's tg128
    res["peak_rss_mib"] = max(rss)
    return res


def bench_membw(exe: Path, threads: list[int]) -> dict:
    out = subprocess.run([str(exe), "--json", "--mib", "1024", "--passes", "10", "--threads",
                          ",".join(map(str, threads))], capture_output=True, text=True, check=True).stdout
    return {r["threads"]: r["median_gbs"] for r in json.loads(out)["results"]}


# ----------------------------------------------------------------------------- report


def machine() -> dict:
    info = {"cpu": platform.processor() or "?", "cores": os.cpu_count(), "ram_gib": "?"}
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        m = re.search(r"Model name:\s*(.+)", lscpu)
        if m:
            info["cpu"] = m.group(1).strip()
        flags = re.search(r"Flags:\s*(.+)", lscpu)
        fl = set(flags.group(1).split()) if flags else set()
        info["isa"] = ", ".join(x for x in ("avx2", "fma", "f16c", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")
                                if x in fl)
        for key in ("L2 cache", "L3 cache"):
            m = re.search(rf"{key}:\s*(.+)", lscpu)
            if m:
                info[key] = m.group(1).strip()
    except FileNotFoundError:
        pass
    try:
        mem = subprocess.run(["free", "-b"], capture_output=True, text=True).stdout.splitlines()[1].split()
        info["ram_gib"] = f"{int(mem[1]) / 2**30:.1f}"
    except (FileNotFoundError, IndexError, ValueError):
        pass
    return info


def minnow_commit() -> str:
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return head + (" + uncommitted changes" if dirty else "")
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown"


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def fmt(x: float | None, digits: int = 1) -> str:
    if x is None or x != x:
        return "–"
    return f"{x:.{digits}f}"


def short(model: Path) -> str:
    """SmolLM2-135M-Instruct.Q4_1.gguf -> Q4_1"""
    parts = model.name.split(".")
    return parts[-2] if len(parts) >= 3 else model.name


def render(meta: dict, data: dict, models: list[Path], threads: list[int], bw: dict) -> str:
    m = meta["machine"]
    lines = [
        "## minnow vs llama.cpp, same machine, same GGUF files, same threads",
        "",
        f"- Date: {meta['date']}; {meta['rounds']} rounds, the engines alternating within each round "
        "(llama.cpp first in odd rounds, minnow first in even); figures are medians over rounds.",
        f"- Machine: {m['cpu']}, {m['cores']} cores ({m.get('isa', '')}), L2 {m.get('L2 cache', '?')}, "
        f"L3 {m.get('L3 cache', '?')}, {m['ram_gib']} GiB RAM. Load average at start / end: "
        f"{meta['load_start']} / {meta['load_end']}.{' ' + meta['note'] if meta['note'] else ''}",
        f"- llama.cpp: `llama-bench` built from llama-cpp-python {LLAMA_CPP_PYTHON_VERSION}'s vendored llama.cpp "
        f"(commit {meta['llama_commit']}), CPU only, GGML_NATIVE=ON less AMX (its AMX kernels die with "
        "SIGILL on Sapphire Rapids, README), defaults otherwise (repack on, flash attention auto). "
        "minnow: commit " + meta["minnow_commit"] + ".",
        "- Streaming-read bandwidth (bench/membw.cpp, 1 GiB, median pass, median over rounds): "
        + ", ".join(f"{t} thread{'s' if t > 1 else ''} {bw[t]:.1f} GB/s" for t in threads) + ".",
        "",
        "Files: " + ", ".join(f"`{m_.name}` ({meta['weight_bytes'][m_.name] / 1e6:.1f} MB of tensor data)"
                              for m_ in models) + ". Cells: median over rounds, (min-max) in parentheses.",
        "",
        "| file | threads | figure | llama.cpp | minnow | minnow / llama.cpp |",
        "|---|---|---|---|---|---|",
    ]
    figures = [("pp128", "pp128 (tok/s)", 1), ("pp512", "pp512 (tok/s)", 1), ("tg128", "tg128 (tok/s)", 1),
               ("ttft_ms", "TTFT, 128-token prompt (ms)", 0), ("peak_rss_mib", "peak RSS (MiB)", 0),
               ("bw_frac", "tg128 as % of bandwidth bound", 0)]
    for model in models:
        for t in threads:
            for key, label, digits in figures:
                vals = {e: data[model.name][t][e][key] for e in ("llama", "minnow")}
                med = {e: statistics.median(v) for e, v in vals.items()}
                ratio = med["minnow"] / med["llama"] if med["llama"] else float("nan")
                unit = " %" if key == "bw_frac" else ""
                cell = {e: fmt(med[e], digits) + unit + (f" ({fmt(min(v), digits)}-{fmt(max(v), digits)})"
                                                         if len(v) > 1 else "") for e, v in vals.items()}
                lines.append(f"| {short(model)} | {t} | {label} | {cell['llama']} | {cell['minnow']} | {ratio:.2f} |")
    lines += [
        "",
        "How each figure is taken:",
        "- pp128, pp512, tg128: llama.cpp from one `llama-bench -p 128,512 -n 128 -pg 128,1 -r 1 -o json` process "
        "per round (each test after llama-bench's own warm-up); minnow from `minnow bench -r 1 --json` with "
        "`-p 128 -n 1`, `-p 512 -n 1` and `-p 1 -n 129` (128 decode steps from an almost empty cache, as in "
        "llama-bench's tg128), each after minnow's own warm-up repetition, `--ctx` set to the tokens used as "
        "llama-bench sizes its context.",
        "- TTFT: the first generated token is sampled from the prompt's logits, so for llama.cpp it is "
        "128 / pp128 (llama-bench times `llama_decode` of the 128-token batch; sampling one token from 49,152 "
        "logits adds microseconds); for minnow it is `minnow bench`'s `ttft_ms`: wall time from "
        "`Session::generate` to the first token's callback (prefill, greedy sampling, detokenizing). "
        "For reference, llama.cpp's prefill plus one decode step (`-pg 128,1`: 129 / t/s) was "
        + ", ".join(f"{short(m_)} t={t} {statistics.median(data[m_.name][t]['llama']['pp128_plus_decode_ms']):.0f} ms"
                    for m_ in models for t in threads) + ".",
        "- Peak RSS: `/usr/bin/time -v`'s maximum resident set size of each process (both engines measured "
        "the same way; file-backed mmap pages count once touched). llama.cpp: the one llama-bench process "
        "(largest context 512); minnow: the largest of its three processes (the pp512 one, context 513).",
        "- Bandwidth bound: tensor data bytes of the file (what one decoded token reads: every matrix, the "
        "tied embedding as output head) x tg128 tok/s, divided by the streaming-read bandwidth at that "
        "thread count.",
        "- Ratios are minnow / llama.cpp: above 1 is better for minnow in tok/s and bandwidth fraction, "
        "below 1 is better for TTFT and RSS.",
    ]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- modes


def parse_list(s: str) -> list[int]:
    return [int(x) for x in s.split(",") if x]


# The real models beyond the default one, each timed when scripts/fetch-models has fetched it.
OPTIONAL_MODELS = [("gemma-3-270m-Q4_K_M.gguf", "--gemma3"),
                   ("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "--qwen05"),
                   ("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "--qwen15")]


def resolve_models(args) -> list[Path]:
    if args.models:
        return [Path(m).resolve() for m in args.models]
    if not DEFAULT_MODEL.exists():
        sys.exit(f"{DEFAULT_MODEL} is missing: run `make models`")
    models = [DEFAULT_MODEL, quantized(DEFAULT_MODEL, "Q4_0"), quantized(DEFAULT_MODEL, "Q8_0")]
    for name, flag in OPTIONAL_MODELS:
        path = ROOT / "models" / name
        if path.exists():
            models.append(path)
        else:
            log(f"{name} is not here: `scripts/fetch-models {flag}` adds it to the comparison")
    return models


def speed(args) -> None:
    threads = parse_list(args.threads)
    models = resolve_models(args)
    minnow = snapshot_minnow()
    membw = ensure_membw()
    meta = {
        "date": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "rounds": args.rounds,
        "machine": machine(),
        "load_start": loadavg(),
        "llama_commit": llama_commit(),
        "minnow_commit": minnow_commit(),
        "note": args.note + (f" minnow ran with `{args.minnow_args}`." if args.minnow_args else ""),
        "weight_bytes": {m.name: gguf_tensor_data_bytes(m) for m in models},
    }
    data = {m.name: {t: {"llama": {}, "minnow": {}} for t in threads} for m in models}
    bws: dict[int, list[float]] = {t: [] for t in threads}
    t_start = time.time()
    for rnd in range(args.rounds):
        for t, g in bench_membw(membw, threads).items():
            bws[t].append(g)
        for model in models:
            for t in threads:
                order = ["llama", "minnow"] if rnd % 2 == 0 else ["minnow", "llama"]
                for engine in order:
                    r = bench_llama(model, t) if engine == "llama" else bench_minnow(minnow, model, t, args.minnow_args.split())
                    for k, v in r.items():
                        if isinstance(v, (int, float)) and v is not None:
                            data[model.name][t][engine].setdefault(k, []).append(float(v))
                    log(f"round {rnd + 1}/{args.rounds} {model.name} t={t} {engine:6s} "
                        f"pp128 {r['pp128']:.0f} pp512 {r['pp512']:.0f} tg128 {r['tg128']:.1f} "
                        f"ttft {r['ttft_ms']:.0f} ms rss {r['peak_rss_mib']:.0f} MiB")
        log(f"round {rnd + 1} done after {(time.time() - t_start) / 60:.1f} min")
    bw = {t: statistics.median(v) for t, v in bws.items()}
    for model in models:
        wb = meta["weight_bytes"][model.name]
        for t in threads:
            for engine in ("llama", "minnow"):
                d = data[model.name][t][engine]
                d["bw_frac"] = [100.0 * wb * tg / (bw[t] * 1e9) for tg in d["tg128"]]
    meta["load_end"] = loadavg()
    md = render(meta, data, models, threads, bw)
    print(md)
    raw = CACHE / "runs" / f"{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text(json.dumps({"meta": meta, "bandwidth_gbs": bws, "data": data}, indent=1))
    if not args.no_write:
        RESULTS_MD.write_text(md)
        log(f"wrote {RESULTS_MD.relative_to(ROOT)} (raw per-round figures: {raw.relative_to(ROOT)})")


PPL_RE = re.compile(r"Final estimate: PPL = ([0-9.]+) \+/- ([0-9.]+)")


def perplexity(args) -> None:
    if not WIKITEXT.exists():
        sys.exit(f"{WIKITEXT} is missing")
    models = resolve_models(args)
    threads = max(parse_list(args.threads))
    chunk_args = [] if args.chunks == "all" else ["--chunks", args.chunks]
    minnow = ROOT / "build" / "release" / "minnow"
    has_minnow_ppl = minnow.exists() and "perplexity" in subprocess.run(
        [str(minnow), "--help"], capture_output=True, text=True).stdout
    rows = []
    for model in models:
        log(f"llama-perplexity {model.name} -c 512 {' '.join(chunk_args) or '(all chunks)'} -t {threads}")
        t0 = time.time()
        p = subprocess.run([str(BIN / "llama-perplexity"), "-m", str(model), "-f", str(WIKITEXT), "-c", "512",
                            "-t", str(threads), *chunk_args], capture_output=True, text=True)
        m = PPL_RE.search(p.stdout + p.stderr)
        if p.returncode != 0 or not m:
            sys.exit(f"llama-perplexity failed:\n{(p.stdout + p.stderr)[-3000:]}")
        llama = f"{float(m.group(1)):.4f} ± {float(m.group(2)):.4f}"
        log(f"  PPL {llama} in {time.time() - t0:.0f} s")
        mine = "– (no `minnow perplexity` yet)"
        if has_minnow_ppl:
            log(f"minnow perplexity {model.name} --ctx 512 {' '.join(chunk_args) or '(all chunks)'} -t {threads}")
            t0 = time.time()
            q = subprocess.run([str(minnow), "perplexity", "-m", str(model), "-f", str(WIKITEXT), "--ctx", "512",
                                "-t", str(threads), *chunk_args], capture_output=True, text=True)
            # "perplexity X over N chunks ..." (today) or llama.cpp's "PPL = X +/- Y".
            mm = re.search(r"(?:PPL = |^perplexity )([0-9.]+)(?: \+/- ([0-9.]+))?", q.stdout, re.M)
            mine = (f"{float(mm.group(1)):.4f}" + (f" ± {float(mm.group(2)):.4f}" if mm.group(2) else "")
                    if q.returncode == 0 and mm else "failed")
            n_tok = re.search(r"perplexity: (\d+) tokens", q.stderr)
            log(f"  PPL {mine} in {time.time() - t0:.0f} s" + (f" (the file is {n_tok.group(1)} tokens)" if n_tok else ""))
        rows.append(f"| {model.name} | {args.chunks} | {llama} | {mine} |")
    md = "\n".join([
        "## Perplexity, wikitext-2 test set",
        "",
        f"{dt.datetime.now():%Y-%m-%d}; `llama-perplexity -m FILE -f wiki.test.raw -c 512 -t {threads}"
        f"{' --chunks ' + args.chunks if chunk_args else ''}` (llama-cpp-python {LLAMA_CPP_PYTHON_VERSION}, "
        f"llama.cpp {llama_commit()}); the figure is its final estimate, ± its standard error.",
        "",
        "minnow: `minnow perplexity -m FILE -f wiki.test.raw --ctx 512 -t " + str(threads)
        + (" --chunks " + args.chunks if chunk_args else "") + "` (" + minnow_commit() + ").",
        "",
        "| file | chunks of 512 | llama.cpp PPL | minnow PPL |",
        "|---|---|---|---|",
        *rows,
    ]) + "\n"
    print(md)
    if not args.no_write:
        PERPLEXITY_MD.write_text(md)
        log(f"wrote {PERPLEXITY_MD.relative_to(ROOT)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5, help="rounds, each running both engines once (default 5)")
    ap.add_argument("--threads", default="1,2", help="thread counts (default 1,2)")
    ap.add_argument("--models", nargs="+", help="GGUF files (default: the Q4_1 SmolLM2 file plus Q4_0 and Q8_0 "
                    "versions made with llama-quantize --allow-requantize, then Gemma 3 270M and Qwen2.5-Coder "
                    "0.5B and 1.5B Q4_K_M where scripts/fetch-models has fetched them)")
    ap.add_argument("--note", default="", help="a sentence added to the machine line (e.g. 'Shared machine.')")
    ap.add_argument("--minnow-args", default="", help="extra flags for minnow bench, e.g. '--int8-decode' (int8 "
                    "activations, llama.cpp's precision); said in the table's notes")
    ap.add_argument("--no-write", action="store_true", help="print only; leave bench/compare/*.md alone")
    ap.add_argument("--jobs", type=int, default=2, help="parallel jobs for the one-time llama.cpp build (default 2)")
    ap.add_argument("--perplexity", action="store_true", help="run llama-perplexity on wikitext-2 instead")
    ap.add_argument("--chunks", default="40", help="perplexity: chunks of 512 tokens, or 'all' (default 40)")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    ensure_time_tool()
    ensure_llama_cpp(args.jobs)
    (perplexity if args.perplexity else speed)(args)


if __name__ == "__main__":
    main()
