// MLM lab benchmark in headless Chromium (not a test: it prints numbers and asserts nothing
// about time). Trains BERT-tiny from scratch on the built-in corpus with a 1,000-piece WordPiece
// vocabulary, batch 32, as a user would from the lab tab, and samples the progress line every
// few seconds: time per step, tokens/s, and the MLM loss after each minute.
//
//   cargo xtask dist && node tests/e2e/bench_lab.mjs [--webgpu] [--epochs 4] [--steps N]
//                                                    [--objective none|nsp|sop|rtd]
//
// --objective picks the lab's objective menu entry (rtd: ELECTRA's replaced-token detection).
// --steps N cancels after N steps (use it for WebGPU on SwiftShader, whose steps are slow).
import { serve, launch } from './harness.mjs';

const args = process.argv.slice(2);
const webgpu = args.includes('--webgpu');
const opt = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const epochs = opt('--epochs', 4);
const stopAfter = opt('--steps', 0);
const objective = args.includes('--objective') ? args[args.indexOf('--objective') + 1] : 'none';
const MINUTE = 60_000;

const server = await serve();
const chrome = await launch({ webgpu });
const { page } = chrome;
// BERT-tiny as the page's model keeps the WebGPU start-up check short; the lab trains its own.
await page.goto(server.origin + '/?model=bert-tiny#lab');
await page.getByTestId('model-facts').waitFor({ timeout: 10 * MINUTE });
if (webgpu) {
  await page.waitForFunction(
    () => !document.querySelector('[data-testid=lab-backend] option[value=webgpu]')?.disabled,
    null, { timeout: 10 * MINUTE, polling: 1000 },
  );
  await page.selectOption('[data-testid=lab-backend]', 'webgpu');
}
await page.selectOption('[data-testid=lab-vocab-choice]', '1000');
await page.selectOption('[data-testid=lab-pair]', objective);
await page.getByTestId('lab-epochs').fill(String(epochs));
await page.getByTestId('lab-epochs').dispatchEvent('change');
const estimate = await page.getByTestId('lab-estimate').textContent();
await page.waitForFunction(() => !document.querySelector('[data-testid=lab-start]').disabled, null, { timeout: 5 * MINUTE });
const start = Date.now();
await page.getByTestId('lab-start').click();

const samples = [];
let nextMinute = 1;
for (;;) {
  await page.waitForTimeout(2000);
  const done = await page.getByTestId('lab-done').count();
  const text = (await page.getByTestId('lab-progress').count()) ? await page.getByTestId('lab-progress').textContent() : '';
  const m = /step (\d+) of (\d+).*MLM loss ([\d.]+)/.exec(text);
  const secs = (Date.now() - start) / 1000;
  if (m && secs >= nextMinute * 60) {
    samples.push(`${nextMinute} min: step ${m[1]}, loss ${m[3]}`);
    nextMinute += 1;
  }
  if (done) break;
  if (stopAfter && m && Number(m[1]) >= stopAfter) {
    await page.getByTestId('lab-cancel').click();
    await page.getByTestId('lab-done').waitFor({ timeout: 10 * MINUTE });
    break;
  }
  if (secs > 60 * 60) throw new Error('no end after an hour');
}
const doneText = await page.getByTestId('lab-done').textContent();
const progress = await page.getByTestId('lab-progress').textContent();
const loss = /MLM loss ([\d.]+)/.exec(progress)?.[1];
console.log(`estimate before the run: ${estimate}`);
console.log('| backend | run | result | final MLM loss | loss by minute |');
console.log('|---|---|---|---|---|');
const steps = Number(/step (\d+) of/.exec(progress)?.[1]);
console.log(`${steps} steps in ${((Date.now() - start) / 1000).toFixed(1)} s from the click on Start: ${((Date.now() - start) / 1000 / steps).toFixed(3)} s a step`);
console.log(`| ${webgpu ? 'WebGPU (SwiftShader)' : 'CPU (wasm)'} | BERT-tiny, objective ${objective}, vocab 1k, batch 32, ${epochs} epochs${stopAfter ? `, stopped at step ${stopAfter}` : ''} | ${doneText} | ${loss} | ${samples.join('; ') || '–'} |`);
console.log(`problems: ${JSON.stringify(chrome.problems)}`);
await chrome.browser.close();
await server.close();
