//! Token tagging (named entities, chunks, parts of speech): one label per word, as
//! `transformers.BertForTokenClassification` does it. The model is a [`BertClassifier`] whose
//! features are per token ([`Level::Token`]); this module holds what is particular to tagging:
//!
//! - **words onto pieces**: the words are joined with spaces and tokenized, and each piece is
//!   matched to its word by character offsets. The loss reads each word's first piece and ignores
//!   the rest (the BERT paper's choice), or reads every piece ([`LabelPieces::All`]: a `B-`
//!   word's later pieces are taught `I-`, so one word stays one entity);
//! - **entity-level metrics** with seqeval's conventions (its default, CoNLL-evaluation mode):
//!   an entity is a maximal run `B-X I-X …` (an `I-X` after anything but `X` starts one), and a
//!   predicted entity counts only when its type and both ends are right;
//! - predictions of a text as words with tags and entity spans.
//!
//! [`BertClassifier`]: super::classification::BertClassifier
//! [`Level::Token`]: super::classification::Level::Token

use serde::{Deserialize, Serialize};

use burn::prelude::*;

use crate::bert::model::rows_by_length;
use crate::data::split_words;
use crate::error::Error;
use crate::tasks::classification::BertClassifier;
use crate::tasks::metrics::{ClassMetrics, argmax, softmax};
use crate::tokenizer::{BertTokenizer, Encoded};

/// Which pieces of a word the loss reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum LabelPieces {
    /// The first piece of each word; the others are ignored (BERT paper, §4.3).
    #[default]
    First,
    /// Every piece: the first with the word's tag, the others with its `I-` form.
    All,
}

/// One token the loss reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenTarget {
    /// Position of the token in its encoding (specials included).
    pub position: usize,
    /// Tag id.
    pub tag: usize,
    /// Whether it is its word's first piece: the one a word's prediction and the metrics read.
    pub word_start: bool,
}

/// Words joined by single spaces, and each word's character range in the result.
pub fn join_words<S: AsRef<str>>(words: &[S]) -> (String, Vec<(usize, usize)>) {
    let mut text = String::new();
    let mut spans = Vec::with_capacity(words.len());
    let mut at = 0;
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            text.push(' ');
            at += 1;
        }
        let n = w.as_ref().chars().count();
        text.push_str(w.as_ref());
        spans.push((at, at + n));
        at += n;
    }
    (text, spans)
}

/// For each token of `encoded`, the word (index into `spans`, character ranges in the encoded
/// text) its first character falls in; `None` for special tokens and tokens of no word.
pub fn token_words(encoded: &Encoded, spans: &[(usize, usize)]) -> Vec<Option<usize>> {
    let mut word = 0;
    encoded
        .tokens
        .iter()
        .map(|t| {
            if t.special || t.offsets.0 == t.offsets.1 {
                return None;
            }
            // Tokens come in text order: move forward to the word holding this token's start.
            while word < spans.len() && spans[word].1 <= t.offsets.0 {
                word += 1;
            }
            (word < spans.len() && spans[word].0 <= t.offsets.0).then_some(word)
        })
        .collect()
}

/// Each word's first piece: its token position, `None` for a word truncated away.
pub fn first_pieces(words: &[Option<usize>], num_words: usize) -> Vec<Option<usize>> {
    let mut first = vec![None; num_words];
    for (position, w) in words.iter().enumerate() {
        if let Some(w) = *w {
            first[w].get_or_insert(position);
        }
    }
    first
}

/// The loss's targets for an encoded sentence: `word_tags` are the words' tag ids into `tags`,
/// `words` from [`token_words`]. Returns the targets in token order.
pub fn targets(words: &[Option<usize>], word_tags: &[usize], tags: &[String], pieces: LabelPieces) -> Vec<TokenTarget> {
    let inside = |tag: usize| {
        tags[tag]
            .strip_prefix("B-")
            .and_then(|kind| tags.iter().position(|t| t.strip_prefix("I-") == Some(kind)))
            .unwrap_or(tag)
    };
    let mut seen = vec![false; word_tags.len()];
    let mut out = Vec::new();
    for (position, w) in words.iter().enumerate() {
        let Some(w) = *w else { continue };
        let word_start = !std::mem::replace(&mut seen[w], true);
        match (word_start, pieces) {
            (true, _) => out.push(TokenTarget { position, tag: word_tags[w], word_start }),
            (false, LabelPieces::All) => out.push(TokenTarget { position, tag: inside(word_tags[w]), word_start }),
            (false, LabelPieces::First) => {}
        }
    }
    out
}

