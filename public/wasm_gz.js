// The build's WebAssembly is stored gzipped (`cargo xtask` compresses each `_bg.wasm` into
// `_bg.wasm.gz` after the build), so any static file server sends a fifth of the bytes, whether
// or not it compresses what it serves. This fetches such a file and hands wasm-bindgen's `init`
// a Response of the module itself, decompressed in the browser (`DecompressionStream`). A server
// that already undid the compression (`Content-Encoding: gzip`) gives the module as it is: the
// gzip magic number tells the two apart.
export async function gunzipped(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  stash(url, response);
  const bytes = new Uint8Array(await response.arrayBuffer());
  preloadAfterWasm();
  const body = bytes[0] === 0x1f && bytes[1] === 0x8b
    ? new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))
    : bytes;
  return new Response(body, { headers: { "Content-Type": "application/wasm" } });
}

/** Starts the downloads index.html names in `<meta name="bertbench-after-wasm">` (the default
 * model's weights, `cargo xtask`'s `compress`) once the page's wasm has arrived, as preloads the
 * page's own fetch then uses: on a slow link the weights do not share it with the wasm, so the
 * tokenizer's views work seconds sooner, and the link is not idle while the wasm compiles. Only
 * in the page (a worker has no document), once. */
function preloadAfterWasm() {
  const head = globalThis.document?.head;
  if (!head) return;
  for (const meta of document.querySelectorAll('meta[name="bertbench-after-wasm"]')) {
    const link = document.createElement("link");
    Object.assign(link, { rel: "preload", href: meta.content, as: "fetch", crossOrigin: "anonymous" });
    head.append(link);
    meta.remove();
  }
}

/** Keeps a copy of a file fetched from the network for the service worker's first install
 * (sw.js, `STASH`), so the offline copy does not download it again. Best effort. */
export function stash(url, response) {
  if (!globalThis.caches) return;
  const copy = response.clone();
  // Not when a cache has it already (the offline copy served it).
  caches.match(url)
    .then((hit) => (hit ? copy.body?.cancel() : caches.open("bertbench-fetched").then((c) => c.put(url, copy))))
    .catch(() => {});
}
