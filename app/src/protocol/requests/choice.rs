//! Multiple choice's request.

use serde::{Deserialize, Serialize};

/// The probability of each of `endings` (two or more) as the end of `premise`, by the current
/// multiple-choice model (one per ending, in order, summing to 1).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Choose {
    pub premise: String,
    pub endings: Vec<String>,
}
