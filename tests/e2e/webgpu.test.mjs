// The page in Chromium with WebGPU (a SwiftShader adapter here): the backend check must pass,
// and the default model and a folder of each family with blocks of its own must give PyTorch's
// numbers on the GPU.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, fixtures, maxAbsDiff, embedSentence, offOriginRequests, screenshot, pick, ROOT } from './harness.mjs';

const MINUTE = 60_000;
let server, chrome, fx;

before(async () => {
  fx = await fixtures();
  server = await serve();
  chrome = await launch({ webgpu: true });
  await chrome.page.goto(server.origin + '/?model=all-MiniLM-L6-v2#explore');
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

/** A new page of the shared browser, with its errors and console errors collected. */
async function watchedPage() {
  const page = await chrome.browser.newPage({ viewport: { width: 1200, height: 900 } });
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  return { page, problems };
}

test('runs on WebGPU and names the adapter', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  await page.waitForFunction(() => document.querySelector('[data-testid=backend]')?.textContent.startsWith('WebGPU ·'), null, { timeout: 5 * MINUTE });
  const badge = await page.getByTestId('backend').textContent();
  assert.match(badge, /^WebGPU · \S/);
  console.log(`backend: ${badge}`);
});

test('WebGPU agrees with the CPU: forward, loss and gradients of a training step', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  const report = page.getByTestId('device-check-report');
  await page.waitForFunction(() => document.querySelector('[data-testid=device-check-report]'), null, { timeout: 10 * MINUTE });
  const r = JSON.parse(await report.textContent());
  for (const c of [...r.forward, ...r.gradients]) {
    console.log(`${c.name}: max |diff| ${c.max_abs_diff.toExponential(2)} (scale ${c.max_abs_reference.toExponential(2)})`);
  }
  console.log(`loss: CPU ${r.loss_reference}, WebGPU ${r.loss_candidate}`);
  assert.equal(r.passed, true, JSON.stringify(r));
  assert.ok(Number.isFinite(r.loss_candidate) && r.loss_candidate > 0);
  assert.equal(r.gradients.length, 7);
  assert.ok(r.forward.some((c) => c.name === 'GELU at large arguments'), 'GELU is checked at large arguments');
  assert.ok(r.forward.some((c) => c.name === 'tanh at large arguments'), 'tanh is checked at large arguments');
  assert.ok(r.gradients.every((g) => g.max_abs_reference > 0), 'gradients are not all zero');
  assert.match(await page.getByTestId('backend').textContent(), /^WebGPU/);
});

test('MiniLM with f32 weights on WebGPU matches PyTorch within 1e-4', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  const ex = fx.examples[0];
  const vector = await embedSentence(page, ex.text, 8 * MINUTE);
  const err = maxAbsDiff(vector, ex.mean_pooled);
  console.log(`WebGPU mean-pooled max abs error vs PyTorch: ${err.toExponential(2)}`);
  assert.ok(err <= 1e-4, `max abs error ${err}`);
  await screenshot(page, 'webgpu');
});

test('the tiny checkpoint from set-up on WebGPU matches PyTorch', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  const text = 'A tiny model for fast tests.';
  // The reference: what transformers computes on the same checkpoint, written when it was made
  // (`scripts/make_bert_tiny.py ... tests/models/bert-tiny-reference.json`, as `cargo xtask test` runs it).
  const path = join(ROOT, 'tests', 'models', 'bert-tiny-reference.json');
  const reference = JSON.parse(await readFile(path, 'utf8').catch(() => assert.fail(`${path} is missing: run scripts/make_bert_tiny.py with it as third argument`)))[text];
  await page.selectOption('#model-select', 'bert-tiny');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('bert-tiny'), null, { timeout: 5 * MINUTE });
  assert.match(await page.getByTestId('model-facts').textContent(), /2layers/);
  assert.match(await page.getByTestId('backend').textContent(), /^WebGPU/);
  const vector = await embedSentence(page, text, 5 * MINUTE);
  assert.equal(vector.length, 128);
  const err = maxAbsDiff(vector, reference);
  console.log(`bert-tiny on WebGPU vs PyTorch: max abs error ${err.toExponential(2)}`);
  assert.ok(err <= 1e-4, `max abs error ${err}`);
});

