//! What the studio saves in the browser (`store.rs`), when, and how it comes back.
//!
//! - Settings: every change, once the saved ones have been read.
//! - A training file: each time one is opened; the last one opened is reopened after a reload.
//! - A finished (or cancelled) run: its curves, metrics and the classifier itself, written by
//!   the worker straight from its memory. Saved runs fill the "Runs" table after a reload, and
//!   opening one brings its classifier and results back.
//! - The run in progress: checkpoints written by the worker (`worker.rs`); after a reload, the
//!   page offers to resume from the last one.
//!
//! (The lab saves its own work: `lab/saved.rs`.)

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::{Deserialize, Serialize};

use super::{Live, RunState, Studio, Task};
use crate::app::AppState;
use crate::protocol::Work;
use crate::runs::{Backend, CHECKPOINT_ID, CheckpointMeta, RunRecord, SavedRun};
use crate::saved::{Versioned, train as saved_train};
use crate::store::{self, Item, Kind};

const SETTINGS_ID: &str = "settings";

/// The studio's settings as saved (in saved copies: `crate::saved`), with the format's version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Settings {
    /// Hyper-parameters (one an earlier build did not save takes its default).
    config: saved_train::FineTuneConfig,
    max_len: usize,
    restarts: usize,
    backend: saved_train::Backend,
    valid_fraction: f32,
    split_seed: u64,
    from_scratch: bool,
    /// The training file last opened.
    dataset: Option<String>,
}

/// Details of a saved training file (written with the format's version).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedDataset {
    /// Rows in the file (a tagged file's sentences, a question-answering file's questions).
    pub rows: usize,
    /// The task that read it ([`Task::key`]); absent: classification's, as every saved file was
    /// before the other tasks kept theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
}


impl Studio {
    /// Puts back what was saved (`items`: settings, runs, the last training file), then keeps
    /// the settings saved as they change. Called once when the page starts.
    pub fn restore_saved(self, state: AppState, items: &[Item]) {
        let settings = items
            .iter()
            .find(|i| i.kind == Kind::Settings)
            .and_then(|i| serde_json::from_str::<Versioned<Settings>>(&i.json).ok());
        if let Some(Versioned(s)) = settings {
            self.config.set(s.config.into());
            self.max_len.set(s.max_len);
            self.restarts.set(s.restarts);
            self.backend.set(s.backend.into());
            self.valid_fraction.set(s.valid_fraction);
            self.split_seed.set(s.split_seed);
            self.from_scratch.set(s.from_scratch);
            if let Some(item) = s.dataset.and_then(|id| items.iter().find(|i| i.id == id).cloned()) {
                self.open_dataset(state, item);
            }
        }
        let mut runs: Vec<RunRecord> = items
            .iter()
            .filter(|i| i.kind == Kind::Run)
            .filter_map(|i| serde_json::from_str::<SavedRun>(&i.json).ok())
            .map(|r| r.record)
            .collect();
        runs.reverse();
        self.history.set(runs);
        // Write the settings read back (or the defaults) once, and on every change after.
        Effect::new(move |_| {
            let settings = Settings {
                config: self.config.get().into(),
                max_len: self.max_len.get(),
                restarts: self.restarts.get(),
                backend: self.backend.get().into(),
                valid_fraction: self.valid_fraction.get(),
                split_seed: self.split_seed.get(),
                from_scratch: self.from_scratch.get(),
                dataset: self.dataset_id.get(),
            };
            spawn_local(async move {
                let item = Item {
                    id: SETTINGS_ID.into(),
                    kind: Kind::Settings,
                    name: "studio settings".into(),
                    saved_ms: js_sys::Date::now(),
                    size: 0,
                    json: serde_json::to_string(&Versioned(settings)).unwrap_or_default(),
                };
                if let Err(e) = store::put(&item, &[]).await {
                    self.saved.error.set(Some(e));
                }
            });
        });
    }

