// The studio's multi-label classification, CPU in the worker: the built-in example (218 texts, a
// 0/1 column per topic) is read with its topics guessed and counted; a head-only run on the
// default model (all-MiniLM-L6-v2) is scored by micro and macro F1 at a threshold chosen on the
// held-out texts, each topic's F1 listed, the texts not labelled exactly listed; a typed text gets
// each topic's own probability (a sigmoid each, not summing to 1); the export says
// multi_label_classification and, in transformers, the model and the text-classification
// pipeline give the page's probabilities; a file of lists parted by ";" is read once the user
// says so, a JSON Lines file of lists (as `datasets` writes them) is guessed, and a flag that is
// neither 0 nor 1 skips its row, named.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { serve, launch, offOriginRequests, screenshot, ARTIFACTS } from './harness.mjs';
import { MINUTE, recipe, train, predict, exportZip, checkWithTransformers, unzip } from './studio_helpers.mjs';

let server, chrome;

before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  server = await serve();
  chrome = await launch({ webgpu: false });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

const TOPICS = ['food', 'travel', 'sport', 'weather', 'money'];

test('the topics example trains a multi-label head on MiniLM; micro/macro F1 at the chosen threshold, per-topic F1, mistakes, sigmoid predictions; the export loads in transformers and its pipeline with the same probabilities', { timeout: 12 * MINUTE }, async (t) => {
  const { page } = chrome;
  await page.goto(server.origin + '/#studio');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('MiniLM'), null, { timeout: 5 * MINUTE });
  await page.getByTestId('task-multilabel').check();
  await page.getByTestId('studio-multilabel-data').waitFor({ state: 'visible' });
  assert.equal(await page.getByTestId('train-mode').inputValue(), 'head');

  await page.getByTestId('use-multilabel-example').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=multilabel-texts]')?.textContent === '218', null, { timeout: MINUTE });
  assert.equal(await page.getByTestId('multilabel-labels').textContent(), '5');
  assert.equal(await page.getByTestId('multilabel-none').textContent(), '8');
  assert.deepEqual((await page.getByTestId('multilabel-count').allTextContents()).map(Number), [70, 70, 70, 70, 70]);
  // The topics were guessed as the 0/1 columns: each ticked, the text not offered.
  const ticked = await page.getByTestId('multilabel-column').evaluateAll((els) => els.filter((e) => e.checked).map((e) => e.dataset.column));
  assert.deepEqual(ticked, TOPICS);
  await screenshot(page, 'multilabel-data');

  const done = await train(page, 'multilabel-minilm', 8 * MINUTE);
  console.log(`# ${done}`);
  const [micro, macro, threshold] = await Promise.all(['multilabel-micro-f1', 'multilabel-macro-f1', 'multilabel-threshold'].map((id) => page.getByTestId(id).textContent()));
  console.log(`# topics example, MiniLM head only (20 epochs): micro-F1 ${micro}, macro-F1 ${macro} at threshold ${threshold} on 44 held-out texts`);
  assert.match(done, /validation micro-F1 \d\.\d{3}, macro-F1 \d\.\d{3} at threshold \d\.\d\d/);
  // Topics named in so many words: a sentence encoder's frozen features find most of them.
  assert.ok(Number(micro) > 0.6, `micro-F1 ${micro}`);
  assert.ok(Number(threshold) >= 0.05 && Number(threshold) <= 0.95);
  const perLabel = await page.getByTestId('multilabel-per-label').locator('tr').allTextContents();
  assert.equal(perLabel.length, 1 + TOPICS.length, perLabel.join(' | '));
  TOPICS.forEach((topic, i) => assert.ok(perLabel[i + 1].startsWith(topic), perLabel[i + 1]));
  // The mistakes are the texts whose labels were not all right; exact match counts the others.
  const exact = parseFloat(await page.getByTestId('multilabel-exact').textContent());
  const wrong = await page.getByTestId('multilabel-mistake').count();
  assert.equal(wrong, Math.round(44 * (1 - exact / 100)), `${wrong} mistakes, exact match ${exact}%`);
  assert.match(await page.getByTestId('run-history').textContent(), /multi-label · head only/);
  assert.match(await page.getByTestId('run-history').textContent(), /micro-F1 0\.\d{3}/);
  await page.locator('[data-testid=multilabel-mistakes]').evaluate((d) => { d.open = true; });
  await screenshot(page, 'multilabel-results');

  const text = 'The train to the coast was late and it rained all afternoon.';
  const { labels, probs } = await predict(page, text);
  assert.deepEqual(labels, TOPICS);
  assert.equal(await page.getByTestId('prediction').getAttribute('data-multi-label'), 'true');
  // Labels are given at the run's own threshold, and the note says which labels reach it.
  const note = await page.getByTestId('prediction-note').textContent();
  assert.match(note, new RegExp(`each label's own probability.*At its threshold ${threshold.replace('.', '\\.')} \\(chosen on validation`), note);
  const given = TOPICS.filter((_, i) => probs[i] >= Number(threshold));
  assert.ok(note.endsWith(`: ${given.length ? given.join('; ') : 'none'}.`), `${note} (given at ${threshold}: ${given})`);
  console.log(`# "${text}": ${labels.map((l, i) => `${l} ${probs[i].toFixed(3)}`).join(', ')}`);
  assert.ok(probs[1] > 0.5 && probs[3] > 0.5, `travel and weather: ${probs}`);
  await screenshot(page, 'multilabel-predict');

  const zipPath = await exportZip(page, 'multilabel-minilm.zip');
  const files = await unzip(zipPath);
  const config = JSON.parse(files['bertbench-multi-label/config.json'].toString('utf8'));
  assert.equal(config.problem_type, 'multi_label_classification');
  assert.equal(config.multi_label_threshold, Number(threshold), 'the run\'s threshold travels with the export');
  assert.deepEqual(Object.values(config.id2label), TOPICS);
  // transformers' model and its text-classification pipeline give the page's sigmoid per topic
  // (skipped without torch).
  await checkWithTransformers(t, zipPath, [{ text, pair: null, probs }]);
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
});

