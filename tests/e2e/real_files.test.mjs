// Real files as their authors ship them (rows written for this test in their shapes, not copied):
// GLUE's STS-B and MSR's MRPC are tab-separated with no quoting, and a sentence may start with a
// quotation mark. Every row of such a file is read as one row, the pair columns are found by
// their names, and the report accounts for every line.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch } from './harness.mjs';
import { MINUTE, openStudio, recipe, train } from './studio_helpers.mjs';

let server, chrome;
before(async () => {
  server = await serve();
  chrome = await launch({ webgpu: false });
  await openStudio(chrome.page, server.origin);
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

/** `n` rows of sentence pairs; every fifth first sentence opens with a quotation that closes
 * later in the sentence, every seventh second sentence has a lone quote, as GLUE's files do. */
function sentences(n) {
  const subjects = ['The council', 'A spokesman', 'The firm', 'Her lawyer', 'The union', 'Police', 'The minister'];
  const verbs = ['said', 'denied', 'confirmed', 'announced', 'reported'];
  return Array.from({ length: n }, (_, i) => {
    const s = subjects[i % subjects.length];
    const v = verbs[i % verbs.length];
    const first = i % 5 === 0 ? `"We will not stop," ${s.toLowerCase()} ${v} on day ${i}.` : `${s} ${v} the plan on day ${i}.`;
    const second = i % 7 === 3 ? `${s} ${v} 5" of rain on day ${i}.` : `On day ${i} ${s.toLowerCase()} ${v} it.`;
    return [first, second];
  });
}

test("GLUE's STS-B as shipped: every pair read, the two sentence columns and the score found", { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  const header = ['index', 'genre', 'filename', 'year', 'old_index', 'source1', 'source2', 'sentence1', 'sentence2', 'score'];
  const rows = sentences(60).map(([a, b], i) => [i, 'main-news', '2012', '2012test', String(i).padStart(4, '0'), 'none', 'none', a, b, (i % 6 * 0.97).toFixed(3)]);
  const tsv = [header, ...rows].map((r) => r.join('\t')).join('\n') + '\n';
  await page.getByTestId('task-similar').check();
  await page.getByTestId('pair-file').setInputFiles({ name: 'train.tsv', mimeType: 'text/tab-separated-values', buffer: Buffer.from(tsv) });
  await page.getByTestId('pair-report').waitFor({ timeout: MINUTE });
  assert.equal(await page.getByTestId('pair-count').textContent(), '60', 'every one of the 60 pairs');
  const first = await page.getByTestId('pair-preview').locator('tr').nth(1).textContent();
  assert.ok(first.includes('"We will not stop," the council said on day 0.'), `the quotation is text: ${first}`);
});

test("MSR's MRPC as shipped: every row read, #1 String and #2 String taken as a pair", { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  const header = ['Quality', '#1 ID', '#2 ID', '#1 String', '#2 String'];
  const rows = sentences(48).map(([a, b], i) => [i % 3 === 0 ? 0 : 1, 700000 + i * 37, 800000 + i * 41, a, b]);
  const tsv = [header, ...rows].map((r) => r.join('\t')).join('\r\n') + '\r\n';
  await page.getByTestId('task-classify').check();
  await page.getByTestId('data-file').setInputFiles({ name: 'msr_paraphrase_train.txt', mimeType: 'text/plain', buffer: Buffer.from(tsv) });
  await page.waitForFunction(() => document.querySelector('[data-testid=usable-rows]')?.textContent === '48', null, { timeout: MINUTE });
  assert.equal(await page.getByTestId('column-text').inputValue(), '3', 'the text is #1 String');
  assert.equal(await page.getByTestId('column-pair').inputValue(), '4', 'the second text is #2 String');
  assert.equal(await page.getByTestId('column-label').inputValue(), '0', 'the label is Quality');
  assert.equal(await page.getByTestId('skipped-rows').count(), 0, 'no row skipped');
  const warnings = await page.getByTestId('data-warning').allTextContents();
  assert.ok(!warnings.some((w) => /left out|line break/.test(w)), warnings.join('\n'));
});

test('a CSV row with a line break inside quotes is one row, and the report says so', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  const lines = ['text,label'];
  for (let i = 0; i < 20; i++) lines.push(i === 4 ? `"first line of ${i}\nsecond line",${i % 2 ? 'pos' : 'neg'}` : `plain text number ${i},${i % 2 ? 'pos' : 'neg'}`);
  await page.getByTestId('data-file').setInputFiles({ name: 'notes.csv', mimeType: 'text/csv', buffer: Buffer.from(lines.join('\n') + '\n') });
  await page.waitForFunction(() => document.querySelector('[data-testid=usable-rows]')?.textContent === '20', null, { timeout: MINUTE });
  const warnings = await page.getByTestId('data-warning').allTextContents();
  assert.ok(warnings.some((w) => w.startsWith('1 row(s) hold a line break inside a quoted text (the first starts on line 6)')), warnings.join('\n'));
});

test('a JSON Lines label that is an object is read through its named field, never as its JSON text', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('task-classify').check();
  const lines = Array.from({ length: 20 }, (_, i) => JSON.stringify({ text: `review number ${i} of the film`, label: { id: i % 2, name: i % 2 ? 'pos' : 'neg' } }));
  await page.getByTestId('data-file').setInputFiles({ name: 'reviews.jsonl', mimeType: 'application/json', buffer: Buffer.from(lines.join('\n') + '\n') });
  await page.waitForFunction(() => document.querySelector('[data-testid=usable-rows]')?.textContent === '20', null, { timeout: MINUTE });
  const columns = await page.getByTestId('column-label').locator('option').allTextContents();
  assert.ok(columns.some((c) => c.includes('label.id')) && columns.some((c) => c.includes('label.name')), columns.join(' | '));
  const chosen = await page.getByTestId('column-label').evaluate((s) => s.options[s.selectedIndex].textContent);
  assert.match(chosen, /label\.(id|name)/, 'a field of the object is the label');
  assert.ok(!(await page.getByTestId('studio-data').textContent()).includes('{"id"'), 'no label shown as JSON text');
});

