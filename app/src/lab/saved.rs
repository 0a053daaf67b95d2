//! What the lab saves in the browser (`store.rs`), and how it comes back:
//! - its settings and corpus (unless built in), on every change once the saved ones are read;
//! - each finished (or stopped) run: its model, written by the worker, with its curves, probes,
//!   settings and corpus. Opening one shows the run again in the lab and makes its model the
//!   lab's model (fill-mask, explore, fine-tune);
//! - "Runs compared", on every change: each run's numbers and the id of its saved lab model,
//!   from which "Fine-tune each" reads its weights after a reload.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::{Deserialize, Serialize};

use super::compare::{Downstream, KeptFiles, KeptRun};
use super::{BUILTIN_NAME, Lab, LabRun};
use crate::app::{AppState, Tab};
use crate::runs::{LAB_FILES, LabSettings, SavedLab, thin};
use crate::saved::{Versioned, lab as saved_lab, list};
use crate::store::{self, Item, Kind};

const LAB_SETTINGS_ID: &str = "lab-settings";
const COMPARED_ID: &str = "lab-compared";

/// A run of "Runs compared" as this browser keeps it (the storage copy of [`KeptRun`], in saved
/// copies, `crate::saved`; without its model: that is in its saved lab model, `saved_as`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct KeptRecord {
    number: u32,
    settings: saved_lab::LabSettings,
    model: String,
    layers: usize,
    shared: bool,
    params: usize,
    /// Thinned as a saved lab model's are.
    steps: Vec<saved_lab::PretrainStep>,
    seconds: f64,
    cancelled: bool,
    downstream: Option<KeptDownstream>,
    saved_as: Option<String>,
}

/// [`Downstream`] as saved.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct KeptDownstream {
    accuracy: f32,
    texts: usize,
}

/// "Runs compared" as saved today: its runs under the format's version. An earlier build saved
/// the list alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Compared {
    runs: Vec<KeptRecord>,
}

/// "Runs compared" as read: today's (versioned), or an earlier build's list.
fn read_compared(json: &str) -> Result<Vec<KeptRecord>, String> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    if value.is_array() {
        return serde_json::from_value(value).map_err(|e| e.to_string());
    }
    serde_json::from_value::<Versioned<Compared>>(value).map(|Versioned(c)| c.runs).map_err(|e| e.to_string())
}

impl From<&KeptRun> for KeptRecord {
    fn from(r: &KeptRun) -> Self {
        Self {
            number: r.number,
            settings: r.settings.clone().into(),
            model: r.model.clone(),
            layers: r.layers,
            shared: r.shared,
            params: r.params,
            steps: list(thin(r.steps.clone())),
            seconds: r.seconds,
            cancelled: r.cancelled,
            downstream: r.downstream.map(|d| KeptDownstream { accuracy: d.accuracy, texts: d.texts }),
            saved_as: r.saved_as.clone(),
        }
    }
}

impl From<KeptRecord> for KeptRun {
    fn from(r: KeptRecord) -> Self {
        Self {
            number: r.number,
            settings: r.settings.into(),
            model: r.model,
            layers: r.layers,
            shared: r.shared,
            params: r.params,
            steps: list(r.steps),
            seconds: r.seconds,
            cancelled: r.cancelled,
            files: None,
            downstream: r.downstream.map(|d| Downstream { accuracy: d.accuracy, texts: d.texts }),
            saved_as: r.saved_as,
        }
    }
}

/// The files of saved lab model `id`, by name (an absent one left out).
pub(super) async fn saved_files(id: &str) -> Result<KeptFiles, String> {
    let parts = store::bytes(id).await.map_err(|_| "its saved lab model is no longer in this browser".to_string())?;
    if parts.len() != LAB_FILES.len() + 1 {
        return Err("its saved lab model is incomplete".into());
    }
    Ok(Arc::new(LAB_FILES.iter().zip(parts).filter(|(_, b)| !b.is_empty()).map(|(n, b)| (n.to_string(), b)).collect()))
}

