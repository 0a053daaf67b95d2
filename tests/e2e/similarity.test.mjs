// The studio's sentence similarity, CPU in the worker, on the default model (all-MiniLM-L6-v2):
// the built-in example (402 pairs scored 0–5), uploaded as a file, trains a bi-encoder and a
// cross-encoder head-only, each scored by Spearman's and Pearson's correlation; two typed texts
// are compared and a list of texts is searched, each search's cost measured and put in the
// cross- versus bi-encoder comparison; the bi-encoder's export loads in sentence-transformers
// and the cross-encoder's in transformers (AutoModelForSequenceClassification, regression) with
// the page's scores, and imported back each scores the same. A three-class NLI file and a
// file whose score column is text are refused with the data kept.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
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

const PAIRS = [
  ['A man is playing a guitar on stage.', 'Someone performs a song with a guitar.'],
  ['A woman is slicing tomatoes in the kitchen.', 'The children are building a sandcastle.'],
];

/** Compares two texts in the predict box; returns the similarity (0..1) at full precision. */
async function compare(page, a, b) {
  const shown = () => page.evaluate(() => document.querySelector('[data-testid=sim-score]')?.dataset.value ?? '');
  const old = await shown();
  // The same pair twice shows the same number: ask something else first.
  await page.getByTestId('sim-text').fill(`${a} (once more)`);
  await page.getByTestId('sim-pair').fill(b);
  await page.getByTestId('sim-button').click();
  await page.waitForFunction((o) => {
    const now = document.querySelector('[data-testid=sim-score]')?.dataset.value ?? '';
    return (now !== '' && now !== o) || document.querySelector('[data-testid=predict-error]');
  }, old, { timeout: MINUTE });
  const between = await shown();
  await page.getByTestId('sim-text').fill(a);
  await page.getByTestId('sim-button').click();
  await page.waitForFunction((o) => {
    const now = document.querySelector('[data-testid=sim-score]')?.dataset.value ?? '';
    return (now !== '' && now !== o) || document.querySelector('[data-testid=predict-error]');
  }, between, { timeout: MINUTE });
  if (await page.getByTestId('predict-error').count()) assert.fail(await page.getByTestId('predict-error').textContent());
  return Number(await shown());
}

/** Searches the texts in the box with `query`; returns the hits (score, text) and the cost line. */
async function search(page, query) {
  const count = () => page.evaluate(() => Number(document.querySelector('[data-testid=search-results]')?.dataset.searches ?? 0));
  const before = await count();
  await page.getByTestId('search-query').fill(query);
  await page.getByTestId('search-button').click();
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid=search-results]')?.dataset.searches ?? 0) > n
    || document.querySelector('[data-testid=search-error]'), before, { timeout: 2 * MINUTE });
  if (await page.getByTestId('search-error').count()) assert.fail(await page.getByTestId('search-error').textContent());
  const hits = await page.getByTestId('search-hit').evaluateAll((li) => li.map((l) => [Number(l.dataset.score), l.textContent]));
  return { hits, cost: await page.getByTestId('search-cost').textContent() };
}

/** Whether python3 can load sentence-transformers (cargo xtask test installs it). */
const sentenceTransformers = () => spawnSync('python3', ['-c', 'import sentence_transformers, scipy'], { stdio: 'ignore' }).status === 0;

