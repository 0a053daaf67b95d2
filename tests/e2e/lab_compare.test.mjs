// The MLM lab's comparison of runs and its shared-layer (ALBERT) model, on the CPU fallback, by
// keyboard where a keyboard user would: two short runs of BERT-tiny at different masking rates
// each add a row to "Runs compared", whose sentence gives the rows' own numbers; a model with one
// layer shared by its two layers shows fewer parameters, trains, fills a blank, saves as ALBERT
// (loaded by `transformers` where it is installed), opens in the explorer and fine-tunes in the
// studio; an MLM + SOP run joins, "Fine-tune each" trains a head on every run's encoder and the
// table and its sentence give their accuracies; the comparison passes axe-core's audit and
// "Clear" empties it.
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

/** "4.4 M" / "850.3 k" / "950" as a number. */
const count = (text) => {
  const [, n, unit] = text.match(/([\d.]+)\s*([kM]?)/);
  return Number(n) * ({ k: 1e3, M: 1e6 }[unit] ?? 1);
};

test('two runs at different masking rates: two rows, their curves overlaid, and a sentence of their own numbers', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('lab-file').setInputFiles({ name: 'farm.txt', mimeType: 'text/plain', buffer: Buffer.from(farmCorpus()) });
  await page.waitForFunction(() => document.querySelector('[data-testid=lab-corpus]')?.textContent.includes('farm.txt: 96 lines'), null, { timeout: MINUTE });
  await chooseByKeys(page, 'lab-model', 'bert-tiny');
  await chooseByKeys(page, 'lab-vocab-choice', '1000');
  await typeInto(page, page.getByTestId('lab-epochs'), '8');
  await page.keyboard.press('Tab');
  await typeInto(page, page.getByTestId('lab-probes-input'), 'the cow eats [MASK] in the morning.');
  assert.equal(await page.getByTestId('lab-compare').count(), 0, 'nothing to compare before a run');

  await chooseByKeys(page, 'lab-mask-rate', '0.05');
  await trainKept(page, 1);
  assert.match(await page.getByTestId('lab-compare-sentence').textContent(), /Change a setting .* and train again/);
  await chooseByKeys(page, 'lab-mask-rate', '0.4');
  await trainKept(page, 2);

  const [low, high] = await keptRows(page);
  assert.deepEqual([low.name, high.name], ['#1', '#2']);
  // Only the masking rate differs, and only it is listed.
  assert.deepEqual([low.cells[0], high.cells[0]], ['masked 5%', 'masked 40%']);
  // Same model, steps; more tokens predicted per step at 40% than at 5%. Each run trains its own
  // vocabulary on the same corpus, and the trainer gives the same vocabulary every time
  // (`tokenizer::trainer`), so the two models have the same parameters.
  assert.equal(low.params, high.params);
  assert.deepEqual([low.cells[2], high.cells[2]], ['24', '24']);
  const [pickedLow, pickedHigh] = [Number(low.cells[4]), Number(high.cells[4])];
  assert.ok(pickedLow >= 32 && pickedHigh > 2 * pickedLow, `predicted per step: ${pickedLow} at 5%, ${pickedHigh} at 40%`);

  // The sentence names the row with the lower loss and the row with the higher accuracy, with
  // the rows' own numbers, at the step both reached.
  const said = await page.getByTestId('lab-compare-sentence').textContent();
  const name = (r) => `${r.name} (masked ${r === low ? 5 : 40}%)`;
  // The runs the rows' rounded numbers allow (both where they round alike).
  const lower = [low, high].filter((r) => Number(r.loss) === Math.min(Number(low.loss), Number(high.loss)));
  const better = [low, high].filter((r) => parseFloat(r.accuracy) === Math.max(parseFloat(low.accuracy), parseFloat(high.accuracy)));
  assert.ok(said.startsWith('At step 24, '), said);
  const lead = lower.flatMap((l) => better.map((b) => l === b
    ? `${name(l)} had both the lowest MLM loss (${l.loss}) and the highest masked-token accuracy (${b.accuracy})`
    : `${name(l)} had the lowest MLM loss (${l.loss}), but ${name(b)} the highest masked-token accuracy (${b.accuracy})`));
  assert.ok(lead.some((l) => said.includes(l)), `${said}\nexpected one of ${lead.join(' / ')}`);
  assert.ok(said.includes(' #1 and #2 differ in the masking rate alone (5% and 40%): their losses are not like for like'), said);
  assert.ok(said.includes(`#1 predicted ${pickedLow} tokens per step, #2 ${pickedHigh}`), said);
  // The cost of too little or too much masking is named only where the accuracies show it.
  if (better.length === 1) {
    assert.equal(said.includes(`a lower accuracy by this step (${low.accuracy} against ${high.accuracy}), which fits the point that too little masking is expensive`), better[0] === high, said);
    assert.equal(said.includes(`#2 guessed fewer of them right (${high.accuracy} against ${low.accuracy})`), better[0] === low, said);
    assert.equal(said.includes('less context is left to predict from'), better[0] === low, said);
  }

  // Run #1's curves are drawn over run #2's, and end at its row's numbers.
  for (const [chart, what, value] of [['lab-loss', 'MLM loss', Number(low.loss)], ['lab-accuracy', 'accuracy', parseFloat(low.accuracy) / 100]]) {
    assert.match(await page.getByTestId(chart).locator('figcaption').textContent(), new RegExp(`#1 \\(masked 5%\\) ${what}`));
    const series = JSON.parse(await page.getByTestId(chart).getAttribute('data-values'));
    assert.equal(series.length, 2, `${chart}: the current run and run #1`);
    assert.ok(Math.abs(series[1].at(-1) - value) < 6e-4, `${chart}: ${series[1].at(-1)} against the row's ${value}`);
  }
});

