// Threads in the training worker: the same full fine-tuning run on the default model, in a
// cross-origin isolated page (the worker runs the threaded build on every core), in one whose
// browser also offers a WebGPU adapter (still every core: WebGPU runs go to a second worker), and
// in a page that is not isolated (one thread, and the studio says why). The explorer's many-text
// views, and its one-input views of a long input, run on the worker's threads too, with the
// same numbers. Both must learn the same thing: the
// threads only split the matrix products, and Chromium's threaded build differs from the
// single-thread one only in fusing each multiply-add (relaxed SIMD), so the loss curves agree to
// float rounding.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, offOriginRequests, screenshot, DIST } from './harness.mjs';

const MINUTE = 60_000;
const runs = {};
const open = [];
after(async () => { for (const close of open) await close(); });

/** One run in a fresh browser (with a WebGPU adapter, SwiftShader's, if `webgpu`): the CPU
 * option's label, the note, the result, the loss curve. */
async function train(isolated, webgpu = false) {
  const server = await serve({ isolated });
  const chrome = await launch({ webgpu });
  open.push(async () => { await chrome.browser.close(); await server.close(); });
  const { page } = chrome;
  await page.goto(server.origin + '/#studio');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  await page.getByTestId('use-example').click();
  await page.getByTestId('validation-report').waitFor({ timeout: MINUTE });
  await page.waitForFunction(() => !document.querySelector('[data-testid=train-start]')?.disabled, null, { timeout: 2 * MINUTE });
  await page.locator('details:has([data-testid=train-backend]) > summary').click();
  await page.selectOption('[data-testid=train-mode]', 'full');
  const result = {
    isolated: await page.evaluate(() => self.crossOriginIsolated),
    cores: await page.evaluate(() => navigator.hardwareConcurrency),
    label: (await page.getByTestId('train-cpu').textContent()).trim(),
    note: (await page.getByTestId('threads-note').count()) ? await page.getByTestId('threads-note').textContent() : '',
    fma: await page.getByTestId('train-cpu').getAttribute('data-fused-multiply-add'),
    relaxedSimd: await page.evaluate(async () => { await import('/cpu_builds.js'); return globalThis.bertbenchCpuBuilds.hasRelaxedSimd(); }),
  };
  const t = Date.now();
  await page.getByTestId('train-start').click();
  await page.getByTestId('train-done').waitFor({ timeout: 15 * MINUTE });
  result.seconds = (Date.now() - t) / 1000;
  result.done = await page.getByTestId('train-done').textContent();
  result.losses = JSON.parse(await page.getByTestId('loss-chart').getAttribute('data-values'));
  await screenshot(page, `threads-${isolated ? 'isolated' : 'not-isolated'}${webgpu ? '-webgpu' : ''}`);
  console.log(JSON.stringify({ ...result, losses: undefined }));
  Object.assign(result, { page, chrome, origin: server.origin });
  return result;
}

test('cross-origin isolated: the training worker fine-tunes on every core and says so', { timeout: 20 * MINUTE }, async (t) => {
  runs.threads = await train(true);
  const r = runs.threads;
  assert.equal(r.isolated, true, 'the COOP/COEP headers isolate the page');
  if (r.cores < 2) {
    t.skip('this machine has one core: nothing to spread over');
    return;
  }
  assert.equal(r.label, `CPU · ${r.cores} threads`);
  assert.equal(r.note, '');
  // Chromium has relaxed SIMD: the worker runs the build whose kernel fuses multiply and add.
  assert.equal(r.relaxedSimd, true, 'this Chromium validates relaxed SIMD');
  assert.equal(r.fma, 'true', 'the worker runs the relaxed-SIMD build');
  assert.match(r.done, new RegExp(`on the CPU · ${r.cores} threads:`));
});

test('a browser that offers WebGPU (SwiftShader): a CPU run still gets every core, with the same training', { timeout: 20 * MINUTE }, async (t) => {
  const r = await train(true, true);
  const adapter = await r.page.evaluate(async () => Boolean(navigator.gpu && await navigator.gpu.requestAdapter()));
  assert.equal(adapter, true, 'the browser offers a WebGPU adapter');
  if (r.cores < 2) {
    t.skip('this machine has one core: nothing to spread over');
    return;
  }
  assert.equal(r.label, `CPU · ${r.cores} threads`);
  assert.equal(r.note, '');
  assert.match(r.done, new RegExp(`on the CPU · ${r.cores} threads:`));
  runs.withGpu = r;
});

