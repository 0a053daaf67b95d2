// A lost GPU in the middle of training: the studio trains bert-tiny on WebGPU (SwiftShader here),
// the test crashes Chromium's GPU process after the first checkpoint (every WebGPU device is lost
// with it), and the run must go on by itself on the CPU from that checkpoint and finish.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, offOriginRequests, screenshot } from './harness.mjs';

const MINUTE = 60_000;
let server, chrome;

before(async () => {
  server = await serve();
  chrome = await launch({ webgpu: true });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

test('training on WebGPU goes on on the CPU from its last checkpoint when the GPU is lost', { timeout: 20 * MINUTE }, async () => {
  const { page, problems } = chrome;
  await page.goto(server.origin + '/?model=bert-tiny#studio');
  await page.waitForFunction(() => document.querySelector('[data-testid=backend]')?.textContent.startsWith('WebGPU ·'), null, { timeout: 5 * MINUTE });
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('bert-tiny'), null, { timeout: 5 * MINUTE });

  const rows = ['text,label'];
  for (let i = 0; i < 12; i++) rows.push(`a good film number ${i},positive`, `a bad film number ${i},negative`);
  await page.getByTestId('data-file').setInputFiles({ name: 'tiny.csv', mimeType: 'text/csv', buffer: Buffer.from(rows.join('\n')) });
  await page.getByTestId('validation-report').waitFor({ timeout: MINUTE });
  await page.selectOption('[data-testid=train-mode]', 'full');
  await page.locator('[data-testid=studio-train] details summary').first().click();
  for (const [id, value] of [['batch-size', '4'], ['epochs', '30'], ['eval-every', '0']]) {
    await page.getByTestId(id).fill(value);
    await page.getByTestId(id).dispatchEvent('change');
  }
  // WebGPU is offered for training once the page's own WebGPU-vs-CPU check has passed.
  await page.selectOption('[data-testid=train-backend]', 'webgpu', { timeout: 10 * MINUTE });
  await page.getByTestId('train-start').click();
  await page.getByTestId('checkpoint-note').waitFor({ timeout: 8 * MINUTE });
  const note = await page.getByTestId('checkpoint-note').textContent();
  const saved = Number(/at step (\d+)/.exec(note)[1]);
  assert.ok(saved > 0, note);

  // Every WebGPU device of the browser goes with its GPU process.
  const cdp = await page.context().browser().newBrowserCDPSession();
  await cdp.send('Browser.crashGpuProcess');

  await page.waitForFunction(() => /GPU failed during training/.test(document.querySelector('[data-testid=checkpoint-note]')?.textContent ?? ''), null, { timeout: 5 * MINUTE });
  const resumed = await page.getByTestId('checkpoint-note').textContent();
  console.log(resumed);
  const [, step, total] = /Resumed on the CPU from the checkpoint at step (\d+) of (\d+)/.exec(resumed).map(Number);
  assert.ok(step >= saved && step < total, resumed);
  assert.equal(await page.locator('[data-testid=train-backend]').inputValue(), 'cpu', 'training is now set to the CPU');
  assert.equal(await page.getByTestId('train-error').count(), 0, 'no error is left standing');
  await screenshot(page, 'gpu-loss-resumed');

  await page.getByTestId('train-done').waitFor({ timeout: 10 * MINUTE });
  const done = await page.getByTestId('train-done').textContent();
  console.log(done);
  assert.match(done, /on the CPU/);
  assert.match(done, new RegExp(`${total} steps`));
  assert.equal(await page.locator('[data-testid=confusion] td').count(), 4);
  await screenshot(page, 'gpu-loss-done');
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
  assert.deepEqual(problems, []);
});