    /// Each time the saved work is read, offers its checkpoint when no run is going on.
    pub(super) fn offer_checkpoint(self) {
        Effect::new(move |_| {
            let offer = self.saved.items.with(|items| {
                items.iter().find(|i| i.kind == Kind::Checkpoint).and_then(|i| serde_json::from_str::<CheckpointMeta>(&i.json).ok())
            });
            let idle = !matches!(self.run.get_untracked(), RunState::Running { .. });
            self.resume_offer.set(offer.filter(|_| idle).map(Arc::new));
        });
    }

    /// Saves a training file that `task` has just read; it is reopened after a reload, in that
    /// task.
    pub(super) fn save_dataset(self, task: Task, name: String, bytes: Vec<u8>, rows: usize) {
        let id = format!("dataset:{}", store::fingerprint(&bytes));
        self.dataset_id.set(Some(id.clone()));
        spawn_local(async move {
            let item = Item {
                id,
                kind: Kind::Dataset,
                name,
                saved_ms: js_sys::Date::now(),
                size: bytes.len() as u64,
                json: serde_json::to_string(&Versioned(SavedDataset { rows, task: (task != Task::Classify).then(|| task.key().to_string()) })).unwrap_or_default(),
            };
            match store::put(&item, &[&bytes]).await {
                Ok(()) => self.saved.error.set(None),
                Err(e) => self.saved.error.set(Some(e)),
            }
            self.saved.refresh();
        });
    }

    /// Opens a saved training file in the task that read it.
    pub fn open_dataset(self, state: AppState, item: Item) {
        let task = serde_json::from_str::<Versioned<SavedDataset>>(&item.json)
            .ok()
            .and_then(|Versioned(d)| d.task)
            .map_or(Some(Task::Classify), |key| Task::from_key(&key));
        let Some(task) = task else {
            return self.saved.error.set(Some(format!("“{}” was saved by a task this page does not have", item.name)));
        };
        spawn_local(async move {
            match store::bytes(&item.id).await {
                Ok(mut parts) if !parts.is_empty() => {
                    self.task.set(task);
                    task.panel().open_file(self, state, item.name.clone(), parts.swap_remove(0));
                }
                Ok(_) => self.saved.error.set(Some(format!("“{}” has no bytes saved", item.name))),
                Err(e) => self.saved.error.set(Some(e)),
            }
        });
    }

    /// The worker has saved the finished run as item `id`, or could not (`result`).
    pub(super) fn on_saved(self, id: String, result: Result<(), String>) {
        match result {
            Ok(()) => self.saved.error.set(None),
            Err(message) => {
                self.history.update(|h| {
                    for r in h.iter_mut().filter(|r| r.saved_id.as_deref() == Some(id.as_str())) {
                        r.saved_id = None;
                    }
                });
                self.saved.error.set(Some(message));
            }
        }
        self.saved.refresh();
    }

