// The MLM lab with next-sentence prediction (lab.test.mjs covers MLM alone and sentence-order
// prediction): BERT-tiny from scratch on an uploaded corpus of questions, each followed by its
// answer, trains MLM + NSP in the worker; the NSP loss is reported at every step, drawn as its
// own curve, finite, starts where a fresh two-way guess does (ln 2) and falls.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, offOriginRequests, screenshot } from './harness.mjs';

const MINUTE = 60_000;
let server, chrome;

before(async () => {
  server = await serve();
  chrome = await launch({ webgpu: false });
  await chrome.page.goto(server.origin + '/?model=bert-tiny#lab');
  await chrome.page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

// Questions and answers take turns: a line's true successor is of the other kind, while a random
// line is of the same kind half the time, which a model can learn to notice.
const ANIMALS = ['cow', 'duck', 'horse', 'sheep', 'goat', 'hen', 'pig', 'dog', 'cat', 'fox', 'owl', 'bee'];
const PLACES = ['barn', 'pond', 'field', 'meadow', 'hill', 'yard', 'sty', 'house', 'shed', 'wood', 'tree', 'hive'];
const corpus = () => {
  const lines = [];
  for (let i = 0; i < 64; i++) {
    const a = ANIMALS[i % ANIMALS.length];
    lines.push(`where does the ${a} sleep at night ?`, `the ${a} sleeps in the ${PLACES[(i * 5) % PLACES.length]} .`);
  }
  return lines.join('\n');
};

test('MLM + next-sentence prediction: the NSP loss is reported at every step, finite, and falls', { timeout: 6 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('lab-file').setInputFiles({ name: 'farm-qa.txt', mimeType: 'text/plain', buffer: Buffer.from(corpus()) });
  await page.waitForFunction(() => document.querySelector('[data-testid=lab-corpus]')?.textContent.includes('farm-qa.txt: 128 lines'), null, { timeout: MINUTE });
  await page.selectOption('[data-testid=lab-model]', 'bert-tiny');
  await page.selectOption('[data-testid=lab-vocab-choice]', '1000');
  await page.selectOption('[data-testid=lab-pair]', 'nsp');
  // No blank line: one document, so the lab says where NSP's negatives come from instead.
  assert.match(await page.getByTestId('lab-nsp-note').textContent(), /This corpus is one document/);
  for (const [id, value] of [['lab-epochs', '60'], ['lab-lr', '0.001']]) {
    await page.getByTestId(id).fill(value);
    await page.getByTestId(id).dispatchEvent('change');
  }
  await page.getByTestId('lab-probes-input').fill('where does the cow [MASK] at night ?');
  await page.getByTestId('lab-start').click();
  try {
    await page.getByTestId('lab-done').waitFor({ timeout: 5 * MINUTE });
  } catch (e) {
    await screenshot(page, 'lab-nsp-failed');
    throw new Error(`${e.message}\nthe lab shows: ${await page.getByTestId('lab-panel').textContent()}`);
  }
  assert.equal(await page.getByTestId('lab-failed').count(), 0);
  // 127 sentence pairs (each line and the next, or a random line), 4 batches of 32 an epoch.
  const steps = Number(/^Finished after (\d+) steps/.exec(await page.getByTestId('lab-done').textContent())?.[1]);
  assert.equal(steps, 60 * 4);
  assert.match(await page.getByTestId('lab-vocab').textContent(), /Trained WordPiece vocabulary/);

  const progress = await page.getByTestId('lab-progress').textContent();
  const shown = Number(/ · pair loss ([\d.]+) · /.exec(progress)?.[1]);
  assert.ok(Number.isFinite(shown) && shown > 0, `the NSP loss in the progress line: ${progress}`);
  assert.match(await page.locator('[data-testid=lab-loss]').textContent(), /NSP\/SOP loss/);
  assert.equal(await page.locator('[data-testid=lab-loss] polyline').count(), 2, 'an MLM curve and an NSP curve');
  // The curves' numbers: each point is the mean of up to 10 steps.
  const [mlm, nsp] = JSON.parse(await page.getByTestId('lab-loss').getAttribute('data-values'));
  assert.equal(nsp.length, steps, 'an NSP loss at every step');
  assert.equal(mlm.length, steps);
  for (const v of [...mlm, ...nsp]) assert.ok(Number.isFinite(v) && v > 0, `loss ${v}`);
  console.log(`# NSP loss: first step ${nsp[0].toFixed(3)}, mean of the last 10 steps ${nsp.at(-1).toFixed(3)}; MLM ${mlm[0].toFixed(3)} → ${mlm.at(-1).toFixed(3)}`);
  // A fresh two-way classifier guesses evenly: ln 2 ≈ 0.693.
  assert.ok(Math.abs(nsp[0] - Math.LN2) < 0.25, `the first NSP loss ${nsp[0]}`);
  // Below what any guess that ignores the pair can do (ln 2, or a little less where the pairs
  // drawn are not evenly true and false): the model tells true successors from random lines.
  assert.ok(nsp.at(-1) < 0.64, `the NSP loss did not fall: ${nsp[0]} → ${nsp.at(-1)}`);
  assert.ok(mlm.at(-1) < mlm[0], `the MLM loss did not fall: ${mlm[0]} → ${mlm.at(-1)}`);
  assert.equal(await page.locator('[data-testid=lab-probe]').count(), 1);
  // Saved when it finished, under a name that says its objective.
  await page.waitForFunction(() => /Saved in this browser/.test(document.querySelector('[data-testid=lab-storage-note]')?.textContent ?? ''), null, { timeout: MINUTE });
  assert.match((await page.getByTestId('lab-saved-name').first().textContent()).trim(), /^bert-tiny \+ NSP · /);
  await screenshot(page, 'lab-nsp');
});

test('nothing left the page', async () => {
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
  assert.deepEqual(chrome.problems, []);
});
