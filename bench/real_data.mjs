// The real-data benchmark (issue 50, item 1): every fine-tuning task on its public benchmark in
// ../shared/data/real, natively (the `bertbench finetune` CLI) beside PyTorch `transformers`
// running the same recipe with the same seed on the same cores, both scored on the same held-out
// file with the task's standard metric. Prints one Markdown table (and writes it with --md).
//
//   node bench/real_data.mjs [--tasks tag,similarity-bi,similarity-cross,pairs,qa] [--seeds 42,7,3]
//        [--mode full|head] [--quick] [--side both|ours|pytorch|page|all] [--reuse] [--md FILE]
//        [--bin PATH] [--python PATH] [--logs DIR] [--qa-padding masked|kept]
//
// Tasks (training file → measured on, in ../shared/data/real; see make_subsets.py there):
//   tag               conll_train_2k.txt → conll2003/test.txt, entity F1 (seqeval's rules: exact
//                     spans, micro-averaged), each word tagged at its first piece; length 128
//   similarity-bi     stsb_train.tsv → stsb/original/sts-test.csv, Spearman of the cosine (×100)
//   similarity-cross  the same pairs read together, Spearman of the output (×100)
//   pairs             mrpc_train.tsv → mrpc_dev.tsv (MRPC as MSR ships it, split as GLUE does),
//                     accuracy and the F1 of "paraphrase" (label 1); length 128
//   qa                squad_train_1500.json → squad_dev_500.json, SQuAD exact match / F1; window 192
// Recipes, both sides: --mode full (default): every weight trains, 2 epochs, lr 5e-5 (tag batch
// 16, the others 32, qa 16), AdamW (weight decay 0.01 off biases and LayerNorm, ε 1e-8), 10 %
// warmup then linear decay, clip at norm 1, dropout 0.1, batches grouped by length (the studio's
// default; qa as bench_pytorch_qa.py runs it, see docs/performance.md; its loss leaves a batch's
// padding out of the start/end softmax as bertbench's does, or with --qa-padding kept keeps it in
// as `transformers`' own QA loss does); --mode head: the frozen
// encoder's features, the head alone for 20 epochs at batch 32, lr 5e-3. Each side evaluates on
// the measured file after every epoch; the table shows the last epoch's score (nothing is
// chosen on a test split).
//
// STS-B's original test file has 1,379 scored pairs, 284 of them with two trailing source fields
// (9 fields instead of 7), which bertbench's table reader left out before it read around them; both
// sides read the same 1,379 pairs from a JSON Lines copy made here in a temporary folder (score, sentence1,
// sentence2 = fields 5, 6, 7, as sentence-transformers reads the file).
//
// --quick runs each task on its first 64 training and 64 measured examples for one epoch (a
// check of the harness, not a benchmark). --side runs one side only; with --reuse, a run whose
// log (in --logs, default ~/.cache/bertbench/bench/real-data) holds the same command and its
// result is read instead of run again, so the sides can run at different times and the table
// made from both. Long runs are best started under `nice -n 10` on a shared machine.
//
// --side page (or all) also trains in the page (bench/real_data_page.mjs: the studio of dist/ in
// headless Chromium, its worker on the CPU with 2 threads, the measured file given as the
// validation file) and scores the page's export in PyTorch on the same file
// (scripts/score_export.py): the table then has the page's own last evaluation and its export's
// score beside it. Build dist/ first (`cargo xtask dist`).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const REAL = join(ROOT, '..', 'shared', 'data', 'real');
const MODEL = join(ROOT, 'public', 'models', 'all-MiniLM-L6-v2');
const CACHE = process.env.BERTBENCH_CACHE ?? join(process.env.HOME, '.cache', 'bertbench');