    /// Brings a saved run back: its classifier into the worker, its results on the page.
    pub fn open_run(self, state: AppState, item: Item) {
        if matches!(self.run.get_untracked(), RunState::Running { .. }) {
            self.notice.set(Some(Err("a run is in progress: wait for it or cancel it before opening a saved one".into())));
            return;
        }
        spawn_local(async move {
            let run = match serde_json::from_str::<SavedRun>(&item.json) {
                Ok(r) => r,
                Err(e) => {
                    self.saved.error.set(Some(format!("“{}” is unreadable: {e}", item.name)));
                    return;
                }
            };
            let bytes = store::bytes(&item.id).await;
            // A head-only run is its head on the base model it was trained from: that model must
            // be the page's, as for resuming a run.
            if let (Some(base), Ok(parts)) = (&run.head_on, &bytes) {
                let engine = state.engine().filter(|e| e.model_id == *base);
                let Some(engine) = engine else {
                    let now = state.engine().map(|e| e.model_id.clone()).unwrap_or_default();
                    self.notice.set(Some(Err(format!(
                        "“{}” trained only a head on {base}, so it is saved as that head alone; the page has {now} loaded: pick {base} in the model menu, then open the run again.",
                        item.name
                    ))));
                    return;
                };
                match self.client.attach_head(&engine, parts.clone()).await {
                    Ok((meta, _)) => {
                        let task = super::Task::of(meta.spec.level);
                        task.panel().took(self, &meta);
                        self.task.set(task);
                        self.classifier.set(Some((meta, format!("the saved run “{}”", item.name))));
                    }
                    Err(e) => {
                        self.notice.set(Some(Err(e)));
                        return;
                    }
                }
            }
            match bytes {
                Ok(mut parts) if !parts.is_empty() => {
                    if run.head_on.is_none() {
                        self.import(vec![("classifier.zip".into(), parts.swap_remove(0))]);
                    }
                    self.steps.set(run.steps);
                    self.evals.set(run.evals);
                    self.live.set(Live { step: run.summary.steps, total_steps: run.summary.steps, ..Live::default() });
                    self.summary.set(Some(Arc::new(run.summary)));
                    self.run.set(RunState::Finished);
                    self.notice.set(Some(Ok(format!("Opened the saved run “{}”.", item.name))));
                }
                Ok(_) => self.saved.error.set(Some(format!("“{}” has no classifier saved", item.name))),
                Err(e) => self.saved.error.set(Some(e)),
            }
        });
    }

    /// Deletes a saved training file or run (a run also leaves the runs table).
    pub fn delete_saved(self, item: Item) {
        spawn_local(async move {
            if self.saved.delete(&item).await.is_ok() {
                if item.kind == Kind::Run {
                    self.history.update(|h| h.retain(|r| r.saved_id.as_deref() != Some(item.id.as_str())));
                }
                if self.dataset_id.get_untracked().as_deref() == Some(item.id.as_str()) {
                    self.dataset_id.set(None);
                }
            }
        });
    }

    /// Continues the interrupted run from its checkpoint, on the backend chosen now.
    pub fn resume(self, state: AppState) -> Result<(), String> {
        let meta = self.resume_offer.get_untracked().ok_or("there is no checkpoint to resume")?;
        let engine = state.engine().ok_or("the model is still loading")?;
        if engine.model_id != meta.base_model {
            return Err(format!(
                "This run was trained from {}, and the page has {} loaded: pick {} in the model list, then resume.",
                meta.base_model, engine.model_id, meta.base_model
            ));
        }
        self.client.send_base(&engine, self.backend.get_untracked())?;
        self.continue_from(&meta, None);
        Ok(())
    }

    /// Training on WebGPU stopped because the device failed: goes on on the CPU from the run's
    /// last checkpoint, or, with none yet, sets the CPU for the next start and says so.
    pub(super) fn fall_back_to_cpu(self, run: u32, message: String) {
        self.backend.set(Backend::Cpu);
        // wgpu's message repeats itself in "Caused by:" chains; the first part says it.
        let reason = message.split(" Caused by").next().unwrap_or(&message).trim_end();
        let lost = format!("The GPU failed during training ({reason}).");
        if self.checkpointed.get_value() != Some(run) {
            self.run.set(RunState::Failed(format!("{lost} There was no checkpoint yet; training is now set to the CPU: press Train to start again.")));
            self.saved.refresh();
            return;
        }
        spawn_local(async move {
            let meta = match store::get(CHECKPOINT_ID).await {
                Ok(Some(item)) => serde_json::from_str::<CheckpointMeta>(&item.json).map_err(|e| e.to_string()),
                Ok(None) => Err("it is no longer saved".to_string()),
                Err(e) => Err(e),
            };
            match meta {
                Ok(meta) => self.continue_from(&meta, Some(lost)),
                Err(e) => {
                    self.run.set(RunState::Failed(format!("{lost} Its checkpoint could not be read back ({e}); training is now set to the CPU.")));
                    self.saved.refresh();
                }
            }
        });
    }

