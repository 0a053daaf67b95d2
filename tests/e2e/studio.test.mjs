// The fine-tuning studio on the default model, CPU fallback: upload a CSV, check the report,
// train head-only in the worker (pausing and resuming on the way), predict, export, re-import
// and predict the same again; the exported folder loads in transformers
// (AutoModelForSequenceClassification with its own modelling code) to the same probabilities.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { serve, launch, offOriginRequests, screenshot, ARTIFACTS } from './harness.mjs';
import { exportZip, checkWithTransformers } from './studio_helpers.mjs';

const MINUTE = 60_000;
let server, chrome;

// 24 positive and 24 negative sentences, one blank row and a quoted field with a comma and a
// newline, CRLF line ends: what a spreadsheet exports.
const POSITIVE = [
  'a joyful and moving story', 'the best meal I have had all year', 'wonderful acting and a clever plot',
  'I loved every minute of it', 'the staff were kind and helpful', 'a delightful surprise from start to finish',
  'bright, funny and warm', 'this game is pure fun', 'the view from the hill was beautiful',
  'an excellent book I will read again', 'great value and fast delivery', 'the music made me smile',
  'a charming little cafe', 'our trip was fantastic', 'she gave a brilliant performance',
  'the new phone works perfectly', 'a lovely sunny afternoon', 'the lesson was clear and inspiring',
  'tasty food and friendly people', 'the sequel is even better', 'a gorgeous, heartfelt film',
  'we had a great time at the beach', 'the hotel room was spotless and cosy', 'an uplifting ending',
];
const NEGATIVE = [
  'a dull and lifeless story', 'the worst meal I have had all year', 'wooden acting and a silly plot',
  'I hated every minute of it', 'the staff were rude and slow', 'a tedious mess from start to finish',
  'grey, boring and cold', 'this game is a chore', 'the view was ruined by traffic',
  'a dreadful book I could not finish', 'overpriced and it arrived broken', 'the music gave me a headache',
  'a dirty little cafe', 'our trip was a disaster', 'she gave a painful performance',
  'the new phone keeps crashing', 'a miserable rainy afternoon', 'the lesson was confusing and dull',
  'cold food and unfriendly people', 'the sequel is even worse', 'an ugly, cynical film',
  'we had an awful time at the beach', 'the hotel room was filthy', 'a depressing ending',
];

const field = (s) => (s.includes(',') ? `"${s}"` : s);

function csv() {
  const rows = ['text,label'];
  POSITIVE.forEach((p, i) => { rows.push(`${field(p)},positive`); rows.push(`${field(NEGATIVE[i])},negative`); });
  rows.splice(5, 0, ',');
  rows.push('"long day, but\nthe ending was lovely",positive');
  return rows.join('\r\n') + '\r\n';
}


before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  server = await serve();
  chrome = await launch({ webgpu: false });
  await chrome.page.goto(server.origin + '/#studio');
  await chrome.page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

async function probabilities(page, text) {
  await page.getByTestId('predict-text').fill(text);
  const before = await page.getByTestId('prediction').count();
  await page.getByTestId('predict-button').click();
  // The button is disabled while waiting; wait for it to come back with a prediction.
  await page.waitForFunction(
    () => !document.querySelector('[data-testid=predict-button]').disabled && document.querySelector('[data-testid=prediction]'),
    null, { timeout: 2 * MINUTE },
  );
  assert.ok(before >= 0);
  const cells = page.getByTestId('prob');
  const labels = await cells.evaluateAll((els) => els.map((e) => e.dataset.label));
  const probs = await cells.evaluateAll((els) => els.map((e) => Number(e.dataset.value)));
  return { labels, probs };
}


test('upload a CSV: columns guessed, blank row counted, preview and balance shown', { timeout: 3 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('data-file').setInputFiles({ name: 'reviews.csv', mimeType: 'text/csv', buffer: Buffer.from(csv()) });
  await page.getByTestId('validation-report').waitFor({ timeout: MINUTE });
  assert.equal(await page.getByTestId('usable-rows').textContent(), String(POSITIVE.length * 2 + 1));
  assert.match(await page.getByTestId('skipped-rows').textContent(), /1 skipped row/);
  assert.match(await page.getByTestId('class-balance').textContent(), /negative.*24.*positive.*25/s);
  assert.equal(await page.getByTestId('data-problem').count(), 0);
  // The quoted field with a comma and a newline stayed one field.
  assert.match(await page.getByTestId('data-preview').textContent(), /text.*label/s);
  await screenshot(page, 'studio-data');
});

