// How much of a saved blob the tab keeps: a dedicated worker writes 270 MB (a MiniLM checkpoint's
// size) from a SharedArrayBuffer (standing in for the threaded build's wasm memory) into
// IndexedDB, either as a Blob built from 8 MB in-memory pieces, or through a scratch file of the
// origin private file system (a synchronous handle, then the file as the blob, removed after the
// commit), as `store::BlobWriter` does. It prints the renderer's resident size before, once the
// write has committed, and after the worker read the bytes back and checked them.
//
//   node bench/blob_memory.mjs            (both ways, each in a fresh browser profile)
import { createServer } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const WORKER = `
const MB = 1 << 20;
const request = (r) => new Promise((ok, fail) => { r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
const committed = (tx) => new Promise((ok, fail) => { tx.oncomplete = ok; tx.onerror = tx.onabort = () => fail(tx.error); });
self.onmessage = async ({ data: way }) => {
  try {
    const memory = new Uint8Array(new SharedArrayBuffer(270 * MB));
    for (let i = 0; i < memory.length; i += 4096) memory[i] = (i / 4096) & 255;
    const open = indexedDB.open('probe', 1);
    open.onupgradeneeded = () => open.result.createObjectStore('s');
    const db = await request(open);
    let blob, remove = async () => {};
    if (way === 'file') {
      const root = await navigator.storage.getDirectory();
      const file = await root.getFileHandle('scratch', { create: true });
      const handle = await file.createSyncAccessHandle();
      for (let at = 0; at < memory.length; at += 8 * MB) handle.write(memory.subarray(at, at + 8 * MB), { at });
      handle.flush();
      handle.close();
      blob = (await file.getFile()).slice();
      remove = () => root.removeEntry('scratch');
    } else {
      const pieces = [];
      for (let at = 0; at < memory.length; at += 8 * MB) {
        const piece = memory.slice(at, at + 8 * MB);
        pieces.push(new Blob([piece]));
        piece.buffer.transfer(0);
      }
      blob = new Blob(pieces);
    }
    const tx = db.transaction('s', 'readwrite');
    tx.objectStore('s').put([blob], 'k');
    await committed(tx);
    blob = null;
    await remove();
    self.postMessage('committed');
    await new Promise((r) => setTimeout(r, 2000));
    const [back] = await request(db.transaction('s').objectStore('s').get('k'));
    const bytes = new Uint8Array(await back.arrayBuffer());
    let same = bytes.length === memory.length;
    for (let i = 0; same && i < memory.length; i += 4096) same = bytes[i] === memory[i];
    self.postMessage({ same });
  } catch (e) {
    self.postMessage({ error: String(e) });
  }
};`;
const PAGE = `<!doctype html><script>
window.write = (way) => new Promise((done) => {
  const worker = new Worker('/w.js');
  worker.onmessage = ({ data }) => { if (data === 'committed') window.committed = true; else done(data); };
  worker.postMessage(way);
});
</script>`;
const server = createServer((req, res) => {
  const js = req.url === '/w.js';
  if (req.url !== '/' && !js) return res.writeHead(404).end();
  res.writeHead(200, { 'content-type': js ? 'text/javascript' : 'text/html', 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' }).end(js ? WORKER : PAGE);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));

/** The largest renderer's resident size, MB. */
function renderer() {
  let most = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer')) continue;
      most = Math.max(most, Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024);
    } catch { /* gone */ }
  }
  return Math.round(most);
}

let failed = false;
for (const way of ['memory', 'file']) {
  const profile = await mkdtemp(join(tmpdir(), 'bertbench-blob-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] });
  try {
    const page = context.pages()[0] ?? await context.newPage();
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    const before = renderer();
    const result = page.evaluate((w) => window.write(w), way);
    await page.waitForFunction(() => window.committed, null, { timeout: 120_000 });
    const committed = renderer();
    const { same, error } = await result;
    if (error || !same) failed = true;
    console.log(`${way === 'file' ? 'scratch file' : 'in-memory blob'}: renderer ${before} MB before, ${committed} MB once committed (270 MB of it the worker's own buffer), ${renderer()} MB after reading back; ${error ?? (same ? 'the bytes read back match' : 'THE BYTES READ BACK DIFFER')}`);
  } finally {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }
}
server.close();
process.exit(failed ? 1 : 0);