    /// Starts a new run from the saved checkpoint `meta` on the studio's backend; `why` prefixes
    /// the note (the reason for an automatic resume).
    fn continue_from(self, meta: &CheckpointMeta, why: Option<String>) {
        self.steps.set(meta.steps.clone());
        self.evals.set(meta.evals.clone());
        self.live.set(Live { step: meta.step, total_steps: meta.total_steps, ..Live::default() });
        self.summary.set(None);
        self.run.set(RunState::Running { paused: false });
        let task = super::Task::of(meta.request.config.features.level);
        self.task.set(task);
        let what = task.panel().run_label(&meta.request.config);
        let record = RunRecord::starting(meta.base_model.clone(), meta.request.from_scratch, format!("{what} (resumed)"));
        self.starting.set_value(Some(record.clone()));
        let on = match self.backend.get_untracked() {
            Backend::Cpu => "on the CPU",
            Backend::WebGpu => "on WebGPU",
        };
        self.checkpoint_note.set(Some(Ok(format!(
            "{}Resumed {on} from the checkpoint at step {} of {}{}.",
            why.map(|w| w + " ").unwrap_or_default(),
            meta.step,
            meta.total_steps,
            if meta.with_optimizer {
                "; weights, AdamW's moments, schedule, data order and dropout all continue, so the run takes the steps it would have taken"
            } else {
                "; the weights, schedule and data order continue, AdamW's moment estimates start afresh"
            }
        ))));
        self.resume_offer.set(None);
        self.start_run(Work::ResumeFineTune { backend: self.backend.get_untracked(), record });
    }

    /// Forgets the interrupted run's checkpoint.
    pub fn discard_checkpoint(self) {
        self.resume_offer.set(None);
        spawn_local(async move {
            if let Err(e) = store::delete(CHECKPOINT_ID).await {
                self.saved.error.set(Some(e));
            }
            self.saved.refresh();
        });
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::runs::to_saved_fixtures::{todays_items, versioned};

    /// The studio's settings and a training file's details, as today's build saved them, are
    /// written back the same bytes (with the version); settings an earlier build saved come
    /// back with their every value, and the hyper-parameter added since at its default.
    #[test]
    fn settings_and_datasets_are_written_back_as_they_were_saved() {
        let items = todays_items();
        let get = |name: &str| items.iter().find(|(n, _)| n == name).map(|(_, j)| j.clone()).unwrap();
        for name in ["settings", "settings_no_dataset"] {
            let json = get(name);
            let Versioned(settings) = serde_json::from_str::<Versioned<Settings>>(&json).unwrap();
            assert_eq!(serde_json::to_string(&Versioned(settings.clone())).unwrap(), versioned(&json), "{name}");
            let config: bertbench_core::train::FineTuneConfig = settings.config.into();
            assert_eq!(config.seed, 7, "{name}: read into core's hyper-parameters");
        }
        let json = get("dataset");
        let Versioned(dataset) = serde_json::from_str::<Versioned<SavedDataset>>(&json).unwrap();
        assert_eq!(serde_json::to_string(&Versioned(dataset)).unwrap(), versioned(&json));

        let (_, earlier) = crate::runs::to_saved_fixtures::earlier_items();
        let item = earlier.iter().find(|(i, _)| i.kind == Kind::Settings).map(|(i, _)| i).unwrap();
        let Versioned(settings) = serde_json::from_str::<Versioned<Settings>>(&item.json).unwrap();
        // Through the text, as the browser keeps it (`to_value` would widen the f32s).
        let mut written: Value = serde_json::from_str(&serde_json::to_string(&Versioned(settings)).unwrap()).unwrap();
        assert_eq!(written.as_object_mut().unwrap().remove("v"), Some(json!(crate::saved::VERSION)));
        let mut expected: Value = serde_json::from_str(&item.json).unwrap();
        expected["config"]["distil"] = Value::Null;
        assert_eq!(written, expected);
    }
}
