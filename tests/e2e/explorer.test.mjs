// The explorer's views on the default model, on the CPU: attention maps, the embedding map,
// word senses, probes by layer, input parts, and the Embedding Projector export.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, offOriginRequests, screenshot, ARTIFACTS } from './harness.mjs';

const MINUTE = 60_000;
let server, chrome;

before(async () => {
  server = await serve();
  chrome = await launch({ webgpu: false });
  await chrome.page.goto(server.origin + '/#explore');
  await chrome.page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

/** Rows of a rendered heatmap: one array of weights per attending token. */
async function heatmapRows(page, testid) {
  return page.locator(`[data-testid=${testid}] [data-testid=attention-row]`).evaluateAll((gs) =>
    gs.map((g) => [...g.querySelectorAll('rect')].map((r) => Number(r.dataset.w))));
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);

test('attention maps: every row sums to 1, heads differ, the causal mask hides the future', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('sentence-a').fill('The river bank was muddy after the rain.');
  const tokens = await page.getByTestId('token').count();
  await page.getByTestId('attention-button').click();
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=attention-heatmap] [data-testid=attention-row]').length === n,
    tokens, { timeout: 2 * MINUTE });
  const mean = await heatmapRows(page, 'attention-heatmap');
  assert.equal(mean.length, tokens);
  for (const row of mean) {
    assert.equal(row.length, tokens);
    assert.ok(Math.abs(sum(row) - 1) <= 1e-3, `row sums to ${sum(row)}`);
    assert.ok(row.every((w) => w >= 0 && w <= 1));
  }
  // One head is not the average of all twelve.
  await page.selectOption('[data-testid=attention-head]', '2');
  await page.waitForFunction(() => document.querySelector('[data-testid=attention-panel] p.small')?.textContent.includes('head 3'));
  const head = await heatmapRows(page, 'attention-heatmap');
  const diff = Math.max(...head.flatMap((r, i) => r.map((w, j) => Math.abs(w - mean[i][j]))));
  assert.ok(diff > 0.01, `head 3 equals the mean (max diff ${diff})`);
  for (const row of head) assert.ok(Math.abs(sum(row) - 1) <= 1e-3);
  assert.equal(await page.locator('[data-testid=attention-heads] button').count(), 12);

  await page.getByTestId('attention-causal-toggle').check();
  await page.getByTestId('attention-causal').waitFor({ timeout: 2 * MINUTE });
  const causal = await heatmapRows(page, 'attention-causal');
  assert.equal(causal.length, tokens);
  causal.forEach((row, i) => {
    assert.ok(Math.abs(sum(row) - 1) <= 1e-3, `causal row ${i} sums to ${sum(row)}`);
    assert.ok(row.slice(i + 1).every((w) => w === 0), `causal row ${i} sees the future: ${row}`);
  });
  assert.equal(causal[0][0], 1, 'the first token can only see itself');
  // The lines view draws one line per weight of at least 0.02.
  await page.selectOption('[data-testid=attention-view]', 'lines');
  const strong = head.flat().filter((w) => w >= 0.02).length;
  assert.equal(await page.locator('[data-testid=attention-lines] line').count(), strong);
  await page.selectOption('[data-testid=attention-view]', 'heatmap');
  await page.getByTestId('attention-panel').screenshot({ path: join(ARTIFACTS, 'attention.png') });
});

