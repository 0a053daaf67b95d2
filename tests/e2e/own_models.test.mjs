// "Your own model": every family and format that scripts/make_test_models.py writes to
// tests/models (small random-weight models made by PyTorch transformers, with what PyTorch
// computes on them) is picked as a user picks a folder, and for each the page shows its facts,
// tokenizes as transformers does and embeds within 1e-4 of PyTorch. A decoder-only model is
// refused by name with the model in use kept. After a browser restart, with the network off, a
// kept model opens again from this browser's storage. Nothing leaves the page's origin.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { serve, offOriginRequests, screenshot, embedSentence, maxAbsDiff, pick, ROOT, CHROMIUM_FLAGS } from './harness.mjs';
import { predict } from './studio_helpers.mjs';

const MINUTE = 60_000;
const MODELS = join(ROOT, 'tests', 'models');
const FAMILY = { bert: 'BERT', roberta: 'RoBERTa', distilbert: 'DistilBERT', electra: 'ELECTRA', 'xlm-roberta': 'XLM-RoBERTa', camembert: 'CamemBERT', albert: 'ALBERT', mpnet: 'MPNet', modernbert: 'ModernBERT', 'deberta-v2': 'DeBERTa-v2' };
// What the panel says sets each family's architecture apart, where something does.
const APART = { albert: /projected up to 32; one layer's parameters shared by all 3 layers/, mpnet: /learned bias in every attention for the distance between words \(32 buckets/, distilbert: /no sentence A\/B segment embeddings; no pooler/, modernbert: /rotary positions.*pre-norm layers.*GeGLU.*local attention in 2 of 4 layers: each token sees only the 8 tokens either side \(window 16\)/, 'deberta-v2': /disentangled attention: content and relative position scored apart/ };
// The variants of a family (`scripts/make_variant_models.py`) are set apart by their own block.
const APART_BY_NAME = {
  'albert-groups': /projected up to 32; 2 groups of 2 layers, run one after the other, the 3 depths split evenly among them/,
  'deberta-conv': /a convolution over 3 neighbouring tokens of the embeddings, in 2 channel groups, added to the first layer's output/,
  'deberta-norel': /no relative positions \(relative_attention false\): attention scores content against content only/,
  'bert-relative-key': /relative distances \(relative_key\): every layer learns a vector for each distance between two words up to 63.*no absolute positions/,
  'bert-relative-key-query': /relative distances \(relative_key_query\): .*a score adds the query's and the key's dot products with it; no absolute positions/,
};
let server, profile;
const contexts = [];
const requested = [];

async function open() {
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_FLAGS, viewport: { width: 1200, height: 900 },
  });
  contexts.push(context);
  const page = context.pages()[0] ?? await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  context.on('request', (r) => requested.push(r.url()));
  await page.goto(server.origin + '/#explore');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  return { context, page, problems };
}

/** The mean of the hidden states PyTorch gave: the page's default (mean) embedding. */
function meanPooled(hidden) {
  const width = hidden[0].length;
  return Array.from({ length: width }, (_, k) => hidden.reduce((s, row) => s + row[k], 0) / hidden.length);
}

/** Vocabulary id → piece, from the folder's tokenizer.json, else its vocab.json (an older
 * RoBERTa's, {piece: id}), else its vocab.txt. */
async function pieces(name) {
  const dir = join(MODELS, name);
  const bpe = await readFile(join(dir, 'vocab.json'), 'utf8').catch(() => null);
  if (bpe) return Object.fromEntries(Object.entries(JSON.parse(bpe)).map(([p, id]) => [id, p]));
  try {
    const vocab = JSON.parse(await readFile(join(dir, 'tokenizer.json'), 'utf8')).model.vocab;
    // WordPiece and BPE: {piece: id}; Unigram (SentencePiece): [[piece, score], …] by id.
    if (Array.isArray(vocab)) return Object.fromEntries(vocab.map(([p], id) => [id, p]));
    return Object.fromEntries(Object.entries(vocab).map(([p, id]) => [id, p]));
  } catch {
    return Object.fromEntries((await readFile(join(dir, 'vocab.txt'), 'utf8')).split('\n').map((p, id) => [id, p]));
  }
}

