// The studio's multiple choice (SWAG-style), CPU in the worker: the built-in example (60
// questions, four endings) is read and reported, a head-only run on the default model
// (all-MiniLM-L6-v2) is scored by accuracy over the held-out questions with the questions it got
// wrong listed, a typed question's endings get probabilities that sum to 1, the export is the
// folder AutoModelForMultipleChoice loads (BertForMultipleChoice, classifier.weight [1, hidden])
// with the page's probabilities in transformers, and imported back it scores the same; a malformed file is refused by its line with the data
// kept, and a validation file whose questions have another number of endings when the run starts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { serve, launch, offOriginRequests, screenshot, ARTIFACTS } from './harness.mjs';
import { MINUTE, recipe, train, exportZip, importZip, checkWithTransformers, unzip, safetensorsHeader } from './studio_helpers.mjs';

let server, chrome;

before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  server = await serve();
  chrome = await launch({ webgpu: false });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

const QUESTION = 'She notices the plant on the windowsill is wilting.';
const ENDINGS = ['She gives it a glass of water.', 'She paints it blue.', 'She puts it in the oven.', 'She sings it to sleep.'];

/** Scores `endings` for `question` in the predict box; returns the probabilities, in order. */
async function score(page, question, endings) {
  const answered = () => page.evaluate(() => Number(document.querySelector('[data-testid=choice-result]')?.dataset.answer ?? 0));
  const before = await answered();
  await page.getByTestId('choice-question').fill(question);
  await page.getByTestId('choice-endings-input').fill(endings.join('\n'));
  await page.getByTestId('choice-button').click();
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid=choice-result]')?.dataset.answer ?? 0) > n, before, { timeout: MINUTE });
  const result = page.getByTestId('choice-result');
  if (await result.getByTestId('predict-error').count()) assert.fail(await result.getByTestId('predict-error').textContent());
  return result.getByTestId('choice-prob').evaluateAll((els) => els.map((e) => Number(e.dataset.value)));
}

