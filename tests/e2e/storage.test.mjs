// What the page keeps in the browser, on a normal (persistent) profile as a classroom laptop has
// it: several runs trained one after another store what changed (a head-only run its head, a few
// kilobytes, on the base model by name; a full fine-tuning run its whole classifier), no scratch
// file is left in the origin private file system, the usage shown is what the listed items hold,
// a head-only run opens again and predicts as it did, and "Delete everything saved" (confirmed)
// leaves nothing behind.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { serve, screenshot, CHROMIUM_FLAGS } from './harness.mjs';
import { MINUTE, openStudio, exampleData, recipe, train, predict } from './studio_helpers.mjs';

let server, profile, context;
before(async () => {
  server = await serve();
  profile = await mkdtemp(join(tmpdir(), 'bertbench-storage-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_FLAGS, viewport: { width: 1200, height: 900 },
  });
});
after(async () => {
  await context?.close();
  await server?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

/** What the origin stores: the saved items (id, kind, size) as IndexedDB holds them, and the
 * files left in the origin private file system. */
const stored = (page) => page.evaluate(async () => {
  const db = await new Promise((resolve, reject) => {
    const r = indexedDB.open('bertbench');
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
  const items = await new Promise((resolve) => {
    const r = db.transaction('items').objectStore('items').getAll();
    r.onsuccess = () => resolve(r.result.map((s) => JSON.parse(s)));
  });
  db.close();
  const files = [];
  const walk = async (dir, path) => {
    for await (const [name, handle] of dir.entries()) {
      if (handle.kind === 'directory') await walk(handle, `${path}${name}/`);
      else files.push(`${path}${name} (${(await handle.getFile()).size} bytes)`);
    }
  };
  await walk(await navigator.storage.getDirectory(), '');
  return { items: items.map((i) => ({ id: i.id, kind: i.kind, size: i.size })), files };
});

test('several runs store what changed; no scratch file stays; the usage shown is what the items hold; delete everything', { timeout: 20 * MINUTE }, async () => {
  const page = context.pages()[0] ?? await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await openStudio(page, server.origin);
  await exampleData(page);
  // Three head-only runs and a full fine-tuning run, one after another.
  for (let i = 0; i < 3; i++) {
    await recipe(page, { mode: 'head', 'head-epochs': 2 + i });
    await train(page, `storage-head-${i}`);
  }
  const headOnly = await predict(page, 'a warm and wonderful film');
  await recipe(page, { mode: 'full', epochs: 1 });
  await train(page, 'storage-full');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=saved-item][data-kind=run]').length === 4, null, { timeout: 2 * MINUTE });

  const { items, files } = await stored(page);
  const runs = items.filter((i) => i.kind === 'Run');
  assert.equal(runs.length, 4);
  const [small, big] = [runs.filter((r) => r.size < 64 * 1024), runs.filter((r) => r.size >= 64 * 1024)];
  assert.equal(small.length, 3, `the head-only runs keep their head alone: ${JSON.stringify(runs)}`);
  assert.equal(big.length, 1, 'the full fine-tuning run keeps its whole classifier');
  assert.ok(big[0].size > 100 * small[0].size, JSON.stringify(runs));
  assert.deepEqual(files.filter((f) => f.startsWith('scratch/')), [], 'no scratch file is left once the writes are done');

  // The usage shown is the sum of what the list holds.
  const listed = items.filter((i) => ['Model', 'Dataset', 'Run', 'LabModel', 'Checkpoint'].includes(i.kind)).reduce((s, i) => s + i.size, 0);
  await page.waitForFunction((n) => document.querySelector('[data-testid=storage-usage]')?.dataset.bytes === String(n), listed, { timeout: MINUTE });
  const count = items.filter((i) => ['Model', 'Dataset', 'Run', 'LabModel'].includes(i.kind)).length;
  assert.match(await page.getByTestId('storage-usage').textContent(), new RegExp(`^Kept here: .* in ${count} items\\.$`));

  // The last head-only run (4 epochs) comes back on its base model and predicts as it did.
  const headRun = page.locator('[data-testid=saved-item][data-kind=run]').filter({ hasText: /4 epochs/ });
  assert.equal(await headRun.count(), 1);
  await headRun.getByTestId('open-saved').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=studio-notice]')?.textContent.startsWith('Opened the saved run'), null, { timeout: MINUTE });
  assert.match(await page.getByTestId('classifier-info').textContent(), /the saved run/);
  const reopened = await predict(page, 'a warm and wonderful film');
  assert.deepEqual(reopened.labels, headOnly.labels);
  for (const [k, p] of reopened.probs.entries()) assert.ok(Math.abs(p - headOnly.probs[k]) < 1e-5, `${reopened.probs} vs ${headOnly.probs}`);
  await screenshot(page, 'storage-before-delete');

  // Delete everything, confirmed.
  page.once('dialog', (d) => d.accept());
  await page.getByTestId('delete-all').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=saved-item]').length === 0, null, { timeout: MINUTE });
  const after = await stored(page);
  assert.deepEqual(after.items.filter((i) => i.kind !== 'Settings'), [], 'nothing saved is left but the settings written since');
  assert.deepEqual(after.files.filter((f) => f.startsWith('scratch/')), []);
  assert.match(await page.getByTestId('storage-usage').textContent(), /^Nothing is kept here\.$/);
  assert.deepEqual(problems, []);
});
