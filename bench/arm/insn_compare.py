#!/usr/bin/env python3
"""Instructions per token of minnow's and llama.cpp's aarch64 builds, counted under qemu-aarch64.

See bench/arm/README.md. Standard library only; run from the repository root:

    .venv/bin/python bench/arm/insn_compare.py            # everything, writes bench/arm/results.md
    .venv/bin/python bench/arm/insn_compare.py --quick    # Q4_1 under -cpu max only, shorter runs
    .venv/bin/python bench/arm/insn_compare.py --build-only

It builds what is missing (the qemu TCG plugin that counts instructions, llama.cpp's
llama-bench and llama-quantize for aarch64 at two -march levels, a Q4_0 copy of the default
model), then runs every engine at two prompt lengths and two generation lengths under each
qemu CPU model with one thread, and divides the differences by the token differences.
"""
from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "compare"))
import compare  # noqa: E402  (the pinned llama.cpp source, its download, GGUF tensor bytes)

CACHE = compare.CACHE                                 # .cache/llama.cpp/<version>
SRC = compare.SRC                                     # .../sdist/vendor/llama.cpp
PLUGIN_SRC = ROOT.parent / "shared" / "tools" / "qemu-insn" / "insn_count.c"
PLUGIN = ROOT / ".cache" / "qemu-insn" / "insn_count.so"
TOOLCHAIN = ROOT / "bench" / "arm" / "aarch64-linux-gnu.cmake"
MINNOW = ROOT / "build" / "aarch64" / "minnow"
MINNOW_BENCH_SRC = ROOT / "src" / "cli" / "cmd_bench.cpp"
RESULTS_MD = ROOT / "bench" / "arm" / "results.md"
RUNS = ROOT / ".cache" / "arm-insn" / "runs"
LLAMA_TOOLS = ["llama-bench", "llama-quantize"]
DEFAULT_LEVELS = ["armv8-a", "armv8.2-a+dotprod", "armv8.2-a+dotprod+i8mm"]
DEFAULT_CPUS = ["cortex-a53", "cortex-a76", "max"]
# What each qemu CPU model offers (QEMU 7.2): which -march levels run on it.
CPU_FEATURES = {
    "cortex-a53": {"neon"},
    "cortex-a57": {"neon"},
    "cortex-a72": {"neon"},
    "cortex-a76": {"neon", "dotprod"},
    "neoverse-n1": {"neon", "dotprod"},
    "a64fx": {"neon", "sve"},
    "max": {"neon", "dotprod", "i8mm", "sve"},
}


def log(msg: str) -> None:
    print(f"[insn] {msg}", file=sys.stderr, flush=True)


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], check=True, text=True, **kw)


# ----------------------------------------------------------------------------- set-up


def check_tools() -> None:
    missing = [t for t in ("aarch64-linux-gnu-g++", "aarch64-linux-gnu-objdump", "qemu-aarch64", "cmake", "gcc")
               if shutil.which(t) is None]
    if missing:
        sys.exit(f"missing {', '.join(missing)}: apt-get install g++-aarch64-linux-gnu qemu-user cmake gcc "
                 "(`scripts/setup` will install them)")


def ensure_plugin() -> Path:
    """The instruction-counting TCG plugin, compiled once into .cache/qemu-insn/."""
    if not PLUGIN_SRC.exists():
        sys.exit(f"{PLUGIN_SRC} is missing (the qemu-insn plugin source)")
    if not PLUGIN.exists() or PLUGIN.stat().st_mtime < PLUGIN_SRC.stat().st_mtime:
        PLUGIN.parent.mkdir(parents=True, exist_ok=True)
        log(f"building the qemu plugin {PLUGIN.relative_to(ROOT)}")
        run(["gcc", "-O2", "-shared", "-fPIC", "-o", PLUGIN, PLUGIN_SRC])
    return PLUGIN


def ensure_source() -> None:
    """The pinned llama-cpp-python sdist, fetched and unpacked exactly as bench/compare/compare.py does."""
    if (SRC / "CMakeLists.txt").exists():
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    tarball = CACHE / f"llama_cpp_python-{compare.LLAMA_CPP_PYTHON_VERSION}.tar.gz"
    if not tarball.exists():
        log(f"downloading the llama-cpp-python {compare.LLAMA_CPP_PYTHON_VERSION} source distribution")
        run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
             f"llama-cpp-python=={compare.LLAMA_CPP_PYTHON_VERSION}", "-d", CACHE])
    import tarfile
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


