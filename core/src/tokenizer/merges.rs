//! The vocabulary trainer's merges, one at a time: which neighbouring pair of pieces it merged at
//! each step, how often that pair stood side by side in the corpus just then, and how the
//! corpus's words are cut after each step.
//!
//! The order is the trainer's own: `tokenizers`' WordPiece trainer is its BPE trainer with `##`
//! before a piece that continues a word, so the BPE trainer is run here with the settings
//! [`BertTokenizer::train_wordpiece`](super::BertTokenizer::train_wordpiece) gives the WordPiece
//! one, and its merges are read in the order it made them. The counts and the cuts come from
//! replaying those merges on the corpus's words, as the trainer applies them (left to right, an
//! occurrence at a time); the tests check that every merged pair is the most frequent one of the
//! replay at its step.

use std::collections::{BTreeSet, HashMap};

use tokenizers::models::bpe::{BPE, BpeTrainer};
use tokenizers::normalizers::bert::BertNormalizer;
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::TokenizerImpl;

use super::trainer::{first_pieces, word_counts, CONTINUES, SPECIALS};
use crate::error::{Error, Result};

/// How many of the most counted pairs each step keeps beside the merged one.
const CANDIDATES: usize = 5;

/// Two neighbouring pieces, as the trainer writes them (`"t"`, `"##h"`).
pub type Pair = (String, String);

/// One merge of the trainer.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeStep {
    /// The pieces merged, left then right.
    pub pair: Pair,
    /// The piece the merge makes (`"th"`; `"##th"` inside a word).
    pub piece: String,
    /// How often the pair stood side by side in the corpus's words just before this merge.
    pub count: u64,
    /// The pairs counted most just before this merge, most first (ties in the pieces' order),
    /// the merged pair among them.
    pub candidates: Vec<(Pair, u64)>,
}

/// The trainer's first merges on a corpus, and its words to replay them on.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeSteps {
    /// The corpus's distinct words after normalising (lower case, accents off) and splitting on
    /// spaces and punctuation, with how often each occurs: most frequent first.
    pub words: Vec<(String, u64)>,
    /// The merges, in the trainer's order.
    pub steps: Vec<MergeStep>,
    /// Whether the trainer stopped before the steps asked for: no pair was left that occurs at
    /// least twice.
    pub exhausted: bool,
}

impl MergeSteps {
    /// Each word of [`words`](Self::words) cut into its pieces after the first `k` merges
    /// (`k = 0`: single characters, `##` on all but the first).
    pub fn pieces_after(&self, k: usize) -> Vec<Vec<String>> {
        let mut words: Vec<Vec<String>> = self.words.iter().map(|(w, _)| characters(w)).collect();
        for step in &self.steps[..k.min(self.steps.len())] {
            for w in &mut words {
                merge_in(w, &step.pair, &step.piece);
            }
        }
        words
    }
}