test("Label Studio's JSON export and doccano's JSON Lines are read as labeled texts, every task accounted for", { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('task-classify').check();
  // Label Studio's export of a text-classification project (tasks written for this test): the
  // first annotation not cancelled gives the label; a task nobody annotated is skipped.
  const task = (id, text, choices, cancelled = false) => ({
    id, data: { text }, meta: {}, predictions: [],
    annotations: choices ? [{ id: id * 10, was_cancelled: cancelled, result: [{ id: `r${id}`, from_name: 'sentiment', to_name: 'text', type: 'choices', value: { choices } }] }] : [],
  });
  const tasks = Array.from({ length: 20 }, (_, i) => task(i + 1, `review number ${i} of the film`, [i % 2 ? 'Positive' : 'Negative']));
  tasks.push(task(21, 'not annotated yet', null));
  await page.getByTestId('data-file').setInputFiles({ name: 'project-3-at-2026-12-03-10-00-1a2b3c.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(tasks)) });
  await page.waitForFunction(() => document.querySelector('[data-testid=usable-rows]')?.textContent === '20', null, { timeout: MINUTE });
  assert.match(await page.getByTestId('column-label').evaluate((s) => s.options[s.selectedIndex].textContent), /sentiment/);
  // The classes are the labels, not their lists (the preview shows the file's cells as they are).
  const balance = await page.getByTestId('class-balance').textContent();
  assert.match(balance, /Negative[\s\S]*Positive/);
  assert.ok(!balance.includes('["'), `the label, not its list: ${balance}`);
  // doccano's classification export: each label a list of one; a row of two is skipped, said.
  const lines = Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: i, text: `comment number ${i} here`, label: [i % 2 ? 'spam' : 'ham'] }));
  lines.push(JSON.stringify({ id: 99, text: 'both at once', label: ['ham', 'spam'] }));
  await page.getByTestId('data-file').setInputFiles({ name: 'admin.jsonl', mimeType: 'application/json', buffer: Buffer.from(lines.join('\n') + '\n') });
  await page.waitForFunction(() => document.querySelector('[data-testid=usable-rows]')?.textContent === '20', null, { timeout: MINUTE });
  assert.match(await page.getByTestId('studio-data').textContent(), /2 labels \(ham, spam\): a row of several labels is the multi-label mode's/);
});

