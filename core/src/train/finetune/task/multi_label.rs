//! Multi-label classification (`*ForSequenceClassification`, `problem_type:
//! "multi_label_classification"`): one unit per text, its targets (a 0 or 1 per label), read
//! from one pooled vector; binary cross-entropy per label, scored at a threshold chosen on the
//! validation set (see [`crate::tasks::multi_label`]).

use super::*;
use crate::data::LabelSet;
use crate::error::Error;
use crate::tasks::multi_label::{self, LabelSetMetrics};
use crate::tokenizer::BertTokenizer;
use crate::train::finetune::TaskScores;

pub(super) struct MultiLabel;

impl UnitTask for MultiLabel {
    fn check(&self, labels: &[String], examples: &[&LabeledText]) -> crate::Result<()> {
        two_labels_or_more(labels)?;
        match examples.iter().find(|t| t.targets.len() != labels.len()) {
            Some(t) => Err(Error::Training(format!("a multi-label text has {} targets for {} labels", t.targets.len(), labels.len()))),
            None => Ok(()),
        }
    }

    /// A single-label classifier's recipes (no multi-label benchmark is at hand to choose
    /// others on): the head alone on single texts, everything on pairs read together.
    fn recipe_on(&self, pairs: bool) -> FineTuneConfig {
        if pairs { super::classify::pairs_recipe() } else { self.recipe() }
    }

    /// `*ForSequenceClassification`'s pooler, fresh where the checkpoint has none.
    fn start(&self, bert: BertModel, config: &BertConfig, features: &FeatureSpec, head_weights: Option<&[u8]>, seed: u64, device: &Device) -> crate::Result<BertModel> {
        with_sequence_pooler(bert, config, features, head_weights, seed, device)
    }

    /// One unit per text; its labels are its targets (see [`unit_scores`](Self::unit_scores)).
    fn unit_labels(&self, t: &LabeledText) -> Vec<usize> {
        vec![t.label]
    }

    fn unit_scores(&self, t: &LabeledText) -> Vec<f32> {
        t.targets.clone()
    }

    fn loss(&self, _config: &FineTuneConfig, out: Tensor<2>, _labels: &[usize], targets: &[f32], device: &Device) -> Tensor<1> {
        let targets = Tensor::<2>::from_data(TensorData::new(targets.to_vec(), out.dims()), device);
        multi_label::loss(out, targets)
    }

    /// Texts whose every label is decided right at 0.5 (training's accuracy: exact match).
    fn correct(&self, outputs: &[f32], width: usize, _labels: &[usize], targets: &[f32]) -> usize {
        outputs.chunks(width).zip(targets.chunks(width)).filter(|(x, y)| x.iter().zip(*y).all(|(&x, &y)| (x >= 0.0) == (y >= 0.5))).count()
    }

    fn score(&self, tuner: &FineTuner, logits: &[f32]) -> Scored {
        let targets: Vec<f32> = tuner.valid.iter().flat_map(|t| t.targets.iter().copied()).collect();
        let probs = multi_label::probabilities(logits);
        let scores = LabelSetMetrics::at_best_threshold(&probs, &targets, &tuner.labels);
        // The class metrics count every (text, label) decision, "no" or "yes"; their accuracy is
        // the texts': those with every label right, as training's accuracy counts them.
        let said: Vec<usize> = probs.iter().map(|&p| usize::from(p >= scores.threshold)).collect();
        let truth: Vec<usize> = targets.iter().map(|&y| usize::from(y >= 0.5)).collect();
        let metrics = Metrics { accuracy: scores.exact_match, count: scores.texts, ..Metrics::new(&truth, &said, &["no".to_string(), "yes".to_string()]) };
        let k = tuner.labels.len();
        Scored {
            valid_loss: multi_label::host_loss(logits, &targets),
            metrics,
            scores: TaskScores::Labels(scores),
            predictions: Vec::new(),
            probs: probs.chunks(k).map(<[f32]>::to_vec).collect(),
        }
    }
}

/// Tokenizes multi-label texts with their targets, `labels` wide (ids of
/// [`LabelSetData::labels`](crate::data::LabelSetData::labels)); a label id outside them is
/// refused by its line.
pub fn encode_label_sets(tokenizer: &BertTokenizer, examples: &[LabelSet], labels: usize) -> crate::Result<Vec<LabeledText>> {
    examples
        .iter()
        .map(|ex| {
            if let Some(bad) = ex.labels.iter().find(|&&l| l >= labels) {
                return Err(Error::Input(format!("line {}: label id {bad} is not one of the {labels} labels", ex.line)));
            }
            let encoded = tokenizer
                .encode_text(&ex.text, ex.text_pair.as_deref())
                .map_err(|e| Error::Input(format!("line {}: {e}", ex.line)))?;
            Ok(LabeledText::with_labels(encoded, ex.targets(labels)))
        })
        .collect()
}
