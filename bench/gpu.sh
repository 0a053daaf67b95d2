#!/usr/bin/env bash
# The whole real-GPU measurement in one command (issue 32): bertbench natively on wgpu (Vulkan)
# and on CUDA against PyTorch on CUDA, on the same GPU, printed as Markdown tables.
#
#   bash bench/gpu.sh [--n 256] [--steps 20] [--passes 5] [--repeat 2] [--peak-tflops T]
#                     [--bertbench BIN] [--python PY] [--data DIR] [--minilm DIR]
#                     [--skip inference,finetune,base,wgpu,cuda,torch] [--browser] [--browser-train]
#                     [--part-timeout 300] [--out DIR]
#   bash bench/gpu.sh --dry-run-cpu     # every part with --backend cpu and PyTorch on the CPU,
#                                       # tiny counts: checks this script, measures no GPU
#   bash bench/gpu.sh --prepare         # on a machine with cargo: what a GPU machine without
#                                       # cargo or network needs, into .gpu/ and .gl/ (below)
#
# Parts (each prints "skipped: <reason>" in its row when it cannot run here; the rest still run;
# the exit status is non-zero only when a part that could run failed):
#   inference   all-MiniLM-L6-v2 (f32), the first --n sentences of sst2_dev.tsv, batch 32, max
#               length 64, mean pooling: `bertbench bench --backend wgpu|cuda` (one warm-up batch,
#               one timed pass; the best of --repeat processes) against
#               scripts/bench_pytorch_gpu.py (the same batches, fp32 with TF32 off, one warm-up
#               pass, the best of --passes timed passes, torch.cuda.synchronize()).
#   finetune    one full fine-tuning step of MiniLM, batch 16, length 64, AdamW:
#               `bertbench finetune --mode full --max-steps` (mean after 2 warm-up steps) against
#               scripts/bench_pytorch_finetune.py --device cuda (the same recipe), on texts that
#               fill all 64 tokens (bench/texts.mjs's fullLengthTexts, written the same way here).
#   base        the same step for BERT-base's shape (12 layers, 768 hidden), random weights from
#               `bertbench init --preset base` (or scripts/make_big_models.py), in a cache dir.
#   --browser   headless Chromium's WebGPU on the real adapter through bench/run.mjs (inference;
#               --browser-train adds its fine-tuning section); needs node, /usr/bin/chromium, a
#               built dist/ and ../shared/data: see docs/performance.md, "On a real GPU".
# Each figure is given as sentences/s or s/step, as achieved TFLOPS and a fraction of the GPU's
# fp32 peak (--peak-tflops, else a table keyed by nvidia-smi's name; the output says which), and
# against PyTorch on the same device. FLOPs come from the model's config: 2 x the multiply-adds
# of every matrix product per token (Q, K, V, output, both feed-forward layers, and attention's
# QK^T and AV at the sentence's own length), x 3 for a training step; padding is not counted.
#
# Where things come from: the bertbench binary is --bertbench, $BERTBENCH_BIN, .gpu/bertbench(.xz)
# or built with cargo (release, --features cuda; the test profile, default features, in a dry
# run, as bench/run.mjs runs it). Data: --data, ../shared/data, .gpu/data. MiniLM: --minilm,
# public/models/all-MiniLM-L6-v2, else its -f16 copy widened to f32, else random weights of its
# shape. Vulkan: when libvulkan is missing and .gl/*.deb exist (the device README's loaders), they
# are unpacked as that README says; wgpu runs only on the NVIDIA driver (VK_DRIVER_FILES).
# Results go to stdout (tables last), --out DIR (default $OUT if set, else
# ~/.cache/bertbench/gpu-bench/last-run): results.md and gpu-bench.log.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2
ARGS="$*"

N="" STEPS="" PASSES="" REPEAT="" PEAK="" BIN="${BERTBENCH_BIN:-}" PYTHON="${BERTBENCH_PYTHON:-}"
DATA="" MINILM="" SKIP="" BROWSER=0 BROWSER_TRAIN=0 DRY=0 PREPARE=0 PART_TIMEOUT=300 OUTDIR="${OUT:-}"
CUDA_VERSION=13.0
BATCH=32 MAX_LEN=64 TRAIN_BATCH=16
while [ $# -gt 0 ]; do
  case "$1" in
    --n) N=$2; shift ;;
    --steps) STEPS=$2; shift ;;
    --passes) PASSES=$2; shift ;;
    --repeat) REPEAT=$2; shift ;;
    --peak-tflops) PEAK=$2; shift ;;
    --bertbench) BIN=$2; shift ;;
    --python) PYTHON=$2; shift ;;
    --data) DATA=$2; shift ;;
    --minilm) MINILM=$2; shift ;;
    --skip) SKIP=$2; shift ;;
    --part-timeout) PART_TIMEOUT=$2; shift ;;
    --out) OUTDIR=$2; shift ;;
    --cuda-version) CUDA_VERSION=$2; shift ;;
    --browser) BROWSER=1 ;;
    --browser-train) BROWSER=1 BROWSER_TRAIN=1 ;;
    --dry-run-cpu) DRY=1 ;;
    --prepare) PREPARE=1 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ "$DRY" = 1 ]; then
  N=${N:-64} STEPS=${STEPS:-1} PASSES=${PASSES:-1} REPEAT=${REPEAT:-1}
else
  N=${N:-256} STEPS=${STEPS:-20} PASSES=${PASSES:-5} REPEAT=${REPEAT:-2}
