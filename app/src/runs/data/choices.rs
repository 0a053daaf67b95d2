//! Multiple choice's data: questions with their endings, and the questions the kept model
//! answered wrong.

use bertbench_core::tasks::choice::ChoiceItem;
use bertbench_core::tasks::metrics::argmax;
use bertbench_core::train::LabeledText;
use bertbench_core::train::task::choice::encode_choices;
use serde::{Deserialize, Serialize};

use super::{Encoding, Kept, TaskData, worst};
use crate::runs::Mistakes;

/// The questions of a multiple-choice run (every one with the same number of endings).
#[derive(Debug, Clone)]
pub struct ChoiceRequest {
    /// Training questions.
    pub train: Vec<ChoiceItem>,
    /// Validation questions.
    pub valid: Vec<ChoiceItem>,
}

impl Mistakes {
    /// A multiple-choice model's questions answered wrong.
    pub fn choices(&self) -> &[ChoiceMistake] {
        if let Mistakes::Choices(m) = self { m } else { &[] }
    }
}

/// A validation question whose best-scored ending is not the right one.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChoiceMistake {
    /// Line in the uploaded file.
    pub line: usize,
    /// The premise.
    pub premise: String,
    /// The ending the model chose, and its probability.
    pub chosen: String,
    pub chosen_prob: f32,
    /// The right ending, and the probability the model gave it.
    pub right: String,
    pub right_prob: f32,
}

impl TaskData for ChoiceRequest {
    fn counts(&self) -> (usize, usize) {
        (self.train.len(), self.valid.len())
    }

    fn encode(&self, how: &Encoding) -> Result<(Vec<LabeledText>, Vec<LabeledText>), String> {
        Ok((
            encode_choices(how.tokenizer, &self.train).map_err(|e| e.to_string())?,
            encode_choices(how.tokenizer, &self.valid).map_err(|e| format!("the validation questions: {e}"))?,
        ))
    }

    /// The questions whose best-scored ending is not the right one, the model's surest first
    /// (at most 500): `probs` holds each question's ending probabilities in order.
    fn mistakes(&self, kept: &Kept) -> Mistakes {
        let wrong = self
            .valid
            .iter()
            .zip(kept.probs)
            .filter_map(|(q, p)| {
                let chosen = argmax(p);
                (chosen != q.label).then(|| ChoiceMistake {
                    line: q.line,
                    premise: q.premise.clone(),
                    chosen: q.choices.get(chosen).cloned().unwrap_or_default(),
                    chosen_prob: p[chosen],
                    right: q.choices[q.label].clone(),
                    right_prob: p.get(q.label).copied().unwrap_or_default(),
                })
            })
            .collect();
        Mistakes::Choices(worst(wrong, 500, |a, b| b.chosen_prob.total_cmp(&a.chosen_prob)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(line: usize, premise: &str, label: usize) -> ChoiceItem {
        ChoiceItem { line, premise: premise.into(), choices: vec!["sat on the mat".into(), "ran in the park".into()], label }
    }

    /// A question is a mistake when its likeliest ending is not the right one; the surest
    /// mistake comes first, with both endings' probabilities.
    #[test]
    fn wrong_endings_surest_first() {
        let request = ChoiceRequest { train: Vec::new(), valid: vec![question(1, "the cat", 0), question(2, "the dog", 1), question(3, "bob", 1)] };
        let probs = [vec![0.7, 0.3], vec![0.6, 0.4], vec![0.9, 0.1]];
        let Mistakes::Choices(m) = request.mistakes(&Kept { valid: &[], probs: &probs, predictions: &[], labels: &[], scores: None }) else { panic!("choices") };
        let shown: Vec<(usize, &str, f32, &str, f32)> = m.iter().map(|m| (m.line, m.chosen.as_str(), m.chosen_prob, m.right.as_str(), m.right_prob)).collect();
        assert_eq!(shown, [(3, "sat on the mat", 0.9, "ran in the park", 0.1), (2, "sat on the mat", 0.6, "ran in the park", 0.4)]);
    }

    /// Each question becomes one unit reading its premise with every ending; a validation
    /// question without endings is refused as the validation set's, by its line.
    #[test]
    fn encodes_a_question_per_unit() {
        let tokenizer = super::super::test_helpers::tokenizer();
        let spans = bertbench_core::tasks::qa::SpanConfig::new();
        let how = Encoding { tokenizer: &tokenizer, labels: &[], level: bertbench_core::tasks::classification::Level::Choice, spans: &spans };
        let request = ChoiceRequest { train: vec![question(1, "the cat", 0)], valid: vec![question(2, "the dog", 1)] };
        let (train, valid) = request.encode(&how).unwrap();
        assert_eq!((train.len(), valid.len(), train[0].sequences.len()), (1, 1, 2));
        let bad = ChoiceRequest { train: Vec::new(), valid: vec![ChoiceItem { choices: Vec::new(), ..question(2, "the dog", 0) }] };
        let e = bad.encode(&how).unwrap_err();
        assert!(e.starts_with("the validation questions: ") && e.contains("line 2"), "{e}");
    }
}
