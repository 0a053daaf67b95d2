// Shared by the studio's end-to-end tests that train bert-tiny (the random-weight tiny BERT of
// public/models/bert-tiny, fast enough to train several times in one test file): open the page on
// it, load data, set a recipe, train, predict, export, import, predict a file and read the CSV.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { screenshot, ARTIFACTS, ROOT } from './harness.mjs';

export const MINUTE = 60_000;

/** Whether `python3` has PyTorch and transformers (`cargo xtask test` puts a venv with them first).
 * Asked once per test file: importing them takes seconds of CPU. */
let torch;
const torchAvailable = () =>
  (torch ??= spawnSync('python3', ['-c', 'import torch, transformers, safetensors'], { stdio: 'ignore' }).status === 0);

/** Loads the exported `zip` in Python with `AutoModelForSequenceClassification` (with its own
 * modelling code where config.json's auto_map names it) and `AutoTokenizer`, and checks it gives
 * `rows`' probabilities (`[{ text, pair, probs }]`) within 1e-4
 * (scripts/check_classifier_with_transformers.py). Without PyTorch the test `t` is marked
 * skipped (it never passes as checked), unless BERTBENCH_REQUIRE_TORCH makes that a failure. */
export async function checkWithTransformers(t, zip, rows) {
  await checkAllWithTransformers(t, [[zip, rows]]);
}

/** [`checkWithTransformers`] for several exports (`[[zip, rows], ...]`) in one Python process:
 * each is checked and reported on its own, and any failure fails `t`. */
export async function checkAllWithTransformers(t, exports) {
  if (!torchAvailable()) {
    assert.ok(!process.env.BERTBENCH_REQUIRE_TORCH, 'PyTorch/transformers are required (BERTBENCH_REQUIRE_TORCH) but python3 cannot import them');
    t.skip(`skipped: the transformers check of ${exports.map(([zip]) => zip).join(', ')} (python3 has no PyTorch/transformers)`);
    return;
  }
  const args = [];
  for (const [zip, rows] of exports) {
    const probsFile = `${zip}.probs.json`;
    await writeFile(probsFile, JSON.stringify(rows));
    args.push(zip, probsFile);
  }
  const check = spawnSync('python3', [join(ROOT, 'scripts', 'check_classifier_with_transformers.py'), ...args], { encoding: 'utf8', env: { ...process.env, TQDM_DISABLE: '1' } });
  assert.equal(check.status, 0, check.stdout + check.stderr);
}

/** Opens the studio on bert-tiny. */
export async function openStudio(page, origin) {
  await page.goto(origin + '/?model=bert-tiny#studio');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('bert-tiny'), null, { timeout: 5 * MINUTE });
}

/** Opens `name` (CSV text `text`) as the training file and waits for its report of `usable` rows. */
export async function trainingFile(page, name, text, usable) {
  await page.getByTestId('data-file').setInputFiles({ name, mimeType: 'text/csv', buffer: Buffer.from(text) });
  try {
    await page.waitForFunction(({ name, usable }) =>
      document.querySelector('[data-testid=studio-data]')?.textContent.includes(` rows in ${name} `)
        && document.querySelector('[data-testid=usable-rows]')?.textContent === String(usable),
    { name, usable }, { timeout: MINUTE });
  } catch (e) {
    throw new Error(`${e.message}\nthe studio shows: ${await page.getByTestId('studio-data').textContent()}`);
  }
}

/** The built-in example dataset (252 sentences, half positive) as the training file. */
export async function exampleData(page) {
  await page.getByTestId('use-example').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=usable-rows]')?.textContent === '252', null, { timeout: MINUTE });
}

/** The first `perLabel` negative and positive sentences of the built-in example dataset, taking
 * turns, as a CSV file: a small training file, quick to fine-tune on. */
export async function sentimentSample(perLabel) {
  const [header, ...rows] = parseCsv(await readFile(join(ROOT, 'public', 'examples', 'sentiment.csv'), 'utf8')).filter((r) => r.length === 2);
  const [negative, positive] = ['negative', 'positive'].map((l) => rows.filter((r) => r[1] === l).slice(0, perLabel));
  return [header, ...negative.flatMap((n, i) => [n, positive[i]])].map((r) => r.map(csvField).join(',')).join('\n') + '\n';
}