test('lists parted by ";" are read once the user names the separator, JSON Lines lists are guessed, and a flag that is neither 0 nor 1 skips its row by name', { timeout: 3 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('task-multilabel').check();
  const tsv = 'text\tlabels\n' + Array.from({ length: 12 }, (_, i) => `Text number ${i} about things\t${['joy;surprise', 'sadness', 'joy'][i % 3]}`).join('\n') + '\n';
  await page.getByTestId('multilabel-file').setInputFiles({ name: 'emotions.tsv', mimeType: 'text/tab-separated-values', buffer: Buffer.from(tsv) });
  // Nothing is guessed for a separated list: the page asks.
  await page.getByTestId('multilabel-error').waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('multilabel-error').textContent(), /Tick the columns that hold a label each/);
  await page.selectOption('[data-testid=multilabel-source]', 'list');
  await page.selectOption('[data-testid=multilabel-separator]', ';');
  await page.waitForFunction(() => document.querySelector('[data-testid=multilabel-labels]')?.textContent === '3', null, { timeout: MINUTE });
  assert.deepEqual((await page.getByTestId('multilabel-count').allTextContents()).map(Number), [8, 4, 4]);
  assert.match(await page.getByTestId('multilabel-counts').textContent(), /joy.*sadness.*surprise/);
  await screenshot(page, 'multilabel-lists');

  const jsonl = [['joy', 'surprise'], ['sadness'], [], ['joy'], ['sadness', 'surprise']].map((l, i) => JSON.stringify({ text: `A text ${i}`, labels: l })).join('\n');
  await page.getByTestId('multilabel-file').setInputFiles({ name: 'train.jsonl', mimeType: 'application/json', buffer: Buffer.from(jsonl) });
  await page.waitForFunction(() => document.querySelector('[data-testid=multilabel-texts]')?.textContent === '5', null, { timeout: MINUTE });
  assert.equal(await page.getByTestId('multilabel-none').textContent(), '1');
  assert.equal(await page.getByTestId('multilabel-source').inputValue(), 'list');

  const csv = 'text,toxic,insult\nYou are lovely,0,0\nWhat an idiot,1,1\nNot scored yet,-1,-1\nJust rude,1,0\n';
  await page.getByTestId('multilabel-file').setInputFiles({ name: 'toxic.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await page.waitForFunction(() => document.querySelector('[data-testid=multilabel-texts]')?.textContent === '3', null, { timeout: MINUTE });
  assert.equal(await page.getByTestId('multilabel-skipped').textContent(), '1');
  assert.match(await page.getByTestId('multilabel-skip-reason').textContent(), /line 4: “-1” in column “toxic” is neither 0 nor 1/);
});
