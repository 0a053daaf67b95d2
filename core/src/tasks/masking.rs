//! Pretraining inputs: masked-language-model masking (BERT's 15 %, then 80 % `[MASK]` / 10 %
//! random token / 10 % unchanged) and sentence pairs for next-sentence prediction (NSP) or
//! sentence-order prediction (SOP).
//!
//! Everything here is host-side and seeded, so a run is reproducible and the statistics can be
//! tested exactly.

use burn::config::Config;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::rng::Rng;
use crate::tokenizer::BertTokenizer;

/// How tokens are chosen and corrupted for the MLM objective.
#[derive(Config, Debug, PartialEq)]
pub struct MaskingConfig {
    /// Chance that a (non-special) token is picked for prediction.
    #[config(default = 0.15)]
    pub pick_prob: f64,
    /// Of the picked tokens, the share replaced by `[MASK]`.
    #[config(default = 0.8)]
    pub mask_prob: f64,
    /// Of the picked tokens, the share replaced by a random token (the rest stay unchanged).
    #[config(default = 0.1)]
    pub random_prob: f64,
}

/// What happened to a picked token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MaskCase {
    /// Replaced by `[MASK]`.
    Mask,
    /// Replaced by a random vocabulary token.
    Random,
    /// Left as it was (the model must still predict it).
    Keep,
}

/// One picked position: the loss is computed here and only here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pick {
    /// Index in the sequence.
    pub position: usize,
    /// The token id that was there (the prediction target).
    pub original: u32,
    /// What the input shows instead.
    pub case: MaskCase,
}

/// A sequence after masking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Masked {
    /// The corrupted input ids.
    pub input_ids: Vec<u32>,
    /// The picked positions, in order.
    pub picks: Vec<Pick>,
}

/// The ids masking needs: `[MASK]`, and the ids a random replacement may use (never a special
/// token).
#[derive(Debug, Clone)]
pub struct MaskVocab {
    /// The `[MASK]` id.
    pub mask_id: u32,
    /// Candidate ids for random replacement.
    pub random_ids: Vec<u32>,
}

impl MaskVocab {
    /// Every id of `tokenizer` except `[PAD]`, `[CLS]`, `[SEP]`, `[MASK]`, `[UNK]` and the
    /// `[unusedN]` placeholders.
    pub fn from_tokenizer(tokenizer: &BertTokenizer) -> Self {
        let specials = [tokenizer.pad_id, tokenizer.cls_id, tokenizer.sep_id, tokenizer.mask_id, tokenizer.unk_id];
        let random_ids = (0..tokenizer.vocab_size() as u32)
            .filter(|id| !specials.contains(id))
            .filter(|&id| tokenizer.id_to_piece(id).is_some_and(|p| !(p.starts_with('[') && p.ends_with(']'))))
            .collect();
        Self { mask_id: tokenizer.mask_id, random_ids }
    }
}

impl MaskingConfig {
    /// Checks the probabilities.
    pub fn validate(&self) -> crate::Result<()> {
        let ok = |p: f64| (0.0..=1.0).contains(&p);
        if !ok(self.pick_prob) || self.pick_prob == 0.0 || !ok(self.mask_prob) || !ok(self.random_prob) || self.mask_prob + self.random_prob > 1.0 {
            return Err(Error::Input(format!(
                "masking probabilities must be in [0, 1] with pick > 0 and mask + random ≤ 1 (got pick {}, mask {}, random {})",
                self.pick_prob, self.mask_prob, self.random_prob
            )));
        }
        Ok(())
    }