/**
 * Sets the recipe: `mode` (head, full, ftu), `pooling` (mean, cls, pooler), `layers` (last,
 * second, sum4, cat4) and any of the number fields under "All settings" by their test id.
 */
export async function recipe(page, { mode, pooling, layers, ...numbers }) {
  if (mode) await page.selectOption('[data-testid=train-mode]', mode);
  if (pooling) await page.selectOption('[data-testid=feature-pooling]', pooling);
  if (layers) await page.selectOption('[data-testid=feature-layers]', layers);
  await page.locator('[data-testid=studio-train] details').first().evaluate((d) => { d.open = true; });
  for (const [id, value] of Object.entries(numbers)) {
    await page.getByTestId(id).fill(String(value));
    await page.getByTestId(id).dispatchEvent('change');
    assert.equal(Number(await page.getByTestId(id).inputValue()), Number(value), `${id} took ${value}`);
  }
}

/** Clicks Train and waits for the run to end (a new row in the run history); fails with the
 * page's error if it fails. Returns the "Finished after N steps…" banner. */
export async function train(page, name, timeout = 4 * MINUTE) {
  const runs = await page.getByTestId('run-row').count();
  await page.getByTestId('train-start').click();
  await endOfRun(page, runs, name, timeout);
  return page.getByTestId('train-done').textContent();
}

/** Waits until the run history has `runs + 1` rows (the run that was going on has ended). */
export async function endOfRun(page, runs, name, timeout = 4 * MINUTE) {
  try {
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid=run-row]').length > n
      || document.querySelector('[data-testid=train-error], [data-testid=train-start-error]'), runs, { timeout });
  } catch (e) {
    await screenshot(page, `${name}-failed`);
    const shown = await page.locator('[data-testid=studio-train]').textContent();
    throw new Error(`${e.message}\nthe studio shows: ${shown}`);
  }
  if (await page.getByTestId('train-error').count()) assert.fail(`the run failed: ${await page.getByTestId('train-error').textContent()}`);
  if (await page.getByTestId('train-start-error').count()) assert.fail(`the run did not start: ${await page.getByTestId('train-start-error').textContent()}`);
  await page.getByTestId('train-done').waitFor({ timeout: MINUTE });
}

/** `data-values` of a chart: each series' y values. */
export async function chartValues(page, testid) {
  return JSON.parse(await page.getByTestId(testid).getAttribute('data-values'));
}

let lastAsked = null;

/** Types `text` (and `pair`, or nothing) into the predict box and returns the labels and the
 * probabilities at full precision. Waits for the answer to this request: the numbers on the page
 * change (asking the same thing twice in a row first asks something else). */
export async function predict(page, text, pair = '') {
  const key = JSON.stringify([text, pair]);
  if (key === lastAsked) await predictOnce(page, `${text} (asked again)`, pair);
  lastAsked = key;
  return predictOnce(page, text, pair);
}

async function predictOnce(page, text, pair) {
  const shown = () => page.evaluate(() => [...document.querySelectorAll('[data-testid=prob]')].map((e) => e.dataset.value).join(' '));
  const before = await shown();
  await page.getByTestId('predict-text').fill(text);
  await page.getByTestId('predict-pair').fill(pair);
  await page.getByTestId('predict-button').click();
  await page.waitForFunction((old) => {
    const now = [...document.querySelectorAll('[data-testid=prob]')].map((e) => e.dataset.value).join(' ');
    return now !== '' && now !== old && !document.querySelector('[data-testid=predict-button]').disabled;
  }, before, { timeout: MINUTE });
  const cells = page.getByTestId('prob');
  const labels = await cells.evaluateAll((els) => els.map((e) => e.dataset.label));
  const probs = await cells.evaluateAll((els) => els.map((e) => Number(e.dataset.value)));
  // A softmax's probabilities sum to 1; a multi-label head's are each label's own.
  const multi = await page.getByTestId('prediction').getAttribute('data-multi-label');
  if (multi !== 'true') assert.ok(Math.abs(probs.reduce((a, b) => a + b, 0) - 1) < 1e-4, `probabilities sum to 1: ${probs}`);
  for (const p of probs) assert.ok(Number.isFinite(p) && p >= 0 && p <= 1, `${probs}`);
  return { labels, probs };
}

/** Exports the current classifier; returns the zip's path. */
export async function exportZip(page, name) {
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 2 * MINUTE }),
    page.getByTestId('export-button').click(),
  ]);
  const path = join(ARTIFACTS, name);
  await download.saveAs(path);
  return path;
}

