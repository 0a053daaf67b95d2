// Linked views in the explorer: a token selected in one view (the tokens panel by keyboard, a
// heatmap's row, a point of the map) is the selected token in every view: its attention row and
// column, its row of input parts, its point on the map with its nearest neighbours. And every
// chart and heatmap has its numbers behind a "Show the numbers" fold, equal to what it draws.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, screenshot } from './harness.mjs';

const MINUTE = 60_000;
const SENTENCE = 'The fisherman sat on the bank of the river.';
let server, chrome;

before(async () => {
  server = await serve();
  chrome = await launch({ webgpu: false });
  await chrome.page.goto(server.origin + '/#explore');
  await chrome.page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

const selectedPosition = (page) => page.evaluate(() =>
  [...document.querySelectorAll('[data-testid=tokens] [data-testid=token]')].findIndex((t) => t.getAttribute('aria-pressed') === 'true'));

test('a token selected in one view is selected in every view', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('sentence-a').fill(SENTENCE);
  const tokens = page.getByTestId('tokens').getByTestId('token');
  const pieces = await tokens.evaluateAll((ts) => ts.map((t) => t.querySelector('.piece').textContent));
  const bank = pieces.indexOf('bank');
  assert.ok(bank > 0, `“bank” is one piece (${pieces})`);
  await page.getByTestId('attention-button').click();
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=attention-heatmap] [data-testid=attention-row]').length === n, pieces.length, { timeout: 2 * MINUTE });

  // The tokens view, by keyboard: focus the token, Enter.
  await tokens.nth(bank).focus();
  await page.keyboard.press('Enter');
  assert.equal(await selectedPosition(page), bank);
  assert.match(await page.getByTestId('token-selected').textContent(), new RegExp(`“bank” at position ${bank}`));

  // Attention: its row and column outlined; the sentence names what it attends to most, as the row's weights say.
  await page.waitForFunction((p) => document.querySelector('[data-testid=attention-heatmap] [data-testid=attention-selection]')?.dataset.position === String(p), bank);
  const row = await page.locator(`[data-testid=attention-heatmap] [data-testid=attention-row][data-row="${bank}"] rect`).evaluateAll((rs) => rs.map((r) => +r.dataset.w));
  const top = row.indexOf(Math.max(...row));
  const said = await page.getByTestId('attention-selected').textContent();
  assert.ok(said.startsWith(`“bank” (position ${bank}) attends most to “${pieces[top]}”`), said);

  // Input parts: its row.
  await page.getByTestId('input-parts-button').click();
  await page.locator('[data-testid=input-parts] tr').nth(pieces.length).waitFor({ timeout: MINUTE });
  const selectedRows = await page.locator('[data-testid=input-parts] tr').evaluateAll((trs) => trs.slice(1).map((tr, i) => tr.classList.contains('selected') ? i : -1).filter((i) => i >= 0));
  assert.deepEqual(selectedRows, [bank]);

  // The map: sentence A's tokens, the selected one its selected point with its neighbours. The
  // panel maps its own sentences the first time it is on screen, and its buttons wait while it
  // does: scrolled to, it is let finish first (else the click can land while it has just begun).
  await page.getByTestId('map-panel').scrollIntoViewIfNeeded();
  await page.getByTestId('map-note').waitFor({ timeout: 3 * MINUTE });
  await page.getByTestId('map-sentence-a').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=map-kind]').value === 'tokens');
  const neighbours = page.getByTestId('map-neighbours');
  await neighbours.waitFor({ timeout: 3 * MINUTE });
  assert.equal(await neighbours.locator('p mark').first().textContent(), 'bank', 'the selected point is “bank” of sentence A');
  assert.ok(await neighbours.getByTestId('neighbour').count() >= 1);
  await screenshot(page, 'linked-views-map');

  // A point of the map picks the token everywhere: the point of "river" in sentence A.
  const river = pieces.indexOf('river');
  const points = page.getByTestId('map-point');
  const count = await points.count();
  let picked = false;
  for (let i = 0; i < count && !picked; i++) {
    await points.nth(i).dispatchEvent('click');
    const mark = await neighbours.locator('p').first().evaluate((p) => [p.textContent, p.querySelector('mark')?.textContent]);
    picked = mark[0] === SENTENCE && mark[1] === 'river';
  }
  assert.ok(picked, 'the map has a point for “river” of sentence A');
  await page.waitForFunction((p) => document.querySelector('[data-testid=attention-heatmap] [data-testid=attention-selection]')?.dataset.position === String(p), river);
  assert.equal(await selectedPosition(page), river);

  // A heatmap row's token label selects too, and selecting the selected token clears it.
  await tokens.nth(river).focus();
  await page.keyboard.press(' ');
  assert.equal(await selectedPosition(page), -1);
  assert.equal(await page.locator('[data-testid=attention-heatmap] [data-testid=attention-selection]').getAttribute('data-position'), '');
  assert.deepEqual(chrome.problems, []);
});

test('charts and heatmaps show their numbers in a table', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  // The map's anisotropy chart (drawn by the test above): its table holds the values it plots.
  const chart = page.getByTestId('map-anisotropy');
  await chart.waitFor({ timeout: 3 * MINUTE });
  const plotted = JSON.parse(await chart.getAttribute('data-values'));
  await chart.locator('details.chart-data summary').click();
  const table = await chart.locator('details.chart-data table tr').evaluateAll((trs) => trs.slice(1).map((tr) => [...tr.cells].slice(1).map((c) => +c.textContent)));
  assert.equal(table.length, plotted[0].length, 'one row per layer');
  plotted.forEach((series, s) => series.forEach((y, l) => assert.ok(Math.abs(table[l][s] - y) < 1e-4, `series ${s}, layer ${l}: ${table[l][s]} vs ${y}`)));

  // The attention heatmap's numbers: built when opened, the same weights as the cells.
  const heatmap = page.getByTestId('attention-heatmap');
  const rows = await heatmap.locator('[data-testid=attention-row]').evaluateAll((gs) => gs.map((g) => [...g.querySelectorAll('rect')].map((r) => +r.dataset.w)));
  const fold = page.locator('[data-testid=attention-panel] details.chart-data').first();
  assert.equal(await fold.locator('table').count(), 0, 'not built before it is opened');
  await fold.locator('summary').click();
  await fold.locator('table').waitFor();
  const shown = await fold.locator('table tr').evaluateAll((trs) => trs.slice(1).map((tr) => [...tr.cells].slice(1).map((c) => +c.textContent)));
  assert.equal(shown.length, rows.length);
  rows.forEach((r, i) => r.forEach((w, j) => assert.ok(Math.abs(shown[i][j] - w) <= 5e-4, `${i}→${j}`)));
  assert.deepEqual(chrome.problems, []);
});
