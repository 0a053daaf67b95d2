//! What the page's vocabulary trainers share: the corpus's words as `tokenizers`' trainer counts
//! them, and the pieces it is given first.
//!
//! `tokenizers`' WordPiece trainer (its BPE trainer with `##` before a piece that continues a
//! word) breaks a tie between equally frequent pairs by the pieces' ids, and gives a `##`
//! piece its id in the order it meets the words in a hash map whose seed changes from run to
//! run. Left alone, two trainings on the same corpus can merge different pairs and end with
//! different vocabularies. Giving it every `##` piece of the corpus first, sorted, after the
//! specials, fixes those ids, so the same corpus and size always train the same vocabulary.

use std::collections::{BTreeMap, BTreeSet};

use tokenizers::normalizers::bert::BertNormalizer;
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::{AddedToken, NormalizedString, Normalizer, OffsetReferential, OffsetType, PreTokenizedString, PreTokenizer};

use crate::error::{Error, Result};

/// What marks a piece that continues a word, as in BERT's vocabularies.
pub(super) const CONTINUES: &str = "##";
/// The specials the page's trainer adds first (they take vocabulary slots, never merges):
/// `[PAD]` 0, `[UNK]` 1, `[CLS]` 2, `[SEP]` 3, `[MASK]` 4.
pub(super) const SPECIALS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

/// The corpus's distinct words after BERT's normaliser (lower case as asked, accents off) and
/// pre-tokeniser (spaces and punctuation), with how often each occurs: most frequent first,
/// ties alphabetically.
pub(super) fn word_counts(lines: &[String], normalizer: &BertNormalizer) -> Result<Vec<(String, u64)>> {
    let mut counts = BTreeMap::<String, u64>::new();
    for line in lines {
        let mut normalized = NormalizedString::from(line.as_str());
        normalizer.normalize(&mut normalized).map_err(|e| Error::Tokenizer(e.to_string()))?;
        let mut pre = PreTokenizedString::from(normalized);
        BertPreTokenizer.pre_tokenize(&mut pre).map_err(|e| Error::Tokenizer(e.to_string()))?;
        for (word, _, _) in pre.get_splits(OffsetReferential::Original, OffsetType::Byte) {
            *counts.entry(word.to_string()).or_default() += 1;
        }
    }
    let mut words: Vec<(String, u64)> = counts.into_iter().collect();
    words.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(words)
}

/// The pieces the trainer is given before it reads the corpus: the specials, then every
/// character that continues a word of `words`, with `##`, in character order (see the module's
/// note on why).
pub(super) fn first_pieces(words: &[(String, u64)]) -> Vec<AddedToken> {
    let continuing: BTreeSet<char> = words.iter().flat_map(|(w, _)| w.chars().skip(1)).collect();
    SPECIALS
        .iter()
        .map(|s| s.to_string())
        .chain(continuing.into_iter().map(|c| format!("{CONTINUES}{c}")))
        .map(|p| AddedToken::from(p, true))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuing_characters_follow_the_specials_in_order() {
        let normalizer = BertNormalizer::new(true, true, None, true);
        let words = word_counts(&["Bca, ab!".to_string(), "ba Ba".to_string()], &normalizer).unwrap();
        let expected: Vec<(String, u64)> = [("ba", 2), ("!", 1), (",", 1), ("ab", 1), ("bca", 1)].map(|(w, n)| (w.to_string(), n)).to_vec();
        assert_eq!(words, expected);
        let pieces: Vec<String> = first_pieces(&words).into_iter().map(|t| t.content).collect();
        assert_eq!(pieces, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "##a", "##b", "##c"]);
    }
}