    /// Masks one sequence. `special[i]` marks positions never picked (`[CLS]`, `[SEP]`,
    /// padding). Each other position is picked with probability `pick_prob`; a sequence with
    /// at least one eligible token always gets at least one pick, so every sequence teaches
    /// something.
    pub fn apply(&self, ids: &[u32], special: &[bool], vocab: &MaskVocab, rng: &mut Rng) -> Masked {
        let eligible: Vec<usize> = (0..ids.len()).filter(|&i| !special.get(i).copied().unwrap_or(false)).collect();
        let mut picked: Vec<usize> = eligible.iter().copied().filter(|_| (rng.next_f32() as f64) < self.pick_prob).collect();
        if picked.is_empty() && !eligible.is_empty() {
            picked.push(eligible[rng.below(eligible.len())]);
        }
        let mut input_ids = ids.to_vec();
        let picks = picked
            .into_iter()
            .map(|position| {
                let roll = rng.next_f32() as f64;
                let case = if roll < self.mask_prob {
                    MaskCase::Mask
                } else if roll < self.mask_prob + self.random_prob && !vocab.random_ids.is_empty() {
                    MaskCase::Random
                } else {
                    MaskCase::Keep
                };
                input_ids[position] = match case {
                    MaskCase::Mask => vocab.mask_id,
                    MaskCase::Random => vocab.random_ids[rng.below(vocab.random_ids.len())],
                    MaskCase::Keep => ids[position],
                };
                Pick { position, original: ids[position], case }
            })
            .collect();
        Masked { input_ids, picks }
    }
}

/// The sentence-pair objective trained next to MLM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PairTask {
    /// Next-sentence prediction (BERT): is B the sentence after A, or a random one?
    Nsp,
    /// Sentence-order prediction (ALBERT): are A and B in their original order, or swapped?
    Sop,
}

impl PairTask {
    /// Name for the page.
    pub fn label(self) -> &'static str {
        match self {
            PairTask::Nsp => "next-sentence prediction",
            PairTask::Sop => "sentence-order prediction",
        }
    }
}

/// Two segments and whether they are a true pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentencePair {
    /// Segment A.
    pub a: String,
    /// Segment B.
    pub b: String,
    /// 0: B really follows A (NSP) / A and B are in order (SOP). 1: B is a random sentence
    /// (NSP) / the two are swapped (SOP). Hugging Face's `next_sentence_label` convention.
    pub label: usize,
}