def build_dir(level: str) -> Path:
    return CACHE / f"build-aarch64-{level}"


def level_needs(level: str) -> set[str]:
    need = {"neon"}
    for feat in ("dotprod", "i8mm", "sve"):
        if f"+{feat}" in level:
            need.add(feat)
    return need


def count_insn(binary: Path, mnemonics: tuple[str, ...] = ("sdot", "udot", "smmla", "ummla")) -> dict[str, int]:
    """How often each mnemonic appears in the disassembly (to check what a -march level really compiled)."""
    out = subprocess.run(["aarch64-linux-gnu-objdump", "-d", "--no-show-raw-insn", str(binary)],
                         capture_output=True, text=True, check=True).stdout
    counts = dict.fromkeys(mnemonics, 0)
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) >= 2:
            m = parts[1].strip().split(" ", 1)[0]
            if m in counts:
                counts[m] += 1
    return counts


def ensure_llama(level: str, jobs: int) -> Path:
    """llama-bench and llama-quantize for aarch64 Linux at -march=LEVEL, static, CPU only, no OpenMP."""
    bdir = build_dir(level)
    bindir = bdir / "bin"
    if all((bindir / t).exists() for t in LLAMA_TOOLS):
        return bindir
    ensure_source()
    log(f"building llama.cpp {', '.join(LLAMA_TOOLS)} for aarch64 -march={level} with -j{jobs} into "
        f"{bdir.relative_to(ROOT)} (10-30 min on 2 cores)")
    t0 = time.time()
    bdir.mkdir(parents=True, exist_ok=True)
    build_log = bdir / "build.log"  # static-link warnings (dlopen, getpwuid, getaddrinfo) are expected there
    with open(build_log, "w") as lf:
        for cmd in (["cmake", "-S", SRC, "-B", bdir, f"-DCMAKE_TOOLCHAIN_FILE={TOOLCHAIN}",
                     "-DCMAKE_BUILD_TYPE=Release", "-DGGML_NATIVE=OFF", f"-DGGML_CPU_ARM_ARCH={level}",
                     "-DGGML_OPENMP=OFF", "-DGGML_STATIC=ON", "-DBUILD_SHARED_LIBS=OFF", "-DGGML_BACKEND_DL=OFF",
                     "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_SERVER=OFF",
                     "-DLLAMA_BUILD_APP=OFF", "-DLLAMA_OPENSSL=OFF", "-DLLAMA_CURL=OFF"],
                    ["cmake", "--build", bdir, "-j", str(jobs), "--target", *LLAMA_TOOLS]):
            lf.write("$ " + " ".join(map(str, cmd)) + "\n")
            lf.flush()
            if subprocess.run([str(c) for c in cmd], stdout=lf, stderr=subprocess.STDOUT).returncode != 0:
                sys.exit(f"llama.cpp aarch64 build failed; see {build_log}:\n" +
                         "\n".join(build_log.read_text().splitlines()[-30:]))
    secs = time.time() - t0
    (bdir / "build-seconds.txt").write_text(f"{secs:.0f}\n")
    log(f"llama.cpp -march={level} built in {secs / 60:.1f} min")
    return bindir


def llama_build_info(level: str) -> dict:
    bdir = build_dir(level)
    info = {"level": level, "seconds": None, "insn": count_insn(bdir / "bin" / "llama-bench")}
    sec = bdir / "build-seconds.txt"
    if sec.exists():
        info["seconds"] = float(sec.read_text().strip())
    return info


