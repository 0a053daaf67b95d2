// The training worker's bootstrap. The page posts the URLs of its own wasm-bindgen bundle (the
// ones Trunk hashed into index.html) and, when the build has them, of the threaded bundles (the
// same crate built with wasm atomics, once with relaxed SIMD in core's matrix kernel and once
// without; `cargo xtask` writes their URLs into index.html, and `cpu_builds.js` picks). This
// imports one of them here; the Rust `start` function sees there is no window and installs the worker
// loop (app/src/worker.rs), and `worker_ready` tells the page it can send work.
//
// Threads need a cross-origin isolated page (shared memory is a SharedArrayBuffer): the host's
// COOP/COEP headers, or the service worker's from the second visit on. The threaded build has no
// WebGPU (wgpu's WebGPU types cannot be shared between threads), so where the browser offers a
// WebGPU adapter the worker keeps the single-thread build, which trains on either. Without
// isolation, or if the threaded bundle fails to start, it runs the single-thread bundle too, and
// says why.
import "./cpu_builds.js";
import { gunzipped } from "./wasm_gz.js";

const { threadedCandidates } = globalThis.bertbenchCpuBuilds;

async function webgpuAdapter() {
  try {
    return Boolean(self.navigator.gpu && (await self.navigator.gpu.requestAdapter()));
  } catch {
    return false;
  }
}

self.addEventListener("message", async (event) => {
  const { js, wasm, threaded } = event.data;
  const candidates = threadedCandidates(event.data);
  let bindings = null;
  let note = "";
  try {
    if (threaded && self.crossOriginIsolated && (await webgpuAdapter())) {
      note = "Training on the CPU uses one thread here: this browser offers WebGPU, which only the single-thread build can drive (train on WebGPU to use the GPU).";
    } else if (threaded && self.crossOriginIsolated) {
      // The relaxed-SIMD build where this browser has relaxed SIMD, else (or if it fails to
      // start) the baseline one.
      const failures = [];
      for (const { url } of candidates) {
        try {
          bindings = await import(url);
          // Its module beside it, gzipped (see wasm_gz.js).
          await bindings.default({ module_or_path: gunzipped(url.replace(/\.js$/, "_bg.wasm.gz")) });
          break;
        } catch (e) {
          bindings = null;
          failures.push(String(e));
        }
      }
      if (!bindings) note = `Training uses one thread: the threaded build did not start (${failures.join("; ")}).`;
      if (bindings) {
        try {
          await bindings.initThreadPool(Math.max(1, navigator.hardwareConcurrency || 1));
        } catch (e) {
          note = `Training uses one thread: the thread pool did not start (${e}).`;
        }
      }
    } else if (threaded) {
      note = "Training uses one thread: this page is not cross-origin isolated yet. Reload it once it works offline (its service worker isolates it), or serve it with the COOP/COEP headers (README, “Hosting”).";
    }
    if (!bindings) {
      bindings = await import(js);
      await bindings.default({ module_or_path: wasm.endsWith(".gz") ? gunzipped(wasm) : wasm });
    }
    // For bench/memory.mjs, which reads the worker's wasm memory as the page's.
    self.wasmBindings = bindings;
    bindings.worker_ready(note);
  } catch (e) {
    const message = `the training worker could not start: ${e}`;
    self.postMessage({ json: JSON.stringify({ Error: { message } }), bytes: [] });
  }
}, { once: true });
