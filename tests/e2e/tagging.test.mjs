// The studio's token tagging (named entities, BIO), CPU in the worker: the built-in example
// trains a tagger head-only on the default model (all-MiniLM-L6-v2) and scores it by entities;
// typed text is tagged with each word's probabilities; the export loads in transformers
// (AutoModelForTokenClassification) with the same word probabilities, and imported back it tags
// the same; a text file is tagged to CoNLL columns; a broken CoNLL file is refused by line with
// the data kept; and full fine-tuning of bert-tiny reading every piece runs to the end.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, offOriginRequests, screenshot, ARTIFACTS } from './harness.mjs';
import { MINUTE, recipe, train, exportZip, checkWithTransformers } from './studio_helpers.mjs';

let server, chrome;

before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  server = await serve();
  chrome = await launch({ webgpu: false });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

/** Opens the studio on `model` (the default when null) in tagging mode. */
async function openTagging(page, model) {
  await page.goto(server.origin + (model ? `/?model=${model}#studio` : '/#studio'));
  await page.waitForFunction((m) => document.querySelector('[data-testid=model-facts]')?.textContent.includes(m), model ?? 'MiniLM', { timeout: 5 * MINUTE });
  await page.getByTestId('task-tag').check();
  await page.getByTestId('studio-tag-data').waitFor({ state: 'visible' });
}

/** Tags `text` in the predict box; returns the words with their tags and probabilities. */
async function tag(page, text) {
  const answered = () => page.evaluate(() => Number(document.querySelector('[data-testid=tag-answer]')?.dataset.answer ?? 0));
  const before = await answered();
  await page.getByTestId('tag-text').fill(text);
  await page.getByTestId('tag-button').click();
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid=tag-answer]')?.dataset.answer ?? 0) > n
    || document.querySelector('[data-testid=predict-error]'), before, { timeout: MINUTE });
  if (await page.getByTestId('predict-error').count()) assert.fail(await page.getByTestId('predict-error').textContent());
  return page.getByTestId('tagged-word').evaluateAll((rows) => rows.map((r) => ({
    word: r.querySelector('td').textContent,
    tag: r.dataset.tag,
    probs: JSON.parse(r.dataset.probs),
  })));
}

test('the example trains a head-only tagger on MiniLM that finds people, places and organisations; export, transformers, re-import agree', { timeout: 12 * MINUTE }, async (t) => {
  const { page } = chrome;
  await openTagging(page, null);
  await page.getByTestId('use-tag-example').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=tag-sentences]')?.textContent === '360', null, { timeout: MINUTE });
  assert.equal(await page.getByTestId('tag-count').textContent(), '9', 'O and B-/I- of four types');
  assert.match(await page.getByTestId('tag-preview').textContent(), /PER/);
  await recipe(page, { mode: 'head', 'batch-size': 32, 'head-epochs': 20 });
  const done = await train(page, 'tagging-minilm', 8 * MINUTE);
  console.log(`# ${done}`);
  const f1 = Number(await page.getByTestId('entity-f1').textContent());
  const accuracy = await page.getByTestId('word-accuracy').textContent();
  console.log(`# example data, MiniLM head-only: entity F1 ${f1}, words ${accuracy}`);
  assert.ok(f1 >= 0.8, `entity F1 ${f1}`);
  const types = await page.getByTestId('per-type').locator('td:first-child').allTextContents();
  assert.deepEqual(types, ['LOC', 'MISC', 'ORG', 'PER']);
  await screenshot(page, 'tagging-results');

  const sentence = 'Maria Lopez flew from Paris to Nairobi to meet Greenpeace.';
  const words = await tag(page, sentence);
  assert.deepEqual(words.map((w) => w.word), ['Maria', 'Lopez', 'flew', 'from', 'Paris', 'to', 'Nairobi', 'to', 'meet', 'Greenpeace', '.']);
  const tags = Object.fromEntries(words.map((w) => [w.word, w.tag]));
  assert.equal(tags.Maria, 'B-PER', JSON.stringify(tags));
  assert.equal(tags.Paris, 'B-LOC', JSON.stringify(tags));
  assert.equal(tags.flew, 'O', JSON.stringify(tags));
  for (const w of words) assert.ok(Math.abs(w.probs.reduce((a, b) => a + b, 0) - 1) < 1e-4, `${w.word}: ${w.probs}`);
  const marks = await page.getByTestId('tagged').locator('mark').evaluateAll((ms) => ms.map((m) => m.dataset.type));
  assert.ok(marks.includes('PER') && marks.includes('LOC'), `entities marked: ${marks}`);
  // Read at every layer: one row per layer and the embeddings, the last the tagger's answer.
  await page.getByTestId('tag-layers-button').click();
  await page.getByTestId('tag-layers').waitFor({ timeout: MINUTE });
  const rows = await page.getByTestId('tag-layer-row').evaluateAll((rs) => rs.map((r) => [...r.querySelectorAll('td')].map((c) => c.dataset.tag)));
  assert.equal(rows.length, 7, 'the embeddings and six layers');
  assert.deepEqual(rows.at(-1), words.map((w) => w.tag));
  await screenshot(page, 'tagging-predict');

  const zip = await exportZip(page, 'tagger-minilm.zip');
  await checkWithTransformers(t, zip, [{ text: sentence, word_probs: words.map((w) => w.probs) }]);

  // Imported back, it is the same tagger.
  await page.getByTestId('import-file').setInputFiles(zip);
  await page.waitForFunction(() => document.querySelector('[data-testid=classifier-info]')?.textContent.includes('imported')
    || document.querySelector('[data-testid=studio-error]'), null, { timeout: 2 * MINUTE });
  if (await page.getByTestId('studio-error').count()) assert.fail(await page.getByTestId('studio-error').textContent());
  assert.match(await page.getByTestId('studio-notice').textContent(), /^Imported a tagger: 9 tags/);
  const again = await tag(page, sentence);
  for (const [a, b] of again.map((w, i) => [w, words[i]])) {
    assert.equal(a.tag, b.tag);
    a.probs.forEach((p, j) => assert.ok(Math.abs(p - b.probs[j]) < 1e-5, `${a.word}: ${a.probs} vs ${b.probs}`));
  }

  // A text file, one sentence per line, comes back as CoNLL columns.
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 2 * MINUTE }),
    page.getByTestId('tag-batch-file').setInputFiles({ name: 'news.txt', mimeType: 'text/plain', buffer: Buffer.from(`${sentence}\n\nTom Becker works for Siemens.\n`) }),
  ]);
  assert.equal(download.suggestedFilename(), 'news-tagged.conll');
  const path = join(ARTIFACTS, 'news-tagged.conll');
  await download.saveAs(path);
  const blocks = (await readFile(path, 'utf8')).trim().split('\n\n');
  assert.equal(blocks.length, 2);
  assert.equal(blocks[0].split('\n')[4], 'Paris\tB-LOC');
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
});