test('the embedding map draws every sentence, shows neighbours, and separates topics', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  const points = page.getByTestId('map-point');
  // The map embeds its texts once it is on screen, not while the page is still loading.
  await page.getByTestId('map-panel').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=map-point]').length === 16, null, { timeout: 3 * MINUTE });
  assert.match(await page.getByTestId('map-caption').textContent(), /16 points .* at layer 6 · PCA/);
  await points.nth(0).hover();
  assert.match(await page.getByTestId('map-hover').textContent(), /cat curled up/);
  await points.nth(4).click();
  const rows = page.locator('[data-testid=map-neighbours] [data-testid=neighbour]');
  await rows.first().waitFor();
  assert.equal(await rows.count(), 8);
  const neighbours = await rows.evaluateAll((trs) => trs.map((tr) => ({
    cos: Number(tr.children[0].textContent), label: tr.children[1].textContent })));
  for (let i = 1; i < neighbours.length; i++) assert.ok(neighbours[i - 1].cos >= neighbours[i].cos);
  // The closest sentences to "The stock market fell sharply today." are the other finance ones.
  assert.deepEqual(neighbours.slice(0, 3).map((n) => n.label), ['finance', 'finance', 'finance']);

  await page.selectOption('[data-testid=map-method]', 'tsne');
  await page.waitForFunction(() => document.querySelector('[data-testid=map]')?.dataset.method === 't-SNE', null, { timeout: MINUTE });
  assert.equal(await points.count(), 16);
  await page.selectOption('[data-testid=map-method]', 'pca');

  // Export for the Embedding Projector: 16 rows of 384 numbers, and matching metadata.
  const downloads = [];
  page.on('download', (d) => downloads.push(d));
  await page.getByTestId('map-export').click();
  await page.waitForFunction(() => true);
  for (let i = 0; i < 50 && downloads.length < 2; i++) await page.waitForTimeout(100);
  assert.equal(downloads.length, 2);
  const files = Object.fromEntries(await Promise.all(downloads.map(async (d) =>
    [d.suggestedFilename(), await readFile(await d.path(), 'utf8')])));
  const vectors = files['vectors-layer6.tsv'].trimEnd().split('\n');
  assert.equal(vectors.length, 16);
  assert.ok(vectors.every((l) => l.split('\t').length === 384 && l.split('\t').every((x) => Number.isFinite(Number(x)))));
  const meta = files['metadata-layer6.tsv'].trimEnd().split('\n');
  assert.equal(meta[0], 'text\tlabel\ttoken');
  assert.equal(meta.length, 17);
});

test('word senses: “bank” splits by meaning in context, not in the input embedding', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  await page.selectOption('[data-testid=map-source]', 'sense-0');
  await page.getByTestId('map-button').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=map-caption]')?.textContent.includes('the focus word'), null, { timeout: 3 * MINUTE });
  assert.equal(await page.getByTestId('map-point').count(), 16);
  const hint = await page.locator('[data-testid=map-panel] .grid2 p.hint').nth(1).textContent();
  const [, layer0, best] = hint.match(/scores (\d+)%.*at (\d+)%/).map(Number);
  assert.ok(best >= 90, `best layer only ${best}%`);
  assert.ok(layer0 < best, `layer 0 ${layer0}% vs best ${best}%`);
  // Anisotropy: raw contextual vectors point the same way far more than z-scored ones.
  await page.getByTestId('map-layer').fill('0');
  await page.waitForFunction(() => document.querySelector('[data-testid=map]')?.dataset.layer === '0');
  // In layer 0 "bank" at the same position in two sentences is one vector: the points coincide.
  assert.match(await page.getByTestId('map-caption').textContent(), /points lie exactly on others/);
  await page.getByTestId('map-panel').screenshot({ path: join(ARTIFACTS, 'map-bank.png') });
  // Bad input: a word that is not in the sentences says so and keeps the map.
  await page.selectOption('[data-testid=map-source]', 'typed');
  await page.selectOption('[data-testid=map-kind]', 'word');
  await page.getByTestId('map-word').fill('zebra');
  await page.getByTestId('map-button').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=map-message]')?.textContent.includes('zebra'), null, { timeout: MINUTE });
  assert.equal(await page.getByTestId('map-point').count(), 16);
});

