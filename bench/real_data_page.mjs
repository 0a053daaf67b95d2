// The page's side of the real-data benchmark (bench/real_data.mjs --side page): the studio of
// dist/ in headless Chromium, on its default model, trains in its worker (CPU, 2 threads) with
// the benchmark's training file and its measured file given as the validation file, as a user
// uploads them; the recipe is set in "All settings". It returns the page's own score of its
// last evaluation (read from the training chart's data) and the exported model, which
// scripts/score_export.py then scores in PyTorch on the same measured file.
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { launch, serve, ROOT } from '../tests/e2e/harness.mjs';
import { chartValues, exportZip, recipe, train } from '../tests/e2e/studio_helpers.mjs';

const MINUTE = 60_000;

/** Each task: its switch, its file inputs and what says a file was read. */
const MODE = {
  tag: { task: 'task-tag', file: 'tag-file', valid: 'tag-valid-file', read: 'tag-valid-name' },
  qa: { task: 'task-answer', file: 'qa-file', valid: 'qa-valid-file', read: 'qa-valid-name' },
  'similarity-bi': { task: 'task-similar', file: 'pair-file', valid: 'pair-valid-file', read: 'pair-valid-name', encoder: 'pair-bi' },
  'similarity-cross': { task: 'task-similar', file: 'pair-file', valid: 'pair-valid-file', read: 'pair-valid-name', encoder: 'pair-cross' },
  pairs: { task: null, file: 'data-file', valid: 'valid-file', read: null },
};

const MIME = { '.json': 'application/json', '.jsonl': 'application/json', '.tsv': 'text/tab-separated-values', '.csv': 'text/csv' };
const upload = (path) => ({ name: basename(path), mimeType: MIME[path.slice(path.lastIndexOf('.'))] ?? 'text/plain', buffer: readFileSync(path) });

/**
 * Trains `name` in the page: `train` and `valid` files, recipe `r` ({ mode, epochs, batch, lr }),
 * `len` tokens (QA: its window), `seed`. Returns { score, seconds, zip, note }: `score` the
 * page's last evaluation (×100; pairs: accuracy), `seconds` from the click on Train to the run's end
 * (reading, tokenizing, training and evaluating in the worker), `zip` the export's path in `out`.
 */
export async function runOnPage(name, { train: trainFile, valid, r, len, seed, out, log }) {
  const m = MODE[name];
  const server = await serve();
  const chrome = await launch({ webgpu: false });
  const { page } = chrome;
  try {
    await page.goto(server.origin + '/#studio');
    await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
    await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('all-MiniLM-L6-v2'), null, { timeout: 5 * MINUTE });
    if (m.task) await page.getByTestId(m.task).check();
    await page.getByTestId(m.file).setInputFiles(upload(trainFile));
    // The training file's report, then the validation file's.
    await page.waitForFunction((id) => !document.querySelector('[data-testid=data-error]') && document.querySelector(`[data-testid=${id}]`), m.valid, { timeout: 5 * MINUTE });
    await page.waitForTimeout(2000);
    if (await page.getByTestId('data-error').count()) throw new Error(`the page refused ${trainFile}: ${await page.getByTestId('data-error').textContent()}`);
    await page.getByTestId(m.valid).setInputFiles(upload(valid));
    if (m.read) {
      await page.getByTestId(m.read).waitFor({ timeout: 5 * MINUTE });
      log(`page read: ${(await page.getByTestId(m.read).textContent()).trim().slice(0, 200)}`);
    } else {
      await page.getByText(`validating on ${basename(valid)}`).waitFor({ timeout: 5 * MINUTE });
      log(`page read: ${(await page.getByText(`validating on ${basename(valid)}`).textContent()).trim()}`);
    }
    if (m.encoder) await page.getByTestId(m.encoder).check();
    const numbers = { seed };
    if (r.mode === 'full') Object.assign(numbers, { epochs: r.epochs, 'batch-size': r.batch, 'learning-rate': r.lr, warmup: 0.1, 'weight-decay': 0.01, clip: 1 });
    else Object.assign(numbers, { 'head-epochs': r.epochs, 'batch-size': r.batch, 'head-learning-rate': r.lr });
    if (name !== 'qa') numbers['max-len'] = len;
    await recipe(page, { mode: r.mode, ...numbers });
    if (r.mode === 'full' && !(await page.getByTestId('group-by-length').isChecked())) await page.getByTestId('group-by-length').check();
    if (name === 'qa' && (await page.getByTestId('qa-window').count())) {
      const shown = await page.getByTestId('qa-window').textContent();
      log(`page QA windows: ${shown.trim()}`);
    }
    const start = performance.now();
    const done = await train(page, `real-data-${name}`, 6 * 60 * MINUTE);
    const seconds = (performance.now() - start) / 1000;
    log(`page: ${done.trim()}`);
    const series = await chartValues(page, 'accuracy-chart');
    const last = (i) => series[i].at(-1) * 100;
    let score;
    if (name === 'tag') score = [last(2)];
    else if (name === 'qa') score = [last(1), last(2)];
    else if (name.startsWith('similarity')) score = [last(1)];
    else score = [last(1)];
    mkdirSync(out, { recursive: true });
    const zip = await exportZip(page, `real-data-${name}-seed${seed}.zip`);
    const kept = join(out, basename(zip));
    copyFileSync(zip, kept);
    return { score, seconds, zip: kept, evaluations: series.map((s) => s.map((v) => +(v * 100).toFixed(2))) };
  } finally {
    await chrome.browser.close();
    await server.close();
  }
}

export { ROOT };