/** Types each of transformers' fill-mask texts into the explorer's fill-in-the-blank panel:
 * the same five pieces per mask, in order, with probabilities within 1e-4. */
async function checkFillMask(page, name, cases) {
  // A folder with only SentencePiece's model file has no vocabulary to read here: transformers'
  // pieces come with its fills.
  const vocab = cases.every((c) => c.masks.every((m) => m.pieces)) ? null : await pieces(name);
  for (const { text, masks } of cases) {
    await page.getByTestId('fillmask-input').fill(text);
    await page.getByTestId('fillmask-button').click();
    const result = page.getByTestId('fillmask-result');
    await result.waitFor({ timeout: 3 * MINUTE });
    const blanks = page.getByTestId('fillmask-blank');
    assert.equal(await blanks.count(), masks.length, `${name}: blanks in ${text}`);
    for (const [i, want] of masks.entries()) {
      const blank = blanks.nth(i);
      assert.deepEqual(await blank.getByTestId('fillmask-piece').allTextContents(), want.pieces ?? want.ids.map((id) => vocab[id]), `${name}: top-5 of ${text}`);
      const probs = await blank.getByTestId('fillmask-prob').evaluateAll((spans) => spans.map((s) => Number(s.dataset.p)));
      for (const [j, p] of probs.entries()) assert.ok(Math.abs(p - want.probs[j]) <= 1e-4, `${name}: ${probs} vs ${want.probs}`);
    }
  }
}

/** The masked-language-modelling lesson plays fill-in-the-blank with the opened model: its table
 * holds the same five pieces as transformers' fill-mask pipeline, in order. */
async function checkLessonFill(page, name, { text, masks }) {
  const vocab = masks[0].pieces ? null : await pieces(name);
  await page.goto(page.url().split('#')[0] + '#lesson=masking');
  const field = page.getByTestId('lesson-fill-text');
  await field.waitFor({ timeout: MINUTE });
  await field.fill(text);
  await field.press('Enter');
  const want = masks[0].pieces ?? masks[0].ids.map((id) => vocab[id]);
  await page.waitForFunction((want) => {
    const cells = [...document.querySelectorAll('[data-testid=lesson-fill] td.mono')].map((c) => c.textContent);
    return cells.length === want.length && cells.every((c, i) => c === want[i]);
  }, want, { timeout: 2 * MINUTE });
  await page.getByTestId('tab-explore').click();
}

before(async () => {
  server = await serve();
  profile = await mkdtemp(join(tmpdir(), 'bertbench-own-models-'));
});

after(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await rm(profile, { recursive: true, force: true });
  await server?.close();
});