test('the example trains a multiple-choice head on MiniLM; accuracy and mistakes agree, endings get probabilities, the export is BertForMultipleChoice, transformers and re-import score the same', { timeout: 15 * MINUTE }, async (t) => {
  const { page } = chrome;
  await page.goto(server.origin + '/#studio');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('MiniLM'), null, { timeout: 5 * MINUTE });
  await page.getByTestId('task-choice').check();
  await page.getByTestId('studio-choice-data').waitFor({ state: 'visible' });
  // The task's default recipe is core's (transformers' run_swag.py): full fine-tuning.
  assert.equal(await page.getByTestId('train-mode').inputValue(), 'full');
  assert.match(await page.getByTestId('recipe-note').textContent(), /^Recipe: this task's default, full fine-tuning, batch 16, lr 5e-5, 3 epochs, as transformers' run_swag\.py/);
  assert.match(await page.getByTestId('choice-features').textContent(), /BertForMultipleChoice/);

  await page.getByTestId('use-choice-example').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=choice-questions]')?.textContent === '60'
    && /^\d+$/.test(document.querySelector('[data-testid=choice-longest]')?.textContent ?? ''), null, { timeout: MINUTE });
  assert.equal(await page.getByTestId('choice-endings').textContent(), '4');
  const balance = (await page.getByTestId('choice-balance-count').allTextContents()).map(Number);
  assert.equal(balance.length, 4, 'one count per ending');
  assert.equal(balance.reduce((a, b) => a + b, 0), 60, `the right endings of all 60 questions: ${balance}`);
  assert.match(await page.getByTestId('choice-preview').textContent(), /kettle/);
  await screenshot(page, 'choice-data');

  // Head only on the frozen encoder's pooled pairs: seconds of training once the features are in
  // (BERTBENCH_CHOICE_FULL=1 measures the default recipe, full fine-tuning, instead).
  const full = Boolean(process.env.BERTBENCH_CHOICE_FULL);
  if (!full) await recipe(page, { mode: 'head', 'head-epochs': 6, 'head-learning-rate': 0.01 });
  const done = await train(page, 'choice-minilm', 12 * MINUTE);
  console.log(`# ${done}`);
  const accuracy = await page.getByTestId('choice-accuracy').textContent();
  console.log(`# example data, MiniLM ${full ? 'the default recipe (full fine-tuning, 3 epochs)' : 'head-only (6 epochs)'}: accuracy ${accuracy} on the held-out questions`);
  assert.match(accuracy, /^\d+\.\d%$/);
  // A fifth of 60 held out; every question the model got wrong is listed.
  assert.equal(await page.getByTestId('choice-valid-count').textContent(), '12');
  const right = Math.round(parseFloat(accuracy) / 100 * 12);
  assert.equal(await page.getByTestId('choice-mistake').count(), 12 - right, 'the mistakes are the questions not answered right');
  // Accuracy per epoch, as the other modes chart it.
  const chart = JSON.parse(await page.getByTestId('accuracy-chart').getAttribute('data-values'));
  assert.equal(chart[1]?.length, full ? 3 : 6, `a validation accuracy per epoch: ${JSON.stringify(chart)}`);
  // The kept weights are the best evaluation's.
  assert.ok(Math.abs(Math.max(...chart[1]) * 100 - parseFloat(accuracy)) < 0.06, `${accuracy} vs ${chart[1]}`);
  assert.match(await page.getByTestId('run-history').textContent(), full ? /multiple choice · full/ : /multiple choice · head only/);
  await page.locator('[data-testid=choice-mistakes]').evaluate((d) => { d.open = true; });
  await screenshot(page, 'choice-results');

  const probs = await score(page, QUESTION, ENDINGS);
  assert.equal(probs.length, 4);
  assert.ok(Math.abs(probs.reduce((a, b) => a + b, 0) - 1) < 1e-3, `probabilities sum to 1: ${probs}`);
  for (const p of probs) assert.ok(Number.isFinite(p) && p >= 0 && p <= 1, `${probs}`);
  await screenshot(page, 'choice-predict');
  // The mode's card, results and predict box, all drawn, pass axe-core's audit (as every tab does
  // in accessibility.test.mjs).
  await page.evaluate(await readFile(new URL('./node_modules/axe-core/axe.min.js', import.meta.url), 'utf8'));
  const violations = await page.evaluate(async () => (await globalThis.axe.run(
    { include: [['[data-testid=studio-choice-data]'], ['[data-testid=studio-train]'], ['[data-testid=studio-results]']] },
    { resultTypes: ['violations'] },
  )).violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.slice(0, 4).map((n) => n.target.join(' ')).join(' | ')}`));
  assert.deepEqual(violations, []);

  // The export: the folder AutoModelForMultipleChoice loads.
  const zipPath = await exportZip(page, 'choice-minilm.zip');
  const files = await unzip(zipPath);
  const config = JSON.parse(files['bertbench-multiple-choice/config.json'].toString('utf8'));
  assert.deepEqual(config.architectures, ['BertForMultipleChoice']);
  const header = safetensorsHeader(files['bertbench-multiple-choice/model.safetensors']);
  assert.deepEqual(header['classifier.weight']?.shape, [1, config.hidden_size], JSON.stringify(header['classifier.weight']));
  assert.deepEqual(header['classifier.bias']?.shape, [1]);
  assert.ok(Object.keys(header).some((k) => k.endsWith('pooler.dense.weight')), 'the pooler the class reads');
  // In PyTorch, AutoModelForMultipleChoice gives the page's probabilities (skipped without torch).
  await checkWithTransformers(t, zipPath, [{ premise: QUESTION, endings: ENDINGS, probs }]);

  // Imported back, it is a multiple-choice model again and scores the same.
  assert.match(await importZip(page, zipPath), /^Imported a multiple-choice model/);
  assert.equal(await page.getByTestId('task-choice').isChecked(), true);
  const again = await score(page, QUESTION, ENDINGS);
  again.forEach((p, i) => assert.ok(Math.abs(p - probs[i]) < 1e-5, `ending ${i}: ${p} vs ${probs[i]}`));
  // The run as saved in this browser opens with its results and scores the same: a head-only
  // run is its head alone, put back on the page's model (a full run reopens as the zip imported
  // above).
  if (!full) {
    await page.getByTestId('open-saved').first().click();
    await page.waitForFunction(() => document.querySelector('[data-testid=studio-notice]')?.textContent.startsWith('Opened the saved run')
      && document.querySelector('[data-testid=classifier-info]')?.textContent.includes('saved run'), null, { timeout: 2 * MINUTE });
    assert.equal(await page.getByTestId('choice-accuracy').textContent(), accuracy);
    const reopened = await score(page, QUESTION, ENDINGS);
    reopened.forEach((p, i) => assert.ok(Math.abs(p - probs[i]) < 1e-5, `saved run, ending ${i}: ${p} vs ${probs[i]}`));
  }
  // One ending is refused on the page, and what was typed stays.
  await page.getByTestId('choice-endings-input').fill('Only this one.');
  await page.getByTestId('choice-button').click();
  await page.getByTestId('choice-result').getByTestId('predict-error').waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('choice-result').getByTestId('predict-error').textContent(), /^1 ending typed: give at least two/);
  assert.equal(await page.getByTestId('choice-endings-input').inputValue(), 'Only this one.');
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
});

test('a malformed multiple-choice file is refused by its line, and the questions loaded before stay; ARC and HellaSwag JSON Lines are read, a question of another number of choices left out and said; a validation file of another number of endings is refused at the start', { timeout: 3 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('task-choice').check();
  await page.getByTestId('use-choice-example').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=choice-questions]')?.textContent === '60', null, { timeout: MINUTE });
  const good = { question: 'The kettle whistles.', endings: ['She pours the tea.', 'She plants it.'], label: 0 };
  const jsonl = [good, { ...good, label: 5 }, good].map((o) => JSON.stringify(o)).join('\n');
  await page.getByTestId('choice-file').setInputFiles({ name: 'bad.jsonl', mimeType: 'application/json', buffer: Buffer.from(jsonl) });
  await page.getByTestId('data-error').waitFor({ timeout: MINUTE });
  const message = await page.getByTestId('data-error').textContent();
  assert.match(message, /^bad\.jsonl: .*line 2, "label": "5" is not the index of one of its 2 endings/);
  assert.match(message, /The data you had is kept/);
  assert.equal(await page.getByTestId('choice-questions').textContent(), '60');
  // SWAG's CSV: an empty ending is named by its line and column.
  const csv = 'sent1,sent2,ending0,ending1,label\nThe kettle whistles.,She,pours the tea.,plants it.,0\nIt rains.,He,,opens an umbrella.,1\n';
  await page.getByTestId('choice-file').setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await page.waitForFunction(() => document.querySelector('[data-testid=data-error]')?.textContent.includes('line 3, column ending0: empty'), null, { timeout: MINUTE });
  await screenshot(page, 'choice-bad-file');
  assert.equal(await page.getByTestId('choice-questions').textContent(), '60');
  // ARC's JSON Lines as AI2 ships them (rows written for this test): the one question of five
  // choices among four-choice ones is left out and said; HellaSwag's, as datasets writes them,
  // reads ctx_a as the premise and ctx_b before each ending.
  const arc = (stem, texts, key) => JSON.stringify({ id: stem, question: { stem, choices: texts.map((text, i) => ({ text, label: 'ABCDE'[i] })) }, answerKey: key });
  const arcLines = [arc('Which gas do plants take in?', ['oxygen', 'carbon dioxide', 'helium', 'neon'], 'B'), arc('What melts ice?', ['heat', 'cold', 'dark', 'sound', 'wind'], 'A'), arc('What do bees make?', ['honey', 'glass', 'steel', 'paper'], 'A')];
  await page.getByTestId('choice-file').setInputFiles({ name: 'ARC-Easy-Dev.jsonl', mimeType: 'application/json', buffer: Buffer.from(arcLines.join('\n')) });
  await page.waitForFunction(() => document.querySelector('[data-testid=choice-questions]')?.textContent === '2', null, { timeout: MINUTE });
  assert.match(await page.getByTestId('choice-set-aside').textContent(), /^1 question with another number of endings than the 4 of the others was left out \(line 2\)/);
  assert.match(await page.getByTestId('choice-preview').textContent(), /carbon dioxide ✓ right/);
  const hella = JSON.stringify({ ctx_a: 'She mixes the flour and eggs.', ctx_b: 'she', ctx: 'She mixes the flour and eggs. she', endings: ['pours the batter into a tin.', 'swims away.'], label: '0' });
  await page.getByTestId('choice-file').setInputFiles({ name: 'hellaswag.jsonl', mimeType: 'application/json', buffer: Buffer.from(hella + '\n' + hella.replace('"0"', '"1"')) });
  await page.waitForFunction(() => document.querySelector('[data-testid=choice-questions]')?.textContent === '2'
    && document.querySelector('[data-testid=choice-preview]')?.textContent.includes('she pours the batter into a tin. ✓ right'), null, { timeout: MINUTE });
  assert.equal(await page.getByTestId('choice-set-aside').count(), 0);
  await page.getByTestId('use-choice-example').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=choice-questions]')?.textContent === '60', null, { timeout: MINUTE });
  // A validation file is read by the same reader; one with another number of endings than the
  // training file's is refused when the run starts, saying both.
  const valid = [good, { ...good, label: 1 }].map((o) => JSON.stringify(o)).join('\n');
  await page.getByTestId('choice-valid-file').setInputFiles({ name: 'two.jsonl', mimeType: 'application/json', buffer: Buffer.from(valid) });
  await page.getByTestId('choice-valid-name').waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('choice-valid-name').textContent(), /^validating on two\.jsonl \(2 questions\)/);
  await page.getByTestId('train-start').click();
  await page.getByTestId('train-start-error').waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('train-start-error').textContent(), /two\.jsonl has 2 endings per question and choices\.jsonl \(built-in example\) has 4/);
  await page.getByTestId('choice-valid-name').getByRole('button').click();
  assert.equal(await page.getByTestId('choice-valid-name').count(), 0);
});
