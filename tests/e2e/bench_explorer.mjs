// Times the explorer's heavier views in the page (CPU fallback): attention maps, the embedding
// map on the built-in examples (embedding, PCA, t-SNE), and the probe. Prints a table.
//   cargo xtask dist && node tests/e2e/bench_explorer.mjs
import { serve, launch } from './harness.mjs';

const MINUTE = 60_000;
const server = await serve();
const chrome = await launch({ webgpu: false });
const { page } = chrome;
const rows = [];
try {
  await page.goto(server.origin + '/');
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
console.log('| explorer view (CPU fallback, Chromium) | time |');
console.log('|---|---|');
for (const [what, time] of rows) console.log(`| ${what} | ${time} |`);
