//! The list of work saved in this browser (`store.rs`), as the page shows it: what is saved,
//! the storage it takes, and why something could not be saved or read back. The studio and the
//! lab each decide what they save (`studio/saved.rs`, `lab/saved.rs`); both refresh this list.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::store::{self, Item, Usage};

/// Saved work, newest first (`Copy`: all handles).
#[derive(Clone, Copy)]
pub struct SavedWork {
    /// Every saved item.
    pub items: RwSignal<Vec<Item>>,
    /// Storage used by this page, and its quota.
    pub usage: RwSignal<Option<Usage>>,
    /// Why something could not be saved or read back.
    pub error: RwSignal<Option<String>>,
}

impl SavedWork {
    /// An empty list, until [`load`](Self::load).
    pub fn new() -> Self {
        Self { items: RwSignal::new(Vec::new()), usage: RwSignal::new(None), error: RwSignal::new(None) }
    }

    /// Reads the list and shows it; returns it (empty when it cannot be read, and says why).
    pub async fn load(self) -> Vec<Item> {
        match store::list().await {
            Ok(items) => {
                self.items.set(items.clone());
                self.refresh_usage();
                items
            }
            Err(e) => {
                self.error.set(Some(e));
                Vec::new()
            }
        }
    }

    /// Re-reads the list.
    pub fn refresh(self) {
        spawn_local(async move {
            self.load().await;
        });
    }

    /// Re-reads the storage used.
    pub fn refresh_usage(self) {
        spawn_local(async move { self.usage.set(store::estimate().await) });
    }

    /// Deletes everything saved and re-reads the list; `Err` (shown) when it could not.
    pub async fn delete_all(self) -> Result<(), String> {
        let out = store::delete_all().await;
        match &out {
            Ok(()) => self.error.set(None),
            Err(e) => self.error.set(Some(e.clone())),
        }
        self.refresh();
        out
    }

    /// Deletes a saved item and re-reads the list; `Err` (shown) when it could not be deleted.
    pub async fn delete(self, item: &Item) -> Result<(), String> {
        let out = store::delete(&item.id).await;
        match &out {
            Ok(()) => self.error.set(None),
            Err(e) => self.error.set(Some(e.clone())),
        }
        self.refresh();
        out
    }
}
