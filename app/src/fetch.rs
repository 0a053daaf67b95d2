//! Same-origin downloads with byte-level progress.

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, Response};

fn js_err(what: &str, e: JsValue) -> String {
    let detail = e
        .as_string()
        .or_else(|| Reflect::get(&e, &"message".into()).ok().and_then(|m| m.as_string()))
        .unwrap_or_else(|| format!("{e:?}"));
    format!("{what}: {detail}")
}

/// `url`'s response in the offline cache (Cache Storage, which the service worker fills), if
/// it is there. Reading it here rather than through the service worker saves a hop per chunk:
/// a cached model loads faster.
async fn from_cache(url: &str) -> Option<Response> {
    let global = js_sys::global();
    let caches = Reflect::get(&global, &"caches".into()).ok().filter(|c| !c.is_undefined())?;
    let lookup: js_sys::Function = Reflect::get(&caches, &"match".into()).ok()?.dyn_into().ok()?;
    let promise: js_sys::Promise = lookup.call1(&caches, &url.into()).ok()?.dyn_into().ok()?;
    JsFuture::from(promise).await.ok()?.dyn_into::<Response>().ok().filter(Response::ok)
}

/// Keeps a copy of a file downloaded from the network for the service worker's first install
/// (`public/sw.js`, `STASH`), so that the offline copy does not download it a second time. Best
/// effort: a copy that cannot be made is simply downloaded again.
fn stash(url: &str, response: &Response) {
    let Ok(copy) = response.clone() else { return };
    let global = js_sys::global();
    let Some(caches) = Reflect::get(&global, &"caches".into()).ok().filter(|c| !c.is_undefined()) else { return };
    let Some(open) = Reflect::get(&caches, &"open".into()).ok().and_then(|f| f.dyn_into::<js_sys::Function>().ok()) else { return };
    let Some(opened) = open.call1(&caches, &"bertbench-fetched".into()).ok().and_then(|p| p.dyn_into::<js_sys::Promise>().ok()) else { return };
    let url = url.to_string();
    wasm_bindgen_futures::spawn_local(async move {
        let Ok(cache) = JsFuture::from(opened).await else { return };
        let put = Reflect::get(&cache, &"put".into()).ok().and_then(|f| f.dyn_into::<js_sys::Function>().ok());
        if let Some(promise) = put.and_then(|put| put.call2(&cache, &url.into(), &copy).ok()).and_then(|p| p.dyn_into::<js_sys::Promise>().ok()) {
            let _ = JsFuture::from(promise).await;
        }
    });
}

/// Downloads `url` (relative to the page), calling `progress(received, total)` as bytes arrive;
/// from the offline cache when it has it.
pub async fn fetch_bytes(url: &str, progress: impl FnMut(u64, Option<u64>)) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    fetch_into(url, progress, |chunk| {
        bytes.extend_from_slice(chunk);
        Ok(())
    })
    .await?;
    Ok(bytes)
}

