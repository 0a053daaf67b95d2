// Records what a build saves in the browser, as a fixture for `saved_items.test.mjs`: a training
// file, the studio's settings, a finished head-only run (its head) and a lab model with its run, each
// as IndexedDB holds it (the item's JSON and its parts' bytes), plus what the page showed for
// them (the run's probabilities, the lab's fills), which the items must give back when a later
// build opens them.
//
//   cargo xtask dist && node tests/e2e/record_saved_items.mjs [--checkpoint]
//
// Run it with the build whose saved items later builds must still open, and commit the folder it
// writes (tests/fixtures/saved-items/). Recorded once per change of what is saved, not in CI.
//
// `--checkpoint` records only the checkpoint of a run in progress (full fine-tuning of bert-tiny,
// interrupted after its first checkpoint) into checkpoint.json, leaving the other items: the
// checkpoint item's JSON and its run-state file, which `cargo test -p bertbench-app` reads with
// today's types. Its weights (four copies of bert-tiny's, 17 MB each) are left out.
import { mkdtemp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { serve, startLongRun, CHROMIUM_FLAGS, ROOT } from './harness.mjs';
import { SENTENCE, FILL, csv } from './saved_items_data.mjs';

const MINUTE = 60_000;
const OUT = join(ROOT, 'tests', 'fixtures', 'saved-items');

const server = await serve();
const profile = await mkdtemp(join(tmpdir(), 'bertbench-record-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_FLAGS, viewport: { width: 1200, height: 900 },
});
try {
  const page = context.pages()[0] ?? await context.newPage();
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
  await page.goto(server.origin + '/#studio');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  if (process.argv.includes('--checkpoint')) {
    await recordCheckpoint(page);
    process.exit(0);
  }
  const model = (await page.locator('#model-select').inputValue());

  // 1. A finished head-only run: it keeps only its head.
  await page.getByTestId('data-file').setInputFiles({ name: 'tiny.csv', mimeType: 'text/csv', buffer: Buffer.from(csv()) });
  await page.getByTestId('validation-report').waitFor({ timeout: MINUTE });
  await page.selectOption('[data-testid=train-mode]', 'head');
  await page.getByTestId('train-start').click();
  await page.getByTestId('train-done').waitFor({ timeout: 5 * MINUTE });
  await page.waitForFunction(() => document.querySelector('[data-testid=saved-item][data-kind=run]'), null, { timeout: 2 * MINUTE });
  await page.getByTestId('predict-text').fill(SENTENCE);
  await page.getByTestId('predict-button').click();
  await page.getByTestId('prob').first().waitFor({ timeout: MINUTE });
  const probs = await page.getByTestId('prob').evaluateAll((els) => els.map((e) => Number(e.dataset.value)));

  // 2. A lab model: a trained 1,000-piece vocabulary keeps it small.
  await page.getByTestId('tab-lab').click();
  await page.selectOption('[data-testid=lab-vocab-choice]', '1000');
  await page.getByTestId('lab-epochs').fill('1');
  await page.getByTestId('lab-epochs').dispatchEvent('change');
  await page.getByTestId('lab-start').click();
  await page.getByTestId('lab-done').waitFor({ timeout: 10 * MINUTE });
  await page.waitForFunction(() => /Saved in this browser/.test(document.querySelector('[data-testid=lab-storage-note]')?.textContent ?? ''), null, { timeout: MINUTE });
  await page.getByTestId('lab-fill-input').fill(FILL);
  await page.getByTestId('lab-fill').click();
  const fills = (await page.getByTestId('lab-fill-result').textContent({ timeout: MINUTE })).trim();

  // Everything IndexedDB holds: items as the page wrote them, parts as files.
  const dump = await dumpDatabase(page);
  await rm(OUT, { recursive: true, force: true });
  await mkdir(OUT, { recursive: true });
  const index = [];
  for (const [i, item] of dump.entries()) {
    const parts = [];
    for (const [j, bytes] of item.parts.entries()) {
      const file = `${i}-${j}.bin`;
      await writeFile(join(OUT, file), Buffer.from(bytes));
      parts.push(file);
    }
    index.push({ key: item.key, value: item.value, parts });
  }
  // The bundle's name hashes the build; the commit is where dist/ was built from, if it is current.
  const build = await buildName();
  const shown = { model, sentence: SENTENCE, probs, fill: FILL, fills };
  await writeFile(join(OUT, 'items.json'), JSON.stringify({ build, recorded: new Date().toISOString().slice(0, 10), shown, items: index }, null, 1) + '\n');
  console.log(`${index.length} items from build ${build}: ${index.map((i) => JSON.parse(i.value).kind).join(', ')}`);
  console.log(JSON.stringify(shown));
} finally {
  await context.close();
  await server.close();
  await rm(profile, { recursive: true, force: true });
}

/** Every item IndexedDB holds, as the page wrote it, parts as bytes. */
async function dumpDatabase(page) {
  return page.evaluate(async () => {
    const done = (r) => new Promise((ok, fail) => { r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
    const db = await done(indexedDB.open('bertbench'));
    const items = db.transaction('items').objectStore('items');
    const [keys, values] = [await done(items.getAllKeys()), await done(items.getAll())];
    const out = [];
    for (let i = 0; i < keys.length; i++) {
      const parts = await done(db.transaction('blobs').objectStore('blobs').get(keys[i])) ?? [];
      const bytes = await Promise.all(parts.map(async (p) => Array.from(new Uint8Array(p instanceof Blob ? await p.arrayBuffer() : p))));
      out.push({ key: keys[i], value: values[i], parts: bytes });
    }
    db.close();
    return out;
  });
}

/** The bundle's name hashes the build; the commit is where dist/ was built from, if it is current. */
async function buildName() {
  const bundle = (await readdir(join(ROOT, 'dist'))).find((f) => /^bertbench-app-.*\.js$/.test(f));
  return `${bundle} (tree at ${execSync('git rev-parse --short HEAD', { cwd: ROOT }).toString().trim()})`;
}

/** A full fine-tuning run of bert-tiny (batch 4, 40 epochs) interrupted after its first
 * checkpoint: the checkpoint item's JSON and its first part (the run's state) to checkpoint.json. */
async function recordCheckpoint(page) {
  await page.selectOption('#model-select', 'bert-tiny');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('bert-tiny'), null, { timeout: 2 * MINUTE });
  await startLongRun(page, csv());
  await page.getByTestId('checkpoint-note').waitFor({ timeout: 5 * MINUTE });
  await page.getByTestId('train-pause').click();
  // The item, its first part as text and every part's size (the weights' bytes stay in the page).
  const item = await page.evaluate(async () => {
    const done = (r) => new Promise((ok, fail) => { r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
    const db = await done(indexedDB.open('bertbench'));
    const value = await done(db.transaction('items').objectStore('items').get('checkpoint'));
    const parts = await done(db.transaction('blobs').objectStore('blobs').get('checkpoint')) ?? [];
    const bytes = (p) => (p instanceof Blob ? p.arrayBuffer() : p);
    const state = parts.length ? new TextDecoder().decode(await bytes(parts[0])) : null;
    const sizes = await Promise.all(parts.map(async (p) => (await bytes(p)).byteLength));
    db.close();
    return value && { value, state, sizes };
  });
  if (!item) throw new Error('no checkpoint was saved');
  const meta = JSON.parse(JSON.parse(item.value).json);
  const out = { build: await buildName(), recorded: new Date().toISOString().slice(0, 10), item: item.value, files: meta.files, sizes: item.sizes, state: item.state };
  await writeFile(join(OUT, 'checkpoint.json'), JSON.stringify(out, null, 1) + '\n');
  console.log(`checkpoint at step ${meta.step} of ${meta.total_steps}: ${meta.files.join(', ')} (${out.sizes.join(', ')} bytes)`);
}
