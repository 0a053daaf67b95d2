//! Token tagging (`*ForTokenClassification`): one unit per target token (a word's first piece,
//! or every piece), its tag, read from that token's vector; scored per word, and by entity
//! where the tags are BIO.

use super::classify::score_labels;
use super::*;
use crate::error::Error;
use crate::tasks::tagging::EntityMetrics;
use crate::train::finetune::TrainMode;

pub(super) struct Tag;

impl UnitTask for Tag {
    /// Chosen on CoNLL-2003's dev split (docs/performance.md, "Recipes chosen on dev splits"): a
    /// tagger needs the encoder's token vectors to change, and the head alone on frozen features
    /// falls far behind on news text.
    fn recipe(&self) -> FineTuneConfig {
        FineTuneConfig::new().with_mode(TrainMode::Full).with_batch_size(16).with_learning_rate(1e-4).with_epochs(5)
    }

    fn check(&self, labels: &[String], examples: &[&LabeledText]) -> crate::Result<()> {
        two_labels_or_more(labels)?;
        labels_in_range(self, labels, examples)?;
        if examples.iter().any(|t| t.tokens.is_empty()) {
            return Err(Error::Training("a tagged example has no token to learn from".into()));
        }
        Ok(())
    }

    fn unit_labels(&self, t: &LabeledText) -> Vec<usize> {
        t.tokens.iter().map(|x| x.tag).collect()
    }

    fn units(&self, t: &LabeledText) -> usize {
        t.tokens.len()
    }

    fn rows(&self, t: &LabeledText) -> usize {
        t.tokens.len()
    }

    fn row_positions(&self, t: &LabeledText) -> Option<Vec<usize>> {
        Some(t.tokens.iter().map(|x| x.position).collect())
    }

    fn score(&self, tuner: &FineTuner, logits: &[f32]) -> Scored {
        let counted: Vec<bool> = tuner.valid.iter().flat_map(|t| t.tokens.iter().map(|x| x.word_start)).collect();
        score_labels(self, tuner, logits, &counted, |pred| entity_metrics(tuner, pred))
    }
}

/// Entity-level metrics of a tagger's word predictions (validation order), when its tags are
/// BIO.
fn entity_metrics(tuner: &FineTuner, pred: &[usize]) -> Option<EntityMetrics> {
    let labels = &tuner.labels;
    if !labels.iter().any(|l| l.starts_with("B-")) {
        return None;
    }
    let mut pred = pred.iter();
    let (mut truth_tags, mut pred_tags) = (Vec::new(), Vec::new());
    for t in &tuner.valid {
        let words = t.tokens.iter().filter(|x| x.word_start);
        truth_tags.push(words.clone().map(|x| labels[x.tag].as_str()).collect::<Vec<_>>());
        pred_tags.push(words.map(|_| labels[*pred.next().expect("one prediction per word")].as_str()).collect::<Vec<_>>());
    }
    Some(EntityMetrics::new(&truth_tags, &pred_tags))
}
