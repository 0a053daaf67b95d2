// Fine-tuning benchmark in headless Chromium (not a test: it prints numbers and asserts nothing
// about time). Loads a training and a validation file into the studio, as a user would, and:
//   head   trains head-only to the end: dev accuracy, wall time, steps/s
//   full   starts full fine-tuning and reports the step rate after N steps, then cancels
//
//   cargo xtask dist && node tests/e2e/bench_finetune.mjs ../shared/data/sst2_train_2k.tsv \
//       ../shared/data/sst2_dev.tsv [head|full] [--webgpu] [--steps 6]
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { serve, launch } from './harness.mjs';

const [train, dev, mode = 'head', ...rest] = process.argv.slice(2);
if (!train || !dev) throw new Error('usage: bench_finetune.mjs TRAIN DEV [head|full] [--webgpu] [--steps N]');
const webgpu = rest.includes('--webgpu');
const steps = Number(rest[rest.indexOf('--steps') + 1] ?? 6) || 6;
const MINUTE = 60_000;

const server = await serve();
const chrome = await launch({ webgpu });
const { page } = chrome;
const t0 = Date.now();
await page.goto(server.origin + '/#studio');
await page.getByTestId('model-facts').waitFor({ timeout: 10 * MINUTE });
const file = async (path) => ({ name: basename(path), mimeType: 'text/tab-separated-values', buffer: await readFile(path) });
await page.getByTestId('data-file').setInputFiles(await file(train));
await page.getByTestId('validation-report').waitFor({ timeout: 5 * MINUTE });
await page.getByTestId('valid-file').setInputFiles(await file(dev));
await page.waitForFunction(() => document.body.textContent.includes('validating on'), null, { timeout: MINUTE });
await page.locator('details:has([data-testid=batch-size]) > summary').click();
await page.getByTestId('max-len').fill('64');
await page.getByTestId('max-len').dispatchEvent('change');
if (webgpu) await page.selectOption('[data-testid=train-backend]', 'webgpu');
if (mode === 'full') {
  await page.selectOption('[data-testid=train-mode]', 'full');
  await page.getByTestId('batch-size').fill('16');
  await page.getByTestId('batch-size').dispatchEvent('change');
}
await page.waitForFunction(() => !document.querySelector('[data-testid=train-start]').disabled, null, { timeout: 5 * MINUTE });
const start = Date.now();
await page.getByTestId('train-start').click();
if (mode === 'head') {
  await page.getByTestId('train-done').waitFor({ timeout: 60 * MINUTE });
  const secs = (Date.now() - start) / 1000;
  console.log(`| browser ${webgpu ? 'WebGPU' : 'CPU'} | head-only | ${await page.getByTestId('valid-accuracy').textContent()} | ${secs.toFixed(0)} s | ${await page.getByTestId('train-done').textContent()} |`);
} else {
  await page.waitForFunction(
    (n) => /step (\d+)/.exec(document.querySelector('[data-testid=train-detail]')?.textContent ?? '')?.[1] >= n,
    steps, { timeout: 60 * MINUTE, polling: 1000 },
  );
  const detail = await page.getByTestId('train-detail').textContent();
  console.log(`| browser ${webgpu ? 'WebGPU' : 'CPU'} | full fine-tune, batch 16 | ${detail} | ${((Date.now() - start) / 1000).toFixed(0)} s for ${steps} steps incl. start-up |`);
  await page.getByTestId('train-cancel').click();
}
console.log(`page open → done: ${((Date.now() - t0) / 1000).toFixed(0)} s; problems: ${JSON.stringify(chrome.problems)}`);
await chrome.browser.close();
await server.close();
