//! The bertbench page. This file (the `start` function) only mounts (and makes a crash visible), or, inside the
//! training worker, hands over to `worker.rs`; see `shell/page.rs`.

// What the training worker runs, in every build; what only the page uses of them is unused in
// a build without it.
#[cfg_attr(not(feature = "page"), allow(dead_code))]
mod engine;
#[cfg_attr(not(feature = "page"), allow(dead_code))]
mod examples;
#[cfg_attr(not(feature = "page"), allow(dead_code))]
mod fetch;
mod js_bytes;
#[cfg_attr(not(feature = "page"), allow(dead_code))]
mod local_store;
#[cfg_attr(not(feature = "page"), allow(dead_code))]
mod protocol;
#[cfg_attr(not(feature = "page"), allow(dead_code))]
mod runs;
mod saved;
#[cfg_attr(not(feature = "page"), allow(dead_code))]
mod store;
mod worker;

// The page (Leptos): left out of the threaded builds, which only the training worker loads, so
// they compile neither Leptos nor the views (feature `page`).
#[cfg(feature = "page")]
mod app;
#[cfg(feature = "page")]
mod backend_choice;
#[cfg(feature = "page")]
mod bench;
#[cfg(feature = "page")]
mod compute;
#[cfg(feature = "page")]
mod explore;
#[cfg(feature = "page")]
mod files;
#[cfg(feature = "page")]
mod lab;
#[cfg(feature = "page")]
mod lessons;
#[cfg(feature = "page")]
mod pwa;
#[cfg(feature = "page")]
mod saved_work;
#[cfg(feature = "page")]
mod shell;
#[cfg(feature = "page")]
mod studio;
#[cfg(feature = "page")]
mod widgets;
#[cfg(feature = "page")]
mod worker_client;

// The threaded build's `initThreadPool` (JavaScript), which `worker.js` calls to start rayon's
// pool; re-exported so the crate is linked and its export kept.
#[cfg(feature = "threads")]
pub use wasm_bindgen_rayon::init_thread_pool;

/// A panic leaves the wasm instance unusable; say so in the page, with a button that reloads the
/// tab, instead of leaving a tab that silently stops answering.
#[cfg(feature = "page")]
fn show_fatal(message: &str) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else { return };
    let Ok(banner) = document.create_element("div") else { return };
    banner.set_class_name("banner err fatal");
    banner.set_attribute("data-testid", "fatal").ok();
    banner.set_attribute("role", "alert").ok();
    banner.set_text_content(Some(&format!(
        "bertbench hit an internal error and stopped ({message}). Your saved work is safe in this browser. \
         Please report this with the message. "
    )));
    if let Ok(button) = document.create_element("button") {
        button.set_text_content(Some("Reload this tab"));
        button.set_attribute("data-testid", "fatal-reload").ok();
        // An inline handler would need the CSP to allow it; a Rust closure does not.
        gloo_events::EventListener::new(&button, "click", |_| {
            if let Some(w) = web_sys::window() {
                let _ = w.location().reload();
            }
        })
        .forget();
        banner.append_child(&button).ok();
    }
    if let Some(body) = document.body() {
        body.prepend_with_node_1(&banner).ok();
    }
}

/// What a panic says, without the build machine's paths: the message and where it happened,
/// from the crate's folder on (`reactive_graph-0.2.16/src/traits.rs:767`, `app/src/lessons/attention.rs:40`).
#[cfg(feature = "page")]
fn panic_summary(info: &std::panic::PanicHookInfo<'_>) -> String {
    let payload = info
        .payload()
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| info.payload().downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into());
    match info.location() {
        Some(at) => format!("{payload} at {}:{}", short_path(at.file()), at.line()),
        None => payload,
    }
}

/// A source path from the folder above its last `src` on: a crate's own path, not the machine's.
#[cfg(feature = "page")]
fn short_path(file: &str) -> &str {
    let parts: Vec<&str> = file.split(['/', '\\']).collect();
    match parts.iter().rposition(|p| *p == "src") {
        Some(i) if i > 0 => {
            let skip: usize = parts[..i - 1].iter().map(|p| p.len() + 1).sum();
            &file[skip..]
        }
        _ => parts.last().copied().unwrap_or(file),
    }
}

#[cfg(target_family = "wasm")]
unsafe extern "C" {
    /// Synthesised by the wasm linker: runs every static constructor (burn/cubecl register
    /// their kernels and IR through `inventory`).
    fn __wasm_call_ctors();
}

/// Runs once when the wasm module starts, in the page or in the worker.
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn start() {
    // Calling the constructors ourselves, once, tells wasm-ld this is not a "command" module.
    // Otherwise it wraps *every* export in a call to them, so each call from JavaScript (every
    // event handler, every worker message) re-ran them: measured, that was most of the page's
    // CPU time while training.
    #[cfg(target_family = "wasm")]
    // SAFETY: called exactly once, before any other Rust code of this instance runs.
    unsafe {
        __wasm_call_ctors();
    }
    // The same wasm runs the training worker (started by `worker.js`), which has no window.
    if worker::in_worker() {
        worker::start();
        return;
    }
    #[cfg(feature = "page")]
    {
        std::panic::set_hook(Box::new(|info| {
            console_error_panic_hook::hook(info);
            show_fatal(&panic_summary(info));
        }));
        leptos::mount::mount_to_body(shell::App);
    }
}

#[cfg(all(test, feature = "page"))]
mod tests {
    use super::short_path;

    #[test]
    fn a_panics_path_starts_at_its_crate() {
        assert_eq!(short_path("/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/reactive_graph-0.2.16/src/traits.rs"), "reactive_graph-0.2.16/src/traits.rs");
        assert_eq!(short_path("app/src/lessons/attention.rs"), "app/src/lessons/attention.rs");
        assert_eq!(short_path("/home/me/bertbench/app/src/lib.rs"), "app/src/lib.rs");
        assert_eq!(short_path("C:\\work\\core\\src\\lib.rs"), "core\\src\\lib.rs");
        assert_eq!(short_path("lib.rs"), "lib.rs");
    }
}
