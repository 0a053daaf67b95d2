// The lessons tab, as a student with a keyboard uses it: every lesson walked with Tab, typing,
// arrow keys and Enter only; each question answered from the numbers the lesson's view shows
// (as a student would read them), a wrong answer refused first; progress kept after a reload;
// and a teacher's lesson link with its own input reproducing the same view, offline too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, screenshot } from './harness.mjs';
import { tabTo, typeInto, answer, expectRight, next } from './lesson_helpers.mjs';

const MINUTE = 60_000;
const LINKED = "The trophy didn't fit in the suitcase because it was too big.";
let server, chrome;

before(async () => {
  server = await serve();
  chrome = await launch({ webgpu: false });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

/** The attention table's rows: [token, position, weight]. */
const attentionRows = (page) => page.getByTestId('lesson-attention-row').evaluate((t) =>
  [...t.querySelectorAll('tr')].slice(1).map((r) => [r.cells[0].textContent, +r.cells[1].textContent, +r.cells[2].dataset.w]));

test('every lesson by keyboard: its questions answered from the live numbers, progress kept after a reload', { timeout: 25 * MINUTE }, async () => {
  const { page } = chrome;
  await page.goto(server.origin + '/#lessons');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  assert.equal(await page.getByTestId('lesson').getAttribute('data-lesson'), 'tokens');
  assert.equal(await page.getByTestId('lessons-progress').textContent(), '0 of 20 questions answered');

  // 1 · Tokens: the word's pieces, read from the live view after typing it.
  const input = page.getByTestId('lesson-input');
  await typeInto(page, input, 'unbelievably');
  await page.waitForFunction(() => /from the text/.test(document.querySelector('[data-testid=lesson-token-count]')?.textContent) && document.querySelector('[data-testid=lesson-input]').value === 'unbelievably');
  const pieces = await page.getByTestId('lesson-tokens').getByTestId('token').count();
  const fromText = +(/(\d+) from the text/.exec(await page.getByTestId('lesson-token-count').textContent())[1]);
  assert.equal(fromText, pieces - 2);
  assert.match(await answer(page, 'tokens-word', { number: fromText + 1 }), /^Not quite/, 'a wrong count is refused');
  await expectRight(page, 'tokens-word', { number: fromText });
  await expectRight(page, 'tokens-count', { number: pieces });
  // A vocabulary trained in the lesson: a bigger one learns more pieces and cuts the text into no more tokens.
  const vocab = async () => {
    const t = await page.getByTestId('lesson-vocab-count').textContent();
    return { learned: +/^(\d+) pieces learned/.exec(t)[1], tokens: +/becomes (\d+) tokens/.exec(t)[1] };
  };
  await page.getByTestId('lesson-vocab-count').waitFor();
  const smallVocab = await vocab();
  await tabTo(page, page.getByTestId('lesson-vocab-size'));
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction((n) => !document.querySelector('[data-testid=lesson-vocab-count]')?.textContent.startsWith(`${n} pieces`), smallVocab.learned, { timeout: MINUTE });
  const largeVocab = await vocab();
  assert.ok(largeVocab.learned > smallVocab.learned && largeVocab.tokens <= smallVocab.tokens, `${JSON.stringify(smallVocab)} then ${JSON.stringify(largeVocab)}`);
  // The merges one by one (lessons_live.test.mjs steps through them): the first merge is the
  // pair counted most before it, from the live table.
  const pairs = await page.getByTestId('lesson-merge-candidates').locator('tr[data-pair]').evaluateAll((trs) => trs.map((r) => [r.dataset.pair, +r.dataset.count]));
  const firstMerge = pairs.find(([, n]) => n === Math.max(...pairs.map(([, c]) => c)))[0];
  const mergeOptions = await page.getByTestId('check-tokens-first-merge').getByTestId('check-answer').locator('option').allTextContents();
  await expectRight(page, 'tokens-first-merge', { index: mergeOptions.indexOf(firstMerge) - 1 });
  await screenshot(page, 'lesson-tokens');

  // 2 · Input: which looked-up parts of the repeated word differ, and the cosine after LayerNorm.
  await next(page, 'input');
  const parts = page.getByTestId('lesson-input-parts');
  await parts.waitFor({ timeout: 2 * MINUTE });
  const byPart = Object.fromEntries(await parts.locator('tr').evaluateAll((trs) => trs.slice(1).map((r) => [r.cells[0].textContent, +r.cells[1].dataset.v])));
  assert.equal(byPart.token.toFixed(4), '1.0000', 'the same word looks up the same token row');
  assert.ok(byPart.position < 0.9999, 'another position looks up another position row');
  const differ = ['token', 'segment', 'position'].filter((k) => byPart[k] < 0.9999);
  const phrase = differ.length === 1 ? `only the ${differ[0]} part` : `the ${differ.join(' and the ')} parts`;
  const inputOptions = await page.getByTestId('check-input-differs').getByTestId('check-answer').locator('option').allTextContents();
  assert.ok(inputOptions.includes(phrase), `${phrase} in ${inputOptions}`);
  await expectRight(page, 'input-differs', { index: inputOptions.indexOf(phrase) - 1 });
  await expectRight(page, 'input-cosine', { number: byPart['after LayerNorm'].toFixed(2) });

  // 3 · Attention: the token "it" attends to most in the last layer, from the table of its row.
  await next(page, 'attention');
  await page.getByTestId('lesson-attention-row').waitFor({ timeout: 2 * MINUTE });
  const [[, position, weight], second] = await attentionRows(page);
  assert.ok(weight >= second[2], 'the table lists the largest weight first');
  await expectRight(page, 'attention-it', { index: position });
  // When a special token takes the most, the page says why; otherwise it names the word first.
  const [[topToken]] = await attentionRows(page);
  const note = await page.getByTestId('lesson-attention-note').textContent();
  assert.match(note, /^\[(CLS|SEP)\]$/.test(topToken) ? /^“it” gives \d+% of its attention to the special tokens/ : /^Among the other words/, note);

  // 3 · Masking: the picked positions of the roll shown; BERT's 80% rule.
  await next(page, 'masking');
  await tabTo(page, page.getByTestId('lesson-mask-roll'));
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid=lesson-mask-seed]')?.textContent === 'roll 2');
  const picked = await page.locator('[data-testid=lesson-masking] tr[data-picked=true]').count();
  assert.ok(picked >= 1);
  await expectRight(page, 'masking-picked', { number: picked });
  assert.match(await page.getByTestId('lesson-fill-unavailable').textContent(), /without its masked-language-model head/, 'the sentence encoder cannot play; the own-models test plays with one that can');
  const options = await page.getByTestId('check-masking-share').getByTestId('check-answer').locator('option').allTextContents();
  await expectRight(page, 'masking-share', { index: options.indexOf('80%') - 1 });

  // 5 · Pairs: the negatives of the roll shown, after rolling again; the objective the topic cannot give away.
  await next(page, 'pairs');
  await tabTo(page, page.getByTestId('lesson-pairs-roll'));
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid=lesson-pairs-seed]')?.textContent === 'roll 2');
  const pairRows = await page.locator('[data-testid=lesson-pairs] tr[data-label]').count();
  assert.equal(pairRows, 6, 'two texts of four sentences make six pairs');
  const negatives = await page.locator('[data-testid=lesson-pairs] tr[data-label="1"]').count();
  // BERT drew a "not next" sentence from another document: here, from the other of the two texts.
  const recipe = /recipe|eggs|flour|cake/i;
  const crossed = await page.locator('[data-testid=lesson-pairs] tr[data-label="1"]').evaluateAll((rows) =>
    rows.map((r) => [r.cells[1].textContent, r.cells[2].textContent]));
  for (const [a, b] of crossed) assert.notEqual(recipe.test(a), recipe.test(b), `a negative from the same text: ${a} | ${b}`);
  assert.match(await page.getByTestId('lesson-pairs-source').textContent(), /drawn from another text/);
  await expectRight(page, 'pairs-negatives', { number: negatives });
  const pairOptions = await page.getByTestId('check-pairs-topic').getByTestId('check-answer').locator('option').allTextContents();
  await expectRight(page, 'pairs-topic', { index: pairOptions.indexOf('sentence-order prediction') - 1 });
  const segmentB = await page.locator('[data-testid=lesson-pairs-tokens] .segment-b').count();
  assert.ok(segmentB >= 2, 'sentence B and its [SEP] are marked as segment B');

  // 6 · Senses: the layer with the highest share, from the table.
  await next(page, 'senses');
  await page.getByTestId('lesson-senses-table').waitFor({ timeout: 3 * MINUTE });
  const shares = await page.getByTestId('lesson-senses-table').evaluate((t) => [...t.querySelectorAll('td[data-v]')].map((c) => +c.dataset.v));
  const bestLayer = shares.indexOf(Math.max(...shares));
  assert.ok(bestLayer > 0, `the input embeddings cannot tell senses apart best (${shares})`);
  await expectRight(page, 'senses-best-layer', { index: bestLayer });
  // What the page concludes about layer 0 follows its share of the 16 sentences: within chance,
  // or above it (through position) only where chance alone gets that many right in under 5% of rolls.
  const senses = await page.getByTestId('lesson-senses-summary').textContent();
  const n = 16, right = Math.round(shares[0] * n);
  let tail = 0;
  for (let i = right, c = 1; i <= n; i++) { c = 1; for (let j = 0; j < i; j++) c = c * (n - j) / (j + 1); tail += c / 2 ** n; }
  const above = 2 * right > n && tail < 0.05;
  assert.match(senses, above ? new RegExp(`Even layer 0 tells them apart for ${right} of ${n} `) : new RegExp(`At layer 0, ${right} of ${n} \\(\\d+%\\), within what chance gives`), senses);
  // Static vectors: king − man + woman on the input table, typed by keyboard; the answer is the
  // nearest word of the live list. A word the vocabulary cuts into pieces is refused by name.
  const nearest = () => page.getByTestId('lesson-analogy-nearest').locator('li').evaluateAll((li) => li.map((l) => [l.dataset.word, +l.dataset.cosine]));
  await page.getByTestId('lesson-analogy-nearest').waitFor({ timeout: MINUTE });
  let list = await nearest();
  assert.equal(list.length, 5);
  assert.ok(list.every(([w], i) => !['king', 'man', 'woman'].includes(w) && (i === 0 || list[i - 1][1] >= list[i][1])), JSON.stringify(list));
  const analogyOptions = [...new Set(list.map(([w]) => w))].sort();
  const top = list[0][0];
  await expectRight(page, 'senses-analogy', { index: analogyOptions.indexOf(top) });
  await typeInto(page, page.getByTestId('lesson-analogy-2'), 'unbelievably');
  await page.keyboard.press('Tab');
  await page.getByTestId('lesson-analogy-error').waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('lesson-analogy-error').textContent(), /“unbelievably” is \d+ pieces in this vocabulary/);
  await typeInto(page, page.getByTestId('lesson-analogy-2'), 'woman');
  await page.keyboard.press('Tab');
  await page.getByTestId('lesson-analogy-nearest').waitFor({ timeout: MINUTE });
  list = await nearest();
  assert.equal(list[0][0], top, 'the same three words again, the same nearest word');

  // 7 · Fine-tuning: both recipes trained in the worker; the better one and the layer that moved most.
  await next(page, 'finetune');
  await tabTo(page, page.getByTestId('lesson-finetune-run'));
  await page.keyboard.press('Enter');
  const change = page.getByTestId('lesson-finetune-change');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=lesson-finetune-change] tr[data-mode]').length === 2, null, { timeout: 8 * MINUTE });
  const [headCka, fullCka] = await change.locator('tr[data-mode]').evaluateAll((trs) => trs.map((r) => [...r.querySelectorAll('td[data-v]')].map((c) => +c.dataset.v)));
  assert.ok(headCka.every((v) => v > 0.9999), `head-only training leaves every layer as it was (${headCka})`);
  assert.ok(Math.min(...fullCka) < 0.9999, `full fine-tuning moves the encoder (${fullCka})`);
  const accuracies = await page.locator('[data-testid=lesson-finetune-runs] td[data-accuracy]').evaluateAll((tds) => tds.map((c) => +c.dataset.accuracy));
  await expectRight(page, 'finetune-better', { index: accuracies.indexOf(Math.max(...accuracies)) });
  await expectRight(page, 'finetune-moved', { index: fullCka.indexOf(Math.min(...fullCka)) });
  // The conclusion names the winner the table shows.
  const conclusion = await page.getByTestId('lesson-finetune-conclusion').textContent();
  const [head, full] = accuracies;
  assert.match(conclusion, head === full ? /^Both recipes scored/ : head > full ? /^Head only beat full fine-tuning/ : /^Full fine-tuning beat head only/, conclusion);

  // 8 · Probing: the best layer's probe and its selectivity over the shuffled-label control.
  await next(page, 'probing');
  const probeTable = page.getByTestId('lesson-probing-table');
  await probeTable.waitFor({ timeout: 3 * MINUTE });
  const real = await probeTable.locator('td[data-real]').evaluateAll((tds) => tds.map((c) => +c.dataset.real));
  const control = await probeTable.locator('td[data-control]').evaluateAll((tds) => tds.map((c) => +c.dataset.control));
  const bestProbe = real.indexOf(Math.max(...real));
  await expectRight(page, 'probing-best-layer', { index: bestProbe });
  await expectRight(page, 'probing-selectivity', { number: ((real[bestProbe] - control[bestProbe]) * 100).toFixed(1) });
  // Word by word: the layers that read part of speech and position best, from the table.
  const wordTable = page.getByTestId('lesson-word-probe-table');
  await wordTable.waitFor({ timeout: 3 * MINUTE });
  const byKind = (kind) => wordTable.locator(`td[data-kind="${kind}"]`).evaluateAll((tds) => tds.map((c) => +c.dataset.v));
  const [partOfSpeech, wordPosition] = [await byKind('pos'), await byKind('position')];
  await expectRight(page, 'probing-pos-layer', { index: partOfSpeech.indexOf(Math.max(...partOfSpeech)) });
  await expectRight(page, 'probing-position-layer', { index: wordPosition.indexOf(Math.max(...wordPosition)) });

  // 9 · Sizes: the loaded model's count and large / base, from the table.
  await next(page, 'sizes');
  const params = async (row) => +(await row.locator('td[data-params]').getAttribute('data-params'));
  const loaded = await params(page.getByTestId('lesson-size-loaded'));
  await expectRight(page, 'sizes-loaded', { number: (loaded / 1e6).toFixed(1) });
  const rows = page.getByTestId('lesson-size');
  const row = (name) => rows.filter({ has: page.locator('th', { hasText: new RegExp(`^${name}$`) }) });
  const base = await params(row('bert-base'));
  const large = await params(row('bert-large'));
  await expectRight(page, 'sizes-large', { number: (large / base).toFixed(1) });

  assert.equal(await page.getByTestId('lessons-progress').textContent(), '20 of 20 questions answered');
  await page.reload();
  await page.getByTestId('lessons-progress').waitFor();
  assert.equal(await page.getByTestId('lessons-progress').textContent(), '20 of 20 questions answered', 'progress is kept');
  assert.equal(await page.getByTestId('lesson').getAttribute('data-lesson'), 'sizes', 'the last lesson shown opens again');
  assert.deepEqual(chrome.problems, []);
});

