//! Lesson progress in this browser's `localStorage`: the lesson last shown and the questions
//! answered right. Small, synchronous and kept with the page's origin, like the saved work; a
//! browser that refuses storage (a private window with storage off) simply starts afresh.

use serde::{Deserialize, Serialize};

use crate::local_store;

const KEY: &str = "bertbench-lessons";

/// What is kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// The id of the lesson last shown.
    pub lesson: String,
    /// The ids of the questions answered right.
    pub solved: Vec<String>,
}

/// The progress kept, or none.
pub fn load() -> Progress {
    local_store::get(KEY).and_then(|json| serde_json::from_str(&json).ok()).unwrap_or_default()
}

/// Keeps `progress` (best effort: a full or blocked storage keeps the old one).
pub fn save(progress: &Progress) {
    if let Ok(json) = serde_json::to_string(progress) {
        local_store::set(KEY, &json);
    }
}
