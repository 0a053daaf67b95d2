//! Sentence similarity, scored by a number in 0..1 per pair: a cross-encoder reads the pair as
//! one sequence and its head gives the score from the pooled vector; a bi-encoder reads each
//! text alone, and the score is the cosine of their vectors (sentence-transformers). Scored by
//! Spearman's and Pearson's correlation, and as "similar" (≥ 0.5) or not.

use super::*;
use crate::data::{PairData, ScoredPair};
use crate::error::Error;
use crate::tasks::metrics::Metrics;
use crate::tasks::similarity::{self, SimilarityLoss, SimilarityMetrics};
use crate::tokenizer::BertTokenizer;
use crate::train::finetune::units::scores_tensor;

pub(super) struct CrossEncoder;
pub(super) struct BiEncoder;

/// One output, its score.
fn one_output(labels: &[String]) -> crate::Result<()> {
    if labels.len() != 1 {
        return Err(Error::Training("a similarity model has one output, its score".into()));
    }
    Ok(())
}

/// Counts the pairs put on the right side of 0.5.
fn same_side(outputs: &[f32], scores: &[f32]) -> usize {
    outputs.iter().zip(scores).filter(|(p, y)| (**p >= 0.5) == (**y >= 0.5)).count()
}

impl UnitTask for CrossEncoder {
    /// Chosen on STS-B's dev split (docs/performance.md, "Recipes chosen on dev splits"): a
    /// cross-encoder must learn how two texts read together relate, which a head on frozen
    /// features cannot.
    fn recipe(&self) -> FineTuneConfig {
        FineTuneConfig::new().with_mode(crate::train::finetune::TrainMode::Full).with_batch_size(16).with_epochs(2)
    }

    fn check(&self, labels: &[String], examples: &[&LabeledText]) -> crate::Result<()> {
        one_output(labels)?;
        labels_in_range(self, labels, examples)
    }

    /// `*ForSequenceClassification`'s pooler, fresh where the checkpoint has none.
    fn start(&self, bert: BertModel, config: &BertConfig, features: &FeatureSpec, head_weights: Option<&[u8]>, seed: u64, device: &Device) -> crate::Result<BertModel> {
        with_sequence_pooler(bert, config, features, head_weights, seed, device)
    }

    fn unit_labels(&self, t: &LabeledText) -> Vec<usize> {
        vec![t.label]
    }

    fn unit_scores(&self, t: &LabeledText) -> Vec<f32> {
        vec![t.score]
    }

    fn loss(&self, config: &FineTuneConfig, out: Tensor<2>, _labels: &[usize], scores: &[f32], device: &Device) -> Tensor<1> {
        similarity::loss(Level::Score, config.similarity_loss, out, scores_tensor(scores, device))
    }

    fn correct(&self, outputs: &[f32], _width: usize, _labels: &[usize], scores: &[f32]) -> usize {
        same_side(outputs, scores)
    }

    fn score(&self, tuner: &FineTuner, outputs: &[f32]) -> Scored {
        score_similarity(Level::Score, tuner, outputs)
    }
}

impl UnitTask for BiEncoder {
    /// Chosen on STS-B's dev split (docs/performance.md, "Recipes chosen on dev splits"): even a
    /// sentence encoder trained for this gains more than 2 points from training every weight.
    fn recipe(&self) -> FineTuneConfig {
        FineTuneConfig::new().with_mode(crate::train::finetune::TrainMode::Full).with_batch_size(16).with_epochs(2)
    }

    fn check(&self, labels: &[String], examples: &[&LabeledText]) -> crate::Result<()> {
        one_output(labels)?;
        if examples.iter().any(|t| t.second.is_none()) {
            return Err(Error::Training("a bi-encoder run needs each pair's two texts encoded apart".into()));
        }
        labels_in_range(self, labels, examples)
    }

    /// The head is the identity: the score is the cosine of the two texts' vectors.
    fn head(&self, width: usize, _labels: usize, _dropout: f64, device: &Device) -> ClassificationHead {
        similarity::identity_head(width, device)
    }

    fn inputs<'a>(&self, t: &'a LabeledText) -> Vec<&'a Encoded> {
        t.second.as_ref().map_or_else(|| vec![&t.encoded], |second| vec![&t.encoded, second])
    }

    fn unit_labels(&self, t: &LabeledText) -> Vec<usize> {
        vec![t.label]
    }

    fn unit_scores(&self, t: &LabeledText) -> Vec<f32> {
        vec![t.score]
    }

    fn rows(&self, _t: &LabeledText) -> usize {
        2
    }

    fn one_output_per_pair(&self) -> bool {
        true
    }

    fn rows_to_units(&self, out: Tensor<2>) -> Tensor<2> {
        similarity::pair_cosines(out)
    }

    fn loss(&self, config: &FineTuneConfig, out: Tensor<2>, _labels: &[usize], scores: &[f32], device: &Device) -> Tensor<1> {
        similarity::loss(Level::Embedding, config.similarity_loss, out, scores_tensor(scores, device))
    }

    fn correct(&self, outputs: &[f32], _width: usize, _labels: &[usize], scores: &[f32]) -> usize {
        same_side(outputs, scores)
    }

    fn score(&self, tuner: &FineTuner, outputs: &[f32]) -> Scored {
        score_similarity(Level::Embedding, tuner, outputs)
    }
}

