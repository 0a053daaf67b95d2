//! Token tagging's data: tagged sentences, and the sentences the kept tagger got (partly)
//! wrong.

use bertbench_core::data::TaggedSentence;
use bertbench_core::tasks::metrics::argmax;
use bertbench_core::tasks::tagging::LabelPieces;
use bertbench_core::train::{LabeledText, encode_tagged};
use serde::{Deserialize, Serialize};

use super::{Encoding, Kept, TaskData, worst};
use crate::runs::Mistakes;

/// The sentences of a token-tagging run.
#[derive(Debug, Clone)]
pub struct TaggedRequest {
    /// Training sentences.
    pub train: Vec<TaggedSentence>,
    /// Validation sentences.
    pub valid: Vec<TaggedSentence>,
    /// Which pieces of a word the loss reads.
    pub pieces: LabelPieces,
}

/// A validation sentence the tagger got (partly) wrong.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TagMistake {
    /// Line in the uploaded file.
    pub line: usize,
    /// Its words.
    pub words: Vec<String>,
    /// Their true tags.
    pub gold: Vec<String>,
    /// The predicted tags (`""` for a word the model's length cut off).
    pub predicted: Vec<String>,
}

impl TaskData for TaggedRequest {
    fn counts(&self) -> (usize, usize) {
        (self.train.len(), self.valid.len())
    }

    fn encode(&self, how: &Encoding) -> Result<(Vec<LabeledText>, Vec<LabeledText>), String> {
        let encode = |sentences: &[TaggedSentence]| encode_tagged(how.tokenizer, sentences, how.labels, self.pieces).map(|(units, _)| units).map_err(|e| e.to_string());
        Ok((encode(&self.train)?, encode(&self.valid)?))
    }

    /// The sentences with a wrong word tag, most wrong tags first (at most 500): `probs` holds
    /// each scored word's probabilities in order, and the validation units say which words were
    /// scored (a prefix of each sentence's words, the rest cut off by the model's length).
    fn mistakes(&self, kept: &Kept) -> Mistakes {
        let mut probs = kept.probs.iter();
        let out: Vec<(usize, TagMistake)> = self
            .valid
            .iter()
            .zip(kept.valid)
            .filter_map(|(s, e)| {
                let scored = e.tokens.iter().filter(|t| t.word_start).count();
                let predicted: Vec<String> = (0..s.words.len())
                    .map(|i| if i < scored { probs.next().map(|p| kept.labels[argmax(p)].clone()).unwrap_or_default() } else { String::new() })
                    .collect();
                let wrong = predicted.iter().zip(&s.tags).filter(|(p, g)| !p.is_empty() && p != g).count();
                (wrong > 0).then(|| (wrong, TagMistake { line: s.line, words: s.words.clone(), gold: s.tags.clone(), predicted }))
            })
            .collect();
        Mistakes::Tags(worst(out, 500, |a, b| b.0.cmp(&a.0)).into_iter().map(|(_, m)| m).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentence(line: usize, words: &str, tags: &str) -> TaggedSentence {
        TaggedSentence { line, words: words.split(' ').map(Into::into).collect(), tags: tags.split(' ').map(Into::into).collect() }
    }

    /// Each sentence's scored words take the probabilities in order; a sentence with a wrong
    /// tag is kept, the most wrong first; a sentence tagged right is not.
    #[test]
    fn sentences_with_wrong_tags_most_wrong_first() {
        let tokenizer = super::super::test_helpers::tokenizer();
        let tags = ["O".to_string(), "B-PER".to_string(), "B-LOC".to_string()];
        let spans = bertbench_core::tasks::qa::SpanConfig::new();
        let how = Encoding { tokenizer: &tokenizer, labels: &tags, level: bertbench_core::tasks::classification::Level::Token, spans: &spans };
        let request = TaggedRequest {
            train: Vec::new(),
            valid: vec![sentence(1, "bob lives in paris", "B-PER O O B-LOC"), sentence(3, "alice sat", "B-PER O"), sentence(5, "rome", "B-LOC")],
            pieces: LabelPieces::First,
        };
        let (_, valid) = request.encode(&how).unwrap();
        let [o, per, loc] = [vec![0.9, 0.05, 0.05], vec![0.1, 0.8, 0.1], vec![0.1, 0.1, 0.8]];
        // Sentence 1: one tag wrong (paris as O); sentence 3: both wrong; sentence 5: right.
        let probs = [per.clone(), o.clone(), o.clone(), o.clone(), loc.clone(), per.clone(), loc.clone()];
        let Mistakes::Tags(m) = request.mistakes(&Kept { valid: &valid, probs: &probs, predictions: &[], labels: &tags, scores: None }) else { panic!("tags") };
        let shown: Vec<(usize, Vec<String>)> = m.into_iter().map(|m| (m.line, m.predicted)).collect();
        assert_eq!(shown, [(3, vec!["B-LOC".to_string(), "B-PER".to_string()]), (1, vec!["B-PER".to_string(), "O".into(), "O".into(), "O".into()])]);
    }
}
