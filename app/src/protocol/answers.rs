//! The core values that cross between the page and the worker inside a request or an answer, as
//! plain serialisable copies: the wire's shape is defined here, not by core's types, which carry
//! serde only where they are a file format (a run's events are `events.rs`'s). Each converts
//! both ways, field by field.

use bertbench_core::tasks::{qa, tagging};
use bertbench_core::tokenizer;
use serde::{Deserialize, Serialize};

use crate::saved::{list, plain_struct};

plain_struct!(
    /// A token: its piece, id, segment, character range and whether the tokenizer added it.
    Token = tokenizer::Token { piece: String, id: u32, type_id: u32, offsets: (usize, usize), special: bool }
);

/// A tokenized text (or pair).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Encoded {
    pub tokens: Vec<Token>,
    pub truncated_from: Option<usize>,
}

impl From<tokenizer::Encoded> for Encoded {
    fn from(c: tokenizer::Encoded) -> Self {
        Self { tokens: list(c.tokens), truncated_from: c.truncated_from }
    }
}

impl From<Encoded> for tokenizer::Encoded {
    fn from(s: Encoded) -> Self {
        Self { tokens: list(s.tokens), truncated_from: s.truncated_from }
    }
}

plain_struct!(
    /// A word with its predicted tag and every tag's probability.
    TaggedWord = tagging::TaggedWord { word: String, span: (usize, usize), tag: Option<String>, probs: Vec<f32> }
);

plain_struct!(
    /// A text's words and each layer's tag probabilities for them.
    TagsByLayer = tagging::TagsByLayer { words: Vec<String>, probs: Vec<Vec<Vec<f32>>> }
);

/// The top fills of one `[MASK]` (the lab saves its probes' fills in the same shape).
pub use crate::saved::lab::MaskFill;

plain_struct!(
    /// A span of the passage and its score.
    SpanAnswer = qa::SpanAnswer { start: usize, end: usize, text: String, score: f32, probability: f32 }
);

plain_struct!(
    /// A passage token's start and end probabilities.
    PassageToken = qa::PassageToken { offsets: (usize, usize), start: f32, end: f32 }
);

/// A question's answer, its best spans and the passage's tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answered {
    pub answer: Option<SpanAnswer>,
    pub spans: Vec<SpanAnswer>,
    pub null: Option<(f32, f32)>,
    pub tokens: Vec<PassageToken>,
    pub windows: usize,
}

impl From<qa::Answered> for Answered {
    fn from(c: qa::Answered) -> Self {
        Self { answer: c.answer.map(Into::into), spans: list(c.spans), null: c.null, tokens: list(c.tokens), windows: c.windows }
    }
}

impl From<Answered> for qa::Answered {
    fn from(s: Answered) -> Self {
        Self { answer: s.answer.map(Into::into), spans: list(s.spans), null: s.null, tokens: list(s.tokens), windows: s.windows }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value crosses as its copy's JSON and comes back equal.
    fn crosses<C, W>(value: C)
    where
        C: Clone + PartialEq + std::fmt::Debug + Into<W>,
        W: Serialize + serde::de::DeserializeOwned + Into<C>,
    {
        let json = serde_json::to_string(&value.clone().into()).unwrap();
        let back: C = serde_json::from_str::<W>(&json).unwrap().into();
        assert_eq!(back, value);
    }

    #[test]
    fn every_answer_crosses_unchanged() {
        let token = tokenizer::Token { piece: "##ing".into(), id: 7, type_id: 1, offsets: (3, 6), special: false };
        crosses::<_, Encoded>(tokenizer::Encoded { tokens: vec![token], truncated_from: Some(600) });
        crosses::<_, TaggedWord>(tagging::TaggedWord { word: "Paris".into(), span: (0, 5), tag: Some("B-LOC".into()), probs: vec![0.1, 0.9] });
        crosses::<_, TagsByLayer>(tagging::TagsByLayer { words: vec!["a".into()], probs: vec![vec![vec![0.5, 0.5]], vec![Vec::new()]] });
        crosses::<_, MaskFill>(bertbench_core::tasks::pretraining::MaskFill { position: 2, top: vec![("cat".into(), 0.25)] });
        let span = qa::SpanAnswer { start: 0, end: 3, text: "Tom".into(), score: 7.5, probability: 0.75 };
        let answered = qa::Answered {
            answer: Some(span.clone()),
            spans: vec![span],
            null: Some((-1.0, 0.01)),
            tokens: vec![qa::PassageToken { offsets: (0, 3), start: 0.8, end: 0.7 }],
            windows: 2,
        };
        crosses::<_, Answered>(answered);
    }
}
