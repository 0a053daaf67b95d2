// Saved work survives the tab: a training file, the settings, finished runs (with their
// classifier) and the checkpoint of a run in progress are in IndexedDB. The test closes the
// browser in the middle of a run, starts it again on the same profile, resumes from the
// checkpoint and finishes, with the classifier the uninterrupted run makes; then it opens the saved run, deletes it, and fills the storage quota
// to see a clean "not saved" with nothing half-written. Every request of the session stays on
// the page's origin.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { serve, launch, offOriginRequests, screenshot, startLongRun, CHROMIUM_FLAGS } from './harness.mjs';

const MINUTE = 60_000;
let server, profile;
// Every browser opened, closed at the end even when a test fails half-way.
const contexts = [];
const requested = [];

const WORDS = {
  positive: ['a joyful story', 'wonderful acting', 'I loved it', 'kind and helpful staff', 'bright and warm', 'pure fun',
    'a beautiful view', 'an excellent book', 'great value', 'a lovely afternoon', 'tasty food', 'an uplifting ending'],
  negative: ['a dull story', 'wooden acting', 'I hated it', 'rude and slow staff', 'grey and cold', 'a chore',
    'a ruined view', 'a dreadful book', 'overpriced', 'a miserable afternoon', 'cold food', 'a depressing ending'],
};
const csv = () => ['text,label', ...WORDS.positive.map((t) => `${t},positive`), ...WORDS.negative.map((t) => `${t},negative`)].join('\n') + '\n';

async function open(dir) {
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_FLAGS, viewport: { width: 1200, height: 900 },
  });
  contexts.push(context);
  const page = context.pages()[0] ?? await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  context.on('request', (r) => requested.push(r.url()));
  await page.goto(server.origin + '/#studio');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  return { context, page, problems };
}

/** Waits for `testid`; on a timeout, fails with what the studio shows instead. */
async function waitFor(page, testid, timeout, problems = []) {
  try {
    await page.getByTestId(testid).first().waitFor({ timeout });
  } catch (e) {
    await screenshot(page, `persistence-failed-${testid}`);
    const shown = await page.locator('[data-testid=studio-train], [data-testid=studio-results], [data-testid=saved-panel]').allTextContents();
    throw new Error(`${testid} did not appear: ${shown.join(' | ')} ${problems.join('; ')}`);
  }
}

/**
 * The files left in the origin private file system's scratch folder, where the training worker
 * writes checkpoints and classifiers before IndexedDB stores them (`null`: no such folder, so
 * nothing was written that way). Each is removed a moment after its save: wait for that.
 */
async function scratchLeft(page) {
  const names = () => page.evaluate(() => window.wasmBindings.scratch_files());
  for (let i = 0; i < 40 && (await names())?.length; i++) await page.waitForTimeout(250);
  return names();
}

/** Opens the training file, sets the run (full fine-tuning, batch 4, 40 epochs) and starts it. */
const startRun = (page) => startLongRun(page, csv());

/** The current classifier's probabilities for `text`, at full precision. */
async function predict(page, text) {
  await page.getByTestId('predict-text').fill(text);
  await page.getByTestId('predict-button').click();
  await page.getByTestId('prob').first().waitFor({ timeout: MINUTE });
  return page.getByTestId('prob').evaluateAll((els) => els.map((e) => Number(e.dataset.value)));
}

async function useModel(page, name) {
  await page.selectOption('#model-select', name);
  await page.waitForFunction((n) => document.querySelector('[data-testid=model-facts]')?.textContent.includes(n), name, { timeout: 2 * MINUTE });
}

