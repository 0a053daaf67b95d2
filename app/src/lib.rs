//! The bertbench page. This file (the `start` function) only mounts (and makes a crash visible), or, inside the
//! training worker, hands over to `worker.rs`; see `shell/page.rs`.

mod app;
mod backend_choice;
mod bench;
mod compute;
mod engine;
mod explore;
mod fetch;
mod files;
mod js_bytes;
mod local_store;
mod lab;
mod lessons;
mod protocol;
mod pwa;
mod runs;
mod saved_work;
mod shell;
mod store;
mod studio;
mod widgets;
mod worker;
mod worker_client;

// The threaded build's `initThreadPool` (JavaScript), which `worker.js` calls to start rayon's
// pool; re-exported so the crate is linked and its export kept.
#[cfg(feature = "threads")]
pub use wasm_bindgen_rayon::init_thread_pool;

/// A panic leaves the wasm instance unusable; say so in the page instead of leaving a tab that
/// silently stops answering.
fn show_fatal(message: &str) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else { return };
    let Ok(banner) = document.create_element("div") else { return };
    banner.set_class_name("banner err fatal");
    banner.set_attribute("data-testid", "fatal").ok();
    banner.set_text_content(Some(&format!(
        "bertbench hit an internal error and stopped: {message}. Reload the page to start again; \
         please report this with the message."
    )));
    if let Some(body) = document.body() {
        body.prepend_with_node_1(&banner).ok();
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
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        show_fatal(&info.to_string());
    }));
    leptos::mount::mount_to_body(shell::App);
}