/// A sentence's words, tokenized for tagging: the encoding (the words joined by spaces), the loss's
/// targets from `word_tags` (tag ids into `tags`, one per word), and how many words the model's
/// length cut off (they are neither learned nor scored).
pub fn encode_words<S: AsRef<str>>(
    tokenizer: &BertTokenizer,
    words: &[S],
    word_tags: &[usize],
    tags: &[String],
    pieces: LabelPieces,
) -> crate::Result<(Encoded, Vec<TokenTarget>, usize)> {
    let (text, spans) = join_words(words);
    let encoded = tokenizer.encode(&text)?;
    let owners = token_words(&encoded, &spans);
    let kept = first_pieces(&owners, words.len()).iter().filter(|f| f.is_some()).count();
    Ok((encoded, targets(&owners, word_tags, tags, pieces), words.len() - kept))
}

/// An entity: its type and its words `start..end`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Entity {
    /// Type (`PER`, `LOC`, …).
    pub kind: String,
    /// First word.
    pub start: usize,
    /// One past the last word.
    pub end: usize,
}

fn split_tag(tag: &str) -> (char, &str) {
    match tag.split_once('-') {
        Some((p, kind)) if p.len() == 1 => (p.chars().next().unwrap_or('O'), kind),
        _ if tag == "O" => ('O', ""),
        // A plain tag (no scheme prefix): each run of it is one chunk.
        _ => ('I', tag),
    }
}

/// The entities of one sentence's tags, as seqeval's default mode reads them (IOB2, IOB1 and
/// BIOES prefixes alike).
pub fn entities<S: AsRef<str>>(tags: &[S]) -> Vec<Entity> {
    let mut out = Vec::new();
    let (mut prev, mut prev_kind) = ('O', "");
    let mut begin = 0;
    for (i, tag) in tags.iter().map(AsRef::as_ref).chain(std::iter::once("O")).enumerate() {
        let (p, kind) = split_tag(tag);
        let ends = matches!(prev, 'E' | 'S')
            || (matches!(prev, 'B' | 'I') && matches!(p, 'B' | 'S' | 'O'))
            || (prev != 'O' && prev_kind != kind);
        if ends && prev != 'O' {
            out.push(Entity { kind: prev_kind.to_string(), start: begin, end: i });
        }
        let starts = matches!(p, 'B' | 'S')
            || (matches!(prev, 'E' | 'S' | 'O') && matches!(p, 'E' | 'I'))
            || (p != 'O' && prev_kind != kind);
        if starts {
            begin = i;
        }
        (prev, prev_kind) = (p, kind);
    }
    out
}

/// Entity-level precision, recall and F1 over sentences (seqeval's `classification_report`, with
/// zero for a ratio whose denominator is zero).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntityMetrics {
    /// Micro-averaged over every entity: correct / predicted.
    pub precision: f32,
    /// Correct / true entities.
    pub recall: f32,
    /// Harmonic mean of the two.
    pub f1: f32,
    /// Per entity type, sorted by type; `support` is the number of true entities.
    pub per_type: Vec<ClassMetrics>,
    /// Entities predicted, in all.
    pub predicted: usize,
    /// True entities, in all.
    pub support: usize,
}

impl EntityMetrics {
    /// Compares each sentence's predicted tags with its true tags (pairs of equal length).
    pub fn new<S: AsRef<str>, T: AsRef<str>>(truth: &[Vec<S>], pred: &[Vec<T>]) -> Self {
        use std::collections::{BTreeMap, BTreeSet};
        let mut counts: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new(); // (correct, predicted, true)
        for (t, p) in truth.iter().zip(pred) {
            let t: BTreeSet<Entity> = entities(t).into_iter().collect();
            let p: BTreeSet<Entity> = entities(p).into_iter().collect();
            for e in &t {
                counts.entry(e.kind.clone()).or_default().2 += 1;
            }
            for e in &p {
                let c = counts.entry(e.kind.clone()).or_default();
                c.1 += 1;
                c.0 += usize::from(t.contains(e));
            }
        }
        let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f32 / b as f32 };
        let f1 = |p: f32, r: f32| if p + r > 0.0 { 2.0 * p * r / (p + r) } else { 0.0 };
        let per_type = counts
            .iter()
            .map(|(kind, &(c, p, t))| {
                let (precision, recall) = (ratio(c, p), ratio(c, t));
                ClassMetrics { label: kind.clone(), precision, recall, f1: f1(precision, recall), support: t }
            })
            .collect();
        let (c, p, t) = counts.values().fold((0, 0, 0), |a, x| (a.0 + x.0, a.1 + x.1, a.2 + x.2));
        let (precision, recall) = (ratio(c, p), ratio(c, t));
        EntityMetrics { precision, recall, f1: f1(precision, recall), per_type, predicted: p, support: t }
    }
}

