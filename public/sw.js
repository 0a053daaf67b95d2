// The offline service worker. `cargo xtask` writes the build's file list and version into the
// copy in dist/ (the line below), after the build has hashed the file names; this template is never
// served as it is.
const PRECACHE = { version: "dev", files: [] }; // replaced at build time

// The training worker loads one of the two threaded builds (cpu_builds.js); the other one is
// not copied for offline use.
importScripts("cpu_builds.js");
const FILES = PRECACHE.files.filter((file) => !self.bertbenchCpuBuilds.unusedThreadedFile(file));

const PREFIX = "bertbench-";
const CACHE = PREFIX + PRECACHE.version;
// What the page downloaded before this worker took charge (its first visit): the page and its
// workers put each file they fetch from the network here (fetch.rs, wasm_gz.js), and the install
// takes it from here instead of downloading it a second time. Emptied after every install and
// whenever a page asks for the status.
const STASH = "bertbench-fetched";

async function tell(message) {
  for (const client of await self.clients.matchAll({ includeUncontrolled: true })) client.postMessage(message);
}

// Install: fetch every file of this version into a new cache, one at a time with progress (from
// the stash when the page already has it; otherwise revalidated with the server, so a copy in
// the browser's HTTP cache is used only if it is current). If any file fails, the new cache is
// deleted and the worker does not install: a half-filled cache is never used, and the previous
// version (if any) stays in charge.
self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    const stash = await caches.open(STASH);
    const total = FILES.length;
    let bytes = 0;
    try {
      for (let i = 0; i < total; i++) {
        const url = FILES[i];
        const response = (await stash.match(url)) || (await fetch(url, { cache: "no-cache" }));
        if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
        // Counted from the stored copy: reading the body here (`response.clone().arrayBuffer()`)
        // would hold every file twice in this worker's memory, garbage left in the page's process
        // long after the install. A cached response's blob is a handle on the stored bytes, not a
        // copy of them.
        await cache.put(url, response);
        bytes += (await (await cache.match(url)).blob()).size;
        await tell({ kind: "precache", done: i + 1, total, bytes });
      }
    } catch (e) {
      await caches.delete(STASH);
      await caches.delete(CACHE);
      await tell({ kind: "precache-failed", message: String(e && e.message || e) });
      throw e;
    }
    await caches.delete(STASH);
    await self.skipWaiting();
  })());
});

// Activate: drop older versions' caches, then serve the open pages.
self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith(PREFIX) && name !== CACHE) await caches.delete(name);
    }
    await self.clients.claim();
    await tell({ kind: "ready", version: PRECACHE.version, files: FILES.length });
  })());
});

// Pages ask whether this version is cached.
self.addEventListener("message", (event) => {
  if (event.data === "status") {
    event.waitUntil(caches.delete(STASH));
    event.source?.postMessage({ kind: "ready", version: PRECACHE.version, files: FILES.length });
  }
});

// Cross-origin isolation: the threaded training worker needs a SharedArrayBuffer, which a page
// only gets with these two headers. A host that sends them needs nothing more; for one that
// cannot (a plain static host), every response this worker serves carries them, so from the
// second visit on (the first one installs this worker) the page is isolated all the same. Every
// file the page loads is its own origin's, so `require-corp` blocks nothing it uses.
function isolated(response) {
  if (!response || response.type === "opaque" || response.type === "error" || response.status === 0) return response;
  if (response.headers.get("Cross-Origin-Embedder-Policy")) return response;
  const headers = new Headers(response.headers);
  headers.set("Cross-Origin-Opener-Policy", "same-origin");
  headers.set("Cross-Origin-Embedder-Policy", "require-corp");
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

// Same-origin GETs: the page itself network-first (so an update is seen at once when online),
// everything else cache-first; anything not cached goes to the network as usual. All of it
// cross-origin isolated (above).
self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  if (request.mode === "navigate") {
    event.respondWith((async () => {
      try {
        return isolated(await fetch(request));
      } catch (e) {
        const cache = await caches.open(CACHE);
        return isolated((await cache.match("./")) || (await cache.match("index.html")) || Response.error());
      }
    })());
    return;
  }
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    return isolated((await cache.match(request, { ignoreSearch: true })) || (await fetch(request)));
  })());
});