fi
skipped() { case ",$SKIP," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
say() { echo "gpu.sh: $*" >&2; }

CACHE="${BERTBENCH_CACHE:-$HOME/.cache/bertbench}/gpu-bench"
mkdir -p "$CACHE"
OUTDIR=${OUTDIR:-$CACHE/last-run}
mkdir -p "$OUTDIR"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bertbench-gpu-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
LOG="$OUTDIR/gpu-bench.log"
: >"$LOG"
RESULTS="$TMP/results.tsv"
: >"$RESULTS"
START=$SECONDS

# ------------------------------------------------------------------------------------------
# Python: one that has torch and transformers (the device image's python3; here xtask's venv).

PY=""
for p in "$PYTHON" python3 "${BERTBENCH_CACHE:-$HOME/.cache/bertbench}/python/bin/python3"; do
  [ -n "$p" ] && command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch, transformers' >/dev/null 2>&1 && { PY=$p; break; }
done
HELPER_PY=${PY:-python3}

# ------------------------------------------------------------------------------------------
# The bertbench binary.

TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
build_bertbench() { # profile features -> sets BIN, or returns 1
  local profile=$1 features=$2 shim=""
  local args=(build --locked -p bertbench-cli)
  [ "$profile" = release ] && args+=(--release)
  [ -n "$features" ] && args+=(--features "$features")
  # cudarc reads the CUDA version from `nvcc --version` at build time, else takes its newest
  # (13.4): without nvcc, a stand-in that names the GPU machine's toolkit (13.0 on the lent
  # machines), so the bindings match the driver there.
  if [ -n "$features" ] && ! command -v nvcc >/dev/null 2>&1; then
    shim="$TMP/nvcc-shim"
    mkdir -p "$shim"
    printf '#!/bin/sh\necho "nvcc: NVIDIA (R) Cuda compiler driver"\necho "Copyright (c) NVIDIA Corporation"\necho "Built (stand-in for cudarc, bench/gpu.sh)"\necho "Cuda compilation tools, release %s, V%s.0"\n' "$CUDA_VERSION" "$CUDA_VERSION" >"$shim/nvcc"
    chmod +x "$shim/nvcc"
    say "no nvcc here: building against CUDA $CUDA_VERSION's bindings (--cuda-version)"
  fi
  say "cargo ${args[*]}"
  if PATH="${shim:+$shim:}$PATH" cargo "${args[@]}" >>"$LOG" 2>&1; then
    BIN="$TARGET_DIR/$([ "$profile" = release ] && echo release || echo debug)/bertbench"
    BIN_HOW="built here: cargo ${args[*]}"
    return 0
  fi
  return 1
}

BIN_STATE=""  # "" until resolved; then ok or a skipped/failed reason
BIN_HOW=""
ensure_bin() {
  [ -n "$BIN_STATE" ] && return
  if [ -n "$BIN" ]; then
    if [ -x "$BIN" ]; then BIN_STATE=ok BIN_HOW="given: $BIN"; else BIN_STATE="failed: --bertbench $BIN is not an executable file"; fi
    return
  fi
  if [ -x .gpu/bertbench ]; then BIN=$ROOT/.gpu/bertbench BIN_STATE=ok BIN_HOW="carried: .gpu/bertbench"; return; fi
  if [ -f .gpu/bertbench.xz ]; then
    BIN="$CACHE/bertbench"
    "$HELPER_PY" -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' .gpu/bertbench.xz "$BIN" && chmod +x "$BIN" \
      && { BIN_STATE=ok BIN_HOW="carried: .gpu/bertbench.xz ($(cat .gpu/bertbench.txt 2>/dev/null || echo 'how it was built not recorded'))"; return; }
    BIN_STATE="failed: could not unpack .gpu/bertbench.xz"
    return
  fi
  if ! command -v cargo >/dev/null 2>&1; then
    BIN_STATE="skipped: no bertbench binary (--bertbench, \$BERTBENCH_BIN or .gpu/bertbench.xz from --prepare) and no cargo to build one"
    return
  fi
  if [ "$DRY" = 1 ]; then
    if build_bertbench dev ""; then BIN_STATE=ok; else BIN_STATE="failed: cargo build (see $LOG)"; fi
  elif build_bertbench release cuda; then
    BIN_STATE=ok
  else
    say "the CUDA build failed (see $LOG); building without CUDA for the wgpu rows"
    CUDA_BUILD_FAILED=1
    if build_bertbench release ""; then BIN_STATE=ok; else BIN_STATE="failed: cargo build --release (see $LOG)"; fi
  fi
}
CUDA_BUILD_FAILED=0

# ------------------------------------------------------------------------------------------
# --prepare: on a machine with cargo (and network for the Vulkan loaders), everything a lent GPU
# machine lacks, in two ignored folders that the device tool carries: .gpu/ (the release binary
# with CUDA, stripped and xz-compressed; the data; MiniLM's config, tokenizer and, when the 64 MiB
# that travels allows, its f16 weights) and .gl/ (the device README's Vulkan/EGL loaders).

if [ "$PREPARE" = 1 ]; then
  grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >>.git/info/exclude
  grep -qx '/.gl/' .git/info/exclude 2>/dev/null || echo '/.gl/' >>.git/info/exclude
  mkdir -p .gpu/data .gpu/all-MiniLM-L6-v2-f16
  if [ -z "$BIN" ] && ! build_bertbench release cuda; then
    # cubecl-cuda's build script fetches an LLVM bundle from GitHub (tracel-llvm-bundler): a
    # machine that reaches only the package registries cannot build it. The wgpu rows still run.
    grep -q "tracel-llvm-bundler" "$LOG" && say "the CUDA build needs tracel-llvm-bundler's LLVM download, which this machine cannot reach"
    say "building without CUDA: the GPU machine runs the wgpu (Vulkan) rows and PyTorch on CUDA; its CUDA row says skipped"
    build_bertbench release "" || { echo "gpu.sh --prepare: cargo build --release failed; see $LOG" >&2; exit 1; }
  fi
  [ -x "$BIN" ] || { echo "gpu.sh --prepare: no binary at $BIN" >&2; exit 1; }
  strip -o "$TMP/bertbench" "$BIN" 2>/dev/null || cp "$BIN" "$TMP/bertbench"
  xz -T0 -6 -c "$TMP/bertbench" >.gpu/bertbench.xz || exit 1
  echo "${BIN_HOW:-given: $BIN}, $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- core cli Cargo.lock || echo ' + uncommitted changes')" >.gpu/bertbench.txt
  rm -f .gpu/bertbench
  for d in "${DATA:-../shared/data}"; do cp "$d/sst2_dev.tsv" "$d/sst2_train_2k.tsv" .gpu/data/ || exit 1; done
  src=public/models/all-MiniLM-L6-v2-f16
  [ -f "$src/config.json" ] || src=public/models/all-MiniLM-L6-v2  # its config and tokenizer only
  cp "$src/config.json" "$src/tokenizer.json" "$src/vocab.txt" .gpu/all-MiniLM-L6-v2-f16/ || exit 1
  if ! ls .gl/*.deb >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    say "the Vulkan and EGL loaders for the GPU machine (the device README's command)"
    mkdir -p .gl /tmp/amd64/partial
    o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64)
    apt-get "${o[@]}" update >>"$LOG" 2>&1 && (cd .gl && apt-get "${o[@]}" download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >>"$LOG" 2>&1) \
      || say "could not download the loaders (see $LOG): wgpu will be skipped there unless the machine has libvulkan"
  fi
  # What travels: tracked and untracked-but-not-ignored files, plus the carried folders.
  tree=$(git ls-files -z -co --exclude-standard | xargs -0 stat -c %s 2>/dev/null | awk '{s+=$1} END {print s+0}')
  carried=$(du -sb .gpu .gl 2>/dev/null | awk '{s+=$1} END {print s+0}')
  weights=0
  [ "$src" = public/models/all-MiniLM-L6-v2-f16 ] && weights=$(stat -c %s "$src/model.safetensors" 2>/dev/null || echo 0)
  limit=$((62 * 1024 * 1024))
  if [ "$weights" -gt 0 ] && [ $((tree + carried + weights)) -lt "$limit" ]; then
    cp "$src/model.safetensors" .gpu/all-MiniLM-L6-v2-f16/
    carried=$((carried + weights))
    say "MiniLM's f16 weights travel (widened to f32 there)"
  else
    rm -f .gpu/all-MiniLM-L6-v2-f16/model.safetensors
    say "MiniLM's weights do not fit the 64 MiB that travels: the GPU machine uses random weights of its shape (timings do not depend on the values)"
  fi
  echo "prepared: .gpu ($(du -sh .gpu | cut -f1)) and .gl ($(du -sh .gl 2>/dev/null | cut -f1)); the working tree that travels: $(( (tree + carried) / 1048576 )) MiB of 64"
  echo "on the GPU machine (the device tool's run): command 'bash bench/gpu.sh', carry [\".gpu\", \".gl\"], timeout_s 600"
  exit 0
fi

# ------------------------------------------------------------------------------------------
# Inputs.

for d in "$DATA" ../shared/data .gpu/data shared/data; do
  if [ -n "$d" ] && [ -f "$d/sst2_dev.tsv" ] && [ -f "$d/sst2_train_2k.tsv" ]; then DATA=$(cd "$d" && pwd); break; fi
  d=""
done
[ -n "$DATA" ] && [ -f "$DATA/sst2_dev.tsv" ] || { echo "gpu.sh: no sst2_dev.tsv and sst2_train_2k.tsv in --data, ../shared/data or .gpu/data (--prepare copies them)" >&2; exit 2; }

# Training texts: bench/texts.mjs's fullLengthTexts (runs of sst2_train_2k sentences joined until
# each has 80 words, so every batch is [16, 64]), as many as the steps need, repeated if short.
TRAIN="$TMP/train_64.tsv"
"$HELPER_PY" - "$DATA/sst2_train_2k.tsv" "$TRAIN" $(( (STEPS + 2) * TRAIN_BATCH > 96 ? (STEPS + 2) * TRAIN_BATCH : 96 )) <<'EOF' || exit 2
import sys
src, out, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [l.split("\t") for l in open(src, encoding="utf-8").read().split("\n")[1:] if l]
texts, i = [], 0
while i < len(rows) and len(texts) < count:
    words, label = [], rows[i][1]
    while i < len(rows) and len(words) < 80:
        words += rows[i][0].split(" ")
        i += 1
    texts.append((" ".join(words), label))
texts = [texts[k % len(texts)] for k in range(count)]
open(out, "w", encoding="utf-8").write("sentence\tlabel\n" + "".join(f"{t}\t{l}\n" for t, l in texts))
EOF

WEIGHTS=""
prepare_minilm() {
  if [ -n "$MINILM" ]; then WEIGHTS="--minilm $MINILM"; return 0; fi
  if [ -f public/models/all-MiniLM-L6-v2/model.safetensors ]; then
    MINILM=$ROOT/public/models/all-MiniLM-L6-v2 WEIGHTS="public/models/all-MiniLM-L6-v2 (its f32 weights)"
    return 0
  fi
  local d
  for d in public/models/all-MiniLM-L6-v2-f16 .gpu/all-MiniLM-L6-v2-f16; do
    [ -f "$d/model.safetensors" ] || continue
    MINILM="$CACHE/all-MiniLM-L6-v2-from-f16" WEIGHTS="all-MiniLM-L6-v2's weights from its f16 copy ($d), widened to f32"
    [ -f "$MINILM/model.safetensors" ] && return 0
    mkdir -p "$MINILM" && cp "$d/config.json" "$d/tokenizer.json" "$d/vocab.txt" "$MINILM/" || return 1
    "$HELPER_PY" -c '
import sys
from safetensors.numpy import load_file, save_file
w = load_file(sys.argv[1])
save_file({k: (v.astype("float32") if v.dtype.kind == "f" else v) for k, v in w.items()}, sys.argv[2], metadata={"format": "pt"})
' "$d/model.safetensors" "$MINILM/model.safetensors" >>"$LOG" 2>&1
    return
  done
  for d in public/models/all-MiniLM-L6-v2-f16 .gpu/all-MiniLM-L6-v2-f16 public/models/all-MiniLM-L6-v2; do
    [ -f "$d/config.json" ] && [ -f "$d/tokenizer.json" ] || continue
    MINILM="$CACHE/all-MiniLM-L6-v2-random" WEIGHTS="random weights of all-MiniLM-L6-v2's shape (its config and tokenizer from $d; timings do not depend on the values)"
    [ -f "$MINILM/model.safetensors" ] && return 0
    [ -n "$PY" ] || return 1
    mkdir -p "$MINILM" && cp "$d/config.json" "$d/tokenizer.json" "$d/vocab.txt" "$MINILM/" || return 1
    "$PY" -c '
import sys, torch
from transformers import BertConfig, BertModel
torch.manual_seed(0)
BertModel(BertConfig.from_pretrained(sys.argv[1])).save_pretrained(sys.argv[1])
' "$MINILM" >>"$LOG" 2>&1
    return
  done
  return 1
}
prepare_minilm || { echo "gpu.sh: no MiniLM (public/models/all-MiniLM-L6-v2, its -f16 copy, or .gpu/ from --prepare); see $LOG" >&2; exit 2; }
say "MiniLM: $WEIGHTS"

# ------------------------------------------------------------------------------------------
# The GPU, its fp32 peak, Vulkan for wgpu, the CUDA libraries for bertbench's CUDA backend.

GPU_INFO="" GPU_NAME=""
if [ "$DRY" = 0 ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  GPU_INFO=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
  GPU_NAME=${GPU_INFO%%,*}
fi
PEAK_SRC=""
if [ -n "$PEAK" ]; then
  PEAK_SRC="--peak-tflops $PEAK"
elif [ -n "$GPU_NAME" ]; then
  case "$GPU_NAME" in
    *H100*PCIe*) PEAK=51 PEAK_SRC="H100 PCIe datasheet" ;;
    *H100*NVL*) PEAK=60 PEAK_SRC="H100 NVL datasheet" ;;
    *H100*) PEAK=67 PEAK_SRC="H100 SXM datasheet" ;;
    *H200*NVL*) PEAK=60 PEAK_SRC="H200 NVL datasheet" ;;
    *H200*) PEAK=67 PEAK_SRC="H200 datasheet" ;;
  esac
fi

NO_GPU="no NVIDIA GPU here (nvidia-smi found none)"
VULKAN_STATE=ok
BIN_ENV=()
if [ "$DRY" = 0 ] && [ -n "$GPU_NAME" ]; then
  if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
    if ls .gl/*.deb >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      say "no Vulkan loader: unpacking .gl/*.deb into / (the device README's step)"
      for f in .gl/*.deb; do dpkg -x "$f" / >>"$LOG" 2>&1; done
      ldconfig
    fi
  fi
  NV_ICD=""
  for f in "${VK_DRIVER_FILES:-}" /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
    [ -n "$f" ] && [ -f "$f" ] && { NV_ICD=$f; break; }
  done
  if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
    VULKAN_STATE="skipped: no Vulkan loader (libvulkan.so.1); carry the device README's .gl/*.deb (bench/gpu.sh --prepare fetches them)"
  elif [ -z "$NV_ICD" ]; then
    VULKAN_STATE="skipped: no NVIDIA Vulkan driver manifest (nvidia_icd.json), so wgpu would not run on this GPU"
  else
    # Only NVIDIA's driver: wgpu cannot fall back to a CPU adapter (lavapipe) unnoticed.
    export VK_DRIVER_FILES=$NV_ICD WGPU_BACKEND=vulkan
    egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
    [ -f "$egl" ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$egl
  fi
  export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$TMP}
  # cudarc loads libcuda and libnvrtc at run time: the driver's and the toolkit's folders, for
  # bertbench only (PyTorch brings its own).
  libs=""
  for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
    $("$HELPER_PY" -c 'import glob, os, nvidia; print(" ".join(d for p in nvidia.__path__ for d in glob.glob(os.path.join(p, "*", "lib")) if glob.glob(os.path.join(d, "libnvrtc*"))))' 2>/dev/null); do
    [ -d "$d" ] && libs="$libs:$d"
  done
  libs="${LD_LIBRARY_PATH:-}$libs"
  BIN_ENV=(env "LD_LIBRARY_PATH=${libs#:}")
fi

# ------------------------------------------------------------------------------------------
# Running and recording the parts.

record() { # section system status value note
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$RESULTS"
  say "$1 | $2 | $3 ${4:+| $4 }${5:+| $5}"
}
FAILED=0
run_part() { # name cmd... ; the output in $TMP/name.log (and the log file); sets PART_RC, PART_SECS
  local name=$1
  shift
  local t0=$SECONDS
  echo "=== $name: $* ($(date -u +%H:%M:%S))" >>"$LOG"
  timeout --kill-after=10 "$PART_TIMEOUT" "$@" >"$TMP/$name.log" 2>&1
  PART_RC=$?
  PART_SECS=$((SECONDS - t0))
  cat "$TMP/$name.log" >>"$LOG"
  echo "=== $name: exit $PART_RC after ${PART_SECS}s" >>"$LOG"
}
failure() { # name -> "failed: " and a one-line reason from its log
  if [ "$PART_RC" = 124 ] || [ "$PART_RC" = 137 ]; then echo "failed: timed out after ${PART_SECS}s (--part-timeout)"; return; fi
  echo "failed: exit $PART_RC, $(grep -v '^\s*$' "$TMP/$1.log" | tail -1 | cut -c1-160 | tr '\t|' '  ')"
}
fail() { FAILED=1; record "$@"; }

# Whether bertbench on `backend` can run here; sets WHY to the reason when not. Runs in this
# shell (never in $(...)): it resolves the binary and checks wgpu once.
WGPU_CHECKED="" WHY=""
ours_blocked() {
  local backend=$1
  WHY=""
  if skipped "$backend"; then WHY="skipped: --skip $backend"; return 0; fi
  if [ "$DRY" = 0 ] && [ -z "$GPU_NAME" ]; then WHY="skipped: $NO_GPU"; return 0; fi
  ensure_bin
  if [ "$BIN_STATE" != ok ]; then WHY=$BIN_STATE; return 0; fi
  [ "$DRY" = 1 ] && return 1
  if [ "$backend" = cuda ] && [ "$CUDA_BUILD_FAILED" = 1 ]; then WHY="failed: the CUDA build failed (see $LOG)"; return 0; fi
  if [ "$backend" = wgpu ]; then
    if [ "$VULKAN_STATE" != ok ]; then WHY=$VULKAN_STATE; return 0; fi
    if [ -z "$WGPU_CHECKED" ]; then
      # The tiny-model comparison of wgpu against the CPU (`bertbench check-device`): the GPU
      # path must compute the right thing before it is timed.
      run_part check-device "${BIN_ENV[@]}" "$BIN" check-device
      if [ "$PART_RC" = 0 ]; then WGPU_CHECKED=ok
      elif grep -q 'no wgpu device' "$TMP/check-device.log"; then WGPU_CHECKED="skipped: $(grep -m1 'no wgpu device' "$TMP/check-device.log" | cut -c1-160)"
      else WGPU_CHECKED="$(failure check-device) (bertbench check-device)"
      fi
    fi
    if [ "$WGPU_CHECKED" != ok ]; then WHY=$WGPU_CHECKED; return 0; fi
  fi
  return 1
}
# A row that cannot run: skipped, or failed (a real failure) when WHY says so.
blocked_row() { # section system
  case "$WHY" in failed*) fail "$1" "$2" failed "" "${WHY#failed: }" ;; *) record "$1" "$2" skipped "" "${WHY#skipped: }" ;; esac
}
# The label of bertbench's row, and the backend it really runs with (cpu in a dry run).
ours_label() { if [ "$1" = wgpu ]; then echo "bertbench native, wgpu (Vulkan)"; else echo "bertbench native, CUDA"; fi; }
real_backend() { if [ "$DRY" = 1 ]; then echo cpu; else echo "$1"; fi; }
dry_note() { if [ "$DRY" = 1 ]; then echo "dry run: --backend cpu instead of $1; "; fi; }

TORCH_DEVICE=cuda TORCH_LABEL="PyTorch, CUDA" TORCH_STATE=ok TORCH_VERSION=""
if [ -z "$PY" ]; then
  TORCH_STATE="skipped: no python with torch and transformers (--python)"
else
  TORCH_VERSION=$("$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null)
  if [ "$DRY" = 1 ]; then TORCH_DEVICE=cpu TORCH_LABEL="PyTorch $TORCH_VERSION, CPU (dry run)"
  else
    TORCH_LABEL="PyTorch $TORCH_VERSION, CUDA"
    "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null || TORCH_STATE="skipped: torch.cuda.is_available() is False here"
  fi
fi
skipped torch && TORCH_STATE="skipped: --skip torch"

# ------------------------------------------------------------------------------------------
# Inference.

if ! skipped inference; then
  for backend in wgpu cuda; do
    label=$(ours_label $backend)
    if ours_blocked $backend; then blocked_row inference "$label"; continue; fi
    best="" err=""
    for r in $(seq 1 "$REPEAT"); do
      run_part "bench-$backend-$r" "${BIN_ENV[@]}" "$BIN" bench --model "$MINILM" --data "$DATA/sst2_dev.tsv" --n "$N" --batch "$BATCH" --max-len "$MAX_LEN" --backend "$(real_backend $backend)"
      if [ "$PART_RC" != 0 ]; then err=$(failure "bench-$backend-$r"); break; fi
      rate=$(tail -1 "$TMP/bench-$backend-$r.log" | awk -F'|' '{gsub(/ /, "", $(NF-1)); print $(NF-1)}')
      best=$(awk -v a="$best" -v b="$rate" 'BEGIN {print (a == "" || b + 0 > a + 0) ? b : a}')
    done
    if [ -n "$err" ]; then
      case "$err" in *"built without CUDA"*) record inference "$label" skipped "" "this bertbench was built without CUDA (--features cuda)" ;; *) WHY=$err; blocked_row inference "$label" ;; esac
    else
      record inference "$label" ok "$best" "$(dry_note $backend)best of $REPEAT process(es): one warm-up batch, one timed pass each"
    fi
  done
  if [ "$TORCH_STATE" = ok ]; then
    run_part torch-infer "$PY" scripts/bench_pytorch_gpu.py "$MINILM" "$DATA/sst2_dev.tsv" --n "$N" --batch "$BATCH" --max-len "$MAX_LEN" --device "$TORCH_DEVICE" --passes "$PASSES"
    if [ "$PART_RC" = 0 ]; then
      json=$(grep '^{' "$TMP/torch-infer.log" | tail -1)
      echo "$json" >"$TMP/torch-infer.json"
      rate_note=$("$HELPER_PY" -c '
import json, sys
j = json.loads(sys.argv[1])
print("%.1f\tbest of %d passes after a warm-up pass (median %.1f); attention: %s, TF32 %s" % (
    j["sentences_per_s"], j["passes"], j["median_sentences_per_s"], j["attention"], "on" if j["tf32"] else "off"))
' "$json")
      record inference "$TORCH_LABEL" ok "${rate_note%%$'\t'*}" "${rate_note#*$'\t'}"
    else
      WHY=$(failure torch-infer); blocked_row inference "$TORCH_LABEL"
    fi
  else
    record inference "$TORCH_LABEL" skipped "" "${TORCH_STATE#skipped: }"
  fi
fi

# ------------------------------------------------------------------------------------------
# Fine-tuning steps: MiniLM, then BERT-base's shape.

BASE=""
prepare_base() { # -> BASE, or WHY and 1
  BASE="$CACHE/bert-base-random"
  [ -f "$BASE/model.safetensors" ] && return 0
  mkdir -p "$BASE"
  ensure_bin
  if [ "$BIN_STATE" = ok ]; then
    run_part init-base "$BIN" init --preset base --tokenizer-from "$MINILM" --out "$BASE" --seed 0
  elif [ -n "$PY" ]; then
    run_part init-base "$PY" scripts/make_big_models.py "$CACHE/big" && mv "$CACHE/big/bert-base/"* "$BASE/" && rm -rf "$CACHE/big"
  else
    WHY="skipped: neither bertbench (init --preset base) nor python with transformers (scripts/make_big_models.py) to write a BERT-base"
    return 1
  fi
  cp "$MINILM/tokenizer.json" "$MINILM/vocab.txt" "$BASE/" 2>/dev/null
  if [ "$PART_RC" != 0 ] || [ ! -f "$BASE/model.safetensors" ]; then
    WHY="$(failure init-base) (writing BERT-base)"
    rm -f "$BASE/model.safetensors"
    return 1
  fi
}

finetune_section() { # section model
  local section=$1 model=$2 backend label
  for backend in wgpu cuda; do
    label=$(ours_label $backend)
    if ours_blocked $backend; then blocked_row "$section" "$label"; continue; fi
    run_part "ft-$section-$backend" "${BIN_ENV[@]}" "$BIN" finetune --model "$model" --train "$TRAIN" --valid "$DATA/sst2_dev.tsv" --mode full --batch "$TRAIN_BATCH" --max-len "$MAX_LEN" --group-by-length false --max-steps $((STEPS + 2)) --backend "$(real_backend $backend)"
    local step
    step=$(sed -n 's/.*mean step time \([0-9.]*\) s.*/\1/p' "$TMP/ft-$section-$backend.log" | tail -1)
    if [ "$PART_RC" = 0 ] && [ -n "$step" ]; then
      record "$section" "$label" ok "$step" "$(dry_note $backend)mean of $STEPS steps after 2 warm-up steps"
    elif grep -q 'built without CUDA' "$TMP/ft-$section-$backend.log"; then
      record "$section" "$label" skipped "" "this bertbench was built without CUDA (--features cuda)"
    else
      WHY=$(failure "ft-$section-$backend"); blocked_row "$section" "$label"
    fi
  done
  if [ "$TORCH_STATE" = ok ]; then
    run_part "ft-$section-torch" "$PY" scripts/bench_pytorch_finetune.py "$model" "$TRAIN" "$DATA/sst2_dev.tsv" --steps "$STEPS" --device "$TORCH_DEVICE"
    step=$(sed -n 's/.* \([0-9.]*\) s mean over.*/\1/p' "$TMP/ft-$section-torch.log" | tail -1)
    if [ "$PART_RC" = 0 ] && [ -n "$step" ]; then
      record "$section" "$TORCH_LABEL" ok "$step" "scripts/bench_pytorch_finetune.py --device $TORCH_DEVICE: mean of $STEPS steps after 2 warm-up steps$([ "$TORCH_DEVICE" = cpu ] && echo ', 2 threads')"
    else
      WHY=$(failure "ft-$section-torch"); blocked_row "$section" "$TORCH_LABEL"
    fi
  else
    record "$section" "$TORCH_LABEL" skipped "" "${TORCH_STATE#skipped: }"
  fi
}

