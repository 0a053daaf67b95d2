// Matrix products in Chromium's WebAssembly: core's kernel (`core/src/nn/linear/gemm.rs`) against
// the `gemm` crate that burn's CPU backend uses, on the shapes of one half of a MiniLM fine-tuning
// step (512 tokens: forward, input gradient with Wᵀ, weight gradient with xᵀ) and of attention
// (one head, 64 and 192 tokens); core's kernel twice, built with 128-bit SIMD (the page's build) and with
// relaxed SIMD (the training worker's relaxed threaded build: fused multiply-add). One thread,
// the best of 15 interleaved timings after a warm-up. Fails if any two disagree. Prints a
// Markdown table of GFLOP/s.
//
//   node bench/matmul.mjs
//
// Builds bench/matmul (a plain wasm module, no wasm-bindgen) with cargo first. Needs what
// `cargo xtask bench` sets up: bench/node_modules (playwright-core) and Debian's chromium.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = join(ROOT, 'bench', 'matmul', 'Cargo.toml');
// Run from the repository root so .cargo/config.toml's wasm flags (+simd128) apply. Then again
// with relaxed SIMD (core's kernel then multiplies and adds with `f32x4.relaxed_madd`, as in the
// training worker's relaxed threaded build), into a target dir of its own.
execFileSync('cargo', ['build', '--offline', '--release', '--target', 'wasm32-unknown-unknown', '--manifest-path', manifest], { cwd: ROOT, stdio: 'inherit' });
const targetDir = process.env.CARGO_TARGET_DIR ?? join(ROOT, 'bench', 'matmul', 'target');
const relaxedDir = join(targetDir, 'relaxed-simd');
execFileSync('cargo', ['build', '--offline', '--release', '--target', 'wasm32-unknown-unknown', '--manifest-path', manifest, '--target-dir', relaxedDir], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, RUSTFLAGS: '-C target-feature=+simd128,+relaxed-simd' } });
const module = (dir) => [...readFileSync(join(dir, 'wasm32-unknown-unknown', 'release', 'bertbench_matmul_bench.wasm'))];