test('the example trains a bi-encoder and a cross-encoder on MiniLM; scores, search, costs, exports and re-imports agree', { timeout: 40 * MINUTE }, async (t) => {
  const { page } = chrome;
  await page.goto(server.origin + '/#studio');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('MiniLM'), null, { timeout: 5 * MINUTE });
  await page.getByTestId('task-similar').check();
  await page.getByTestId('studio-pair-data').waitFor({ state: 'visible' });
  const example = await readFile(join(ROOT, 'public', 'examples', 'similarity.csv'));
  await page.getByTestId('pair-file').setInputFiles({ name: 'similarity.csv', mimeType: 'text/csv', buffer: example });
  await page.waitForFunction(() => document.querySelector('[data-testid=pair-count]')?.textContent === '402', null, { timeout: MINUTE });
  assert.equal(await page.getByTestId('pair-scale').textContent(), '0–5');
  assert.equal(await page.locator('[data-testid=pair-histogram] .hbar').count(), 10);
  assert.equal(await page.locator('[data-testid=pair-preview] tr').count(), 6);

  // BERTBENCH_SIM_FULL=1 measures full fine-tuning instead (minutes on the CPU; not in CI).
  const full = Boolean(process.env.BERTBENCH_SIM_FULL);
  const settings = full
    ? { mode: 'full', 'batch-size': 16, epochs: 4, 'learning-rate': 0.00005 }
    : { mode: 'head', 'batch-size': 32, 'head-epochs': 20, 'head-learning-rate': 0.001 };
  const spearman = {};
  for (const kind of ['bi', 'cross']) {
    await page.getByTestId(`pair-${kind}`).check();
    await recipe(page, settings);
    const done = await train(page, `similarity-${kind}`, (full ? 40 : 8) * MINUTE);
    console.log(`# ${kind}-encoder: ${done}`);
    spearman[kind] = Number(await page.getByTestId('sim-spearman').textContent());
    const pearson = await page.getByTestId('sim-pearson').textContent();
    console.log(`# example data, MiniLM ${kind}-encoder ${full ? 'full fine-tuning' : 'head-only'}: Spearman ${spearman[kind]}, Pearson ${pearson}`);
    assert.match(await page.getByTestId('run-history').textContent(), new RegExp(`${kind}-encoder · (head only|full)`));
    const points = await page.locator('[data-testid=pair-scatter] circle').count();
    const held = Number(await page.getByTestId('sim-count').textContent());
    assert.ok(held >= 70 && held <= 90, `about 20% of 402 pairs held out: ${held}`);
    assert.equal(points, held, 'every validation pair on the scatter');
    await screenshot(page, `similarity-${kind}-results`);

    const [same, other] = [await compare(page, ...PAIRS[0]), await compare(page, ...PAIRS[1])];
    console.log(`# ${kind}-encoder: "${PAIRS[0].join('" / "')}" ${same.toFixed(3)}; "${PAIRS[1].join('" / "')}" ${other.toFixed(3)}`);
    assert.ok(same > other, `${kind}: a paraphrase (${same}) above unrelated texts (${other})`);

    // Search the example list twice: a bi-encoder encodes the list once, then one pass a query;
    // a cross-encoder reads the query with every text each time.
    const texts = (await readFile(join(ROOT, 'public', 'examples', 'similarity-texts.txt'), 'utf8')).trim().split('\n').length;
    const first = await search(page, 'a dog playing outside');
    const second = await search(page, 'someone cooking dinner');
    console.log(`# ${kind}-encoder search: ${first.cost} | ${second.cost}`);
    assert.equal(first.hits.length, 10);
    assert.ok(first.hits.every((h, i) => i === 0 || h[0] <= first.hits[i - 1][0]), 'best first');
    if (kind === 'bi') {
      assert.match(first.cost, new RegExp(`^${texts} texts · this query: 1 encoder pass, .* the texts were encoded first, once`));
      assert.doesNotMatch(second.cost, /encoded first/, 'the list is encoded once');
    } else {
      assert.match(second.cost, new RegExp(`^${texts} texts · this query: ${texts} encoder passes`));
    }
    assert.match(await page.getByTestId(`compare-${kind}-encoder`).textContent(), new RegExp(`${texts} texts: ${kind === 'bi' ? '1 pass,' : `${texts} passes`}`));
    await screenshot(page, `similarity-${kind}-search`);

    // The export in Python, then imported back: the same scores.
    const zip = await exportZip(page, `similarity-${kind}.zip`);
    if (kind === 'cross') {
      const rows = [{ text: PAIRS[0][0], pair: PAIRS[0][1], scores: [same] }, { text: PAIRS[1][0], pair: PAIRS[1][1], scores: [other] }];
      await checkWithTransformers(t, zip, rows);
    } else if (sentenceTransformers()) {
      const rows = `${zip}.rows.json`;
      await writeFile(rows, JSON.stringify([{ text: PAIRS[0][0], pair: PAIRS[0][1], cosine: same }, { text: PAIRS[1][0], pair: PAIRS[1][1], cosine: other }]));
      const check = spawnSync('python3', [join(ROOT, 'scripts', 'check_bi_encoder_with_sentence_transformers.py'), zip, rows], { encoding: 'utf8', env: { ...process.env, TQDM_DISABLE: '1' } });
      assert.equal(check.status, 0, check.stdout + check.stderr);
    } else {
      assert.ok(!process.env.BERTBENCH_REQUIRE_TORCH, 'sentence-transformers is required (BERTBENCH_REQUIRE_TORCH) but python3 cannot import it');
      t.skip('skipped: the sentence-transformers check of the bi-encoder (python3 has no sentence-transformers)');
    }
    assert.match(await importZip(page, zip), new RegExp(`^Imported a similarity ${kind}-encoder`));
    const again = await compare(page, ...PAIRS[0]);
    assert.ok(Math.abs(again - same) < 1e-5, `${kind}: ${again} after import, ${same} before`);
  }
  const table = await page.getByTestId('pair-comparison').textContent();
  assert.doesNotMatch(table, /not trained yet|search below/);
  // The sentence under the table follows its two numbers (each kind's best this session).
  const best = {};
  for (const kind of ['cross', 'bi']) best[kind] = Number(await page.getByTestId(`compare-${kind}-encoder`).locator('td').nth(1).textContent());
  const verdict = await page.getByTestId('pair-verdict').textContent();
  const winner = best.cross > best.bi ? 'cross' : 'bi';
  if (Math.abs(best.cross - best.bi) >= 0.005) assert.match(verdict, new RegExp(`^On these pairs the ${winner}-encoder reads better: Spearman ${best[winner].toFixed(3)}`), verdict);
  for (const kind of ['cross', 'bi']) assert.ok(verdict.includes(best[kind].toFixed(3)), `${verdict} names the ${kind}-encoder's ${best[kind]}`);
  await page.getByTestId('pair-comparison').scrollIntoViewIfNeeded();
  await screenshot(page, 'similarity-comparison');
  await page.getByTestId('studio-results').screenshot({ path: join(ARTIFACTS, 'similarity-results-card.png') });
  // A bi-encoder starts as the model's own sentence vectors, which MiniLM was trained to make
  // for exactly this; a linear head on a frozen encoder's reading of the pair is far weaker.
  assert.ok(spearman.bi >= 0.6, `bi-encoder Spearman ${spearman.bi}`);
  assert.ok(spearman.cross >= 0.2, `cross-encoder Spearman ${spearman.cross}`);
  assert.deepEqual(offOriginRequests(chrome.requestedUrls, server.origin), []);
});

