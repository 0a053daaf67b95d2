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

/// At most this many steps of a run's curves are kept with a saved run or lab model.
pub const MAX_SAVED_STEPS: usize = 2000;

/// `steps` thinned evenly to at most [`MAX_SAVED_STEPS`] (every k-th, the last always kept), so a
/// saved run's curves keep their shape and their end at a bounded size.
pub fn thin<T>(steps: Vec<T>) -> Vec<T> {
    if steps.len() <= MAX_SAVED_STEPS {
        return steps;
    }
    let every = steps.len().div_ceil(MAX_SAVED_STEPS);
    let last = steps.len() - 1;
    steps.into_iter().enumerate().filter(|(i, _)| i % every == 0 || *i == last).map(|(_, s)| s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_curves_are_kept_whole_and_long_ones_thinned_to_the_bound_with_their_end() {
        let short: Vec<usize> = (0..MAX_SAVED_STEPS).collect();
        assert_eq!(thin(short.clone()), short);
        let long: Vec<usize> = (0..5 * MAX_SAVED_STEPS + 7).collect();
        let thinned = thin(long.clone());
        assert!(thinned.len() <= MAX_SAVED_STEPS + 1, "{}", thinned.len());
        assert_eq!(thinned.first(), Some(&0));
        assert_eq!(thinned.last(), long.last());
        let gaps: Vec<usize> = thinned.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps[..gaps.len() - 1].iter().all(|&g| g == gaps[0]), "evenly spaced but for the last");
    }
}