test('a broken CoNLL file is refused with its line, and the data loaded before stays', { timeout: 3 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('tag-file').setInputFiles({ name: 'broken.conll', mimeType: 'text/plain', buffer: Buffer.from('Ann B-PER\nsings\n') });
  await page.getByTestId('data-error').waitFor({ timeout: MINUTE });
  const message = await page.getByTestId('data-error').textContent();
  assert.match(message, /broken\.conll: Line 2: “sings” has no tag column/);
  assert.match(message, /The data you had is kept/);
  assert.equal(await page.getByTestId('tag-sentences').textContent(), '360');
  await page.getByTestId('tag-file').setInputFiles({ name: 'bad-tag.conll', mimeType: 'text/plain', buffer: Buffer.from('Ann B-PER\nsings Q-X\n') });
  await page.waitForFunction(() => document.querySelector('[data-testid=data-error]')?.textContent.includes('Line 2: the tag “Q-X” is not BIO'), null, { timeout: MINUTE });
});

test('a tagging training file is kept in "Saved in this browser" and opens again in the tagging mode', { timeout: 3 * MINUTE }, async () => {
  const { page } = chrome;
  const conll = 'Ann B-PER\nsings O\n\nBob B-PER\nruns O\n\nParis B-LOC\nsleeps O\n';
  await page.getByTestId('tag-file').setInputFiles({ name: 'kept-tags.conll', mimeType: 'text/plain', buffer: Buffer.from(conll) });
  await page.waitForFunction(() => document.querySelector('[data-testid=tag-sentences]')?.textContent === '3', null, { timeout: MINUTE });
  const row = page.getByTestId('saved-item').filter({ has: page.getByTestId('saved-name').getByText('kept-tags.conll', { exact: true }) });
  await row.waitFor({ timeout: MINUTE });
  // Another tagging file, then away to another task and another file, then back through the
  // saved list.
  await page.getByTestId('use-tag-example').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=tag-sentences]')?.textContent === '360', null, { timeout: MINUTE });
  await page.getByTestId('task-classify').check();
  await page.getByTestId('use-example').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=usable-rows]')?.textContent === '252', null, { timeout: MINUTE });
  await row.getByTestId('open-saved').click();
  // The tagging card keeps its state while hidden, so the file counts as back once the card
  // shows its 3 sentences again.
  await page.waitForFunction(() => document.querySelector('[data-testid=tag-sentences]')?.textContent === '3', null, { timeout: MINUTE });
  assert.ok(await page.getByTestId('task-tag').isChecked(), 'the tagging mode is back');
  await page.getByTestId('tag-sentences').waitFor({ state: 'visible', timeout: MINUTE });
  assert.match(await page.getByTestId('tag-report').textContent(), /kept-tags\.conll/);
  // The example back for the tests after this one.
  await page.getByTestId('use-tag-example').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=tag-sentences]')?.textContent === '360', null, { timeout: MINUTE });
});