/** Imports a classifier zip; returns the studio's notice ("Imported a classifier: …"). */
export async function importZip(page, path) {
  await page.getByTestId('import-file').setInputFiles(path);
  await page.waitForFunction(() => document.querySelector('[data-testid=classifier-info]')?.textContent.includes('imported')
    && document.querySelector('[data-testid=studio-notice]')?.textContent.startsWith('Imported'), null, { timeout: 2 * MINUTE });
  return page.getByTestId('studio-notice').textContent();
}

/** "Predict a file": uploads `text` as `name`, waits for the CSV download, returns its rows
 * (header first) and the note the page shows. */
export async function predictFile(page, name, text) {
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 2 * MINUTE }),
    page.getByTestId('batch-file').setInputFiles({ name, mimeType: 'text/csv', buffer: Buffer.from(text) }),
  ]);
  const expected = `${name.replace(/\.[^.]*$/, '')}-predictions.csv`;
  assert.equal(download.suggestedFilename(), expected);
  const path = join(ARTIFACTS, expected);
  await download.saveAs(path);
  await page.waitForFunction(() => /^Predicted \d+ rows/.test(document.querySelector('[data-testid=batch-note]')?.textContent ?? ''), null, { timeout: MINUTE });
  return { rows: parseCsv(await readFile(path, 'utf8')), note: await page.getByTestId('batch-note').textContent() };
}

/** RFC 4180 CSV (quoted fields may hold commas, quotes and line breaks) to rows of fields. */
export function parseCsv(text) {
  const rows = [];
  let row = [], field = '', quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; }
    else if (c === '\n') { row.push(field); rows.push(row); row = []; field = ''; }
    else if (c !== '\r') field += c;
  }
  if (field !== '' || row.length) { row.push(field); rows.push(row); }
  return rows;
}

/** A CSV field, quoted when it needs to be. */
export const csvField = (s) => (/[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);

/** The change table of "What did fine-tuning change?": `{ cka, cosine }`, one value per layer
 * (0 = embeddings). Waits for a table whose text differs from `previous` (a table shown before). */
export async function changeTable(page, previous = null) {
  await page.getByTestId('change-button').click();
  await page.waitForFunction((old) => {
    const t = document.querySelector('[data-testid=change-table]');
    return document.querySelector('[data-testid=change-error]') || (t && t.textContent !== old);
  }, previous, { timeout: 3 * MINUTE });
  if (await page.getByTestId('change-error').count()) assert.fail(await page.getByTestId('change-error').textContent());
  const [cka, cosine] = await page.locator('[data-testid=change-table] tr').evaluateAll((trs) =>
    trs.slice(1).map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent))));
  return { cka, cosine, text: await page.getByTestId('change-table').textContent() };
}

/** The files of a zip (stored or deflated entries, read through its central directory), by name. */
export async function unzip(path) {
  const { inflateRawSync } = await import('node:zlib');
  const buf = await readFile(path);
  let end = buf.length - 22;
  while (end >= 0 && buf.readUInt32LE(end) !== 0x06054b50) end--;
  assert.ok(end >= 0, `${path} has no end of central directory`);
  const count = buf.readUInt16LE(end + 10);
  let at = buf.readUInt32LE(end + 16);
  const files = {};
  for (let i = 0; i < count; i++) {
    assert.equal(buf.readUInt32LE(at), 0x02014b50, 'a central directory entry');
    const method = buf.readUInt16LE(at + 10);
    const size = buf.readUInt32LE(at + 20);
    const [nameLen, extraLen, commentLen] = [buf.readUInt16LE(at + 28), buf.readUInt16LE(at + 30), buf.readUInt16LE(at + 32)];
    const local = buf.readUInt32LE(at + 42);
    const name = buf.toString('utf8', at + 46, at + 46 + nameLen);
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(start, start + size);
    files[name] = method === 0 ? raw : inflateRawSync(raw);
    at += 46 + nameLen + extraLen + commentLen;
  }
  return files;
}

/** A safetensors file's header: each tensor's dtype and shape, by name. */
export function safetensorsHeader(bytes) {
  const n = Number(bytes.readBigUInt64LE(0));
  return JSON.parse(bytes.toString('utf8', 8, 8 + n));
}
