//! What the lab saves in the browser (`store.rs`), and how it comes back:
//! - its settings and corpus (unless built in), on every change once the saved ones are read;
//! - each finished (or stopped) run: its model, written by the worker, with its curves, probes,
//!   settings and corpus. Opening one shows the run again in the lab and makes its model the
//!   lab's model (fill-mask, explore, fine-tune).

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{BUILTIN_NAME, Lab, LabRun, LabSettings, SavedLab};
use crate::app::{AppState, Tab};
use crate::protocol::{LAB_FILES, ToWorker};
use crate::store::{self, Item, Kind};

const LAB_SETTINGS_ID: &str = "lab-settings";

impl Lab {
    /// Puts back the saved settings and corpus (from `items`, the saved work), then keeps them
    /// saved as they change. Called once when the page starts.
    pub async fn restore_saved(self, items: &[Item]) {
        if let Some(item) = items.iter().find(|i| i.kind == Kind::LabSettings) {
            if let Ok(s) = serde_json::from_str::<LabSettings>(&item.json) {
                let corpus = if item.size > 0 {
                    store::bytes(&item.id).await.ok().and_then(|mut p| p.pop()).and_then(|b| String::from_utf8(b).ok())
                } else {
                    None
                };
                self.apply_settings(s, corpus);
            }
        }
        Effect::new(move |_| {
            let settings = self.settings();
            let corpus = self.corpus.with(|c| if settings.corpus_name == BUILTIN_NAME { String::new() } else { c.clone() });
            spawn_local(async move {
                let item = Item {
                    id: LAB_SETTINGS_ID.into(),
                    kind: Kind::LabSettings,
                    name: "lab settings".into(),
                    saved_ms: js_sys::Date::now(),
                    size: corpus.len() as u64,
                    json: serde_json::to_string(&settings).unwrap_or_default(),
                };
                let bytes: &[&[u8]] = if corpus.is_empty() { &[] } else { &[corpus.as_bytes()] };
                if let Err(e) = store::put(&item, bytes).await {
                    self.storage_note.set(Some(Err(e)));
                }
            });
        });
    }

    /// Has the worker save the lab's model, just finished, with its run (curves, probes, corpus
    /// and settings).
    pub(super) fn save_model(self, cancelled: bool, done: usize, seconds: f64) {
        let saved = self.to_saved(cancelled, done, seconds);
        let saved_ms = js_sys::Date::now();
        let id = format!("lab:{saved_ms:.0}");
        let model = if saved.settings.continue_pretrained { "continued pretraining".to_string() } else { saved.settings.preset.clone() };
        let loss = saved.steps.last().map(|s| format!(" · MLM loss {:.2}", s.mlm_loss)).unwrap_or_default();
        let item = Item {
            id,
            kind: Kind::LabModel,
            name: format!("{model} · {} · {done} steps{loss}", saved.settings.corpus_name),
            saved_ms,
            size: 0,
            json: serde_json::to_string(&saved).unwrap_or_default(),
        };
        let corpus = self.corpus.get_untracked();
        spawn_local(async move {
            match self.client.save_lab(item, corpus.as_bytes()).await {
                Ok(()) => {
                    self.storage_note.set(Some(Ok("Saved in this browser, with its curves and probes: reopen it from the list below after a reload.".into())));
                    self.saved.error.set(None);
                }
                Err(message) => {
                    self.storage_note.set(Some(Err(message.clone())));
                    self.saved.error.set(Some(message));
                }
            }
            self.saved.refresh();
        });
    }

    /// Brings a saved lab model back: its run on the lab page, the model into the worker.
    pub fn open_saved(self, state: AppState, item: Item) {
        if matches!(self.run.get_untracked(), LabRun::Running { .. }) || self.client.run_in_progress() {
            self.storage_note.set(Some(Err("a run is in progress: wait for it or cancel it before opening a saved lab model".into())));
            state.show(Tab::Lab);
            return;
        }
        spawn_local(async move {
            let saved = match serde_json::from_str::<SavedLab>(&item.json) {
                Ok(s) => s,
                Err(e) => {
                    self.storage_note.set(Some(Err(format!("“{}” is unreadable: {e}", item.name))));
                    return;
                }
            };
            match store::bytes(&item.id).await {
                Ok(mut parts) if parts.len() == LAB_FILES.len() + 1 => {
                    let corpus = String::from_utf8(parts.pop().unwrap_or_default()).unwrap_or_default();
                    let run = self.show_saved(saved, corpus);
                    let files: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
                    self.client.run(run, &ToWorker::OpenLab { run }, &files, move |m| self.on_run(run, m));
                    self.storage_note.set(Some(Ok(format!("Opened the saved lab model “{}”.", item.name))));
                }
                Ok(_) => self.storage_note.set(Some(Err(format!("“{}” is incomplete: some of its files are missing", item.name)))),
                Err(e) => self.storage_note.set(Some(Err(e))),
            }
            state.show(Tab::Lab);
        });
    }

    /// Deletes a saved lab model.
    pub fn delete_saved(self, item: Item) {
        spawn_local(async move {
            let _ = self.saved.delete(&item).await;
        });
    }
}