test('head-only training in the worker: pause, resume, finish with metrics and curves', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('train-start').click();
  // The page answers while the worker trains: pausing works mid-run.
  await page.getByTestId('train-pause').click({ timeout: 5 * MINUTE });
  await page.getByTestId('paused').waitFor({ timeout: MINUTE });
  const detail = await page.getByTestId('train-detail').textContent();
  await page.waitForTimeout(1500);
  assert.equal(await page.getByTestId('train-detail').textContent(), detail, 'nothing advances while paused');
  await page.getByTestId('train-pause').click();
  await page.getByTestId('train-done').waitFor({ timeout: 8 * MINUTE });
  assert.match(await page.getByTestId('train-done').textContent(), /on the CPU/);
  const accuracy = parseFloat(await page.getByTestId('valid-accuracy').textContent());
  assert.ok(accuracy >= 70, `validation accuracy ${accuracy}% on an easy task`);
  assert.equal(await page.locator('[data-testid=confusion] td').count(), 4);
  assert.ok(await page.locator('[data-testid=loss-chart] polyline').count() >= 2);
  await screenshot(page, 'studio-trained');
});

test('predict, export, re-import: the same probabilities; PyTorch agrees', { timeout: 10 * MINUTE }, async (t) => {
  const { page } = chrome;
  const texts = ['What a wonderful, warm little film.', 'The food was cold and the waiter was rude.'];
  const before = [];
  for (const text of texts) before.push(await probabilities(page, text));
  assert.deepEqual(before[0].labels, ['negative', 'positive']);
  for (const p of before) assert.ok(Math.abs(p.probs[0] + p.probs[1] - 1) < 1e-3, `${p.probs}`);
  assert.ok(before[0].probs[1] > 0.5 && before[1].probs[0] > 0.5, `sensible predictions: ${JSON.stringify(before)}`);

  const zip = await exportZip(page, 'studio-mean.zip');
  await page.getByTestId('import-file').setInputFiles(zip);
  await page.waitForFunction(() => document.querySelector('[data-testid=classifier-info]')?.textContent.includes('imported'), null, { timeout: 2 * MINUTE });
  for (const [i, t] of texts.entries()) {
    const after = await probabilities(page, t);
    for (const [j, p] of after.probs.entries()) {
      assert.ok(Math.abs(p - before[i].probs[j]) <= 1e-4, `${t}: ${after.probs} vs ${before[i].probs}`);
    }
  }
  const rows = texts.map((text, i) => ({ text, pair: null, probs: before[i].probs }));
  await checkWithTransformers(t, zip, rows);
});

test('look inside: head-only training left the encoder as it was; the explorer runs on the tuned model', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('change-button').click();
  await page.getByTestId('change-table').waitFor({ timeout: 4 * MINUTE });
  const rows = await page.locator('[data-testid=change-table] tr').evaluateAll((trs) =>
    trs.slice(1).map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent))));
  assert.equal(rows[0].length, 7, 'embeddings + 6 layers');
  // Head-only training freezes the encoder: every layer is identical to the pretrained one.
  for (const row of rows) assert.ok(row.every((v) => Math.abs(v - 1) <= 1e-3), `changed: ${row}`);

  await page.getByTestId('explore-tuned').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('fine-tuned (negative/positive)'), null, { timeout: 2 * MINUTE });
  assert.ok(await page.getByTestId('tab-explore').evaluate((b) => b.classList.contains('active')));
  // The explorer's views recompute on the tuned model.
  await page.waitForFunction(() => {
    const rows = [...document.querySelectorAll('[data-testid=attention-heatmap] [data-testid=attention-row]')];
    return rows.length > 0 && rows.every((g) => Math.abs([...g.querySelectorAll('rect')].reduce((s, r) => s + Number(r.dataset.w), 0) - 1) < 1e-3);
  }, null, { timeout: 2 * MINUTE });
  await page.getByTestId('tab-studio').click();
  await page.getByTestId('explore-base').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('all-MiniLM-L6-v2'), null, { timeout: MINUTE });
});

test('nothing left the page: every request went to the page origin', async () => {
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
  assert.deepEqual(chrome.problems, []);
});