test('every family and format opens from a folder, tokenizes as transformers and embeds as PyTorch', { timeout: 30 * MINUTE }, async () => {
  const names = JSON.parse(await readFile(join(MODELS, 'index.json'), 'utf8'));
  assert.ok(names.length >= 8, `tests/models holds ${names.length} models; run scripts/make_test_models.py`);
  const { page, problems } = await open();
  let lessonFilled = null;
  for (const name of names) {
    const expected = JSON.parse(await readFile(join(MODELS, name, 'expected.json'), 'utf8'));
    // A head on another folder's encoder (its encoder checked there, and natively): the studio's
    // test below opens some of these.
    if (expected.encoder_of) continue;
    const { ok, text } = await pick(page, join(MODELS, name));
    assert.ok(ok, `${name}: ${text}`);
    const facts = await page.getByTestId('model-facts').innerText();
    assert.match(facts, new RegExp(name), `${name}: facts name the model`);
    // Kept in this browser (once its save ends): listed under the user's own models, by its name.
    await page.waitForFunction((n) => {
      const o = document.querySelector('#model-select option:checked');
      return o?.textContent === n && o.parentElement.label === 'Yours, kept in this browser';
    }, name, { timeout: MINUTE }).catch(async () => assert.fail(`${name}: the model menu shows ${await page.locator('#model-select option:checked').textContent()}`));
    assert.match(await page.getByTestId('model-family').innerText(), new RegExp(FAMILY[expected.family]), `${name}: family`);
    const architecture = await page.getByTestId('model-architecture').innerText();
    assert.match(architecture, APART_BY_NAME[name] ?? APART[expected.family] ?? /BERT's own architecture|no sentence A\/B|no pooler/, `${name}: what sets it apart`);
    if (expected.fill_mask) {
      assert.match(await page.getByTestId('model-heads').innerText(), /masked-language-model head/, `${name}: heads`);
    }
    if (/ForTokenClassification/.test(expected.description)) {
      // A NER model's head is named as what it is, and not taken for a text classifier.
      assert.match(await page.getByTestId('model-heads').innerText(), /token-classification head/, `${name}: heads`);
    }
    const single = expected.texts.find((t) => t.pair === null);
    const vector = await embedSentence(page, single.text, 3 * MINUTE);
    const ids = await page.getByTestId('token-id').allTextContents();
    assert.deepEqual(ids.map(Number), single.input_ids, `${name}: token ids`);
    const error = maxAbsDiff(vector, meanPooled(single.last_hidden_state));
    assert.ok(error <= 1e-4, `${name}: embedding differs from PyTorch by ${error}`);
    if (expected.fill_mask) {
      await checkFillMask(page, name, expected.fill_mask);
      const single = expected.fill_mask.find((c) => c.masks.length === 1);
      if (single && !lessonFilled) {
        await checkLessonFill(page, name, single);
        lessonFilled = name;
      }
    }
    else assert.match(await page.getByTestId('fillmask-unavailable').innerText(), /no masked-language-model head/, `${name}: no fill-mask`);
  }
  await screenshot(page, 'own-model-roberta');
  assert.ok(lessonFilled, 'a model with a masked-language-model head played the lesson\'s fill-in-the-blank');
  assert.deepEqual(problems, []);
});

test('a classifier from the Hub (RoBERTa, id2label) predicts at once in the studio as transformers does', { timeout: 10 * MINUTE }, async () => {
  const page = contexts.at(-1).pages()[0];
  const expected = JSON.parse(await readFile(join(MODELS, 'roberta-classifier', 'expected.json'), 'utf8'));
  const { ok, text } = await pick(page, join(MODELS, 'roberta-classifier'));
  assert.ok(ok, text);
  await page.getByTestId('tab-studio').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=classifier-info]')?.textContent.includes('the head of roberta-classifier'), null, { timeout: 3 * MINUTE });
  assert.match(await page.getByTestId('classifier-info').textContent(), /labels negative, neutral, positive/);
  for (const c of expected.classify) {
    const got = await predict(page, c.text, c.pair ?? '');
    assert.deepEqual(got.labels, ['negative', 'neutral', 'positive']);
    for (const [j, p] of got.probs.entries()) assert.ok(Math.abs(p - c.probs[j]) <= 1e-4, `${c.text}: ${got.probs} vs transformers ${c.probs}`);
  }
  await screenshot(page, 'own-model-classifier');
  await page.getByTestId('tab-explore').click();
});

/** Waits until the studio's current classifier is `name`'s head, then checks its labels and
 * that Predict gives transformers' text-classification pipeline's scores (softmax, or a sigmoid
 * per label for a multi-label head) within 1e-4. */
