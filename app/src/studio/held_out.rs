//! Where a run is scored, for the tasks whose card offers this control: a held-out share of the
//! training file, or a separate validation file (an official dev or test split) read by the
//! task's own reader ([`TaskPanel::read_held_out`](super::task::TaskPanel::read_held_out)) and
//! scored with the task's metric. The classification mode's column-mapped file has its own
//! control in `data.rs`.

use std::any::Any;
use std::sync::Arc;

use leptos::prelude::*;

use super::{Studio, Task};
use crate::files::on_files;

/// A separate validation file, read by its task's reader ([`TaskPanel::read_held_out`]).
///
/// [`TaskPanel::read_held_out`]: super::task::TaskPanel::read_held_out
#[derive(Debug, Clone)]
pub struct HeldOut {
    /// The file's name.
    pub name: String,
    /// The task that read it.
    task: Task,
    /// What it holds, for the page: "408 pairs", "3,250 sentences".
    count: String,
    /// What its task's reader made of it (its task takes it back with [`HeldOut::data`]).
    data: Arc<dyn Any + Send + Sync>,
}

/// What a task's reader made of a validation file: its contents and what they count.
pub struct HeldOutRead {
    data: Arc<dyn Any + Send + Sync>,
    count: String,
}

impl HeldOutRead {
    /// `data`, of which there are `count` ("408 pairs").
    pub fn new<T: Any + Send + Sync>(data: T, count: String) -> Self {
        Self { data: Arc::new(data), count }
    }
}

impl HeldOut {
    /// "408 pairs", "3,250 sentences": what the file gave, for the page.
    pub fn count(&self) -> &str {
        &self.count
    }

    /// What the task's reader made of the file, as the type it made.
    pub fn data<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.data.clone().downcast::<T>().ok()
    }
}

impl Studio {
    /// The separate validation file of the task shown, if one is loaded for it.
    pub fn held_out_file(self) -> Option<HeldOut> {
        self.held_out.get_untracked().filter(|h| h.task == self.task.get_untracked())
    }

    /// The share of the training file held out for validation: none when a validation file is
    /// loaded for the task shown.
    pub fn held_out_fraction(self) -> f32 {
        if self.held_out_file().is_some() { 0.0 } else { self.valid_fraction.get_untracked() }
    }

    /// Reads a validation file for the task shown; one that cannot be read keeps what was there
    /// and says why.
    fn set_held_out(self, name: String, bytes: Vec<u8>) {
        let task = self.task.get_untracked();
        match task.panel().read_held_out(self, &name, &bytes) {
            Ok(HeldOutRead { data, count }) => {
                self.data_error.set(None);
                self.held_out.set(Some(HeldOut { name, task, count, data }));
            }
            Err(e) => self.data_error.set(Some(format!("{name} cannot be the validation file: {e}. The data you had is kept."))),
        }
    }
}

/// The validation choice of `task`'s card (every task's but classification's, whose card has its
/// own): a held-out share (`unit` says of what) or a separate file; `prefix` names its test ids
/// (`{prefix}-valid-…`).
#[component]
pub fn HeldOutChoice(task: Task, prefix: &'static str, unit: &'static str, accept: &'static str) -> impl IntoView {
    let studio = expect_context::<Studio>();
    let file = move || studio.held_out.get().filter(|h| h.task == task);
    let picked = on_files(move |mut files| {
        if let Some((name, bytes)) = files.pop() {
            let bytes = studio.class_names.named(task, &name, bytes);
            studio.set_held_out(name, bytes);
        }
    });
    view! {
        <label class="small">"Validation: "
            <select data-testid=format!("{prefix}-valid-fraction") prop:disabled=move || file().is_some()
                on:change=move |ev| studio.valid_fraction.set(event_target_value(&ev).parse().unwrap_or(0.2))>
                {[0.1f32, 0.2, 0.3].map(|f| view! { <option value=f.to_string() selected=move || studio.valid_fraction.get() == f>{format!("{:.0}% {unit}", f * 100.0)}</option> }).collect_view()}
            </select>
        </label>
        <label class="filebutton secondary small">"or a separate validation file"
            <input type="file" accept=accept data-testid=format!("{prefix}-valid-file") on:change=picked />
        </label>
        {move || file().map(|h| view! {
            <span class="small" data-testid=format!("{prefix}-valid-name")>{format!("validating on {} ({}) ", h.name, h.count())}
                <button class="secondary small" on:click=move |_| studio.held_out.set(None)>"use a split instead"</button>
            </span>
        })}
    }
}
