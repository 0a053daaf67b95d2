//! Class names for a data file's integer labels, from the dataset's `README.md` (a Hub dataset's
//! front matter) or `dataset_info.json` (what `datasets` saves), picked or dropped with the data
//! file or after it, for the tasks whose labels are classes (a label per text, labels per text,
//! a tag per word). The names stay until forgotten and name the validation file too: a training
//! file read as "neg"/"pos" and a validation file as "0"/"1" would be two label sets.

use bertbench_core::data::ClassNames;
use leptos::prelude::*;

use super::{Studio, Task};

/// The names read, the last training file as it was picked (to be named again, or no longer,
/// when names arrive or are forgotten after it), and what they named in it.
#[derive(Clone, Copy)]
pub struct ClassNamesState {
    pub names: RwSignal<Option<ClassNames>>,
    raw: StoredValue<Option<(Task, String, Vec<u8>)>>,
    /// The last file named, in which task: its name and the columns named in it (none: no
    /// column matched).
    pub applied: RwSignal<Option<(Task, String, Vec<String>)>>,
}

impl ClassNamesState {
    pub fn new() -> Self {
        Self { names: RwSignal::new(None), raw: StoredValue::new(None), applied: RwSignal::new(None) }
    }

    /// Whether `task`'s labels are classes that a dataset's features can name.
    pub fn takes(task: Task) -> bool {
        matches!(task, Task::Classify | Task::MultiLabel | Task::Tag)
    }

    /// `bytes` with its class ids named, when names are loaded and `task` takes them; the file
    /// as it is otherwise, or when it does not read (its task says why).
    pub fn named(self, task: Task, name: &str, bytes: Vec<u8>) -> Vec<u8> {
        let Some(names) = self.names.get_untracked().filter(|_| Self::takes(task)) else { return bytes };
        match names.apply(&bytes, Some(name)) {
            Ok(named) => {
                let columns = named.columns.clone();
                self.applied.set(Some((task, name.to_string(), columns.clone())));
                if columns.is_empty() { bytes } else { named.bytes }
            }
            Err(_) => bytes,
        }
    }

    /// The files a data card was given: class-name files read (a refusal shown as the card's
    /// error), then the data file named and handed to `on_file`; names given alone name the
    /// card's last training file again.
    pub fn take(self, studio: Studio, task: Task, files: Vec<(String, Vec<u8>)>, on_file: impl Fn((String, Vec<u8>))) {
        let (info, mut data): (Vec<_>, Vec<_>) = files.into_iter().partition(|(name, _)| Self::takes(task) && ClassNames::is_info_file(name));
        for (name, bytes) in &info {
            match ClassNames::from_file(bytes, name) {
                Ok(names) => self.names.set(Some(names)),
                Err(e) => {
                    studio.data_error.set(Some(e.to_string()));
                    return;
                }
            }
        }
        let file = match data.pop() {
            Some((name, bytes)) => {
                self.raw.set_value(Some((task, name.clone(), bytes.clone())));
                Some((name, bytes))
            }
            None if !info.is_empty() => self.last(task),
            None => None,
        };
        if let Some((name, bytes)) = file {
            self.applied.set(None);
            let bytes = self.named(task, &name, bytes);
            on_file((name, bytes));
        }
    }

    /// Forgets the names; the card's last training file is read again as it was.
    pub fn forget(self, task: Task, on_file: impl Fn((String, Vec<u8>))) {
        self.names.set(None);
        self.applied.set(None);
        if let Some(file) = self.last(task) {
            on_file(file);
        }
    }

    fn last(self, task: Task) -> Option<(String, Vec<u8>)> {
        self.raw.with_value(|r| r.as_ref().filter(|(t, _, _)| *t == task).map(|(_, n, b)| (n.clone(), b.clone())))
    }
}

/// The card's line on the names: where they came from, each column's first names, and whether
/// the file had them named; with a button to forget them.
#[component]
pub fn ClassNamesLine(task: Task, #[prop(into)] on_forget: Callback<()>) -> impl IntoView {
    let studio = expect_context::<Studio>();
    let state = studio.class_names;
    move || {
        let names = state.names.get().filter(|_| studio.task.get() == task)?;
        let columns: Vec<String> = names
            .columns
            .iter()
            .map(|(column, n)| {
                let shown: Vec<&str> = n.iter().take(4).map(String::as_str).collect();
                let more = if n.len() > 4 { format!(", … {} in all", n.len()) } else { String::new() };
                format!("{column} ({}{more})", shown.join(", "))
            })
            .collect();
        let applied = match state.applied.get().filter(|(t, _, _)| *t == task) {
            Some((_, file, named)) if !named.is_empty() => format!(" Named in {file}: {}.", named.join(", ")),
            Some((_, file, _)) => format!(" {file} has none of these columns (or no header row): its labels stay as written."),
            None => " They name the next file you load.".to_string(),
        };
        Some(view! {
            <p class="small" data-testid="class-names">
                {format!("Class names from {}: {}.{applied} ", names.source, columns.join("; "))}
                <button class="secondary small" data-testid="class-names-forget" on:click=move |_| on_forget.run(())>"forget them"</button>
            </p>
        })
    }
}