async function checkHubClassifier(page, name) {
  const expected = JSON.parse(await readFile(join(MODELS, name, 'expected.json'), 'utf8'));
  await page.waitForFunction((n) => document.querySelector('[data-testid=classifier-info]')?.textContent.includes(`the head of ${n};`), name, { timeout: 3 * MINUTE });
  const labels = expected.classify[0].labels;
  assert.match(await page.getByTestId('classifier-info').textContent(), new RegExp(`labels ${labels.join(', ')}$`));
  for (const c of expected.classify) {
    const got = await predict(page, c.text, c.pair ?? '');
    assert.deepEqual(got.labels, labels, name);
    for (const [j, p] of got.probs.entries()) assert.ok(Math.abs(p - c.probs[j]) <= 1e-4, `${name}, ${c.text}: ${got.probs} vs the pipeline's ${c.probs}`);
  }
}

test('each model opened brings its own head to the studio or none: a multi-label BERT, a binary ModernBERT saved without id2label, then a plain encoder', { timeout: 15 * MINUTE }, async () => {
  const page = contexts.at(-1).pages()[0];
  let { ok, text } = await pick(page, join(MODELS, 'bert-multilabel'));
  assert.ok(ok, text);
  await page.getByTestId('tab-studio').click();
  await checkHubClassifier(page, 'bert-multilabel');
  assert.equal(await page.getByTestId('prediction').getAttribute('data-multi-label'), 'true');
  assert.match(await page.getByTestId('prediction-note').textContent(), /each label's own probability \(a sigmoid each/);
  assert.ok(await page.getByTestId('task-multilabel').isChecked(), 'a multi-label head opens the multi-label mode');
  assert.match(await page.getByTestId('studio-notice').textContent(), /carries a multi-label classifier \(4 labels, each a yes or no of its own\)/);
  await screenshot(page, 'own-model-multilabel');
  // The next folder's head replaces it: transformers 5 writes no id2label for two labels.
  ({ ok, text } = await pick(page, join(MODELS, 'modernbert-binary-v5')));
  assert.ok(ok, text);
  await checkHubClassifier(page, 'modernbert-binary-v5');
  assert.equal(await page.getByTestId('prediction').getAttribute('data-multi-label'), 'false');
  assert.equal(await page.getByTestId('prediction-note').count(), 0, 'a softmax over the labels has no multi-label note');
  // A folder without a head leaves the studio with none, and says so.
  ({ ok, text } = await pick(page, join(MODELS, 'bert-cased-vocab')));
  assert.ok(ok, text);
  await page.getByTestId('no-classifier').waitFor({ timeout: MINUTE });
  assert.equal(await page.getByTestId('classifier-info').count(), 0);
  assert.ok(await page.getByTestId('predict-button').isDisabled(), 'nothing to predict with');
  assert.equal(await page.getByTestId('prediction').count(), 0, 'the last model\'s prediction is not left on show');
  assert.match(await page.getByTestId('studio-notice').textContent(), /bert-cased-vocab has no task head, so the studio has no classifier now \(the head of modernbert-binary-v5 belonged to the model before/);
  await page.getByTestId('tab-explore').click();
});

test('a one-output classifier from the Hub scores a single text as transformers does: its raw output, with the sigmoid the pipeline shows unless it is a regression', { timeout: 5 * MINUTE }, async () => {
  const page = contexts.at(-1).pages()[0];
  for (const [name, sigmoid] of [['bert-one-output', true], ['bert-regression', false]]) {
    const expected = JSON.parse(await readFile(join(MODELS, name, 'expected.json'), 'utf8'));
    const { ok, text } = await pick(page, join(MODELS, name));
    assert.ok(ok, text);
    await page.getByTestId('tab-studio').click();
    await page.waitForFunction((n) => document.querySelector('[data-testid=classifier-info]')?.textContent.includes(`the head of ${n};`), name, { timeout: 3 * MINUTE });
    const c = expected.classify[0];
    await page.getByTestId('sim-text').fill(c.text);
    await page.getByTestId('sim-pair').fill('');
    await page.getByTestId('sim-button').click();
    await page.waitForFunction((v) => document.querySelector('[data-testid=sim-score]') && Math.abs(Number(document.querySelector('[data-testid=sim-score]').dataset.value) - v) < 1e-4, c.logits[0], { timeout: MINUTE })
      .catch(async (e) => assert.fail(`${name}: ${e.message}; the page shows ${await page.getByTestId('studio-results').textContent()}`));
    const shown = await page.getByTestId('sim-score').textContent();
    assert.match(shown, /the model's own output \(its config\.json gives no scale/, `${name}: ${shown}`);
    assert.ok(!shown.includes('(0..1)'), `${name}: no 0..1 claimed for a raw output: ${shown}`);
    if (sigmoid) assert.ok(shown.includes(`its sigmoid, as transformers' pipeline shows it: ${c.probs[0].toFixed(3)}`), `${name}: ${shown}`);
    else assert.match(shown, /transformers' regression/, `${name}: ${shown}`);
  }
  await page.getByTestId('tab-explore').click();
});

test('a tagger from the Hub (BERT NER, BIO tags) tags words at once in the studio as transformers does', { timeout: 10 * MINUTE }, async () => {
  const page = contexts.at(-1).pages()[0];
  const expected = JSON.parse(await readFile(join(MODELS, 'bert-ner', 'expected.json'), 'utf8'));
  const { ok, text } = await pick(page, join(MODELS, 'bert-ner'));
  assert.ok(ok, text);
  await page.getByTestId('tab-studio').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=classifier-info]')?.textContent.includes('the head of bert-ner'), null, { timeout: 3 * MINUTE });
  assert.match(await page.getByTestId('studio-notice').textContent(), /carries a tagger \(5 tags: O, B-PER, I-PER, B-LOC, I-LOC\)/);
  assert.ok(await page.getByTestId('task-tag').isChecked(), 'the studio switches to tagging');
  for (const c of expected.tag) {
    await page.getByTestId('tag-text').fill(c.text);
    const answered = await page.evaluate(() => Number(document.querySelector('[data-testid=tag-answer]')?.dataset.answer ?? 0));
    await page.getByTestId('tag-button').click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid=tag-answer]')?.dataset.answer ?? 0) > n, answered, { timeout: MINUTE });
    const words = await page.getByTestId('tagged-word').evaluateAll((rows) => rows.map((r) => ({ word: r.querySelector('td').textContent, probs: JSON.parse(r.dataset.probs) })));
    assert.deepEqual(words.map((w) => w.word), c.words, c.text);
    for (const [i, w] of words.entries()) {
      for (const [j, p] of w.probs.entries()) assert.ok(Math.abs(p - c.word_probs[i][j]) <= 1e-4, `${c.text}, ${w.word}: ${w.probs} vs transformers ${c.word_probs[i]}`);
    }
  }
  await page.getByTestId('task-classify').check();
  await page.getByTestId('tab-explore').click();
});

test('a question-answering model from the Hub answers at once in the studio, with transformers\' start and end probabilities', { timeout: 10 * MINUTE }, async () => {
  const page = contexts.at(-1).pages()[0];
  const expected = JSON.parse(await readFile(join(MODELS, 'bert-qa', 'expected.json'), 'utf8'));
  const { ok, text } = await pick(page, join(MODELS, 'bert-qa'));
  assert.ok(ok, text);
  await page.getByTestId('tab-studio').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=classifier-info]')?.textContent.includes('the head of bert-qa'), null, { timeout: 3 * MINUTE });
  assert.match(await page.getByTestId('studio-notice').textContent(), /bert-qa answers questions/);
  assert.ok(await page.getByTestId('task-answer').isChecked(), 'the studio switches to question answering');
  const softmax = (xs) => { const m = Math.max(...xs); const e = xs.map((x) => Math.exp(x - m)); const s = e.reduce((a, b) => a + b, 0); return e.map((x) => x / s); };
  for (const c of expected.answer) {
    await page.getByTestId('qa-context').fill(c.context);
    await page.getByTestId('qa-question').fill(c.question);
    const answered = await page.evaluate(() => Number(document.querySelector('[data-testid=qa-answer]')?.dataset.answer ?? 0));
    await page.getByTestId('qa-button').click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid=qa-answer]')?.dataset.answer ?? 0) > n
      || document.querySelector('[data-testid=predict-error]'), answered, { timeout: MINUTE });
    if (await page.getByTestId('predict-error').count()) assert.fail(await page.getByTestId('predict-error').textContent());
    const probs = await page.locator('.qa-tok').evaluateAll((ts) => ts.map((t) => JSON.parse(t.dataset.probs)));
    // The passage's tokens: between the first [SEP] and the last.
    const sep = c.input_ids.at(-1);
    const passage = [...c.input_ids.keys()].slice(c.input_ids.indexOf(sep) + 1, -1);
    const [start, end] = [softmax(c.start_logits), softmax(c.end_logits)];
    assert.equal(probs.length, passage.length, c.question);
    passage.forEach((p, i) => assert.ok(Math.abs(probs[i][0] - start[p]) <= 1e-4 && Math.abs(probs[i][1] - end[p]) <= 1e-4,
      `${c.question}, token ${i}: ${probs[i]} vs transformers ${[start[p], end[p]]}`));
  }
  await page.getByTestId('task-classify').check();
  await page.getByTestId('tab-explore').click();
});