test('the studio trains on WebGPU in its worker (bert-tiny, head-only)', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('tab-studio').click();
  await page.getByTestId('use-example').click();
  await page.getByTestId('validation-report').waitFor({ timeout: MINUTE });
  await page.locator('details:has([data-testid=train-backend]) > summary').click();
  // With a WebGPU adapter in an isolated page, the first worker still runs the threaded build
  // (CPU runs get every core); a WebGPU run goes to a second worker on the single-thread build,
  // which drives WebGPU.
  assert.equal(await page.evaluate(() => self.crossOriginIsolated), true);
  await page.waitForFunction(() => document.querySelector('[data-testid=train-cpu]')?.textContent.includes('threads'), null, { timeout: 2 * MINUTE });
  assert.equal(await page.getByTestId('threads-note').count(), 0, 'no one-thread note');
  await page.selectOption('[data-testid=train-backend]', 'webgpu');
  await page.getByTestId('head-epochs').fill('3');
  await page.getByTestId('head-epochs').dispatchEvent('change');
  await page.getByTestId('train-start').click();
  await page.getByTestId('train-done').waitFor({ timeout: 9 * MINUTE });
  const done = await page.getByTestId('train-done').textContent();
  console.log(done);
  assert.match(done, /on the WebGPU · \S/);
  assert.equal(await page.locator('[data-testid=confusion] td').count(), 4);
  await screenshot(page, 'studio-webgpu');
});

// The blocks BERT does not have, on the GPU: ALBERT's shared layer and projected embeddings,
// MPNet's relative position bias, ModernBERT's rotary positions, local windows and gated layers,
// DeBERTa-v3's disentangled attention; and the variants' blocks: ALBERT's layer groups of several
// layers, DeBERTa-v2-xlarge's grouped convolution after the first layer, BERT's relative_key_query
// distances. Each folder of
// `scripts/make_test_models.py` opens on WebGPU and embeds as PyTorch did (`expected.json`).
test('each family\'s own blocks on WebGPU: ALBERT, MPNet, ModernBERT and DeBERTa folders, grouped ALBERT layers, DeBERTa\'s convolution and BERT\'s relative distances embed as PyTorch', { timeout: 25 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('tab-explore').click();
  for (const name of ['albert', 'mpnet', 'modernbert', 'deberta', 'albert-groups', 'deberta-conv', 'bert-relative-key-query']) {
    const dir = join(ROOT, 'tests', 'models', name);
    const expected = JSON.parse(await readFile(join(dir, 'expected.json'), 'utf8'));
    const { ok, text } = await pick(page, dir);
    assert.ok(ok, `${name}: ${text}`);
    await page.waitForFunction((n) => document.querySelector('[data-testid=model-facts]')?.textContent.includes(n), name, { timeout: 5 * MINUTE });
    assert.match(await page.getByTestId('backend').textContent(), /^WebGPU/, `${name}: on WebGPU`);
    // The folders share their sentences: a sentence of this folder's own first, so the vector
    // read next is computed on this model, not the previous model's shown for the same text.
    await embedSentence(page, `${name} on the GPU.`, 8 * MINUTE);
    const single = expected.texts.find((t) => t.pair === null);
    const vector = await embedSentence(page, single.text, 8 * MINUTE);
    const hidden = single.last_hidden_state;
    const mean = Array.from({ length: hidden[0].length }, (_, k) => hidden.reduce((s, row) => s + row[k], 0) / hidden.length);
    const err = maxAbsDiff(vector, mean);
    console.log(`${name} on WebGPU vs PyTorch: max abs error ${err.toExponential(2)}`);
    assert.ok(err <= 1e-4, `${name}: max abs error ${err}`);
  }
});

