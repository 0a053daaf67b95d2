// The studio's other feature choices and sentence pairs, on bert-tiny, CPU fallback: a classifier
// on [CLS] + pooler (exported as BertForSequenceClassification) and one on the concatenated last
// layers of [CLS] (exported with its modelling code) each train, predict, export, load in
// transformers and re-import to the same probabilities; a file with two text columns, mapped as text and second text, trains a
// pair classifier that reads both texts, and predicts pairs typed in and from a file alike.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { serve, launch, offOriginRequests, screenshot, ARTIFACTS } from './harness.mjs';
import {
  MINUTE, openStudio, exampleData, trainingFile, recipe, train, predict, exportZip, importZip, predictFile, csvField, checkWithTransformers,
} from './studio_helpers.mjs';

let server, chrome;

before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  server = await serve();
  chrome = await launch({ webgpu: false });
  await openStudio(chrome.page, server.origin);
  await exampleData(chrome.page);
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

const TEXTS = ['What a wonderful, warm little film.', 'The food was cold and the waiter was rude.'];

/** The "features" fact of the results. */
const featuresShown = (page) => page.locator('[data-testid=studio-results] .facts > div').filter({ hasText: /features$/ }).locator('b').textContent();

/** Trains head-only with `pooling` and `layers`, predicts TEXTS, exports, re-imports and predicts
 * them again; returns the zip's bytes (as latin1 text) and the probabilities. */
async function roundTrip(page, pooling, layers, label, zipName) {
  await recipe(page, { mode: 'head', pooling, layers, 'batch-size': 32, 'head-epochs': 10, 'eval-every': 0 });
  const done = await train(page, `studio-${zipName}`);
  assert.match(done, /^Finished after \d+ steps/);
  assert.equal(await featuresShown(page), label);
  assert.equal(await page.locator('[data-testid=confusion] td').count(), 4);
  const accuracy = parseFloat(await page.getByTestId('valid-accuracy').textContent());
  assert.ok(accuracy >= 0 && accuracy <= 100, `${accuracy}`);
  const before = [];
  for (const t of TEXTS) before.push(await predict(page, t));
  for (const p of before) assert.deepEqual(p.labels, ['negative', 'positive']);

  const zip = await exportZip(page, `${zipName}.zip`);
  const notice = await importZip(page, zip);
  assert.match(notice, new RegExp(`features: ${label.replace(/[[\]+]/g, '\\$&')}`), notice);
  assert.match(await page.getByTestId('classifier-info').textContent(), /imported; labels negative, positive/);
  for (const [i, t] of TEXTS.entries()) {
    const after = await predict(page, t);
    for (const [j, p] of after.probs.entries()) {
      assert.ok(Math.abs(p - before[i].probs[j]) <= 1e-5, `${label}, ${t}: re-imported ${after.probs} vs trained ${before[i].probs}`);
    }
  }
  return { path: zip, zip: (await readFile(zip)).toString('latin1'), probs: before };
}

let pooled;

/** What the check against transformers reads: each text with the page's probabilities. */
const rows = (probs) => TEXTS.map((text, i) => ({ text, pair: null, probs: probs[i].probs }));

test('[CLS] + pooler: trains, predicts, exports as BertForSequenceClassification (transformers agrees) and re-imports to the same probabilities', { timeout: 4 * MINUTE }, async (t) => {
  const { page } = chrome;
  // The pooler reads the last layer only: the layer choice is off.
  await page.selectOption('[data-testid=feature-pooling]', 'pooler');
  assert.equal(await page.locator('[data-testid=feature-layers]').isDisabled(), true);
  const { path, zip, probs } = await roundTrip(page, 'pooler', undefined, '[CLS] + pooler · last layer', 'studio-pooler');
  pooled = probs;
  assert.ok(zip.includes('bertbench-classifier/config.json') && zip.includes('bertbench-classifier/model.safetensors'));
  assert.ok(zip.includes('"BertForSequenceClassification"'), 'config.json names the transformers class');
  assert.ok(zip.includes('classifier.weight') && zip.includes('bert.pooler.dense.weight'), 'the head and the pooler are in model.safetensors');
  assert.ok(!zip.includes('classifier_head.safetensors') && !zip.includes('modeling_bertbench.py'), 'no separate head file, no modelling code');
  await checkWithTransformers(t, path, rows(probs));
});