test('tagging, question answering and similarity each take a separate validation file, and a similarity run is scored on all of it', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  // Tagging: CoNLL sentences, the held-out share switched off while the file is in use.
  await page.getByTestId('task-tag').check();
  await page.getByTestId('use-tag-example').click();
  const conll = 'John B-PER\nlives O\nin O\nParis B-LOC\n\nMary B-PER\nsings O\n\nBerlin B-LOC\nis O\nbig O\n';
  await page.getByTestId('tag-valid-file').setInputFiles({ name: 'dev.conll', mimeType: 'text/plain', buffer: Buffer.from(conll) });
  await page.getByTestId('tag-valid-name').waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('tag-valid-name').textContent(), /validating on dev\.conll \(3 sentences\)/);
  assert.ok(await page.getByTestId('tag-valid-fraction').isDisabled(), 'no share held out beside a validation file');

  // Question answering: two questions as JSON Lines.
  await page.getByTestId('task-answer').check();
  await page.getByTestId('use-qa-example').click();
  const qa = [
    { id: 'a', question: 'Who sings?', context: 'Mary sings in the choir.', answers: { text: ['Mary'], answer_start: [0] } },
    { id: 'b', question: 'Where does John live?', context: 'John lives in Paris.', answers: { text: ['Paris'], answer_start: [14] } },
  ].map((q) => JSON.stringify(q)).join('\n');
  await page.getByTestId('qa-valid-file').setInputFiles({ name: 'dev.jsonl', mimeType: 'application/json', buffer: Buffer.from(qa) });
  await page.getByTestId('qa-valid-name').waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('qa-valid-name').textContent(), /validating on dev\.jsonl \(2 questions\)/);
  assert.equal(await page.getByTestId('tag-valid-name').count(), 0, 'each mode shows its own file');

  // Similarity: an STS-B-like dev file whose scores span 0.5–3.5 is read on the training file's 0–5.
  await page.getByTestId('task-similar').check();
  const header = ['index', 'genre', 'filename', 'year', 'old_index', 'source1', 'source2', 'sentence1', 'sentence2', 'score'];
  const row = (i, a, b, s) => [i, 'main-news', '2012', '2012test', String(i).padStart(4, '0'), 'none', 'none', a, b, s];
  const trainRows = sentences(60).map(([a, b], i) => row(i, a, b, (i % 6 * 0.97).toFixed(3)));
  const devRows = sentences(72).slice(60).map(([a, b], i) => row(i, a, b, (0.5 + (i % 4)).toFixed(2)));
  const tsv = (rows) => Buffer.from([header, ...rows].map((r) => r.join('\t')).join('\n') + '\n');
  await page.getByTestId('pair-file').setInputFiles({ name: 'train.tsv', mimeType: 'text/tab-separated-values', buffer: tsv(trainRows) });
  await page.waitForFunction(() => document.querySelector('[data-testid=pair-count]')?.textContent === '60', null, { timeout: MINUTE });
  await page.getByTestId('pair-valid-file').setInputFiles({ name: 'dev.tsv', mimeType: 'text/tab-separated-values', buffer: tsv(devRows) });
  await page.getByTestId('pair-valid-name').waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('pair-valid-name').textContent(), /validating on dev\.tsv \(12 pairs\)/);
  await page.getByTestId('pair-bi').check();
  await recipe(page, { mode: 'head', 'batch-size': 16, 'head-epochs': 2 });
  await train(page, 'similarity-valid-file', 6 * MINUTE);
  assert.equal(await page.getByTestId('sim-count').textContent(), '12', 'every pair of the validation file scored, none of the training file');
});