test('continued pretraining in the lab starts from the model\'s own MLM head: its probes before training fill as transformers does', { timeout: 10 * MINUTE }, async () => {
  const page = contexts.at(-1).pages()[0];
  const expected = JSON.parse(await readFile(join(MODELS, 'bert-mlm', 'expected.json'), 'utf8'));
  const vocab = await pieces('bert-mlm');
  const { ok, text } = await pick(page, join(MODELS, 'bert-mlm'));
  assert.ok(ok, text);
  await page.getByTestId('tab-lab').click();
  const lines = expected.fill_mask.map((c) => c.text.replaceAll('[MASK]', 'dog'));
  await page.getByTestId('lab-file').setInputFiles({ name: 'few.txt', mimeType: 'text/plain', buffer: Buffer.from(Array(10).fill(lines).flat().join('\n')) });
  await page.waitForFunction(() => document.querySelector('[data-testid=lab-corpus]')?.textContent.includes('few.txt: 20 lines'), null, { timeout: MINUTE });
  await page.selectOption('[data-testid=lab-model]', 'continue');
  assert.match(await page.locator('[data-testid=lab-model] option:checked').textContent(), /from its own MLM head/);
  await page.getByTestId('lab-epochs').fill('1');
  await page.getByTestId('lab-epochs').dispatchEvent('change');
  await page.getByTestId('lab-probes-input').fill(expected.fill_mask[0].text);
  await page.getByTestId('lab-start').click();
  await page.getByTestId('lab-done').waitFor({ timeout: 5 * MINUTE });
  // "before training": "piece p%, piece p%, …" for the probe's one mask.
  const before = await page.locator('[data-testid=lab-probe] td:nth-child(2)').first().textContent();
  const shown = before.split(', ').map((s) => s.slice(0, s.lastIndexOf(' ')));
  assert.deepEqual(shown, expected.fill_mask[0].masks[0].ids.map((id) => vocab[id]), `before training: ${before}`);
  await page.getByTestId('tab-explore').click();
});

