// Where the tab's memory goes while the studio fine-tunes: Chromium's own breakdown per context
// (`performance.measureUserAgentSpecificMemory()`, which needs the cross-origin isolated page)
// and the renderer's resident size, with the page idle on the studio and again after the studio
// has fully fine-tuned MiniLM on the full-length texts (batch 16, length 64, one epoch) in its
// training worker.
//
//   cargo xtask dist && node bench/memory.mjs [--from-explorer] [--query '?backend=cpu' --wait-embedding] [--epochs 1] [--timeline]
//
// `--query Q` opens the explorer at `/Q` (as `--from-explorer` does at `/`); `--wait-embedding`
// lets the explorer's embedding view finish first: with both, the flow of bench/run.mjs.
// `--timeline` prints the renderers' sizes and the training worker's wasm memory every half
// second of the run.
//
// Needs bench/node_modules (playwright-core) and the model (`cargo xtask setup`).
import { createServer } from 'node:http';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { readdirSync, readFileSync } from 'node:fs';
import { join, normalize, extname, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { fullLengthTexts } from './texts.mjs';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const MIME = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json', '.css': 'text/css' };
const ISOLATION = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };
const server = createServer(async (req, res) => {
  let file = normalize(join(DIST, decodeURIComponent(new URL(req.url, 'http://x').pathname)));
  try {
    if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
    const body = await readFile(file);
    res.writeHead(200, { 'content-type': MIME[extname(file)] ?? 'application/octet-stream', ...ISOLATION }).end(body);
  } catch {
    res.writeHead(404).end();
  }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${server.address().port}`;

// A fresh on-disk profile, as a user's browser has: an off-the-record one (a plain `newPage()`)
// stores saved work differently, without the worker's scratch files (`store::stores_copies`).
const profile = await mkdtemp(join(tmpdir(), 'bertbench-memory-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  // Measure at once instead of at the next garbage collection.
  args: ['--no-sandbox', '--disable-gpu-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--enable-blink-features=ForceEagerMeasureMemory'],
});
const page = context.pages()[0] ?? await context.newPage();
page.setDefaultTimeout(30 * 60_000);

const mb = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
function renderers() {
  const out = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer')) continue;
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = (key) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)[1]) * 1024;
      out.push(`renderer ${pid}: resident ${mb(kb('VmRSS'))}, peak ${mb(kb('VmHWM'))}`);
    } catch { /* gone */ }
  }
  return out;
}
async function report(when) {
  // Read before the breakdown: with ForceEagerMeasureMemory, measuring collects garbage in every
  // context of the process (the service worker's too), which a tab left alone may not do.
  const before = renderers();
  const breakdown = await page.evaluate(async () => {
    const m = await performance.measureUserAgentSpecificMemory();
    return m.breakdown.filter((b) => b.bytes > 2 ** 20).map((b) => ({
      bytes: b.bytes, where: b.attribution.map((a) => `${a.scope} ${new URL(a.url).pathname}`).join(', ') || b.types.join(', '),
    }));
  });
  const pageWasm = await page.evaluate(() => window.wasmBindings.wasm_memory_bytes());
  console.log(`\n${when}`);
  console.log(`  the page's wasm memory: ${mb(pageWasm)}`);
  for (const line of before) console.log(`  ${line}`);
  for (const b of breakdown) console.log(`  ${mb(b.bytes).padStart(8)}  ${b.where}`);
}

// `--from-explorer`: open the page on the explorer (its default view), which computes its views
// for the model, and go to the studio as soon as the model is ready, as a user might.
const fromExplorer = process.argv.includes('--from-explorer') || process.argv.includes('--query');
const query = process.argv.includes('--query') ? process.argv[process.argv.indexOf('--query') + 1] : '';
await page.goto(fromExplorer ? `${origin}/${query}` : `${origin}/#studio`);
await page.getByTestId('model-facts').waitFor();
if (process.argv.includes('--wait-embedding')) await page.getByTestId('embedding').waitFor();
if (fromExplorer) await page.getByTestId('tab-studio').click();
await page.waitForFunction(() => document.querySelector('[data-testid=offline]')?.textContent === 'works offline');
await report('the studio, idle, model loaded');
const tsv = ['sentence\tlabel', ...fullLengthTexts().map((r) => r.join('\t'))].join('\n') + '\n';
await page.getByTestId('data-file').setInputFiles({ name: 'train_64.tsv', mimeType: 'text/tab-separated-values', buffer: Buffer.from(tsv) });
await page.getByTestId('validation-report').waitFor();
await page.locator('details:has([data-testid=train-backend]) > summary').click();
await page.selectOption('[data-testid=train-mode]', 'full');
const epochs = process.argv.includes('--epochs') ? process.argv[process.argv.indexOf('--epochs') + 1] : '1';
for (const [id, value] of [['batch-size', '16'], ['epochs', epochs], ['max-len', '64']]) {
  await page.getByTestId(id).fill(value);
  await page.getByTestId(id).dispatchEvent('change');
}
if (await page.getByTestId('group-by-length').isChecked()) await page.getByTestId('group-by-length').uncheck();
// The renderer's resident size every half second while it trains: what moves the peak, and when.
const timeline = [];
const t0 = Date.now();
// With each sample, the training worker's wasm memory (it never shrinks: its high-water mark).
const workerWasm = async () => {
  for (const w of page.workers()) {
    const bytes = await w.evaluate(() => self.wasmBindings?.wasm_memory_bytes()).catch(() => undefined);
    if (bytes) return bytes;
  }
  return 0;
};
const sampler = setInterval(async () => {
  const at = ((Date.now() - t0) / 1000).toFixed(1);
  const rss = renderers().map((l) => l.replace(/^renderer \d+: /, '')).join(' | ');
  timeline.push(`${at} s ${rss} | worker's wasm ${mb(await workerWasm())}`);
}, 500);
await page.getByTestId('train-start').click();
await page.getByTestId('train-done').waitFor();
// The page then saves the run (in IndexedDB, from the worker): part of the run's cost.
await page.locator('[data-testid=saved-item][data-kind=run]').waitFor();
clearInterval(sampler);
if (process.argv.includes('--timeline')) console.log(`\ntimeline (from the click on Start)\n  ${timeline.join('\n  ')}`);
await report(`after: ${await page.getByTestId('train-done').textContent()}`);
await context.close();
await rm(profile, { recursive: true, force: true });
server.close();
