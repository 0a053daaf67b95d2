//! Sentence similarity's data: scored pairs, and every validation pair with the kept model's
//! prediction (the results plot them all).

use bertbench_core::data::ScoredPair;
use bertbench_core::train::{LabeledText, encode_pairs};
use serde::{Deserialize, Serialize};

use super::{Encoding, Kept, TaskData, worst};
use crate::runs::Mistakes;

/// The scored pairs of a sentence-similarity run.
#[derive(Debug, Clone)]
pub struct PairRequest {
    /// Training pairs.
    pub train: Vec<ScoredPair>,
    /// Validation pairs.
    pub valid: Vec<ScoredPair>,
}

/// A validation pair whose predicted similarity is far from its score.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairMistake {
    /// Line in the uploaded file.
    pub line: usize,
    /// The two texts.
    pub text: String,
    pub text_pair: String,
    /// The gold score and the prediction, both 0..1.
    pub gold: f32,
    pub predicted: f32,
}

impl TaskData for PairRequest {
    fn counts(&self) -> (usize, usize) {
        (self.train.len(), self.valid.len())
    }

    /// A cross-encoder reads each pair as one sequence, a bi-encoder each text alone (`level`).
    fn encode(&self, how: &Encoding) -> Result<(Vec<LabeledText>, Vec<LabeledText>), String> {
        let encode = |pairs: &[ScoredPair]| encode_pairs(how.tokenizer, pairs, how.level).map_err(|e| e.to_string());
        Ok((encode(&self.train)?, encode(&self.valid)?))
    }

    /// Every pair with its predicted similarity (`probs`: one value per pair, in order),
    /// furthest from its score first (at most 2,000).
    fn mistakes(&self, kept: &Kept) -> Mistakes {
        let all = self
            .valid
            .iter()
            .zip(kept.probs)
            .map(|(p, pred)| PairMistake { line: p.line, text: p.text.clone(), text_pair: p.text_pair.clone(), gold: p.score, predicted: pred.first().copied().unwrap_or_default() })
            .collect();
        let off = |m: &PairMistake| (m.predicted - m.gold).abs();
        Mistakes::Pairs(worst(all, 2000, |a, b| off(b).total_cmp(&off(a))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bertbench_core::tasks::classification::Level;

    fn pair(line: usize, score: f32) -> ScoredPair {
        ScoredPair { line, text: "the cat sat".into(), text_pair: "a cat sat".into(), score, raw: score.to_string() }
    }

    /// Every pair is kept with its prediction, the furthest off first.
    #[test]
    fn every_pair_furthest_off_first() {
        let request = PairRequest { train: Vec::new(), valid: vec![pair(1, 0.9), pair(2, 0.1), pair(3, 0.5)] };
        let probs = [vec![0.8], vec![0.7], vec![0.5]];
        let Mistakes::Pairs(m) = request.mistakes(&Kept { valid: &[], probs: &probs, predictions: &[], labels: &[], scores: None }) else { panic!("pairs") };
        let lines: Vec<usize> = m.iter().map(|m| m.line).collect();
        assert_eq!(lines, [2, 1, 3]);
        assert_eq!((m[0].gold, m[0].predicted), (0.1, 0.7));
    }

    /// A cross-encoder's unit is the pair as one sequence; a bi-encoder's reads the second text
    /// as a sequence of its own.
    #[test]
    fn the_level_says_one_sequence_or_two() {
        let tokenizer = super::super::test_helpers::tokenizer();
        let spans = bertbench_core::tasks::qa::SpanConfig::new();
        let request = PairRequest { train: vec![pair(1, 0.9)], valid: vec![pair(2, 0.1)] };
        let encode = |level| request.encode(&Encoding { tokenizer: &tokenizer, labels: &[], level, spans: &spans }).unwrap();
        let (cross, _) = encode(Level::Score);
        let (bi, _) = encode(Level::Embedding);
        assert!(cross[0].second.is_none() && bi[0].second.is_some());
    }
}
