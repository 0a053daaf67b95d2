// What the page does with a big model (a benchmark, not a test): opens a model folder in the
// page as a user picks it (CPU), prints the seconds to open it and to fill one mask, the model's
// facts and what the page said, and screenshots the fill-mask panel to /tmp.
//
//   python3 scripts/make_big_models.py /tmp/bertbench-big
//   node bench/open_big_model.mjs /tmp/bertbench-big/bert-base
//   node bench/open_big_model.mjs /tmp/bertbench-big/bert-large
import { serve, launch } from '../tests/e2e/harness.mjs';
const dir = process.argv[2];
const server = await serve();
const chrome = await launch({ webgpu: false });
const { page } = chrome;
page.on('console', (m) => { if (m.type() === 'error') console.log('console:', m.text().slice(0, 300)); });
page.on('pageerror', (e) => console.log('pageerror:', e.message.slice(0, 300)));
page.on('crash', () => console.log('PAGE CRASHED'));
await page.goto(server.origin + '/#explore');
await page.getByTestId('model-facts').waitFor({ timeout: 300000 });
const t0 = Date.now();
await page.getByTestId('open-model-folder').setInputFiles(dir);
try {
  await page.waitForFunction(() => document.querySelector('[data-testid=open-model-error]') || document.querySelector('[data-testid=open-model-note]')?.textContent.includes('Opened'), null, { timeout: 590000 });
  console.log('after', (Date.now() - t0) / 1000, 's:', await page.locator('[data-testid=open-model-note], [data-testid=open-model-error]').first().innerText());
  console.log(await page.getByTestId('model-facts').innerText());
  await page.getByTestId('fillmask-input').fill('The capital of France is [MASK].');
  const t1 = Date.now();
  await page.getByTestId('fillmask-button').click();
  await page.getByTestId('fillmask-result').waitFor({ timeout: 300000 });
  const said = () => page.getByTestId('fillmask-result').locator('p').first().textContent();
  const first = await said();
  console.log('fill-mask', (Date.now() - t1) / 1000, 's;', first);
  // Again, with another blank: the first fill also builds the MLM head.
  await page.getByTestId('fillmask-input').fill('Paris is the [MASK] of France.');
  const t2 = Date.now();
  await page.getByTestId('fillmask-button').click();
  await page.waitForFunction((before) => document.querySelector('[data-testid=fillmask-result] p')?.textContent !== before, first, { timeout: 300000 });
  console.log('fill-mask again', (Date.now() - t2) / 1000, 's;', await said());
  const panel = page.getByTestId('fillmask-panel');
  await panel.scrollIntoViewIfNeeded();
  await panel.screenshot({ path: `/tmp/fillmask-${dir.split('/').at(-1)}.png` });
} catch (e) { console.log('failed:', e.message.slice(0, 300)); }
const mem = await page.evaluate(() => performance.memory ? performance.memory.usedJSHeapSize : null).catch(() => null);
console.log('js heap', mem);
await chrome.browser.close(); await server.close();
