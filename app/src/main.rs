//! The bertbench page. This file only mounts (and makes a crash visible); see `app.rs`.

mod app;
mod engine;
mod fetch;
mod panels;
mod widgets;

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

fn main() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        show_fatal(&info.to_string());
    }));
    leptos::mount::mount_to_body(app::App);
}
