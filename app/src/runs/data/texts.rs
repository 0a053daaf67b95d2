//! Sentence (and sentence-pair) classification's data: labeled texts, and the texts the kept
//! classifier labeled wrong.

use bertbench_core::data::Example;
use bertbench_core::tasks::metrics::argmax;
use bertbench_core::train::{LabeledText, encode_examples};
use serde::{Deserialize, Serialize};

use super::{Encoding, Kept, TaskData, worst};
use crate::runs::Mistakes;

/// The labeled texts (or pairs of texts) of a classification run.
#[derive(Debug, Clone, Default)]
pub struct TextRequest {
    /// Training examples.
    pub train: Vec<Example>,
    /// Validation examples.
    pub valid: Vec<Example>,
}

/// A validation example the classifier got wrong.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mistake {
    /// Line in the uploaded file.
    pub line: usize,
    /// The text (and pair).
    pub text: String,
    /// True label.
    pub label: String,
    /// Predicted label.
    pub predicted: String,
    /// Probability per label.
    pub probs: Vec<f32>,
}

impl TaskData for TextRequest {
    fn counts(&self) -> (usize, usize) {
        (self.train.len(), self.valid.len())
    }

    fn encode(&self, how: &Encoding) -> Result<(Vec<LabeledText>, Vec<LabeledText>), String> {
        let encode = |examples: &[Example]| encode_examples(how.tokenizer, examples, how.labels).map_err(|e| e.to_string());
        Ok((encode(&self.train)?, encode(&self.valid)?))
    }

    /// The texts (or pairs) classified wrong, most confident first (at most 500).
    fn mistakes(&self, kept: &Kept) -> Mistakes {
        let labels = kept.labels;
        let wrong = self
            .valid
            .iter()
            .zip(kept.probs)
            .filter_map(|(ex, p)| {
                let predicted = argmax(p);
                (labels[predicted] != ex.label).then(|| Mistake {
                    line: ex.line,
                    text: match &ex.text_pair {
                        Some(b) => format!("{} ‖ {b}", ex.text),
                        None => ex.text.clone(),
                    },
                    label: ex.label.clone(),
                    predicted: labels[predicted].clone(),
                    probs: p.clone(),
                })
            })
            .collect();
        let confidence = |m: &Mistake| m.probs.iter().cloned().fold(0.0, f32::max);
        Mistakes::Labels(worst(wrong, 500, |a, b| confidence(b).total_cmp(&confidence(a))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(line: usize, text: &str, pair: Option<&str>, label: &str) -> Example {
        Example { line, text: text.into(), text_pair: pair.map(Into::into), label: label.into() }
    }

    /// Only the texts labeled wrong are kept, the surest first, a pair shown as its two texts.
    #[test]
    fn wrong_texts_surest_first() {
        let labels = ["neg".to_string(), "pos".to_string()];
        let request = TextRequest {
            train: vec![example(2, "a fine day", None, "pos")],
            valid: vec![example(2, "a fine day", None, "pos"), example(3, "a dull day", Some("it is"), "neg"), example(4, "a bad day", None, "pos")],
        };
        let probs = [vec![0.2, 0.8], vec![0.4, 0.6], vec![0.9, 0.1]];
        let kept = Kept { valid: &[], probs: &probs, predictions: &[], labels: &labels, scores: None };
        let Mistakes::Labels(m) = request.mistakes(&kept) else { panic!("a classifier's mistakes are labels") };
        let shown: Vec<(usize, &str, &str)> = m.iter().map(|m| (m.line, m.text.as_str(), m.predicted.as_str())).collect();
        assert_eq!(shown, [(4, "a bad day", "neg"), (3, "a dull day ‖ it is", "pos")]);
        assert_eq!(request.counts(), (1, 3));
    }

    /// Both splits are tokenized with the run's labels; a label the run does not have is
    /// refused.
    #[test]
    fn encodes_both_splits_and_refuses_an_unknown_label() {
        let tokenizer = super::super::test_helpers::tokenizer();
        let labels = ["neg".to_string(), "pos".to_string()];
        let spans = bertbench_core::tasks::qa::SpanConfig::new();
        let how = Encoding { tokenizer: &tokenizer, labels: &labels, level: bertbench_core::tasks::classification::Level::Sentence, spans: &spans };
        let request = TextRequest { train: vec![example(2, "a fine day", None, "pos")], valid: vec![example(3, "a dull day", None, "neg")] };
        let (train, valid) = request.encode(&how).unwrap();
        assert_eq!((train.len(), valid.len()), (1, 1));
        let odd = TextRequest { train: vec![example(2, "a fine day", None, "meh")], valid: Vec::new() };
        assert!(odd.encode(&how).is_err());
    }
}
