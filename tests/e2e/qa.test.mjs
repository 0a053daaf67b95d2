// The studio's extractive question answering (SQuAD-style), CPU in the worker: the built-in
// example (SQuAD 2.0 JSON) trains a start/end head on the default model (all-MiniLM-L6-v2) and
// is scored by exact match and F1; a typed passage and question are answered with the span
// marked and each token's start/end probabilities; the export loads in transformers
// (AutoModelForQuestionAnswering) with the same probabilities and the same best span, and
// imported back it answers the same; a SQuAD v1.1 file with an unanswered question and an answer
// start that points elsewhere are refused by line with the data kept.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, offOriginRequests, screenshot, ARTIFACTS, ROOT } from './harness.mjs';
import { MINUTE, recipe, train, exportZip, importZip, checkWithTransformers } from './studio_helpers.mjs';

let server, chrome;

before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  server = await serve();
  chrome = await launch({ webgpu: false });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

const PASSAGE = 'Harwick is a town on the Lune river in the western valleys. It was founded in 1312 by Grace Kim, a teacher. '
  + 'Today about 18,400 people live there. It is best known for its salt mines.';

/** Answers `question` over `context`; returns the answer, the best spans and the passage tokens. */
async function ask(page, question, context = PASSAGE) {
  const answered = () => page.evaluate(() => Number(document.querySelector('[data-testid=qa-answer]')?.dataset.answer ?? 0));
  const before = await answered();
  await page.getByTestId('qa-context').fill(context);
  await page.getByTestId('qa-question').fill(question);
  await page.getByTestId('qa-button').click();
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid=qa-answer]')?.dataset.answer ?? 0) > n
    || document.querySelector('[data-testid=predict-error]'), before, { timeout: MINUTE });
  if (await page.getByTestId('predict-error').count()) assert.fail(await page.getByTestId('predict-error').textContent());
  return {
    answer: await page.getByTestId('qa-answer').evaluate((d) => d.dataset.text),
    spans: await page.getByTestId('qa-span').evaluateAll((rows) => rows.map((r) => r.querySelectorAll('td')[1].textContent)),
    probs: await page.locator('.qa-tok').evaluateAll((ts) => ts.map((t) => JSON.parse(t.dataset.probs))),
  };
}

test("the example trains a question-answering model on MiniLM with the task's default recipe to the README's F1; answers, export, transformers and re-import agree", { timeout: 40 * MINUTE }, async (t) => {
  const { page } = chrome;
  await page.goto(server.origin + '/#studio');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('MiniLM'), null, { timeout: 5 * MINUTE });
  await page.getByTestId('task-answer').check();
  await page.getByTestId('studio-qa-data').waitFor({ state: 'visible' });
  // The example, uploaded as a user's file.
  const example = await readFile(join(ROOT, 'public', 'examples', 'questions.json'));
  await page.getByTestId('qa-file').setInputFiles({ name: 'questions.json', mimeType: 'application/json', buffer: example });
  await page.waitForFunction(() => document.querySelector('[data-testid=qa-questions]')?.textContent === '361'
    && /^\d+$/.test(document.querySelector('[data-testid=qa-windows]')?.textContent ?? ''), null, { timeout: MINUTE });
  assert.equal(await page.getByTestId('qa-unanswerable').textContent(), '41');
  assert.match(await page.getByTestId('qa-preview').textContent(), /founded|built/);
  // The task's default recipe: full fine-tuning (README: "the question-answering default").
  assert.equal(await page.getByTestId('train-mode').inputValue(), 'full');
  assert.match(await page.getByTestId('recipe-note').textContent(), /^Recipe: this task's default, full fine-tuning, batch 16, lr 1\.5e-4, 5 epochs/);
  assert.equal(await page.getByTestId('qa-head-only-warning').count(), 0);
  // Head only is said to be weak before anyone trains it (BERTBENCH_QA_HEAD=1 trains it: a
  // linear start/end head on a frozen encoder reads each token alone).
  await recipe(page, { mode: 'head', 'batch-size': 32, 'head-epochs': 30, 'head-learning-rate': 0.01 });
  await page.getByTestId('qa-head-only-warning').waitFor();
  const head = Boolean(process.env.BERTBENCH_QA_HEAD);
  if (!head) {
    await page.getByTestId('recipe-default').click();
    assert.equal(await page.getByTestId('train-mode').inputValue(), 'full');
  }
  const done = await train(page, 'qa-minilm', 30 * MINUTE);
  console.log(`# ${done}`);
  const exact = await page.getByTestId('qa-exact').textContent();
  const f1 = await page.getByTestId('qa-f1').textContent();
  console.log(`# example data, MiniLM ${head ? 'head-only' : "the default recipe (full fine-tuning)"}: exact match ${exact}, F1 ${f1}`);
  assert.ok(parseFloat(f1) >= (head ? 15 : 90), `F1 ${f1}`);
  assert.match(await page.getByTestId('qa-breakdown').textContent(), /without/);
  assert.match(await page.getByTestId('run-history').textContent(), /question answering · (head only|full)/);
  await screenshot(page, 'qa-results');

  const a = await ask(page, 'Who founded Harwick?');
  console.log(`# "Who founded Harwick?" → ${JSON.stringify(a.answer)}; top spans ${JSON.stringify(a.spans)}`);
  assert.ok(a.spans.length >= 2 && a.spans.length <= 5, `${a.spans}`);
  assert.ok(a.probs.length > 20, 'each passage token with its start and end probabilities');
  for (const [s, e] of a.probs) assert.ok(s >= 0 && s <= 1 && e >= 0 && e <= 1);
  await screenshot(page, 'qa-predict');

  // The export, in transformers: the same passage probabilities and best span (no "no answer").
  await page.getByTestId('qa-allow-null').uncheck();
  const b = await ask(page, 'When was Harwick founded?');
  assert.ok(b.answer.length > 0, 'an answer when "no answer" is not allowed');
  const zip = await exportZip(page, 'qa-minilm.zip');
  await checkWithTransformers(t, zip, [{ text: 'When was Harwick founded?', pair: PASSAGE, passage_probs: b.probs, answer: b.answer }]);

  // Imported back, it answers the same.
  assert.match(await importZip(page, zip), /^Imported a question-answering model/);
  const again = await ask(page, 'When was Harwick founded?');
  assert.equal(again.answer, b.answer);
  again.probs.forEach(([s, e], i) => assert.ok(Math.abs(s - b.probs[i][0]) < 1e-5 && Math.abs(e - b.probs[i][1]) < 1e-5, `token ${i}`));

  // A file of questions comes back as SQuAD's predictions file, scored against its answers.
  const csv = `question,context,answer\nWhen was Harwick founded?,"${PASSAGE}",1312\nWho founded Harwick?,"${PASSAGE}",Grace Kim\n`;
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 2 * MINUTE }),
    page.getByTestId('qa-batch-file').setInputFiles({ name: 'ask.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) }),
  ]);
  assert.equal(download.suggestedFilename(), 'ask-predictions.json');
  const path = join(ARTIFACTS, 'ask-predictions.json');
  await download.saveAs(path);
  const predictions = JSON.parse(await readFile(path, 'utf8'));
  assert.deepEqual(Object.keys(predictions), ['line 2', 'line 3']);
  assert.equal(predictions['line 2'], again.answer);
  await page.waitForFunction(() => document.querySelector('[data-testid=batch-note]')?.textContent.startsWith('Answered 2 questions'), null, { timeout: MINUTE });
  assert.match(await page.getByTestId('batch-note').textContent(), /exact match \d+\.\d%, F1 \d+\.\d%/);
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
});

