//! Multi-label classification's saved copies: a text of its run's data
//! (`train::RunData::LabelSets`), and one whose labels its run did not give exactly
//! (`run::Mistakes::LabelSets`).

use serde::{Deserialize, Serialize};

use super::plain_struct;

plain_struct!(
    /// A text (or pair) and the ids of its labels.
    LabelSet = bertbench_core::data::LabelSet { line: usize, text: String, text_pair: Option<String>, labels: Vec<usize> }
);

/// A text whose labels were not given exactly: those missed and those given wrongly, each with
/// its probability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelSetMistake {
    pub line: usize,
    pub text: String,
    pub missed: Vec<(String, f32)>,
    pub extra: Vec<(String, f32)>,
}
