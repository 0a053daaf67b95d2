// The threaded build in a Web Worker, as the studio's training worker runs it (public/worker.js):
// `bench/run.mjs` serves this at /bench-worker.mjs and starts it from the real page, which is
// cross-origin isolated there. `op` 'train': fine-tuning steps, each step's milliseconds; 'embed':
// the texts embedded (a warm-up batch, then twice, each timed) and the vectors of the last pass.
import { gunzipped } from '/wasm_gz.js';

self.addEventListener('message', async ({ data }) => {
  try {
    const bindings = await import(data.threaded);
    // The build stores its wasm gzipped, beside the bindings (public/wasm_gz.js).
    await bindings.default({ module_or_path: gunzipped(data.threaded.replace(/\.js$/, '_bg.wasm.gz')) });
    await bindings.initThreadPool(data.threads);
    const model = await bindings.BenchModel.load(data.model, 'cpu', data.maxLen);
    if (data.op === 'embed') {
      await model.embed(data.texts.slice(0, data.batch), data.batch);
      const times = [];
      let vectors;
      for (let r = 0; r < 2; r++) {
        const t = performance.now();
        vectors = await model.embed(data.texts, data.batch);
        times.push(performance.now() - t);
      }
      self.postMessage({ times, vectors: Array.from(vectors), wasmBytes: bindings.wasm_memory_bytes() });
      return;
    }
    const times = Array.from(await model.train_steps(data.texts, data.labels, data.batch, data.steps));
    self.postMessage({ times, wasmBytes: bindings.wasm_memory_bytes() });
  } catch (e) {
    self.postMessage({ error: String((e && e.stack) || e) });
  }
}, { once: true });
