// Shared by the end-to-end tests: a static server for dist/ that records every request and can
// be told to break a file, and Debian's Chromium launched headless with or without WebGPU.
import { createServer } from 'node:http';
import { readFile, stat, mkdir } from 'node:fs/promises';
import { extname, join, normalize, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// BERTBENCH_DIST serves another build (a copy of dist/ that a long benchmark keeps using while
// dist/ is rebuilt).
export const DIST = process.env.BERTBENCH_DIST ?? join(ROOT, 'dist');
export const ARTIFACTS = join(ROOT, 'tests', 'e2e', 'artifacts');

const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.wasm': 'application/wasm', '.css': 'text/css', '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8', '.safetensors': 'application/octet-stream',
  '.png': 'image/png', '.svg': 'image/svg+xml', '.ico': 'image/x-icon',
  '.webmanifest': 'application/manifest+json',
};

/** The headers that make a page cross-origin isolated (`cargo xtask serve` sends them too). */
export const ISOLATION = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };

/** Serves dist/ on a free loopback port, with the cross-origin isolation headers unless
 * `isolated` is false (a host that does not send them). `faults` maps a URL path to a
 * replacement response (`{ status, body, type }`); it is read per request, so a test may change
 * it on the way. `hold(path)` may return a promise: the response waits until it settles (a
 * slow file, such as the model's weights on a school link). */
export async function serve({ faults = {}, isolated = true, hold = () => undefined } = {}) {
  const extra = isolated ? ISOLATION : {};
  const requests = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://localhost');
    requests.push(url.pathname);
    await hold(url.pathname);
    const fault = faults[url.pathname];
    if (fault) {
      res.writeHead(fault.status ?? 200, { 'content-type': fault.type ?? 'application/octet-stream', ...extra });
      res.end(fault.body ?? '');
      return;
    }
    let path = normalize(join(DIST, decodeURIComponent(url.pathname)));
    if (!path.startsWith(DIST)) { res.writeHead(403).end(); return; }
    try {
      if ((await stat(path)).isDirectory()) path = join(path, 'index.html');
      const body = await readFile(path);
      res.writeHead(200, { 'content-type': MIME[extname(path)] ?? 'application/octet-stream', 'content-length': body.length, ...extra });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const close = () => new Promise((r) => { server.close(r); server.closeAllConnections(); });
  return { origin, requests, close, faults };
}

export const CHROMIUM_FLAGS = [
  '--no-sandbox', '--disable-gpu-sandbox', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** Headless Chromium. With `webgpu`, WebGPU gets the SwiftShader adapter; without, none. */
export async function launch({ webgpu }) {
  const args = [...CHROMIUM_FLAGS, ...(webgpu ? ['--enable-unsafe-webgpu'] : [])];
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args });
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const problems = [];
  const offOrigin = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('request', (r) => offOrigin.push(r.url()));
  return { browser, page, problems, requestedUrls: offOrigin };
}

/** The URLs the page asked for that are not on `origin`: `data:` URLs and the origin's own
 * `blob:` URLs (in-memory objects, such as the scripts of the training worker's thread pool) are
 * not requests to anywhere. */
export function offOriginRequests(urls, origin) {
  return urls.filter((u) => !u.startsWith(origin + '/') && !u.startsWith('data:') && !u.startsWith(`blob:${origin}/`));
}

export async function screenshot(page, name) {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

export async function fixtures() {
  return JSON.parse(await readFile(join(ROOT, 'tests', 'fixtures', 'minilm_parity.json'), 'utf8'));
}

export function maxAbsDiff(a, b) {
  if (a.length !== b.length) throw new Error(`lengths differ: ${a.length} vs ${b.length}`);
  return a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
}

/** Types `text` as sentence A, clicks Embed, and returns the vector the page shows. */
export async function embedSentence(page, text, timeout) {
  await page.getByTestId('sentence-a').fill(text);
  // A click while the page computes other views waits for the model's turn (slow on a software
  // WebGPU adapter); `timeout` covers that wait.
  await page.getByTestId('embed-button').click({ timeout });
  const values = page.getByTestId('embedding-values');
  try {
    await page.waitForFunction(
      (t) => document.querySelector('[data-testid=embedding] p')?.textContent.includes(`“${t}”`),
      text, { timeout },
    );
  } catch (e) {
    // Say what the page shows instead, so a failure can be told apart from a slow adapter.
    const shown = await page.evaluate(() => ({
      embedding: document.querySelector('[data-testid=embedding-panel]')?.innerText,
      backend: document.querySelector('[data-testid=backend]')?.textContent,
      buttonDisabled: document.querySelector('[data-testid=embed-button]')?.disabled,
    }));
    throw new Error(`${e.message}\nthe page shows: ${JSON.stringify(shown)}`);
  }
  return JSON.parse(await values.textContent());
}

/** Opens `csv` as the studio's training file, sets a long run (full fine-tuning, batch 4, 40
 * epochs, evaluated once an epoch) and starts it: a run that checkpoints before it ends. */
export async function startLongRun(page, csv) {
  await page.getByTestId('data-file').setInputFiles({ name: 'tiny.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await page.getByTestId('validation-report').waitFor({ timeout: 60_000 });
  await page.selectOption('[data-testid=train-mode]', 'full');
  await page.locator('[data-testid=studio-train] details summary').click();
  for (const [id, value] of [['batch-size', '4'], ['epochs', '40'], ['eval-every', '0']]) {
    await page.getByTestId(id).fill(value);
    await page.getByTestId(id).dispatchEvent('change');
  }
  await page.getByTestId('train-start').click();
}

/** Picks a folder's files as the folder picker gives them, and waits for what the page says
 * about that folder (an earlier pick's note is cleared when a pick starts). */
export async function pick(page, dir) {
  const name = dir.split('/').at(-1);
  await page.getByTestId('open-model-folder').setInputFiles(dir);
  await page.waitForFunction((n) => {
    const note = document.querySelector('[data-testid=open-model-note]');
    const error = document.querySelector('[data-testid=open-model-error]');
    return error?.textContent.includes(`${n} could not be opened`) || note?.textContent.includes(`Opened ${n}`);
  }, name, { timeout: 180_000 });
  const error = page.getByTestId('open-model-error');
  if (await error.count() > 0) return { ok: false, text: await error.textContent() };
  return { ok: true, text: await page.getByTestId('open-model-note').textContent() };
}
