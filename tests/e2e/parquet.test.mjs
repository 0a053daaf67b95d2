// The Hub's Parquet files, as `datasets` writes them (scripts/make_parquet_files.py, at test
// time, with pyarrow and the features `datasets` stores): each studio task reads its own kind of file, every row
// counted, integer class labels named from the features kept in the file (ClassLabel, and lists
// of ClassLabel for tags and for multi-label), in the codecs pyarrow, polars and the Hub use
// (snappy, zstd, gzip); a brotli file, a download cut short and a Git LFS pointer saved under
// the name are each refused with their cause. Without pyarrow in python3 the tests are marked
// skipped, unless BERTBENCH_REQUIRE_TORCH makes that a failure.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, launch, screenshot, ROOT } from './harness.mjs';
import { MINUTE, openStudio } from './studio_helpers.mjs';

let server, chrome, dir, expected, why;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bertbench-parquet-'));
  const made = spawnSync('python3', [join(ROOT, 'scripts', 'make_parquet_files.py'), dir], { encoding: 'utf8' });
  if (made.status !== 0) {
    why = `python3 could not write the Parquet files (it needs pyarrow): ${(made.stderr || made.error?.message || '').trim().split('\n').at(-1)}`;
    assert.ok(!process.env.BERTBENCH_REQUIRE_TORCH, `${why} (BERTBENCH_REQUIRE_TORCH is set)`);
    return;
  }
  expected = JSON.parse(await readFile(join(dir, 'expected.json'), 'utf8'));
  server = await serve();
  chrome = await launch({ webgpu: false });
  await openStudio(chrome.page, server.origin);
});
after(async () => { await chrome?.browser.close(); await server?.close(); if (dir) await rm(dir, { recursive: true, force: true }); });

/** Skips `t` (said) when the files could not be made; else the file `name`'s bytes. */
async function parquet(t, name) {
  if (!expected) {
    t.skip(`skipped: ${why}`);
    return null;
  }
  return { name, mimeType: 'application/vnd.apache.parquet', buffer: await readFile(join(dir, name)) };
}

const text = (page, id) => page.getByTestId(id).textContent();

test('classification: a sentiment Parquet file (snappy) reads as a table, its ClassLabel ids named neg and pos', { timeout: 5 * MINUTE }, async (t) => {
  const file = await parquet(t, 'sentiment.parquet');
  if (!file) return;
  const { page } = chrome;
  await page.getByTestId('task-classify').check();
  await page.getByTestId('data-file').setInputFiles(file);
  await page.waitForFunction((n) => document.querySelector('[data-testid=usable-rows]')?.textContent === String(n), expected.sentiment.rows, { timeout: MINUTE });
  assert.ok((await text(page, 'studio-data')).includes(`${expected.sentiment.rows} rows in sentiment.parquet (Parquet).`), 'no header row to guess in Parquet');
  assert.match(await text(page, 'data-decoded'), /^The file was read from Parquet \(48 rows, snappy\); the class names of label came from the features `datasets` stored in it\.$/);
  const balance = await text(page, 'class-balance');
  for (const [name, count] of Object.entries(expected.sentiment.labels)) assert.ok(balance.includes(name) && balance.includes(String(count)), `${name} ${count}: ${balance}`);
  assert.equal(await page.getByTestId('column-text').evaluate((s) => s.options[s.selectedIndex].textContent.trim().startsWith('text')), true);
  assert.equal(await page.getByTestId('column-label').evaluate((s) => s.options[s.selectedIndex].textContent.trim().startsWith('label')), true);
  await screenshot(page, 'parquet-classification');
});

test('refused with their cause: brotli pages, a download cut short, a Git LFS pointer named .parquet; the file read before stays', { timeout: 5 * MINUTE }, async (t) => {
  const files = await Promise.all(['brotli.parquet', 'cut.parquet', 'pointer.parquet'].map((n) => parquet(t, n)));
  if (!files[0]) return;
  const { page } = chrome;
  await page.getByTestId('task-classify').check();
  const causes = ['compressed with brotli, which this page does not read', 'cut short: a Parquet file ends with its footer', 'a Git LFS pointer: the repository was cloned without its large files'];
  for (const [i, file] of files.entries()) {
    await page.getByTestId('data-file').setInputFiles(file);
    try {
      await page.waitForFunction((cause) => document.querySelector('[data-testid=data-error]')?.textContent.includes(cause), causes[i], { timeout: MINUTE });
    } catch (e) {
      throw new Error(`${file.name}: no "${causes[i]}" in ${await page.getByTestId('studio-data').textContent()}`);
    }
  }
  assert.equal(await text(page, 'usable-rows'), String(expected.sentiment.rows), 'the rows read before are still there');
});