test('one layer shared by all: fewer parameters at the same depth, it trains, fills, saves as ALBERT, explores and fine-tunes', { timeout: 12 * MINUTE }, async (t) => {
  const { page } = chrome;
  // The menu gives both choices' parameter counts at this size.
  const labels = await page.getByTestId('lab-sharing').evaluate((s) => [...s.options].map((o) => o.textContent));
  assert.equal(labels.length, 2);
  assert.match(labels[0], /^each of the 2 layers its own weights \(BERT\): [\d.]+ [kM]? ?parameters$/);
  assert.match(labels[1], /^share one layer across all 2 layers \(ALBERT\): [\d.]+ [kM]? ?parameters$/);
  const [own, shared] = labels.map((l) => count(l.split(': ')[1]));
  assert.ok(shared < own, `${labels}`);

  // ALBERT has no next-sentence head: refused, with why.
  await chooseByKeys(page, 'lab-sharing', 'shared');
  await chooseByKeys(page, 'lab-pair', 'nsp');
  await tabTo(page, page.getByTestId('lab-start'));
  await page.keyboard.press('Enter');
  await page.getByTestId('lab-message').waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('lab-message').textContent(), /AlbertForPreTraining has no next-sentence head.*pick “MLM \+ sentence-order prediction” or “MLM only”/);
  assert.equal(await page.getByTestId('lab-compare-row').count(), 2, 'no run started');
  await chooseByKeys(page, 'lab-pair', 'none');
  await trainKept(page, 3);

  const all = await keptRows(page);
  const [, unshared, albert] = all;
  assert.equal(albert.name, '#3');
  assert.match(albert.cells[0], /layers 2, one shared \(ALBERT\)/);
  assert.match(unshared.cells[0], /layers 2, each its own/);
  assert.ok(albert.params < unshared.params, `${albert.params} < ${unshared.params}`);
  assert.match(await page.getByTestId('lab-progress').textContent(), new RegExp(` ${albert.cells[1]} parameters`));
  const said = await page.getByTestId('lab-compare-sentence').textContent();
  const ratio = (unshared.params / albert.params).toFixed(1);
  assert.ok(said.includes(` #3 shares one layer across its 2 layers: ${ratio}× fewer parameters than #2 at the same depth (${albert.cells[1]} against ${unshared.cells[1]}), for an MLM loss of ${albert.loss} against ${unshared.loss} and an accuracy of ${albert.accuracy} against ${unshared.accuracy}.`), said);
  // #1 and #2 still make the masking comparison; each comparison is of two runs alike but in one setting.
  assert.ok(said.includes(' #1 and #2 differ in the masking rate alone (5% and 40%)'), said);
  assert.ok(said.endsWith(' The runs differ in 2 settings (layers, masked); each comparison above is between two runs that differ in one of them alone.'), said);
  // It learnt: below a uniform guess over its vocabulary.
  const pieces = Number((await page.getByTestId('lab-vocab').textContent()).match(/vocabulary: (\d+) pieces/)[1]);
  assert.ok(Number(albert.loss) < Math.log(pieces), `MLM loss ${albert.loss}, ln ${pieces} = ${Math.log(pieces)}`);

  // The comparison, drawn, passes axe-core's audit (as every tab does in accessibility.test.mjs).
  await page.evaluate(await readFile(new URL('./node_modules/axe-core/axe.min.js', import.meta.url), 'utf8'));
  const violations = await page.evaluate(async () => (await globalThis.axe.run({ include: [['[data-testid=lab-panel]']] }, { resultTypes: ['violations'] }))
    .violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.slice(0, 4).map((n) => n.target.join(' ')).join(' | ')}`));
  assert.deepEqual(violations, []);
  await page.getByTestId('lab-compare').scrollIntoViewIfNeeded();
  await screenshot(page, 'lab-runs-compared');

  // Fill in a blank, and save it: an ALBERT under ALBERT's names, its WordPiece vocabulary named
  // for BertTokenizer.
  await typeInto(page, page.getByTestId('lab-fill-input'), 'the cow eats [MASK] in the morning.');
  await tabTo(page, page.getByTestId('lab-fill'));
  await page.keyboard.press('Enter');
  await page.getByTestId('lab-fill-result').waitFor({ timeout: MINUTE });
  const fills = [...(await page.getByTestId('lab-fill-result').textContent()).matchAll(/(\S+) (\d+)%/g)].map((m) => [m[1], Number(m[2])]);
  assert.equal(fills.length, 5, `${fills}`);
  const download = page.waitForEvent('download');
  await tabTo(page, page.getByTestId('lab-save'));
  await page.keyboard.press('Enter');
  const zipPath = join(ARTIFACTS, 'lab-albert.zip');
  await (await download).saveAs(zipPath);
  const zip = (await readFile(zipPath)).toString('latin1');
  assert.ok(zip.includes('"model_type": "albert"') && zip.includes('"AlbertForMaskedLM"'), 'an AlbertForMaskedLM');
  assert.ok(zip.includes('albert.encoder.albert_layer_groups.0.albert_layers.0.ffn.weight'), 'the one shared layer under its ALBERT name');
  assert.ok(!zip.includes('albert_layers.1.'), 'no second layer');
  assert.ok(zip.includes('"tokenizer_class": "BertTokenizer"'), 'tokenizer_config.json names BertTokenizer');

  // transformers reads the zip as the page does: the same top five, the same percentages.
  const python = process.env.BERTBENCH_PYTHON ?? 'python3';
  if (spawnSync(python, ['-c', 'import torch, transformers'], { stdio: 'ignore' }).status !== 0) {
    assert.ok(!process.env.BERTBENCH_REQUIRE_TORCH, `${python} cannot import torch and transformers`);
    t.diagnostic('skipped the transformers check: no PyTorch/transformers');
  } else {
    const check = spawnSync(python, ['-c', PYTHON_FILL, zipPath, 'the cow eats [MASK] in the morning.'], { encoding: 'utf8', env: { ...process.env, TQDM_DISABLE: '1' } });
    assert.equal(check.status, 0, check.stdout + check.stderr);
    const theirs = JSON.parse(check.stdout.trim().split('\n').at(-1));
    assert.deepEqual([theirs.model, theirs.tokenizer, theirs.problems], ['AlbertForMaskedLM', 'BertTokenizer', {}]);
    assert.deepEqual(theirs.top.map(([piece]) => piece), fills.map(([piece]) => piece), `transformers ${JSON.stringify(theirs.top)}, the page ${fills}`);
    theirs.top.forEach(([, p], i) => assert.ok(Math.abs(p * 100 - fills[i][1]) <= 0.51, `${p} against ${fills[i][1]}%`));
  }

  // Explore it: the page's model is the shared-layer one.
  await tabTo(page, page.getByTestId('lab-explore'));
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('MLM lab (bert-tiny, one shared layer) #3'), null, { timeout: MINUTE });
  assert.match(await page.getByTestId('model-facts').textContent(), /ALBERT/);
  await page.waitForFunction(() => {
    const rows = [...document.querySelectorAll('[data-testid=attention-heatmap] [data-testid=attention-row]')];
    return rows.length > 0 && rows.every((g) => Math.abs([...g.querySelectorAll('rect')].reduce((s, r) => s + Number(r.dataset.w), 0) - 1) < 1e-3);
  }, null, { timeout: 2 * MINUTE });

  // Fine-tune it in the studio, all of it, for an epoch.
  await page.getByTestId('tab-lab').click();
  await tabTo(page, page.getByTestId('lab-to-studio'));
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid=tab-studio]')?.classList.contains('active'), null, { timeout: MINUTE });
  await page.getByTestId('use-example').click();
  await page.getByTestId('validation-report').waitFor({ timeout: MINUTE });
  await page.selectOption('[data-testid=train-mode]', 'full');
  await page.locator('[data-testid=studio-train] details > summary').click();
  await page.getByTestId('epochs').fill('1');
  await page.getByTestId('epochs').dispatchEvent('change');
  await page.getByTestId('train-start').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=run-row]').length === 1 || document.querySelector('[data-testid=train-error]'), null, { timeout: 4 * MINUTE });
  assert.equal(await page.getByTestId('train-error').count(), 0);
  assert.match(await page.getByTestId('run-row').textContent(), /MLM lab \(bert-tiny, one shared layer\) #3/);
  const accuracy = parseFloat(await page.getByTestId('run-accuracy').first().textContent());
  assert.ok(accuracy >= 0 && accuracy <= 100, `${accuracy}`);
});

test('MLM + SOP beside MLM alone, then "Fine-tune each": a head on every run\'s encoder, its accuracy in the table and a sentence of those numbers', { timeout: 8 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('tab-lab').click();
  // #4: #2's settings but sentence-order prediction beside MLM.
  await chooseByKeys(page, 'lab-sharing', 'own');
  await chooseByKeys(page, 'lab-pair', 'sop');
  await trainKept(page, 4);
  assert.match((await keptRows(page))[3].cells[0], /objective MLM \+ SOP/);

  const studioRuns = await page.getByTestId('run-row').count();
  await tabTo(page, page.getByTestId('lab-fine-tune-each'));
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => {
    const said = document.querySelector('[data-testid=lab-downstream-status]')?.textContent ?? '';
    return said !== '' && !said.startsWith('Fine-tuning') && !document.querySelector('[data-testid=lab-fine-tune-each]').disabled;
  }, null, { timeout: 6 * MINUTE });
  const status = await page.getByTestId('lab-downstream-status').textContent();
  assert.match(status, /^Each run's head is trained/, status);
  const downstream = await page.getByTestId('lab-compare-row').evaluateAll((trs) => trs.map((tr) => Number(tr.querySelector('td[data-downstream]')?.dataset.downstream)));
  console.log(`# downstream accuracies: ${downstream}`);
  assert.equal(downstream.length, 4);
  for (const a of downstream) assert.ok(a >= 0 && a <= 1, `${downstream}`);
  // Each run's head trained in the studio's worker, one studio run each, named by its lab run.
  const names = await page.getByTestId('run-row').evaluateAll((trs) => trs.map((tr) => tr.textContent));
  assert.equal(names.length, studioRuns + 4);
  for (const n of [1, 2, 3, 4]) assert.ok(names.some((t) => t.includes(`MLM lab run #${n}`)), `studio runs: ${names.join(' / ')}`);
  // The sentence names the best and the worst run with the table's numbers, and calls a gap of
  // two held-out texts or less no difference (the built-in examples hold out a quarter).
  const said = await page.getByTestId('lab-downstream-sentence').textContent();
  const pct = (a) => `${(a * 100).toFixed(1)}%`;
  const [best, worst] = [Math.max(...downstream), Math.min(...downstream)];
  assert.ok(said.includes(`scored ${pct(best)} on the `) && said.includes(` ${pct(worst)}.`), `${said} (${downstream})`);
  const texts = Number(said.match(/on the (\d+) held-out texts/)[1]);
  assert.match(said, best - worst <= 2 / texts + 1e-6 ? /too few to say one pretraining served the task better\.$/ : /served this task better\.$/, said);
  await page.getByTestId('lab-compare').scrollIntoViewIfNeeded();
  await screenshot(page, 'lab-fine-tune-each');

  // Lesson 5's question on it: whose encoder gave the best head, answered from the table.
  await page.evaluate(() => { location.hash = '#lesson=pairs'; });
  await page.getByTestId('check-pairs-downstream').waitFor({ timeout: MINUTE });
  await expectRight(page, 'pairs-downstream', { index: downstream.indexOf(best) });
  await page.getByTestId('tab-lab').click();
});

