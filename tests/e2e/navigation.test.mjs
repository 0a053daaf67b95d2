// Moving around the page as a new user does: a first visit opens on the lessons and a later one
// on the tab left last; the tab follows the address (Back, Forward, a typed `#studio`); switching
// tabs while a lesson, an explorer view or a training run is still computing, many times over,
// never breaks the page; a model the user opened is open again after a reload and is in the
// model menu; a browser without WebGPU gets a plain line, not a warning.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { serve, screenshot, embedSentence, ROOT, CHROMIUM_FLAGS } from './harness.mjs';
import { exampleData } from './studio_helpers.mjs';

const MINUTE = 60_000;
const LESSONS = ['tokens', 'input', 'attention', 'masking', 'pairs', 'senses', 'finetune', 'probing', 'sizes'];
let server, profile, context;

before(async () => {
  server = await serve();
  profile = await mkdtemp(join(tmpdir(), 'bertbench-nav-'));
});
after(async () => {
  await context?.close();
  await server?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

/** A browser on the persistent profile (so that a reload and a restart keep what it saved),
 * watching for a panic banner and page errors. */
async function browser() {
  await context?.close();
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_FLAGS, viewport: { width: 1366, height: 768 },
  });
  const page = context.pages()[0] ?? await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' && /panicked|disposed/.test(m.text())) problems.push(`console: ${m.text()}`); });
  return { page, problems };
}

const selectedTab = (page) => page.evaluate(() => document.querySelector('nav.tabs [aria-selected=true]')?.dataset.testid);

async function noCrash(page, problems, where) {
  // The banner's text is read only when there is one: read eagerly, for the assertion's message,
  // it waited the default timeout on every call where the page was fine.
  const fatal = page.getByTestId('fatal');
  if (await fatal.count() > 0) assert.fail(`${where}: ${await fatal.textContent()}`);
  assert.deepEqual(problems, [], where);
}

test('a first visit opens on the lessons, a later one on the last tab; the tab follows Back, Forward and the address', { timeout: 10 * MINUTE }, async () => {
  const { page, problems } = await browser();
  await page.goto(server.origin + '/');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  assert.equal(await selectedTab(page), 'tab-lessons', 'a first visit starts with the lessons');
  // At 1366 × 768 the lesson starts on the first screen: the model panel is one line until asked.
  const title = await page.getByTestId('lesson-title').boundingBox();
  assert.ok(title.y + title.height < 768, `the lesson's title is on the first screen (y ${title.y})`);
  assert.equal(await page.getByTestId('open-model').isVisible(), false, 'the model panel is folded in the lessons');
  await page.getByTestId('model-more').click();
  assert.equal(await page.getByTestId('open-model').isVisible(), true);
  // Without WebGPU: a plain line, not a warning.
  const note = page.getByTestId('gpu-note');
  assert.equal(await note.getAttribute('data-problem'), 'false');
  assert.match(await note.textContent(), /^Runs on the CPU: /);

  await page.getByTestId('tab-studio').click();
  await page.getByTestId('tab-lab').click();
  assert.equal(new URL(page.url()).hash, '#lab');
  await page.goBack();
  await page.waitForFunction(() => document.querySelector('[data-testid=tab-studio]')?.getAttribute('aria-selected') === 'true');
  await page.goBack();
  await page.waitForFunction(() => document.querySelector('[data-testid=tab-lessons]')?.getAttribute('aria-selected') === 'true');
  await page.goForward();
  await page.waitForFunction(() => document.querySelector('[data-testid=tab-studio]')?.getAttribute('aria-selected') === 'true');
  // A typed address.
  await page.evaluate(() => { location.hash = '#explore'; });
  await page.waitForFunction(() => document.querySelector('[data-testid=tab-explore]')?.getAttribute('aria-selected') === 'true');
  await page.evaluate(() => { location.hash = '#lesson=senses'; });
  await page.waitForFunction(() => document.querySelector('[data-testid=lesson]')?.dataset.lesson === 'senses');
  await page.getByTestId('tab-explore').click();
  // A later visit, without an address: the tab left last.
  await page.goto(server.origin + '/');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  assert.equal(await selectedTab(page), 'tab-explore');
  await noCrash(page, problems, 'navigation');
});

