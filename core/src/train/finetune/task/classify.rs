//! Sentence classification (`*ForSequenceClassification`): one unit per text, its label, read
//! from one pooled vector.

use super::*;
use crate::data::Example;
use crate::error::Error;
use crate::tokenizer::BertTokenizer;
use crate::tasks::metrics::{Metrics, softmax};
use crate::tasks::tagging::EntityMetrics;
use super::cross_entropy;
use crate::train::finetune::TrainMode;

pub(super) struct Classify;

/// A classifier of pairs of texts read together (MRPC, QQP, NLI) trains everything, chosen on
/// MRPC's dev split (docs/performance.md, "Recipes chosen on dev splits"): a sentence encoder's
/// frozen features place each text, not how two texts relate. Single texts keep the head-only
/// default, within 2 points of full fine-tuning on SST-2.
pub(super) fn pairs_recipe() -> FineTuneConfig {
    FineTuneConfig::new().with_mode(TrainMode::Full).with_batch_size(16).with_epochs(2)
}

impl UnitTask for Classify {
    fn check(&self, labels: &[String], examples: &[&LabeledText]) -> crate::Result<()> {
        two_labels_or_more(labels)?;
        labels_in_range(self, labels, examples)
    }

    fn distils(&self) -> bool {
        true
    }

    fn recipe_on(&self, pairs: bool) -> FineTuneConfig {
        if pairs { pairs_recipe() } else { self.recipe() }
    }

    /// `*ForSequenceClassification`'s pooler, fresh where the checkpoint has none.
    fn start(&self, bert: BertModel, config: &BertConfig, features: &FeatureSpec, head_weights: Option<&[u8]>, seed: u64, device: &Device) -> crate::Result<BertModel> {
        with_sequence_pooler(bert, config, features, head_weights, seed, device)
    }

    fn unit_labels(&self, t: &LabeledText) -> Vec<usize> {
        vec![t.label]
    }

    fn unit_scores(&self, t: &LabeledText) -> Vec<f32> {
        t.teacher.clone()
    }

    /// Cross-entropy on the gold labels; a student's adds its teacher's softened probabilities
    /// (see [`Distillation`](crate::tasks::distillation::Distillation)).
    fn loss(&self, config: &FineTuneConfig, out: Tensor<2>, labels: &[usize], teacher: &[f32], device: &Device) -> Tensor<1> {
        let gold = labels_tensor(labels, device);
        match &config.distil {
            Some(d) if teacher.len() == out.dims().iter().product::<usize>() => {
                let teacher = Tensor::<2>::from_data(TensorData::new(teacher.to_vec(), out.dims()), device);
                d.loss(out, teacher, gold)
            }
            _ => ClassificationHead::loss(out, gold),
        }
    }

    fn score(&self, tuner: &FineTuner, logits: &[f32]) -> Scored {
        score_labels(self, tuner, logits, &vec![true; tuner.valid.len()], |_| None)
    }
}

/// A classifier's or tagger's scores: of each unit whose `counted` is set (a tagger: each word
/// at its first piece), with `entities` computed from the counted predictions.
pub(super) fn score_labels(
    task: &dyn UnitTask,
    tuner: &FineTuner,
    logits: &[f32],
    counted: &[bool],
    entities: impl Fn(&[usize]) -> Option<EntityMetrics>,
) -> Scored {
    let k = tuner.labels.len();
    let all_truth: Vec<usize> = tuner.valid.iter().flat_map(|t| task.unit_labels(t)).collect();
    let valid_loss = cross_entropy(logits, &all_truth, k);
    let rows: Vec<&[f32]> = logits.chunks(k).zip(counted).filter(|(_, c)| **c).map(|(row, _)| row).collect();
    let truth: Vec<usize> = all_truth.iter().zip(counted).filter(|(_, c)| **c).map(|(t, _)| *t).collect();
    let pred: Vec<usize> = rows.iter().map(|r| argmax(r)).collect();
    let metrics = Metrics::new(&truth, &pred, &tuner.labels);
    let entities = entities(&pred);
    let probs = rows.iter().map(|r| softmax(r)).collect();
    let scores = entities.map_or(TaskScores::Classes, TaskScores::Entities);
    Scored { valid_loss, metrics, scores, predictions: Vec::new(), probs }
}

/// Tokenizes examples, mapping label names to ids in `labels`' order.
pub fn encode_examples(tokenizer: &BertTokenizer, examples: &[Example], labels: &[String]) -> crate::Result<Vec<LabeledText>> {
    examples
        .iter()
        .map(|ex| {
            let label = labels
                .iter()
                .position(|l| *l == ex.label)
                .ok_or_else(|| Error::Input(format!("line {}: label {:?} is not one of the training labels", ex.line, ex.label)))?;
            let encoded = tokenizer
                .encode_text(&ex.text, ex.text_pair.as_deref())
                .map_err(|e| Error::Input(format!("line {}: {e}", ex.line)))?;
            Ok(LabeledText::sentence(encoded, label))
        })
        .collect()
}