if ! skipped finetune; then finetune_section finetune-minilm "$MINILM"; fi
if ! skipped base; then
  if [ "$DRY" = 0 ] && [ -z "$GPU_NAME" ]; then
    for s in "$(ours_label wgpu)" "$(ours_label cuda)"; do record finetune-base "$s" skipped "" "$NO_GPU"; done
    record finetune-base "$TORCH_LABEL" skipped "" "${TORCH_STATE#skipped: }"
  elif prepare_base; then
    finetune_section finetune-base "$BASE"
  else
    for s in "$(ours_label wgpu)" "$(ours_label cuda)" "$TORCH_LABEL"; do blocked_row finetune-base "$s"; done
  fi
fi

# ------------------------------------------------------------------------------------------
# The browser: bench/run.mjs in headless Chromium on the real adapter (optional).

# Chromium's WebGPU on a real GPU under Linux, headless: Vulkan through ANGLE and Dawn, no
# surface (there is no display), the GPU blocklist ignored (server GPUs are not on its list).
WEBGPU_FLAGS="--enable-features=Vulkan,VulkanFromANGLE,DefaultANGLEVulkan --use-angle=vulkan --use-vulkan=native --disable-vulkan-surface --ignore-gpu-blocklist"
if [ "$BROWSER" = 1 ]; then
  why=""
  command -v node >/dev/null 2>&1 || why="no node"
  [ -z "$why" ] && [ ! -x /usr/bin/chromium ] && why="no /usr/bin/chromium"
  [ -z "$why" ] && [ ! -f dist/index.html ] && why="no built page in dist/ (cargo xtask dist)"
  [ -z "$why" ] && [ ! -d bench/node_modules/@huggingface ] && why="no bench/node_modules (cargo xtask bench installs them)"
  [ -z "$why" ] && [ ! -f ../shared/data/sst2_dev.tsv ] && why="bench/run.mjs reads ../shared/data, which is not here"
  [ -z "$why" ] && [ "$DRY" = 0 ] && [ -z "$GPU_NAME" ] && why="$NO_GPU"
  if [ -n "$why" ]; then
    record inference "browser WebGPU (headless Chromium, bench/run.mjs)" skipped "" "$why"
  else
    skip=finetune,startup,memory,batching,native
    [ "$BROWSER_TRAIN" = 1 ] && skip=startup,memory,batching,native
    flags=$([ "$DRY" = 0 ] && echo "$WEBGPU_FLAGS")
    browser_path=$PATH
    [ -n "$PY" ] && browser_path="$(dirname "$(command -v "$PY")"):$PATH"
    # Its own limit: three part timeouts (bench/run.mjs starts Chromium several times over).
    saved_timeout=$PART_TIMEOUT PART_TIMEOUT=$((3 * PART_TIMEOUT))
    run_part browser env "PATH=$browser_path" "BERTBENCH_WEBGPU_FLAGS=$flags" node bench/run.mjs --skip "$skip" --sentences "$N" --webgpu-sentences "$N" --webgpu-train
    PART_TIMEOUT=$saved_timeout
    if [ "$PART_RC" = 0 ]; then
      row=$(grep -m1 '^| WebGPU (' "$TMP/browser.log")
      if [ -n "$row" ]; then
        adapter=$(echo "$row" | sed 's/^| WebGPU (\(.*\)) | [0-9].*/\1/')
        ours=$(echo "$row" | awk -F'|' '{gsub(/ /, "", $4); print $4}')
        tjs=$(echo "$row" | awk -F'|' '{gsub(/ /, "", $5); print $5}')
        count=$(echo "$row" | awk -F'|' '{gsub(/ /, "", $3); print $3}')
        note="adapter: $adapter; $count sentences; best of 2 passes"
        if echo "$adapter" | grep -qiE 'swiftshader|software|cpu|llvmpipe|lavapipe'; then note="$note; a software adapter: not a GPU figure"; fi
        record inference "browser WebGPU, bertbench (the page)" ok "$ours" "$note"
        record inference "browser WebGPU, transformers.js fp32" ok "$tjs" "$note"
      else
        record inference "browser WebGPU (headless Chromium, bench/run.mjs)" skipped "" "bench/run.mjs printed no WebGPU row"
      fi
      step=$(grep -m1 '^| browser WebGPU |' "$TMP/browser.log" | awk -F'|' '{gsub(/ /, "", $3); print $3}')
      [ -n "$step" ] && record finetune-minilm "browser WebGPU (the page, bench/run.mjs)" ok "$step" "mean of 2 steps after a warm-up step"
      sed -n '/^Measured /,$p' "$TMP/browser.log" >"$TMP/browser-tables.md"
    else
      WHY=$(failure browser); blocked_row inference "browser WebGPU (headless Chromium, bench/run.mjs)"
    fi
  fi
