// The studio's other training modes on bert-tiny, CPU fallback: freeze-then-unfreeze runs both of
// its stages; "what did fine-tuning change?" after full fine-tuning shows real change (head-only
// training, tested in studio.test.mjs, leaves every value at 1); a run cancelled part-way keeps
// the weights of its best evaluation, not its last ones; and "Predict a file" writes one CSV row
// per text, with the probabilities the Predict box gives for the same text.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { serve, launch, offOriginRequests, screenshot, ARTIFACTS } from './harness.mjs';
import {
  MINUTE, openStudio, trainingFile, sentimentSample, recipe, train, endOfRun, chartValues, predict, predictFile, csvField, changeTable,
} from './studio_helpers.mjs';

let server, chrome;
let ftuStages = [];

before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  server = await serve();
  chrome = await launch({ webgpu: false });
  await openStudio(chrome.page, server.origin);
  // 48 sentences of the example dataset: a few steps an epoch.
  await trainingFile(chrome.page, 'sentiment-48.csv', await sentimentSample(24), 48);
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

/** Every stage label the progress line shows from now on, in order (recorded in the page, so a
 * stage that lasts a fraction of a second is not missed between two polls). */
async function recordStages(page) {
  await page.evaluate(() => {
    window.stagesShown = [];
    const look = () => {
      const label = document.querySelector('[data-testid=train-progress] b')?.textContent;
      if (label && window.stagesShown.at(-1) !== label) window.stagesShown.push(label);
    };
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

test('freeze, then unfreeze: the head trains on frozen features, then the whole model, and the run finishes', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  const [headEpochs, epochs] = [3, 2];
  await recipe(page, { mode: 'ftu', 'batch-size': 8, 'head-epochs': headEpochs, epochs, 'learning-rate': 0.001, 'eval-every': 0 });
  await recordStages(page);
  const done = await train(page, 'studio-ftu');
  console.log(`# ${done}`);
  const steps = Number(/^Finished after (\d+) steps/.exec(done)?.[1]);
  assert.ok(steps > 0, done);
  // One evaluation per epoch of each stage, and as many steps in every epoch.
  const [trainLoss, validLoss] = await chartValues(page, 'loss-chart');
  const [, validAccuracy] = await chartValues(page, 'accuracy-chart');
  assert.equal(validAccuracy.length, headEpochs + epochs, `evaluations: ${validAccuracy}`);
  assert.equal(validLoss.length, headEpochs + epochs);
  assert.equal(trainLoss.length, steps, 'a loss point per step');
  assert.equal(steps % (headEpochs + epochs), 0, `${steps} steps in ${headEpochs + epochs} epochs`);
  for (const v of [...trainLoss, ...validLoss]) assert.ok(Number.isFinite(v) && v > 0, `loss ${v}`);
  const stages = ftuStages = await page.evaluate(() => window.stagesShown);
  console.log(`# stages shown: ${stages.join(' → ')}`);
  assert.ok(stages.includes('computing frozen features') && stages.includes('training the head'), `stages shown: ${stages}`);
  assert.ok(stages.indexOf('computing frozen features') < stages.indexOf('training the head'), `stages shown: ${stages}`);
  assert.match((await page.getByTestId('run-row').last().textContent()), /bert-tiny.*pretrained.*freeze, then unfreeze · 3 \+ 2 epochs/);
  await screenshot(page, 'studio-ftu');
});

test('freeze, then unfreeze: the progress line names the second stage while it runs', () => {
  assert.ok(ftuStages.includes('fine-tuning everything'), `stages shown: ${ftuStages.join(' → ')}`);
});

test('after full fine-tuning, "what did fine-tuning change?" shows every layer moved from the pretrained model', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  await recipe(page, { mode: 'full', 'batch-size': 8, epochs: 2, 'learning-rate': 0.002, warmup: 0, 'eval-every': 0 });
  const done = await train(page, 'studio-full');
  console.log(`# ${done}`);
  const steps = Number(/^Finished after (\d+) steps/.exec(done)?.[1]);
  assert.ok(steps > 0 && steps % 2 === 0, done);
  assert.equal((await chartValues(page, 'loss-chart'))[0].length, steps);
  const { cka, cosine, text } = await changeTable(page);
  console.log(`# change table: ${text}`);
  assert.equal(cka.length, 3, 'embeddings + 2 layers');
  assert.equal(cosine.length, 3);
  for (const v of cka) assert.ok(Number.isFinite(v) && v >= -1e-3 && v <= 1 + 1e-3, `CKA ${v}`);
  for (const v of cosine) assert.ok(Number.isFinite(v) && v >= -1 - 1e-3 && v <= 1 + 1e-3, `cosine ${v}`);
  // Every weight trained, so every layer's vectors moved: no value is the trivial 1 of an
  // unchanged model, and the last layer changed clearly.
  for (const v of [...cka, ...cosine]) assert.ok(v < 0.9995, `a layer looks unchanged: ${text}`);
  assert.ok(Math.min(cka.at(-1), cosine.at(-1)) < 0.99, `the last layer barely changed: ${text}`);
  // What it kept: the word senses of both models by layer, and a verdict that follows them (a
  // difference of two of the 32 sentences or less does not carry).
  const senses = await page.locator('[data-testid=senses-table] tr[data-model]').evaluateAll((trs) =>
    Object.fromEntries(trs.map((tr) => [tr.dataset.model, [...tr.querySelectorAll('td[data-v]')].map((td) => +td.dataset.v)])));
  assert.deepEqual(Object.keys(senses), ['pretrained', 'fine-tuned']);
  for (const shares of Object.values(senses)) {
    assert.equal(shares.length, 3, 'input embeddings + 2 layers');
    for (const v of shares) assert.ok(v >= 0 && v <= 1, `share ${v}`);
  }
  const mean = (v) => v.slice(1).reduce((a, b) => a + b, 0) / (v.length - 1);
  const [before, after] = [mean(senses.pretrained), mean(senses['fine-tuned'])];
  const kept = await page.getByTestId('senses-kept').textContent();
  console.log(`# senses kept: ${JSON.stringify(senses)}: ${kept}`);
  assert.ok(kept.includes(`over every layer ${Math.round(before * 100)}% against ${Math.round(after * 100)}%`), kept);
  const verdict = after < before - 2 / 32 ? /\(forgetting\)/ : after > before + 2 / 32 ? /better than the pretrained one/ : /within two sentences/;
  assert.match(kept, verdict);
  assert.match(await page.getByTestId('change-summary').textContent(), /CKA/);
  await screenshot(page, 'studio-full-change');
});

// A separate validation file, so the test knows the validation examples and can predict them.
const VALID = [
  ['The soup was lukewarm but the bread was lovely.', 'positive'], ['I would not go back there again.', 'negative'],
  ['A pleasant evening with old friends.', 'positive'], ['The instructions made no sense at all.', 'negative'],
  ['Sunshine, ice cream and a long walk by the sea.', 'positive'], ['The train was late and crowded.', 'negative'],
  ['What a clever little puzzle game.', 'positive'], ['My parcel arrived soaked and torn.', 'negative'],
  ['The garden looks wonderful this spring.', 'positive'], ['The film dragged on for hours.', 'negative'],
  ['Kind nurses and a quick recovery.', 'positive'], ['Nobody answered the phone all week.', 'negative'],
  ['The kids laughed all the way home.', 'positive'], ['Cold coffee and a stale muffin.', 'negative'],
  ['Our new neighbours are very friendly.', 'positive'], ['The printer jammed on every page.', 'negative'],
  ['A cosy cabin with a view of the lake.', 'positive'], ['The hotel lost our booking.', 'negative'],
  ['She sang beautifully tonight.', 'positive'], ['The battery died within an hour.', 'negative'],
];

test('cancelled part-way, a run keeps the weights of its best evaluation: its metrics, mistakes and predictions are that evaluation\'s', { timeout: 6 * MINUTE }, async () => {
  const { page } = chrome;
  const validCsv = ['text,label', ...VALID.map(([t, l]) => `${csvField(t)},${l}`)].join('\n') + '\n';
  await page.getByTestId('valid-file').setInputFiles({ name: 'held-out.csv', mimeType: 'text/csv', buffer: Buffer.from(validCsv) });
  await page.getByText('validating on held-out.csv (20 rows)').waitFor({ timeout: MINUTE });
  const batch = 4;
  const perEpoch = Math.ceil(48 / batch);
  // A high learning rate without warm-up: the weights move a lot at every step.
  await recipe(page, { mode: 'full', 'batch-size': batch, epochs: 40, 'learning-rate': 0.001, warmup: 0, 'eval-every': 0 });
  const runs = await page.getByTestId('run-row').count();
  await page.getByTestId('train-start').click();
  const evaluations = async () => (await chartValues(page, 'accuracy-chart').catch(() => [[], []]))[1].length;
  // Two evaluations of this run (its step count, reset when it starts, is past two epochs).
  await page.waitForFunction((n) => {
    const m = /^step (\d+) \//.exec(document.querySelector('[data-testid=train-detail]')?.textContent ?? '');
    return m && Number(m[1]) >= 2 * n && JSON.parse(document.querySelector('[data-testid=accuracy-chart]')?.dataset.values ?? '[[],[]]')[1].length >= 2;
  }, perEpoch, { timeout: 3 * MINUTE });
  // Pause in the second half of an epoch, so the weights in training are many steps past the
  // last evaluation: a run that kept its last weights instead of its best would show.
  let step, evals;
  for (let tries = 0; ; tries++) {
    assert.ok(tries < 10, 'could not pause in the middle of an epoch');
    await page.waitForFunction((n) => {
      const m = /^step (\d+) \//.exec(document.querySelector('[data-testid=train-detail]')?.textContent ?? '');
      return m && Number(m[1]) % n >= n / 2 && Number(m[1]) % n < n - 4;
    }, perEpoch, { timeout: 2 * MINUTE, polling: 20 });
    await page.getByTestId('train-pause').click();
    await page.getByTestId('paused').waitFor({ timeout: MINUTE });
    const detail = await page.getByTestId('train-detail').textContent();
    step = Number(/^step (\d+) \//.exec(detail)?.[1]);
    evals = await evaluations();
    if (step > evals * perEpoch + 2) break;
    await page.getByTestId('train-pause').click();
    await page.getByTestId('paused').waitFor({ state: 'detached', timeout: MINUTE });
  }
  await page.getByTestId('train-cancel').click();
  await endOfRun(page, runs, 'studio-cancel');
  const done = await page.getByTestId('train-done').textContent();
  assert.match(done, new RegExp(`^Cancelled after ${step} steps .*The best weights are kept\\.$`), done);
  assert.match(await page.getByTestId('run-row').last().textContent(), /\(cancelled\)/);

  // The reported metrics are the best evaluation's.
  const [, accuracies] = await chartValues(page, 'accuracy-chart');
  assert.equal(accuracies.length, evals, 'no evaluation after the pause');
  const best = Math.max(...accuracies);
  console.log(`# validation accuracy at each epoch: ${accuracies.join(', ')}; paused at step ${step} (epoch ${(step / perEpoch).toFixed(2)})`);
  assert.equal(await page.getByTestId('valid-accuracy').textContent(), `${(best * 100).toFixed(1)}%`);
  assert.match(done, new RegExp(`validation accuracy ${(best * 100).toFixed(1)}%`));
  const confusion = await page.locator('[data-testid=confusion] tr').evaluateAll((trs) =>
    trs.slice(1).map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent))));
  const mistakes = await page.locator('[data-testid=mistakes] table tr').evaluateAll((trs) => trs.slice(1).map((tr) => {
    const td = [...tr.querySelectorAll('td')].map((c) => c.textContent);
    return { line: Number(td[0]), label: td[2], predicted: td[3], probs: Object.fromEntries(td[4].split(' · ').map((s) => s.split(' ')).map(([l, p]) => [l, Number(p)])) };
  }));

  // The classifier that remains predicts the validation file exactly as that evaluation did.
  const { rows } = await predictFile(page, 'held-out.csv', validCsv);
  assert.deepEqual(rows[0], ['line', 'text', 'predicted', 'p(negative)', 'p(positive)']);
  assert.equal(rows.length - 1, VALID.length);
  const labels = ['negative', 'positive'];
  const predicted = [[0, 0], [0, 0]];
  const wrong = [];
  for (const [i, [line, text, label, ...p]] of rows.slice(1).entries()) {
    assert.equal(text, VALID[i][0]);
    const truth = VALID[i][1];
    predicted[labels.indexOf(truth)][labels.indexOf(label)] += 1;
    if (label !== truth) wrong.push({ line: Number(line), label: truth, predicted: label, probs: { negative: Number(p[0]), positive: Number(p[1]) } });
  }
  assert.deepEqual(predicted, confusion, 'the confusion matrix of the kept weights');
  const correct = predicted[0][0] + predicted[1][1];
  assert.ok(Math.abs(correct / VALID.length - best) < 1e-6, `the kept weights' accuracy ${correct} / ${VALID.length}, the best evaluation's ${best}`);
  assert.deepEqual(wrong.map((w) => w.line).sort((a, b) => a - b), mistakes.map((m) => m.line).sort((a, b) => a - b), 'the same mistakes');
  for (const m of mistakes) {
    const w = wrong.find((x) => x.line === m.line);
    assert.equal(w.predicted, m.predicted);
    for (const l of labels) assert.ok(Math.abs(w.probs[l] - m.probs[l]) <= 0.0051, `line ${m.line}: the kept weights give ${JSON.stringify(w.probs)}, the best evaluation ${JSON.stringify(m.probs)}`);
  }
  await screenshot(page, 'studio-cancelled');
});

