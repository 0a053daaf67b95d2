// The fastest correct backend by default: where the browser offers a WebGPU adapter that passes
// the device check, the timings of a probe (a forward pass and a training step on each backend)
// choose the page's backend for inference and the studio's "train on", the page says which and
// why, and the user can still pick the other. Timings are never asserted: the tests inject them
// (as the page remembers a probe, per adapter and model) to see each direction chosen, and run
// one real probe on bert-tiny to see the page measure both sides and follow its own numbers. A
// run at another batch shape follows the probe at its own shape (injected too).
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

const probe = (gpuForward, gpuStep) => ({
  texts: 16, tokens: 64, cpu_threads: 2,
  cpu: { forward_ms: 400, step_ms: 1100 },
  webgpu: { forward_ms: gpuForward, step_ms: gpuStep },
});

/** Opens the studio on the default model, with `timings` remembered for this adapter and model. */
async function openWith(timings) {
  const { page } = chrome;
  await page.goto(server.origin + '/#studio');
  const note = page.getByTestId('backend-choice');
  await note.waitFor({ timeout: 5 * MINUTE });
  const key = await note.getAttribute('data-key');
  assert.match(key, /^bertbench-backend-probe:.+:all-MiniLM-L6-v2-int8:16x64$/);
  await page.evaluate(([k, v]) => localStorage.setItem(k, JSON.stringify(v)), [key, timings]);
  await page.reload();
  await page.waitForFunction(() => /^Fastest here/.test(document.querySelector('[data-testid=backend-choice]')?.textContent ?? ''), null, { timeout: 5 * MINUTE });
  return page;
}

const trainOn = (page) => page.locator('[data-testid=train-backend]').evaluate((s) => s.value);

test('a probe that finds WebGPU slower: the page infers and trains on the CPU, and says why', { timeout: 10 * MINUTE }, async () => {
  const page = await openWith(probe(900, 3000));
  await page.waitForFunction(() => document.querySelector('[data-testid=backend]')?.textContent.startsWith('CPU'), null, { timeout: 2 * MINUTE });
  const said = await page.getByTestId('backend-choice').textContent();
  assert.match(said, /^Fastest here: inference on the CPU, training on the CPU\. inference: WebGPU 18 sentences\/s, CPU 2 threads 40 sentences\/s; training: WebGPU 3\.00 s a step, CPU 2 threads 1\.10 s a step/);
  assert.equal(await trainOn(page), 'cpu');
  // The user's own pick stands: back to WebGPU by hand, and it stays.
  await page.selectOption('#backend-select', 'webgpu');
  await page.waitForFunction(() => document.querySelector('[data-testid=backend]')?.textContent.startsWith('WebGPU'), null, { timeout: 2 * MINUTE });
  await page.waitForTimeout(1000);
  assert.match(await page.getByTestId('backend').textContent(), /^WebGPU/, 'the choice is not applied again over the user\'s');
  await screenshot(page, 'backend-choice-cpu');
});

test('a probe that finds WebGPU faster: the page stays on WebGPU and the studio trains there', { timeout: 10 * MINUTE }, async () => {
  const page = await openWith(probe(100, 300));
  const said = await page.getByTestId('backend-choice').textContent();
  assert.match(said, /^Fastest here: inference on WebGPU, training on WebGPU\./);
  assert.match(await page.getByTestId('backend').textContent(), /^WebGPU/);
  assert.equal(await trainOn(page), 'webgpu');
});

test('a run at another batch shape trains where the probe at its shape says is faster', { timeout: 15 * MINUTE }, async () => {
  const page = await openWith(probe(100, 300));
  assert.equal(await trainOn(page), 'webgpu', 'at 16 × 64 WebGPU wins');
  // The studio's default run trains a head on the encoder's features, 32 texts × 64 tokens a
  // batch: there the CPU computes the features faster.
  const key = (await page.getByTestId('backend-choice').getAttribute('data-key')).replace(/:16x64$/, ':32x64');
  await page.evaluate(([k, v]) => localStorage.setItem(k, JSON.stringify(v)), [key, { ...probe(900, null), texts: 32 }]);
  await page.getByTestId('use-example').click();
  await page.getByTestId('validation-report').waitFor({ timeout: MINUTE });
  await page.waitForFunction(() => !document.querySelector('[data-testid=train-start]')?.disabled, null, { timeout: 2 * MINUTE });
  await page.getByTestId('train-start').click();
  const note = page.getByTestId('run-backend-note');
  await note.waitFor({ timeout: MINUTE });
  assert.equal(await note.textContent(),
    'This run trains its head on the CPU, which computes the encoder\'s features faster: at its batch of 32 texts × 64 tokens, 36 sentences/s on WebGPU, 80 sentences/s on the CPU (2 threads).');
  assert.equal(await trainOn(page), 'cpu');
  await page.getByTestId('train-done').waitFor({ timeout: 10 * MINUTE });
  assert.match(await page.getByTestId('train-done').textContent(), / on the CPU/);
  await screenshot(page, 'backend-choice-run-shape');
});

test('a real probe (bert-tiny): both sides measured, and the page follows its own numbers', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  await page.selectOption('#model-select', 'bert-tiny');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('bert-tiny'), null, { timeout: 5 * MINUTE });
  // A software adapter is not probed on its own (it would cost minutes of the CPU); "Measure" probes it.
  await page.waitForFunction(() => /not been measured/.test(document.querySelector('[data-testid=backend-choice]')?.textContent ?? ''), null, { timeout: 2 * MINUTE });
  await page.waitForFunction(() => !document.querySelector('[data-testid=backend-probe]')?.disabled, null, { timeout: 2 * MINUTE });
  await page.getByTestId('backend-probe').click();
  await page.waitForFunction(() => /^Fastest here/.test(document.querySelector('[data-testid=backend-choice]')?.textContent ?? ''), null, { timeout: 5 * MINUTE });
  const said = await page.getByTestId('backend-choice').textContent();
  console.log(said);
  const cpu = /CPU \d+ threads? (\d+) sentences\/s/.exec(said);
  assert.ok(cpu, `the CPU was measured: ${said}`);
  const gpu = /inference: WebGPU (\d+) sentences\/s/.exec(said);
  const expected = gpu && +gpu[1] > +cpu[1] ? 'WebGPU' : 'the CPU';
  assert.ok(said.startsWith(`Fastest here: inference on ${expected},`), `the choice follows the numbers shown: ${said}`);
  const stored = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.endsWith(':bert-tiny:16x64')));
  assert.equal(stored.length, 1, 'the probe is remembered for this adapter and model');
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
  assert.deepEqual(chrome.problems, []);
});
