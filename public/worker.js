// A training worker's bootstrap. The page posts the URLs of its own wasm-bindgen bundle (the
// ones the build hashed into index.html), of the threaded bundles when the build has them (the same
// crate built with wasm atomics, once with relaxed SIMD in core's matrix kernel and once without;
// `cargo xtask` writes their URLs into index.html, and `cpu_builds.js` picks), and the worker's
// `role`. This imports one of them here; the Rust `start` function sees there is no window and
// installs the worker loop (app/src/worker/mod.rs), and `worker_ready` tells the page it can send
// work.
//
// Roles: the page's first worker ("cpu") trains on the CPU and computes the explorer's many-text
// views, so it takes the threaded build where it can. Threads need a cross-origin isolated page
// (shared memory is a SharedArrayBuffer): the host's COOP/COEP headers, or the service worker's
// from the second visit on. The threaded build has no WebGPU (wgpu's WebGPU types cannot be
// shared between threads), so a run on WebGPU goes to a second worker ("gpu"), started when
// one is asked for, which runs the single-thread build. Without isolation, or if the threaded
// bundle fails to start, the first worker runs the single-thread bundle too (which also drives
// WebGPU), and says why it has one thread.
import "./cpu_builds.js";
import { gunzipped } from "./wasm_gz.js";

const { threadedCandidates } = globalThis.bertbenchCpuBuilds;

self.addEventListener("message", async (event) => {
  const { js, wasm, threaded, role } = event.data;
  const candidates = threadedCandidates(event.data);
  let bindings = null;
  let note = "";
  try {
    if (role !== "gpu" && threaded && self.crossOriginIsolated) {
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
    } else if (role !== "gpu" && threaded) {
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