/// The first `max_steps` merges of the WordPiece trainer on `lines` (a pair must occur at least
/// twice to be merged, as in the page's vocabularies), with BERT's normaliser (`lowercase` as
/// the page's trainer is asked) and pre-tokeniser.
pub fn merge_steps(lines: &[String], max_steps: usize, lowercase: bool) -> Result<MergeSteps> {
    let normalizer = BertNormalizer::new(true, true, None, lowercase);
    let words = word_counts(lines, &normalizer)?;
    if words.is_empty() {
        return Err(Error::Input("there is no text to build a vocabulary from".into()));
    }
    // The trainer stops at a vocabulary size: the specials, every character alone and after
    // `##`, and one piece per merge (a merge can make a piece already there, so allow for more
    // merges than asked and keep the first).
    let mut initial: BTreeSet<String> = SPECIALS.iter().map(|s| s.to_string()).collect();
    for (w, _) in &words {
        initial.extend(characters(w));
    }
    let mut trainer = BpeTrainer::builder()
        .vocab_size(initial.len() + 2 * max_steps)
        .min_frequency(2)
        .show_progress(false)
        .continuing_subword_prefix(CONTINUES.into())
        .special_tokens(first_pieces(&words))
        .build();
    let mut tok = TokenizerImpl::<BPE, BertNormalizer, BertPreTokenizer, tokenizers::processors::bert::BertProcessing, tokenizers::decoders::wordpiece::WordPiece>::new(BPE::default());
    tok.with_normalizer(Some(normalizer)).with_pre_tokenizer(Some(BertPreTokenizer));
    tok.train(&mut trainer, lines.iter()).map_err(|e| Error::Tokenizer(format!("training the vocabulary: {e}")))?;
    let merges = trained_merges(tok.get_model())?;

    // Replay: the words as the trainer holds them, merged step by step.
    let mut split: Vec<Vec<String>> = words.iter().map(|(w, _)| characters(w)).collect();
    let mut steps = Vec::new();
    for pair in merges.into_iter().take(max_steps) {
        let counts = pair_counts(&split, &words);
        let count = counts.get(&pair).copied().unwrap_or(0);
        let mut candidates: Vec<(Pair, u64)> = counts.into_iter().collect();
        candidates.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        candidates.truncate(CANDIDATES);
        if !candidates.iter().any(|(p, _)| *p == pair) {
            candidates.pop();
            candidates.push((pair.clone(), count));
        }
        let piece = joined(&pair);
        for w in &mut split {
            merge_in(w, &pair, &piece);
        }
        steps.push(MergeStep { pair, piece, count, candidates });
    }
    let exhausted = steps.len() < max_steps;
    Ok(MergeSteps { words, steps, exhausted })
}

/// The trained model's merges in the order they were made (its JSON lists them by rank).
fn trained_merges(model: &BPE) -> Result<Vec<Pair>> {
    let json = serde_json::to_value(model).map_err(|e| Error::Tokenizer(e.to_string()))?;
    let merges = json["merges"].as_array().ok_or_else(|| Error::Tokenizer("the trained model lists no merges".into()))?;
    merges
        .iter()
        .map(|m| match m.as_array().map(Vec::as_slice) {
            Some([a, b]) => Ok((a.as_str().unwrap_or_default().to_string(), b.as_str().unwrap_or_default().to_string())),
            _ => Err(Error::Tokenizer(format!("a merge of an unexpected form: {m}"))),
        })
        .collect()
}

/// A word as single characters, `##` before all but the first.
fn characters(word: &str) -> Vec<String> {
    word.chars().enumerate().map(|(i, c)| if i == 0 { c.to_string() } else { format!("{CONTINUES}{c}") }).collect()
}

/// The piece a merge makes: the right piece loses its `##`.
fn joined((a, b): &Pair) -> String {
    format!("{a}{}", b.strip_prefix(CONTINUES).unwrap_or(b))
}

/// Every pair of neighbouring pieces, counted over the words (a word counts as often as it occurs).
fn pair_counts(split: &[Vec<String>], words: &[(String, u64)]) -> HashMap<Pair, u64> {
    let mut counts = HashMap::new();
    for (pieces, (_, n)) in split.iter().zip(words) {
        for w in pieces.windows(2) {
            *counts.entry((w[0].clone(), w[1].clone())).or_default() += n;
        }
    }
    counts
}