test('[CLS] of the last layers concatenated: trains, predicts, exports with its modelling code (transformers agrees) and re-imports to the same probabilities', { timeout: 4 * MINUTE }, async (t) => {
  const { page } = chrome;
  assert.equal(await page.locator('[data-testid=feature-layers]').isDisabled(), true);
  const { path, zip, probs } = await roundTrip(page, 'cls', 'cat4', '[CLS] · concat of last four', 'studio-cat4');
  assert.ok(zip.includes('bertbench-classifier/modeling_bertbench.py'), 'the modelling code travels with the model');
  assert.ok(zip.includes('"AutoModelForSequenceClassification": "modeling_bertbench.BertbenchForSequenceClassification"'), 'auto_map names it');
  assert.ok(zip.includes('"ConcatLastFour"') && zip.includes('"Cls"'), 'config.json says how to build the features');
  assert.ok(!zip.includes('"BertForSequenceClassification"'), 'not claimed to be what transformers would compute');
  await checkWithTransformers(t, path, rows(probs));
  // Another head on other features: other probabilities.
  assert.ok(probs.some((p, i) => Math.abs(p.probs[0] - pooled[i].probs[0]) > 1e-6), 'the same probabilities as the pooler classifier');
});

// Whether the second sentence answers the first: only the pair tells.
const QUESTIONS = [
  ['where is the cat sleeping', 'the cat is asleep on the sofa', 'the bus leaves at nine'],
  ['what time does the bus leave', 'the bus leaves at nine', 'the cat is asleep on the sofa'],
  ['who baked this cake', 'my grandmother baked it', 'it will rain tomorrow'],
  ['will it rain tomorrow', 'yes, rain is expected all day', 'my grandmother baked it'],
  ['how old is your brother', 'he turned twelve last week', 'the shop closes at six'],
  ['when does the shop close', 'the shop closes at six', 'he turned twelve last week'],
  ['what colour is your car', 'my car is dark blue', 'we went to the zoo'],
  ['where did you go on sunday', 'we went to the zoo', 'my car is dark blue'],
  ['who won the match', 'the home team won easily', 'the soup needs more salt'],
  ['does the soup taste good', 'the soup needs more salt', 'the home team won easily'],
  ['how far is the station', 'it is a short walk from here', 'she plays the violin'],
  ['what does your sister play', 'she plays the violin', 'it is a short walk from here'],
  ['why is the road closed', 'there was an accident this morning', 'the library opens at ten'],
  ['when does the library open', 'the library opens at ten', 'there was an accident this morning'],
  ['which book are you reading', 'a long novel about sailors', 'i prefer green tea'],
  ['what do you like to drink', 'i prefer green tea', 'a long novel about sailors'],
  ['where are my keys', 'they are on the kitchen table', 'the concert starts at eight'],
  ['when does the concert start', 'the concert starts at eight', 'they are on the kitchen table'],
  ['how was the weather at the beach', 'sunny and warm all week', 'the printer is out of paper'],
  ['why will the printer not print', 'the printer is out of paper', 'sunny and warm all week'],
];

