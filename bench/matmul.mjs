// Matrix products in Chromium's WebAssembly: core's kernel (`core/src/linear/gemm.rs`) against
// the `gemm` crate that burn's CPU backend uses, on the shapes of one half of a MiniLM fine-tuning
// step (512 tokens: forward, input gradient with Wᵀ, weight gradient with xᵀ) and of attention
// (one head, 64 tokens). One thread, the best of seven timings after a warm-up. Fails if the two
// disagree. Prints a Markdown table of GFLOP/s.
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
// Run from the repository root so .cargo/config.toml's wasm flags (+simd128) apply.
execFileSync('cargo', ['build', '--offline', '--release', '--target', 'wasm32-unknown-unknown', '--manifest-path', manifest], { cwd: ROOT, stdio: 'inherit' });
const targetDir = process.env.CARGO_TARGET_DIR ?? join(ROOT, 'bench', 'matmul', 'target');
const wasm = readFileSync(join(targetDir, 'wasm32-unknown-unknown', 'release', 'bertbench_matmul_bench.wasm'));

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
];

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu-sandbox', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
const page = await browser.newPage();
const rows = await page.evaluate(async ({ bytes, shapes }) => {
  const { instance } = await WebAssembly.instantiate(new Uint8Array(bytes), {});
  const e = instance.exports;
  const out = [];
  for (const [m, n, k, ta, tb, what] of shapes) {
    const a = e.alloc_f32(m * k), b = e.alloc_f32(k * n), c1 = e.alloc_f32(m * n), c2 = e.alloc_f32(m * n);
    let f = new Float32Array(e.memory.buffer);
    for (let i = 0; i < m * k; i++) f[a / 4 + i] = Math.sin(i * 1.3);
    for (let i = 0; i < k * n; i++) f[b / 4 + i] = Math.cos(i * 0.7);
    const reps = Math.max(2, Math.round(1e9 / (2 * m * n * k)));
    const run = (fn) => {
      const t = performance.now();
      for (let q = 0; q < reps; q++) fn();
      return (performance.now() - t) / reps;
    };
    const g = () => e.gemm_matmul(m, n, k, a, b, ta, tb, c1);
    const o = () => e.ours_matmul(m, n, k, a, b, ta, tb, c2);
    for (let w = 0; w < 3; w++) { g(); o(); }
    // Interleaved, so a noisy moment on this VM hits both; the best of 15 each.
    let gemm = Infinity, ours = Infinity;
    for (let r = 0; r < 15; r++) {
      gemm = Math.min(gemm, run(g));
      ours = Math.min(ours, run(o));
    }
    f = new Float32Array(e.memory.buffer);
    let diff = 0;
    for (let i = 0; i < m * n; i++) diff = Math.max(diff, Math.abs(f[c1 / 4 + i] - f[c2 / 4 + i]));
    const gflops = (ms) => (2 * m * n * k) / ms / 1e6;
    out.push({ shape: `${m}×${k} · ${k}×${n}${ta ? ' (Aᵀ)' : ''}${tb ? ' (Bᵀ)' : ''}`, what, gemm: gflops(gemm), ours: gflops(ours), diff, k });
  }
  return out;
}, { bytes: [...wasm], shapes: SHAPES });
await browser.close();

for (const r of rows) {
  // Both sum k products of values in [-1, 1] in f32, in different orders.
  if (!(r.diff <= 1e-5 * r.k)) throw new Error(`${r.shape}: the kernels disagree by ${r.diff}`);
}
const cpu = readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/)?.[1] ?? 'unknown CPU';
const chrome = spawnSync('/usr/bin/chromium', ['--version']).stdout?.toString().match(/Chromium [\d.]+/)?.[0] ?? 'Chromium';
console.log(`Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpu}, ${chrome}, one thread, \`node bench/matmul.mjs\`\n`);
console.log('| product | in a step | gemm crate (GFLOP/s) | core\'s kernel (GFLOP/s) | ratio | max difference |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.shape} | ${r.what} | ${r.gemm.toFixed(1)} | ${r.ours.toFixed(1)} | ${(r.ours / r.gemm).toFixed(2)} | ${r.diff.toExponential(1)} |`);
