// The MLM lab on the CPU fallback: train a WordPiece vocabulary and a BERT-tiny on the built-in
// corpus in the worker, watch the loss fall, fill in a blank, save the model, and explore it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { serve, launch, offOriginRequests, screenshot } from './harness.mjs';
import { tabTo, typeInto, expectRight } from './lesson_helpers.mjs';

const MINUTE = 60_000;
let server, chrome;

before(async () => {
  server = await serve();
  chrome = await launch({ webgpu: false });
  await chrome.page.goto(server.origin + '/#lab');
  await chrome.page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
});
/** The lab model's top fills for `text`, as the page shows them (waits for a new answer). */
async function fill(page, text) {
  await page.getByTestId('lab-fill-input').fill(text);
  const before = await page.getByTestId('lab-fill-result').count() ? await page.getByTestId('lab-fill-result').textContent() : '';
  await page.getByTestId('lab-fill').click();
  await page.waitForFunction((old) => {
    const now = document.querySelector('[data-testid=lab-fill-result]')?.textContent;
    return now && now !== old;
  }, before, { timeout: MINUTE }).catch(() => {});
  return (await page.getByTestId('lab-fill-result').textContent()).trim();
}

after(async () => { await chrome?.browser.close(); await server?.close(); });

test('pretraining in the worker: vocabulary, masking shown, loss falls, probes answer', { timeout: 12 * MINUTE }, async () => {
  const { page } = chrome;
  assert.match(await page.getByTestId('lab-corpus').textContent(), /built-in corpus: 3002 lines/);
  assert.match(await page.getByTestId('lab-estimate').textContent(), /≈ .+ per epoch on the CPU/);
  await page.selectOption('[data-testid=lab-vocab-choice]', '1000');
  await page.getByTestId('lab-epochs').fill('4');
  await page.getByTestId('lab-epochs').dispatchEvent('change');
  await page.getByTestId('lab-start').click();
  await page.getByTestId('lab-vocab').waitFor({ timeout: 2 * MINUTE });
  const pieces = Number((await page.getByTestId('lab-vocab').textContent()).match(/Trained WordPiece vocabulary: (\d+) pieces/)[1]);
  assert.ok(pieces > 200 && pieces <= 1000, `${pieces} pieces`);
  await page.getByTestId('lab-preview').waitFor({ timeout: MINUTE });
  assert.ok(await page.locator('[data-testid=lab-preview] .tok.masked').count() > 0, 'no [MASK] in the preview');
  // The page answers while the worker trains: pause, check nothing moves, resume.
  await page.getByTestId('lab-pause').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=lab-pause]')?.textContent === 'Resume', null, { timeout: MINUTE });
  const paused = await page.getByTestId('lab-progress').textContent();
  await page.waitForTimeout(1500);
  assert.equal(await page.getByTestId('lab-progress').textContent(), paused);
  await page.getByTestId('lab-pause').click();
  await page.getByTestId('lab-done').waitFor({ timeout: 10 * MINUTE });
  assert.match(await page.getByTestId('lab-done').textContent(), /Finished after \d+ steps in \d+ s \([\d.]+ s per step, [\d.]+( k)? tokens\/s\)/);
  const losses = await page.locator('[data-testid=lab-loss] polyline').first().getAttribute('points');
  assert.ok(losses.split(' ').length > 100, 'a loss point per step');
  const progress = await page.getByTestId('lab-progress').textContent();
  const last = Number(progress.match(/MLM loss ([\d.]+)/)[1]);
  // A uniform guess over 1,000 pieces costs ln(1000) ≈ 6.9.
  assert.ok(last < 4.0, `MLM loss after 4 epochs: ${last}`);
  assert.ok(await page.locator('[data-testid=lab-probe]').count() === 5);
  // The finished run measured this machine's speed, and the estimate says so.
  assert.match(await page.getByTestId('lab-estimate').textContent(), /measured by the last run in this tab/);
  await screenshot(page, 'lab');
});