/// A word of a tagged text, as predicted.
#[derive(Debug, Clone, PartialEq)]
pub struct TaggedWord {
    /// The word.
    pub word: String,
    /// Its character range in the text it came from.
    pub span: (usize, usize),
    /// The predicted tag (`None` for a word cut off by the model's length).
    pub tag: Option<String>,
    /// Every tag's probability at the word's first piece, in tag-id order.
    pub probs: Vec<f32>,
}

/// Each word's tag probabilities (read at its first piece; `None` for a word the model's length
/// cut off), for many sentences of words. Batches of `batch_size`, shortest first.
pub async fn predict_words<S: AsRef<str>>(
    model: &BertClassifier,
    tokenizer: &BertTokenizer,
    sentences: &[Vec<S>],
    batch_size: usize,
    device: &Device,
) -> crate::Result<Vec<Vec<Option<Vec<f32>>>>> {
    let k = model.num_labels();
    let mut encoded = Vec::with_capacity(sentences.len());
    let mut firsts = Vec::with_capacity(sentences.len());
    for words in sentences {
        let (text, spans) = join_words(words);
        let e = tokenizer.encode(&text)?;
        firsts.push(first_pieces(&token_words(&e, &spans), words.len()));
        encoded.push(e);
    }
    let rows = rows_by_length(&encoded, tokenizer.pad_id, batch_size, device, |input| {
        let logits = model.forward_tokens(input)?;
        let [batch, seq, k] = logits.dims();
        Ok(logits.reshape([batch, seq * k]))
    })
    .await?;
    Ok(rows
        .iter()
        .zip(firsts)
        .map(|(row, first)| first.iter().map(|p| p.map(|p| softmax(&row[p * k..(p + 1) * k]))).collect())
        .collect())
}

/// Tags a typed text: its words (see [`split_words`]), each with its predicted tag and every
/// tag's probability, in order.
pub async fn tag_text(model: &BertClassifier, tokenizer: &BertTokenizer, tags: &[String], text: &str, device: &Device) -> crate::Result<Vec<TaggedWord>> {
    let spans = split_words(text, &Default::default());
    if spans.is_empty() {
        return Err(Error::Input("the text is empty".into()));
    }
    let chars: Vec<char> = text.chars().collect();
    let words: Vec<String> = spans.iter().map(|&(a, b)| chars[a..b].iter().collect()).collect();
    let probs = predict_words(model, tokenizer, std::slice::from_ref(&words), 1, device).await?.remove(0);
    Ok(words
        .into_iter()
        .zip(spans)
        .zip(probs)
        .map(|((word, span), probs)| {
            let tag = probs.as_ref().map(|p| tags.get(argmax(p)).cloned().unwrap_or_default());
            TaggedWord { word, span, tag, probs: probs.unwrap_or_default() }
        })
        .collect())
}

/// What a tagger would say reading each layer: its head applied to every layer's hidden states
/// (the embeddings, then each layer), read at each word's first piece. The last row is the
/// tagger's own answer; the rows before show how far into the encoder each word's tag is
/// already there. Only for a head on the last layer (one layer's width).
#[derive(Debug, Clone, PartialEq)]
pub struct TagsByLayer {
    /// The text's words (see [`split_words`]).
    pub words: Vec<String>,
    /// `probs[layer][word]`: every tag's probability (empty for a word cut off by the length).
    pub probs: Vec<Vec<Vec<f32>>>,
}

