// Fine-tuning steps in a Web Worker running the threaded build, as the studio's training worker
// does (public/worker.js): `bench/run.mjs` serves this at /bench-worker.mjs and starts it from the
// real page, which is cross-origin isolated there. Replies with each step's milliseconds.
self.addEventListener('message', async ({ data }) => {
  try {
    const bindings = await import(data.threaded);
    await bindings.default();
    await bindings.initThreadPool(data.threads);
    const model = await bindings.BenchModel.load(data.model, 'cpu', data.maxLen);
    const times = Array.from(await model.train_steps(data.texts, data.labels, data.batch, data.steps));
    self.postMessage({ times, wasmBytes: bindings.wasm_memory_bytes() });
  } catch (e) {
    self.postMessage({ error: String((e && e.stack) || e) });
  }
}, { once: true });
