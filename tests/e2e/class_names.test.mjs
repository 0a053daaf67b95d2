// Class names for integer labels from the files a Hub dataset comes with: a JSON Lines export
// (`datasets`' `to_json`) holds only the ids, and the names are in the repository's README.md
// front matter (`dataset_info.features`, `class_label.names`) or the `dataset_info.json` that
// `save_to_disk` writes. Picked with the data file or after it, they name the labels of a
// classifier's training and validation files and a tagger's `ner_tags`; forgotten, the ids come
// back; a README without them is refused by its cause. A tagger's file of numbered tags,
// refused alone, reads once the names follow it. The files are written here, as
// `datasets` writes them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, screenshot } from './harness.mjs';
import { MINUTE, openStudio } from './studio_helpers.mjs';

let server, chrome;
before(async () => {
  server = await serve();
  chrome = await launch({ webgpu: false });
  await openStudio(chrome.page, server.origin);
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

const file = (name, text) => ({ name, mimeType: name.endsWith('.md') ? 'text/markdown' : 'application/json', buffer: Buffer.from(text) });
const text = (page, id) => page.getByTestId(id).textContent();
const until = (page, id, fragment) => page.waitForFunction(([id, f]) => document.querySelector(`[data-testid=${id}]`)?.textContent.includes(f), [id, fragment], { timeout: MINUTE });

const positive = ['a warm and funny film', 'the cast is wonderful', 'i loved every minute', 'a joy to watch', 'sharp, kind and moving', 'the best film this year'];
const negative = ['dull and far too long', 'i left before the end', 'a waste of a good cast', 'the plot makes no sense', 'flat, loud and tiring', 'the worst film this year'];
const rows = [...positive.map((t) => ({ text: t, label: 1 })), ...negative.map((t) => ({ text: t, label: 0 })), { text: 'not rated yet', label: -1 }];
const jsonl = (items) => items.map((r) => JSON.stringify(r)).join('\n') + '\n';

const README = `---
language:
- en
dataset_info:
  features:
  - name: text
    dtype: string
  - name: label
    dtype:
      class_label:
        names:
          '0': neg
          '1': pos
  splits:
  - name: train
    num_examples: 13
configs:
- config_name: default
  data_files:
  - split: train
    path: data/train-*
---

# Reviews

Short film reviews.
`;

test('classification: README.md picked with a JSON Lines export names its label ids; the validation file is named too; forgotten, the ids come back', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('task-classify').check();
  await page.getByTestId('data-file').setInputFiles([file('train.jsonl', jsonl(rows)), file('README.md', README)]);
  await until(page, 'class-names', 'Named in train.jsonl: label.');
  assert.equal(await text(page, 'usable-rows'), '12', '-1, datasets\' "no label", is not a row to train on');
  const balance = await text(page, 'class-balance');
  assert.ok(balance.includes('neg') && balance.includes('pos'), balance);
  assert.match(await text(page, 'class-names'), /^Class names from README\.md: label \(neg, pos\)\./);
  await screenshot(page, 'class-names-classification');

  await page.getByTestId('valid-file').setInputFiles(file('valid.jsonl', jsonl([{ text: 'warm and wonderful', label: 1 }, { text: 'long and dull', label: 0 }])));
  await until(page, 'class-names', 'Named in valid.jsonl: label.');
  assert.ok((await text(page, 'studio-data')).includes('validating on valid.jsonl (2 rows)'));

  await page.getByTestId('class-names-forget').click();
  await page.waitForFunction(() => !document.querySelector('[data-testid=class-names]'), null, { timeout: MINUTE });
  await page.waitForFunction(() => { const b = document.querySelector('[data-testid=class-balance]')?.textContent ?? ''; return !b.includes('pos') && b.includes('0') && b.includes('1'); }, null, { timeout: MINUTE });
});

test('tagging: a file of numbered tags is refused, saying where names come from; dataset_info.json picked after it names its ner_tags; a README without dataset_info is refused by its cause', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('task-tag').check();
  const sentences = [
    { tokens: ['Ann', 'Lee', 'visited', 'Paris', '.'], ner_tags: [1, 2, 0, 3, 0] },
    { tokens: ['Bob', 'stayed', 'in', 'Rome', '.'], ner_tags: [1, 0, 0, 3, 0] },
    { tokens: ['They', 'met', 'Cara', 'Diaz', '.'], ner_tags: [0, 0, 1, 2, 0] },
  ];
  await page.getByTestId('tag-file').setInputFiles(file('train.jsonl', jsonl(sentences)));
  await until(page, 'data-error', "the tags are numbers (1, …); this page needs their names (O, B-PER, I-PER, …). Add the dataset's README.md or dataset_info.json");
  const info = JSON.stringify({ description: '', features: { tokens: { feature: { dtype: 'string', _type: 'Value' }, _type: 'Sequence' }, ner_tags: { feature: { names: ['O', 'B-PER', 'I-PER', 'B-LOC'], _type: 'ClassLabel' }, _type: 'Sequence' } } });
  await page.getByTestId('tag-file').setInputFiles(file('dataset_info.json', info));
  await until(page, 'class-names', 'Named in train.jsonl: ner_tags.');
  await page.waitForFunction(() => document.querySelector('[data-testid=tag-sentences]')?.textContent === '3', null, { timeout: MINUTE });
  const report = await text(page, 'tag-report');
  for (const tag of ['B-PER', 'I-PER', 'B-LOC']) assert.ok(report.includes(tag), `${tag} in ${report}`);
  await screenshot(page, 'class-names-tagging');

  await page.getByTestId('tag-file').setInputFiles(file('README.md', '---\nlicense: mit\n---\n# No features here\n'));
  await until(page, 'data-error', 'README.md: its front matter has no dataset_info');
  assert.equal(await text(page, 'tag-sentences'), '3', 'the file read before stays');
});