fi

# ------------------------------------------------------------------------------------------
# The report.

export GB_RESULTS=$RESULTS GB_MINILM=$MINILM GB_BASE=$BASE GB_DATA=$DATA GB_N=$N GB_BATCH=$BATCH GB_MAX_LEN=$MAX_LEN \
  GB_TRAIN_BATCH=$TRAIN_BATCH GB_PEAK=$PEAK GB_PEAK_SRC=$PEAK_SRC GB_GPU="$GPU_INFO" GB_DRY=$DRY GB_WEIGHTS="$WEIGHTS" \
  GB_BIN="${BIN_HOW:-${BIN_STATE:-not needed}}" GB_ARGS="$ARGS" GB_TORCH="$TORCH_LABEL" GB_BROWSER_TABLES="$TMP/browser-tables.md" \
  GB_WGPU="${WGPU_CHECKED:-}" GB_SECS=$((SECONDS - START)) GB_CPU="$(sed -n 's/^model name\s*:\s*//p' /proc/cpuinfo | head -1) ($(nproc) cores)"
"$HELPER_PY" - <<'EOF' | tee "$OUTDIR/results.md"
import json, os
from datetime import date

E = os.environ
n, batch, max_len, train_batch = int(E["GB_N"]), int(E["GB_BATCH"]), int(E["GB_MAX_LEN"]), int(E["GB_TRAIN_BATCH"])
dry = E["GB_DRY"] == "1"
peak = float(E["GB_PEAK"]) if E["GB_PEAK"] else None
rows = [l.rstrip("\n").split("\t") for l in open(E["GB_RESULTS"], encoding="utf-8") if l.strip()]

