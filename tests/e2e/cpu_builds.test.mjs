// The training worker's choice between its two threaded builds (public/cpu_builds.js), in Node:
// the order it tries them in, and that its one-instruction probe says exactly what the built
// relaxed-SIMD wasm needs. In Chromium, threads.test.mjs checks which build the worker runs and
// that it falls back to the baseline one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, DIST } from './harness.mjs';

await import(pathToFileURL(join(ROOT, 'public', 'cpu_builds.js')).href);
const { threadedCandidates, hasRelaxedSimd, unusedThreadedFile, RELAXED_SIMD_PROBE } = globalThis.bertbenchCpuBuilds;

/** The `content` of index.html's meta tag `name`: a threaded bundle's path. */
async function bundle(name) {
  const html = await readFile(join(DIST, 'index.html'), 'utf8');
  const path = new RegExp(`<meta name="${name}" content="([^"]+)"`).exec(html)?.[1];
  assert.ok(path, `dist/index.html names no ${name} bundle`);
  return path;
}

test('the relaxed build first where the browser has relaxed SIMD, then the baseline one', () => {
  const urls = { threaded: 'a/x.js', threadedRelaxed: 'b/x.js' };
  assert.deepEqual(threadedCandidates(urls, true), [{ url: 'b/x.js', relaxed: true }, { url: 'a/x.js', relaxed: false }]);
  assert.deepEqual(threadedCandidates(urls, false), [{ url: 'a/x.js', relaxed: false }]);
  assert.deepEqual(threadedCandidates({ threaded: 'a/x.js' }, true), [{ url: 'a/x.js', relaxed: false }]);
  assert.deepEqual(threadedCandidates({}, true), []);
});

test('the offline copy leaves out exactly the threaded build this browser does not load first', async () => {
  const sw = await readFile(join(DIST, 'sw.js'), 'utf8');
  const files = JSON.parse(/files: (\[.*\]) \}/.exec(sw)[1]);
  const dir = async (name) => (await bundle(name)).split('/')[0] + '/';
  const [baseline, relaxed] = [await dir('bertbench-threads'), await dir('bertbench-threads-relaxed')];
  const under = (d) => files.filter((f) => f.startsWith(d));
  assert.ok(under(baseline).some((f) => f.endsWith('_bg.wasm.gz')) && under(relaxed).some((f) => f.endsWith('_bg.wasm.gz')), 'sw.js lists both threaded builds');
  assert.deepEqual(files.filter((f) => unusedThreadedFile(f, true)), under(baseline));
  assert.deepEqual(files.filter((f) => unusedThreadedFile(f, false)), under(relaxed));
});

test('the probe: true only when the module validates, false when validation throws', () => {
  assert.equal(hasRelaxedSimd(() => true), true);
  assert.equal(hasRelaxedSimd(() => false), false);
  assert.equal(hasRelaxedSimd(() => { throw new Error('no WebAssembly'); }), false);
});

test('the probe is a valid module but for its one relaxed instruction', () => {
  // The same module with `v128.bitselect` (128-bit SIMD, also three v128 operands) in place of
  // `f32x4.relaxed_madd`: one byte shorter, so the code section and the body shrink by one.
  const p = [...RELAXED_SIMD_PROBE];
  assert.deepEqual(p.slice(-4), [0xfd, 0x85, 0x02, 0x0b]);
  const swapped = [...p.slice(0, -4), 0xfd, 0x52, 0x0b];
  const code = p.indexOf(0x0a, 8);
  swapped[code + 1] -= 1;
  swapped[code + 3] -= 1;
  assert.equal(WebAssembly.validate(new Uint8Array(swapped)), true);
});

test('this runtime validates the relaxed build exactly when it validates the probe, and the baseline build always', async () => {
  // Stored gzipped (public/wasm_gz.js decompresses them in the browser).
  const wasm = async (name) => gunzipSync(await readFile(join(DIST, (await bundle(name)).replace(/\.js$/, '_bg.wasm.gz'))));
  const [baseline, relaxed] = [await wasm('bertbench-threads'), await wasm('bertbench-threads-relaxed')];
  assert.equal(WebAssembly.validate(baseline), true, 'the baseline threaded build validates');
  assert.equal(WebAssembly.validate(relaxed), hasRelaxedSimd(), `Node ${process.version}: the probe and the relaxed build disagree`);
  assert.notDeepEqual(relaxed, baseline);
});
