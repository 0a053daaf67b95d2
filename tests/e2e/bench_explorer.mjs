// Times the explorer's heavier views (CPU fallback): attention maps, the embedding map on the
// built-in examples (embedding, PCA, t-SNE), the probe, and a long input's attention in the page
// and in the worker. Prints a table.
//   cargo xtask dist && node tests/e2e/bench_explorer.mjs
import { serve, launch } from './harness.mjs';

const MINUTE = 60_000;
const server = await serve();
const chrome = await launch({ webgpu: false });
const { page } = chrome;
const rows = [];
try {
  await page.goto(server.origin + '/#explore');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  await page.getByTestId('map-panel').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=map-point]').length === 16, null, { timeout: 5 * MINUTE });

  await page.getByTestId('sentence-a').fill('The teacher explained how BERT reads a sentence in both directions.');
  const tokens = await page.getByTestId('token').count();
  await page.getByTestId('attention-button').click();
  await page.waitForFunction(() => /computed in \d+ ms/.test(document.querySelector('[data-testid=attention-panel] p.small')?.textContent ?? ''));
  const attention = await page.locator('[data-testid=attention-panel] p.small').first().textContent();
  rows.push([`attention, all 6 layers × 12 heads, ${tokens} tokens (forward + read-back)`, `${attention.match(/computed in (\d+) ms/)[1]} ms`]);

  await page.selectOption('[data-testid=map-source]', 'dataset');
  await page.getByTestId('map-button').click();
  await page.waitForFunction(() => /Embedded 252 texts/.test(document.querySelector('[data-testid=map-panel]')?.textContent ?? ''), null, { timeout: 10 * MINUTE });
  const embedded = (await page.locator('[data-testid=map-panel] p.small.muted').allTextContents()).find((t) => t.includes('Embedded'));
  rows.push(['map: embed 252 built-in texts, all layers kept, + anisotropy/centroid curves', embedded.match(/in ([\d.]+) s/)[1] + ' s']);
  const caption = async () => page.getByTestId('map-caption').textContent();
  rows.push(['map: PCA of 252 × 384', (await caption()).match(/drawn in (\d+) ms/)[1] + ' ms']);
  await page.selectOption('[data-testid=map-method]', 'tsne');
  await page.waitForFunction(() => document.querySelector('[data-testid=map]')?.dataset.method === 't-SNE', null, { timeout: 5 * MINUTE });
  rows.push(['map: t-SNE of 252 points (PCA → 50, 750 epochs, Barnes-Hut θ=0.5)', (await caption()).match(/drawn in (\d+) ms/)[1] + ' ms']);

  await page.getByTestId('probe-button').click();
  await page.getByTestId('probe-summary').waitFor({ timeout: 10 * MINUTE });
  const probe = await page.getByTestId('probe-summary').textContent();
  rows.push(['probe: 252 texts embedded + 7 logistic-regression probes', probe.match(/([\d.]+) s\.$/)[1] + ' s']);
} finally {
  await chrome.browser.close();
  await server.close();
}

// A long input's attention map (every layer and head), in a page that is not isolated (the page
// computes, one thread) and in one that is (the worker computes, on every core): best of three.
const LONG = Array.from({ length: 30 }, (_, i) => `Line ${i + 1}: the river bank was quiet, but the bank downtown lent money.`).join(' ');
for (const isolated of [false, true]) {
  const s = await serve({ isolated });
  const c = await launch({ webgpu: false });
  try {
    await c.page.goto(s.origin + '/#explore');
    await c.page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
    await c.page.getByTestId('sentence-a').fill(LONG);
    const tokens = await c.page.getByTestId('token').count();
    let best = Infinity;
    let on = '';
    for (let i = 0; i < 3; i++) {
      await c.page.waitForFunction(() => !document.querySelector('[data-testid=attention-button]')?.disabled, null, { timeout: 5 * MINUTE });
      // The note changes when the new map is drawn (its time differs; a time equal to the last
      // one's to the millisecond is read after 30 s).
      const before = await c.page.evaluate(() => document.querySelector('[data-testid=attention-note]')?.textContent ?? '');
      await c.page.getByTestId('attention-button').click();
      await c.page.waitForFunction((b) => {
        const t = document.querySelector('[data-testid=attention-note]')?.textContent ?? '';
        return t !== b && /computed in/.test(t);
      }, before, { timeout: 30_000 }).catch(() => {});
      const note = await c.page.getByTestId('attention-note').textContent();
      best = Math.min(best, +note.match(/computed in (\d+) ms/)[1]);
      on = await c.page.getByTestId('attention-note').getAttribute('data-computed-on');
    }
    rows.push([`attention of a long input, ${tokens} tokens (${on}, best of 3)`, `${best} ms`]);
  } finally {
    await c.browser.close();
    await s.close();
  }
}
console.log('| explorer view (CPU fallback, Chromium) | time |');
console.log('|---|---|');
for (const [what, time] of rows) console.log(`| ${what} | ${time} |`);