/// [`TagsByLayer`] of a typed text.
pub async fn tags_by_layer(model: &BertClassifier, tokenizer: &BertTokenizer, text: &str, device: &Device) -> crate::Result<TagsByLayer> {
    if model.spec.layers != crate::tasks::classification::FeatureLayers::Last {
        return Err(Error::Input(format!("this tagger reads {}: its head does not fit one layer's states", model.spec.layers.label())));
    }
    let spans = split_words(text, &Default::default());
    if spans.is_empty() {
        return Err(Error::Input("the text is empty".into()));
    }
    let chars: Vec<char> = text.chars().collect();
    let words: Vec<String> = spans.iter().map(|&(a, b)| chars[a..b].iter().collect()).collect();
    let (joined, word_spans) = join_words(&words);
    let encoded = tokenizer.encode(&joined)?;
    let first = first_pieces(&token_words(&encoded, &word_spans), words.len());
    let batch = crate::tokenizer::Batch::from_encoded(std::slice::from_ref(&encoded), tokenizer.pad_id);
    let options = crate::bert::model::ForwardOptions { hidden_states: true, ..Default::default() };
    let output = model.bert.forward(crate::bert::model::BertInput::from_batch(&batch, device), options);
    let k = model.num_labels();
    let mut probs = Vec::with_capacity(output.hidden_states.len());
    for state in output.hidden_states {
        let [_, seq, hidden] = state.dims();
        let logits = crate::nn::read_f32(model.head.forward(state.reshape([seq, hidden]))).await?;
        probs.push(first.iter().map(|p| p.map(|p| softmax(&logits[p * k..(p + 1) * k])).unwrap_or_default()).collect());
    }
    Ok(TagsByLayer { words, probs })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::tiny_bert;

    fn owned(tags: &[&str]) -> Vec<String> {
        tags.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn words_map_to_their_pieces_and_the_loss_reads_first_or_all() {
        let tokenizer = tiny_bert().0.tokenizer;
        let words = ["banks", "loans", "money"];
        let (text, spans) = join_words(&words);
        assert_eq!(spans, [(0, 5), (6, 11), (12, 17)]);
        let encoded = tokenizer.encode(&text).unwrap();
        let w = token_words(&encoded, &spans);
        assert_eq!(w.first(), Some(&None), "[CLS] belongs to no word");
        assert_eq!(w.last(), Some(&None), "[SEP] belongs to no word");
        let tags = owned(&["O", "B-X", "I-X"]);
        let first = targets(&w, &[1, 2, 0], &tags, LabelPieces::First);
        assert_eq!(first.len(), 3);
        assert!(first.iter().all(|t| t.word_start));
        assert_eq!(first.iter().map(|t| t.tag).collect::<Vec<_>>(), [1, 2, 0]);
        let starts = first_pieces(&w, 3);
        assert_eq!(starts.iter().map(|s| s.unwrap()).collect::<Vec<_>>(), first.iter().map(|t| t.position).collect::<Vec<_>>());
        let all = targets(&w, &[1, 2, 0], &tags, LabelPieces::All);
        let pieces = w.iter().filter(|x| x.is_some()).count();
        assert_eq!(pieces, 5, "bank ##s loan ##s money");
        assert_eq!(all.len(), pieces);
        // A B- word's later pieces learn I-.
        for t in all.iter().filter(|t| !t.word_start) {
            let word = w[t.position].unwrap();
            assert_eq!(t.tag, if word == 0 { 2 } else { [1, 2, 0][word] }, "{t:?}");
        }
    }

    #[test]
    fn entities_follow_seqeval_on_clean_and_broken_sequences() {
        let e = |tags: &[&str]| entities(tags).into_iter().map(|e| (e.kind, e.start, e.end)).collect::<Vec<_>>();
        let s = |k: &str, a, b| (k.to_string(), a, b);
        assert_eq!(e(&["B-PER", "I-PER", "O", "B-LOC"]), [s("PER", 0, 2), s("LOC", 3, 4)]);
        // An I- after O starts an entity; a type change ends one; B- B- are two.
        assert_eq!(e(&["O", "I-PER", "I-LOC", "B-LOC", "B-LOC"]), [s("PER", 1, 2), s("LOC", 2, 3), s("LOC", 3, 4), s("LOC", 4, 5)]);
        assert_eq!(e(&["S-PER", "B-LOC", "E-LOC", "O"]), [s("PER", 0, 1), s("LOC", 1, 3)]);
        assert!(e(&["O", "O"]).is_empty());
    }
}
