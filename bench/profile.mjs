// Where a fine-tuning step spends its time in the browser: Chromium's sampling profiler (CDP
// `Profiler`) around full fine-tuning steps of all-MiniLM-L6-v2 on the CPU fallback (batch 16,
// length 64 or `--len`: `fullLengthTexts`, so every batch is [16, length]), in the real page through `BenchModel`. Prints self time per wasm
// function (the wasm keeps its name section), heaviest first.
//
//   cargo xtask dist && node bench/profile.mjs [--steps 2] [--top 40] [--len 64] [--backend cpu|webgpu]
//
// Needs what `cargo xtask bench` sets up: bench/node_modules (playwright-core) and the model in
// public/models/all-MiniLM-L6-v2 (`cargo xtask setup`).
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { join, normalize, extname, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { fullLengthTexts } from './texts.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = process.env.BERTBENCH_DIST ?? join(ROOT, 'dist');
const { values: opts } = parseArgs({ options: { steps: { type: 'string', default: '2' }, top: { type: 'string', default: '40' }, len: { type: 'string', default: '64' }, backend: { type: 'string', default: 'cpu' } } });
const MIME = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json', '.css': 'text/css' };

const server = createServer(async (req, res) => {
  let file = normalize(join(DIST, decodeURIComponent(new URL(req.url, 'http://x').pathname)));
  try {
    if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
    const body = await readFile(file);
    res.writeHead(200, { 'content-type': MIME[extname(file)] ?? 'application/octet-stream' }).end(body);
  } catch {
    res.writeHead(404).end();
  }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${server.address().port}`;

const LEN = Number(opts.len);
const rows = fullLengthTexts(96, LEN);
const webgpu = opts.backend === 'webgpu';
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...(webgpu ? ['--enable-unsafe-webgpu'] : [])],
});
const page = await browser.newPage();
page.setDefaultTimeout(30 * 60_000);
await page.goto(`${origin}/?backend=${opts.backend}#explore`);
await page.getByTestId('embedding').waitFor();
await page.evaluate(async ({ backend, len }) => {
  window.benchModel = await window.wasmBindings.BenchModel.load('all-MiniLM-L6-v2', backend, len);
}, { backend: opts.backend, len: LEN });
const run = (steps) => page.evaluate(async ({ texts, labels, steps }) => Array.from(await window.benchModel.train_steps(texts, labels, 16, steps)), { texts: rows.map((r) => r[0]), labels: rows.map((r) => r[1]), steps });
await run(1); // warm-up

const cdp = await page.context().newCDPSession(page);
await cdp.send('Profiler.enable');
await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
await cdp.send('Profiler.start');
const times = await run(Number(opts.steps));
const { profile } = await cdp.send('Profiler.stop');
await browser.close();
server.close();

// Self time per function name, from sample counts.
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const counts = new Map();
for (const id of profile.samples) {
  const name = byId.get(id).callFrame.functionName || '(anonymous)';
  counts.set(name, (counts.get(name) ?? 0) + 1);
}
const total = profile.samples.length;
const idle = ['(idle)', '(program)', '(garbage collector)'].reduce((a, n) => a + (counts.get(n) ?? 0), 0);
console.log(`${times.length} steps: ${times.map((t) => (t / 1000).toFixed(2)).join(', ')} s; ${total} samples (${((idle / total) * 100).toFixed(1)}% idle/program/GC)\n`);
console.log('| self % | function |\n|---:|---|');
for (const [name, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, Number(opts.top))) {
  console.log(`| ${((n / total) * 100).toFixed(1)} | \`${name.replace(/\|/g, '\\|').slice(0, 140)}\` |`);
}
