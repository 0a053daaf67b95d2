//! Offline use: registers the service worker (`public/sw.js`, written per build by `cargo xtask
//! precache`) and follows its messages, so the page can say whether it works without a network.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use gloo_events::EventListener;

/// Whether the page would load with the network gone.
#[derive(Debug, Clone, PartialEq)]
pub enum Offline {
    /// Not known yet.
    Checking,
    /// The browser offers no service worker (an insecure origin, `file://`, or switched off).
    Unsupported(String),
    /// The service worker is copying this version's files into the browser's cache.
    Caching { done: usize, total: usize, bytes: f64 },
    /// Every file of this version is cached: the page, the wasm, the models and the examples.
    Ready { files: usize },
    /// Caching failed; the page works online, and a previous offline copy (if any) is kept.
    Failed(String),
}

/// The page's offline state, in context.
#[derive(Debug, Clone, Copy)]
pub struct Pwa {
    /// Whether the page works offline.
    pub offline: RwSignal<Offline>,
    /// A newer version took over while the page was open.
    pub updated: RwSignal<bool>,
}

fn field(value: &wasm_bindgen::JsValue, name: &str) -> wasm_bindgen::JsValue {
    js_sys::Reflect::get(value, &name.into()).unwrap_or(wasm_bindgen::JsValue::UNDEFINED)
}

/// Registers the service worker and returns its state, plus a flag set when a newer version took
/// over while the page was open (a reload then runs the new one).
///
/// On a first visit (no worker in charge yet) it registers only once `page_ready` resolves (the
/// page has its model and the training worker its build): the install then finds the files the
/// page and the worker downloaded in its stash
/// (`public/sw.js`) instead of downloading them a second time, side by side with the page.
pub fn register(page_ready: impl std::future::Future<Output = ()> + 'static) -> (RwSignal<Offline>, RwSignal<bool>) {
    let state = RwSignal::new(Offline::Checking);
    let updated = RwSignal::new(false);
    let Some(window) = web_sys::window() else { return (state, updated) };
    let navigator = window.navigator();
    if !js_sys::Reflect::has(&navigator, &"serviceWorker".into()).unwrap_or(false) || !window.is_secure_context() {
        state.set(Offline::Unsupported(
            "this browser offers no service worker here (serve the page from localhost or https to use it offline)".into(),
        ));
        return (state, updated);
    }
    let container = navigator.service_worker();
    let had_controller = container.controller().is_some();

    // The page's listeners on its service worker live as long as the page.
    EventListener::new(&container, "message", move |ev| {
        let Some(ev) = ev.dyn_ref::<web_sys::MessageEvent>() else { return };
        let data = ev.data();
        let number = |name: &str| field(&data, name).as_f64().unwrap_or(0.0);
        match field(&data, "kind").as_string().as_deref() {
            Some("precache") => {
                state.set(Offline::Caching { done: number("done") as usize, total: number("total") as usize, bytes: number("bytes") })
            }
            Some("ready") => state.set(Offline::Ready { files: number("files") as usize }),
            Some("precache-failed") => state.set(Offline::Failed(field(&data, "message").as_string().unwrap_or_default())),
            _ => {}
        }
    })
    .forget();

    // The first worker to take charge of a page that had none is the first install, not an
    // update; any later change of controller is a new version.
    let mut had_controller = had_controller;
    EventListener::new(&container, "controllerchange", move |_| {
        if had_controller {
            updated.set(true);
        }
        had_controller = true;
    })
    .forget();

    wasm_bindgen_futures::spawn_local(async move {
        // A worker already in charge answers "status" (this version is cached) at once: with
        // the network gone, registering again fails (the browser cannot fetch `sw.js` to look
        // for an update), yet the page runs from the offline copy.
        if let Some(controller) = container.controller() {
            controller.post_message(&"status".into()).ok();
        } else {
            page_ready.await;
        }
        let promise = container.register("sw.js");
        if let Err(e) = wasm_bindgen_futures::JsFuture::from(promise).await {
            if container.controller().is_some() {
                return;
            }
            let why = js_sys::Reflect::get(&e, &"message".into()).ok().and_then(|m| m.as_string()).unwrap_or_else(|| format!("{e:?}"));
            state.set(Offline::Failed(format!("the offline service worker could not be registered: {why}")));
        }
    });
    (state, updated)
}