const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : fallback);
const flag = (name) => argv.includes(`--${name}`);
const ALL = ['tag', 'similarity-bi', 'similarity-cross', 'pairs', 'qa'];
const TASKS = opt('tasks', ALL.join(',')).split(',').filter(Boolean);
const SEEDS = opt('seeds', '42').split(',').filter(Boolean).map(Number);
const MODE = opt('mode', 'full');
const QUICK = flag('quick');
const SIDE = opt('side', 'both');
const REUSE = flag('reuse');
const BIN = opt('bin', join(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'), 'release', 'bertbench'));
const PYTHON = opt('python', 'python3');
const LOGS = opt('logs', join(CACHE, 'bench', 'real-data'));
const QA_PADDING = opt('qa-padding', 'masked');
for (const t of TASKS) if (!ALL.includes(t)) throw new Error(`unknown task ${t}; use ${ALL.join(', ')}`);
if (!['full', 'head'].includes(MODE)) throw new Error('--mode is full or head');
if (!['masked', 'kept'].includes(QA_PADDING)) throw new Error('--qa-padding is masked or kept');
if (!['both', 'ours', 'pytorch', 'page', 'all'].includes(SIDE)) throw new Error('--side is both, ours, pytorch, page or all');
const sides = { ours: ['both', 'ours', 'all'].includes(SIDE), pytorch: ['both', 'pytorch', 'all'].includes(SIDE), page: ['page', 'all'].includes(SIDE) };
if (sides.ours && !existsSync(BIN)) throw new Error(`no ${BIN}: cargo build --release -p bertbench-cli (or --bin PATH)`);
mkdirSync(LOGS, { recursive: true });

const tempDir = mkdtempSync(join(tmpdir(), 'bertbench-real-'));
process.on('exit', () => rmSync(tempDir, { recursive: true, force: true }));
const QUICK_N = 64;

// ---------------------------------------------------------------------------------------------
// Files. STS-B's test set as JSON Lines (see the header); in --quick, the first QUICK_N examples.

function stsTest() {
  const rows = readFileSync(join(REAL, 'stsb', 'original', 'sts-test.csv'), 'utf8').split('\n').filter((l) => l.trim());
  const pairs = rows.map((l) => l.split('\t')).map((f) => ({ sentence1: f[5], sentence2: f[6], score: Number(f[4]) }));
  const path = join(tempDir, 'sts-test.jsonl');
  writeFileSync(path, pairs.map((p) => JSON.stringify(p)).join('\n') + '\n');
  return path;
}

/** The first `n` examples of a data file, in the same format, in the temporary folder. */
function head(path, n) {
  const out = join(tempDir, `quick-${path.replace(`${REAL}/`, '').replace(`${tempDir}/`, '').replaceAll('/', '-')}`);
  const text = readFileSync(path, 'utf8');
  if (path.endsWith('.json')) {
    const squad = JSON.parse(text);
    let left = n;
    squad.data = squad.data.map((a) => ({
      ...a,
      paragraphs: a.paragraphs.map((p) => {
        const qas = p.qas.slice(0, Math.max(0, left));
        left -= qas.length;
        return { ...p, qas };
      }).filter((p) => p.qas.length),
    })).filter((a) => a.paragraphs.length);
    writeFileSync(out, JSON.stringify(squad));
  } else if (path.endsWith('.jsonl')) {
    writeFileSync(out, text.split('\n').slice(0, n).join('\n') + '\n');
  } else if (path.endsWith('.tsv')) {
    writeFileSync(out, text.split('\n').slice(0, n + 1).join('\n') + '\n');
  } else {
    // CoNLL: up to the blank line that ends sentence n.
    const lines = text.split('\n');
    let count = 0;
    let end = lines.length;
    for (let i = 0, inside = false; i < lines.length; i++) {
      if (!lines[i].trim()) {
        if (inside && ++count === n) { end = i + 1; break; }
        inside = false;
      } else if (!lines[i].startsWith('-DOCSTART-')) inside = true;
    }
    writeFileSync(out, lines.slice(0, end).join('\n') + '\n');
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The tasks: data, recipe, and each side's command and metric.

const full = MODE === 'full';
const TASK = {
  tag: {
    data: ['conll_train_2k.txt', 'conll2003/test.txt'],
    metric: 'entity F1',
    len: 128,
    batch: 16,
    ours: ['--task', 'tag'],
    torch: 'tag',
  },
  'similarity-bi': {
    data: ['stsb_train.tsv', 'stsb/original/sts-test.csv'],
    metric: 'Spearman',
    len: 64,
    batch: 32,
    ours: ['--task', 'similarity', '--encoder', 'bi'],
    torch: 'similarity-bi',
  },
  'similarity-cross': {
    data: ['stsb_train.tsv', 'stsb/original/sts-test.csv'],
    metric: 'Spearman',
    len: 64,
    batch: 32,
    ours: ['--task', 'similarity', '--encoder', 'cross'],
    torch: 'similarity-cross',
  },
  pairs: {
    data: ['mrpc_train.tsv', 'mrpc_dev.tsv'],
    metric: 'accuracy / F1',
    len: 128,
    batch: 32,
    ours: [],
    torch: 'pairs',
  },
  qa: {
    data: ['squad_train_1500.json', 'squad_dev_500.json'],
    metric: 'EM / F1',
    len: 192,
    batch: 16,
    ours: ['--task', 'qa'],
    torch: null,
  },
};

function files(name) {
  const t = TASK[name];
  let [train, valid] = t.data.map((f) => join(REAL, f));
  if (valid.endsWith('sts-test.csv')) valid = stsTest();
  if (QUICK) [train, valid] = [head(train, QUICK_N), head(valid, QUICK_N)];
  return [train, valid];
}

function recipe(name) {
  const t = TASK[name];
  const epochs = QUICK ? 1 : 2;
  if (!full) return { label: `head only, ${QUICK ? 1 : 20} epochs, batch 32, lr 5e-3, length ${t.len}`, epochs: QUICK ? 1 : 20, batch: 32, lr: 5e-3 };
  return { label: `full, ${epochs} epochs, batch ${t.batch}, lr 5e-5, length ${t.len}`, epochs, batch: t.batch, lr: 5e-5 };
}

function oursCommand(name, seed) {
  const t = TASK[name];
  const r = recipe(name);
  const [train, valid] = files(name);
  const args = ['finetune', '--model', MODEL, ...t.ours, '--train', train, '--valid', valid, '--max-len', String(t.len), '--seed', String(seed), '--mode', MODE];
  if (full) args.push('--epochs', String(r.epochs), '--batch', String(r.batch), '--lr', String(r.lr));
  else args.push('--head-epochs', String(r.epochs), '--batch', String(r.batch), '--head-lr', String(r.lr));
  return [BIN, args];
}

function torchCommand(name, seed) {
  const t = TASK[name];
  const r = recipe(name);
  const [train, valid] = files(name);
  if (name === 'qa') {
    if (!full) return null;
    return [PYTHON, [join(ROOT, 'scripts', 'bench_pytorch_qa.py'), MODEL, train, valid, '--batch', String(r.batch), '--epochs', String(r.epochs),
      '--lr', String(r.lr), '--window', String(t.len), '--seed', String(seed), ...(QA_PADDING === 'masked' ? ['--mask-padding'] : [])]];
  }
  return [PYTHON, [join(ROOT, 'scripts', 'bench_pytorch_tasks.py'), '--task', t.torch, MODEL, train, valid, '--mode', MODE, '--epochs', String(r.epochs),
    '--batch', String(r.batch), '--lr', String(r.lr), '--max-len', String(t.len), '--seed', String(seed)]];
}

// ---------------------------------------------------------------------------------------------
// Runs, logged: a log's first line is the command, its last the exit status and wall time.

const show = (cmd, args) => [cmd, ...args].map((a) => a.replace(ROOT + '/', '').replace(REAL, '$R').replace(tempDir, '$TMP')).join(' ');

function run(name, side, seed, cmd, args) {
  const kept = name === 'qa' && side === 'pytorch' && QA_PADDING === 'kept' ? '-kept' : '';
  const log = join(LOGS, `${name}-${MODE}${QUICK ? '-quick' : ''}-seed${seed}-${side}${kept}.log`);
  const line = show(cmd, args);
  if (REUSE && existsSync(log)) {
    const text = readFileSync(log, 'utf8');
    const end = text.match(/\nexit (\d+) after ([\d.]+) s\n$/);
    if (text.split('\n')[0] === line && end && end[1] === '0') {
      console.error(`${name} ${side} seed ${seed}: reusing ${log}`);
      return Promise.resolve({ text, wall: Number(end[2]), load: text.match(/\nload average (.*)\nexit/)?.[1] });
    }
  }
  console.error(`${name} ${side} seed ${seed}: ${line}`);
  const start = performance.now();
  const before = loadavg()[0].toFixed(1);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    const take = (chunk) => {
      text += chunk;
      for (const l of String(chunk).split('\n')) if (/epoch|RESULT|exact match|total/.test(l)) console.error(`  ${l.trim()}`);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = (performance.now() - start) / 1000;
      // The machine's 1-minute load average at the start and the end: how busy the cores were.
      const load = `${before} → ${loadavg()[0].toFixed(1)}`;
      writeFileSync(log, `${line}\n${text}\nload average ${load}\nexit ${code} after ${wall.toFixed(1)} s\n`);
      if (code !== 0) reject(new Error(`${name} ${side} seed ${seed} exited ${code}; log in ${log}`));
      else resolve({ text, wall, load });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Scores, read from each side's output (×100).

/** Ours: the last evaluation's row of the run's table, its total time, and for pairs the F1 of label 1. */
function oursScore(name, text) {
  const rows = text.split('\n').filter((l) => /^\| (Full|Head) \|/.test(l)).map((l) => l.split('|').map((c) => c.trim()).slice(1, -1));
  if (!rows.length) throw new Error(`no evaluation in bertbench's output:\n${text.slice(-2000)}`);
  const last = rows.at(-1);
  const num = (c) => Number(c.replace('%', ''));
  const seconds = Number(text.match(/total ([\d.]+) s/)[1]);
  let score;
  if (name === 'tag') score = [num(last[5]) * 100];
  else if (name.startsWith('similarity')) score = [num(last[5]) * 100];
  else if (name === 'qa') score = [num(last[5]), num(last[6])];
  else {
    const f1 = [...text.matchAll(/F1 per label: (.*)/g)].at(-1)[1].match(/(?:^|, )1 ([\d.]+)/);
    score = [num(last[5]), Number(f1[1]) * 100];
  }
  return { score, seconds };
}

function torchScore(name, text) {
  if (name === 'qa') {
    const m = text.match(/exact match ([\d.]+), F1 ([\d.]+) .* training (\d+) s/);
    return { score: [Number(m[1]), Number(m[2])], seconds: Number(m[3]), note: 'training only' };
  }
  const result = JSON.parse(text.match(/^RESULT (.*)$/m)[1]);
  // The headline metrics: pairs' accuracy and F1, the others' first (entity F1, Spearman).
  return { score: result.score.slice(0, name === 'pairs' ? 2 : 1), seconds: result.seconds };
}

/** The page's side: train in the studio, then score its export in PyTorch; logged as the others. */
async function pageSide(name, seed) {
  const t = TASK[name];
  const r = recipe(name);
  const [train, valid] = files(name);
  const log = join(LOGS, `${name}-${MODE}${QUICK ? '-quick' : ''}-seed${seed}-page.log`);
  const line = show('page', [basename(train), basename(valid), r.label, `seed ${seed}`]);
  if (REUSE && existsSync(log)) {
    const text = readFileSync(log, 'utf8');
    const result = text.match(/^RESULT (.*)$/m);
    if (text.split('\n')[0] === line && result) {
      console.error(`${name} page seed ${seed}: reusing ${log}`);
      return JSON.parse(result[1]);
    }
  }
  console.error(`${name} page seed ${seed}: ${line}`);
  const { runOnPage } = await import('./real_data_page.mjs');
  const lines = [line];
  const say = (l) => { lines.push(l); console.error(`  ${l}`); };
  const before = loadavg()[0].toFixed(1);
  const start = performance.now();
  const got = await runOnPage(name, { train, valid, r: { ...r, mode: MODE }, len: t.len, seed, out: join(LOGS, 'exports'), log: say });
  const wall = (performance.now() - start) / 1000;
  say(`evaluations (the chart's series ×100): ${JSON.stringify(got.evaluations)}`);
  const scorer = spawnSync(PYTHON, [join(ROOT, 'scripts', 'score_export.py'), '--task', name, got.zip, valid, '--max-len', String(t.len), '--window', String(t.len)],
    { cwd: ROOT, encoding: 'utf8', env: { ...process.env, TQDM_DISABLE: '1' } });
  const scored = scorer.stdout.match(/^SCORE (.*)$/m);
  if (!scored) throw new Error(`scoring the page's export failed:\n${scorer.stdout}\n${scorer.stderr}`);
  const all = Object.values(JSON.parse(scored[1]));
  const exported = all.slice(0, name === 'pairs' || name === 'qa' ? 2 : 1);
  say(`export scored in PyTorch: ${scored[1]}`);
  const result = { score: got.score, seconds: got.seconds, wall, load: `${before} → ${loadavg()[0].toFixed(1)}`, exported };
  lines.push(`RESULT ${JSON.stringify(result)}`);
  writeFileSync(log, lines.join('\n') + '\n');
  return result;
}

const fmt = (s) => (s ? s.score.map((x) => x.toFixed(1)).join(' / ') : '–');
const time = (s) => (s ? `${Math.round(s.seconds)} s (${Math.round(s.wall)} s${s.load ? `; load ${s.load}` : ''})` : '–');

const rows = [];
for (const name of TASKS) {
  for (const seed of SEEDS) {
    const t = TASK[name];
    let ours = null;
    let torch = null;
    if (sides.ours) {
      const [cmd, args] = oursCommand(name, seed);
      const r = await run(name, 'ours', seed, cmd, args);
      ours = { ...oursScore(name, r.text), wall: r.wall, load: r.load };
    }
    const tc = torchCommand(name, seed);
    if (sides.pytorch && tc) {
      const r = await run(name, 'pytorch', seed, tc[0], tc[1]);
      torch = { ...torchScore(name, r.text), wall: r.wall, load: r.load };
    }
    const page = sides.page ? await pageSide(name, seed) : null;
    const [train, measured] = t.data;
    rows.push([name, `${train} → ${measured}`, recipe(name).label, String(seed), t.metric, fmt(ours), time(ours), fmt(torch), time(torch),
      fmt(page), time(page), page ? fmt({ score: page.exported }) : '–']);
  }
}

const header = ['task', 'data (train → measured on)', 'recipe', 'seed', 'metric', 'ours (bertbench CLI)', 'ours: time', 'PyTorch', 'PyTorch: time',
  'page (worker)', 'page: time', 'page\'s export in PyTorch'];
const table = [
  `| ${header.join(' | ')} |`,
  `|${header.map(() => '---').join('|')}|`,
  ...rows.map((r) => `| ${r.join(' | ')} |`),
].join('\n');
const note = 'Time: training and the evaluation after each epoch, as each side reports it (QA\'s PyTorch: training only; the page: from the click on Train to the run\'s end, tokenizing included); in brackets the whole process, start-up and tokenizing included, and the machine\'s 1-minute load average at its start and end (2 cores).';
console.log(table);
console.log();
console.log(note);
if (opt('md')) writeFileSync(opt('md'), `${table}\n\n${note}\n`);
