//! What the lab saves in the browser (`store.rs`), and how it comes back:
//! - its settings and corpus (unless built in), on every change once the saved ones are read;
//! - each finished (or stopped) run: its model, written by the worker, with its curves, probes,
//!   settings and corpus. Opening one shows the run again in the lab and makes its model the
//!   lab's model (fill-mask, explore, fine-tune).

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{BUILTIN_NAME, Lab, LabRun};
use crate::app::{AppState, Tab};
use crate::runs::{LAB_FILES, LabSettings, SavedLab};
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

    /// The worker has saved the lab's finished run, or could not (`result`); `current`: it is
    /// the run the lab shows.
    pub(super) fn on_saved(self, current: bool, result: Result<(), String>) {
        match result {
            Ok(()) => {
                if current {
                    self.storage_note.set(Some(Ok("Saved in this browser, with its curves and probes: reopen it from the list below after a reload.".into())));
                }
                self.saved.error.set(None);
            }
            Err(message) => {
                if current {
                    self.storage_note.set(Some(Err(message.clone())));
                }
                self.saved.error.set(Some(message));
            }
        }
        self.saved.refresh();
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
                    self.show_saved(saved, corpus);
                    let files: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
                    match self.client.open_lab(&files).await {
                        Ok(()) => {
                            self.has_model.set(true);
                            self.storage_note.set(Some(Ok(format!("Opened the saved lab model “{}”.", item.name))));
                        }
                        Err(message) => self.run.set(LabRun::Failed(message)),
                    }
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
