// The bad-input corpus (tests/bad_inputs/, scripts/make_bad_inputs.py) in the page: every broken
// data file is uploaded to the studio, every broken checkpoint is picked as the model, every
// awkward text is typed into the explorer. Each must give its message and leave what the user had
// (the data, the model) as it was; nothing may panic or write an error to the console.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join, basename } from 'node:path';
import { serve, launch, offOriginRequests, ROOT } from './harness.mjs';

const MINUTE = 60_000;
const CORPUS = join(ROOT, 'tests', 'bad_inputs');
const expected = JSON.parse(await readFile(join(CORPUS, 'expected.json'), 'utf8'));
const entries = (prefix) => Object.entries(expected).filter(([name]) => name.startsWith(prefix));
const checkpoints = entries('checkpoints/').map(([name, want]) => [basename(name), want]);
let server, chrome;

before(async () => {
  // The broken checkpoints are offered by the server as models next to the real one.
  const faults = { '/models/index.json': { type: 'application/json', body: JSON.stringify(['all-MiniLM-L6-v2-int8', ...checkpoints.map(([n]) => n)]) } };
  for (const [name] of checkpoints) {
    const have = await readdir(join(CORPUS, 'checkpoints', name));
    for (const file of ['config.json', 'model.safetensors', 'tokenizer.json', 'vocab.txt']) {
      faults[`/models/${name}/${file}`] = have.includes(file)
        ? { body: await readFile(join(CORPUS, 'checkpoints', name, file)) }
        : { status: 404, body: 'not found' };
    }
  }
  server = await serve({ faults });
  chrome = await launch({ webgpu: false });
  await chrome.page.goto(server.origin + '/#studio');
  await chrome.page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

const lower = (s) => s.toLowerCase();

async function exampleLoaded(page) {
  await page.getByTestId('use-example').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=usable-rows]')?.textContent === '252'
    && document.querySelector('[data-testid=studio-data]')?.textContent.includes('rows in sentiment.csv'), null, { timeout: MINUTE });
}

test('every broken data file: its message, and the data the user had is kept', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  await exampleLoaded(page);
  for (const [name, want] of entries('data/')) {
    const file = basename(name);
    await page.getByTestId('data-file').setInputFiles({ name: file, mimeType: 'text/plain', buffer: await readFile(join(CORPUS, name)) });
    // Done when the file is refused (its name in the error) or shown with a fresh report.
    await page.waitForFunction((f) => {
      const error = document.querySelector('[data-testid=data-error]')?.textContent ?? '';
      const data = document.querySelector('[data-testid=studio-data]')?.textContent ?? '';
      return error.includes(f) || (data.includes(`rows in ${f}`) && document.querySelector('[data-testid=validation-report]'));
    }, file, { timeout: MINUTE });
    const error = (await page.getByTestId('data-error').count()) ? await page.getByTestId('data-error').textContent() : '';
    if (error.includes(file)) {
      assert.equal(want.outcome, 'refused', `${name} was refused: ${error}`);
      assert.ok(lower(error).includes(lower(want.message)), `${name}: ${error}`);
      assert.equal(await page.getByTestId('usable-rows').textContent(), '252', `${name}: the example data is kept`);
      continue;
    }
    const report = await page.getByTestId('studio-data').textContent();
    if (want.outcome === 'refused') {
      // Read, but training is blocked with the problem shown (the file is there to fix columns).
      const problems = (await page.getByTestId('data-problem').allTextContents()).join(' ');
      assert.ok(lower(problems).includes(lower(want.message)), `${name}: expected a problem about ${want.message}, got ${problems}`);
      assert.ok(await page.getByTestId('train-start').isDisabled(), `${name}: training must be blocked`);
    } else {
      assert.equal(await page.getByTestId('data-problem').count(), 0, `${name}: ${report}`);
      assert.ok(lower(report).includes(lower(want.message)), `${name}: no mention of ${want.message}`);
    }
    // Uploaded text is shown as text, never made into elements.
    assert.equal(await page.locator('[data-testid=studio-data] script, [data-testid=studio-data] img').count(), 0, name);
    await exampleLoaded(page);
  }
});

test('every broken checkpoint: its message, and the model in use is kept', { timeout: 10 * MINUTE }, async () => {
  const { page } = chrome;
  await page.getByTestId('tab-explore').click();
  for (const [name, want] of checkpoints) {
    await page.selectOption('#model-select', name);
    if (want.outcome === 'accepted') {
      await page.waitForFunction((n) => document.querySelector('[data-testid=model-facts]')?.textContent.includes(n), name, { timeout: 2 * MINUTE });
      await page.selectOption('#model-select', 'all-MiniLM-L6-v2-int8');
      await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('all-MiniLM-L6-v2'), null, { timeout: 2 * MINUTE });
      continue;
    }
    await page.waitForFunction((n) => document.querySelector('[data-testid=load-error]')?.textContent.includes(n), name, { timeout: 2 * MINUTE });
    const message = await page.getByTestId('load-error').textContent();
    assert.ok(lower(message).includes(lower(want.message)), `${name}: ${message}`);
    assert.match(await page.getByTestId('model-facts').textContent(), /all-MiniLM-L6-v2/, `${name}: the model in use is kept`);
    assert.equal(await page.locator('#model-select option:checked').textContent(), await page.locator('#model-select option[value="all-MiniLM-L6-v2-int8"]').textContent(),
      `${name}: the picker shows the model in use`);
    // Still working: the tokenizer answers.
    await page.getByTestId('sentence-a').fill(`after ${name}`);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=token]').length > 2, null, { timeout: MINUTE });
  }
});

test('awkward texts in the explorer: a message or tokens, never more than 512', { timeout: 5 * MINUTE }, async () => {
  const { page } = chrome;
  for (const [name, want] of entries('text/')) {
    const text = await readFile(join(CORPUS, name), 'utf8');
    await page.getByTestId('sentence-a').fill(text);
    if (want.outcome === 'refused') {
      await page.getByTestId('tokens-error').waitFor({ timeout: MINUTE });
      assert.ok(lower(await page.getByTestId('tokens-error').textContent()).includes(want.message), name);
      continue;
    }
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=token]').length > 2 && !document.querySelector('[data-testid=tokens-error]'), null, { timeout: MINUTE });
    const count = await page.getByTestId('token').count();
    assert.ok(count <= 512, `${name}: ${count} tokens`);
    if (want.message === 'truncated') assert.match(await page.getByTestId('truncated').textContent(), /512/);
    assert.equal(await page.locator('[data-testid=tokens] script, [data-testid=tokens] b').count(), 0, `${name}: markup stays text`);
  }
});

test('no panics, no console errors, nothing off the origin', async () => {
  assert.deepEqual(chrome.problems.filter((p) => !p.includes('404')), []);
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
});
