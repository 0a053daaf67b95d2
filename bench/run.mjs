// The performance harness (issue 6): bertbench against transformers.js (ONNX Runtime Web) in the
// same headless Chromium, and against PyTorch on the same machine, in one run. Prints Markdown
// tables; asserts nothing about time, but exits non-zero if the two systems' embeddings disagree.
//
//   cargo xtask bench [-- --sentences 256 --webgpu-sentences 32 --webgpu-train --baseline-simd --skip startup,...]
//
// Sections (all by default; `--skip` takes a comma list of these, `native` and `webgpu`):
//   inference  256 sentences of ../shared/data/sst2_dev.tsv, batch 32, max length 64,
//              all-MiniLM-L6-v2: ours (BenchModel in the real page, fp32, 1 thread on the CPU)
//              against transformers.js, each in its own tab. On the CPU (wasm) four rows, ours
//              measured once: transformers.js fp32 on 1 thread (the same weights and threads as
//              ours), and as its users get it: q8 (8-bit weights, onnx/model_quantized.onnx, its
//              default dtype in wasm) on 1 thread, and fp32 and q8 on navigator.hardwareConcurrency
//              threads (its page cross-origin isolated; ONNX Runtime Web's own default there is
//              min(4, ceil(cores / 2)), so these rows give it at least the threads a user's isolated
//              page would: the labels say how many ran). On WebGPU one row, transformers.js fp32.
//              Each row: sentences/s both sides, ours / theirs, and the min cosine of the
//              mean-pooled vectors against ours, which must exceed 0.9999 in the fp32 rows (else
//              the harness exits non-zero); the q8 rows only report it (8-bit weights move it to
//              about 0.95).
//   finetune   full fine-tuning step time, batch 16, length 64 or --train-len (texts of joined sentences that
//              fill all of its tokens, so every batch is [16, length] on every side): browser CPU (and
//              WebGPU with --webgpu-train), native `bertbench finetune`, PyTorch on 2 threads.
//   startup    navigation to "model ready", cold and from the service worker's cache; wasm size.
//   memory     peak renderer memory (VmHWM) of a tab fine-tuning MiniLM at batch 16.
//   batching   one epoch of full fine-tuning with random batches and with batches grouped by
//              length (the studio's default), on 400 sentences of sst2_dev.tsv, in the page
//              (CPU) and natively.
// On a software WebGPU adapter (SwiftShader, which is slow) the WebGPU rows use --webgpu-sentences.
// The training worker's row runs the threaded build the studio would pick (relaxed SIMD where
// Chromium has it); --baseline-simd runs the 128-bit SIMD one instead.
import { createServer } from 'node:http';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { CHROMIUM_FLAGS, ROOT, DIST } from '../tests/e2e/harness.mjs';
import { DATA, fullLengthTexts, tsv } from './texts.mjs';

const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : fallback);
const N = Number(opt('sentences', 256));
const N_WEBGPU = Number(opt('webgpu-sentences', 32));
const BATCH = 32;
const MAX_LEN = 64;
const TRAIN_BATCH = 16;
// Fine-tuning's sequence length (`--train-len`, 64 by default; QA's window is 192).
const TRAIN_LEN = Number(opt('train-len', 64));
const SKIP = new Set(opt('skip', '').split(',').filter(Boolean));
const MODEL = 'all-MiniLM-L6-v2';
const MODEL_DIR = join(ROOT, 'public', 'models', MODEL);
const CACHE = process.env.BERTBENCH_CACHE ?? join(process.env.HOME, '.cache', 'bertbench');
const ONNX_DIR = join(CACHE, 'bench', 'onnx-models');
const MINUTE = 60_000;

const dev = tsv('sst2_dev.tsv');
const sentences = dev.slice(0, N).map((r) => r[0]);
const train = fullLengthTexts(96, TRAIN_LEN);
// Data files for the native CLI and PyTorch, in a folder removed when the harness exits.
const tempDir = mkdtempSync(join(tmpdir(), 'bertbench-bench-'));
process.on('exit', () => rmSync(tempDir, { recursive: true, force: true }));
const writeTsv = (name, rows) => {
  writeFileSync(join(tempDir, name), ['sentence\tlabel', ...rows.map((r) => r.join('\t'))].join('\n') + '\n');
  return join(tempDir, name);
};
const trainFile = writeTsv(`train_${TRAIN_LEN}.tsv`, train);

