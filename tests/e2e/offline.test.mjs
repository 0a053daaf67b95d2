// Offline classroom use: one visit saves the page, its wasm, the models and the examples in the
// browser (service worker, versioned cache); with the server stopped and the browser offline the
// page reloads and tokenizes, embeds and trains. A new build replaces the cached version cleanly.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, embedSentence, maxAbsDiff, screenshot, DIST } from './harness.mjs';

const MINUTE = 60_000;
const TEXT = 'Teachers use bertbench offline in classrooms.';
let server, chrome;

before(async () => {
  server = await serve();
  chrome = await launch({ webgpu: false });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

const offlineBadge = (page) => page.getByTestId('offline').textContent();
const cacheNames = (page) => page.evaluate(async () => (await caches.keys()).filter((k) => k.startsWith('bertbench-')));

test('the manifest and the service worker describe this build', async () => {
  const manifest = JSON.parse(await readFile(join(DIST, 'manifest.webmanifest'), 'utf8'));
  assert.equal(manifest.display, 'standalone');
  for (const icon of manifest.icons) await readFile(join(DIST, icon.src));
  assert.ok(manifest.icons.some((i) => i.sizes === '512x512' && i.type === 'image/png'));
  const sw = await readFile(join(DIST, 'sw.js'), 'utf8');
  const files = JSON.parse(/files: (\[.*\]) \}/.exec(sw)[1]);
  for (const f of ['./', 'index.html', 'worker.js', 'models/all-MiniLM-L6-v2-int8/model.safetensors.gz', 'models/all-MiniLM-L6-v2-int8/tokenizer.json.gz', 'examples/sentiment.csv', 'manifest.webmanifest']) {
    assert.ok(files.includes(f), `${f} is not precached`);
  }
  // Other models (the f32 weights, the tests' bert-tiny) are downloaded only when chosen.
  assert.deepEqual(files.filter((f) => f.startsWith('models/') && f.split('/').length > 2 && !f.startsWith('models/all-MiniLM-L6-v2-int8/')), []);
  assert.ok(files.some((f) => f.endsWith('_bg.wasm.gz')), 'the wasm is not precached');
  assert.ok(!files.some((f) => f.endsWith('_bg.wasm')), 'only the gzipped wasm is in the build');
  assert.ok(!files.includes('sw.js'), 'the service worker must not cache itself');
});

test('after one visit, the page works with the server stopped and the browser offline', { timeout: 15 * MINUTE }, async () => {
  const { page } = chrome;
  await page.goto(server.origin + '/#explore');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  await page.waitForFunction(() => document.querySelector('[data-testid=offline]')?.textContent === 'works offline', null, { timeout: 5 * MINUTE });
  assert.equal((await cacheNames(page)).length, 1);
  // Of the training worker's two threaded builds only the one it loads here is saved: this
  // Chromium has relaxed SIMD.
  const cached = await page.evaluate(async () => (await (await caches.open((await caches.keys()).find((k) => k.startsWith('bertbench-')))).keys()).map((r) => new URL(r.url).pathname));
  assert.ok(cached.some((p) => /^\/threads-relaxed-[0-9a-f]{16}\/.*_bg\.wasm\.gz$/.test(p)), 'the relaxed-SIMD threaded build is saved');
  assert.ok(!cached.some((p) => /^\/threads-[0-9a-f]{16}\//.test(p)), 'the baseline threaded build is not saved');
  // index.html preloads the default model's files (cargo xtask's INT8_DIR): the page must
  // load that very model, and the offline copy must hold what was preloaded.
  const html = await readFile(join(DIST, 'index.html'), 'utf8');
  // The weights are preloaded once the wasm has arrived (a meta tag names them).
  const preloaded = [...html.matchAll(/<link rel="preload" href="\/(models\/[^"]+)"|<meta name="bertbench-after-wasm" content="\/(models\/[^"]+)"/g)].map((m) => m[1] ?? m[2]);
  assert.ok(preloaded.some((p) => p.endsWith('model.safetensors.gz')), 'the weights are preloaded too');
  assert.deepEqual([...new Set(preloaded.map((p) => p.split('/')[1]))], ['all-MiniLM-L6-v2-int8'], 'index.html preloads the default model');
  assert.match(await page.getByTestId('model-facts').textContent(), /all-MiniLM-L6-v2-int8/, 'the page loads the model index.html preloads');
  for (const p of preloaded) assert.ok(cached.includes('/' + p), `${p} is preloaded but not saved offline`);
  const online = await embedSentence(page, TEXT, 5 * MINUTE);

  await server.close();
  await page.context().setOffline(true);
  const seen = server.requests.length;
  await page.reload();
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  assert.match(await page.getByTestId('model-facts').textContent(), /all-MiniLM-L6-v2/);
  assert.equal(await offlineBadge(page), 'works offline');

  await page.getByTestId('sentence-a').fill('offline classroom');
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=token]')].some((t) => t.textContent.includes('classroom')), null, { timeout: MINUTE });
  const offline = await embedSentence(page, TEXT, 5 * MINUTE);
  assert.ok(maxAbsDiff(online, offline) < 1e-6, 'the same vector offline');

  await page.getByTestId('tab-studio').click();
  await page.getByTestId('use-example').click();
  await page.getByTestId('validation-report').waitFor({ timeout: MINUTE });
  await page.waitForFunction(() => !document.querySelector('[data-testid=train-start]').disabled, null, { timeout: 5 * MINUTE });
  await page.getByTestId('train-start').click();
  await page.getByTestId('train-done').waitFor({ timeout: 8 * MINUTE });
  const accuracy = parseFloat(await page.getByTestId('valid-accuracy').textContent());
  assert.ok(accuracy >= 70, `head-only accuracy offline: ${accuracy}%`);
  // Offline the service worker isolates the page, and the worker runs the saved threaded build.
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  if (cores > 1) {
    assert.equal((await page.getByTestId('train-cpu').textContent()).trim(), `CPU · ${cores} threads`);
    assert.equal(await page.getByTestId('train-cpu').getAttribute('data-fused-multiply-add'), 'true');
  }
  await screenshot(page, 'offline');
  assert.equal(server.requests.length, seen, 'nothing reached the server while offline');
  assert.deepEqual(chrome.problems, []);
});

test('a new build takes over from the cached one and leaves one cache', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  await page.context().setOffline(false);
  await server.close(); // already closed unless the test above failed before closing it
  server = await serve();
  await page.goto(server.origin + '/#explore');
  // Another origin, another cache: this origin's first version gets installed first.
  await page.waitForFunction(() => document.querySelector('[data-testid=offline]')?.textContent === 'works offline', null, { timeout: 5 * MINUTE });
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  const [first] = await cacheNames(page);

  // The next build: the same files under a new version.
  const sw = await readFile(join(DIST, 'sw.js'), 'utf8');
  server.faults['/sw.js'] = { type: 'text/javascript', body: sw.replace(/version: "([0-9a-f]+)"/, 'version: "$1-next"') };
  await page.evaluate(async () => (await navigator.serviceWorker.getRegistration()).update());
  // Installed completely, in charge, and the old version's cache gone.
  await page.waitForFunction(async (want) => JSON.stringify((await caches.keys()).filter((k) => k.startsWith('bertbench-'))) === JSON.stringify([want]),
    `${first}-next`, { timeout: 5 * MINUTE, polling: 1000 });
  await page.getByTestId('update-ready').waitFor({ timeout: MINUTE });
  await page.reload();
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  assert.equal(await offlineBadge(page), 'works offline');
});