test('not isolated: one thread, a note that says why, and the same training', { timeout: 20 * MINUTE }, async () => {
  runs.single = await train(false);
  const r = runs.single;
  assert.equal(r.isolated, false);
  assert.equal(r.label, 'CPU (WebAssembly)');
  assert.equal(r.fma, 'false', 'the single-thread build has no relaxed SIMD');
  assert.match(r.note, /one thread: this page is not cross-origin isolated yet/);
  assert.match(r.done, /on the CPU: validation accuracy/);
});

/** The embedding map of the typed sentences in `r`'s page: where it was computed, and its curves. */
async function mapOf(r) {
  const { page } = r;
  await page.getByTestId('tab-explore').click();
  const map = page.getByTestId('map-panel');
  await map.scrollIntoViewIfNeeded();
  await page.waitForFunction(() => !document.querySelector('[data-testid=map-button]')?.disabled, null, { timeout: 2 * MINUTE });
  await page.getByTestId('map-button').click();
  await page.getByTestId('map-note').waitFor({ timeout: 5 * MINUTE });
  return {
    on: await page.getByTestId('map-note').getAttribute('data-computed-on'),
    curves: JSON.parse(await page.getByTestId('map-anisotropy').getAttribute('data-values')),
  };
}

test('the explorer embeds many texts on every core where the page is isolated, with the same numbers', { timeout: 10 * MINUTE }, async (t) => {
  const [a, b] = [runs.threads, runs.single];
  assert.ok(a && b, 'both pages are open');
  if (a.cores < 2) {
    t.skip('this machine has one core: nothing to spread over');
    return;
  }
  const [threaded, single] = [await mapOf(a), await mapOf(b)];
  assert.equal(threaded.on, `CPU, ${a.cores} threads, in the training worker`);
  assert.equal(single.on, 'CPU, in the page');
  assert.equal(threaded.curves.length, single.curves.length);
  threaded.curves.forEach((series, i) => series.forEach((y, l) => assert.ok(Math.abs(y - single.curves[i][l]) <= 1e-4, `series ${i}, layer ${l}: ${y} vs ${single.curves[i][l]}`)));
});

// Long enough (over 64 tokens) that the explorer's one-input views go to the worker.
const LONG = Array.from({ length: 8 }, (_, i) => `Sentence ${i + 1}: the river bank was quiet, but the bank downtown lent money to everyone.`).join(' ');

/** The explorer's one-input views of a long sentence in `r`'s page: where each was computed,
 * the attention weights drawn, the input parts' lengths, and the sentence vector. */
async function longInputOf(r) {
  const { page } = r;
  await page.getByTestId('tab-explore').click();
  await page.getByTestId('sentence-a').fill(LONG);
  const tokens = await page.getByTestId('tokens').getByTestId('token').count();
  assert.ok(tokens > 64, `${tokens} tokens`);
  await page.waitForFunction(() => !document.querySelector('[data-testid=attention-button]')?.disabled, null, { timeout: 2 * MINUTE });
  await page.getByTestId('attention-button').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=attention-heatmap]')?.dataset.seq === '64', null, { timeout: 3 * MINUTE });
  const attention = await page.locator('[data-testid=attention-heatmap] rect[data-w]').evaluateAll((rs) => rs.map((r) => +r.dataset.w));
  const attentionOn = await page.getByTestId('attention-note').getAttribute('data-computed-on');
  await page.getByTestId('input-parts-button').click();
  await page.locator('[data-testid=input-parts] tr').nth(tokens).waitFor({ timeout: 2 * MINUTE });
  const parts = await page.locator('[data-testid=input-parts] tr td:nth-child(4)').evaluateAll((tds) => tds.map((td) => td.textContent.split(' · ').map(Number)));
  const partsOn = await page.getByTestId('input-parts').getAttribute('data-computed-on');
  await page.getByTestId('embed-button').click();
  await page.waitForFunction((start) => document.querySelector('[data-testid=embedding]')?.textContent.includes(start), LONG.slice(0, 40), { timeout: 2 * MINUTE });
  const vector = JSON.parse(await page.getByTestId('embedding-values').textContent());
  const embeddingOn = await page.getByTestId('embedding').getAttribute('data-computed-on');
  return { on: [attentionOn, partsOn, embeddingOn], attention, parts, vector };
}