// ---------------------------------------------------------------------------------------------
// The ONNX file for transformers.js: exported from the page's own safetensors. Beside it its 8-bit quantization (model_quantized.onnx), which transformers.js loads by default
// in wasm (dtype 'q8'), made as transformers.js's conversion script makes it.

if (SKIP.has('inference')) {
  // Only the inference rows read it.
} else if (!existsSync(join(ONNX_DIR, MODEL, 'onnx', 'model.onnx'))) {
  console.error(`exporting ${MODEL} to ONNX with PyTorch and quantizing it (scripts/export_onnx.py)…`);
  execFileSync('python3', [join(ROOT, 'scripts', 'export_onnx.py'), MODEL_DIR, join(ONNX_DIR, MODEL)], { stdio: 'inherit' });
} else if (!existsSync(join(ONNX_DIR, MODEL, 'onnx', 'model_quantized.onnx'))) {
  console.error(`quantizing the ONNX export of ${MODEL} to 8 bits (scripts/export_onnx.py --quantize-only)…`);
  execFileSync('python3', [join(ROOT, 'scripts', 'export_onnx.py'), MODEL_DIR, join(ONNX_DIR, MODEL), '--quantize-only'], { stdio: 'inherit' });
}

// ---------------------------------------------------------------------------------------------
// One static server: the built page at /, transformers.js and ONNX Runtime Web, the ONNX model.