test('translations: where each nearest neighbour lies is counted from the vectors the map exports', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  await page.selectOption('[data-testid=map-source]', 'translations');
  await page.selectOption('[data-testid=map-kind]', 'mean');
  await page.getByTestId('map-button').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=map-point]').length === 36 && document.querySelector('[data-testid=map-translations]'), null, { timeout: 3 * MINUTE });
  for (const layer of ['6', '0']) {
    await page.getByTestId('map-layer').fill(layer);
    await page.waitForFunction((l) => document.querySelector('[data-testid=map-translations]')?.textContent.startsWith(`At layer ${l},`), layer, { timeout: MINUTE });
    const note = await page.getByTestId('map-translations').textContent();
    const [translation, same, other] = note.match(/for (\d+) of 36 sentences.*; for (\d+) it is.*; for (\d+) neither/).slice(1).map(Number);
    // The same counts from the exported vectors (sentence i says meaning i / 4 in language i % 4).
    const downloads = [];
    const listen = (d) => downloads.push(d);
    page.on('download', listen);
    await page.getByTestId('map-export').click();
    for (let i = 0; i < 50 && downloads.length < 2; i++) await page.waitForTimeout(100);
    page.off('download', listen);
    const tsv = await readFile(await downloads.find((d) => d.suggestedFilename().startsWith('vectors')).path(), 'utf8');
    const vectors = tsv.trimEnd().split('\n').map((l) => l.split('\t').map(Number));
    assert.equal(vectors.length, 36);
    const cos = (a, b) => sum(a.map((x, k) => x * b[k])) / Math.sqrt(sum(a.map((x) => x * x)) * sum(b.map((x) => x * x)));
    const counts = [0, 0, 0];
    vectors.forEach((v, i) => {
      let best = -1, bestCos = -Infinity;
      vectors.forEach((w, j) => { if (j !== i && cos(v, w) > bestCos) { bestCos = cos(v, w); best = j; } });
      counts[Math.floor(i / 4) === Math.floor(best / 4) ? 0 : i % 4 === best % 4 ? 1 : 2] += 1;
    });
    assert.deepEqual([translation, same, other], counts, `layer ${layer}: ${note}`);
    // The conclusion follows the counts: why a model groups by language (monolingual, or raw
    // XLM-RoBERTa vectors) is said only where language wins.
    assert.equal(/XLM-RoBERTa/.test(note), translation <= same, note);
  }
  await page.getByTestId('map-panel').screenshot({ path: join(ARTIFACTS, 'map-translations.png') });
  await page.selectOption('[data-testid=map-source]', 'typed');
});

test('a linear probe reads sentiment from the later layers', { timeout: 8 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('probe-button').click();
  await page.getByTestId('probe-summary').waitFor({ timeout: 7 * MINUTE });
  const cells = await page.locator('[data-testid=probe-table] tr:nth-child(2) td').allTextContents();
  assert.equal(cells.length, 7);
  const acc = cells.map((c) => Number(c.replace('%', '')));
  const summary = await page.getByTestId('probe-summary').textContent();
  const majority = Number(summary.match(/majority baseline (\d+)%/)[1]);
  assert.ok(acc[6] >= majority + 20, `last layer ${acc[6]}% vs majority ${majority}%`);
});

test('input parts: one segment vector for a single sentence, sums normalised', { timeout: 2 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('sentence-a').fill('Tokenization splits unbelievable words.');
  const tokens = await page.getByTestId('token').count();
  await page.getByTestId('input-parts-button').click();
  await page.locator('[data-testid=input-parts] tr').nth(tokens).waitFor({ timeout: MINUTE });
  const norms = await page.locator('[data-testid=input-parts] tr').evaluateAll((trs) =>
    trs.slice(1).map((tr) => tr.children[3].textContent.split(' · ').map(Number)));
  assert.equal(norms.length, tokens);
  // Every token of one sentence gets the same segment embedding; positions differ.
  assert.ok(norms.every((n) => n[1] === norms[0][1]));
  assert.ok(new Set(norms.map((n) => n[2])).size > 1);
});

test('static vectors ignore context: the two “bank” sentences look alike', { timeout: 2 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('similarity-static-toggle').check();
  await page.getByTestId('similarity-button').click();
  await page.getByTestId('similarity-static').waitFor({ timeout: MINUTE });
  const read = (id) => page.locator(`[data-testid=${id}] tr`).evaluateAll((trs) =>
    trs.slice(1).map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent))));
  const statics = await read('similarity-static');
  const contextual = await read('similarity-matrix');
  statics.forEach((row, i) => assert.ok(Math.abs(row[i] - 1) < 0.01));
  // Sentences 5 and 6 share the word "bank" and little else.
  assert.ok(statics[4][5] > contextual[4][5], `static ${statics[4][5]} vs contextual ${contextual[4][5]}`);
  await screenshot(page, 'explorer');
  assert.deepEqual(chrome.problems, []);
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
});