impl Lab {
    /// Puts back the saved settings and corpus (from `items`, the saved work), then keeps them
    /// saved as they change. Called once when the page starts.
    pub async fn restore_saved(self, items: &[Item]) {
        if let Some(item) = items.iter().find(|i| i.id == LAB_SETTINGS_ID) {
            if let Ok(s) = serde_json::from_str::<LabSettings>(&item.json) {
                let corpus = if item.size > 0 {
                    store::bytes(&item.id).await.ok().and_then(|mut p| p.pop()).and_then(|b| String::from_utf8(b).ok())
                } else {
                    None
                };
                self.apply_settings(s, corpus);
            }
        }
        if let Some(item) = items.iter().find(|i| i.id == COMPARED_ID)
            && let Ok(records) = read_compared(&item.json)
        {
            let runs: Vec<KeptRun> = records.into_iter().map(KeptRun::from).collect();
            // New runs are numbered after the kept ones.
            self.runs.set_value(runs.iter().map(|r| r.number).max().unwrap_or(0));
            self.compared.set(runs);
        }
        Effect::new(move |_| {
            let runs: Vec<KeptRecord> = self.compared.with(|runs| runs.iter().map(KeptRecord::from).collect());
            spawn_local(async move {
                let item = Item {
                    id: COMPARED_ID.into(),
                    kind: Kind::LabComparison,
                    name: "lab runs compared".into(),
                    saved_ms: js_sys::Date::now(),
                    size: 0,
                    json: serde_json::to_string(&Versioned(Compared { runs })).unwrap_or_default(),
                };
                if let Err(e) = store::put(&item, &[]).await {
                    self.storage_note.set(Some(Err(e)));
                }
            });
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept run comes back from its stored copy with its settings, curves, result and saved
    /// model's id, but not its model's files (its saved lab model holds them).
    #[test]
    fn a_kept_run_comes_back_from_its_stored_copy() {
        let mut run = super::super::compare::tests::kept(3, 0.4, 30);
        run.downstream = Some(Downstream { accuracy: 0.75, texts: 40 });
        run.saved_as = Some("lab:123".into());
        run.files = Some(Arc::new(vec![("config.json".into(), b"{}".to_vec())]));
        let json = serde_json::to_string(&Versioned(Compared { runs: vec![KeptRecord::from(&run)] })).unwrap();
        let back: Vec<KeptRun> = read_compared(&json).unwrap().into_iter().map(KeptRun::from).collect();
        let b = &back[0];
        assert_eq!((b.number, b.params, b.steps.len(), b.downstream, b.saved_as.as_deref()), (3, 1000, 30, run.downstream, Some("lab:123")));
        assert_eq!(b.steps, run.steps);
        assert!(b.files.is_none());
        assert_eq!(b.facets(), run.facets());
        assert!(b.fine_tunable(), "from its saved lab model");
        let unsaved = KeptRun { saved_as: None, ..b.clone() };
        assert!(!unsaved.fine_tunable());
    }

    /// "Runs compared" as today's build saved it (the list alone) reads, and is written back as
    /// the same list under the format's version; one from a newer build is refused, saying why.
    #[test]
    fn runs_compared_are_written_back_as_they_were_saved() {
        let items = crate::runs::to_saved_fixtures::todays_items();
        let json = items.iter().find(|(n, _)| n == "lab_compared").map(|(_, j)| j.clone()).unwrap();
        let runs = read_compared(&json).unwrap();
        assert_eq!(runs.len(), 2);
        let written = serde_json::to_string(&Versioned(Compared { runs })).unwrap();
        assert_eq!(written, format!("{{\"v\":{},\"runs\":{json}}}", crate::saved::VERSION));
        assert_eq!(read_compared(&written).unwrap(), read_compared(&json).unwrap());
        let newer = written.replacen(&format!("\"v\":{}", crate::saved::VERSION), &format!("\"v\":{}", crate::saved::VERSION + 1), 1);
        let e = read_compared(&newer).unwrap_err();
        assert!(e.contains("newer version of this page"), "{e}");
    }
}
