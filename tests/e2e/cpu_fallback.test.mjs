// The page in Chromium without a WebGPU adapter: it must fall back to the CPU and compute the
// same numbers as PyTorch: with the f32 weights (the model menu's parity choice) within 1e-4, and
// with the default's 8-bit weights within the bound core/tests/parity.rs measures.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, fixtures, maxAbsDiff, embedSentence, offOriginRequests, screenshot } from './harness.mjs';

const MINUTE = 60_000;
let server, chrome, fx;

before(async () => {
  fx = await fixtures();
  server = await serve();
  chrome = await launch({ webgpu: false });
  await chrome.page.goto(server.origin + '/?model=all-MiniLM-L6-v2#explore');
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

test('falls back to the CPU and says why', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  const badge = page.getByTestId('backend');
  await page.waitForFunction(() => document.querySelector('[data-testid=backend]')?.textContent.startsWith('CPU'), null, { timeout: 5 * MINUTE });
  assert.equal(await badge.textContent(), 'CPU (WebGPU unavailable)');
  assert.match(await page.getByTestId('gpu-note').textContent(), /WebGPU/);
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  const facts = await page.getByTestId('model-facts').textContent();
  assert.match(facts, /6layers/);
  assert.match(facts, /384hidden size/);
  assert.match(facts, /12attention heads/);
});

test('tokens and ids match the Python tokenizer, pairs get segment 1', { timeout: 2 * MINUTE }, async () => {
  const { page } = chrome;
  for (const ex of fx.examples) {
    await page.getByTestId('sentence-a').fill(ex.text);
    await page.getByTestId('sentence-b').fill(ex.pair ?? '');
    const ids = (await page.getByTestId('token-id').allTextContents()).map(Number);
    assert.deepEqual(ids, ex.input_ids, ex.text);
    const segment1 = await page.locator('[data-testid=token].seg1').count();
    assert.equal(segment1, ex.token_type_ids.filter((t) => t === 1).length, ex.text);
  }
  await page.getByTestId('sentence-b').fill('');
});

test('the sentence embedding matches PyTorch within 1e-4', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  for (const ex of fx.examples.filter((e) => e.pair === null).slice(0, 3)) {
    const vector = await embedSentence(page, ex.text, 2 * MINUTE);
    const err = maxAbsDiff(vector, ex.mean_pooled);
    assert.ok(err <= 1e-4, `${ex.text}: max abs error ${err}`);
  }
});

test('the [CLS] + pooler vector matches the PyTorch pooler output', { timeout: 2 * MINUTE }, async () => {
  const { page } = chrome;
  const ex = fx.examples[1];
  await page.selectOption('#pooling', 'pooler');
  const vector = await embedSentence(page, ex.text, 2 * MINUTE);
  const err = maxAbsDiff(vector.slice(0, 16), ex.pooler_output_first16);
  assert.ok(err <= 1e-4, `pooler: max abs error ${err}`);
  await page.selectOption('#pooling', 'mean');
});

test('the default model stores its weights in 8 bits, says so, and stays within 6e-2 of PyTorch', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  assert.match(await page.getByTestId('model-precision').textContent(), /^Weights stored as f32\./);
  await page.goto(server.origin + '/#explore');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('all-MiniLM-L6-v2-int8'), null, { timeout: 5 * MINUTE });
  assert.match(await page.getByTestId('model-precision').textContent(), /^Weights stored in 8 bits with a scale per 64 weights \(a quarter of the f32 download\) and read as f32: hidden states within 6e-2/);
  let worst = 0;
  let cosine = 1;
  for (const ex of fx.examples.filter((e) => e.pair === null).slice(0, 3)) {
    const got = await embedSentence(page, ex.text, 2 * MINUTE);
    worst = Math.max(worst, maxAbsDiff(got, ex.mean_pooled));
    const dot = got.reduce((s, x, i) => s + x * ex.mean_pooled[i], 0);
    const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    cosine = Math.min(cosine, dot / (norm(got) * norm(ex.mean_pooled)));
  }
  console.log(`# 8-bit weights: sentence vectors within ${worst.toExponential(2)} of PyTorch's f32, cosine ≥ ${cosine.toFixed(6)}`);
  assert.ok(worst <= 6e-2, `max abs error ${worst}`);
  assert.ok(cosine >= 0.9995, `cosine ${cosine}`);
  await page.goto(server.origin + '/?model=all-MiniLM-L6-v2#explore');
  await page.waitForFunction(() => /all-MiniLM-L6-v2layer|all-MiniLM-L6-v2model/.test(document.querySelector('[data-testid=model-facts]')?.textContent ?? ''), null, { timeout: 5 * MINUTE });
});

test('text longer than 512 tokens is truncated with a message', { timeout: MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('sentence-a').fill(fx.long.text);
  const warning = await page.getByTestId('truncated').textContent();
  assert.match(warning, new RegExp(`${fx.long.untruncated_len} tokens long`));
  assert.equal(await page.getByTestId('token').count(), 512);
  await page.getByTestId('sentence-a').fill('   ');
  assert.match(await page.getByTestId('tokens-error').textContent(), /empty/);
});

test('similar sentences get similar vectors', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('similarity-button').click();
  const matrix = page.getByTestId('similarity-matrix');
  await matrix.waitFor({ timeout: 5 * MINUTE });
  const rows = await matrix.locator('tr').evaluateAll((trs) =>
    trs.slice(1).map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent))));
  assert.equal(rows.length, 6);
  rows.forEach((row, i) => assert.equal(row[i], 1));
  // Guitar/guitar and market/shares are closer than guitar/market.
  assert.ok(rows[0][1] > rows[0][2] + 0.2, `guitar pair ${rows[0][1]} vs guitar-market ${rows[0][2]}`);
  assert.ok(rows[2][3] > rows[2][0] + 0.2, `market pair ${rows[2][3]} vs market-guitar ${rows[2][0]}`);
  await page.getByTestId('sentence-a').fill('Teachers use bertbench offline in classrooms.');
  await screenshot(page, 'cpu-fallback');
});

test('nothing leaves the page origin and nothing went wrong', async () => {
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
  assert.deepEqual(chrome.problems, []);
});
