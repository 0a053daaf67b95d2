//! The "1 · data" card every studio mode opens with, one component for all of them: its title,
//! what the file may hold, a drop zone with a file picker and the built-in example, the mode's
//! reading error, then what the mode adds as children (column mapping, its report, where it is
//! validated, its own settings).

use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::DragEvent;

use super::class_names::{ClassNamesLine, ClassNamesState};
use super::{Studio, Task};
use crate::files::{file_list, on_files, read_files};

/// The built-in example a card offers: the button's test id and label.
#[derive(Debug, Clone, Copy)]
pub struct Example {
    pub testid: &'static str,
    pub label: &'static str,
}

/// One mode's data card.
#[component]
pub fn DataCard(
    /// The mode it reads data for: its reading error (`Studio::data_error`) shows here.
    task: Task,
    /// The card's test id.
    testid: &'static str,
    /// Its heading, "1 · …".
    title: &'static str,
    /// What the file may hold, and that it is read in the tab.
    hint: &'static str,
    /// The file types the picker offers, and its test id.
    accept: &'static str,
    file_testid: &'static str,
    /// The built-in example's button.
    example: Example,
    /// A file picked or dropped: its name and bytes (the last one, if several), its class ids
    /// named where the dataset's names were given (`class_names`).
    #[prop(into)]
    on_file: Callback<(String, Vec<u8>)>,
    /// The example chosen.
    #[prop(into)]
    on_example: Callback<()>,
    /// What the mode shows under it.
    children: Children,
) -> impl IntoView {
    let studio = expect_context::<Studio>();
    let dragging = RwSignal::new(false);
    // A data file, or (where the labels are classes) the dataset's README.md or
    // dataset_info.json with it or after it, for the names of its integer labels.
    let take = move |files: Vec<(String, Vec<u8>)>| studio.class_names.take(studio, task, files, |file| on_file.run(file));
    let accept = if ClassNamesState::takes(task) { format!("{accept},.md") } else { accept.to_string() };
    let on_pick = on_files(take);
    let on_drop = move |ev: DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        if let Some(files) = ev.data_transfer().and_then(|d| d.files()) {
            let files = file_list(&files);
            spawn_local(async move { take(read_files(files).await) });
        }
    };
    view! {
        <section class="card" data-testid=testid>
            <h2>{title}</h2>
            <p class="hint">{hint}</p>
            <div class="dropzone" class:over=move || dragging.get()
                on:dragover=move |ev: DragEvent| { ev.prevent_default(); dragging.set(true); }
                on:dragleave=move |_| dragging.set(false)
                on:drop=on_drop>
                <span>"Drop a file here, or "</span>
                <label class="filebutton">"choose a file"
                    <input type="file" multiple=true accept=accept data-testid=file_testid on:change=on_pick />
                </label>
                <span>" or "</span>
                <button class="secondary" data-testid=example.testid on:click=move |_| on_example.run(())>{example.label}</button>
            </div>
            {ClassNamesState::takes(task).then(|| view! {
                <p class="hint small">"Labels written as numbers? Add the dataset's README.md or dataset_info.json, with the file or after it, for their names."</p>
            })}
            <ClassNamesLine task on_forget=move |_| studio.class_names.forget(task, |file| on_file.run(file)) />
            {move || studio.data_error.get().filter(|_| studio.task.get() == task).map(|e| view! { <p class="banner err small" data-testid="data-error">{e}</p> })}
            {children()}
        </section>
    }
}

/// How many tokens each of `inputs` is as `encode` reads it whole (before any cut; 0 for one it
/// refuses), encoded one by one and yielding to the browser every 40 ms, so a large file never
/// freezes the page while its report is counted.
pub(super) async fn token_counts<I>(inputs: impl IntoIterator<Item = I>, mut encode: impl FnMut(I) -> bertbench_core::Result<bertbench_core::tokenizer::Encoded>) -> Vec<usize> {
    let mut counts = Vec::new();
    let mut last = crate::widgets::now_ms();
    for input in inputs {
        counts.push(encode(input).map(|e| e.truncated_from.unwrap_or(e.tokens.len())).unwrap_or(0));
        if crate::widgets::now_ms() - last > 40.0 {
            crate::fetch::yield_to_browser().await;
            last = crate::widgets::now_ms();
        }
    }
    counts
}