test('fill-mask, save as a Hugging Face folder, and explore the lab model', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('lab-fill-input').fill('the cow [MASK] in the barn.');
  await page.getByTestId('lab-fill').click();
  const result = await page.getByTestId('lab-fill-result').textContent({ timeout: MINUTE });
  const probs = [...result.matchAll(/(\d+)%/g)].map((m) => Number(m[1]));
  assert.equal(probs.length, 5);
  assert.ok(probs.reduce((a, b) => a + b, 0) <= 103);

  const download = page.waitForEvent('download');
  await page.getByTestId('lab-save').click();
  const zip = await readFile(await (await download).path());
  const text = zip.toString('latin1');
  for (const f of ['config.json', 'model.safetensors', 'vocab.txt']) assert.ok(text.includes(`bertbench-mlm/${f}`), f);
  assert.ok(text.includes('BertForMaskedLM'));

  await page.getByTestId('lab-explore').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('MLM lab (bert-tiny) #1'), null, { timeout: MINUTE });
  assert.equal(await page.locator('#model-select option:checked').textContent(), 'MLM lab (bert-tiny) #1 (made in this tab)');
  await page.waitForFunction(() => {
    const rows = [...document.querySelectorAll('[data-testid=attention-heatmap] [data-testid=attention-row]')];
    return rows.length > 0 && rows.every((g) => Math.abs([...g.querySelectorAll('rect')].reduce((s, r) => s + Number(r.dataset.w), 0) - 1) < 1e-3);
  }, null, { timeout: 2 * MINUTE });
  assert.equal(await page.locator('[data-testid=attention-heads] button').count(), 2, 'BERT-tiny has 2 heads');
});

test('the studio fine-tunes the lab model, and the same shape from random weights, side by side', { timeout: 8 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('tab-lab').click();
  await page.getByTestId('lab-to-studio').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=tab-studio]')?.classList.contains('active'), null, { timeout: MINUTE });
  await page.getByTestId('use-example').click();
  await page.getByTestId('validation-report').waitFor({ timeout: MINUTE });
  await page.selectOption('[data-testid=train-mode]', 'full');
  await page.locator('[data-testid=studio-train] details > summary').click();
  await page.getByTestId('epochs').fill('2');
  await page.getByTestId('epochs').dispatchEvent('change');
  await page.getByTestId('learning-rate').fill('0.0005');
  await page.getByTestId('learning-rate').dispatchEvent('change');
  for (const scratch of [false, true]) {
    await page.getByTestId('from-scratch').setChecked(scratch);
    await page.getByTestId('train-start').click();
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid=run-row]').length === n || (n === 1 && document.querySelector('[data-testid=train-done]')),
      scratch ? 2 : 1, { timeout: 4 * MINUTE });
  }
  const rows = await page.getByTestId('run-row').allTextContents();
  assert.equal(rows.length, 2);
  assert.match(rows[0], /MLM lab \(bert-tiny\) #1.*pretrained.*full fine-tuning/);
  assert.match(rows[1], /MLM lab \(bert-tiny\) #1.*random weights/);
  for (const a of await page.getByTestId('run-accuracy').allTextContents()) {
    const v = parseFloat(a);
    assert.ok(v >= 0 && v <= 100, a);
  }
  await screenshot(page, 'lab-compare');
});