/// Pairs of consecutive lines of `sentences` (a corpus in reading order), half of them turned
/// into negatives: for NSP, B replaced by a random other line (never the true next one); for
/// SOP, A and B swapped. Needs at least three lines.
pub fn make_pairs(sentences: &[String], task: PairTask, rng: &mut Rng) -> crate::Result<Vec<SentencePair>> {
    let n = sentences.len();
    if n < 3 {
        return Err(Error::Input(format!("{} needs at least 3 lines of text in order; the corpus has {n}", task.label())));
    }
    Ok((0..n - 1)
        .map(|i| {
            let (a, b) = (&sentences[i], &sentences[i + 1]);
            if rng.next_f32() < 0.5 {
                return SentencePair { a: a.clone(), b: b.clone(), label: 0 };
            }
            match task {
                PairTask::Sop => SentencePair { a: b.clone(), b: a.clone(), label: 1 },
                PairTask::Nsp => {
                    // Any line but A itself and its true successor.
                    let mut j = rng.below(n - 2);
                    if j >= i {
                        j += 2;
                    }
                    SentencePair { a: a.clone(), b: sentences[j].clone(), label: 1 }
                }
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> MaskVocab {
        MaskVocab { mask_id: 4, random_ids: (5..100).collect() }
    }

    #[test]
    fn proportions_match_bert_over_many_draws() {
        let config = MaskingConfig::new();
        let mut rng = Rng::new(1);
        let ids: Vec<u32> = (0..64).map(|i| 10 + i as u32).collect();
        let mut special = vec![false; 64];
        special[0] = true;
        special[63] = true;
        let (mut eligible, mut picked, mut counts) = (0usize, 0usize, [0usize; 3]);
        for _ in 0..5000 {
            let m = config.apply(&ids, &special, &vocab(), &mut rng);
            eligible += 62;
            picked += m.picks.len();
            for p in &m.picks {
                counts[p.case as usize] += 1;
                assert!(!special[p.position], "a special token was picked");
                assert_eq!(p.original, ids[p.position]);
                match p.case {
                    MaskCase::Mask => assert_eq!(m.input_ids[p.position], 4),
                    MaskCase::Keep => assert_eq!(m.input_ids[p.position], ids[p.position]),
                    MaskCase::Random => assert!((5..100).contains(&m.input_ids[p.position])),
                }
            }
            // Positions not picked are untouched.
            for (i, (&x, &y)) in ids.iter().zip(&m.input_ids).enumerate() {
                if !m.picks.iter().any(|p| p.position == i) {
                    assert_eq!(x, y);
                }
            }
        }
        let rate = picked as f64 / eligible as f64;
        assert!((rate - 0.15).abs() < 0.005, "picked {rate}");
        let share = |c: usize| counts[c] as f64 / picked as f64;
        assert!((share(0) - 0.8).abs() < 0.01, "[MASK] share {}", share(0));
        assert!((share(1) - 0.1).abs() < 0.01, "random share {}", share(1));
        assert!((share(2) - 0.1).abs() < 0.01, "kept share {}", share(2));
    }

    #[test]
    fn every_sequence_gets_a_pick_and_specials_never_do() {
        let config = MaskingConfig::new().with_pick_prob(1e-6);
        let mut rng = Rng::new(2);
        let m = config.apply(&[1, 7, 8, 2], &[true, false, false, true], &vocab(), &mut rng);
        assert_eq!(m.picks.len(), 1);
        assert!([1, 2].contains(&m.picks[0].position));
        let none = config.apply(&[1, 2], &[true, true], &vocab(), &mut rng);
        assert!(none.picks.is_empty());
        assert_eq!(none.input_ids, vec![1, 2]);
    }

    #[test]
    fn masking_is_reproducible_and_validated() {
        let config = MaskingConfig::new();
        let ids: Vec<u32> = (10..40).collect();
        let special = vec![false; ids.len()];
        let a = config.apply(&ids, &special, &vocab(), &mut Rng::new(9));
        let b = config.apply(&ids, &special, &vocab(), &mut Rng::new(9));
        assert_eq!(a, b);
        assert!(config.validate().is_ok());
        assert!(MaskingConfig::new().with_mask_prob(0.95).validate().is_err());
        assert!(MaskingConfig::new().with_pick_prob(0.0).validate().is_err());
    }

    fn corpus(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("line {i}")).collect()
    }

    #[test]
    fn nsp_pairs_are_half_true_successors_half_random_lines() {
        let lines = corpus(2001);
        let pairs = make_pairs(&lines, PairTask::Nsp, &mut Rng::new(3)).unwrap();
        assert_eq!(pairs.len(), 2000);
        let mut negatives = 0;
        for (i, p) in pairs.iter().enumerate() {
            assert_eq!(p.a, lines[i]);
            if p.label == 0 {
                assert_eq!(p.b, lines[i + 1]);
            } else {
                negatives += 1;
                assert_ne!(p.b, lines[i + 1], "a negative is the true next line");
                assert_ne!(p.b, lines[i]);
            }
        }
        assert!((negatives as f64 / 2000.0 - 0.5).abs() < 0.04, "{negatives} negatives");
    }

    #[test]
    fn sop_negatives_are_the_same_two_lines_swapped() {
        let lines = corpus(1001);
        let pairs = make_pairs(&lines, PairTask::Sop, &mut Rng::new(4)).unwrap();
        let mut negatives = 0;
        for (i, p) in pairs.iter().enumerate() {
            if p.label == 0 {
                assert_eq!((&p.a, &p.b), (&lines[i], &lines[i + 1]));
            } else {
                negatives += 1;
                assert_eq!((&p.a, &p.b), (&lines[i + 1], &lines[i]));
            }
        }
        assert!((negatives as f64 / 1000.0 - 0.5).abs() < 0.05);
        assert!(make_pairs(&lines[..2], PairTask::Sop, &mut Rng::new(4)).is_err());
    }
}