test('a file dropped on the tagging card is read as one picked (one data card for every mode)', { timeout: 2 * MINUTE }, async () => {
  const { page } = chrome;
  const conll = 'Ann B-PER\nsings O\nin O\nParis B-LOC\n\nBob B-PER\nworks O\nat O\nAcme B-ORG\n';
  const dropped = await page.evaluateHandle((text) => {
    const files = new DataTransfer();
    files.items.add(new File([text], 'dropped.conll', { type: 'text/plain' }));
    return files;
  }, conll);
  await page.dispatchEvent('[data-testid=studio-tag-data] .dropzone', 'drop', { dataTransfer: dropped });
  await page.waitForFunction(() => document.querySelector('[data-testid=tag-sentences]')?.textContent === '2', null, { timeout: MINUTE });
  assert.match(await page.getByTestId('tag-report').textContent(), /dropped\.conll/);
  assert.equal(await page.getByTestId('data-error').count(), 0, 'the error of the broken file before is gone');
  // Back to the example for the tests after this one.
  await page.getByTestId('use-tag-example').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=tag-sentences]')?.textContent === '360', null, { timeout: MINUTE });
});

// Label Studio's exports of a named-entity project (tasks written for this test): the JSON
// export (its first annotation not cancelled; a task nobody annotated is left out, and said) and the
// JSON-MIN export read as the same two sentences with their entities.
test('Label Studio\'s JSON and JSON-MIN exports of a named-entity project are read as tagged sentences', { timeout: 3 * MINUTE }, async () => {
  const { page } = chrome;
  const span = (start, end, text, label) => ({ start, end, text, labels: [label] });
  const result = (value) => ({ id: 'r', from_name: 'label', to_name: 'text', type: 'labels', value });
  const json = [
    { id: 1, data: { text: 'Ann flew to Oslo.' }, annotations: [{ was_cancelled: true, result: [] }, { was_cancelled: false, result: [result(span(0, 3, 'Ann', 'PER')), result(span(12, 16, 'Oslo', 'LOC'))] }], predictions: [] },
    { id: 2, data: { text: 'Nobody annotated this yet.' }, annotations: [], predictions: [] },
    { id: 3, data: { text: 'Rome sleeps.' }, annotations: [{ result: [result(span(0, 4, 'Rome', 'LOC'))] }], predictions: [] },
  ];
  const min = [
    { id: 1, text: 'Ann flew to Oslo.', label: [span(0, 3, 'Ann', 'PER'), span(12, 16, 'Oslo', 'LOC')], annotator: 1 },
    { id: 3, text: 'Rome sleeps.', label: [span(0, 4, 'Rome', 'LOC')], annotator: 1 },
  ];
  for (const [name, rows] of [['project-1-at-2026-12-03.json', json], ['project-1-min.json', min]]) {
    await page.getByTestId('tag-file').setInputFiles({ name, mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(rows)) });
    await page.waitForFunction((n) => document.querySelector('[data-testid=tag-report]')?.textContent.includes(n), name, { timeout: MINUTE });
    assert.equal(await page.getByTestId('tag-sentences').textContent(), '2', `${name}: the two annotated tasks`);
    const report = await page.getByTestId('tag-report').textContent();
    assert.match(report, /tags: O, B-LOC, I-LOC, B-PER, I-PER/, `${name}: ${report}`);
    assert.match(await page.getByTestId('tag-preview').textContent(), /Oslo.*Rome/s, name);
    assert.equal(await page.getByTestId('data-error').count(), 0, name);
    const warnings = await page.getByTestId('data-warning').allTextContents();
    const leftOut = warnings.filter((w) => w.includes('Label Studio'));
    assert.deepEqual(leftOut, rows === json ? ['1 Label Studio task(s) nobody annotated (or whose annotations were all cancelled) were left out: line 2.'] : [], `${name}: ${warnings}`);
  }
  await page.getByTestId('use-tag-example').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=tag-sentences]')?.textContent === '360', null, { timeout: MINUTE });
});

test('full fine-tuning of bert-tiny, every piece labelled, runs to the end with entity scores', { timeout: 6 * MINUTE }, async () => {
  const { page } = chrome;
  await openTagging(page, 'bert-tiny');
  await page.getByTestId('use-tag-example').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=tag-sentences]')?.textContent === '360', null, { timeout: MINUTE });
  await page.selectOption('[data-testid=tag-pieces]', 'all');
  await recipe(page, { mode: 'full', 'batch-size': 16, epochs: 2, 'learning-rate': 0.001 });
  const done = await train(page, 'tagging-tiny-full', 5 * MINUTE);
  console.log(`# ${done}`);
  assert.match(done, /^Finished after \d+ steps/);
  const f1 = Number(await page.getByTestId('entity-f1').textContent());
  assert.ok(Number.isFinite(f1) && f1 >= 0 && f1 <= 1, `entity F1 ${f1}`);
  assert.match(await page.getByTestId('run-history').textContent(), /tagging · full fine-tuning/);
});