// The page's device check (the tiny model on WebGPU and on the CPU) runs after the first model
// loads, for seconds on a software adapter. A folder picked and embedded meanwhile waits for its
// turn on the device: two readbacks at once failed ("staging buffer could not be mapped").
test('a folder embedded while the device check still runs waits for the device and gives PyTorch\'s vector', { timeout: 15 * MINUTE }, async () => {
  const { page, problems } = await watchedPage();
  try {
    await page.goto(server.origin + '/?model=bert-tiny#explore');
    await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('bert-tiny'), null, { timeout: 5 * MINUTE });
    const dir = join(ROOT, 'tests', 'models', 'modernbert');
    const expected = JSON.parse(await readFile(join(dir, 'expected.json'), 'utf8'));
    const { ok, text } = await pick(page, dir);
    assert.ok(ok, text);
    const checking = await page.evaluate(() => document.querySelector('[data-testid=device-check-status]')?.textContent ?? '(no status shown)');
    console.log(`device check when the embed is asked: ${checking}`);
    const single = expected.texts.find((t) => t.pair === null);
    const vector = await embedSentence(page, single.text, 10 * MINUTE);
    const hidden = single.last_hidden_state;
    const mean = Array.from({ length: hidden[0].length }, (_, k) => hidden.reduce((s, row) => s + row[k], 0) / hidden.length);
    const err = maxAbsDiff(vector, mean);
    console.log(`modernbert embedded beside the device check: max abs error ${err.toExponential(2)}`);
    assert.ok(err <= 1e-4, `max abs error ${err}`);
    await page.waitForFunction(() => /agrees|disagrees|unavailable/.test(document.querySelector('[data-testid=device-check-status]')?.textContent ?? 'agrees'), null, { timeout: 10 * MINUTE });
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

// A lesson computes on the page's WebGPU device as its text changes; each change stops the
// computation before. One stopped while it read from the GPU left cubecl's staging buffer mapped,
// and the next read of that size panicked ("used in submit while mapped"): a view now lets go only
// once its read is done.
test('editing a lesson\'s text while it computes on WebGPU leaves the device working', { timeout: 15 * MINUTE }, async () => {
  const { page, problems } = await watchedPage();
  try {
    await page.goto(server.origin + '/?model=all-MiniLM-L6-v2#lesson=attention');
    await page.waitForFunction(() => document.querySelector('[data-testid=backend]')?.textContent.startsWith('WebGPU'), null, { timeout: 5 * MINUTE });
    await page.getByTestId('lesson-attention-summary').waitFor({ timeout: 10 * MINUTE });
    // Texts of one length, so each computation reads back buffers of the same sizes.
    const texts = ['the cat sat on the mat', 'the dog sat on the mat', 'the cow sat on the mat'];
    for (let i = 0; i < 24; i++) {
      await page.locator('#lesson-attention-text').fill(texts[i % texts.length]);
      await page.locator('#lesson-attention-text').press('Enter');
      await page.waitForTimeout(250 + 50 * (i % 5));
    }
    await page.waitForFunction(() => !document.querySelector('[data-testid=attention-button]')?.disabled, null, { timeout: 10 * MINUTE });
    await page.getByTestId('tab-explore').click();
    const ex = fx.examples[0];
    await page.getByTestId('sentence-a').fill(ex.text);
    await page.getByTestId('embed-button').click();
    // The vector, or the device's failure ("the staging buffer could not be mapped").
    await page.waitForFunction((t) => document.querySelector('[data-testid=embedding] p')?.textContent.includes(`“${t}”`)
      || document.querySelector('[data-testid=embedding-error]'), ex.text, { timeout: 10 * MINUTE });
    const failed = await page.getByTestId('embedding-error').count() ? await page.getByTestId('embedding-error').textContent() : null;
    assert.equal(failed, null, 'the embedding failed');
    const vector = JSON.parse(await page.getByTestId('embedding-values').textContent());
    const err = maxAbsDiff(vector, ex.mean_pooled);
    console.log(`embedded on WebGPU after the edits: max abs error ${err.toExponential(2)}`);
    assert.ok(err <= 1e-4, `max abs error ${err}`);
    assert.match(await page.getByTestId('embedding').getAttribute('data-computed-on'), /WebGPU/);
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('nothing leaves the page origin and nothing went wrong', async () => {
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
  assert.deepEqual(chrome.problems, []);
});
