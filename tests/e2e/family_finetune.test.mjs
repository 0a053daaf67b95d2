// Fine-tuning every family in the studio: a folder of each family that
// scripts/make_test_models.py writes to tests/models (small random-weight models made by PyTorch
// transformers) is picked as a user picks a folder, fully fine-tuned in the studio's worker on a
// small sample of the built-in sentiment data with [CLS] + pooler features, and exported. The zip
// must be the family's own *ForSequenceClassification (no modelling code, so
// `AutoModelForSequenceClassification` loads it as it is, without trust_remote_code), its encoder
// must be the fine-tuned one (its layers' weights moved from the folder's), and PyTorch must give
// the page's probabilities within 1e-4 (scripts/check_classifier_with_transformers.py).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, offOriginRequests, pick, screenshot, ROOT } from './harness.mjs';
import { MINUTE, trainingFile, sentimentSample, recipe, train, predict, exportZip, checkAllWithTransformers, unzip, safetensorsHeader } from './studio_helpers.mjs';

const MODELS = join(ROOT, 'tests', 'models');
// The folder fine-tuned for each family (`expected.json`'s family): the encoder a user starts
// from, a masked-language model (ELECTRA's discriminator, ALBERT's `AlbertForPreTraining`), saved
// without a pooler but for ALBERT's; CamemBERT's one folder is a classifier from the Hub, whose
// run replaces its head (3 labels) with a new one (2).
const BASES = {
  bert: 'bert-mlm', roberta: 'roberta', distilbert: 'distilbert', electra: 'electra', 'xlm-roberta': 'xlm-roberta',
  camembert: 'camembert-classifier', albert: 'albert', mpnet: 'mpnet', modernbert: 'modernbert', 'deberta-v2': 'deberta',
};
// The class each family's export must name: transformers' own.
const CLASS = {
  bert: 'Bert', roberta: 'Roberta', distilbert: 'DistilBert', electra: 'Electra', 'xlm-roberta': 'XLMRoberta',
  camembert: 'Camembert', albert: 'Albert', mpnet: 'MPNet', modernbert: 'ModernBert', 'deberta-v2': 'DebertaV2',
};
const TEXTS = ['What a wonderful, warm little film.', 'The food was cold and the waiter was rude.'];
const SAMPLE = 12; // sentences per label

let server, chrome;

before(async () => {
  server = await serve();
  chrome = await launch({ webgpu: false });
});
after(async () => { await chrome?.browser.close(); await server?.close(); });

/** A safetensors file's f32 tensors, by name (`Float32Array`s; other dtypes left out). */
function f32Tensors(bytes) {
  const header = safetensorsHeader(bytes);
  const start = 8 + Number(bytes.readBigUInt64LE(0));
  const tensors = {};
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__' || entry.dtype !== 'F32') continue;
    const { shape, data_offsets: [a, b] } = entry;
    const copy = bytes.subarray(start + a, start + b);
    tensors[name] = { shape, values: new Float32Array(copy.buffer.slice(copy.byteOffset, copy.byteOffset + copy.length)) };
  }
  return tensors;
}

test('a folder of every family fine-tunes fully in the studio and exports as its own class, which transformers loads to the page\'s probabilities', { timeout: 20 * MINUTE }, async (t) => {
  const names = JSON.parse(await readFile(join(MODELS, 'index.json'), 'utf8'));
  const families = new Set();
  for (const name of names) families.add(JSON.parse(await readFile(join(MODELS, name, 'expected.json'), 'utf8')).family);
  // A family the script makes and this test does not fine-tune fails here, not silently.
  assert.deepEqual([...families].sort(), Object.keys(BASES).sort(), 'every family of tests/models has a folder to fine-tune');

  const { page, problems, requestedUrls } = chrome;
  await page.goto(server.origin + '/#studio');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  await trainingFile(page, 'sample.csv', await sentimentSample(SAMPLE), 2 * SAMPLE);
  const results = [];
  // Every export is checked by transformers at the end, in one Python process (its imports alone
  // take seconds), each reported on its own.
  const checks = [];
  for (const [family, name] of Object.entries(BASES)) {
    const dir = join(MODELS, name);
    const expected = JSON.parse(await readFile(join(dir, 'expected.json'), 'utf8'));
    assert.equal(expected.family, family, `${name} is a ${family} folder`);
    const { ok, text } = await pick(page, dir);
    assert.ok(ok, `${name}: ${text}`);
    await page.getByTestId('tab-studio').click();
    // Full fine-tuning, so the export's encoder is the trained one; [CLS] + pooler, the features
    // of the family's own class (its pooler, or the layer that class puts there, fresh).
    await recipe(page, { mode: 'full', pooling: 'pooler', 'batch-size': 8, 'learning-rate': 1e-3, epochs: 2, warmup: 0, 'eval-every': 0 });
    const option = await page.locator('[data-testid=feature-pooling] option[value=pooler]').textContent();
    assert.equal(option, `[CLS] + pooler (exports as ${CLASS[family]}ForSequenceClassification)`, `${name}: the option names the class`);
    const done = await train(page, `family-${name}`);
    assert.match(done, /Finished/, `${name}: ${done}`);
    if (family === 'modernbert') await screenshot(page, 'family-finetune-modernbert');
    const rows = [];
    for (const text of TEXTS) {
      const { labels, probs } = await predict(page, text);
      assert.deepEqual(labels, ['negative', 'positive'], `${name}: labels`);
      rows.push({ text, pair: null, probs });
    }
    const zip = await exportZip(page, `family-${name}.zip`);
    const files = await unzip(zip);
    const file = (suffix) => Object.entries(files).find(([n]) => n.endsWith(suffix))?.[1];
    const config = JSON.parse(file('config.json').toString('utf8'));
    assert.deepEqual(config.architectures, [`${CLASS[family]}ForSequenceClassification`], `${name}: the family's own class`);
    assert.equal(config.auto_map, undefined, `${name}: no auto_map (loads without trust_remote_code)`);
    assert.ok(!file('modeling_bertbench.py'), `${name}: no modelling code`);
    // The encoder is the fine-tuned one: every matrix of its layers moved from the folder's.
    const [before, after] = [await readFile(join(dir, 'model.safetensors')), file('model.safetensors')].map(f32Tensors);
    const matrices = Object.keys(before).filter((n) => /layer/.test(n) && before[n].shape.length === 2 && after[n]);
    assert.ok(matrices.length >= 4, `${name}: the export holds the folder's layer matrices under their names (${Object.keys(after).join(', ')})`);
    const unmoved = matrices.filter((n) => before[n].values.every((x, i) => x === after[n].values[i]));
    assert.deepEqual(unmoved, [], `${name}: fine-tuning moved every layer matrix`);
    checks.push([zip, rows]);
    results.push(`${name} (${family}): ${config.architectures[0]}, ${matrices.length} layer matrices moved, probabilities ${rows.map((r) => r.probs.map((p) => p.toFixed(4)).join('/')).join(', ')}`);
  }
  console.log(results.join('\n'));
  await checkAllWithTransformers(t, checks);
  assert.deepEqual(problems, []);
  assert.deepEqual(offOriginRequests(requestedUrls, server.origin), []);
});
