//! The whole page: the shared state and each tab's, start-up, and the layout of the tabs.

use std::collections::VecDeque;

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{DeviceCheckPanel, Header, ModelPanel, SavedPanel};
use crate::runs::Backend;
use crate::app::{AppState, BackendStatus, CheckState, LastModel, LoadState, Tab, current_hash, load_model};
use crate::engine::{self, DEFAULT_MODEL};
use crate::explore::{AttentionPanel, EmbeddingPanel, FillMaskPanel, InputPartsPanel, MapPanel, ProbePanel, SimilarityPanel, TokensPanel};
use crate::lab::{Lab, LabPanel};
use crate::lessons::{Lessons, LessonsPanel};
use crate::saved_work::SavedWork;
use crate::studio::{ResumeBanner, Studio, StudioDistilPanel, StudioInsidePanel, StudioResultsPanel, StudioTaskData, StudioTaskSwitch, StudioTrainPanel};
use crate::worker_client::WorkerClient;

fn query_param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search).ok()?.get(name)
}

/// Makes the tab follow the address after the page loaded: Back and Forward, a typed `#studio`,
/// a lesson link pasted or clicked (the browser changes only the `#` part, without a reload).
fn follow_address(state: AppState, lessons: Lessons) {
    let Some(window) = web_sys::window() else { return };
    // The page lives as long as the tab: the listener is never removed.
    gloo_events::EventListener::new(&window, "hashchange", move |_| {
        let hash = current_hash();
        let tab = if lessons.open_address() { Some(Tab::Lessons) } else { Tab::from_hash(&hash) };
        if let Some(tab) = tab.filter(|t| *t != state.tab.get_untracked()) {
            state.tab.set(tab);
            tab.remember();
        }
    })
    .forget();
}

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let folder_name = |m: &String| !m.is_empty() && m.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) && !m.contains("..");
    // The address's `?model=`, else the model this browser had open last, else the default.
    let asked = query_param("model").filter(folder_name);
    let recalled = if asked.is_none() { LastModel::recalled() } else { None };
    let model_id = asked
        .or_else(|| match &recalled {
            Some(LastModel::Server(id)) => Some(id.clone()).filter(folder_name),
            _ => None,
        })
        .unwrap_or_else(|| DEFAULT_MODEL.to_string());
    let prefer = match query_param("backend").as_deref() {
        Some("cpu") => Backend::Cpu,
        _ => Backend::WebGpu,
    };
    let state = AppState {
        engine: StoredValue::new_local(None),
        generation: RwSignal::new(0),
        backend: RwSignal::new(BackendStatus::default()),
        load: RwSignal::new(LoadState::Starting),
        check: RwSignal::new(CheckState::NotRun),
        model_id: RwSignal::new(model_id.clone()),
        models: RwSignal::new(vec![model_id.clone()]),
        busy: RwSignal::new(false),
        waiting: StoredValue::new_local(VecDeque::new()),
        sentence_a: RwSignal::new("The teacher explained how BERT reads a sentence in both directions.".to_string()),
        sentence_b: RwSignal::new(String::new()),
        token: RwSignal::new(None),
        base: StoredValue::new_local(None),
        tab: RwSignal::new(Tab::at_start(&current_hash())),
        arriving: StoredValue::new_local(None),
        arrived: RwSignal::new(0),
    };
    provide_context(state);
    // A selected token belongs to the sentence it was selected in.
    Effect::new(move |_| {
        state.sentence_a.track();
        state.sentence_b.track();
        state.generation.track();
        state.token.set(None);
    });
    // Each tab's state, and what they share besides the model: the training worker and the
    // saved work. The worker starts once the model has loaded (below).
    let client = WorkerClient::new();
    crate::compute::use_worker(client);
    let saved = SavedWork::new();
    let studio = Studio::new(client, saved);
    studio.follow_recipe_kind();
    let lab = Lab::new(client, saved);
    provide_context(client);
    provide_context(saved);
    provide_context(studio);
    provide_context(crate::studio::Distillations::new());
    let choice = crate::backend_choice::BackendChoice::new(state, client, studio.backend);
    studio.choice.set_value(Some(choice));
    provide_context(choice);
    provide_context(lab);
    let lessons = Lessons::new();
    follow_address(state, lessons);
    provide_context(lessons);
    spawn_local(async move {
        let items = saved.load().await;
        studio.restore_saved(state, &items);
        lab.restore_saved(&items).await;
    });
    // The training worker starts once the page is usable: the model loaded (or failed to); see
    // `WorkerClient::start`. The service worker's first install waits for the training worker
    // too (ready, or failed to start), so that the threaded build the worker fetched is in the
    // stash the install takes it from, not downloaded twice (`pwa::register`).
    let started = StoredValue::new(false);
    let (settled, page_ready) = futures::channel::oneshot::channel::<()>();
    let settled = StoredValue::new(Some(settled));
    Effect::new(move |_| {
        if !matches!(state.load.get(), LoadState::Ready | LoadState::Failed(_)) {
            return;
        }
        if !started.get_value() {
            started.set_value(true);
            client.start();
        }
        if client.ready.get() || client.failed.get() {
            if let Some(tx) = settled.try_update_value(Option::take).flatten() {
                let _ = tx.send(());
            }
        }
    });
    let (offline, updated) = crate::pwa::register(async move {
        let _ = page_ready.await;
    });
    provide_context(crate::pwa::Pwa { offline, updated });
    let tab = state.tab;
    let show = move |t: Tab| state.show(t);
    spawn_local(async move {
        let models = engine::available_models().await;
        state.models.update(|m| {
            for id in models {
                if !m.contains(&id) {
                    m.push(id);
                }
            }
        });
    });
    spawn_local(async move {
        // A model of the user's own, kept in this browser, opens from there; one that is gone,
        // or a server model that no longer loads, gives way to the default.
        if let Some(LastModel::Yours(name)) = recalled {
            if let Ok(Some(item)) = crate::store::get(&format!("model:{name}")).await {
                if super::open_kept(state, studio, &item).await.is_ok() {
                    return;
                }
            }
        }
        load_model(state, model_id.clone(), prefer).await;
        if state.engine().is_none() && model_id != DEFAULT_MODEL && !query_param("model").is_some_and(|m| m == model_id) {
            state.model_id.set(DEFAULT_MODEL.to_string());
            load_model(state, DEFAULT_MODEL.to_string(), prefer).await;
        }
    });

    view! {
        <Header />
        <nav class="tabs" role="tablist">
            <button role="tab" data-testid="tab-lessons" class:active=move || tab.get() == Tab::Lessons
                aria-selected=move || (tab.get() == Tab::Lessons).to_string() on:click=move |_| show(Tab::Lessons)>"Lessons"</button>
            <button role="tab" data-testid="tab-explore" class:active=move || tab.get() == Tab::Explore
                aria-selected=move || (tab.get() == Tab::Explore).to_string() on:click=move |_| show(Tab::Explore)>"Explore BERT"</button>
            <button role="tab" data-testid="tab-studio" class:active=move || tab.get() == Tab::Studio
                aria-selected=move || (tab.get() == Tab::Studio).to_string() on:click=move |_| show(Tab::Studio)>"Fine-tuning studio"</button>
            <button role="tab" data-testid="tab-lab" class:active=move || tab.get() == Tab::Lab
                aria-selected=move || (tab.get() == Tab::Lab).to_string() on:click=move |_| show(Tab::Lab)>"MLM lab"</button>
        </nav>
        <main>
            <ModelPanel />
            // Both tabs stay mounted (hidden, not removed), so work in one survives a visit to the other.
            <div class="tab-body" class:hidden=move || tab.get() != Tab::Explore>
                <TokensPanel />
                <crate::compute::WeightsArriving what="The views below need" />
                <InputPartsPanel />
                <EmbeddingPanel />
                <SimilarityPanel />
                <AttentionPanel />
                <MapPanel />
                <ProbePanel />
                <FillMaskPanel />
                <DeviceCheckPanel />
            </div>
            <div class="tab-body" class:hidden=move || tab.get() != Tab::Studio>
                <ResumeBanner />
                <StudioTaskSwitch />
                <StudioTaskData />
                <StudioTrainPanel />
                <StudioResultsPanel />
                <StudioDistilPanel />
                <StudioInsidePanel />
                <SavedPanel />
            </div>
            <div class="tab-body" class:hidden=move || tab.get() != Tab::Lab>
                <LabPanel />
            </div>
            // Mounted only while shown: a lesson's view computes on the model, which the other
            // tabs' views should not wait for.
            <Show when=move || tab.get() == Tab::Lessons>
                <div class="tab-body"><LessonsPanel /></div>
            </Show>
        </main>
        <footer>
            "bertbench runs entirely in this tab: no text you type leaves your computer. "
            "Built with burn, tokenizers and Leptos."
        </footer>
    }
}