/// Downloads `url`, handing each chunk to `sink` as it arrives and calling `progress(received,
/// total)`; from the offline cache when it has it (one chunk).
async fn fetch_into(url: &str, mut progress: impl FnMut(u64, Option<u64>), mut sink: impl FnMut(&[u8]) -> Result<(), String>) -> Result<(), String> {
    if let Some(response) = from_cache(url).await {
        if let Ok(promise) = response.array_buffer() {
            if let Ok(buffer) = JsFuture::from(promise).await {
                let bytes = crate::js_bytes::take(&Uint8Array::new(&buffer));
                progress(bytes.len() as u64, Some(bytes.len() as u64));
                return sink(&bytes);
            }
        }
    }
    let global: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    // `fetch` is the same function on Window and WorkerGlobalScope.
    let response: Response = JsFuture::from(global.fetch_with_str(url))
        .await
        .map_err(|e| js_err(&format!("could not download {url}"), e))?
        .dyn_into()
        .map_err(|_| format!("{url}: not a response"))?;
    if !response.ok() {
        return Err(format!("could not download {url}: HTTP {} {}", response.status(), response.status_text()));
    }
    stash(url, &response);
    let total = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.parse::<u64>().ok());
    let body = response.body().ok_or_else(|| format!("{url}: empty response"))?;
    let reader: ReadableStreamDefaultReader = body
        .get_reader()
        .dyn_into()
        .map_err(|_| format!("{url}: cannot read the response"))?;
    let (mut received, mut buffer) = (0u64, Vec::new());
    progress(0, total);
    loop {
        let chunk = JsFuture::from(reader.read())
            .await
            .map_err(|e| js_err(&format!("download of {url} broke off"), e))?;
        let done = Reflect::get(&chunk, &"done".into()).ok().and_then(|d| d.as_bool()).unwrap_or(true);
        if done {
            break;
        }
        let value: Uint8Array = Reflect::get(&chunk, &"value".into())
            .map_err(|e| js_err(url, e))?
            .dyn_into()
            .map_err(|_| format!("{url}: unexpected chunk"))?;
        buffer.resize(value.length() as usize, 0);
        value.copy_to(&mut buffer);
        sink(&buffer)?;
        received += buffer.len() as u64;
        progress(received, total);
    }
    Ok(())
}

/// Downloads a file of a model folder under `models/`: `<url>.gz` where the build stored it
/// gzipped (`cargo xtask`'s post-build hook compresses the weights and tokenizer files, which no
/// plain static server would; sizes in docs/performance.md), inflated as it arrives; else `url`
/// itself (a folder added to a build by hand). `progress` counts the bytes downloaded, of the
/// compressed file where there is one. `None` where neither exists.
pub async fn fetch_model_file(url: &str, mut progress: impl FnMut(u64, Option<u64>)) -> Result<Option<Vec<u8>>, String> {
    let gz = format!("{url}.gz");
    let mut inflate = Inflate::Undecided(Vec::new());
    let fetched = fetch_into(&gz, &mut progress, |chunk| inflate.write(chunk).map_err(|e| corrupt(&gz, e))).await;
    match fetched {
        Ok(()) => return inflate.finish().map(Some).map_err(|e| corrupt(&gz, e)),
        Err(e) if !e.contains("HTTP 404") => return Err(e),
        Err(_) => {}
    }
    match fetch_bytes(url, progress).await {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.contains("HTTP 404") => Ok(None),
        Err(e) => Err(e),
    }
}

fn corrupt(url: &str, e: std::io::Error) -> String {
    format!("{url} is truncated or corrupt: {e} (the download may have broken off; reload the page)")
}

/// A `.gz` file's bytes as they arrive: inflated, or kept as they are where the server had already
/// undone the compression (`Content-Encoding: gzip`, which some servers send for `.gz` files);
/// the gzip magic number tells the two apart.
enum Inflate {
    /// Fewer than two bytes so far.
    Undecided(Vec<u8>),
    Gzip(Box<flate2::write::GzDecoder<Vec<u8>>>),
    Plain(Vec<u8>),
}

impl Inflate {
    fn write(&mut self, chunk: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        match self {
            Inflate::Undecided(head) => {
                head.extend_from_slice(chunk);
                if head.len() >= 2 {
                    let head = std::mem::take(head);
                    *self = if head.starts_with(&[0x1f, 0x8b]) {
                        let mut decoder = Box::new(flate2::write::GzDecoder::new(Vec::new()));
                        decoder.write_all(&head)?;
                        Inflate::Gzip(decoder)
                    } else {
                        Inflate::Plain(head)
                    };
                }
                Ok(())
            }
            Inflate::Gzip(decoder) => decoder.write_all(chunk),
            Inflate::Plain(bytes) => {
                bytes.extend_from_slice(chunk);
                Ok(())
            }
        }
    }

