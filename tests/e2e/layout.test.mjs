// The page's layout at the widths people open it at: the header wraps between its fields, never
// between a label and its select (at 1200 px "Backend" sat on one line and its select on the
// next), and at a phone's 390 px the "Saved in this browser" list fits the screen (it was 426 px
// wide), its long names wrapping.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { serve, launch, screenshot, ARTIFACTS } from './harness.mjs';
import { MINUTE } from './studio_helpers.mjs';

let server, chrome;
before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  server = await serve();
  chrome = await launch({ webgpu: false });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

/** The vertical middles of each header label and the select it names, at the current width. */
const fields = (page) => page.evaluate(() => ['model-select', 'backend-select'].map((id) => {
  const [label, select] = [document.querySelector(`label[for=${id}]`), document.getElementById(id)].map((e) => e.getBoundingClientRect());
  return { id, label: label.top + label.height / 2, select: select.top + select.height / 2 };
}));

test('each header label stays on the line of its select at every width from 1366 to 390 px', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  await page.goto(server.origin + '/#studio');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('MiniLM'), null, { timeout: 5 * MINUTE });
  for (const width of [1366, 1200, 1100, 1024, 900, 800, 600, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const f of await fields(page)) {
      assert.ok(Math.abs(f.label - f.select) < 6, `${width} px: the label of #${f.id} at ${f.label}, its select at ${f.select}`);
    }
    if (width === 1200) await screenshot(page, 'layout-header-1200');
  }
});

test('at 390 px the saved items list fits the screen, a long name wrapping', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByTestId('tab-studio').click();
  const name = 'customer-support-tickets-exported-from-the-helpdesk-2026-12-03-final-v2.csv';
  const csv = 'text,label\n' + Array.from({ length: 20 }, (_, i) => `ticket number ${i} about the printer,${i % 2 ? 'billing' : 'hardware'}`).join('\n') + '\n';
  await page.getByTestId('data-file').setInputFiles({ name, mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await page.waitForFunction((n) => [...document.querySelectorAll('[data-testid=saved-name]')].some((e) => e.textContent === n), name, { timeout: MINUTE });
  const list = page.getByTestId('saved-list');
  await list.scrollIntoViewIfNeeded();
  const box = await list.evaluate((t) => ({ right: t.getBoundingClientRect().right, width: t.scrollWidth, viewport: window.innerWidth }));
  await screenshot(page, 'layout-saved-390');
  assert.ok(box.right <= box.viewport, `the list ends at ${box.right} px of ${box.viewport}`);
  assert.ok(box.width <= box.viewport, `the list is ${box.width} px wide at ${box.viewport} px`);
});
