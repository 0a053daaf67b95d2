// Fine-tuning a model of a standard size in the studio (a benchmark, not a test): opens a model
// folder in the page as a user picks it (CPU), fully fine-tunes it in the studio's training worker
// on 64 of the built-in sentiment sentences (batch 16, one epoch, a tenth held out), or, where the
// studio refuses that for the tab's 4 GB, prints the refusal and trains the head only; it prints
// the seconds to open it, the run's own line ("Finished after N steps in …") and the seconds per
// step from the click on Train to its end (the worker's copy of the model loaded included).
//
//   python3 scripts/make_big_models.py /tmp/bertbench-big
//   node bench/finetune_big_model.mjs /tmp/bertbench-big/deberta-v3-base
import { serve, launch, pick } from '../tests/e2e/harness.mjs';
import { trainingFile, sentimentSample, recipe, train } from '../tests/e2e/studio_helpers.mjs';

const dir = process.argv[2];
const server = await serve();
const chrome = await launch({ webgpu: false });
const { page } = chrome;
page.on('pageerror', (e) => console.log('pageerror:', e.message.slice(0, 300)));
page.on('crash', () => console.log('PAGE CRASHED'));
try {
  await page.goto(server.origin + '/#studio');
  await page.getByTestId('model-facts').waitFor({ timeout: 300_000 });
  const t0 = Date.now();
  const { ok, text } = await pick(page, dir);
  console.log(`open: ${(Date.now() - t0) / 1000} s: ${text}`);
  if (!ok) process.exit(1);
  await page.getByTestId('tab-studio').click();
  await trainingFile(page, 'sample.csv', await sentimentSample(32), 64);
  // Full fine-tuning first; a model the tab cannot hold for it is refused before the run starts
  // (core::train::memory), and is then timed head-only, the mode the refusal points to.
  for (const mode of ['full', 'head']) {
    await recipe(page, { mode, 'batch-size': 16, 'learning-rate': 2e-5, epochs: 1, warmup: 0, 'eval-every': 0 });
    const t1 = Date.now();
    let done;
    try {
      done = await train(page, `big-finetune-${mode}`, 30 * 60_000);
    } catch (e) {
      const refused = e.message.match(/the run did not start: (.*)/)?.[1];
      if (mode === 'full' && refused) {
        console.log(`full fine-tuning refused: ${refused}`);
        continue;
      }
      throw e;
    }
    const wall = (Date.now() - t1) / 1000;
    const steps = Number(done.match(/after (\d+) steps?/)?.[1]);
    console.log(`${mode} run: ${done.trim()}`);
    console.log(`${mode}: ${steps} steps, ${wall.toFixed(1)} s from Train to the end: ${(wall / steps).toFixed(2)} s per step`);
    break;
  }
} finally {
  await chrome.browser.close();
  await server.close();
}