test('"Predict a file": one CSV row per text, with the labels and probabilities of the Predict box', { timeout: 3 * MINUTE }, async () => {
  const { page } = chrome;
  const texts = [
    'An absolute joy from beginning to end.', 'Rude staff, long queues, never again.',
    'It rained, but we still had fun, "as always".', 'The room was fine.', 'Terrible sound and a blurry screen.',
  ];
  const file = ['id,text', ...texts.map((t, i) => `${i + 1},${csvField(t)}`), '6,', `7,${csvField(texts[0])}`].join('\r\n') + '\r\n';
  const { rows, note } = await predictFile(page, 'to-predict.csv', file);
  assert.match(note, /^Predicted 6 rows; downloaded to-predict-predictions\.csv\. 1 empty row\(s\) were skipped\.$/);
  assert.deepEqual(rows[0], ['line', 'text', 'predicted', 'p(negative)', 'p(positive)']);
  const body = rows.slice(1);
  assert.deepEqual(body.map((r) => r[1]), [...texts, texts[0]], 'one row per non-empty text, in file order, quotes and commas intact');
  assert.deepEqual(body.map((r) => Number(r[0])), [2, 3, 4, 5, 6, 8], 'the line of each text in the file');
  for (const [, , label, ...p] of body) {
    const probs = p.map(Number);
    assert.ok(Math.abs(probs[0] + probs[1] - 1) < 1e-5, `${p}`);
    assert.equal(label, probs[0] > probs[1] ? 'negative' : 'positive', `the predicted label is the likelier one: ${label} ${p}`);
  }
  assert.deepEqual(body[5].slice(2), body[0].slice(2), 'the same text, the same row');
  // The Predict box agrees with the file, row by row.
  for (const i of [0, 2, 4]) {
    const typed = await predict(page, texts[i]);
    assert.deepEqual(typed.labels, ['negative', 'positive']);
    for (const j of [0, 1]) assert.ok(Math.abs(typed.probs[j] - Number(body[i][3 + j])) < 5e-6, `${texts[i]}: typed ${typed.probs}, file ${body[i].slice(3)}`);
    assert.equal(body[i][2], typed.probs[0] > typed.probs[1] ? 'negative' : 'positive');
  }
});

test('nothing left the page: every request went to the page origin', async () => {
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
  assert.deepEqual(chrome.problems, []);
});
