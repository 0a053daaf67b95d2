// Forgetting, and why the studio freezes first (lesson 7, issue 49), as a keyboard user: two runs
// at a high learning rate on the lesson's data, full fine-tuning and freeze-then-unfreeze; each
// tuned encoder gets lesson 6's word-sense view beside the pretrained one; the table, the chart,
// the sentence and the question's answer all follow the same live numbers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, screenshot } from './harness.mjs';
import { tabTo, expectRight } from './lesson_helpers.mjs';

const MINUTE = 60_000;
let server, chrome;

before(async () => {
  server = await serve();
  chrome = await launch({ webgpu: false });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

test('at a high learning rate, the word senses each recipe keeps are measured and the question follows them', { timeout: 12 * MINUTE }, async () => {
  const { page } = chrome;
  await page.goto(server.origin + '/#lesson=finetune');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  await tabTo(page, page.getByTestId('lesson-forgetting-run'));
  await page.keyboard.press('Enter');
  const runs = page.getByTestId('lesson-forgetting-runs');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=lesson-forgetting-runs] tr[data-model]').length === 3
    || document.querySelector('[data-testid=lesson-forgetting-status][role=alert]'), null, { timeout: 10 * MINUTE });
  const status = await page.getByTestId('lesson-forgetting-status').textContent();
  assert.equal(status, 'Both runs are done.', status);

  const rows = await runs.locator('tr[data-model]').evaluateAll((trs) => trs.map((tr) => ({
    model: tr.dataset.model,
    mean: +tr.querySelector('td[data-mean]').dataset.mean,
    accuracy: tr.querySelector('td[data-accuracy]') ? +tr.querySelector('td[data-accuracy]').dataset.accuracy : null,
  })));
  console.log(`# ${JSON.stringify(rows)}`);
  assert.deepEqual(rows.map((r) => r.model), ['pretrained', 'full fine-tuning', 'freeze, then unfreeze']);
  for (const r of rows) assert.ok(r.mean >= 0 && r.mean <= 1, `${r.model}: ${r.mean}`);
  for (const r of rows.slice(1)) assert.ok(r.accuracy >= 0 && r.accuracy <= 1, `${r.model}: ${r.accuracy}`);

  // The chart draws the three models' shares by layer; its means are the table's.
  const plotted = JSON.parse(await page.getByTestId('lesson-forgetting-chart').getAttribute('data-values'));
  assert.equal(plotted.length, 3);
  plotted.forEach((shares, i) => {
    const mean = shares.slice(1).reduce((a, b) => a + b, 0) / (shares.length - 1);
    assert.ok(Math.abs(mean - rows[i].mean) < 1e-4, `${rows[i].model}: chart ${mean}, table ${rows[i].mean}`);
  });

  // The sentence and the answer follow the two runs' means (two of 32 sentences or less: a tie).
  const [full, freeze] = [rows[1].mean, rows[2].mean];
  const conclusion = await page.getByTestId('lesson-forgetting-conclusion').textContent();
  const tie = Math.abs(freeze - full) <= 2 / 32 + 1e-6;
  assert.match(conclusion, tie ? /^The two kept about as much/ : freeze > full ? /^Freeze, then unfreeze kept \d+ points more/ : /^Full fine-tuning kept \d+ points more/, conclusion);
  await expectRight(page, 'finetune-forgetting', { index: !tie && freeze > full ? 1 : 0 });
  await screenshot(page, 'lesson-forgetting');
  assert.deepEqual(chrome.problems, []);
});
