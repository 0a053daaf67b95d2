//! Shared by the explorer's panels: claiming the model, running many texts through it in small
//! batches so the page stays responsive, labeled example data, and the word-sense presets.

mod attention;
mod embedding;
mod input_parts;
mod map;
mod probe;
mod similarity;
mod tokens;

pub use attention::AttentionPanel;
pub use embedding::EmbeddingPanel;
pub use input_parts::InputPartsPanel;
pub use map::MapPanel;
pub use probe::ProbePanel;
pub use similarity::SimilarityPanel;
pub use tokens::TokensPanel;

use std::rc::Rc;
use std::sync::Arc;

use bertbench_core::data::{Dataset, guess_columns, parse_table, to_examples};
use bertbench_core::analysis::inspect::TextStates;
use bertbench_core::tokenizer::Encoded;
use leptos::prelude::*;

use crate::app::AppState;
use crate::engine::Engine;
use crate::fetch::{after_paint, fetch_bytes, sleep_ms, yield_to_browser};
use crate::studio::Studio;

/// Texts per forward pass: small enough that one pass takes a fraction of a second on the CPU.
pub const BATCH: usize = 8;

/// Waits until no other computation holds the model, then holds it (`busy`). `None` when no
/// model is loaded. The caller must call [`release`] when done, on every path.
pub async fn claim(state: AppState) -> Option<Rc<Engine>> {
    // Let the page show what just changed (a model that is ready, a "working" state) first.
    after_paint().await;
    loop {
        let engine = state.engine()?;
        if !state.busy.get_untracked() {
            state.busy.set(true);
            return Some(engine);
        }
        sleep_ms(50).await;
    }
}

/// Lets other work use the model again.
pub fn release(state: AppState) {
    state.busy.set(false);
}

/// Numbers a panel's requests so that only the newest one's answer is shown. Requests wait in
/// [`claim`] in no particular order, so an older one (the automatic run after a model loads)
/// can get the model after a newer one (the user's click) and would otherwise overwrite its
/// answer with one for inputs the user has since changed.
#[derive(Clone, Copy)]
pub struct Latest(StoredValue<u64>);

impl Latest {
    pub fn new() -> Self {
        Self(StoredValue::new(0))
    }

    /// A new request, newer than every earlier one.
    pub fn next(self) -> u64 {
        self.0.update_value(|n| *n += 1);
        self.0.get_value()
    }

    /// Whether no request was made after `ticket`.
    pub fn is(self, ticket: u64) -> bool {
        self.0.get_value() == ticket
    }
}

/// Tokenizes every text; the error names the first text that fails.
pub fn encode_all(engine: &Engine, texts: &[String]) -> Result<Vec<Encoded>, String> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| engine.bert.tokenizer.encode(t).map_err(|e| format!("text {}: {e}", i + 1)))
        .collect()
}

/// Runs `encoded` through the model [`BATCH`] texts at a time, yielding to the browser between
/// batches, and keeps what `keep` takes from each text's states (so memory stays small).
/// `progress(done, total)` is called after each batch; `cancelled()` is checked before each.
pub async fn each_states<T>(
    engine: &Engine,
    encoded: &[Encoded],
    mut keep: impl FnMut(usize, &TextStates) -> T,
    progress: impl Fn(usize, usize),
    cancelled: impl Fn() -> bool,
) -> Result<Vec<T>, String> {
    let mut out = Vec::with_capacity(encoded.len());
    for (b, chunk) in encoded.chunks(BATCH).enumerate() {
        if cancelled() {
            return Err("cancelled".into());
        }
        let states = engine.bert.text_states(chunk, &engine.device).await.map_err(|e| e.to_string())?;
        for (i, s) in states.iter().enumerate() {
            out.push(keep(b * BATCH + i, s));
        }
        progress(out.len(), encoded.len());
        yield_to_browser().await;
    }
    Ok(out)
}

/// Labeled texts for the layer views: the studio's dataset when one is loaded, otherwise the
/// sentiment examples that ship with the page. Returns the dataset and where it came from.
pub async fn labeled_data(studio: Studio) -> Result<(Arc<Dataset>, String), String> {
    if let Some(p) = studio.prepared.get_untracked() {
        let name = studio.upload.get_untracked().map(|u| u.name).unwrap_or_else(|| "your data".into());
        return Ok((p.dataset.clone(), name));
    }
    let bytes = fetch_bytes("examples/sentiment.csv", |_, _| {}).await.map_err(|e| format!("the example data could not be read: {e}"))?;
    let table = parse_table(&bytes, Some("sentiment.csv")).map_err(|e| e.to_string())?;
    let dataset = to_examples(&table, &guess_columns(&table)).map_err(|e| e.to_string())?;
    Ok((Arc::new(dataset), "the built-in sentiment examples".into()))
}

/// Ten distinguishable colours (Tableau 10), then grey for everything else.
pub const PALETTE: [&str; 10] =
    ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

/// Grey for groups beyond the palette.
pub const OTHER: &str = "#c9ced6";

/// `text` with the characters `range` (character offsets) wrapped in `<mark>`.
pub fn highlighted(text: &str, range: Option<(usize, usize)>) -> AnyView {
    match range {
        Some((s, e)) if s < e => {
            let chars: Vec<char> = text.chars().collect();
            let (s, e) = (s.min(chars.len()), e.min(chars.len()));
            let part = |a: usize, b: usize| chars[a..b].iter().collect::<String>();
            view! { <span>{part(0, s)}<mark>{part(s, e)}</mark>{part(e, chars.len())}</span> }.into_any()
        }
        _ => view! { <span>{text.to_string()}</span> }.into_any(),
    }
}
