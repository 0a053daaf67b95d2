// A student's first visit on a school link: the page loaded cold (empty profile) through a link
// throttled to 20 Mbit/s with 40 ms of latency, the page's CPU slowed 4× (DevTools'
// `Emulation.setCPUThrottlingRate`). It prints the bytes that crossed the link and the time
// until the first tab is usable (lesson 1 shows its example's tokens: the page and the
// tokenizer are here, the weights may still be arriving), until the model is loaded (its facts
// shown) and until the page says "works offline" (the service worker has saved the offline copy).
//
//   cargo xtask dist && node bench/first_visit.mjs [--server python|node] [--mbit 20] [--latency 40] [--cpu 4] [--verbose]
//
// `--verbose` lists each request (asked, answered, bytes) and the page's console as they happen.
//
// `--server python` (the default) serves dist/ with the README's classroom recipe,
// `python3 -m http.server` (no compression, no isolation headers); `--server node` with a
// server that sends the COOP/COEP headers `cargo xtask serve` sends (which compresses nothing
// either). Both sit behind a proxy here that shapes the link and counts its bytes: every
// request of the page, its workers and its service worker crosses it. A benchmark, not a test:
// it asserts nothing.
//
// Needs bench/node_modules (playwright-core), Chromium at /usr/bin/chromium and python3.
import { createServer, request as httpRequest } from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, normalize, extname, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const SERVER = arg('server', 'python');
const MBIT = Number(arg('mbit', 20));
const LATENCY_MS = Number(arg('latency', 40));
const CPU = Number(arg('cpu', 4));

// The origin server.
let origin, stopOrigin;
if (SERVER === 'python') {
  const port = 18000 + Math.floor(Math.random() * 1000);
  const child = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', DIST], { stdio: 'ignore' });
  origin = { port };
  stopOrigin = () => child.kill();
  for (let i = 0; i < 100; i++) {
    const up = await new Promise((r) => httpRequest({ port, path: '/', method: 'HEAD' }, () => r(true)).on('error', () => r(false)).end());
    if (up) break;
    await new Promise((r) => setTimeout(r, 100));
  }
} else {
  const MIME = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json', '.css': 'text/css', '.svg': 'image/svg+xml' };
  const server = createServer(async (req, res) => {
    let file = normalize(join(DIST, decodeURIComponent(new URL(req.url, 'http://x').pathname)));
    try {
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': MIME[extname(file)] ?? 'application/octet-stream', 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  origin = { port: server.address().port };
  stopOrigin = () => server.close();
}

// The school link: one shared pipe of MBIT Mbit/s (every response's bytes wait their turn)
// and LATENCY_MS before each response starts.
let transferred = 0;
let linkFreeAt = 0;
const bytesPerMs = (MBIT * 1e6) / 8 / 1000;
async function shaped(chunk) {
  const now = performance.now();
  const start = Math.max(now, linkFreeAt);
  linkFreeAt = start + chunk.length / bytesPerMs;
  transferred += chunk.length;
  const wait = linkFreeAt - now;
  if (wait > 1) await new Promise((r) => setTimeout(r, wait));
}
const VERBOSE = process.argv.includes('--verbose');
const since = () => ((performance.now() - (globalThis.t0 ?? 0)) / 1000).toFixed(1).padStart(5);
const proxy = createServer((req, res) => {
  const asked = since();
  const upstream = httpRequest({ port: origin.port, path: req.url, method: req.method, headers: req.headers }, async (up) => {
    await new Promise((r) => setTimeout(r, LATENCY_MS));
    res.writeHead(up.statusCode, up.headers);
    let bytes = 0;
    for await (const chunk of up) {
      await shaped(chunk);
      bytes += chunk.length;
      res.write(chunk);
    }
    res.end();
    if (VERBOSE) console.log(`${asked} s → ${since()} s  ${(bytes / 1e6).toFixed(2).padStart(6)} MB  ${req.url}`);
  });
  upstream.on('error', () => res.writeHead(502).end());
  req.pipe(upstream);
});
await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${proxy.address().port}/`;

const profile = await mkdtemp(join(tmpdir(), 'bertbench-first-visit-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = context.pages()[0] ?? await context.newPage();
page.setDefaultTimeout(60 * 60_000);
const cdp = await context.newCDPSession(page);
await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU });

const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
const t0 = performance.now();
globalThis.t0 = t0;
if (VERBOSE) await page.addInitScript(() => {
  window.longTasks = [];
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.longTasks.push([+(e.startTime / 1000).toFixed(2), Math.round(e.duration)]); }).observe({ type: 'longtask', buffered: true });
});
if (VERBOSE) page.on('console', (m) => console.log(`${since()} s  console: ${m.text().slice(0, 160)}`));
await page.goto(url);
await page.getByTestId('lesson-tokens').getByTestId('token').first().waitFor();
const usable = { seconds: (performance.now() - t0) / 1000, bytes: transferred };
await page.getByTestId('model-facts').waitFor();
const loaded = { seconds: (performance.now() - t0) / 1000, bytes: transferred };
if (VERBOSE) console.log('long tasks [start s, ms]:', JSON.stringify(await page.evaluate(() => window.longTasks)));
if (VERBOSE) console.log('page marks:', JSON.stringify(await page.evaluate(() => performance.getEntriesByType('mark').map((m) => [m.name, +(m.startTime / 1000).toFixed(2)]))));
await page.waitForFunction(() => document.querySelector('[data-testid=offline]')?.textContent === 'works offline', null, { timeout: 60 * 60_000, polling: 250 });
const offline = { seconds: (performance.now() - t0) / 1000, bytes: transferred };

const server = SERVER === 'python' ? 'python3 -m http.server (README recipe)' : 'COOP/COEP static server (as cargo xtask serve)';
console.log(`\nFirst visit, cold, ${MBIT} Mbit/s with ${LATENCY_MS} ms latency, CPU slowed ${CPU}×, ${server}:\n`);
console.log('| point | time from navigation | bytes over the link |');
console.log('|---|---|---|');
console.log(`| first tab usable (lesson 1's tokens shown) | ${usable.seconds.toFixed(1)} s | ${mb(usable.bytes)} |`);
console.log(`| model loaded (its facts shown) | ${loaded.seconds.toFixed(1)} s | ${mb(loaded.bytes)} |`);
console.log(`| "works offline" (offline copy saved) | ${offline.seconds.toFixed(1)} s | ${mb(offline.bytes)} |`);

await context.close();
await rm(profile, { recursive: true, force: true });
proxy.close();
stopOrigin();
