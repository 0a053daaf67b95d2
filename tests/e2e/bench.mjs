// Browser benchmark (not a test): page start-up and embedding throughput in headless Chromium,
// on the CPU fallback and on WebGPU. Prints a Markdown table.
//   node tests/e2e/bench.mjs [path/to/sentences.tsv]     (after `cargo xtask dist`)
// Sentences: the first 64 of the TSV's first column (default ../shared/data/sst2_dev.tsv), all
// embedded in one similarity run (batch 32), timed by the page itself.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, ROOT } from './harness.mjs';

const tsv = process.argv[2] ?? join(ROOT, '..', 'shared', 'data', 'sst2_dev.tsv');
const sentences = (await readFile(tsv, 'utf8')).split('\n').slice(1).map((l) => l.split('\t')[0]).filter(Boolean).slice(0, 64);
const rows = [];
for (const webgpu of [false, true]) {
  const server = await serve();
  const chrome = await launch({ webgpu });
  const t0 = Date.now();
  await chrome.page.goto(server.origin + '/#explore');
  await chrome.page.getByTestId('embedding').waitFor({ timeout: 10 * 60_000 });
  const ready = (Date.now() - t0) / 1000;
  const backend = await chrome.page.getByTestId('backend').textContent();
  const times = [];
  for (let run = 0; run < 2; run++) {
    await chrome.page.getByTestId('similarity-input').fill(sentences.join('\n'));
    await chrome.page.getByTestId('similarity-button').click();
    await chrome.page.waitForFunction((n) => {
      const p = document.querySelector('[data-testid=similarity-panel] p.small');
      return p && p.textContent.startsWith(`${n} sentences embedded`) && !document.querySelector('[data-testid=similarity-button]').disabled;
    }, sentences.length, { timeout: 20 * 60_000 });
    const text = await chrome.page.locator('[data-testid=similarity-panel] p.small').textContent();
    times.push(Number(text.match(/in (\d+) ms/)[1]));
    await chrome.page.evaluate(() => document.querySelector('[data-testid=similarity-matrix]')?.remove());
  }
  const ms = times[times.length - 1];
  rows.push(`| ${backend} | ${ready.toFixed(1)} s | ${sentences.length} | ${(ms / 1000).toFixed(2)} s | ${(sentences.length / (ms / 1000)).toFixed(1)} |`);
  await chrome.browser.close();
  await server.close();
}
console.log('| browser backend | page to first embedding | sentences | time (2nd run) | sentences/s |');
console.log('|---|---|---|---|---|');
for (const r of rows) console.log(r);