def config(folder):
    try:
        c = json.load(open(os.path.join(folder, "config.json")))
        return c["num_hidden_layers"], c["hidden_size"], c["intermediate_size"]
    except Exception:
        return None

def forward_flops(cfg, s):
    """FLOPs of the encoder on one sequence of s tokens: per layer and token, 2 x the
    multiply-adds of Q, K, V and the output projection (4 H^2), the feed-forward pair (2 H I),
    and attention's QK^T and AV (2 s H)."""
    layers, h, i = cfg
    return layers * s * 2 * (4 * h * h + 2 * h * i + 2 * s * h)

flops, notes = {}, []
minilm = config(E["GB_MINILM"])
try:
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(E["GB_MINILM"], "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=max_len)
    lines = open(os.path.join(E["GB_DATA"], "sst2_dev.tsv"), encoding="utf-8").read().split("\n")[1:]
    texts = [l.split("\t")[0] for l in lines][:n]
    lengths = [len(e.ids) for e in tok.encode_batch(texts)]
    per_pass = sum(forward_flops(minilm, s) for s in lengths)
    flops["inference"] = per_pass / len(texts)  # per sentence
    ordered = sorted(lengths)
    padded = sum(max(ordered[b:b + batch]) * len(ordered[b:b + batch]) for b in range(0, len(ordered), batch))
    notes.append(f"Inference: {len(texts)} sentences, {sum(lengths)} tokens ({sum(lengths) / len(texts):.1f} a sentence; {padded} once batches sorted by length are padded), "
                 f"{per_pass / 1e9:.2f} GFLOP a pass, padding not counted.")
except Exception as e:
    notes.append(f"Inference FLOPs not computed ({type(e).__name__}: {e}; they need the `tokenizers` package).")
head = lambda cfg: 2 * cfg[1] * 2  # the classifier's matrix product, per sequence
if minilm:
    flops["finetune-minilm"] = 3 * train_batch * (forward_flops(minilm, max_len) + head(minilm))
base = config(E["GB_BASE"]) if E["GB_BASE"] else (12, 768, 3072)
flops["finetune-base"] = 3 * train_batch * (forward_flops(base, max_len) + head(base))
notes.append(f"A training step is 3 x the forward FLOPs of [{train_batch}, {max_len}]: "
             + ", ".join(f"{k.split('-')[1]} {v / 1e12:.3f} TFLOP" for k, v in flops.items() if k.startswith("finetune")) + ".")

def fmt(x, unit):
    return f"{x:.1f}" if unit == "sentences/s" else f"{x:.4f}" if x < 0.1 else f"{x:.3f}"

def table(section, title, unit):
    body = [r for r in rows if r[0] == section]
    if not body:
        return ""
    ref = next((float(r[3]) for r in body if r[1].startswith("PyTorch") and r[2] == "ok"), None)
    ref_name = "PyTorch on the CPU (dry run)" if dry else "PyTorch CUDA"
    out = [f"| {title} | {unit} | TFLOPS | % of fp32 peak | speed vs {ref_name} (>1: faster) | notes |", "|---|---|---|---|---|---|"]
    for _, system, status, value, note in body:
        if status != "ok":
            out.append(f"| {system} | {status}: {note} | | | | |")
            continue
        v = float(value)
        per = flops.get(section)
        tf = (per * v if unit == "sentences/s" else per / v) / 1e12 if per else None
        pct = f"{100 * tf / peak:.2f}%" if tf is not None and peak else "n/a"
        speed = (v / ref if unit == "sentences/s" else ref / v) if ref else None
        out.append(f"| {system} | {fmt(v, unit)} | {tf:.3g} | {pct} | {f'{speed:.2f}×' if speed else 'n/a'} | {note} |" if tf is not None
                   else f"| {system} | {fmt(v, unit)} | n/a | n/a | {f'{speed:.2f}×' if speed else 'n/a'} | {note} |")
    return "\n".join(out) + "\n"

print()
if dry:
    print("# DRY RUN on the CPU: every bertbench row ran with --backend cpu and PyTorch on the CPU, with tiny counts. "
          "These are not GPU results; they only show that bench/gpu.sh runs end to end.\n")
print(f"Measured {date.today().isoformat()} with `bash bench/gpu.sh {E['GB_ARGS']}`, {E['GB_SECS']} s in all.\n")
print(f"- GPU: {E['GB_GPU'] or 'none (nvidia-smi found no GPU)'}; host CPU {E['GB_CPU']}.")
print(f"- fp32 peak: " + (f"{peak:g} TFLOPS, from {E['GB_PEAK_SRC']}" + ("" if E["GB_PEAK_SRC"].startswith("--") else " (by nvidia-smi's name; --peak-tflops overrides)") if peak else "unknown (no GPU in the table and no --peak-tflops): the % column is n/a") + ".")
print(f"- bertbench: {E['GB_BIN'] if E['GB_BIN'] != 'not needed' else 'not needed (nothing here it could run on)'}." + (" wgpu: `bertbench check-device` passed on this adapter (the tiny model agrees with the CPU)." if E["GB_WGPU"] == "ok" else ""))
print(f"- MiniLM: {E['GB_WEIGHTS']}; BERT-base: random weights, `bertbench init --preset base` (12 layers, 768 hidden, 12 heads).")
print(f"- Reference: {E['GB_TORCH']}, fp32 with TF32 off; the same texts, batches and recipe (scripts/bench_pytorch_gpu.py, scripts/bench_pytorch_finetune.py).\n")
for t in (table("inference", f"inference (MiniLM, {n} sentences, batch {batch}, length ≤ {max_len}, mean pooling)", "sentences/s"),
          table("finetune-minilm", f"full fine-tuning step (MiniLM, batch {train_batch}, length {max_len}, AdamW)", "s/step"),
          table("finetune-base", f"full fine-tuning step (BERT-base shape, batch {train_batch}, length {max_len}, AdamW)", "s/step")):
    if t:
        print(t)
for note in notes:
    print(f"- {note}")
print("- TFLOPS are useful work over time: 2 x multiply-adds of every matrix product, attention's two included, x 3 for a training step.")
if os.path.exists(E["GB_BROWSER_TABLES"]):
    print("\nbench/run.mjs's own tables (the browser part):\n")
    print(open(E["GB_BROWSER_TABLES"], encoding="utf-8").read())
EOF
say "results: $OUTDIR/results.md; every part's output: $LOG"
if [ "$FAILED" = 1 ]; then
  echo "gpu.sh: a part that could run failed (see the table and $LOG)" >&2
  exit 1
fi