// [m, n, k, A stored transposed, B stored transposed, what it is]
const SHAPES = [
  [512, 384, 384, false, false, 'query/key/value/output, forward'],
  [512, 1536, 384, false, false, 'feed-forward in, forward'],
  [512, 384, 1536, false, false, 'feed-forward out, forward'],
  [512, 384, 1536, false, true, 'feed-forward in, dx = dy·Wᵀ'],
  [512, 1536, 384, false, true, 'feed-forward out, dx = dy·Wᵀ'],
  [384, 1536, 512, true, false, 'feed-forward in, dW = xᵀ·dy'],
  [1536, 384, 512, true, false, 'feed-forward out, dW = xᵀ·dy'],
  [64, 64, 32, false, true, 'attention scores, one head'],
  [192, 192, 32, false, true, 'attention scores at 192 tokens, one head'],
  [192, 32, 192, false, false, 'attention context at 192 tokens, one head'],
  [192, 32, 192, true, false, 'attention dV = Pᵀ·dC at 192 tokens'],
];

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu-sandbox', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
const page = await browser.newPage();
const rows = await page.evaluate(async ({ bytes, relaxedBytes, shapes }) => {
  const { instance } = await WebAssembly.instantiate(new Uint8Array(bytes), {});
  const e = instance.exports;
  // The relaxed module has its own memory: the same operands are copied into it.
  const x = (await WebAssembly.instantiate(new Uint8Array(relaxedBytes), {})).instance.exports;
  const out = [];
  for (const [m, n, k, ta, tb, what] of shapes) {
    const a = e.alloc_f32(m * k), b = e.alloc_f32(k * n), c1 = e.alloc_f32(m * n), c2 = e.alloc_f32(m * n);
    const xa = x.alloc_f32(m * k), xb = x.alloc_f32(k * n), xc = x.alloc_f32(m * n);
    let f = new Float32Array(e.memory.buffer);
    for (let i = 0; i < m * k; i++) f[a / 4 + i] = Math.sin(i * 1.3);
    for (let i = 0; i < k * n; i++) f[b / 4 + i] = Math.cos(i * 0.7);
    let fx = new Float32Array(x.memory.buffer);
    fx.set(f.subarray(a / 4, a / 4 + m * k), xa / 4);
    fx.set(f.subarray(b / 4, b / 4 + k * n), xb / 4);
    const reps = Math.max(2, Math.round(1e9 / (2 * m * n * k)));
    const run = (fn) => {
      const t = performance.now();
      for (let q = 0; q < reps; q++) fn();
      return (performance.now() - t) / reps;
    };
    const g = () => e.gemm_matmul(m, n, k, a, b, ta, tb, c1);
    const o = () => e.ours_matmul(m, n, k, a, b, ta, tb, c2);
    const or = () => x.ours_matmul(m, n, k, xa, xb, ta, tb, xc);
    for (let w = 0; w < 3; w++) { g(); o(); or(); }
    // Interleaved, so a noisy moment on this VM hits all three; the best of 15 each.
    let gemm = Infinity, ours = Infinity, relaxed = Infinity;
    for (let t = 0; t < 15; t++) {
      gemm = Math.min(gemm, run(g));
      ours = Math.min(ours, run(o));
      relaxed = Math.min(relaxed, run(or));
    }
    f = new Float32Array(e.memory.buffer);
    fx = new Float32Array(x.memory.buffer);
    let diff = 0, relaxedDiff = 0;
    for (let i = 0; i < m * n; i++) {
      diff = Math.max(diff, Math.abs(f[c1 / 4 + i] - f[c2 / 4 + i]));
      relaxedDiff = Math.max(relaxedDiff, Math.abs(f[c1 / 4 + i] - fx[xc / 4 + i]));
    }
    const gflops = (ms) => (2 * m * n * k) / ms / 1e6;
    out.push({ shape: `${m}×${k} · ${k}×${n}${ta ? ' (Aᵀ)' : ''}${tb ? ' (Bᵀ)' : ''}`, what, gemm: gflops(gemm), ours: gflops(ours), relaxed: gflops(relaxed), diff, relaxedDiff, k });
  }
  return out;
}, { bytes: module(targetDir), relaxedBytes: module(relaxedDir), shapes: SHAPES });
await browser.close();

for (const r of rows) {
  // Each sums k products of values in [-1, 1] in f32, in different orders.
  if (!(r.diff <= 1e-5 * r.k)) throw new Error(`${r.shape}: the kernels disagree by ${r.diff}`);
  if (!(r.relaxedDiff <= 1e-5 * r.k)) throw new Error(`${r.shape}: the relaxed-SIMD kernel disagrees with gemm by ${r.relaxedDiff}`);
}
const cpu = readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/)?.[1] ?? 'unknown CPU';
const chrome = spawnSync('/usr/bin/chromium', ['--version']).stdout?.toString().match(/Chromium [\d.]+/)?.[0] ?? 'Chromium';
console.log(`Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpu}, ${chrome}, one thread, \`node bench/matmul.mjs\`\n`);
console.log('| product | in a step | gemm crate (GFLOP/s) | core\'s kernel (GFLOP/s) | ratio | core\'s kernel, relaxed SIMD (GFLOP/s) | ratio | max difference (ours, relaxed) |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.shape} | ${r.what} | ${r.gemm.toFixed(1)} | ${r.ours.toFixed(1)} | ${(r.ours / r.gemm).toFixed(2)} | ${r.relaxed.toFixed(1)} | ${(r.relaxed / r.gemm).toFixed(2)} | ${r.diff.toExponential(1)}, ${r.relaxedDiff.toExponential(1)} |`);