test('tagging: CoNLL-2003 as datasets writes it (tokens, ner_tags as ClassLabel ids), zstd as polars writes it', { timeout: 5 * MINUTE }, async (t) => {
  const file = await parquet(t, 'conll.parquet');
  if (!file) return;
  const { page } = chrome;
  await page.getByTestId('task-tag').check();
  await page.getByTestId('tag-file').setInputFiles(file);
  await page.waitForFunction((n) => document.querySelector('[data-testid=tag-sentences]')?.textContent === String(n), expected.conll.sentences, { timeout: MINUTE });
  assert.equal(await text(page, 'tag-count'), String(expected.conll.tags.length));
  const report = await text(page, 'tag-report');
  for (const tag of expected.conll.tags) assert.ok(report.includes(tag), `${tag} in ${report}`);
  const warnings = await page.getByTestId('data-warning').allTextContents();
  assert.ok(warnings.some((w) => w.includes('read from Parquet (12 rows, zstd); the class names of ner_tags came from the features')), warnings.join('\n'));
});

test('question answering: SQuAD as datasets writes it (answers a struct of lists), gzip', { timeout: 5 * MINUTE }, async (t) => {
  const file = await parquet(t, 'squad.parquet');
  if (!file) return;
  const { page } = chrome;
  await page.getByTestId('task-answer').check();
  await page.getByTestId('qa-file').setInputFiles(file);
  await page.waitForFunction((n) => document.querySelector('[data-testid=qa-questions]')?.textContent === String(n), expected.squad.questions, { timeout: MINUTE });
  assert.ok((await text(page, 'qa-preview')).includes('Grace Kim'), 'an answer shown');
});

test('multi-label: GoEmotions as datasets writes it (labels a list of ClassLabel ids), named', { timeout: 5 * MINUTE }, async (t) => {
  const file = await parquet(t, 'emotions.parquet');
  if (!file) return;
  const { page } = chrome;
  await page.getByTestId('task-multilabel').check();
  await page.getByTestId('multilabel-file').setInputFiles(file);
  await page.waitForFunction((n) => document.querySelector('[data-testid=multilabel-texts]')?.textContent === String(n), expected.emotions.texts, { timeout: MINUTE });
  assert.equal(await text(page, 'multilabel-labels'), String(expected.emotions.labels.length));
  const counts = await text(page, 'multilabel-counts');
  for (const name of expected.emotions.labels) assert.ok(counts.includes(name), `${name} in ${counts}`);
  assert.deepEqual((await page.getByTestId('multilabel-count').allTextContents()).map(Number).sort(), [...expected.emotions.counts].sort());
});

test('similarity: STS-B as datasets writes it (a float label); multiple choice: SWAG (label a ClassLabel "0".."3")', { timeout: 5 * MINUTE }, async (t) => {
  const [stsb, swag] = await Promise.all([parquet(t, 'stsb.parquet'), parquet(t, 'swag.parquet')]);
  if (!stsb) return;
  const { page } = chrome;
  await page.getByTestId('task-similar').check();
  await page.getByTestId('pair-file').setInputFiles(stsb);
  await page.waitForFunction((n) => document.querySelector('[data-testid=pair-count]')?.textContent === String(n), expected.stsb.pairs, { timeout: MINUTE });
  await page.getByTestId('task-choice').check();
  await page.getByTestId('choice-file').setInputFiles(swag);
  await page.waitForFunction((n) => document.querySelector('[data-testid=choice-questions]')?.textContent === String(n), expected.swag.questions, { timeout: MINUTE });
  assert.ok((await text(page, 'choice-preview')).includes('takes out the milk.'), 'an ending shown');
});
