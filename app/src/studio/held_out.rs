//! Where a tagging, question-answering, similarity or multiple-choice run is scored: a held-out
//! share of the training file, or a separate validation file (an official dev or test split)
//! read by the task's own reader and scored with the task's metric. One control for these modes;
//! the classification mode's column-mapped file has its own in `data.rs`.

use std::sync::Arc;

use bertbench_core::tasks::choice::{ChoiceItem, parse_choices};
use bertbench_core::data::{PairData, QaData, TaggedData, guess_pair_columns, parse_qa, parse_table, parse_tagged, to_pairs};
use leptos::prelude::*;

use super::{Studio, Task};
use crate::files::on_files;

/// A separate validation file, read.
#[derive(Debug, Clone)]
pub struct HeldOut {
    /// The file's name.
    pub name: String,
    /// What it holds, by task.
    pub data: HeldOutData,
}

/// A validation file's contents, by the task that reads it.
#[derive(Debug, Clone)]
pub enum HeldOutData {
    Tagged(Arc<TaggedData>),
    Questions(Arc<QaData>),
    Pairs(Arc<PairData>),
    Choices(Arc<Vec<ChoiceItem>>),
}

impl HeldOut {
    /// "408 pairs", "3,250 sentences": what the file gave, for the page.
    pub fn count(&self) -> String {
        match &self.data {
            HeldOutData::Tagged(d) => format!("{} sentences", d.sentences.len()),
            HeldOutData::Questions(d) => format!("{} questions", d.items.len()),
            HeldOutData::Pairs(d) => format!("{} pairs", d.pairs.len()),
            HeldOutData::Choices(d) => format!("{} questions", d.len()),
        }
    }

    /// The task that reads this file.
    fn task(&self) -> Task {
        match self.data {
            HeldOutData::Tagged(_) => Task::Tag,
            HeldOutData::Questions(_) => Task::Answer,
            HeldOutData::Pairs(_) => Task::Similar,
            HeldOutData::Choices(_) => Task::Choice,
        }
    }
}

/// Reads `bytes` as a validation file of `task`; pairs on the training file's scale (`train`).
pub fn read_held_out(task: Task, name: &str, bytes: &[u8], train: Option<&PairData>) -> Result<HeldOutData, String> {
    let data = match task {
        Task::Tag => HeldOutData::Tagged(Arc::new(parse_tagged(bytes).map_err(|e| e.to_string())?)),
        Task::Answer => HeldOutData::Questions(Arc::new(parse_qa(bytes, Some(name)).map_err(|e| e.to_string())?)),
        Task::Similar => {
            let table = parse_table(bytes, Some(name)).map_err(|e| e.to_string())?;
            let pairs = to_pairs(&table, &guess_pair_columns(&table)).map_err(|e| e.to_string())?;
            let train = train.ok_or("load the training file first")?;
            HeldOutData::Pairs(Arc::new(pairs.on_scale_of(train).map_err(|e| e.to_string())?))
        }
        Task::Choice => HeldOutData::Choices(Arc::new(parse_choices(bytes, Some(name)).map_err(|e| e.to_string())?)),
        Task::Classify => return Err("the classification mode takes its validation file in its own card".into()),
    };
    Ok(data)
}

impl Studio {
    /// The separate validation file of the task shown, if one is loaded for it.
    pub fn held_out_file(self) -> Option<HeldOut> {
        self.held_out.get_untracked().filter(|h| h.task() == self.task.get_untracked())
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
        let train = self.similar.pairs.with_untracked(|p| p.as_ref().and_then(|p| p.data.clone()));
        match read_held_out(task, &name, &bytes, train.as_deref()) {
            Ok(data) => {
                self.data_error.set(None);
                self.held_out.set(Some(HeldOut { name, data }));
            }
            Err(e) => self.data_error.set(Some(format!("{name} cannot be the validation file: {e}. The data you had is kept."))),
        }
    }
}

/// The validation choice of `task`'s card (tagging, question answering, similarity or multiple
/// choice): a held-out share (`unit` says of what) or a separate file; `prefix` names its test
/// ids (`{prefix}-valid-…`).
#[component]
pub fn HeldOutChoice(task: Task, prefix: &'static str, unit: &'static str, accept: &'static str) -> impl IntoView {
    let studio = expect_context::<Studio>();
    let file = move || studio.held_out.get().filter(|h| h.task() == task);
    let picked = on_files(move |mut files| {
        if let Some((name, bytes)) = files.pop() {
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