test('continued pretraining of the loaded model with sentence-order prediction on an uploaded corpus', { timeout: 8 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('tab-lab').click();
  const lines = [];
  for (let i = 0; i < 40; i++) lines.push(`the ${['red', 'blue', 'green', 'old'][i % 4]} train leaves at ${i % 12 + 1} o'clock.`, `it stops at ${['york', 'leeds', 'bath', 'hull'][i % 4]} on the way.`);
  await page.getByTestId('lab-file').setInputFiles({ name: 'trains.txt', mimeType: 'text/plain', buffer: Buffer.from(lines.join('\n')) });
  await page.waitForFunction(() => document.querySelector('[data-testid=lab-corpus]')?.textContent.includes('trains.txt: 80 lines'), null, { timeout: MINUTE });
  // A file that is not text leaves the corpus as it was.
  await page.getByTestId('lab-file').setInputFiles({ name: 'photo.txt', mimeType: 'text/plain', buffer: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]) });
  await page.getByTestId('lab-message').waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('lab-message').textContent(), /photo.txt is not UTF-8 text; the corpus is unchanged/);
  assert.match(await page.getByTestId('lab-corpus').textContent(), /trains.txt: 80 lines/);

  await page.selectOption('[data-testid=lab-model]', 'continue');
  await page.selectOption('[data-testid=lab-pair]', 'sop');
  await page.getByTestId('lab-epochs').fill('2');
  await page.getByTestId('lab-epochs').dispatchEvent('change');
  await page.getByTestId('lab-probes-input').fill('the red train leaves at [MASK] o\'clock.');
  // Masking as a setting: 30% of tokens, every one of them [MASK]; the preview shows just that.
  await page.selectOption('[data-testid=lab-mask-rate]', '0.3');
  await page.selectOption('[data-testid=lab-mask-split]', '1');
  await page.getByTestId('lab-start').click();
  await page.getByTestId('lab-preview').waitFor({ timeout: 2 * MINUTE });
  assert.match(await page.getByTestId('lab-preview-rule').textContent(), /^30% of the tokens are picked .* of those 100% become \[MASK\], 0% a random token, 0% stay/);
  const cases = await page.locator('[data-testid=lab-preview] .tok').evaluateAll((t) => t.map((e) => e.className));
  assert.ok(cases.filter((c) => c.includes('masked')).length > 0, 'masked tokens shown');
  assert.ok(!cases.some((c) => c.includes('random') || c.includes('kept')), `only [MASK] among the picked: ${cases}`);
  await page.getByTestId('lab-done').waitFor({ timeout: 5 * MINUTE });
  assert.match(await page.getByTestId('lab-vocab').textContent(), /Pretrained vocabulary/);
  const progress = await page.getByTestId('lab-progress').textContent();
  assert.match(progress, /pair loss [\d.]+/);
  // Both curves are drawn: MLM and the sentence-order task, beside the first test's run, kept to
  // compare (both runs are rows of "Runs compared").
  assert.equal(await page.getByTestId('lab-compare-row').count(), 2);
  assert.equal(await page.locator('[data-testid=lab-loss] polyline').count(), 3);
  assert.match(await page.locator('[data-testid=lab-loss] figcaption').textContent(), /^MLM lossNSP\/SOP loss#1 \(.*\) MLM loss$/);
  await page.getByTestId('lab-explore').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('+ MLM on trains.txt #2'), null, { timeout: MINUTE });
});

test('in the browser too, BERT-tiny learns a deterministic pattern and fills it top-1', { timeout: 8 * MINUTE }, async () => {
  // The corpus of core/tests/pretrain.rs: each word always comes right before its partner.
  const pairs = [['sun', 'hot'], ['snow', 'cold'], ['sugar', 'sweet'], ['lemon', 'sour'], ['night', 'dark'], ['fire', 'bright']];
  let seed = 1;
  const next = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  const lines = Array.from({ length: 256 }, () => Array.from({ length: 4 }, () => pairs[Math.floor(next() * pairs.length)].join(' ')).join(' '));
  const { page } = chrome;
  await page.getByTestId('tab-lab').click();
  await page.getByTestId('lab-file').setInputFiles({ name: 'pairs.txt', mimeType: 'text/plain', buffer: Buffer.from(lines.join('\n')) });
  await page.waitForFunction(() => document.querySelector('[data-testid=lab-corpus]')?.textContent.includes('pairs.txt: 256 lines'), null, { timeout: MINUTE });
  await page.selectOption('[data-testid=lab-model]', 'bert-tiny');
  await page.selectOption('[data-testid=lab-vocab-choice]', '1000');
  await page.selectOption('[data-testid=lab-pair]', 'none');
  for (const [id, value] of [['lab-epochs', '25'], ['lab-lr', '0.002']]) {
    await page.getByTestId(id).fill(value);
    await page.getByTestId(id).dispatchEvent('change');
  }
  await page.getByTestId('lab-probes-input').fill('night dark sun [MASK] snow cold.');
  await page.getByTestId('lab-start').click();
  await page.waitForFunction(() => /Finished after 200 steps/.test(document.querySelector('[data-testid=lab-done]')?.textContent ?? ''), null, { timeout: 6 * MINUTE });
  // The mean MLM loss of the last 20 steps (native: 0.23; ln 17 ≈ 2.8 at the start).
  const mean = Number((await page.getByTestId('lab-progress').textContent()).match(/mean of the last 20 steps ([\d.]+)/)[1]);
  assert.ok(mean < 0.6, `MLM loss over the last 20 steps: ${mean}`);
  for (const [a, b] of pairs) {
    const fills = await fill(page, `night dark ${a} [MASK] sun hot`);
    assert.equal(fills.split(' ')[0], b, `night dark ${a} [MASK] sun hot → ${fills}`);
  }
});

