// A first visit on a slow link: the page, its wasm and the model's tokenizer have arrived, the
// model's weights not yet (the test server holds them back). Lesson 1 and the explorer's tokens
// view must work from the tokenizer alone, the views that need the weights must say so, and
// once the weights arrive those views fill in by themselves.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, screenshot, embedSentence, offOriginRequests } from './harness.mjs';
import { expectRight } from './lesson_helpers.mjs';

const MINUTE = 60_000;
let server, chrome, release;
const weightsHeld = new Promise((r) => { release = r; });
let weightsAsked = false;

before(async () => {
  server = await serve({
    hold: (path) => {
      if (!/^\/models\/[^/]+\/model\.safetensors/.test(path)) return undefined;
      weightsAsked = true;
      return weightsHeld;
    },
  });
  chrome = await launch({ webgpu: false });
});
after(async () => { release?.(); await chrome?.browser.close(); await server?.close(); });

test('lesson 1 and the tokens view work before the weights arrive; the model views fill in after', { timeout: 10 * MINUTE }, async () => {
  const { page, problems, requestedUrls } = chrome;
  await page.goto(server.origin + '/');
  assert.equal(await page.getByTestId('lesson').getAttribute('data-lesson'), 'tokens', 'a first visit opens on lesson 1');

  // Lesson 1 from the tokenizer alone: the example's tokens, a question answered from them.
  await page.getByTestId('lesson-tokens').getByTestId('token').first().waitFor({ timeout: 3 * MINUTE });
  assert.ok(weightsAsked, 'the weights were asked for');
  assert.equal(await page.getByTestId('model-facts').count(), 0, 'no model is loaded yet');
  await page.getByTestId('lesson-input').fill('unbelievably');
  await page.waitForFunction(() => /from the text/.test(document.querySelector('[data-testid=lesson-token-count]')?.textContent));
  const pieces = await page.getByTestId('lesson-tokens').getByTestId('token').count();
  await expectRight(page, 'tokens-count', { number: pieces });
  assert.match(await page.getByTestId('model-progress').textContent(), /tokenizer is here/, 'the progress line says what works meanwhile');
  await screenshot(page, 'weights-later-lesson');

  // A lesson that needs the model says so while the weights arrive.
  await page.getByTestId('lesson-nav-input').click();
  assert.match(await page.getByTestId('lesson').getByTestId('weights-arriving').textContent(), /This lesson needs the model's weights \(all-MiniLM-L6-v2-int8\), still arriving/);

  // The explorer: the sentence's tokens are there, the views that need the model say they wait.
  await page.getByTestId('tab-explore').click();
  await page.getByTestId('sentence-a').fill('The cat sat on the mat.');
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=tokens] [data-testid=token]')].some((t) => t.textContent.startsWith('cat')));
  assert.match(await page.getByTestId('token-count').textContent(), /^9 tokens \(7 from the text, 2 special\)/);
  assert.match(await page.getByTestId('tokens-hint').textContent(), /WordPiece/);
  assert.match(await page.getByTestId('weights-arriving').textContent(), /The views below need the model's weights \(all-MiniLM-L6-v2-int8\)/);
  assert.ok(await page.getByTestId('embed-button').isDisabled(), 'embedding waits for the weights');
  await screenshot(page, 'weights-later-explorer');

  // The weights arrive: the model loads, the note goes, the views work.
  release();
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  assert.equal(await page.getByTestId('weights-arriving').count(), 0, 'nothing says it waits once the model is here');
  const vector = await embedSentence(page, 'The cat sat on the mat.', 3 * MINUTE);
  assert.ok(vector.length > 0 && vector.every(Number.isFinite), 'a sentence embeds once the weights are here');
  await page.getByTestId('tab-lessons').click();
  await page.getByTestId('lesson-input-parts').waitFor({ timeout: 2 * MINUTE });
  assert.deepEqual(problems, []);
  assert.deepEqual(offOriginRequests(requestedUrls, server.origin), []);
});