test('a model\'s files dropped on the panel open as a model', { timeout: 5 * MINUTE }, async () => {
  const page = contexts.at(-1).pages()[0];
  const dir = join(MODELS, 'distilbert');
  const names = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
  const files = await Promise.all(names.map(async (name) => ({ name, data: (await readFile(join(dir, name))).toString('base64') })));
  await page.evaluate((files) => {
    const transfer = new DataTransfer();
    for (const { name, data } of files) transfer.items.add(new File([Uint8Array.from(atob(data), (c) => c.charCodeAt(0))], name));
    document.querySelector('[data-testid=open-model]').dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }, files);
  await page.waitForFunction(() => document.querySelector('[data-testid=open-model-error]') || document.querySelector('[data-testid=open-model-note]')?.textContent.includes('Opened'), null, { timeout: 3 * MINUTE });
  const refused = page.getByTestId('open-model-error');
  if (await refused.count() > 0) assert.fail(`the dropped files were refused: ${await refused.textContent()}`);
  await page.waitForFunction(() => document.querySelector('[data-testid=model-family]')?.textContent.includes('DistilBERT'), null, { timeout: MINUTE });
  const expected = JSON.parse(await readFile(join(dir, 'expected.json'), 'utf8'));
  const single = expected.texts.find((t) => t.pair === null);
  const vector = await embedSentence(page, single.text, 3 * MINUTE);
  const error = maxAbsDiff(vector, meanPooled(single.last_hidden_state));
  assert.ok(error <= 1e-4, `dropped distilbert: embedding differs from PyTorch by ${error}`);
});