const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json', '.css': 'text/css', '.svg': 'image/svg+xml', '.webmanifest': 'application/manifest+json' };
const MOUNTS = [
  ['/tjs.html', join(ROOT, 'bench', 'tjs.html')],
  ['/bench-worker.mjs', join(ROOT, 'bench', 'worker.mjs')],
  ['/tjs/', join(ROOT, 'bench', 'node_modules', '@huggingface', 'transformers', 'dist')],
  ['/ort/', join(ROOT, 'bench', 'node_modules', 'onnxruntime-web', 'dist')],
  ['/onnx-models/', ONNX_DIR],
  ['/', DIST],
];
const server = createServer(async (req, res) => {
  const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  const [prefix, dir] = MOUNTS.find(([p]) => path === p || (p.endsWith('/') && path.startsWith(p)));
  let file = path === prefix && !prefix.endsWith('/') ? dir : normalize(join(dir, path.slice(prefix.length)));
  try {
    if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
    const body = await readFile(file);
    // Everything is served cross-origin isolated: our page as its hosts should serve it
    // (`cargo xtask serve` does), so the training worker gets threads; the transformers.js page (and
    // transformers.js, ONNX Runtime Web's wasm and worker scripts, the models) as a page that
    // wants ONNX Runtime Web's threads must be. tjs.html sets the thread count it is asked for.
    const isolation = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };
    res.writeHead(200, { 'content-type': MIME[extname(file)] ?? 'application/octet-stream', 'content-length': body.length, ...isolation });
    res.end(body);
  } catch {
    res.writeHead(404).end();
  }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const ORIGIN = `http://127.0.0.1:${server.address().port}`;

async function browser(webgpu) {
  // A fresh on-disk profile, as a user's browser has: an off-the-record one (a plain
  // `newPage()`) stores saved work differently, without the worker's scratch files (see
  // `store::stores_copies`).
  const profile = mkdtempSync(join(tmpdir(), 'bertbench-bench-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args: [...CHROMIUM_FLAGS, ...(webgpu ? ['--enable-unsafe-webgpu', ...(process.env.BERTBENCH_WEBGPU_FLAGS ?? '').split(' ').filter(Boolean)] : [])] });
  const page = context.pages()[0] ?? await context.newPage();
  page.setDefaultTimeout(30 * MINUTE);
  const version = context.browser()?.version() ?? (await page.evaluate(() => navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1] ?? ''));
  const b = {
    version: () => version,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
  return { b, page };
}

/** The real page, idle after its start-up work, with its wasm bindings on `window`. */
async function oursPage(webgpu) {
  const { b, page } = await browser(webgpu);
  await page.goto(`${ORIGIN}/?backend=${webgpu ? 'webgpu' : 'cpu'}#explore`);
  await page.getByTestId('embedding').waitFor({ timeout: 30 * MINUTE });
  // The service worker copies the whole build into the cache after the first load: let it
  // finish, so it does not run beside the timed work.
  await page.waitForFunction(() => document.querySelector('[data-testid=offline]')?.textContent === 'works offline', null, { timeout: 10 * MINUTE });
  return { b, page };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = { inference: [], finetune: [], startup: [], memory: [], batching: [] };
const notes = [];
const add = (section, row) => {
  rows[section].push(row);
  console.error(`${section}: ${row.join(' | ')}`);
};
let failed = false;

// ---------------------------------------------------------------------------------------------
// Inference

async function oursEmbed(webgpu, texts) {
  const { b, page } = await oursPage(webgpu);
  const out = await page.evaluate(async ({ texts, batch, maxLen, backend, model }) => {
    const t0 = performance.now();
    const m = await window.wasmBindings.BenchModel.load(model, backend, maxLen);
    const load = performance.now() - t0;
    await m.embed(texts.slice(0, batch), batch); // warm-up (and shader compilation on WebGPU)
    const times = [];
    let vectors;
    for (let r = 0; r < 2; r++) {
      const t = performance.now();
      vectors = await m.embed(texts, batch);
      times.push(performance.now() - t);
    }
    return { load, times, vectors: Array.from(vectors), device: await m.device_name() };
  }, { texts, batch: BATCH, maxLen: MAX_LEN, backend: webgpu ? 'webgpu' : 'cpu', model: MODEL });
  out.version = b.version();
  await b.close();
  return out;
}

/** transformers.js in its own page: `dtype` 'fp32' (model.onnx) or 'q8' (model_quantized.onnx),
 * ONNX Runtime Web's wasm on `threads` threads (a number, or 'all': navigator.hardwareConcurrency),
 * or WebGPU. Returns the threads ONNX Runtime Web ran with. */
async function tjsEmbed(webgpu, texts, { dtype = 'fp32', threads = 1 } = {}) {
  const { b, page } = await browser(webgpu);
  await page.goto(`${ORIGIN}/tjs.html?dtype=${dtype}&threads=${threads}`);
  await page.waitForFunction(() => window.tjs);
  const out = await page.evaluate(async ({ texts, batch, maxLen, device, model }) => {
    const { AutoTokenizer, AutoModel, env, dtype, threads, isolated } = window.tjs;
    if (threads > 1 && !isolated) return { error: `${threads} threads asked for, but the transformers.js page is not cross-origin isolated` };
    const t0 = performance.now();
    const tok = await AutoTokenizer.from_pretrained(model);
    const net = await AutoModel.from_pretrained(model, { device, dtype });
    const load = performance.now() - t0;
    // Mean pooling over the attention mask, as bertbench's `embed` does.
    const embed = async (all) => {
      const out = [];
      for (let i = 0; i < all.length; i += batch) {
        const inputs = tok(all.slice(i, i + batch), { padding: true, truncation: true, max_length: maxLen });
        const { last_hidden_state: h } = await net(inputs);
        const [n, len, hidden] = h.dims;
        const mask = inputs.attention_mask.data;
        for (let s = 0; s < n; s++) {
          const v = new Float64Array(hidden);
          let count = 0;
          for (let t = 0; t < len; t++) {
            if (!mask[s * len + t]) continue;
            count++;
            const at = (s * len + t) * hidden;
            for (let k = 0; k < hidden; k++) v[k] += h.data[at + k];
          }
          for (let k = 0; k < hidden; k++) out.push(v[k] / count);
        }
      }
      return out;
    };
    await embed(texts.slice(0, batch));
    const times = [];
    let vectors;
    for (let r = 0; r < 2; r++) {
      const t = performance.now();
      vectors = await embed(texts);
      times.push(performance.now() - t);
    }
    // What ONNX Runtime Web settled on (it falls back to 1 where threads cannot start).
    return { load, times, vectors, threads: env.backends.onnx.wasm.numThreads };
  }, { texts, batch: BATCH, maxLen: MAX_LEN, device: webgpu ? 'webgpu' : 'wasm', model: MODEL });
  await b.close();
  if (out.error) throw new Error(out.error);
  return out;
}

function agreement(a, b, hidden = 384) {
  let worst = 1;
  for (let i = 0; i < a.length / hidden; i++) {
    let dot = 0, na = 0, nb = 0;
    for (let k = i * hidden; k < (i + 1) * hidden; k++) { dot += a[k] * b[k]; na += a[k] * a[k]; nb += b[k] * b[k]; }
    worst = Math.min(worst, dot / Math.sqrt(na * nb));
  }
  return worst;
}

if (!SKIP.has('inference')) {
  for (const webgpu of SKIP.has('webgpu') ? [false] : [false, true]) {
    let texts = sentences;
    const ours = await oursEmbed(webgpu, webgpu ? sentences.slice(0, BATCH) : sentences);
    if (webgpu && /swiftshader|software|cpu/i.test(ours.device)) {
      texts = sentences.slice(0, N_WEBGPU);
      notes.push(`WebGPU here is ${ours.device}, a software adapter: WebGPU rows embed ${texts.length} sentences, not ${N}.`);
    }
    const o = webgpu && texts.length !== BATCH ? await oursEmbed(true, texts) : ours;
    const rate = (ms) => texts.length / (Math.min(...ms) / 1000);
    // On the CPU, ours twice: in the page on one thread, and in a worker on the threaded build
    // (where the explorer's many-text views and CPU training run when the page is isolated).
    // transformers.js both ways too: as the fp32 twin of ours (the same weights: its embeddings
    // must match ours) and as its users get it (8-bit weights, its default in wasm), each on one
    // thread and on every core (a cross-origin isolated page). Each is compared with ours on as
    // many threads. On WebGPU, fp32.
    let threaded = null;
    if (!webgpu) {
      const r = await inThreadedWorker({ op: 'embed', texts, batch: BATCH });
      const cos = agreement(o.vectors, r.vectors);
      if (!(cos > 0.9999)) {
        failed = true;
        console.error(`DISAGREE: ours on ${r.threads} threads and on one thread differ (min cosine ${cos})`);
      }
      threaded = { ...r, cos };
      notes.push(`Ours on ${r.threads} threads is the ${r.relaxed ? 'relaxed-SIMD' : '128-bit SIMD'} threaded build in a worker; its embeddings against ours on one thread: min cosine ${cos.toFixed(6)}.`);
    }
    const peers = webgpu ? [{ dtype: 'fp32', threads: 1 }] : [
      { dtype: 'fp32', threads: 1 }, { dtype: 'q8', threads: 1 }, { dtype: 'fp32', threads: 'all' }, { dtype: 'q8', threads: 'all' },
    ];
    const best = { ours: 0, theirs: 0, theirsName: '' };
    for (const peer of peers) {
      const t = await tjsEmbed(webgpu, texts, peer);
      const mine = !webgpu && t.threads > 1 ? threaded : { ...o, threads: 1 };
      const cos = agreement(mine.vectors, t.vectors);
      const threads = (n) => `${n} thread${n === 1 ? '' : 's'}`;
      const where = webgpu ? `WebGPU (${o.device})`
        : `CPU, ours on ${threads(mine.threads)} vs transformers.js ${peer.dtype} on ${threads(t.threads)}`;
      console.error(`${where}: min cosine ours vs transformers.js (${peer.dtype}) over ${texts.length} sentences ${cos.toFixed(6)}`);
      // The 8-bit rows are a different model by design (cosine near 0.95): reported, not checked.
      if (peer.dtype === 'fp32' && !(cos > 0.9999)) {
        failed = true;
        console.error(`DISAGREE: ours and transformers.js embeddings differ on ${where} (min cosine ${cos})`);
      }
      const [ours, theirs] = [rate(mine.times), rate(t.times)];
      if (!webgpu && theirs > best.theirs) Object.assign(best, { theirs, theirsName: `${peer.dtype} on ${threads(t.threads)}` });
      if (!webgpu) best.ours = Math.max(best.ours, ours, rate(o.times));
      add('inference', [where, texts.length, ours.toFixed(1), theirs.toFixed(1), (ours / theirs).toFixed(2), cos.toFixed(peer.dtype === 'fp32' ? 6 : 4), `${(o.load / 1000).toFixed(1)} s / ${(t.load / 1000).toFixed(1)} s`]);
    }
    if (!webgpu) {
      add('inference', [`CPU, the fastest of each: ours vs transformers.js ${best.theirsName}`, texts.length, best.ours.toFixed(1), best.theirs.toFixed(1), (best.ours / best.theirs).toFixed(2), '', '']);
    }
    rows.chromium = o.version;
  }
}
if (!SKIP.has('inference') && !SKIP.has('native')) {
  const native = execFileSync('cargo', ['run', '--locked', '--quiet', '--package', 'bertbench-cli', '--', 'bench', '--model', MODEL_DIR, '--data', join(DATA, 'sst2_dev.tsv'), '--n', String(N), '--batch', String(BATCH), '--max-len', String(MAX_LEN)], { cwd: ROOT, encoding: 'utf8' });
  const perSec = Number(native.trim().split('\n').pop().split('|').at(-2));
  add('inference', ['native CPU (`bertbench bench`)', N, perSec.toFixed(1), '', '', '', '']);
}

// ---------------------------------------------------------------------------------------------
// Fine-tuning step time

async function browserSteps(webgpu, steps) {
  const { b, page } = await oursPage(webgpu);
  const { times, wasmBytes } = await page.evaluate(async ({ texts, labels, batch, maxLen, backend, model, steps }) => {
    const m = await window.wasmBindings.BenchModel.load(model, backend, maxLen);
    const times = Array.from(await m.train_steps(texts, labels, batch, steps));
    return { times, wasmBytes: window.wasmBindings.wasm_memory_bytes() };
  }, { texts: train.map((r) => r[0]), labels: train.map((r) => r[1]), batch: TRAIN_BATCH, maxLen: TRAIN_LEN, backend: webgpu ? 'webgpu' : 'cpu', model: MODEL, steps });
  const peak = peakRendererKb();
  await b.close();
  return { times, peak, wasmBytes };
}

/** `data.op` ('train' or 'embed', see bench/worker.mjs) in a worker running a threaded build on
 * every core, started from the real page (cross-origin isolated here): the studio's CPU path, and
 * the explorer's many-text views where the page is isolated. The build is the one the worker
 * picks (`public/cpu_builds.js`: relaxed SIMD where the browser has it), or the baseline one with
 * `--baseline-simd`. */
async function inThreadedWorker(data) {
  const { b, page } = await oursPage(false);
  const result = await page.evaluate(async (data) => {
    if (!self.crossOriginIsolated) return { error: 'the page is not cross-origin isolated' };
    await import('/cpu_builds.js');
    const { threadedCandidates, hasRelaxedSimd } = globalThis.bertbenchCpuBuilds;
    const url = (name) => {
      const meta = document.querySelector(`meta[name=${name}]`);
      return meta ? new URL(meta.content, document.baseURI).href : undefined;
    };
    const urls = { threaded: url('bertbench-threads'), threadedRelaxed: url('bertbench-threads-relaxed') };
    const [chosen] = threadedCandidates(urls, !data.baselineSimd && hasRelaxedSimd());
    if (!chosen) return { error: 'this build has no threaded bundle' };
    data.threaded = chosen.url;
    data.relaxed = chosen.relaxed;
    data.threads = navigator.hardwareConcurrency;
    const worker = new Worker('/bench-worker.mjs', { type: 'module' });
    const reply = await new Promise((resolve) => {
      worker.addEventListener('message', (e) => { if (e.data && (e.data.times || e.data.error)) resolve(e.data); });
      worker.addEventListener('error', (e) => resolve({ error: e.message }));
      worker.postMessage(data);
    });
    worker.terminate();
    return { ...reply, threads: data.threads, relaxed: data.relaxed };
  }, { model: MODEL, maxLen: MAX_LEN, baselineSimd: argv.includes('--baseline-simd'), ...data });
  const peak = peakRendererKb();
  await b.close();
  if (result.error) throw new Error(`the threaded worker (${data.op}) failed: ${result.error}`);
  return { ...result, peak };
}

/** Fine-tuning steps in the threaded worker. */
async function threadedSteps(steps) {
  const r = await inThreadedWorker({ op: 'train', texts: train.map((r) => r[0]), labels: train.map((r) => r[1]), batch: TRAIN_BATCH, maxLen: TRAIN_LEN, steps });
  return { times: r.times, threads: r.threads, relaxed: r.relaxed, peak: r.peak, wasmBytes: r.wasmBytes };
}

/** The product itself: the studio fine-tunes MiniLM (full, batch 16, length TRAIN_LEN, random batches,
 * one epoch of the full-length texts with 20% held out) in its own training worker, as a user
 * would start it. The peak memory of the tab while it does: the memory target. */
async function studioRun() {
  const { b, page } = await oursPage(false);
  await page.getByTestId('tab-studio').click();
  await page.getByTestId('data-file').setInputFiles({ name: `train_${TRAIN_LEN}.tsv`, mimeType: 'text/tab-separated-values', buffer: readFileSync(trainFile) });
  await page.getByTestId('validation-report').waitFor();
  await page.locator('details:has([data-testid=train-backend]) > summary').click();
  await page.selectOption('[data-testid=train-mode]', 'full');
  for (const [id, value] of [['batch-size', String(TRAIN_BATCH)], ['epochs', '1'], ['max-len', String(TRAIN_LEN)]]) {
    await page.getByTestId(id).fill(value);
    await page.getByTestId(id).dispatchEvent('change');
  }
  if (await page.getByTestId('group-by-length').isChecked()) await page.getByTestId('group-by-length').uncheck();
  await page.waitForFunction(() => !document.querySelector('[data-testid=train-start]')?.disabled);
  const label = (await page.getByTestId('train-cpu').textContent()).trim();
  await page.getByTestId('train-start').click();
  await page.getByTestId('train-done').waitFor({ timeout: 30 * MINUTE });
  const done = await page.getByTestId('train-done').textContent();
  // The page then saves the run (in IndexedDB, from the worker): part of the run's cost.
  await page.locator('[data-testid=saved-item][data-kind=run]').waitFor({ timeout: 5 * MINUTE });
  const peak = peakRendererKb();
  await b.close();
  return { label, done, peak };
}

/** The largest peak resident size (VmHWM) of any Chromium renderer process now running. */
function peakRendererKb() {
  let peak = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('chromium') || !cmd.includes('--type=renderer')) continue;
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (hwm) peak = Math.max(peak, Number(hwm[1]));
    } catch { /* gone */ }
  }
  return peak;
}

if (!SKIP.has('finetune')) {
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const cpu = await browserSteps(false, 5);
  const browserCpu = mean(cpu.times.slice(2)) / 1000;
  const mb = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
  add('memory', [`browser CPU, full fine-tuning MiniLM, batch 16, length ${TRAIN_LEN} (page, 1 thread)`, mb(cpu.peak * 1024), mb(cpu.wasmBytes)]);
  const threaded = await threadedSteps(5);
  const browserThreaded = mean(threaded.times.slice(2)) / 1000;
  add('memory', [`browser CPU, the same in a worker (${threaded.threads} threads)`, mb(threaded.peak * 1024), mb(threaded.wasmBytes)]);
  const studio = await studioRun();
  add('memory', [`the studio: full fine-tuning in its training worker (${studio.label}), one epoch: ${/after (\d+ steps in \S+)/.exec(studio.done)[1]}`, mb(studio.peak * 1024), '']);
  let browserGpu = null;
  if (argv.includes('--webgpu-train')) {
    const gpu = await browserSteps(true, 3);
    browserGpu = mean(gpu.times.slice(1)) / 1000;
  }
  const native = SKIP.has('native') ? null : execFileSync('cargo', ['run', '--locked', '--quiet', '--package', 'bertbench-cli', '--', 'finetune', '--model', MODEL_DIR, '--train', trainFile, '--valid', join(DATA, 'sst2_dev.tsv'), '--mode', 'full', '--batch', String(TRAIN_BATCH), '--max-len', String(TRAIN_LEN), '--group-by-length', 'false', '--max-steps', '5'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const nativeStep = native && Number(/mean step time ([\d.]+) s/.exec(native)[1]);
  const torch = execFileSync('python3', [join(ROOT, 'scripts', 'bench_pytorch_finetune.py'), MODEL_DIR, trainFile, join(DATA, 'sst2_dev.tsv'), '--steps', '3', '--max-len', String(TRAIN_LEN)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const torchStep = Number(/([\d.]+) s mean/.exec(torch)[1]);
  const ratio = (s) => `${(s / torchStep).toFixed(1)}×`;
  add('finetune', ['browser CPU (wasm, 1 thread, page)', browserCpu.toFixed(2), ratio(browserCpu)]);
  add('finetune', [`browser CPU (wasm, ${threaded.threads} threads, ${threaded.relaxed ? 'relaxed SIMD' : '128-bit SIMD'}, training worker)`, browserThreaded.toFixed(2), ratio(browserThreaded)]);
  if (browserGpu !== null) add('finetune', ['browser WebGPU', browserGpu.toFixed(2), ratio(browserGpu)]);
  if (native) add('finetune', ['native CPU (`bertbench finetune`, 2 threads)', nativeStep.toFixed(2), ratio(nativeStep)]);
  add('finetune', [`PyTorch ${/PyTorch ([^\s,]+)/.exec(torch)[1]}, 2 threads`, torchStep.toFixed(2), '1.0×']);
}

// ---------------------------------------------------------------------------------------------
// Start-up and size

if (!SKIP.has('startup')) {
  const { b, page } = await browser(false);
  // "Model ready" is the frame that first shows the loaded model: the page marks it
  // (`bertbench:ready`, ms since navigation start), so the polling of the test driver and the
  // explorer's first computations after it do not count.
  const phases = [];
  const ready = async () => {
    await page.waitForFunction(() => performance.getEntriesByName('bertbench:ready').length > 0, null, { polling: 100 });
    const marks = await page.evaluate(() => Object.fromEntries(performance.getEntriesByType('mark').map((m) => [m.name.replace('bertbench:', ''), m.startTime / 1000])));
    phases.push(marks);
    return marks.ready;
  };
  // Also as the test driver sees it (navigation until Playwright finds the model's facts):
  // that adds its polling and whatever the page computes right after.
  let t = Date.now();
  await page.goto(`${ORIGIN}/#explore`);
  const cold = await ready();
  await page.getByTestId('model-facts').waitFor();
  const coldSeen = (Date.now() - t) / 1000;
  await page.waitForFunction(() => document.querySelector('[data-testid=offline]')?.textContent === 'works offline');
  const cached = [];
  const cachedSeen = [];
  for (let i = 0; i < 5; i++) {
    t = Date.now();
    await page.reload();
    cached.push(await ready());
    await page.getByTestId('model-facts').waitFor();
    cachedSeen.push((Date.now() - t) / 1000);
  }
  await b.close();
  add('startup', ['navigation → model ready, cold (empty profile)', `${cold.toFixed(2)} s (driver saw it at ${coldSeen.toFixed(2)} s)`]);
  add('startup', ['navigation → model ready, from cache (service worker), median of 5', `${median(cached).toFixed(2)} s (driver: ${median(cachedSeen).toFixed(2)} s)`]);
  const at = (name) => median(phases.slice(1).map((p) => p[name])).toFixed(2);
  notes.push(`Cached start-up phases (median, seconds since navigation): wasm running ${at('load')}, model files read ${at('downloaded')}, model built ${at('built')}, first frame showing it ${at('ready')}.`);
  const wasm = (await readdir(DIST)).find((f) => f.endsWith('_bg.wasm.gz'));
  const bytes = gunzipSync(await readFile(join(DIST, wasm)));
  add('startup', ['wasm, raw / gzip -9', `${(bytes.length / 1e6).toFixed(1)} MB / ${(gzipSync(bytes, { level: 9 }).length / 1e6).toFixed(1)} MB`]);
}

// ---------------------------------------------------------------------------------------------
// Length-aware batching: one epoch of full fine-tuning on the first 500 rows of sst2_dev.tsv
// (real sentences, 3 to 60 tokens; the last 100 validate) with random batches and with batches
// grouped by length, in the page (CPU) and natively (`bertbench finetune`, the same core code).

if (!SKIP.has('batching')) {
  const rows500 = dev.slice(0, 500);
  const { b, page } = await oursPage(false);
  const epoch = (group) => page.evaluate(async ({ texts, labels, batch, maxLen, model, group }) => {
    const m = await window.wasmBindings.BenchModel.load(model, 'cpu', maxLen);
    const t = performance.now();
    const steps = await m.train_epoch(texts, labels, 100, batch, group);
    return { steps, seconds: (performance.now() - t) / 1000 };
  }, { texts: rows500.map((r) => r[0]), labels: rows500.map((r) => r[1]), batch: TRAIN_BATCH, maxLen: MAX_LEN, model: MODEL, group });
  const random = await epoch(false);
  const grouped = await epoch(true);
  await b.close();
  add('batching', [`one epoch of full fine-tuning, 400 sentences (${random.steps} steps of ${TRAIN_BATCH}) + evaluation on 100, browser CPU (wasm)`, `${random.seconds.toFixed(1)} s`, `${grouped.seconds.toFixed(1)} s`, `${(random.seconds / grouped.seconds).toFixed(2)}×`]);
  if (!SKIP.has('native')) {
    const [trainFile, validFile] = [writeTsv('train.tsv', rows500.slice(0, 400)), writeTsv('valid.tsv', rows500.slice(400))];
    const native = (group) => {
      const out = execFileSync('cargo', ['run', '--locked', '--quiet', '--package', 'bertbench-cli', '--', 'finetune', '--model', MODEL_DIR, '--train', trainFile, '--valid', validFile, '--mode', 'full', '--epochs', '1', '--batch', String(TRAIN_BATCH), '--max-len', String(MAX_LEN), '--group-by-length', String(group)], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      return Number(/total ([\d.]+) s/.exec(out)[1]);
    };
    const [r, g] = [native(false), native(true)];
    add('batching', ['the same, native CPU (`bertbench finetune`)', `${r.toFixed(1)} s`, `${g.toFixed(1)} s`, `${(r / g).toFixed(2)}×`]);
  }
}

server.close();

// ---------------------------------------------------------------------------------------------

const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
const table = (head, body) => body.length ? [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...body.map((r) => `| ${r.join(' | ')} |`)].join('\n') + '\n' : '';
console.log(`Measured ${new Date().toISOString().slice(0, 10)} on ${cpu} (${spawnSync('nproc').stdout.toString().trim()} cores), ${spawnSync('/usr/bin/chromium', ['--version']).stdout?.toString().match(/Chromium [\d.]+/)?.[0] ?? 'Chromium (version unknown)'}, \`node bench/run.mjs ${argv.join(' ')}\`\n`);
console.log(table(['inference (MiniLM, batch 32, length ≤ 64)', 'sentences', 'ours sentences/s', 'transformers.js sentences/s', 'ours / transformers.js', 'min cosine', 'load ours / transformers.js'], rows.inference));
console.log(table([`fine-tune step (MiniLM, batch 16, length ${TRAIN_LEN})`, 'seconds/step', 'vs PyTorch'], rows.finetune));
console.log(table(['start-up', ''], rows.startup));
console.log(table(['memory', 'peak renderer memory (VmHWM)', "training instance's wasm memory"], rows.memory));
console.log(table(['batching', 'random batches', 'grouped by length', 'speed-up'], rows.batching));
for (const n of notes) console.log(`- ${n}`);
if (failed) {
  console.error('the two systems disagree: see above');
  process.exit(1);
}