test('a v1.1 file with an unanswered question, and an answer start that points elsewhere, are refused with their line; the data stays; an answer longer than a window is said', { timeout: 3 * MINUTE }, async () => {
  const { page } = chrome;
  const v1 = JSON.stringify({ version: '1.1', data: [{ title: 'T', paragraphs: [{ context: 'Tom fed the cat.', qas: [
    { id: 'a1', question: 'Who fed the cat?', answers: [{ text: 'Tom', answer_start: 0 }] },
    { id: 'a2', question: 'Why?', answers: [] },
  ] }] }] }, null, 1);
  await page.getByTestId('qa-file').setInputFiles({ name: 'v1.json', mimeType: 'application/json', buffer: Buffer.from(v1) });
  await page.getByTestId('data-error').waitFor({ timeout: MINUTE });
  const message = await page.getByTestId('data-error').textContent();
  assert.match(message, /v1\.json: Line \d+ \(question a2\): this question has no answer, but the file is SQuAD v1\.1/);
  assert.match(message, /The data you had is kept/);
  assert.equal(await page.getByTestId('qa-questions').textContent(), '361');
  // An answer longer than a window can only be learned as "no answer": the report says so.
  const long = Array.from({ length: 160 }, (_, i) => `w${i}`).join(' ');
  const jsonl = [
    { id: 'long', question: 'What?', context: `Start. ${long} End.`, answers: { text: [long], answer_start: [7] } },
    { id: 'short', question: 'Who?', context: 'Tom fed the cat.', answers: { text: ['Tom'], answer_start: [0] } },
  ].map((o) => JSON.stringify(o)).join('\n');
  await page.selectOption('[data-testid=qa-window]', '128');
  await page.getByTestId('qa-file').setInputFiles({ name: 'long.jsonl', mimeType: 'application/json', buffer: Buffer.from(jsonl) });
  await page.getByTestId('qa-answers-cut').waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('qa-answers-cut').textContent(), /^1 answer is too long for a window of 128 tokens with its question/);
  await page.selectOption('[data-testid=qa-window]', '192');
  const csv = 'question,context,answer,answer_start\nWho fed the cat?,Tom fed the cat.,Tom,0\nWhat did Tom feed?,Tom fed the cat.,cat,4\n';
  await page.getByTestId('qa-file').setInputFiles({ name: 'starts.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await page.waitForFunction(() => document.querySelector('[data-testid=data-error]')?.textContent.includes('Line 3: the answer "cat" is not at character 4'), null, { timeout: MINUTE });
});