test("lesson 4's fill-in-the-blank: a sentence encoder cannot play, and one click lets the lab's model play without leaving the lesson", { timeout: 4 * MINUTE }, async () => {
  const { page } = chrome;
  await page.selectOption('#model-select', 'all-MiniLM-L6-v2');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('MiniLM'), null, { timeout: 2 * MINUTE });
  await page.goto(server.origin + '/#lesson=masking');
  await page.getByTestId('lesson-fill-unavailable').waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('lesson-fill-unavailable').textContent(), /every model the MLM lab pretrains in this tab/);
  await page.getByTestId('lesson-fill-use-lab').click();
  await page.getByTestId('lesson-fill').waitFor({ timeout: 2 * MINUTE });
  assert.equal(await page.locator('[data-testid=lesson-fill] tr').count(), 6, 'five guesses under a header');
  assert.equal(await page.getByTestId('lesson').getAttribute('data-lesson'), 'masking', 'still in the lesson');
  await page.goto(server.origin + '/#lab');
  assert.match(await page.locator('#model-select option:checked').textContent(), /^MLM lab \(bert-tiny\) #\d+ \(made in this tab\)$/);
});

test("lesson 7 on the lab's model: both recipes train (the explorer's views, computed for the model before, never reach the run's model), the prompt classifies the held-out texts with no training, a word outside the vocabulary is refused by name, and the question follows the prompt's and the head's accuracies", { timeout: 8 * MINUTE }, async () => {
  const { page } = chrome;
  // The test before made the lab's model the page's model: it kept its MLM head.
  await page.goto(server.origin + '/#lesson=finetune');
  await page.getByTestId('lesson-prompt-template').waitFor({ timeout: MINUTE });
  await tabTo(page, page.getByTestId('lesson-finetune-run'));
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=lesson-finetune-runs] td[data-accuracy]').length === 2
    || /error|stopped/.test(document.querySelector('[data-testid=lesson-finetune-status]')?.textContent ?? ''), null, { timeout: 5 * MINUTE });
  assert.equal(await page.locator('[data-testid=lesson-finetune-runs] td[data-accuracy]').count(), 2, await page.getByTestId('lesson-finetune-status').textContent());
  const head = Number(await page.locator('[data-testid=lesson-finetune-runs] td[data-accuracy]').first().getAttribute('data-accuracy'));
  const words = page.getByTestId('lesson-prompt-word');
  assert.equal(await words.count(), 2, 'a word per label');
  await typeInto(page, words.nth(0), 'xylophone');
  await page.keyboard.press('Tab');
  await tabTo(page, page.getByTestId('lesson-prompt-score'));
  await page.keyboard.press('Enter');
  await page.getByTestId('lesson-prompt-error').waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('lesson-prompt-error').textContent(), /“xylophone” (is not in this model's vocabulary|is \d+ pieces for this model)/);

  // Two words of the lab's corpus, each one piece of its vocabulary.
  await typeInto(page, words.nth(0), 'cold');
  await typeInto(page, words.nth(1), 'hot');
  await page.keyboard.press('Tab');
  await tabTo(page, page.getByTestId('lesson-prompt-score'));
  await page.keyboard.press('Enter');
  await page.getByTestId('lesson-prompt-accuracy').waitFor({ timeout: MINUTE });
  const table = await page.getByTestId('lesson-prompt').textContent();
  assert.match(table, /cold = cold, hot = hot/);
  // The held-out quarter of the built-in sentiment examples, as the two recipes are scored on.
  const count = Number(table.match(/The same (\d+) held-out texts/)[1]);
  assert.equal(count, 64);
  const prompt = Number(await page.getByTestId('lesson-prompt-accuracy').getAttribute('data-accuracy'));
  assert.ok(Number.isInteger(Math.round(prompt * count)) && Math.abs(prompt * count - Math.round(prompt * count)) < 1e-3, `accuracy ${prompt} is a share of ${count} texts`);
  await expectRight(page, 'finetune-prompt', { index: prompt > head ? 0 : 1 });
  const said = (await page.getByTestId('check-finetune-prompt').getByTestId('check-feedback').textContent()).match(/Prompt: ([\d.]+)%, head only: ([\d.]+)%/);
  assert.ok(said && Math.abs(said[1] - prompt * 100) <= 0.051 && Math.abs(said[2] - head * 100) <= 0.051, `${said}: ${prompt} ${head}`);
  await screenshot(page, 'lesson-prompting');
  await page.goto(server.origin + '/#lab');
});