test('a three-class file and a score column of words are refused with the reason; the pairs stay', { timeout: 8 * MINUTE }, async () => {
  const { page } = chrome;
  await page.goto(server.origin + '/#studio');
  await page.waitForFunction(() => document.querySelector('[data-testid=model-facts]')?.textContent.includes('MiniLM'), null, { timeout: 5 * MINUTE });
  await page.getByTestId('task-similar').check();
  await page.getByTestId('use-pair-example').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=pair-count]')?.textContent === '402', null, { timeout: MINUTE });
  const nli = 'premise,hypothesis,label\nA man sleeps.,A person rests.,entailment\nA man sleeps.,A man runs.,contradiction\nA dog barks.,An animal is loud.,neutral\n';
  await page.getByTestId('pair-file').setInputFiles({ name: 'nli.csv', mimeType: 'text/csv', buffer: Buffer.from(nli) });
  await page.getByTestId('data-error').waitFor({ timeout: MINUTE });
  const message = await page.getByTestId('data-error').textContent();
  assert.match(message, /^nli\.csv: .*(entailment|contradiction|neutral).*The data you had is kept/s);
  assert.match(message, /classifier|a label per text/);
  assert.equal(await page.getByTestId('pair-count').textContent(), '402');
  const words = ['text1,text2,similarity',
    'A cat sleeps on the warm sofa.,A kitten is asleep on the couch.,high',
    'A cat sleeps on the warm sofa.,A truck drives down the road.,low',
    'Two dogs run across the park.,Puppies are running on the grass.,high',
    'Two dogs run across the park.,A plane lands at the airport.,low',
    'The soup is hot and salty.,This soup tastes of salt.,high',
    'The soup is hot and salty.,The train leaves at noon.,low'].join('\n') + '\n';
  await page.getByTestId('pair-file').setInputFiles({ name: 'words.csv', mimeType: 'text/csv', buffer: Buffer.from(words) });
  try {
    await page.waitForFunction(() => /words\.csv: .*high.*low|words\.csv: .*low.*high/s.test(document.querySelector('[data-testid=data-error]')?.textContent ?? ''), null, { timeout: MINUTE });
  } catch (e) {
    throw new Error(`${e.message}\nthe page says: ${await page.getByTestId('data-error').textContent()}`);
  }
  assert.match(await page.getByTestId('data-error').textContent(), /as 1 \(alike\) and 0 \(not alike\)/);
  assert.equal(await page.getByTestId('pair-count').textContent(), '402');
});