test('switching tabs while lessons, explorer views and a training run compute never breaks the page', { timeout: 25 * MINUTE }, async () => {
  const { page, problems } = await browser();
  await page.goto(server.origin + '/?model=bert-tiny#explore');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('bert-tiny'), null, { timeout: 5 * MINUTE });
  let n = 0;
  // Each lesson, left while its view computes (the path of the reported crash: a lesson, then
  // Explore, a sentence and Embed), three times over at different moments.
  for (const wait of [50, 400, 1000]) {
    for (const id of LESSONS) {
      await page.evaluate((id) => { location.hash = `#lesson=${id}`; }, id);
      await page.waitForFunction((id) => document.querySelector('[data-testid=lesson]')?.dataset.lesson === id, id);
      await page.waitForTimeout(wait);
      await page.getByTestId('tab-explore').click();
      const sentence = `switch ${n++} after ${id}`;
      await embedSentence(page, sentence, 2 * MINUTE);
      await noCrash(page, problems, `lesson ${id}, left after ${wait} ms`);
    }
  }
  // Explorer views that take a while (the map, the probe, attention), left while computing.
  for (const [button, done] of [['map-button', 'map'], ['probe-button', 'probe-table'], ['attention-button', 'attention-heatmap']]) {
    for (let round = 0; round < 3; round++) {
      await page.getByTestId('tab-explore').click();
      await page.getByTestId(button).click({ timeout: 2 * MINUTE });
      await page.getByTestId('tab-lessons').click();
      await page.waitForTimeout(200 * round);
      await page.getByTestId('tab-studio').click();
      await page.getByTestId('tab-explore').click();
    }
    await page.getByTestId(done).first().waitFor({ timeout: 3 * MINUTE });
    await noCrash(page, problems, `the explorer's ${button}`);
  }
  // A training run, with every tab visited while it trains.
  await page.getByTestId('tab-studio').click();
  await exampleData(page);
  await page.getByTestId('train-start').click();
  await page.getByTestId('train-progress').waitFor({ timeout: MINUTE });
  // The focus moves to Pause, not back to the start of the page.
  await page.waitForFunction(() => document.activeElement?.dataset.testid === 'train-pause', null, { timeout: MINUTE });
  for (let round = 0; round < 12 && await page.getByTestId('train-done').count() === 0; round++) {
    for (const tab of ['tab-lessons', 'tab-explore', 'tab-lab', 'tab-studio']) {
      await page.getByTestId(tab).click();
      await page.waitForTimeout(150);
    }
  }
  await page.getByTestId('train-done').waitFor({ timeout: 5 * MINUTE });
  // Everything still answers: a new sentence embeds.
  await page.getByTestId('tab-explore').click();
  const vector = await embedSentence(page, 'the page still answers', 2 * MINUTE);
  assert.ok(vector.length > 0);
  await noCrash(page, problems, 'after the training run');
});

test('a model the user opened is open again after a reload, and in the model menu', { timeout: 10 * MINUTE }, async () => {
  let { page, problems } = await browser();
  await page.goto(server.origin + '/#explore');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  await page.getByTestId('open-model-folder').setInputFiles(join(ROOT, 'tests', 'models', 'bert-mlm'));
  await page.getByTestId('open-model-note').waitFor({ timeout: 3 * MINUTE });
  assert.match(await page.getByTestId('open-model-note').textContent(), /^Opened bert-mlm/);
  const listed = () => page.locator('[data-testid=model-option-yours]').allTextContents();
  assert.deepEqual(await listed(), ['bert-mlm']);
  // A browser restart: the page opens the model the user had open.
  ({ page, problems } = await browser());
  await page.goto(server.origin + '/');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('bert-mlm'), null, { timeout: 5 * MINUTE });
  assert.deepEqual(await listed(), ['bert-mlm']);
  assert.equal(await page.getByTestId('model-select').inputValue(), 'yours:model:bert-mlm');
  // The menu goes back to the page's own model, and to the user's again.
  await page.getByTestId('model-select').selectOption('all-MiniLM-L6-v2');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('all-MiniLM-L6-v2'), null, { timeout: 5 * MINUTE });
  await page.getByTestId('model-select').selectOption('yours:model:bert-mlm');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('bert-mlm'), null, { timeout: 5 * MINUTE });
  // A family the page cannot run is refused once, where it was opened, and not kept.
  const dir = join(ROOT, 'tests', 'models', 'bert-mlm');
  const config = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
  const files = [
    { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify({ ...config, model_type: 'funnel', _name_or_path: 'my-funnel' })) },
    ...(await readdir(dir)).filter((f) => f !== 'config.json').map((f) => join(dir, f)),
  ];
  await page.getByTestId('open-model-files').setInputFiles(await Promise.all(files.map(async (f) =>
    typeof f === 'string' ? { name: f.split('/').at(-1), mimeType: 'application/octet-stream', buffer: await readFile(f) } : f)));
  await page.getByTestId('open-model-error').waitFor({ timeout: MINUTE });
  assert.match(await page.getByTestId('open-model-error').textContent(), /"funnel" is not supported/);
  assert.equal(await page.getByTestId('load-error').count(), 0, 'said once, where the model was opened');
  assert.deepEqual(await listed(), ['bert-mlm'], 'nothing kept');
  assert.match(await page.getByTestId('model-facts').textContent(), /bert-mlm/, 'the model in use stays');
  await screenshot(page, 'navigation-own-model');
  await noCrash(page, problems, 'own model');
});