    fn finish(self) -> std::io::Result<Vec<u8>> {
        match self {
            Inflate::Undecided(bytes) | Inflate::Plain(bytes) => Ok(bytes),
            Inflate::Gzip(decoder) => decoder.finish(),
        }
    }
}

/// Downloads `url`, or `None` on HTTP 404 (for optional files such as `vocab.txt`).
pub async fn fetch_optional(url: &str) -> Result<Option<Vec<u8>>, String> {
    match fetch_bytes(url, |_, _| {}).await {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.contains("HTTP 404") => Ok(None),
        Err(e) => Err(e),
    }
}

/// Lets the browser paint and handle input (or, in the worker, messages) before the next piece
/// of work.
pub async fn yield_to_browser() {
    sleep_ms(0).await;
}

/// Waits until the browser has painted the page as it is now: a `setTimeout` queued from a
/// `requestAnimationFrame` callback runs after that frame. In a hidden tab (no frames) it waits
/// for the next task only; where there is no `requestAnimationFrame` (a worker), not at all.
pub async fn after_paint() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let global = js_sys::global();
        let get = |name: &str| Reflect::get(&global, &name.into()).ok().and_then(|f| f.dyn_into::<js_sys::Function>().ok());
        let (Some(raf), Some(set_timeout)) = (get("requestAnimationFrame"), get("setTimeout")) else {
            let _ = resolve.call0(&JsValue::NULL);
            return;
        };
        let hidden = Reflect::get(&global, &"document".into())
            .ok()
            .and_then(|d| Reflect::get(&d, &"hidden".into()).ok())
            .and_then(|h| h.as_bool())
            .unwrap_or(false);
        if hidden {
            // No frames come while the tab is hidden.
            let _ = set_timeout.call2(&global, &resolve, &JsValue::from(0));
            return;
        }
        let then = wasm_bindgen::closure::Closure::once_into_js(move || {
            let global = js_sys::global();
            let _ = set_timeout.call2(&global, &resolve, &JsValue::from(0));
        });
        let _ = raf.call1(&global, &then);
    });
    let _ = JsFuture::from(promise).await;
}

/// Waits `ms` milliseconds with `setTimeout`, in the page or in a worker.
pub async fn sleep_ms(ms: i32) {
    gloo_timers::future::TimeoutFuture::new(ms.max(0) as u32).await;
}


/// Milliseconds since page (or worker) start.
pub fn now_ms() -> f64 {
    use wasm_bindgen::JsCast;
    js_sys::Reflect::get(&js_sys::global(), &"performance".into())
        .ok()
        .and_then(|p| p.dyn_into::<web_sys::Performance>().ok())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::Inflate;
    use std::io::Write;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    fn feed(bytes: &[u8], chunk: usize) -> std::io::Result<Vec<u8>> {
        let mut inflate = Inflate::Undecided(Vec::new());
        for piece in bytes.chunks(chunk) {
            inflate.write(piece)?;
        }
        inflate.finish()
    }

    #[test]
    fn a_gzipped_file_is_inflated_whatever_its_chunks() {
        let text: Vec<u8> = (0..50_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
        for chunk in [1, 7, 4096, usize::MAX] {
            assert_eq!(feed(&gzip(&text), chunk).unwrap(), text, "chunks of {chunk}");
        }
    }

    #[test]
    fn bytes_the_server_already_inflated_pass_as_they_are() {
        let safetensors = b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ";
        assert_eq!(feed(safetensors, 1).unwrap(), safetensors);
        assert_eq!(feed(b"x", 1).unwrap(), b"x");
    }

    #[test]
    fn a_truncated_or_altered_gzip_is_an_error() {
        let gz = gzip(&[7u8; 10_000]);
        assert!(feed(&gz[..gz.len() / 2], 64).is_err(), "truncated");
        assert!(feed(&gz[..gz.len() - 4], 64).is_err(), "no length");
        let mut altered = gz.clone();
        let n = altered.len();
        altered[n - 8] ^= 1;
        assert!(feed(&altered, 64).is_err(), "wrong checksum");
    }
}
