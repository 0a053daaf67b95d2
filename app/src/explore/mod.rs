//! The explorer: views of what the page's model does with a sentence (tokens, input parts,
//! embeddings, similarity, attention, the embedding map, layer probes, fill-mask). They take turns on the
//! model through `compute.rs`; this file holds what they share for drawing.

mod attention;
mod embedding;
mod fill_mask;
mod input_parts;
mod map;
mod map_data;
pub(crate) mod probe;
mod similarity;
mod tokens;

pub use attention::AttentionPanel;
pub use embedding::EmbeddingPanel;
pub use fill_mask::FillMaskPanel;
pub use input_parts::InputPartsPanel;
pub use map::MapPanel;
pub use probe::ProbePanel;
pub use similarity::SimilarityPanel;
pub use tokens::TokensPanel;
pub(crate) use attention::heatmap;
pub(crate) use tokens::token_view;

use leptos::prelude::*;

/// Nine colours told apart with every common colour blindness (Paul Tol's "muted" scheme), then
/// grey for everything else; the map also names each point's group in its legend and its text.
pub const PALETTE: [&str; 9] = ["#332288", "#88ccee", "#44aa99", "#117733", "#999933", "#ddcc77", "#cc6677", "#882255", "#aa4499"];

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
