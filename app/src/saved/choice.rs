//! Multiple choice's saved copies: a question of its run's data (`train::RunData::Choices`), and
//! one its run answered wrong (`run::Mistakes::Choices`).

use serde::{Deserialize, Serialize};

use super::plain_struct;

plain_struct!(
    /// A multiple-choice question: its premise, endings and the right one.
    ChoiceItem = bertbench_core::tasks::choice::ChoiceItem { line: usize, premise: String, choices: Vec<String>, label: usize }
);

/// A multiple-choice question answered wrong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChoiceMistake {
    pub line: usize,
    pub premise: String,
    pub chosen: String,
    pub chosen_prob: f32,
    pub right: String,
    pub right_prob: f32,
}