test('the lab survives a reload: its settings and corpus come back, and its model reopens with its curves and probes and fills the same; then deleted', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  // The pattern run of the test before was saved when it finished.
  await page.waitForFunction(() => /Saved in this browser/.test(document.querySelector('[data-testid=lab-storage-note]')?.textContent ?? ''), null, { timeout: MINUTE });
  const progress = await page.getByTestId('lab-progress').textContent();
  const probes = await page.locator('[data-testid=lab-probe]').allTextContents();
  const name = (await page.getByTestId('lab-saved-name').first().textContent()).trim();
  assert.match(name, /^bert-tiny · pairs\.txt · 200 steps · MLM loss [\d.]+$/);

  await page.reload();
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  await page.getByTestId('tab-lab').click();
  const row = page.getByTestId('lab-saved-item').filter({ hasText: name });
  await row.waitFor({ timeout: MINUTE });
  const saved = await page.getByTestId('lab-saved-item').count();
  // The lab's settings and its uploaded corpus came back by themselves.
  await page.waitForFunction(() => document.querySelector('[data-testid=lab-corpus]')?.textContent.includes('pairs.txt: 256 lines'), null, { timeout: MINUTE });
  assert.equal(await page.getByTestId('lab-epochs').inputValue(), '25');
  assert.equal(await page.getByTestId('lab-lr').inputValue(), '0.002');
  assert.equal(await page.getByTestId('lab-probes-input').inputValue(), 'night dark sun [MASK] snow cold.');
  // Nothing of the run is on the page before it is opened.
  assert.equal(await page.getByTestId('lab-fill').count(), 0);
  await row.getByTestId('lab-open-saved').click();
  await page.getByTestId('lab-fill').waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('lab-storage-note').textContent(), /Opened the saved lab model/);
  assert.match(await page.getByTestId('lab-done').textContent(), /Finished after 200 steps/);
  assert.match(await page.getByTestId('lab-corpus').textContent(), /pairs\.txt: 256 lines/);
  assert.equal(await page.getByTestId('lab-progress').textContent(), progress);
  assert.deepEqual(await page.locator('[data-testid=lab-probe]').allTextContents(), probes);
  assert.ok((await page.locator('[data-testid=lab-loss] polyline').first().getAttribute('points')).split(' ').length >= 200, 'a loss point per step');
  // The reopened model is the trained one: it still completes every pair top-1.
  for (const [a, b] of [['sun', 'hot'], ['lemon', 'sour'], ['fire', 'bright']]) {
    const fills = await fill(page, `night dark ${a} [MASK] sun hot`);
    assert.equal(fills.split(' ')[0], b, `after reopening: night dark ${a} [MASK] sun hot → ${fills}`);
  }
  await screenshot(page, 'lab-reopened');

  await row.getByTestId('lab-delete-saved').click();
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=lab-saved-item]').length === n - 1, saved, { timeout: MINUTE });
  assert.equal(await page.getByTestId('lab-saved-item').filter({ hasText: name }).count(), 0);
  // The model stays usable in this tab after its saved copy is gone.
  assert.equal(await page.getByTestId('lab-fill').count(), 1);
});

test('nothing left the page', async () => {
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
  assert.deepEqual(chrome.problems, []);
});
