// ELECTRA's replaced-token detection in the MLM lab, on the CPU fallback, by keyboard: an MLM
// run and an ELECTRA run of BERT-tiny on one corpus. The ELECTRA run draws its discriminator's
// loss (which falls) beside its generator's MLM loss; "Runs compared" gives the tokens each run
// learned from per step and a sentence of those numbers; its generator fills blanks; its zip is
// an `ElectraForPreTraining` that `transformers` loads without a missing or unexpected weight
// (where PyTorch is installed); "Fine-tune each" trains a head on both encoders; lesson 5's
// question on it is answered from the table; the saved discriminator reopens and says why it
// cannot fill a blank. "Runs compared" comes back after a reload, and "Fine-tune each" then reads
// the runs' models from their saved lab models.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, offOriginRequests, screenshot, ARTIFACTS } from './harness.mjs';
import { tabTo, typeInto, expectRight } from './lesson_helpers.mjs';
import { farmCorpus, chooseByKeys, trainKept, keptRows } from './lab_helpers.mjs';

const MINUTE = 60_000;
let server, chrome;

before(async () => {
  server = await serve();
  chrome = await launch({ webgpu: false });
  await chrome.page.goto(server.origin + '/?model=bert-tiny#lab');
  await chrome.page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

/** The series of chart `testid`, by the names its caption lists in order. */
async function series(page, testid) {
  const chart = page.getByTestId(testid);
  return { caption: await chart.locator('figcaption').textContent(), values: JSON.parse(await chart.getAttribute('data-values')) };
}

test('an MLM run and an ELECTRA run: the discriminator learns from every token, and the comparison says so with its numbers', { timeout: 12 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('lab-file').setInputFiles({ name: 'farm.txt', mimeType: 'text/plain', buffer: Buffer.from(farmCorpus()) });
  await page.waitForFunction(() => document.querySelector('[data-testid=lab-corpus]')?.textContent.includes('farm.txt: 96 lines'), null, { timeout: MINUTE });
  await chooseByKeys(page, 'lab-model', 'bert-tiny');
  await chooseByKeys(page, 'lab-vocab-choice', '1000');
  await typeInto(page, page.getByTestId('lab-epochs'), '8');
  await page.keyboard.press('Tab');
  await typeInto(page, page.getByTestId('lab-probes-input'), 'the cow eats [MASK] in the morning.');
  await trainKept(page, 1);

  await chooseByKeys(page, 'lab-pair', 'rtd');
  const note = await page.getByTestId('lab-electra-note').textContent();
  assert.match(note, /^A generator 64 wide \(the model is 128\) fills the masked tokens/, note);
  assert.match(note, /only the 15% picked/);
  await trainKept(page, 2);

  // Its charts: the generator's MLM loss and the discriminator's loss, which falls.
  const loss = await series(page, 'lab-loss');
  assert.match(loss.caption, /MLM loss \(the generator\).*replaced-token loss \(the discriminator, every token\)/, loss.caption);
  const rtd = loss.values[1];
  assert.ok(rtd.at(-1) < rtd[0] * 0.9, `the discriminator's loss: ${rtd[0]} → ${rtd.at(-1)}`);
  const accuracy = await series(page, 'lab-accuracy');
  assert.match(accuracy.caption, /tokens the discriminator judged right.*picked tokens the generator replaced/, accuracy.caption);
  for (const v of accuracy.values[1].concat(accuracy.values[2])) assert.ok(v >= 0 && v <= 1, `${v}`);

  // The table: its objective, and the tokens each run learned from per step.
  const [mlm, electra] = await keptRows(page);
  assert.match(electra.cells[0], /objective replaced tokens \(ELECTRA\)/);
  assert.match(mlm.cells[0], /objective MLM/);
  assert.equal(mlm.learned, Number(mlm.cells[4]), 'MLM learns from the tokens it predicted');
  assert.ok(electra.learned > 4 * mlm.learned, `${electra.learned} against ${mlm.learned}`);
  const said = await page.getByTestId('lab-compare-sentence').textContent();
  assert.ok(said.includes(' #2 trained ELECTRA\'s replaced-token detection: its MLM loss and accuracy are its generator\'s'), said);
  const [, tokens, ratio, picked] = said.match(/learned from all (\d+) tokens per step, ([\d.]+)× the (\d+) tokens #1 predicted/);
  assert.deepEqual([Number(tokens), Number(picked)], [electra.learned, mlm.learned], said);
  assert.ok(Math.abs(Number(ratio) - electra.learned / mlm.learned) <= 0.06, `${ratio} against ${electra.learned / mlm.learned}`);
  assert.match(said, /A step of #2 took [\d.]+× the time of one of #1 here, so at the same compute #1 would train [\d.]+× the steps\./);
  await page.getByTestId('lab-compare').scrollIntoViewIfNeeded();
  await screenshot(page, 'lab-electra');

  // The generator fills the blanks.
  await typeInto(page, page.getByTestId('lab-fill-input'), 'the cow eats [MASK] in the morning.');
  await tabTo(page, page.getByTestId('lab-fill'));
  await page.keyboard.press('Enter');
  await page.getByTestId('lab-fill-result').waitFor({ timeout: MINUTE });
  assert.equal([...(await page.getByTestId('lab-fill-result').textContent()).matchAll(/(\S+) (\d+)%/g)].length, 5);

  // Its zip is the discriminator, under ELECTRA's names; the generator is not in it.
  const download = page.waitForEvent('download');
  await tabTo(page, page.getByTestId('lab-save'));
  await page.keyboard.press('Enter');
  const zipPath = join(ARTIFACTS, 'lab-electra.zip');
  await (await download).saveAs(zipPath);
  const zip = (await readFile(zipPath)).toString('latin1');
  assert.ok(zip.includes('"ElectraForPreTraining"') && zip.includes('"model_type": "electra"'), 'an ElectraForPreTraining');
  assert.ok(zip.includes('discriminator_predictions.dense_prediction.weight'));
  assert.ok(!zip.includes('generator_predictions') && !zip.includes('generator_lm_head'), 'no generator');
  const python = process.env.BERTBENCH_PYTHON ?? 'python3';
  if (spawnSync(python, ['-c', 'import torch, transformers'], { stdio: 'ignore' }).status !== 0) {
    assert.ok(!process.env.BERTBENCH_REQUIRE_TORCH, `${python} cannot import torch and transformers`);
    console.log('# skipped the transformers check: no PyTorch/transformers');
  } else {
    const check = spawnSync(python, ['-c', PYTHON_LOAD, zipPath], { encoding: 'utf8', env: { ...process.env, TQDM_DISABLE: '1' } });
    assert.equal(check.status, 0, check.stdout + check.stderr);
    assert.deepEqual(JSON.parse(check.stdout.trim().split('\n').at(-1)), { model: 'ElectraForPreTraining', problems: {}, a_logit_per_token: true });
  }
});

test('after a reload "Runs compared" is back, and "Fine-tune each" trains a head on both encoders from their saved models; lesson 5\'s question is answered from the table', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  const before = await keptRows(page);
  const said = await page.getByTestId('lab-compare-sentence').textContent();
  // Both runs' models are saved in this browser before the reload.
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=lab-saved-item]').length >= 2, null, { timeout: MINUTE });
  await page.reload();
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  await page.getByTestId('tab-lab').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=lab-compare-row]').length === 2, null, { timeout: MINUTE });
  assert.deepEqual(await keptRows(page), before);
  assert.equal(await page.getByTestId('lab-compare-sentence').textContent(), said);
  await tabTo(page, page.getByTestId('lab-fine-tune-each'));
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => {
    const said = document.querySelector('[data-testid=lab-downstream-status]')?.textContent ?? '';
    return said !== '' && !said.startsWith('Fine-tuning') && !document.querySelector('[data-testid=lab-fine-tune-each]').disabled;
  }, null, { timeout: 6 * MINUTE });
  const [mlm, electra] = await keptRows(page);
  for (const r of [mlm, electra]) assert.ok(r.downstream >= 0 && r.downstream <= 1, `${r.name}: ${r.downstream}`);
  const names = await page.getByTestId('run-row').evaluateAll((trs) => trs.map((tr) => tr.textContent));
  assert.ok(names.some((t) => t.includes('MLM lab run #2')), names.join(' / '));

  await page.evaluate(() => { location.hash = '#lesson=pairs'; });
  await page.getByTestId('check-pairs-electra').waitFor({ timeout: MINUTE });
  await expectRight(page, 'pairs-electra', { number: (electra.learned / mlm.learned).toFixed(1) });
  await page.getByTestId('tab-lab').click();
});

