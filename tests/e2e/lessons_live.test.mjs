// Two of the lessons' views on the student's own input, by keyboard: lesson 1's vocabulary
// trainer stepped merge by merge (on the starting corpus and on a corpus typed in), and lesson 8's
// word-level probes by layer; each question answered from the numbers the view shows.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { serve, launch, ARTIFACTS, screenshot } from './harness.mjs';
import { tabTo, typeInto, answer, expectRight } from './lesson_helpers.mjs';

const MINUTE = 60_000;
let server, chrome;

before(async () => {
  server = await serve();
  chrome = await launch({ webgpu: false });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

/** The stepper's step: its number, the pair merged and its count. */
const step = (page) => page.getByTestId('lesson-merge-step').evaluate((p) => ({ k: +p.dataset.step, pair: p.dataset.pair, count: +(p.dataset.count || 0), text: p.textContent }));
/** The pairs counted most before the next merge: [pair, count, merged next?]. */
const candidates = (page) => page.getByTestId('lesson-merge-candidates').locator('tr[data-pair]').evaluateAll((trs) =>
  trs.map((r) => [r.dataset.pair, +r.dataset.count, r.cells[2].textContent.includes('yes')]));
const totalPieces = (text) => +/(\d+) pieces in all/.exec(text)[1];

/** After a choice was checked (the focus on "Check"), moves back to the question's list and up to
 * "choose…", so `answer` can pick an option by its index again. */
async function backToChoose(page, id) {
  await page.keyboard.press('Shift+Tab');
  assert.ok(await page.getByTestId(`check-${id}`).getByTestId('check-answer').evaluate((el) => document.activeElement === el));
  for (let i = 0; i < 12; i++) await page.keyboard.press('ArrowUp');
}

/** Presses the stepper's button `which` ('next' or 'previous') and waits for step `k`. */
async function press(page, which, k) {
  await tabTo(page, page.getByTestId(`lesson-merge-${which}`));
  await page.keyboard.press('Enter');
  await page.waitForFunction((k) => document.querySelector('[data-testid=lesson-merge-step]')?.dataset.step === String(k), k);
}

test('lesson 1: the trainer\'s merges one by one, each the most counted pair of its moment', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  await page.goto(server.origin + '/#lesson=tokens');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  await page.getByTestId('lesson-merge-candidates').waitFor();
  const start = await step(page);
  assert.equal(start.k, 0);
  let before = await candidates(page);
  const most = Math.max(...before.map(([, n]) => n));
  // Step after step: the pair merged is the one the table marked, at the top count, and every
  // occurrence of it in the corpus becomes one piece.
  let total = totalPieces(start.text);
  for (let k = 1; k <= 3; k++) {
    const marked = before.find(([, , next]) => next);
    await press(page, 'next', k);
    const now = await step(page);
    assert.equal(now.pair, marked[0], `merge ${k}`);
    assert.equal(now.count, marked[1]);
    assert.equal(now.count, Math.max(...before.map(([, n]) => n)), `merge ${k} takes the most counted pair: ${JSON.stringify(before)}`);
    assert.equal(totalPieces(now.text), total - now.count, 'each occurrence of the pair became one piece');
    total = totalPieces(now.text);
    before = await candidates(page);
  }
  await page.getByTestId('lesson-merges').screenshot({ path: join(ARTIFACTS, 'lesson-merges.png') });
  await press(page, 'previous', 2);
  await press(page, 'previous', 1);
  const first = await step(page);
  assert.equal(first.count, most);
  // The question, from the live counts: the first merge among the options.
  const options = await page.getByTestId('check-tokens-first-merge').getByTestId('check-answer').locator('option').allTextContents();
  const wrong = options.findIndex((o, i) => i > 0 && o !== first.pair);
  assert.match(await answer(page, 'tokens-first-merge', { index: wrong - 1 }), /^Not quite/, 'another pair is refused');
  await backToChoose(page, 'tokens-first-merge');
  await expectRight(page, 'tokens-first-merge', { index: options.indexOf(first.pair) - 1 });

  // A corpus of the student's own, typed in: counted by hand, "##w + ##e" stands side by side
  // four times (lower, lowest, newer, newest), every other pair at most three.
  await typeInto(page, page.getByTestId('lesson-merges-corpus'), 'low lower lowest\nnew newer newest\nwide wider widest');
  await page.keyboard.press('Tab');
  await page.waitForFunction(() => document.querySelector('[data-testid=lesson-merge-candidates] tr[data-pair]')?.dataset.pair === '##w + ##e');
  assert.equal((await step(page)).k, 0, 'a new corpus starts before the first merge');
  await press(page, 'next', 1);
  const own = await step(page);
  assert.deepEqual([own.pair, own.count], ['##w + ##e', 4]);
  assert.ok((await candidates(page)).every(([, n]) => n <= 3));
  const ownOptions = await page.getByTestId('check-tokens-first-merge').getByTestId('check-answer').locator('option').allTextContents();
  await expectRight(page, 'tokens-first-merge', { index: ownOptions.indexOf('##w + ##e') - 1 });
  assert.match(await page.getByTestId('check-tokens-first-merge').getByTestId('check-feedback').textContent(), /4 times/);
  assert.deepEqual(chrome.problems, []);
});

test('lesson 8: part of speech and position probed word by word at every layer', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  await page.goto(server.origin + '/#lesson=probing');
  await page.reload();
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  const table = page.getByTestId('lesson-word-probe-table');
  await table.waitFor({ timeout: 3 * MINUTE });
  const row = (kind) => table.locator(`td[data-kind="${kind}"]`).evaluateAll((tds) => tds.map((c) => +c.dataset.v));
  const [pos, posControl, position, positionControl] = await Promise.all(['pos', 'pos-control', 'position', 'position-control'].map(row));
  console.log(JSON.stringify({ pos, posControl, position, positionControl }));
  assert.equal(pos.length, 7, 'the default model: the input embeddings and six layers');
  const bestPos = pos.indexOf(Math.max(...pos));
  const bestPosition = position.indexOf(Math.max(...position));
  assert.ok(pos[bestPos] > posControl[bestPos], 'part of speech is read above its control task');
  const summary = await page.getByTestId('lesson-which-layer').locator('tr[data-property]').evaluateAll((trs) => Object.fromEntries(trs.map((r) => [r.dataset.property, +r.dataset.layer])));
  assert.equal(summary['part of speech'], bestPos);
  assert.equal(summary.position, bestPosition);
  await page.getByTestId('lesson-probing-table').waitFor({ timeout: 3 * MINUTE });
  await page.waitForFunction(() => document.querySelector('[data-testid=lesson-which-layer] tr[data-property=sentiment]'));
  await page.getByTestId('lesson-word-probe').screenshot({ path: join(ARTIFACTS, 'lesson-word-probe.png') });
  await screenshot(page, 'lesson-probing');
  const wrong = (bestPos + 1) % pos.length;
  if (pos[wrong] !== pos[bestPos]) {
    assert.match(await answer(page, 'probing-pos-layer', { index: wrong }), /^Not quite/);
    await backToChoose(page, 'probing-pos-layer');
  }
  await expectRight(page, 'probing-pos-layer', { index: bestPos });
  await expectRight(page, 'probing-position-layer', { index: bestPosition });
  assert.deepEqual(chrome.problems, []);
});
