// What an earlier build saved in a user's browser still opens in this one: the items recorded by
// `record_saved_items.mjs` (tests/fixtures/saved-items: a training file, the studio's and the
// lab's settings, a finished head-only run, a lab model) are written into a fresh profile's
// IndexedDB as that build left them; the page lists them, restores the settings, opens the run
// with its curves and predicts what that build showed, and opens the lab model, which fills the
// blank as it did.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, screenshot, ROOT } from './harness.mjs';

const MINUTE = 60_000;
const FIXTURE = join(ROOT, 'tests', 'fixtures', 'saved-items');
let server, chrome;

before(async () => {
  server = await serve();
  chrome = await launch({ webgpu: false });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

test("an earlier build's saved run, lab model and settings open, and give what that build showed", { timeout: 8 * MINUTE }, async () => {
  const { page } = chrome;
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  const { shown, items, build } = JSON.parse(await readFile(join(FIXTURE, 'items.json'), 'utf8'));
  const records = [];
  for (const item of items) {
    const parts = [];
    for (const file of item.parts) parts.push(Array.from(await readFile(join(FIXTURE, file))));
    records.push({ key: item.key, value: item.value, parts });
  }

  await page.goto(server.origin + '/#studio');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  // The page has made its database; write the earlier build's items into it as it stored them.
  await page.evaluate(async (records) => {
    const done = (r) => new Promise((ok, fail) => { r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
    const db = await done(indexedDB.open('bertbench'));
    const tx = db.transaction(['items', 'blobs'], 'readwrite');
    for (const { key, value, parts } of records) {
      tx.objectStore('items').put(value, key);
      tx.objectStore('blobs').put(parts.map((p) => new Blob([new Uint8Array(p)])), key);
    }
    await new Promise((ok, fail) => { tx.oncomplete = ok; tx.onerror = () => fail(tx.error); });
    db.close();
  }, records);
  await page.reload();
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });

  // The studio: the training file and its settings come back, the run is listed and opens.
  await page.getByTestId('validation-report').waitFor({ timeout: MINUTE });
  assert.equal(await page.getByTestId('usable-rows').textContent(), '12', `the training file saved by ${build}`);
  assert.equal(await page.locator('[data-testid=train-mode]').inputValue(), 'head');
  const run = page.locator('[data-testid=saved-item][data-kind=run]');
  await run.waitFor({ timeout: MINUTE });
  await run.getByTestId('open-saved').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=classifier-info]')?.textContent.includes('positive'), null, { timeout: 2 * MINUTE });
  assert.ok(await page.locator('[data-testid=loss-chart] polyline').count() >= 1, 'the saved curves are drawn');
  await page.getByTestId('predict-text').fill(shown.sentence);
  await page.getByTestId('predict-button').click();
  await page.getByTestId('prob').first().waitFor({ timeout: MINUTE });
  const probs = await page.getByTestId('prob').evaluateAll((els) => els.map((e) => Number(e.dataset.value)));
  assert.equal(probs.length, shown.probs.length);
  probs.forEach((p, i) => assert.ok(Math.abs(p - shown.probs[i]) < 1e-4, `${probs} against ${shown.probs} shown by ${build}`));
  await screenshot(page, 'saved-items-run');

  // The lab: its settings, and the model, which fills the blank as before.
  await page.getByTestId('tab-lab').click();
  const lab = page.getByTestId('lab-saved-item').first();
  await lab.waitFor({ timeout: MINUTE });
  assert.equal(await page.locator('[data-testid=lab-vocab-choice]').inputValue(), '1000');
  await lab.getByTestId('lab-open-saved').click();
  await page.getByTestId('lab-fill').waitFor({ timeout: MINUTE });
  await page.getByTestId('lab-fill-input').fill(shown.fill);
  await page.getByTestId('lab-fill').click();
  await page.getByTestId('lab-fill-result').waitFor({ timeout: MINUTE });
  assert.equal((await page.getByTestId('lab-fill-result').textContent()).trim(), shown.fills);
  await screenshot(page, 'saved-items-lab');
  assert.deepEqual(problems, []);
});