/// Merges each occurrence of `pair` in `pieces`, left to right (in "a a a", the first two), as
/// the trainer does.
fn merge_in(pieces: &mut Vec<String>, pair: &Pair, piece: &str) {
    let mut i = 0;
    while i + 1 < pieces.len() {
        if pieces[i] == pair.0 && pieces[i + 1] == pair.1 {
            pieces[i] = piece.to_string();
            pieces.remove(i + 1);
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::BertTokenizer;

    fn lines(text: &[&str]) -> Vec<String> {
        text.iter().map(|s| s.to_string()).collect()
    }

    /// The corpus of lesson 1's trainer test: "th" is the most frequent pair, "qz" the one
    /// Google's likelihood score would pick.
    const CORPUS: [&str; 3] = ["that thin thing", "this the then", "qz qz"];

    #[test]
    fn each_merge_is_the_most_frequent_pair_of_its_moment() {
        // The MLM lab's corpus: simple English where many pairs tie.
        let corpus: Vec<String> = include_str!("../../../public/examples/corpus.txt").lines().take(300).map(str::to_string).collect();
        let m = merge_steps(&corpus, 40, true).unwrap();
        assert_eq!(m.steps.len(), 40);
        let mut split: Vec<Vec<String>> = m.words.iter().map(|(w, _)| characters(w)).collect();
        for (k, step) in m.steps.iter().enumerate() {
            let counts = pair_counts(&split, &m.words);
            let most = counts.values().copied().max().unwrap();
            assert_eq!(step.count, most, "step {k}: {:?} merged at {} while a pair stood {most} times", step.pair, step.count);
            assert_eq!(counts[&step.pair], step.count);
            assert_eq!(step.candidates[0].1, most);
            assert!(step.candidates.iter().any(|(p, _)| *p == step.pair));
            split.iter_mut().for_each(|w| merge_in(w, &step.pair, &step.piece));
            assert_eq!(split, m.pieces_after(k + 1), "the replay after step {}", k + 1);
        }
        // Counts never rise from one step to the next: each takes the most frequent pair left.
        assert!(m.steps.windows(2).all(|s| s[0].count >= s[1].count));
    }

    #[test]
    fn the_merges_make_the_pieces_of_the_wordpiece_trainer() {
        let corpus = lines(&CORPUS);
        let m = merge_steps(&corpus, 10, true).unwrap();
        assert_eq!(m.steps[0].pair, ("t".to_string(), "##h".to_string()));
        assert_eq!((m.steps[0].piece.as_str(), m.steps[0].count), ("th", 6));
        // The corpus runs out of pairs seen twice before ten merges.
        assert!(m.exhausted && m.steps.iter().all(|s| s.count >= 2), "{:?}", m.steps);
        // Every piece made is in the page's vocabulary trained on the same corpus, and the
        // vocabulary learns no piece of several characters that the merges do not make.
        let (_, vocab_txt) = BertTokenizer::train_wordpiece(&corpus, 100, true, 32).unwrap();
        let vocab = String::from_utf8(vocab_txt).unwrap();
        let learned: BTreeSet<&str> = vocab.lines().filter(|p| !p.starts_with('[') && p.trim_start_matches(CONTINUES).chars().count() > 1).collect();
        let made: BTreeSet<&str> = m.steps.iter().map(|s| s.piece.as_str()).collect();
        assert_eq!(learned, made);
    }

    #[test]
    fn words_are_counted_and_cut_as_the_trainer_reads_them() {
        let m = merge_steps(&lines(&["The THE the, thé!"]), 3, true).unwrap();
        assert_eq!(m.words[0], ("the".to_string(), 4));
        assert_eq!(m.words.iter().map(|(_, n)| n).sum::<u64>(), 6, "{:?}", m.words);
        assert_eq!(m.pieces_after(0)[0], ["t", "##h", "##e"]);
        assert_eq!(m.pieces_after(m.steps.len())[0], ["the"]);
        assert!(merge_steps(&lines(&["  ", ""]), 3, true).is_err());
    }

    #[test]
    fn a_run_of_one_letter_merges_left_to_right() {
        let mut w = characters("aaa");
        merge_in(&mut w, &("##a".into(), "##a".into()), "##aa");
        assert_eq!(w, ["a", "##aa"]);
        let mut w = characters("aaaaa");
        merge_in(&mut w, &("##a".into(), "##a".into()), "##aa");
        assert_eq!(w, ["a", "##aa", "##aa"]);
    }
}