test('the saved discriminator reopens, says why it cannot fill a blank, and explores as an ELECTRA', { timeout: 4 * MINUTE }, async () => {
  const { page } = chrome;
  const row = page.getByTestId('lab-saved-item').filter({ hasText: 'ELECTRA discriminator' });
  await row.waitFor({ timeout: MINUTE });
  assert.match(await row.getByTestId('lab-saved-name').textContent(), /^bert-tiny ELECTRA discriminator · farm\.txt · 24 steps · replaced-token loss [\d.]+$/);
  await row.getByTestId('lab-open-saved').click();
  await page.waitForFunction(() => /Opened the saved lab model/.test(document.querySelector('[data-testid=lab-storage-note]')?.textContent ?? ''), null, { timeout: MINUTE });
  await tabTo(page, page.getByTestId('lab-fill'));
  await page.keyboard.press('Enter');
  await page.getByTestId('lab-fill-error').waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('lab-fill-error').textContent(), /an ELECTRA discriminator: it tells replaced tokens apart and cannot fill a blank/);

  await tabTo(page, page.getByTestId('lab-explore'));
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('ELECTRA discriminator'), null, { timeout: MINUTE });
  assert.match(await page.getByTestId('model-family').innerText(), /ELECTRA/);
  await page.getByTestId('tab-lab').click();
});

test('nothing left the page', async () => {
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
  assert.deepEqual(chrome.problems, []);
});

// Loads the zip's folder with ElectraForPreTraining and prints its class, what loading
// reported missing or unexpected, and whether it gives one logit per token of a text.
const PYTHON_LOAD = `
import json, sys, tempfile, zipfile, os
from transformers import AutoTokenizer, ElectraForPreTraining
d = tempfile.mkdtemp()
zipfile.ZipFile(sys.argv[1]).extractall(d)
d = os.path.join(d, os.listdir(d)[0])
tok = AutoTokenizer.from_pretrained(d)
model, info = ElectraForPreTraining.from_pretrained(d, output_loading_info=True)
problems = {k: v for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
enc = tok("the cow eats grass in the morning and sleeps in the barn.", return_tensors="pt")
out = model(**enc)
print(json.dumps({"model": type(model).__name__, "problems": problems, "a_logit_per_token": out.logits.shape == enc["input_ids"].shape}))
`;