test('the explorer’s views of a long input run on every core where the page is isolated, with the same numbers', { timeout: 10 * MINUTE }, async (t) => {
  const [a, b] = [runs.threads, runs.single];
  assert.ok(a && b, 'both pages are open');
  if (a.cores < 2) {
    t.skip('this machine has one core: nothing to spread over');
    return;
  }
  const [threaded, single] = [await longInputOf(a), await longInputOf(b)];
  assert.deepEqual(threaded.on, Array(3).fill(`CPU, ${a.cores} threads, in the training worker`));
  assert.deepEqual(single.on, Array(3).fill('CPU, in the page'));
  const close = (x, y, tol, what) => {
    assert.equal(x.length, y.length, `${what}: as many values`);
    x.forEach((v, i) => assert.ok(Math.abs(v - y[i]) <= tol, `${what} ${i}: ${v} vs ${y[i]}`));
  };
  close(threaded.attention, single.attention, 1e-4, 'attention weight');
  // The lengths are shown to two decimals: equal up to the last digit's rounding.
  close(threaded.parts.flat(), single.parts.flat(), 0.0101, 'input part length');
  close(threaded.vector, single.vector, 1e-4, 'sentence vector value');
  await screenshot(a.page, 'threads-long-input');
});

test('a host without the headers: from the second visit the service worker isolates the page, and the worker gets threads', { timeout: 10 * MINUTE }, async () => {
  const { page } = runs.single;
  await page.waitForFunction(() => document.querySelector('[data-testid=offline]')?.textContent === 'works offline', null, { timeout: 5 * MINUTE });
  await page.reload();
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  assert.equal(await page.evaluate(() => self.crossOriginIsolated), true);
  await page.waitForFunction(() => document.querySelector('[data-testid=train-cpu]')?.textContent.includes('threads'), null, { timeout: 2 * MINUTE });
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  assert.equal((await page.getByTestId('train-cpu').textContent()).trim(), `CPU · ${cores} threads`);
});

test('a relaxed-SIMD build that does not start: the worker falls back to the baseline threaded build', { timeout: 10 * MINUTE }, async () => {
  const html = await readFile(join(DIST, 'index.html'), 'utf8');
  const relaxed = /<meta name="bertbench-threads-relaxed" content="([^"]+)\.js"/.exec(html)?.[1];
  assert.ok(relaxed, 'index.html names the relaxed-SIMD bundle');
  const server = await serve({ faults: { [`/${relaxed}_bg.wasm.gz`]: { status: 404 } } });
  const chrome = await launch({ webgpu: false });
  open.push(async () => { await chrome.browser.close(); await server.close(); });
  const { page } = chrome;
  await page.goto(server.origin + '/#studio');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  await page.waitForFunction(() => document.querySelector('[data-testid=train-cpu]')?.textContent.includes('threads'), null, { timeout: 2 * MINUTE });
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  assert.equal((await page.getByTestId('train-cpu').textContent()).trim(), `CPU · ${cores} threads`);
  assert.equal(await page.getByTestId('train-cpu').getAttribute('data-fused-multiply-add'), 'false');
  assert.ok(server.requests.includes(`/${relaxed}_bg.wasm.gz`), 'the worker tried the relaxed build first');
  assert.equal(await page.getByTestId('threads-note').count(), 0, 'no note: threads work');
});

test('threads change the speed, not the result: the same losses and metrics', () => {
  const [a, b] = [runs.threads, runs.single];
  assert.ok(a && b, 'both runs finished');
  const c = runs.withGpu;
  if (c) c.losses.forEach((series, i) => series.forEach((y, j) => assert.ok(Math.abs(y - a.losses[i][j]) <= 1e-4 * Math.max(1, Math.abs(y)), `with WebGPU offered: series ${i}, point ${j}`)));
  const metrics = (done) => /validation accuracy ([\d.]+)%, macro-F1 ([\d.]+)/.exec(done).slice(1).map(Number);
  assert.deepEqual(metrics(a.done), metrics(b.done));
  assert.equal(a.losses.length, b.losses.length);
  a.losses.forEach((series, i) => {
    assert.equal(series.length, b.losses[i].length, `series ${i}: as many points`);
    assert.ok(series.length > 0);
    series.forEach((y, j) => assert.ok(Math.abs(y - b.losses[i][j]) <= 1e-4 * Math.max(1, Math.abs(y)), `series ${i}, point ${j}: ${y} vs ${b.losses[i][j]}`));
  });
  console.log(`full fine-tuning on the example: ${a.seconds.toFixed(1)} s with threads, ${b.seconds.toFixed(1)} s on one`);
});

test('nothing left the page and nothing went wrong, in either page', () => {
  for (const r of [runs.threads, runs.single, runs.withGpu].filter(Boolean)) {
    assert.deepEqual(offOriginRequests(r.chrome.requestedUrls, r.origin), []);
    assert.deepEqual(r.chrome.problems, []);
  }
});
