//! Token tagging (`*ForTokenClassification`): one unit per target token (a word's first piece,
//! or every piece), its tag, read from that token's vector; scored per word, and by entity
//! where the tags are BIO.

use super::classify::score_labels;
use super::*;
use crate::data::TaggedSentence;
use crate::tasks::tagging::{LabelPieces, encode_words};
use crate::tokenizer::BertTokenizer;
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

/// Tokenizes tagged sentences for a token classifier: each word's tag (one of `tags`) onto its
/// pieces as [`crate::tasks::tagging::encode_words`] puts it. Returns the examples and how many
/// words the tokenizer's length cut off (neither learned nor scored).
pub fn encode_tagged(tokenizer: &BertTokenizer, sentences: &[TaggedSentence], tags: &[String], pieces: LabelPieces) -> crate::Result<(Vec<LabeledText>, usize)> {
    let mut lost = 0;
    let examples = sentences
        .iter()
        .map(|s| {
            let ids = s
                .tags
                .iter()
                .map(|t| tags.iter().position(|x| x == t).ok_or_else(|| Error::Input(format!("line {}: tag {t:?} is not one of the training tags", s.line))))
                .collect::<crate::Result<Vec<_>>>()?;
            let (encoded, targets, cut) = encode_words(tokenizer, &s.words, &ids, tags, pieces).map_err(|e| Error::Input(format!("line {}: {e}", s.line)))?;
            if targets.is_empty() {
                return Err(Error::Input(format!("line {}: no word of this sentence fits in the model's length", s.line)));
            }
            lost += cut;
            Ok(LabeledText::tagged(encoded, targets))
        })
        .collect::<crate::Result<Vec<_>>>()?;
    Ok((examples, lost))
}