test('sentence pairs: two text columns mapped as text and second text train a pair classifier that predicts pairs', { timeout: 4 * MINUTE }, async () => {
  const { page } = chrome;
  const rows = ['first,second,label'];
  for (const [q, yes, no] of QUESTIONS) rows.push(`${q},${csvField(yes)},answer`, `${q},${csvField(no)},unrelated`);
  await trainingFile(page, 'qa-pairs.csv', rows.join('\n') + '\n', 2 * QUESTIONS.length);
  const tokens = page.locator('[data-testid=validation-report] .facts > div').filter({ hasText: /tokens max \/ mean \/ p95$/ }).locator('b');
  await page.selectOption('[data-testid=column-text]', '0');
  await page.waitForFunction(() => document.querySelector('[data-testid=usable-rows]')?.textContent === '40', null, { timeout: MINUTE });
  const single = await tokens.textContent();
  await page.selectOption('[data-testid=column-pair]', '1');
  // Both texts are counted now: [CLS] first [SEP] second [SEP].
  await page.waitForFunction((old) => {
    const b = [...document.querySelectorAll('[data-testid=validation-report] .facts > div')].find((d) => /tokens max/.test(d.textContent))?.querySelector('b');
    return b && b.textContent !== old;
  }, single, { timeout: MINUTE });
  const [meanSingle, meanPair] = [single, await tokens.textContent()].map((t) => Number(t.split(' / ')[1]));
  assert.ok(meanPair >= meanSingle + 5, `mean tokens ${meanSingle} alone, ${meanPair} as pairs`);
  assert.equal(await page.getByTestId('usable-rows').textContent(), '40');
  assert.match(await page.getByTestId('class-balance').textContent(), /answer.*20.*unrelated.*20/s);
  assert.equal(await page.locator('[data-testid=column-label]').inputValue(), '2');
  // Pairs read together have their own default recipe (chosen on MRPC's dev split): every weight
  // trains. The recipe set by the earlier tests stays until the default is asked for.
  await page.waitForFunction(() => document.querySelector('[data-testid=recipe-note]')?.textContent.includes('pairs of texts read together'), null, { timeout: MINUTE });
  await page.getByTestId('recipe-default').click();
  assert.equal(await page.locator('[data-testid=train-mode]').inputValue(), 'full');
  assert.match(await page.getByTestId('recipe-note').textContent(), /^Recipe: this task's default, full fine-tuning, .* for pairs of texts read together/);

  await recipe(page, { mode: 'head', pooling: 'mean', layers: 'last', 'batch-size': 8, 'head-epochs': 10, 'eval-every': 0 });
  const done = await train(page, 'studio-pairs');
  assert.match(done, /^Finished after 40 steps/, '10 epochs of 32 training pairs in batches of 8');
  assert.match(await page.getByTestId('classifier-info').textContent(), /run #\d+ of the runs table \(.*\), the last to finish; labels answer, unrelated/);
  const mistakes = await page.locator('[data-testid=mistakes] table tr td:nth-child(2)').allTextContents();
  for (const m of mistakes) assert.match(m, / ‖ /, 'a mistake shows both texts of its pair');

  // The second text is read: the same first text with another second text, or none, is another input.
  const [q, yes, no] = QUESTIONS[0];
  const answer = await predict(page, q, yes);
  const unrelated = await predict(page, q, no);
  const alone = await predict(page, q);
  assert.deepEqual(answer.labels, ['answer', 'unrelated']);
  const differ = (a, b) => Math.abs(a.probs[0] - b.probs[0]) > 1e-6;
  assert.ok(differ(answer, unrelated) && differ(answer, alone) && differ(unrelated, alone), `${answer.probs} / ${unrelated.probs} / ${alone.probs}`);

  // A file of pairs: the columns are found by name, each row keeps its pair, and the numbers are
  // the Predict box's.
  const [q2, yes2, no2] = QUESTIONS[2];
  const file = ['sentence1,sentence2', ...[[q, yes], [q, no], [q2, yes2], [q2, no2]].map(([a, b]) => `${a},${csvField(b)}`)].join('\n') + '\n';
  const { rows: out } = await predictFile(page, 'pairs.csv', file);
  assert.deepEqual(out[0], ['line', 'text', 'text_pair', 'predicted', 'p(answer)', 'p(unrelated)']);
  assert.deepEqual(out.slice(1).map((r) => r.slice(0, 3)), [['2', q, yes], ['3', q, no], ['4', q2, yes2], ['5', q2, no2]]);
  for (const [row, typed] of [[out[1], answer], [out[2], unrelated]]) {
    for (const j of [0, 1]) assert.ok(Math.abs(Number(row[4 + j]) - typed.probs[j]) < 5e-6, `file ${row.slice(3)} vs typed ${typed.probs}`);
  }
  await screenshot(page, 'studio-pairs');
});

test('sentence pairs: a file of only two pairs is predicted as pairs too', async () => {
  const { page } = chrome;
  const [[q, yes, no]] = QUESTIONS;
  const file = ['sentence1,sentence2', `${q},${csvField(yes)}`, `${q},${csvField(no)}`].join('\n') + '\n';
  const { rows } = await predictFile(page, 'two-pairs.csv', file);
  assert.deepEqual(rows[0], ['line', 'text', 'text_pair', 'predicted', 'p(answer)', 'p(unrelated)']);
});

test('nothing left the page: every request went to the page origin', async () => {
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
  assert.deepEqual(chrome.problems, []);
});
