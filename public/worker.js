// The training worker's bootstrap. The page posts the URLs of its own wasm-bindgen bundle (the
// ones Trunk hashed into index.html); this imports the same bundle here, and the Rust `start` function
// sees there is no window and starts the worker loop (app/src/worker.rs), which answers "Ready".
self.addEventListener("message", async (event) => {
  const { js, wasm } = event.data;
  try {
    const bindings = await import(js);
    await bindings.default({ module_or_path: wasm });
  } catch (e) {
    const message = `the training worker could not start: ${e}`;
    self.postMessage({ json: JSON.stringify({ Error: { message } }), bytes: [] });
  }
}, { once: true });
