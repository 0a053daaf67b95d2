// An automated accessibility audit: axe-core in the page on every tab and every lesson, after
// the views have drawn, must find no serious or critical violation (unnamed controls, images
// without a text alternative, too little contrast, ...). A real check: axe's rules run on the
// page as a student gets it; what it cannot judge (a screen reader's whole experience) is not
// claimed here.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { serve, launch } from './harness.mjs';

const MINUTE = 60_000;
const AXE = await readFile(new URL('./node_modules/axe-core/axe.min.js', import.meta.url), 'utf8');
const PLACES = [
  ['#lesson=tokens', 'lesson-tokens', 'lesson-merge-candidates'],
  ['#lesson=input', 'lesson-input-parts'],
  ['#lesson=attention', 'lesson-attention-row'],
  ['#lesson=masking', 'lesson-masking'],
  ['#lesson=pairs', 'lesson-pairs'],
  ['#lesson=senses', 'lesson-senses-table'],
  ['#lesson=finetune', 'lesson-finetune-run'],
  ['#lesson=probing', 'lesson-probing-table', 'lesson-word-probe-table'],
  ['#lesson=sizes', 'lesson-sizes'],
  ['#explore', 'attention-heatmap'],
  ['#studio', 'studio-data'],
  ['#lab', 'lab-estimate'],
];
let server, chrome;

before(async () => {
  server = await serve();
  chrome = await launch({ webgpu: false });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

test('axe-core finds no serious or critical violation on any tab or lesson', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  const found = {};
  for (const [hash, ...drawn] of PLACES) {
    await page.goto(`${server.origin}/${hash}`);
    await page.reload();
    await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
    for (const testid of drawn) await page.getByTestId(testid).first().waitFor({ timeout: 3 * MINUTE });
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => (await globalThis.axe.run(document, { resultTypes: ['violations'] })).violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 4).map((n) => n.target.join(' ')).join(' | ')}`));
    found[hash] = violations;
  }
  assert.deepEqual(Object.fromEntries(Object.entries(found).filter(([, v]) => v.length)), {});
  assert.deepEqual(chrome.problems, []);
});