test('presentation mode by keyboard, and the printed handout', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  await page.goto(server.origin + '/#lesson=tokens');
  await page.reload();
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  await tabTo(page, page.getByTestId('lesson-present'));
  await page.keyboard.press('Enter');
  assert.equal(await page.getByTestId('lesson-present').getAttribute('aria-pressed'), 'true');
  assert.ok(!(await page.getByTestId('model-panel').isVisible()), 'only the lesson is on the screen');
  const size = () => page.evaluate(() => parseFloat(getComputedStyle(document.querySelector('[data-testid=lesson] p')).fontSize));
  assert.ok(await size() >= 20, 'large type');
  // Each step starts the next lesson at its title, in focus, wherever the page was scrolled.
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.querySelector('[data-testid=lesson]')?.dataset.lesson === 'input');
  await page.waitForFunction(() => document.activeElement?.dataset.testid === 'lesson-title' && window.scrollY === 0);
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction(() => document.querySelector('[data-testid=lesson]')?.dataset.lesson === 'tokens');
  await page.waitForFunction(() => document.activeElement?.dataset.testid === 'lesson-title' && window.scrollY === 0);
  await screenshot(page, 'lesson-presented');
  // Escape leaves even while a text field has the focus (arrows there move the caret).
  await page.getByTestId('lesson-input').focus();
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.getByTestId('lesson').getAttribute('data-lesson'), 'tokens', 'an arrow in a field stays in the field');
  await page.keyboard.press('Escape');
  await page.getByTestId('model-panel').waitFor();
  assert.equal(await page.getByTestId('lesson-present').getAttribute('aria-pressed'), 'false');

  // The handout: every maths fold opened, then the browser's print (stubbed: no dialog here).
  await page.evaluate(() => { window.printed = 0; window.print = () => { window.printed += 1; }; });
  await page.getByTestId('lesson-print').click();
  assert.equal(await page.evaluate(() => window.printed), 1);
  assert.ok(await page.evaluate(() => [...document.querySelectorAll('[data-testid=lesson] details.maths')].every((d) => d.open)), 'the maths is printed');
  await page.emulateMedia({ media: 'print' });
  try {
    assert.ok(!(await page.getByTestId('model-panel').isVisible()) && !(await page.getByTestId('lesson-next').isVisible()), 'the handout holds the lesson only');
    assert.ok(await page.getByTestId('lesson-title').isVisible());
    assert.ok(await page.getByTestId('check-tokens-word').isVisible(), 'with its questions');
    // No marks of the browser that printed it.
    assert.equal(await page.getByTestId('lessons-progress').isVisible(), false);
    for (const mark of await page.getByTestId('check-solved').all()) assert.equal(await mark.isVisible(), false);
  } finally {
    // Back to the browser's own media (an emulated 'screen' would also print as the screen).
    await page.emulateMedia({ media: null });
  }

  // Every lesson's handout, once its views are computed, prints on one A4 page.
  const shown = { tokens: 'lesson-token-count', input: 'lesson-input-parts', attention: 'lesson-attention-row', masking: 'lesson-masking',
    pairs: 'lesson-pairs-tokens', senses: 'lesson-senses-table', finetune: 'lesson-finetune-run', probing: ['lesson-probing-table', 'lesson-word-probe-table'], sizes: 'lesson-sizes' };
  for (const [id, testids] of Object.entries(shown)) {
    await page.goto(`${server.origin}/#lesson=${id}`);
    await page.waitForFunction((i) => document.querySelector('[data-testid=lesson]')?.dataset.lesson === i, id);
    for (const testid of [testids].flat()) await page.getByTestId(testid).first().waitFor({ timeout: 3 * MINUTE });
    await page.evaluate(() => { window.print = () => {}; });
    await page.getByTestId('lesson-print').click();
    const pdf = await page.pdf({ format: 'A4' });
    const pages = pdf.toString('latin1').match(/\/Type\s*\/Page[^s]/g).length;
    assert.equal(pages, 1, `lesson “${id}” prints on ${pages} pages`);
    // A choice question of the handout prints its options, not a closed drop-down (a part marked
    // `screen-only`, with its question, is not printed at all).
    const printedChoices = () => page.locator('[data-testid=check-print-options]').evaluateAll((ols) =>
      ols.filter((ol) => !ol.closest('.screen-only')).map((ol) => ol.checkVisibility()));
    if ((await printedChoices()).length > 0) {
      await page.emulateMedia({ media: 'print' });
      try {
        assert.ok((await printedChoices()).every(Boolean), `lesson “${id}”: the options are printed`);
        assert.equal(await page.locator('[data-testid=lesson] form.check select').first().isVisible(), false);
      } finally {
        await page.emulateMedia({ media: null });
      }
    }
  }
  assert.deepEqual(chrome.problems, []);
});