before(async () => {
  server = await serve();
  profile = await mkdtemp(join(tmpdir(), 'bertbench-profile-'));
});
after(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await server?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

test('a run interrupted by closing the browser resumes from its checkpoint; settings and data come back', { timeout: 20 * MINUTE }, async () => {
  let { context, page, problems } = await open(profile);
  await useModel(page, 'bert-tiny');
  await startRun(page);
  // The first epoch's end writes a checkpoint.
  await page.getByTestId('checkpoint-note').waitFor({ timeout: 5 * MINUTE });
  const note = await page.getByTestId('checkpoint-note').textContent();
  const saved = Number(/step (\d+)/.exec(note)[1]);
  assert.ok(saved > 0, note);
  await screenshot(page, 'persistence-checkpoint');
  assert.deepEqual(problems, []);
  // Gone mid-run: the tab and its worker with it.
  await context.close();

  ({ context, page, problems } = await open(profile));
  const offer = page.getByTestId('resume-offer');
  await offer.waitFor({ timeout: MINUTE });
  const text = await offer.textContent();
  assert.match(text, /bert-tiny/);
  const [, step, total] = /step (\d+) of (\d+)/.exec(text).map(Number);
  assert.ok(step >= saved && step < total, text);
  // Settings and the training file came back.
  assert.equal(await page.locator('[data-testid=train-mode]').inputValue(), 'full');
  assert.equal(await page.getByTestId('epochs').inputValue(), '40');
  await page.getByTestId('validation-report').waitFor({ timeout: MINUTE });
  assert.equal(await page.getByTestId('usable-rows').textContent(), String(WORDS.positive.length * 2));
  await screenshot(page, 'persistence-resume-offer');

  // The page reopens with the model chosen before the browser closed.
  assert.match(await page.getByTestId('model-facts').textContent(), /bert-tiny/, 'the chosen model is back');
  // On another model, the checkpoint says it needs bert-tiny.
  await useModel(page, 'all-MiniLM-L6-v2');
  await page.getByTestId('resume-button').click();
  assert.match(await page.getByTestId('resume-error').textContent(), /bert-tiny/);
  await useModel(page, 'bert-tiny');
  await page.getByTestId('resume-button').click();
  await waitFor(page, 'train-progress', MINUTE, problems);
  assert.match(await page.getByTestId('checkpoint-note').textContent(), new RegExp(`Resumed on the CPU from the checkpoint at step ${step} of ${total}`));
  await waitFor(page, 'train-done', 10 * MINUTE, problems);
  const done = await page.getByTestId('train-done').textContent();
  assert.match(done, new RegExp(`after ${total} steps`), done);
  assert.equal(await page.getByTestId('resume-offer').count(), 0);
  // The run is saved with its classifier.
  await page.waitForFunction(() => document.querySelector('[data-testid=saved-item][data-kind=run]'), null, { timeout: 2 * MINUTE });
  assert.match(await page.getByTestId('storage-usage').textContent(), /^Kept here: [\d.]+ [kMG]B in \d+ items?\./);
  await page.waitForFunction(() => /^The browser counts [\d.]+ [kMG]?B for this page/.test(document.querySelector('[data-testid=storage-browser]')?.textContent ?? ''), null, { timeout: MINUTE });
  // The checkpoints and the classifier went through scratch files (the tab never held their
  // bytes), and none outlived its save, nor the first session's, closed mid-run.
  assert.deepEqual(await scratchLeft(page), [], 'no scratch file outlives its save');
  await screenshot(page, 'persistence-finished');
  const resumed = await predict(page, 'a joyful story');
  assert.deepEqual(problems, []);
  await context.close();

  // The checkpoint kept AdamW's moments too, so the resumed run is the run that was never
  // interrupted: the same run in a fresh profile, straight through, ends with the same classifier.
  const fresh = await mkdtemp(join(tmpdir(), 'bertbench-profile-'));
  try {
    ({ context, page, problems } = await open(fresh));
    await useModel(page, 'bert-tiny');
    await startRun(page);
    await waitFor(page, 'train-done', 10 * MINUTE, problems);
    const straight = await predict(page, 'a joyful story');
    assert.ok(Math.abs(straight[0] - resumed[0]) < 1e-5, `resumed run ${resumed}, uninterrupted run ${straight}`);
    assert.deepEqual(problems, []);
    await context.close();
  } finally {
    await rm(fresh, { recursive: true, force: true });
  }
});

test('after a restart: the saved run opens with its classifier, and a deleted one stays deleted', { timeout: 10 * MINUTE }, async () => {
  const { context, page, problems } = await open(profile);
  await page.getByTestId('run-row').first().waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('run-history').textContent(), /bert-tiny.*full fine-tuning.*resumed/s);
  const run = page.locator('[data-testid=saved-item][data-kind=run]');
  assert.equal(await run.count(), 1);
  // This version stores an item's bytes as Blobs (the tab never holds a second copy of them);
  // earlier ones stored Uint8Arrays. Rewrite the saved run the old way: it must open all the same.
  const stored = await page.evaluate(async () => {
    const done = (r) => new Promise((ok, fail) => { r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
    const db = await done(indexedDB.open('bertbench'));
    const items = db.transaction('items').objectStore('items');
    const [keys, values] = [await done(items.getAllKeys()), await done(items.getAll())];
    const id = keys[values.findIndex((v) => JSON.parse(v).kind === 'Run')];
    const parts = await done(db.transaction('blobs').objectStore('blobs').get(id));
    const old = await Promise.all(parts.map(async (p) => new Uint8Array(await p.arrayBuffer())));
    const tx = db.transaction('blobs', 'readwrite');
    tx.objectStore('blobs').put(old, id);
    await new Promise((ok, fail) => { tx.oncomplete = ok; tx.onerror = () => fail(tx.error); });
    db.close();
    return { kinds: parts.map((p) => p.constructor.name), bytes: old.map((a) => a.length) };
  });
  assert.deepEqual(stored.kinds, ['Blob'], 'a run is saved as one Blob (its zip)');
  assert.ok(stored.bytes[0] > 1_000_000, `the zip holds the classifier: ${stored.bytes[0]} bytes`);
  await run.getByTestId('open-saved').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=classifier-info]')?.textContent.includes('positive'), null, { timeout: 2 * MINUTE });
  assert.ok(await page.locator('[data-testid=loss-chart] polyline').count() >= 1, 'the saved curves are drawn');
  await page.getByTestId('predict-text').fill('a joyful story');
  await page.getByTestId('predict-button').click();
  await page.getByTestId('prob').first().waitFor({ timeout: MINUTE });
  const probs = await page.getByTestId('prob').evaluateAll((els) => els.map((e) => Number(e.dataset.value)));
  assert.ok(Math.abs(probs[0] + probs[1] - 1) < 1e-3, `${probs}`);

  await run.getByTestId('delete-saved').click();
  await page.waitForFunction(() => !document.querySelector('[data-testid=saved-item][data-kind=run]'), null, { timeout: MINUTE });
  await page.reload();
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  await page.getByTestId('saved-item').first().waitFor({ timeout: MINUTE });
  assert.equal(await page.locator('[data-testid=saved-item][data-kind=run]').count(), 0);
  assert.equal(await page.locator('[data-testid=saved-item][data-kind=dataset]').count(), 1);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a full storage quota: a clear message, nothing half-written, the work on the page kept', { timeout: 10 * MINUTE }, async () => {
  const chrome = await launch({ webgpu: false });
  try {
    const { page } = chrome;
    // 3 MB: room for a training file, not for a fully fine-tuned classifier (bert-tiny's weights
    // are larger; a head-only run keeps only its head, a few kB), nor for the offline copy of
    // the app. Set before the page loads, so its worker sees it too.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: server.origin, quotaSize: 3_000_000 });
    await page.goto(server.origin + '/#studio');
    await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
    await useModel(page, 'bert-tiny');
    await page.getByTestId('data-file').setInputFiles({ name: 'tiny.csv', mimeType: 'text/csv', buffer: Buffer.from(csv()) });
    await page.locator('[data-testid=saved-item][data-kind=dataset]').waitFor({ timeout: MINUTE });
    await page.selectOption('[data-testid=train-mode]', 'full');
    await page.locator('[data-testid=studio-train] details').first().evaluate((d) => { d.open = true; });
    await page.getByTestId('epochs').fill('1');
    await page.getByTestId('epochs').dispatchEvent('change');
    await page.getByTestId('train-start').click();
    await page.getByTestId('train-done').waitFor({ timeout: 5 * MINUTE });
    const error = page.getByTestId('storage-error');
    await waitFor(page, 'storage-error', 2 * MINUTE, chrome.problems);
    assert.match(await error.textContent(), /was not saved: this page's storage in the browser is full.*Nothing was half-written/s);
    assert.equal(await page.locator('[data-testid=saved-item][data-kind=run]').count(), 0);
    // Nothing of the failed write is left in the scratch folder either. (This browser's context
    // is off the record, where the worker keeps saves out of scratch files: see
    // `store::stores_copies`; the first test's on-disk profile uses them.)
    assert.deepEqual(await scratchLeft(page), [], 'no scratch file left by the failed save');
    // The classifier is still in the page: it predicts.
    await page.getByTestId('predict-text').fill('great value');
    await page.getByTestId('predict-button').click();
    await page.getByTestId('prob').first().waitFor({ timeout: MINUTE });
    await screenshot(page, 'persistence-quota');
    await page.reload();
    await page.getByTestId('saved-item').first().waitFor({ timeout: 5 * MINUTE });
    assert.equal(await page.locator('[data-testid=saved-item][data-kind=run]').count(), 0, 'no half-written run');
    assert.deepEqual(chrome.problems, []);
    requested.push(...chrome.requestedUrls);
  } finally {
    await chrome.browser.close();
  }
});

test('every request of these sessions (load, upload, train, save, reopen) went to the page\'s origin', () => {
  assert.ok(requested.length > 10, `${requested.length} requests recorded`);
  assert.deepEqual(offOriginRequests(requested, server.origin), []);
});
