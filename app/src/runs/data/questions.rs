//! Extractive question answering's data: questions over their passages, and the questions the
//! kept model answered wrong.

use bertbench_core::data::QaItem;
use bertbench_core::tasks::qa::AnswerMetrics;
use bertbench_core::train::{LabeledText, encode_questions};
use serde::{Deserialize, Serialize};

use super::{Encoding, Kept, TaskData, worst};
use crate::runs::Mistakes;

/// The questions of an extractive question-answering run.
#[derive(Debug, Clone)]
pub struct QaRequest {
    /// Training questions.
    pub train: Vec<QaItem>,
    /// Validation questions.
    pub valid: Vec<QaItem>,
}

/// A validation question the model answered wrong (exact match 0).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AnswerMistake {
    /// Line in the uploaded file.
    pub line: usize,
    /// The question.
    pub question: String,
    /// Its passage.
    pub context: String,
    /// The gold answers (none: the passage does not answer it).
    pub gold: Vec<String>,
    /// The model's answer (`""`: no answer).
    pub predicted: String,
    /// Its token F1 against the best gold answer.
    pub f1: f32,
}

impl TaskData for QaRequest {
    fn counts(&self) -> (usize, usize) {
        (self.train.len(), self.valid.len())
    }

    /// Each question's windows of the passage (the run's `spans`), one unit each.
    fn encode(&self, how: &Encoding) -> Result<(Vec<LabeledText>, Vec<LabeledText>), String> {
        let encode = |items: &[QaItem]| encode_questions(how.tokenizer, items, how.spans).map(|(units, _)| units).map_err(|e| e.to_string());
        Ok((encode(&self.train)?, encode(&self.valid)?))
    }

    /// The questions answered wrong (exact match 0), lowest F1 first (at most 500):
    /// `predictions` holds the answer to each question in order (`""`: no answer).
    fn mistakes(&self, kept: &Kept) -> Mistakes {
        let wrong = self
            .valid
            .iter()
            .zip(kept.predictions)
            .filter_map(|(q, p)| {
                let gold: Vec<String> = q.answers.iter().map(|a| a.text.clone()).collect();
                let scores = AnswerMetrics::new(std::slice::from_ref(&gold), std::slice::from_ref(p));
                (scores.all.exact < 1.0).then(|| AnswerMistake {
                    line: q.line,
                    question: q.question.clone(),
                    context: q.context.clone(),
                    gold,
                    predicted: p.clone(),
                    f1: scores.all.f1,
                })
            })
            .collect();
        Mistakes::Answers(worst(wrong, 500, |a, b| a.f1.total_cmp(&b.f1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bertbench_core::data::QaAnswer;

    fn question(line: usize, answer: Option<&str>) -> QaItem {
        let context = "bob lives in paris";
        QaItem {
            line,
            id: line.to_string(),
            question: "where is bob".into(),
            context: context.into(),
            answers: answer.map(|a| QaAnswer { text: a.into(), start: context.find(a).unwrap() }).into_iter().collect(),
        }
    }

    /// Right answers (SQuAD's normalisation: case aside) are not mistakes; the wrong ones come
    /// lowest F1 first, a question without an answer answered being one.
    #[test]
    fn wrong_answers_lowest_f1_first() {
        let request = QaRequest { train: Vec::new(), valid: vec![question(1, Some("paris")), question(2, Some("in paris")), question(3, Some("bob")), question(4, None)] };
        let predictions = ["Paris".to_string(), "paris".to_string(), "paris".to_string(), "bob".to_string()];
        let Mistakes::Answers(m) = request.mistakes(&Kept { valid: &[], probs: &[], predictions: &predictions, labels: &[], scores: None }) else { panic!("answers") };
        let shown: Vec<(usize, f32)> = m.iter().map(|m| (m.line, m.f1)).collect();
        assert_eq!(shown.iter().map(|s| s.0).collect::<Vec<_>>(), [3, 4, 2]);
        assert!(shown[0].1 == 0.0 && shown[2].1 > 0.5, "{shown:?}");
        assert!(m[1].gold.is_empty());
    }

    /// A question becomes as many units as the window gives its passage.
    #[test]
    fn a_question_per_window() {
        let tokenizer = super::super::test_helpers::tokenizer();
        let spans = bertbench_core::tasks::qa::SpanConfig::new().with_max_len(64);
        let labels = ["start".to_string(), "end".to_string()];
        let how = Encoding { tokenizer: &tokenizer, labels: &labels, level: bertbench_core::tasks::classification::Level::Span, spans: &spans };
        let request = QaRequest { train: vec![question(1, Some("paris"))], valid: vec![question(2, None)] };
        let (train, valid) = request.encode(&how).unwrap();
        assert_eq!((train.len(), valid.len()), (1, 1));
    }
}
