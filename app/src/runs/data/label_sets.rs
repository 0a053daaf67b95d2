//! Multi-label classification's data: texts with any number of labels, and the texts whose
//! labels the kept model did not give exactly (at the threshold its run chose).

use bertbench_core::data::LabelSet;
use bertbench_core::train::{LabeledText, TaskScores, encode_label_sets};
use serde::{Deserialize, Serialize};

use super::{Encoding, Kept, TaskData, worst};
use crate::runs::Mistakes;

/// The texts of a multi-label run, their label ids in the run's labels.
#[derive(Debug, Clone)]
pub struct LabelSetRequest {
    /// Training texts.
    pub train: Vec<LabelSet>,
    /// Validation texts.
    pub valid: Vec<LabelSet>,
}

impl Mistakes {
    /// A multi-label model's texts whose labels it did not give exactly.
    pub fn label_sets(&self) -> &[LabelSetMistake] {
        if let Mistakes::LabelSets(m) = self { m } else { &[] }
    }
}

/// A validation text whose labels the model did not give exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelSetMistake {
    /// Line in the uploaded file.
    pub line: usize,
    /// The text (and pair).
    pub text: String,
    /// Its labels the model did not give, each with the probability it gave.
    pub missed: Vec<(String, f32)>,
    /// The labels the model gave that it does not have, each with its probability.
    pub extra: Vec<(String, f32)>,
}

impl LabelSetMistake {
    /// How far its surest wrong decision is from the threshold: the larger, the surer.
    fn sureness(&self, threshold: f32) -> f32 {
        let missed = self.missed.iter().map(|(_, p)| threshold - p);
        let extra = self.extra.iter().map(|(_, p)| p - threshold);
        missed.chain(extra).fold(0.0, f32::max)
    }
}

impl TaskData for LabelSetRequest {
    fn counts(&self) -> (usize, usize) {
        (self.train.len(), self.valid.len())
    }

    fn encode(&self, how: &Encoding) -> Result<(Vec<LabeledText>, Vec<LabeledText>), String> {
        let k = how.labels.len();
        Ok((
            encode_label_sets(how.tokenizer, &self.train, k).map_err(|e| e.to_string())?,
            encode_label_sets(how.tokenizer, &self.valid, k).map_err(|e| format!("the validation texts: {e}"))?,
        ))
    }

    /// The texts whose labels were not given exactly at the run's threshold (0.5 before any
    /// evaluation chose one), the model's surest mistake first (at most 500).
    fn mistakes(&self, kept: &Kept) -> Mistakes {
        let threshold = kept.scores.and_then(TaskScores::labels).map_or(0.5, |m| m.threshold);
        let wrong = self
            .valid
            .iter()
            .zip(kept.probs)
            .filter_map(|(ex, p)| {
                let named = |j: usize| (kept.labels.get(j).cloned().unwrap_or_default(), p[j]);
                let missed: Vec<_> = (0..p.len()).filter(|&j| ex.labels.contains(&j) && p[j] < threshold).map(named).collect();
                let extra: Vec<_> = (0..p.len()).filter(|&j| !ex.labels.contains(&j) && p[j] >= threshold).map(named).collect();
                let text = match &ex.text_pair {
                    Some(b) => format!("{} ‖ {b}", ex.text),
                    None => ex.text.clone(),
                };
                (!missed.is_empty() || !extra.is_empty()).then_some(LabelSetMistake { line: ex.line, text, missed, extra })
            })
            .collect();
        Mistakes::LabelSets(worst(wrong, 500, |a, b| b.sureness(threshold).total_cmp(&a.sureness(threshold))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bertbench_core::tasks::multi_label::LabelSetMetrics;

    fn text(line: usize, text: &str, labels: Vec<usize>) -> LabelSet {
        LabelSet { line, text: text.into(), text_pair: None, labels }
    }

    /// A text is a mistake when a label it has is below the run's threshold or one it lacks is
    /// at or above it; the surest mistake comes first.
    #[test]
    fn texts_not_labelled_exactly_at_the_runs_threshold_surest_first() {
        let labels = ["food".to_string(), "sport".to_string()];
        let request = LabelSetRequest { train: Vec::new(), valid: vec![text(2, "a good day", vec![0]), text(3, "a bad day", vec![0, 1]), text(4, "it is fine", vec![])] };
        let probs = [vec![0.9, 0.35], vec![0.6, 0.2], vec![0.3, 0.95]];
        let scores = TaskScores::Labels(LabelSetMetrics::new(&[0.0], &[0.0], &labels[..1], 0.3));
        let kept = Kept { valid: &[], probs: &probs, predictions: &[], labels: &labels, scores: Some(&scores) };
        let Mistakes::LabelSets(m) = request.mistakes(&kept) else { panic!("label sets") };
        let shown: Vec<(usize, Vec<String>, Vec<String>)> =
            m.iter().map(|m| (m.line, m.missed.iter().map(|l| l.0.clone()).collect(), m.extra.iter().map(|l| l.0.clone()).collect())).collect();
        // At 0.3: text 2's 0.35 is an extra sport; text 3's 0.2 sport is missed; text 4's both extra.
        assert_eq!(shown, [(4, vec![], vec!["food".to_string(), "sport".to_string()]), (3, vec!["sport".to_string()], vec![]), (2, vec![], vec!["sport".to_string()])]);
        let at_half = Kept { scores: None, ..kept };
        let Mistakes::LabelSets(m) = request.mistakes(&at_half) else { panic!("label sets") };
        assert_eq!(m.iter().map(|m| m.line).collect::<Vec<_>>(), [4, 3]);
    }

    /// Each text is encoded with its targets; a label id past the run's labels is refused by
    /// its line.
    #[test]
    fn encodes_targets_and_refuses_an_unknown_label() {
        let tokenizer = super::super::test_helpers::tokenizer();
        let labels = ["food".to_string(), "sport".to_string()];
        let spans = bertbench_core::tasks::qa::SpanConfig::new();
        let how = Encoding { tokenizer: &tokenizer, labels: &labels, level: bertbench_core::tasks::classification::Level::MultiLabel, spans: &spans };
        let request = LabelSetRequest { train: vec![text(2, "a fine day", vec![1])], valid: vec![text(3, "a dull day", vec![])] };
        let (train, valid) = request.encode(&how).unwrap();
        assert_eq!((train[0].targets.clone(), valid[0].targets.clone()), (vec![0.0, 1.0], vec![0.0, 0.0]));
        let odd = LabelSetRequest { train: Vec::new(), valid: vec![text(5, "a bad day", vec![2])] };
        let e = odd.encode(&how).unwrap_err();
        assert!(e.starts_with("the validation texts: ") && e.contains("line 5"), "{e}");
    }
}
