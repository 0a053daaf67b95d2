//! Title bar: model picker, backend badge and switch.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::runs::Backend;
use crate::app::{AppState, LastModel, LoadState, load_model, switch_backend};
use crate::saved_work::SavedWork;
use crate::store::Kind;
use crate::studio::Studio;
use crate::engine::{ModelSource, model_label};
use crate::pwa::{Offline, Pwa};

/// The model menu's value for a model of the user's own: this, then its saved item's id.
const YOURS: &str = "yours:";

/// The top bar.
#[component]
pub fn Header() -> impl IntoView {
    let state = expect_context::<AppState>();
    let pwa = expect_context::<Pwa>();
    let saved = expect_context::<SavedWork>();
    let studio = expect_context::<Studio>();
    let badge = move || {
        let b = state.backend.get();
        match b.active {
            Some(Backend::WebGpu) => (
                "badge",
                format!("WebGPU · {}", b.adapter.unwrap_or_else(|| "adapter".into())),
            ),
            Some(Backend::Cpu) => (
                "badge cpu",
                match b.gpu_note {
                    Some(_) => "CPU (WebGPU unavailable)".to_string(),
                    None => "CPU".to_string(),
                },
            ),
            None => ("badge cpu", "starting…".to_string()),
        }
    };
    let busy = move || !matches!(state.load.get(), LoadState::Ready | LoadState::Failed(_)) || state.busy.get();
    let on_backend = move |ev| {
        let to = if event_target_value(&ev) == "cpu" { Backend::Cpu } else { Backend::WebGpu };
        spawn_local(switch_backend(state, to));
    };
    // A server model by its id; a model of the user's own, kept in this browser, as
    // `yours:<saved item id>`.
    let on_model = move |ev| {
        let value = event_target_value(&ev);
        if let Some(id) = value.strip_prefix(YOURS) {
            let Some(item) = saved.items.with_untracked(|items| items.iter().find(|i| i.id == id).cloned()) else { return };
            spawn_local(async move {
                match super::open_kept(state, studio, &item).await {
                    Ok(()) => LastModel::Yours(item.name.clone()).remember(),
                    Err(e) => saved.error.set(Some(e)),
                }
            });
            return;
        }
        LastModel::Server(value.clone()).remember();
        state.model_id.set(value.clone());
        let prefer = state.backend.get_untracked().active.unwrap_or(Backend::WebGpu);
        spawn_local(async move {
            load_model(state, value.clone(), prefer).await;
            super::open_model::follow_its_head(state, studio, &value);
        });
    };
    // The models the user opened and this browser keeps: `(value, name)`.
    let yours = move || {
        saved.items.with(|items| {
            items.iter().filter(|i| i.kind == Kind::Model).map(|i| (format!("{YOURS}{}", i.id), i.name.clone())).collect::<Vec<_>>()
        })
    };
    // The model in use: not the picked one while a pick loads or after it failed, and none of the
    // listed ones when the lab or the studio made it. A plain closure, not a memo: after a failed
    // load the value is unchanged but the select must be redrawn over the failed pick.
    let in_use = move || {
        state.generation.get();
        state.load.track();
        match state.engine() {
            Some(e) if e.source == ModelSource::Disk => format!("{YOURS}model:{}", e.model_id),
            Some(e) => e.model_id.clone(),
            None => state.model_id.get(),
        }
    };
    let listed = move |value: &str| state.models.with(|m| m.iter().any(|id| id == value)) || yours().iter().any(|(v, _)| v == value);
    view! {
        <header class="top">
            <h1>"bertbench"<span>"a BERT workbench in your browser"</span></h1>
            <div class="spacer"></div>
            // Each label with its select, so that the header wraps between fields, never inside one.
            <span class="header-field">
            <label class="small muted" for="model-select">"Model"</label>
            <select id="model-select" data-testid="model-select" on:change=on_model prop:disabled=busy prop:value=move || {
                // The model in use, whatever was picked last ("" is the made-in-this-tab entry).
                let current = in_use();
                if listed(&current) { current } else { String::new() }
            }>
                {move || {
                    let current = in_use();
                    let models = state.models.get();
                    let made_here = (!listed(&current)).then(|| {
                        let name = state.engine().map(|e| e.model_id.clone()).unwrap_or_default();
                        view! { <option value="" selected=true disabled=true>{format!("{name} (made in this tab)")}</option> }
                    });
                    let servers = models.into_iter().map(|id| {
                        let selected = id == current;
                        view! { <option value=id.clone() selected=selected>{model_label(&id)}</option> }
                    }).collect_view();
                    let kept = yours();
                    let kept = (!kept.is_empty()).then(|| view! {
                        <optgroup label="Yours, kept in this browser">
                            {kept.into_iter().map(|(value, name)| {
                                let selected = value == current;
                                view! { <option value=value selected=selected data-testid="model-option-yours">{name}</option> }
                            }).collect_view()}
                        </optgroup>
                    });
                    view! { {made_here} {servers} {kept} }
                }}
            </select>
            </span>
            <span class="header-field">
            <label class="small muted" for="backend-select">"Backend"</label>
            <select id="backend-select" on:change=on_backend prop:disabled=busy data-testid="backend-select">
                <option value="webgpu" selected=move || state.backend.get().active == Some(Backend::WebGpu)>"WebGPU"</option>
                <option value="cpu" selected=move || state.backend.get().active == Some(Backend::Cpu)>"CPU"</option>
            </select>
            </span>
            <span class=move || badge().0 data-testid="backend">{move || badge().1}</span>
            {move || {
                let (class, text, title) = match pwa.offline.get() {
                    Offline::Checking => return None,
                    Offline::Unsupported(why) => ("badge cpu", "online only".to_string(), why),
                    Offline::Caching { done, total, bytes } => ("badge cpu", format!("saving for offline {done}/{total}"),
                        format!("{:.0} MB copied into this browser so far", bytes / 1e6)),
                    Offline::Ready { files } => ("badge ok", "works offline".to_string(),
                        format!("the page, its wasm, the models and the examples ({files} files) are cached in this browser: it loads without a network")),
                    Offline::Failed(why) => ("badge err", "offline copy failed".to_string(), why),
                };
                Some(view! { <span class=class data-testid="offline" title=title>{text}</span> })
            }}
        </header>
        <Show when=move || pwa.updated.get()>
            <p class="banner ok small" data-testid="update-ready">"A new version of bertbench has been saved in this browser; it takes over when the page is reloaded."</p>
        </Show>
    }
}
