//! Saved work: the offer to resume an interrupted run, and the list of what this browser keeps
//! (training files and finished runs) with the storage it takes.

use leptos::prelude::*;

use crate::app::AppState;
use crate::store::{Item, Kind};
use crate::studio::Studio;
use crate::widgets::duration;

/// What the list shows (settings and the checkpoint have their own places).
const LISTED: [Kind; 3] = [Kind::Dataset, Kind::Run, Kind::LabModel];

pub(crate) fn size(bytes: u64) -> String {
    match bytes {
        0 => "–".into(),
        b if b < 1_000_000 => format!("{:.1} kB", b as f64 / 1e3),
        b => format!("{:.1} MB", b as f64 / 1e6),
    }
}

/// "3 min ago", from a saved time in ms since the epoch.
pub(crate) fn ago(saved_ms: f64) -> String {
    let seconds = ((js_sys::Date::now() - saved_ms) / 1000.0).max(0.0);
    format!("{} ago", duration(seconds))
}

/// The offer to resume a run that a reload (or a closed tab, or a failure) interrupted.
#[component]
pub fn ResumeBanner() -> impl IntoView {
    let state = expect_context::<AppState>();
    let studio = expect_context::<Studio>();
    let error = RwSignal::new(None::<String>);
    view! {
        {move || studio.resume_offer.get().map(|meta| {
            let stage = if meta.phase == bertbench_core::train::Phase::Head { "training the head" } else { "fine-tuning" };
            view! {
                <section class="card banner warn" data-testid="resume-offer">
                    <p>
                        <strong>"A training run was interrupted. "</strong>
                        {format!(
                            "{}, {} training examples, {}: {stage}, step {} of {} ({} epoch{} of this stage done, {} trained on the {}). Its checkpoint is saved in this browser.",
                            crate::studio::recipe(&meta.request.config),
                            meta.request.train.len(),
                            meta.base_model,
                            meta.step,
                            meta.total_steps,
                            meta.epoch,
                            if meta.epoch == 1 { "" } else { "s" },
                            duration(meta.seconds),
                            if meta.device.is_empty() { "CPU".into() } else { meta.device.clone() },
                        )}
                    </p>
                    <div class="row">
                        <button data-testid="resume-button" on:click=move |_| error.set(studio.resume(state).err())>
                            "Resume from the checkpoint"
                        </button>
                        <button class="secondary" data-testid="discard-checkpoint" on:click=move |_| studio.discard_checkpoint()>"Discard it"</button>
                        <span class="small muted">"It resumes on the backend chosen in step 2."</span>
                    </div>
                    {move || error.get().map(|e| view! { <p class="banner err small" data-testid="resume-error">{e}</p> })}
                </section>
            }
        })}
    }
}

/// Training files and runs saved in this browser: reopen or delete them; the storage used.
#[component]
pub fn SavedPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let studio = expect_context::<Studio>();
    let rows = move || {
        studio
            .saved
            .get()
            .into_iter()
            .filter(|i| LISTED.contains(&i.kind))
            .map(|item: Item| {
                let kind = match item.kind {
                    Kind::Dataset => "training file",
                    Kind::LabModel => "MLM lab model",
                    _ => "run + classifier",
                };
                let (open_item, delete_item) = (item.clone(), item.clone());
                let open = move |_| match open_item.kind {
                    Kind::Dataset => studio.open_dataset(state, open_item.clone()),
                    Kind::LabModel => studio.open_lab(state, open_item.clone()),
                    _ => studio.open_run(open_item.clone()),
                };
                view! {
                    <tr data-testid="saved-item" data-kind=format!("{:?}", item.kind).to_lowercase()>
                        <td>{kind}</td>
                        <td data-testid="saved-name">{item.name.clone()}</td>
                        <td>{size(item.size)}</td>
                        <td>{ago(item.saved_ms)}</td>
                        <td>
                            <button class="secondary small" data-testid="open-saved" on:click=open>"Open"</button>
                            " "
                            <button class="secondary small" data-testid="delete-saved" on:click=move |_| studio.delete_saved(delete_item.clone())>"Delete"</button>
                        </td>
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <section class="card" data-testid="saved-panel">
            <h2>"5 · Saved in this browser"</h2>
            <p class="hint">
                "Training files you open, every run you finish (its curves, metrics and classifier) and every MLM lab model are kept here, on this computer only, "
                "and survive a reload or a browser restart. A run in progress saves a checkpoint at the end of each epoch (and every two minutes)."
            </p>
            <p class="small" data-testid="storage-usage">
                {move || match studio.usage.get() {
                    Some(u) => format!("Storage used by this page: {}.", u.describe()),
                    None => "The browser does not say how much storage this page may use.".into(),
                }}
            </p>
            {move || studio.storage_error.get().map(|e| view! { <p class="banner err small" data-testid="storage-error">{e}</p> })}
            {move || if studio.saved.with(|s| s.iter().any(|i| LISTED.contains(&i.kind))) {
                view! {
                    <table class="plain small" data-testid="saved-list">
                        <tr><th>"what"</th><th>"name"</th><th>"size"</th><th>"saved"</th><th></th></tr>
                        {rows}
                    </table>
                }.into_any()
            } else {
                view! { <p class="muted small">"Nothing saved yet."</p> }.into_any()
            }}
        </section>
    }
}