test('a decoder-only model is refused by name and the model in use stays', { timeout: 10 * MINUTE }, async () => {
  const page = contexts.at(-1).pages()[0];
  const before = await page.getByTestId('model-facts').innerText();
  const dir = await mkdtemp(join(tmpdir(), 'gpt2-'));
  await writeFile(join(dir, 'config.json'), JSON.stringify({ model_type: 'gpt2', n_layer: 2 }));
  await writeFile(join(dir, 'model.safetensors'), Buffer.alloc(16));
  await writeFile(join(dir, 'tokenizer.json'), '{}');
  const { ok, text } = await pick(page, dir);
  assert.ok(!ok);
  assert.match(text, /decoder-only/);
  assert.match(text, /bert, roberta, distilbert, electra, xlm-roberta, camembert/);
  assert.equal(await page.getByTestId('model-facts').innerText(), before);
  await rm(dir, { recursive: true, force: true });
});

test('a model too big for the tab is refused before it is read, naming the limit', { timeout: 10 * MINUTE }, async () => {
  const page = contexts.at(-1).pages()[0];
  const before = await page.getByTestId('model-facts').innerText();
  const dir = await mkdtemp(join(tmpdir(), 'huge-'));
  // What config.json says is enough to know: 48 layers of width 8192 are 38 G parameters.
  await writeFile(join(dir, 'config.json'), JSON.stringify({ model_type: 'bert', hidden_size: 8192, num_hidden_layers: 48, num_attention_heads: 64, intermediate_size: 32768 }));
  // A readable safetensors file (one small tensor): the size is refused, not the file.
  const header = Buffer.from(JSON.stringify({ 'embeddings.word_embeddings.weight': { dtype: 'F32', shape: [1], data_offsets: [0, 4] } }));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(header.length));
  await writeFile(join(dir, 'model.safetensors'), Buffer.concat([length, header, Buffer.alloc(4)]));
  await writeFile(join(dir, 'vocab.txt'), '[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n');
  const { ok, text } = await pick(page, dir);
  assert.ok(!ok);
  assert.match(text, /M-parameter model needs about [\d.]+ GB for its weights; this tab can address 4 GB/);
  assert.equal(await page.getByTestId('model-facts').innerText(), before);
  await rm(dir, { recursive: true, force: true });
});

test('a kept model opens again after a browser restart with the network off', { timeout: 10 * MINUTE }, async () => {
  for (const c of contexts.splice(0)) await c.close();
  const { context, page, problems } = await open();
  await page.getByTestId('tab-studio').click(); // the saved-work list is on the studio tab
  const row = page.getByTestId('saved-item').filter({ hasText: /(?<!-)roberta(?!-)/ });
  await row.waitFor({ timeout: MINUTE });
  assert.match(await row.innerText(), /your model/);
  await context.setOffline(true);
  await row.getByTestId('open-saved').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=model-family]')?.textContent.includes('RoBERTa'), null, { timeout: 3 * MINUTE });
  await context.setOffline(false);
  assert.deepEqual(problems, []);
  assert.deepEqual(offOriginRequests(requested, server.origin), []);
});