def quantized_q4_0(src: Path, levels: list[str]) -> Path:
    """A Q4_0 copy of src (same path as bench/compare uses): the x86 llama-quantize if built, else the aarch64
    one under qemu."""
    out = CACHE / "models" / f"{src.stem.rsplit('.', 1)[0]}.Q4_0.gguf"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    x86 = compare.BIN / "llama-quantize"
    if x86.exists():
        cmd = [x86]
    else:
        cmd = ["qemu-aarch64", "-cpu", "max", build_dir(levels[0]) / "bin" / "llama-quantize"]
    log(f"llama-quantize --allow-requantize {src.name} -> {out.name}" + ("" if x86.exists() else " (under qemu)"))
    run([*cmd, "--allow-requantize", src, tmp, "Q4_0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tmp.rename(out)
    return out


def snapshot_minnow(exe: Path) -> Path | None:
    """A private copy of build/aarch64/minnow (it may be rebuilt while this runs); None if not built."""
    if not exe.exists():
        return None
    with open(exe, "rb") as f:
        head = f.read(20)
    if head[:4] != b"\x7fELF" or int.from_bytes(head[18:20], "little") != 183:  # EM_AARCH64
        sys.exit(f"{exe} is not an aarch64 ELF program")
    snap = ROOT / ".cache" / "arm-insn" / "minnow-aarch64-under-test"
    snap.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(exe, snap)
    return snap


def minnow_passes_per_rep() -> int:
    """minnow bench runs one untimed warm-up repetition before the -r ones (src/cli/cmd_bench.cpp:
    `for (int rep = -1; ...`): with -r 1 every prompt and generation is done twice."""
    try:
        text = MINNOW_BENCH_SRC.read_text()
    except OSError:
        return 2
    return 2 if re.search(r"for\s*\(\s*int\s+rep\s*=\s*-1\s*;", text) else 1


# ----------------------------------------------------------------------------- measuring


SIGNALS = {-s.value: s.name for s in signal.Signals}


class Failed(Exception):
    pass


def qemu_insns(cpu: str, argv: list, env: dict | None = None, timeout: int = 3600) -> int:
    """Guest instructions of one run of argv under qemu-aarch64 -cpu CPU; raises Failed with a short reason."""
    with tempfile.TemporaryDirectory(prefix="insn-") as tmp:
        out = Path(tmp) / "insns.txt"
        cmd = ["qemu-aarch64", "-cpu", cpu, "-plugin", f"{PLUGIN},out={out}", *[str(a) for a in argv]]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp,
                               env={**os.environ, **(env or {})})
        except subprocess.TimeoutExpired:
            raise Failed(f"timeout after {timeout} s")
        if p.returncode != 0:
            why = SIGNALS.get(p.returncode, f"exit {p.returncode}")
            tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
            if "Illegal instruction" in (p.stderr or ""):
                why = "SIGILL"
            raise Failed(why + ("" if why == "SIGILL" else ": " + " | ".join(tail)))
        m = re.search(r"insns (\d+)", out.read_text() if out.exists() else "")
        if not m:
            raise Failed("no instruction count written")
        return int(m.group(1))


def llama_argv(bindir: Path, model: Path, p: int, n: int) -> list:
    # --no-warmup: llama-bench otherwise repeats the whole prompt (and one generated token) before timing.
    return [bindir / "llama-bench", "-m", model, "-p", p, "-n", n, "-r", 1, "-t", 1, "--no-warmup", "-o", "json"]


def minnow_argv(exe: Path, model: Path, p: int, n: int, extra: list[str]) -> list:
    return [exe, "bench", "-m", model, "-p", p, "-n", n, "-t", 1, "-r", 1, "--json", *extra]


def measure(engine: str, cpu: str, argv_for, sizes: dict, passes: int, raw: dict) -> dict:
    """Per-token instructions from two prompt lengths and two generation lengths.

    argv_for(kind, length) gives the command line; `passes` is how many times the program does
    the work per run (minnow bench: 2, its warm-up repetition included)."""
    res: dict = {}
    for kind in ("pp", "tg"):
        hi, lo = sizes[kind]
        counts = {}
        try:
            for length in (hi, lo):
                t0 = time.time()
                counts[length] = qemu_insns(cpu, argv_for(kind, length))
                log(f"  {engine:28s} -cpu {cpu:10s} {kind}{length:<4d} {counts[length] / 1e9:9.3f} G insns "
                    f"({time.time() - t0:.0f} s)")
        except Failed as e:
            log(f"  {engine:28s} -cpu {cpu:10s} {kind}{length:<4d} FAILED: {e}")
            res[kind] = None
            res[kind + "_error"] = str(e).split(":")[0]
            continue
        raw[f"{kind}{hi}"], raw[f"{kind}{lo}"] = counts[hi], counts[lo]
        res[kind] = (counts[hi] - counts[lo]) / ((hi - lo) * passes)
    return res


# ----------------------------------------------------------------------------- report


def fmt_m(x: float | None, err: str | None = None) -> str:
    if x is None:
        return f"{err} ✗" if err else "–"
    return f"{x / 1e6:.1f} M"


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a and b else "–"


def short(model: Path) -> str:
    return compare.short(model)


def render(meta: dict, rows: list[dict]) -> str:
    s = meta["sizes"]
    lines = [
        "## Instructions per token under qemu-aarch64: minnow vs llama.cpp (aarch64 builds, 1 thread)",
        "",
        f"- Date: {meta['date']}. qemu-aarch64 {meta['qemu']} with the `insn_count` TCG plugin "
        "(`../shared/tools/qemu-insn`): every guest instruction the process executes, one guest thread (`-t 1`).",
        f"- Prompt: (insns(`-p {s['pp'][0]}`) - insns(`-p {s['pp'][1]}`)) / {s['pp'][0] - s['pp'][1]}; "
        f"decode: (insns(`-n {s['tg'][0]}`) - insns(`-n {s['tg'][1]}`)) / {s['tg'][0] - s['tg'][1]}: "
        "load, start-up and the first tokens cancel; the prompt figure is the average over positions "
        f"{s['pp'][1]}..{s['pp'][0] - 1}, the decode one over positions {s['tg'][1]}..{s['tg'][0] - 1}.",
        f"- llama.cpp: `llama-bench ... -r 1 -t 1 --no-warmup` (llama-cpp-python {compare.LLAMA_CPP_PYTHON_VERSION}, "
        f"llama.cpp {meta['llama_commit']}), static aarch64 builds, GCC {meta['gcc']}, `GGML_NATIVE=OFF`, "
        "`GGML_CPU_ARM_ARCH=<level>`, no OpenMP; defaults otherwise (Q4_0 repacked at load: 4x8 rows for "
        "i8mm, 4x4 for dotprod, none for plain NEON).",
        f"- minnow: `build/aarch64/minnow bench ... -t 1 -r 1{(' ' + meta['minnow_args']) if meta['minnow_args'] else ''}` "
        f"({meta['minnow']}, {meta['minnow_binary']}); its warm-up repetition doubles "
        f"the work of each run, so its differences are divided by {meta['minnow_passes']} as well. Kernel table "
        "chosen from the CPU model's HWCAPs (cortex-a53: NEON, cortex-a76: dotprod, max: i8mm).",
        "",
        "| file | qemu -cpu | llama.cpp build | minnow insns / prompt tok | llama.cpp insns / prompt tok | "
        "prompt minnow / llama.cpp | minnow insns / gen tok | llama.cpp insns / gen tok | "
        "gen minnow / llama.cpp |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        mn, ll = r["minnow"], r["llama"]
        lines.append(
            f"| {r['file']} | {r['cpu']} | {r['level']} | {fmt_m(mn.get('pp'), mn.get('pp_error'))} | "
            f"{fmt_m(ll.get('pp'), ll.get('pp_error'))} | {ratio(mn.get('pp'), ll.get('pp'))} | "
            f"{fmt_m(mn.get('tg'), mn.get('tg_error'))} | {fmt_m(ll.get('tg'), ll.get('tg_error'))} | "
            f"{ratio(mn.get('tg'), ll.get('tg'))} |")
    lines += ["", "M = millions of guest instructions per token; ratio below 1: minnow executes fewer. "
              "`SIGILL ✗`: the build uses an instruction this CPU model lacks; `–`: not run."]
    if not meta["minnow_present"]:
        lines.append("minnow columns empty: `build/aarch64/minnow` did not exist when this ran (`make build-aarch64`).")
    lines += ["", "Bytes of weights read per decoded token (the GGUF file's tensor data: every matrix once, the "
              "tied embedding as output head):", ""]
    for f, b in meta["weight_bytes"].items():
        lines.append(f"- `{f}`: {b / 1e6:.1f} MB ({b:,} bytes)")
    lines += ["", "llama.cpp aarch64 builds (`.cache/llama.cpp/<version>/build-aarch64-<level>/`, "
              "llama-bench + llama-quantize, `-j2`):", ""]
    for b in meta["llama_builds"]:
        t = f"{b['seconds'] / 60:.1f} min" if b["seconds"] else "time not recorded"
        ins = ", ".join(f"{k} {v}" for k, v in b["insn"].items())
        lines.append(f"- `-march={b['level']}`: built in {t}; in llama-bench's disassembly: {ins}")
    if meta.get("llama_from"):
        lines += ["", f"llama.cpp figures taken from the earlier run {meta['llama_from']} (`--llama-from`); "
                  "minnow's measured in this one."]
    if meta.get("note"):
        lines += ["", meta["note"]]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- main


def parse_pair(s: str) -> tuple[int, int]:
    a, b = (int(x) for x in s.split(","))
    if not a > b >= 0:
        raise argparse.ArgumentTypeError("want HI,LO with HI > LO >= 0")
    return a, b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", type=Path,
                    help="GGUF files (default: models/SmolLM2-135M-Instruct.Q4_1.gguf and a Q4_0 copy made with "
                    "llama-quantize --allow-requantize into .cache/llama.cpp/<version>/models/)")
    ap.add_argument("--cpus", default=",".join(DEFAULT_CPUS),
                    help=f"qemu -cpu models (default {','.join(DEFAULT_CPUS)}; `qemu-aarch64 -cpu help` lists them)")
    ap.add_argument("--levels", default=",".join(DEFAULT_LEVELS),
                    help="llama.cpp -march levels to build and run (default %(default)s: plain NEON, the "
                    "dotprod level cortex-a76 runs, dotprod+i8mm for -cpu max)")
    ap.add_argument("--skip-unsupported", action="store_true",
                    help="do not run llama.cpp builds on CPU models that lack their -march features (by default "
                    "they run, and a cell reads SIGILL where the build dies)")
    ap.add_argument("--prompt", type=parse_pair, metavar="HI,LO",
                    help="the two prompt lengths (default 128,64)")
    ap.add_argument("--gen", type=parse_pair, metavar="HI,LO",
                    help="the two generation lengths (default 32,16)")
    ap.add_argument("--quick", action="store_true",
                    help="the first model only, -cpu max only, prompt 64,32 and gen 16,8 unless given (about 10 minutes)")
    ap.add_argument("--minnow", type=Path, default=MINNOW, help="the aarch64 minnow (default build/aarch64/minnow)")
    ap.add_argument("--minnow-args", default="", help="extra flags for minnow bench, e.g. '--int8-decode'")
    ap.add_argument("--no-minnow", action="store_true", help="llama.cpp only")
    ap.add_argument("--no-llama", action="store_true", help="minnow only (the llama.cpp builds are still needed "
                    "for the Q4_0 file unless it exists)")
    ap.add_argument("--llama-from", type=Path, metavar="RAW_JSON",
                    help="take the llama.cpp figures from an earlier run's .cache/arm-insn/runs/*.json instead of "
                    "running llama.cpp again (they depend only on the pinned llama.cpp, the files and the CPU models)")
    ap.add_argument("--jobs", type=int, default=2, help="parallel jobs for the llama.cpp builds (default 2)")
    ap.add_argument("--build-only", action="store_true", help="build the plugin, llama.cpp and the Q4_0 file; stop")
    ap.add_argument("--note", default="", help="a sentence added under the table")
    ap.add_argument("--no-write", action="store_true", help="print only; leave bench/arm/results.md alone")
    args = ap.parse_args()

    cpus = [c for c in args.cpus.split(",") if c]
    levels = [lv for lv in args.levels.split(",") if lv]
    if args.quick:
        cpus = ["max"]
    sizes = {"pp": args.prompt or ((64, 32) if args.quick else (128, 64)),
             "tg": args.gen or ((16, 8) if args.quick else (32, 16))}
    for c in cpus:
        if c not in CPU_FEATURES:
            ap.error(f"unknown -cpu {c} (known: {', '.join(CPU_FEATURES)})")

    check_tools()
    ensure_plugin()
    for lv in levels:
        ensure_llama(lv, args.jobs)
    builds = [llama_build_info(lv) for lv in levels]
    for b in builds:
        log(f"llama.cpp -march={b['level']}: " + ", ".join(f"{k} {v}" for k, v in b["insn"].items()))
        need = level_needs(b["level"])
        if "dotprod" in need and not b["insn"]["sdot"]:
            log(f"WARNING: -march={b['level']} but no sdot in llama-bench")
        if "i8mm" in need and not b["insn"]["smmla"]:
            log(f"WARNING: -march={b['level']} but no smmla in llama-bench")

    if args.models:
        models = [m.resolve() for m in args.models]
    else:
        if not compare.DEFAULT_MODEL.exists():
            sys.exit(f"{compare.DEFAULT_MODEL} is missing: run `make models`")
        models = [compare.DEFAULT_MODEL, quantized_q4_0(compare.DEFAULT_MODEL, levels)]
    if args.quick:
        models = models[:1]
    if args.build_only:
        log("built: " + ", ".join(str(build_dir(lv).relative_to(ROOT)) for lv in levels))
        return

    exe = None if args.no_minnow else snapshot_minnow(args.minnow.resolve())
    if exe is None and not args.no_minnow:
        log(f"{args.minnow} does not exist: llama.cpp only (make build-aarch64 builds it)")
    passes = minnow_passes_per_rep()
    earlier: dict = {}
    if args.llama_from:
        prev = json.loads(args.llama_from.read_text())
        earlier = {(r["file"], r["cpu"], r["level"]): r["llama"] for r in prev["rows"]}
        log(f"llama.cpp figures from {args.llama_from} ({prev['meta']['date']})")
    minnow_extra = args.minnow_args.split()
    meta = {
        "date": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "qemu": re.search(r"version (\S+)", subprocess.run(["qemu-aarch64", "--version"], capture_output=True,
                                                           text=True).stdout).group(1),
        "gcc": subprocess.run(["aarch64-linux-gnu-gcc", "-dumpfullversion"], capture_output=True,
                              text=True).stdout.strip(),
        "llama_commit": compare.llama_commit(),
        "minnow": compare.minnow_commit(),
        "minnow_present": exe is not None,
        "minnow_binary": (f"binary of {dt.datetime.fromtimestamp(args.minnow.stat().st_mtime):%Y-%m-%d %H:%M}, "
                          f"sha256 {hashlib.sha256(exe.read_bytes()).hexdigest()[:12]}") if exe else "",
        "llama_from": f"{args.llama_from.name} ({json.loads(args.llama_from.read_text())['meta']['date']})"
                      if args.llama_from else "",
        "minnow_passes": passes,
        "minnow_args": " ".join(minnow_extra),
        "sizes": sizes,
        "weight_bytes": {m.name: compare.gguf_tensor_data_bytes(m) for m in models},
        "llama_builds": builds,
        "note": args.note,
    }
    raw: dict = {}
    rows: list[dict] = []
    RUNS.mkdir(parents=True, exist_ok=True)
    rawfile = RUNS / f"{dt.datetime.now():%Y%m%d-%H%M%S}.json"  # rewritten after every file x CPU model
    t_start = time.time()
    for model in models:
        for cpu in cpus:
            mres: dict = {}
            if exe is not None:
                mraw = raw.setdefault(f"{model.name}|{cpu}|minnow", {})

                def m_argv(kind: str, length: int) -> list:
                    return minnow_argv(exe, model, length, 1, minnow_extra) if kind == "pp" else \
                        minnow_argv(exe, model, 1, length, minnow_extra)

                mres = measure("minnow", cpu, m_argv, sizes, passes, mraw)
            for lv in ([] if args.no_llama else levels):
                missing = level_needs(lv) - CPU_FEATURES[cpu]
                if (short(model), cpu, lv) in earlier:
                    lres = earlier[(short(model), cpu, lv)]
                elif missing and args.skip_unsupported:
                    err = "needs +" + "+".join(sorted(missing))
                    lres = {"pp": None, "tg": None, "pp_error": err, "tg_error": err}
                else:
                    bindir = build_dir(lv) / "bin"
                    lraw = raw.setdefault(f"{model.name}|{cpu}|llama {lv}", {})

                    def l_argv(kind: str, length: int, bindir=bindir) -> list:
                        return llama_argv(bindir, model, length, 0) if kind == "pp" else \
                            llama_argv(bindir, model, 0, length)

                    lres = measure(f"llama.cpp {lv}", cpu, l_argv, sizes, 1, lraw)
                rows.append({"file": short(model), "cpu": cpu, "level": lv, "minnow": mres, "llama": lres})
            if args.no_llama:
                rows.append({"file": short(model), "cpu": cpu, "level": "–", "minnow": mres, "llama": {}})
            rawfile.write_text(json.dumps({"meta": meta, "rows": rows, "raw_insns": raw}, indent=1, default=str))
            log(f"{model.name} -cpu {cpu} done ({(time.time() - t_start) / 60:.1f} min so far)")
    md = render(meta, rows)
    print(md)
    rawfile.write_text(json.dumps({"meta": meta, "rows": rows, "raw_insns": raw}, indent=1, default=str))
    if not args.no_write:
        RESULTS_MD.write_text(md)
        log(f"wrote {RESULTS_MD.relative_to(ROOT)} (raw counts: {rawfile.relative_to(ROOT)})")


if __name__ == "__main__":
    main()