test('"Clear the comparison" empties the table and takes the kept curves off the charts', { timeout: 2 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('tab-lab').click();
  assert.equal(JSON.parse(await page.getByTestId('lab-loss').getAttribute('data-values')).length, 5, "run #4's MLM and SOP losses, and the three runs kept before it");
  await tabTo(page, page.getByTestId('lab-compare-clear'));
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => !document.querySelector('[data-testid=lab-compare]'), null, { timeout: MINUTE });
  assert.equal(JSON.parse(await page.getByTestId('lab-loss').getAttribute('data-values')).length, 2, "the current run's MLM and SOP losses alone");
});

test('nothing left the page', async () => {
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
  assert.deepEqual(chrome.problems, []);
});

/** Loads the lab's zip (argv[1]) with AutoTokenizer and AutoModelForMaskedLM and prints the
 * classes, any loading problem, and the top five pieces for the [MASK] of argv[2]. */
const PYTHON_FILL = `
import json, sys, tempfile, zipfile, torch
from transformers import AutoModelForMaskedLM, AutoTokenizer
d = tempfile.mkdtemp()
zipfile.ZipFile(sys.argv[1]).extractall(d)
d += "/bertbench-mlm"
tok = AutoTokenizer.from_pretrained(d)
model, info = AutoModelForMaskedLM.from_pretrained(d, output_loading_info=True)
model.eval()
problems = {k: v for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
enc = tok(sys.argv[2], return_tensors="pt")
with torch.no_grad():
    logits = model(**enc).logits[0]
at = (enc["input_ids"][0] == tok.mask_token_id).nonzero()[0].item()
p, ids = logits[at].softmax(-1).topk(5)
top = [[piece, prob] for piece, prob in zip(tok.convert_ids_to_tokens(ids.tolist()), p.tolist())]
print(json.dumps({"model": type(model).__name__, "tokenizer": type(tok).__name__, "problems": problems, "top": top}))
`;
