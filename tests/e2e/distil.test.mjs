// Distillation in the studio (issue 49), on bert-tiny, CPU fallback: after a sentence classifier's
// run, "Train both students" (pressed from the keyboard) trains a student of 1 of bert-tiny's 2
// layers on the teacher's probabilities and one on the gold labels alone; the table sets the
// three models side by side and its sentence follows the numbers shown; the runs table records
// both students; the taught student exports as a 1-layer model that transformers loads with the
// page's probabilities. Lesson 9 then shows the same comparison and answers its question from it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { serve, launch, screenshot, ARTIFACTS } from './harness.mjs';
import { expectRight } from './lesson_helpers.mjs';
import { MINUTE, openStudio, trainingFile, sentimentSample, recipe, train, predict, exportZip, checkWithTransformers } from './studio_helpers.mjs';

let server, chrome;

before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  server = await serve();
  chrome = await launch({ webgpu: false });
  await openStudio(chrome.page, server.origin);
  await trainingFile(chrome.page, 'sentiment-48.csv', await sentimentSample(24), 48);
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

const TEXTS = ['What a wonderful, warm little film.', 'The food was cold and the waiter was rude.'];

test('a teacher distils into a smaller student, compared with one on the gold labels alone', { timeout: 8 * MINUTE }, async (t) => {
  const { page } = chrome;
  const panel = page.getByTestId('distil-panel');
  assert.equal(await panel.isVisible(), false, 'offered before there is a teacher');
  await recipe(page, { mode: 'head', 'head-epochs': 10 });
  await train(page, 'distil-teacher');
  await panel.waitFor({ state: 'visible', timeout: MINUTE });
  assert.deepEqual(await page.locator('[data-testid=distil-layers] option').allTextContents(), ['1 of 2']);

  const runs = await page.getByTestId('run-row').count();
  await page.getByTestId('distil-run').focus();
  await page.keyboard.press('Enter');
  await page.getByTestId('distil-table').waitFor({ timeout: 6 * MINUTE }).catch(async (e) => {
    await screenshot(page, 'distil-failed');
    throw new Error(`${e.message}\nthe panel shows: ${await panel.textContent()}`);
  });
  await screenshot(page, 'distil');

  // Three rows: the teacher's 2 layers, each student's 1; every model timed per text.
  const rows = await page.locator('[data-testid=distil-row]').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  assert.deepEqual(rows.map((r) => r[1]), ['2', '1', '1']);
  for (const r of rows) assert.match(r[3], /^\d+\.\d\d ms$/, `${r}`);
  const [teacher, taught, alone] = await page.locator('[data-testid=distil-accuracy]').evaluateAll((tds) => tds.map((td) => Number(td.dataset.value)));

  // The sentence follows the numbers: which student won, by more than one validation text or not.
  const conclusion = await page.getByTestId('distil-conclusion').textContent();
  const oneText = 1 / 10; // 48 texts, a fifth held out: 10 validation texts.
  const gain = taught - alone;
  if (gain >= oneText - 1e-6) assert.match(conclusion, /gave the student [\d.]+ points more/, conclusion);
  else if (gain <= -oneText + 1e-6) assert.match(conclusion, /the gold labels alone did better/, conclusion);
  else assert.match(conclusion, /within one validation text/, conclusion);
  assert.match(conclusion, taught >= teacher ? /matched or beat its teacher/ : /kept \d+% of the teacher's accuracy/, conclusion);
  assert.match(conclusion, /Each student has 1 of the teacher's 2 layers/, conclusion);
  const [teacherMs, taughtMs] = [rows[0][3], rows[1][3]].map(parseFloat);
  assert.match(conclusion, teacherMs / taughtMs >= 1.1 ? /× as fast/ : /no faster as measured here/, `${teacherMs} vs ${taughtMs}: ${conclusion}`);

  // Both students are in the runs table, the taught one's recipe naming its distillation.
  const recipes = await page.locator('[data-testid=run-row] td:nth-child(4)').allTextContents();
  assert.equal(recipes.length, runs + 2);
  assert.match(recipes[runs], /^student: 1 of 2 layers · .* distilled \(T 2, soft labels 0\.5\)/, recipes[runs]);
  assert.match(recipes[runs + 1], /^student: 1 of 2 layers · /, recipes[runs + 1]);
  assert.doesNotMatch(recipes[runs + 1], /distilled/);

  // The worker's classifier is now the last student: it exports with one layer, and transformers
  // loads it with the page's probabilities.
  const probs = [];
  for (const text of TEXTS) probs.push({ text, pair: null, probs: (await predict(page, text)).probs });
  const zip = await exportZip(page, 'distil-student.zip');
  assert.ok((await readFile(zip)).toString('latin1').includes('"num_hidden_layers": 1'), 'the export says one layer');
  await checkWithTransformers(t, zip, probs);

  // Lesson 9 shows the studio's comparison, the same numbers and sentence, and its question's
  // answer follows them (within one validation text, either student counts).
  await page.evaluate(() => { location.hash = '#lesson=sizes'; });
  const table = page.getByTestId('lesson-distil-table');
  await table.waitFor({ timeout: MINUTE });
  const shown = await table.locator('td[data-accuracy]').evaluateAll((tds) => tds.map((td) => Number(td.dataset.accuracy)));
  assert.deepEqual(shown, [teacher, taught, alone]);
  assert.equal(await page.getByTestId('lesson-distil-conclusion').textContent(), conclusion);
  await expectRight(page, 'sizes-distillation', { index: gain > -oneText + 1e-6 ? 0 : 1 });
  await screenshot(page, 'lesson-distillation');
});