/// A similarity model's scores: its outputs (a cross-encoder's score, a bi-encoder's cosine,
/// one per pair in validation order) against the gold scores; `metrics` tell pairs above 0.5
/// ("similar") from the others.
fn score_similarity(level: Level, tuner: &FineTuner, outputs: &[f32]) -> Scored {
    let n = tuner.valid.len();
    let pred = &outputs[..n];
    let gold: Vec<f32> = tuner.valid.iter().map(|t| t.score).collect();
    let binary = gold.iter().all(|&g| g == 0.0 || g == 1.0);
    let valid_loss = similarity::host_loss(level, tuner.config.similarity_loss, pred, &gold);
    let side = |x: f32| usize::from(x >= 0.5);
    let truth: Vec<usize> = gold.iter().map(|&g| side(g)).collect();
    let said: Vec<usize> = pred.iter().map(|&p| side(p)).collect();
    let metrics = Metrics::new(&truth, &said, &["different".to_string(), "similar".to_string()]);
    let scores = SimilarityMetrics::new(&gold, pred, binary);
    Scored { valid_loss, metrics, scores: TaskScores::Similarity(scores), predictions: Vec::new(), probs: pred.iter().map(|&p| vec![p]).collect() }
}

/// Tokenizes scored pairs for a similarity model: each pair read together (a cross-encoder,
/// [`Level::Score`]) or each text alone (a bi-encoder, [`Level::Embedding`]).
pub fn encode_pairs(tokenizer: &BertTokenizer, pairs: &[ScoredPair], level: Level) -> crate::Result<Vec<LabeledText>> {
    pairs
        .iter()
        .map(|p| {
            let at = |e: Error| Error::Input(format!("line {}: {e}", p.line));
            Ok(match level {
                Level::Embedding => LabeledText::pair(tokenizer.encode(&p.text).map_err(at)?, tokenizer.encode(&p.text_pair).map_err(at)?, p.score),
                _ => LabeledText::scored(tokenizer.encode_pair(&p.text, &p.text_pair).map_err(at)?, p.score),
            })
        })
        .collect()
}

impl FineTuneConfig {
    /// This configuration made a similarity run's on `data`: a cross-encoder (`Level::Score`:
    /// the pair read together, its pooling and layers kept) or a bi-encoder
    /// (`Level::Embedding`: each text's mean or `[CLS]` vector of the last layer, compared by
    /// cosine); the data's score scale kept with the model; the cosine loss, unless a
    /// bi-encoder learns two-valued labels (then the chosen loss, contrastive allowed).
    pub fn for_similarity(mut self, level: Level, data: &PairData) -> Self {
        self.features = match level {
            Level::Embedding => FeatureSpec::embeddings(if self.features.pooling == Pooling::Cls { Pooling::Cls } else { Pooling::Mean }),
            _ => FeatureSpec::scores(self.features.pooling, self.features.layers),
        };
        self.score_scale = Some(data.scale);
        if level != Level::Embedding || !data.binary {
            self.similarity_loss = SimilarityLoss::Cosine;
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::ScoreScale;

    fn pairs(binary: bool) -> PairData {
        let scale = if binary { ScoreScale::UNIT } else { ScoreScale { low: 0.0, high: 5.0 } };
        PairData { pairs: Vec::new(), scale, binary, label_names: None, skipped: Vec::new(), warnings: Vec::new() }
    }

    #[test]
    fn a_similarity_run_reads_its_kind_and_scale_and_keeps_contrastive_only_for_labels_compared_by_cosine() {
        let contrastive = FineTuneConfig::new().with_similarity_loss(SimilarityLoss::Contrastive);
        let bi = contrastive.clone().for_similarity(Level::Embedding, &pairs(true));
        assert_eq!((bi.features.level, bi.features.pooling, bi.similarity_loss), (Level::Embedding, Pooling::Mean, SimilarityLoss::Contrastive));
        assert_eq!(bi.score_scale, Some(ScoreScale::UNIT));
        let on_scores = contrastive.clone().for_similarity(Level::Embedding, &pairs(false));
        assert_eq!((on_scores.similarity_loss, on_scores.score_scale), (SimilarityLoss::Cosine, Some(ScoreScale { low: 0.0, high: 5.0 })));
        let cross = contrastive.with_features(FeatureSpec { pooling: Pooling::Pooler, ..FeatureSpec::default() }).for_similarity(Level::Score, &pairs(true));
        assert_eq!((cross.features.level, cross.features.pooling, cross.similarity_loss), (Level::Score, Pooling::Pooler, SimilarityLoss::Cosine));
        // A bi-encoder pools by mean or [CLS] only.
        let pooler = FineTuneConfig::new().with_features(FeatureSpec { pooling: Pooling::Pooler, ..FeatureSpec::default() });
        assert_eq!(pooler.for_similarity(Level::Embedding, &pairs(false)).features.pooling, Pooling::Mean);
    }
}