test('a lesson link with its input opens the same view, offline too', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  await page.goto(server.origin + '/#lesson=attention');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  await page.waitForFunction(() => document.querySelector('[data-testid=lesson]')?.dataset.lesson === 'attention');
  await typeInto(page, page.getByTestId('lesson-input'), LINKED);
  await page.keyboard.press('Enter');
  await page.waitForFunction((s) => document.querySelector('[data-testid=lesson-attention-summary]')?.textContent.includes(s), LINKED, { timeout: 2 * MINUTE });
  const rows = await attentionRows(page);
  const link = await page.getByTestId('lesson-link').inputValue();
  assert.ok(link.includes('#lesson=attention&input='), link);
  assert.equal(await page.evaluate(() => location.hash), link.slice(link.indexOf('#')), 'the address bar holds the link');
  await page.waitForFunction(() => document.querySelector('[data-testid=offline]')?.textContent === 'works offline', null, { timeout: 5 * MINUTE });

  await server.close();
  await page.context().setOffline(true);
  try {
    // A fresh load of the link, as a student's browser opens it.
    await page.goto('about:blank');
    await page.goto(link);
    await page.getByTestId('lesson-attention-row').waitFor({ timeout: 5 * MINUTE });
    assert.equal(await page.getByTestId('lesson-input').inputValue(), LINKED);
    await page.waitForFunction((s) => document.querySelector('[data-testid=lesson-attention-summary]')?.textContent.includes(s), LINKED);
    assert.deepEqual(await attentionRows(page), rows, 'the same attention, offline');
    await screenshot(page, 'lesson-link-offline');
  } finally {
    await page.context().setOffline(false);
  }
});
