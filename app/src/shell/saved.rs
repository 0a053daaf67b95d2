//! The list of what this browser keeps (training files, finished runs, MLM lab models) with the
//! storage it takes; opening an item hands it to the studio or the lab.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::app::AppState;
use crate::lab::Lab;
use crate::saved_work::SavedWork;
use crate::store::{Item, Kind, mb};
use crate::studio::Studio;
use crate::widgets::{ago, size};

/// What the list shows (settings and the checkpoint have their own places).
const LISTED: [Kind; 4] = [Kind::Model, Kind::Dataset, Kind::Run, Kind::LabModel];

/// Training files and runs saved in this browser: reopen or delete them; the storage used.
#[component]
pub fn SavedPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let studio = expect_context::<Studio>();
    let lab = expect_context::<Lab>();
    let saved = expect_context::<SavedWork>();
    let rows = move || {
        saved
            .items
            .get()
            .into_iter()
            .filter(|i| LISTED.contains(&i.kind))
            .map(|item: Item| {
                let kind = match item.kind {
                    Kind::Dataset => "training file",
                    Kind::LabModel => "MLM lab model",
                    Kind::Model => "your model",
                    _ => "run + classifier",
                };
                let (open_item, delete_item) = (item.clone(), item.clone());
                let delete = move |_| match delete_item.kind {
                    Kind::LabModel => lab.delete_saved(delete_item.clone()),
                    Kind::Model => {
                        let item = delete_item.clone();
                        spawn_local(async move {
                            let _ = saved.delete(&item).await;
                        });
                    }
                    _ => studio.delete_saved(delete_item.clone()),
                };
                let open = move |_| match open_item.kind {
                    Kind::Dataset => studio.open_dataset(state, open_item.clone()),
                    Kind::LabModel => lab.open_saved(state, open_item.clone()),
                    Kind::Model => {
                        let item = open_item.clone();
                        spawn_local(async move {
                            if let Err(e) = super::open_kept(state, studio, &item).await {
                                saved.error.set(Some(e));
                            }
                        });
                    }
                    _ => studio.open_run(state, open_item.clone()),
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
                            <button class="secondary small" data-testid="delete-saved" on:click=delete>"Delete"</button>
                        </td>
                    </tr>
                }
            })
            .collect_view()
    };
    // What the saved items hold: `(bytes, listed items, the checkpoint's bytes)`.
    let kept = move || {
        saved.items.with(|items| {
            let listed: Vec<&Item> = items.iter().filter(|i| LISTED.contains(&i.kind)).collect();
            let checkpoint = items.iter().find(|i| i.kind == Kind::Checkpoint).map(|i| i.size);
            (listed.iter().map(|i| i.size).sum::<u64>() + checkpoint.unwrap_or(0), listed.len(), checkpoint)
        })
    };
    let delete_all = move || {
        let (bytes, items, _) = kept();
        let question = format!(
            "Delete everything bertbench keeps in this browser: {items} saved item(s), {}: your models, training files, runs, lab models, \
             the checkpoint and the settings? The offline copy of the page stays. This cannot be undone.",
            size(bytes)
        );
        let sure = web_sys::window().and_then(|w| w.confirm_with_message(&question).ok()).unwrap_or(false);
        if sure {
            spawn_local(async move {
                let _ = saved.delete_all().await;
                studio.history.set(Vec::new());
            });
        }
    };
    view! {
        <section class="card" data-testid="saved-panel">
            <h2>"5 · Saved in this browser"</h2>
            <p class="hint">
                "Models you open from the disk, training files you open, every run you finish (its curves, metrics and classifier) and every MLM lab model are kept here, on this computer only, "
                "and survive a reload or a browser restart. A run in progress saves a checkpoint at the end of each epoch (and every two minutes)."
            </p>
            <p class="small" data-testid="storage-usage" data-bytes=move || kept().0.to_string()>
                {move || {
                    let (bytes, items, checkpoint) = kept();
                    if items == 0 && checkpoint.is_none() {
                        return "Nothing is kept here.".to_string();
                    }
                    let checkpoint = checkpoint.map(|c| format!(", with the interrupted run's checkpoint ({})", size(c))).unwrap_or_default();
                    format!("Kept here: {} in {items} item{}{checkpoint}.", size(bytes), if items == 1 { "" } else { "s" })
                }}
            </p>
            <p class="small muted" data-testid="storage-browser">
                {move || match saved.usage.get() {
                    Some(u) => match u.details {
                        Some(d) => format!(
                            "The browser counts {} for this page (of {} it may use): {} of saved work, {} for the offline copy of the page and its models{}.",
                            mb(u.used), mb(u.quota), mb(d.saved), mb(d.offline),
                            if d.scratch >= 1e6 { format!(", {} of scratch files", mb(d.scratch)) } else { String::new() }
                        ),
                        None => format!("The browser counts {} for this page, the offline copy of the page included.", u.describe()),
                    },
                    None => "The browser does not say how much storage this page may use.".into(),
                }}
            </p>
            <div class="row">
                <button class="secondary small" data-testid="delete-all" prop:disabled=move || saved.items.with(|i| i.iter().all(|i| i.kind == Kind::Settings))
                    on:click=move |_| delete_all()>"Delete everything saved…"</button>
            </div>
            {move || saved.error.get().map(|e| view! { <p class="banner err small" data-testid="storage-error">{e}</p> })}
            {move || if saved.items.with(|s| s.iter().any(|i| LISTED.contains(&i.kind))) {
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
