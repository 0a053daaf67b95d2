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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskCase {
    /// Replaced by `[MASK]`.
    Mask,
    /// Replaced by a random vocabulary token.
    Random,
    /// Left as it was (the model must still predict it).
    Keep,
}

/// One picked position: the loss is computed here and only here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pick {
    /// Index in the sequence.
    pub position: usize,
    /// The token id that was there (the prediction target).
    pub original: u32,
    /// What the input shows instead.
    pub case: MaskCase,
}

/// A sequence after masking.
#[derive(Debug, Clone, PartialEq, Eq)]
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentencePair {
    /// Segment A.
    pub a: String,
    /// Segment B.
    pub b: String,
    /// 0: B really follows A (NSP) / A and B are in order (SOP). 1: B is a random sentence
    /// (NSP) / the two are swapped (SOP). Hugging Face's `next_sentence_label` convention.
    pub label: usize,
}

/// A corpus's documents: its lines in reading order, a blank line ending a document (the
/// format of BERT's `create_pretraining_data.py`). Lines are trimmed; no document is empty.
pub fn documents(lines: &[String]) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new()];
    for line in lines.iter().map(|l| l.trim()) {
        match (line.is_empty(), out.last_mut()) {
            (true, Some(last)) if !last.is_empty() => out.push(Vec::new()),
            (false, Some(last)) => last.push(line.to_string()),
            _ => {}
        }
    }
    out.retain(|d| !d.is_empty());
    out
}

/// How many pairs [`make_pairs`] makes from `documents`: one per two consecutive sentences of
/// the same document.
pub fn pair_count(documents: &[Vec<String>]) -> usize {
    documents.iter().map(|d| d.len().saturating_sub(1)).sum()
}

/// Pairs of consecutive sentences of each document (a corpus in reading order, split by
/// [`documents`]), half of them turned into negatives. For SOP, A and B swapped. For NSP, B
/// replaced by a random sentence of another document, as BERT drew it (so a negative is usually
/// about something else); only a corpus of one document takes it from the same document (never
/// A itself or its true successor), which [`nsp_negatives_from_other_documents`] tells. Needs
/// at least three sentences and one document of two.
pub fn make_pairs(documents: &[Vec<String>], task: PairTask, rng: &mut Rng) -> crate::Result<Vec<SentencePair>> {
    let n: usize = documents.iter().map(Vec::len).sum();
    if n < 3 || pair_count(documents) == 0 {
        return Err(Error::Input(format!(
            "{} needs at least 3 sentences in order, two of them in the same document; the corpus has {n} in {} document(s)",
            task.label(),
            documents.len()
        )));
    }
    let other_documents = nsp_negatives_from_other_documents(documents);
    let mut pairs = Vec::with_capacity(pair_count(documents));
    for (d, doc) in documents.iter().enumerate() {
        for i in 0..doc.len().saturating_sub(1) {
            let (a, b) = (&doc[i], &doc[i + 1]);
            if rng.next_f32() < 0.5 {
                pairs.push(SentencePair { a: a.clone(), b: b.clone(), label: 0 });
                continue;
            }
            let pair = match task {
                PairTask::Sop => SentencePair { a: b.clone(), b: a.clone(), label: 1 },
                PairTask::Nsp if other_documents => {
                    let mut e = rng.below(documents.len() - 1);
                    if e >= d {
                        e += 1;
                    }
                    let other = &documents[e];
                    SentencePair { a: a.clone(), b: other[rng.below(other.len())].clone(), label: 1 }
                }
                PairTask::Nsp => {
                    // One document of at least three sentences: any but A and its successor.
                    let mut j = rng.below(doc.len() - 2);
                    if j >= i {
                        j += 2;
                    }
                    SentencePair { a: a.clone(), b: doc[j].clone(), label: 1 }
                }
            };
            pairs.push(pair);
        }
    }
    Ok(pairs)
}

/// Whether [`make_pairs`] draws NSP negatives from other documents (the corpus has more than
/// one) or, for a single document, from elsewhere in it.
pub fn nsp_negatives_from_other_documents(documents: &[Vec<String>]) -> bool {
    documents.len() > 1
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

    fn corpus(n: usize) -> Vec<Vec<String>> {
        vec![(0..n).map(|i| format!("line {i}")).collect()]
    }

    #[test]
    fn documents_end_at_blank_lines() {
        let lines: Vec<String> = ["", "a.", " b. ", "", "", "c.", "  ", "d.", ""].iter().map(|s| s.to_string()).collect();
        assert_eq!(documents(&lines), vec![vec!["a.".to_string(), "b.".into()], vec!["c.".into()], vec!["d.".into()]]);
        assert_eq!(pair_count(&documents(&lines)), 1);
        assert!(documents(&[]).is_empty());
    }

    #[test]
    fn nsp_negatives_come_from_another_document_as_in_bert() {
        let docs: Vec<Vec<String>> = (0..4).map(|d| (0..50).map(|i| format!("doc {d} line {i}")).collect()).collect();
        let pairs = make_pairs(&docs, PairTask::Nsp, &mut Rng::new(5)).unwrap();
        assert_eq!(pairs.len(), 4 * 49);
        let doc_of = |s: &str| s.split(' ').nth(1).unwrap().to_string();
        let mut negatives = 0;
        for p in &pairs {
            if p.label == 0 {
                assert_eq!(doc_of(&p.a), doc_of(&p.b), "a true pair crosses documents");
            } else {
                negatives += 1;
                assert_ne!(doc_of(&p.a), doc_of(&p.b), "a negative from the same document: {p:?}");
            }
        }
        assert!((negatives as f64 / pairs.len() as f64 - 0.5).abs() < 0.1, "{negatives} negatives");
        // No pair spans the end of one document and the start of the next.
        assert!(pairs.iter().all(|p| p.label == 1 || !(p.a.ends_with("line 49") && p.b.ends_with("line 0"))));
        assert!(nsp_negatives_from_other_documents(&docs));
    }

    #[test]
    fn a_single_document_gives_nsp_negatives_from_elsewhere_in_it() {
        let lines = corpus(2001);
        assert!(!nsp_negatives_from_other_documents(&lines));
        let pairs = make_pairs(&lines, PairTask::Nsp, &mut Rng::new(3)).unwrap();
        assert_eq!(pairs.len(), 2000);
        let mut negatives = 0;
        for (i, p) in pairs.iter().enumerate() {
            assert_eq!(p.a, lines[0][i]);
            if p.label == 0 {
                assert_eq!(p.b, lines[0][i + 1]);
            } else {
                negatives += 1;
                assert_ne!(p.b, lines[0][i + 1], "a negative is the true next line");
                assert_ne!(p.b, lines[0][i]);
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
                assert_eq!((&p.a, &p.b), (&lines[0][i], &lines[0][i + 1]));
            } else {
                negatives += 1;
                assert_eq!((&p.a, &p.b), (&lines[0][i + 1], &lines[0][i]));
            }
        }
        assert!((negatives as f64 / 1000.0 - 0.5).abs() < 0.05);
        assert!(make_pairs(&[lines[0][..2].to_vec()], PairTask::Sop, &mut Rng::new(4)).is_err());
        assert!(make_pairs(&[vec!["a.".into()], vec!["b.".into()], vec!["c.".into()]], PairTask::Nsp, &mut Rng::new(4)).is_err());
    }
}
