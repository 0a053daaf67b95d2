//! Tokenization through the `tokenizers` crate (BERT's WordPiece, RoBERTa's byte-level BPE,
//! XLM-RoBERTa's and CamemBERT's SentencePiece Unigram: any `tokenizer.json`), and padded batches
//! for the model. [`merges`]: the vocabulary trainer's merges one at a time.

use tokenizers::decoders::wordpiece::WordPiece as WordPieceDecoder;
use tokenizers::models::wordpiece::WordPiece;
use tokenizers::normalizers::bert::BertNormalizer;
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::pre_tokenizers::metaspace::PrependScheme;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::whitespace::WhitespaceSplit;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::processors::bert::BertProcessing;
use tokenizers::{EncodeInput, Encoding, PostProcessor, Tokenizer, TruncationParams, TruncationStrategy};

use crate::error::{Error, Result};

pub mod bpe_files;
pub mod merges;
pub mod sentencepiece;
mod trainer;

/// One token of an encoded text, with everything the page shows about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// The vocabulary piece: WordPiece's `##` marks a continuation (`"play"`, `"##ing"`,
    /// `"[CLS]"`), byte-level BPE's `Ġ` and SentencePiece's `▁` a word's start (`"Ġplay"`,
    /// `"▁play"`).
    pub piece: String,
    /// Vocabulary id.
    pub id: u32,
    /// Segment: 0 for sentence A (and `[CLS]`), 1 for sentence B.
    pub type_id: u32,
    /// Character range `start..end` in the text it came from (`0..0` for special tokens).
    pub offsets: (usize, usize),
    /// `[CLS]`, `[SEP]`, ...: added by the tokenizer, not from the text.
    pub special: bool,
}

/// A text (or pair) after tokenization.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    /// Tokens, specials included, in model order.
    pub tokens: Vec<Token>,
    /// The token count before truncation, when the input was longer than the model accepts.
    pub truncated_from: Option<usize>,
}

impl Encoded {
    /// The ids, in order.
    pub fn ids(&self) -> Vec<u32> {
        self.tokens.iter().map(|t| t.id).collect()
    }

    /// The segment ids, in order.
    pub fn type_ids(&self) -> Vec<u32> {
        self.tokens.iter().map(|t| t.type_id).collect()
    }

    fn from_encoding(e: &Encoding, truncated_from: Option<usize>) -> Self {
        let specials = e.get_special_tokens_mask();
        let tokens = e
            .get_tokens()
            .iter()
            .enumerate()
            .map(|(i, piece)| Token {
                piece: piece.clone(),
                id: e.get_ids()[i],
                type_id: e.get_type_ids()[i],
                offsets: e.get_offsets()[i],
                special: specials[i] == 1,
            })
            .collect();
        Self { tokens, truncated_from }
    }
}

/// A padded batch of encodings, ready to become tensors (row-major `[batch_size, seq_len]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// Number of rows.
    pub batch_size: usize,
    /// Length of every row (the longest encoding).
    pub seq_len: usize,
    /// Token ids, padded with `[PAD]`.
    pub input_ids: Vec<i64>,
    /// Segment ids, padded with 0.
    pub token_type_ids: Vec<i64>,
    /// 1 for real tokens, 0 for padding.
    pub attention_mask: Vec<i64>,
}

impl Batch {
    /// Pads rows of ids (and their segment ids) to the longest row.
    pub fn from_rows(ids: &[Vec<u32>], type_ids: &[Vec<u32>], pad_id: u32) -> Self {
        let batch_size = ids.len();
        let seq_len = ids.iter().map(Vec::len).max().unwrap_or(0);
        let n = batch_size * seq_len;
        let mut batch = Batch {
            batch_size,
            seq_len,
            input_ids: vec![pad_id as i64; n],
            token_type_ids: vec![0; n],
            attention_mask: vec![0; n],
        };
        for (row, (ids, types)) in ids.iter().zip(type_ids).enumerate() {
            for (col, (&id, &ty)) in ids.iter().zip(types).enumerate() {
                let at = row * seq_len + col;
                batch.input_ids[at] = id as i64;
                batch.token_type_ids[at] = ty as i64;
                batch.attention_mask[at] = 1;
            }
        }
        batch
    }

    /// Pads encodings to the longest one.
    pub fn from_encoded(encoded: &[Encoded], pad_id: u32) -> Self {
        let ids: Vec<_> = encoded.iter().map(Encoded::ids).collect();
        let types: Vec<_> = encoded.iter().map(Encoded::type_ids).collect();
        Self::from_rows(&ids, &types, pad_id)
    }
}

/// The special tokens of each family: BERT's, then RoBERTa's spelling.
const SPECIALS: [(&str, [&str; 2]); 5] = [
    ("padding", ["[PAD]", "<pad>"]),
    ("start", ["[CLS]", "<s>"]),
    ("separator", ["[SEP]", "</s>"]),
    ("mask", ["[MASK]", "<mask>"]),
    ("unknown", ["[UNK]", "<unk>"]),
];

/// A BERT-family tokenizer with `[CLS] a [SEP] (b [SEP])` post-processing (RoBERTa:
/// `<s> a </s></s> b </s>`). The special tokens are named by their BERT roles whatever the
/// family spells them.
#[derive(Clone)]
pub struct BertTokenizer {
    inner: Tokenizer,
    max_len: usize,
    /// Id of `[PAD]` (`<pad>`).
    pub pad_id: u32,
    /// Id of `[CLS]` (`<s>`).
    pub cls_id: u32,
    /// Id of `[SEP]` (`</s>`).
    pub sep_id: u32,
    /// Id of `[MASK]` (`<mask>`).
    pub mask_id: u32,
    /// Id of `[UNK]` (`<unk>`).
    pub unk_id: u32,
}

impl std::fmt::Debug for BertTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BertTokenizer")
            .field("vocab_size", &self.vocab_size())
            .field("max_len", &self.max_len)
            .finish()
    }
}

/// The options of BERT's normaliser that a `tokenizer_config.json` sets.
#[derive(Debug, Clone, Copy)]
struct WordPieceOptions {
    lowercase: bool,
    /// `None`: strip accents exactly when lowercasing.
    strip_accents: Option<bool>,
    chinese_chars: bool,
}

impl BertTokenizer {
    /// Loads a `tokenizer.json`. Its own truncation and padding settings (all-MiniLM-L6-v2
    /// ships 128-token truncation and fixed padding) are replaced: sequences are truncated at
    /// `max_len` (the model's `max_position_embeddings`), and batches are padded by [`Batch`].
    ///
    /// A SentencePiece tokenizer (XLM-RoBERTa, CamemBERT) is split on whitespace before its
    /// `Metaspace` step, as `transformers` builds it: see [`split_on_whitespace_first`].
    pub fn from_tokenizer_json(bytes: &[u8], max_len: usize) -> Result<Self> {
        let mut inner = Tokenizer::from_bytes(bytes).map_err(|e| Error::Tokenizer(format!("tokenizer.json: {e}")))?;
        split_on_whitespace_first(&mut inner);
        Self::wrap(inner, max_len)
    }

    /// Builds the tokenizer of a model that ships `vocab.txt` without `tokenizer.json`, with the
    /// options its `tokenizer_config.json` gives as `transformers`' `BertTokenizer` reads them:
    /// `do_lower_case` (true when absent), `strip_accents` (follows lowercasing when absent),
    /// `tokenize_chinese_chars` (true when absent).
    pub fn from_vocab_files(vocab: &[u8], tokenizer_config: Option<&[u8]>, max_len: usize) -> Result<Self> {
        let config: serde_json::Value = match tokenizer_config {
            Some(bytes) => serde_json::from_slice(bytes).map_err(|e| Error::Tokenizer(format!("tokenizer_config.json: {e}")))?,
            None => serde_json::Value::Null,
        };
        let flag = |key: &str| config.get(key).and_then(serde_json::Value::as_bool);
        let lowercase = flag("do_lower_case").unwrap_or(true);
        let options = WordPieceOptions {
            lowercase,
            strip_accents: flag("strip_accents"),
            chinese_chars: flag("tokenize_chinese_chars").unwrap_or(true),
        };
        Self::from_vocab(vocab, options, max_len)
    }

    /// Builds the standard BERT pipeline from a `vocab.txt` (one piece per line, id = line
    /// number), lowercasing if the model is uncased.
    pub fn from_vocab_txt(bytes: &[u8], lowercase: bool, max_len: usize) -> Result<Self> {
        Self::from_vocab(bytes, WordPieceOptions { lowercase, strip_accents: None, chinese_chars: true }, max_len)
    }

    fn from_vocab(bytes: &[u8], options: WordPieceOptions, max_len: usize) -> Result<Self> {
        let text = std::str::from_utf8(bytes)
            .map_err(|_| Error::Tokenizer("vocab.txt is not UTF-8 text".into()))?;
        let vocab: ahash::AHashMap<String, u32> = text
            .lines()
            .enumerate()
            .map(|(i, piece)| (piece.trim_end_matches('\r').to_string(), i as u32))
            .collect();
        let id = |piece: &str| {
            vocab
                .get(piece)
                .copied()
                .ok_or_else(|| Error::Tokenizer(format!("vocab.txt has no {piece} token")))
        };
        let (cls, sep) = (id("[CLS]")?, id("[SEP]")?);
        id("[UNK]")?;
        let present: Vec<&str> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"].into_iter().filter(|p| vocab.contains_key(*p)).collect();
        let model = WordPiece::builder()
            .vocab(vocab)
            .unk_token("[UNK]".into())
            .build()
            .map_err(|e| Error::Tokenizer(e.to_string()))?;
        let mut inner = Tokenizer::new(model);
        inner
            .with_normalizer(Some(BertNormalizer::new(true, options.chinese_chars, options.strip_accents, options.lowercase)))
            .with_pre_tokenizer(Some(BertPreTokenizer))
            .with_post_processor(Some(BertProcessing::new(("[SEP]".into(), sep), ("[CLS]".into(), cls))))
            .with_decoder(Some(WordPieceDecoder::default()));
        // As Hugging Face's BertTokenizer: special tokens typed in the text stay whole (so
        // "[MASK]" in a fill-mask sentence is the mask token, not "[", "mask", "]").
        let specials: Vec<tokenizers::AddedToken> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
            .into_iter()
            .filter(|p| present.contains(p))
            .map(|p| tokenizers::AddedToken::from(p, true))
            .collect();
        inner.add_special_tokens(&specials);
        Self::wrap(inner, max_len)
    }

    /// Trains a WordPiece vocabulary of (at most) `vocab_size` pieces on `lines`, with BERT's
    /// normaliser and pre-tokeniser, through the `tokenizers` trainer. Returns the tokenizer and
    /// its `vocab.txt` (specials first: `[PAD]` 0, `[UNK]` 1, `[CLS]` 2, `[SEP]` 3, `[MASK]` 4).
    pub fn train_wordpiece(lines: &[String], vocab_size: usize, lowercase: bool, max_len: usize) -> Result<(Self, Vec<u8>)> {
        use trainer::{first_pieces, word_counts, SPECIALS};
        if !(SPECIALS.len() + 26..=200_000).contains(&vocab_size) {
            return Err(Error::Input(format!("a vocabulary needs between 31 and 200,000 pieces (asked for {vocab_size})")));
        }
        let normalizer = BertNormalizer::new(true, true, None, lowercase);
        let words = word_counts(lines, &normalizer)?;
        if words.is_empty() {
            return Err(Error::Input("there is no text to build a vocabulary from".into()));
        }
        let mut trainer = tokenizers::models::wordpiece::WordPieceTrainer::builder()
            .vocab_size(vocab_size)
            .min_frequency(2)
            .show_progress(false)
            .special_tokens(first_pieces(&words))
            .build();
        let mut tok = tokenizers::TokenizerImpl::<WordPiece, BertNormalizer, BertPreTokenizer, BertProcessing, WordPieceDecoder>::new(
            WordPiece::default(),
        );
        tok.with_normalizer(Some(normalizer)).with_pre_tokenizer(Some(BertPreTokenizer));
        tok.train(&mut trainer, lines.iter()).map_err(|e| Error::Tokenizer(format!("training the vocabulary: {e}")))?;
        let mut pieces: Vec<(String, u32)> = tokenizers::Model::get_vocab(tok.get_model()).into_iter().collect();
        pieces.sort_by_key(|(_, id)| *id);
        let vocab_txt = pieces.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>().join("\n").into_bytes();
        let tokenizer = Self::from_vocab_txt(&vocab_txt, lowercase, max_len)?;
        Ok((tokenizer, vocab_txt))
    }

    fn wrap(mut inner: Tokenizer, max_len: usize) -> Result<Self> {
        inner.with_padding(None);
        inner
            .with_truncation(None)
            .map_err(|e| Error::Tokenizer(e.to_string()))?;
        let id = |(role, spellings): (&str, [&str; 2])| {
            spellings.iter().find_map(|piece| inner.token_to_id(piece)).ok_or_else(|| {
                Error::Tokenizer(format!(
                    "the vocabulary has no {role} token ({} or {}); is this a BERT-family tokenizer?",
                    spellings[0], spellings[1]
                ))
            })
        };
        let [pad, cls, sep, mask, unk] = SPECIALS;
        Ok(Self { pad_id: id(pad)?, cls_id: id(cls)?, sep_id: id(sep)?, mask_id: id(mask)?, unk_id: id(unk)?, max_len, inner })
    }

    /// Number of pieces in the vocabulary.
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    /// The longest sequence produced, specials included.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// The same tokenizer truncating at `max_len` tokens instead (a classifier trained on
    /// 64-token inputs, say).
    pub fn with_max_len(&self, max_len: usize) -> Self {
        Self { max_len: max_len.max(2), ..self.clone() }
    }

    /// The tokenizer as `tokenizer.json` bytes (what `transformers`' fast tokenizers read).
    pub fn to_tokenizer_json(&self) -> Result<Vec<u8>> {
        self.inner.to_string(false).map(String::into_bytes).map_err(|e| Error::Tokenizer(format!("writing tokenizer.json: {e}")))
    }

    /// Whether case is kept (`"Apple"` and `"apple"` tokenize differently): false for an
    /// uncased BERT, which lowercases first.
    pub fn is_cased(&self) -> bool {
        let ids = |text: &str| self.inner.encode(text, false).map(|e| e.get_ids().to_vec()).ok();
        ids("Apple The") != ids("apple the")
    }

    /// What kind of vocabulary cuts the words: `"WordPiece"` (BERT, DistilBERT, ELECTRA,
    /// MPNet), `"BPE"` (RoBERTa's byte-level pieces), `"SentencePiece Unigram"` (XLM-RoBERTa,
    /// CamemBERT, ALBERT), or `"whole words"`.
    pub fn piece_kind(&self) -> &'static str {
        match self.inner.get_model() {
            tokenizers::ModelWrapper::WordPiece(_) => "WordPiece",
            tokenizers::ModelWrapper::BPE(_) => "BPE",
            tokenizers::ModelWrapper::Unigram(_) => "SentencePiece Unigram",
            tokenizers::ModelWrapper::WordLevel(_) => "whole words",
        }
    }

    /// Whether the vocabulary is WordPiece (BERT's `vocab.txt`, the lab's trained one), rather
    /// than byte-level BPE or a SentencePiece Unigram.
    pub fn is_wordpiece(&self) -> bool {
        self.piece_kind() == "WordPiece"
    }

    /// The mask token as it is written in a text (`[MASK]`, RoBERTa's `<mask>`).
    pub fn mask_token(&self) -> String {
        self.id_to_piece(self.mask_id).unwrap_or_else(|| "[MASK]".into())
    }

    /// The piece for an id.
    pub fn id_to_piece(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
    }

    /// Encodes one text: `[CLS] text [SEP]`.
    pub fn encode(&self, text: &str) -> Result<Encoded> {
        self.encode_input(EncodeInput::Single(text.into()), text.trim().is_empty())
    }

    /// Encodes `text` alone, or with `pair` as its second segment (what `transformers` does with
    /// `tokenizer(text, text_pair)`).
    pub fn encode_text(&self, text: &str, pair: Option<&str>) -> Result<Encoded> {
        match pair {
            Some(b) => self.encode_pair(text, b),
            None => self.encode(text),
        }
    }

    /// Encodes a sentence pair: `[CLS] a [SEP] b [SEP]`, `b` in segment 1.
    pub fn encode_pair(&self, a: &str, b: &str) -> Result<Encoded> {
        let empty = a.trim().is_empty() || b.trim().is_empty();
        self.encode_input(EncodeInput::Dual(a.into(), b.into()), empty)
    }

    /// Splits `context` into windows of at most `max_len` tokens (never more than the model's
    /// length), each with the whole `question` in front, consecutive windows sharing `stride`
    /// tokens of the passage: what `transformers`' question-answering examples do with
    /// `truncation="only_second", return_overflowing_tokens=True, stride=...`.
    pub fn encode_windows(&self, question: &str, context: &str, max_len: usize, stride: usize) -> Result<Vec<Window>> {
        if question.trim().is_empty() {
            return Err(Error::Input("the question is empty".into()));
        }
        if context.trim().is_empty() {
            return Err(Error::Input("the passage is empty".into()));
        }
        let max_len = max_len.min(self.max_len);
        // The passage's room in a window; consecutive windows share at most half of it (the
        // tokenizer refuses a stride that leaves no progress).
        let question_len = self.inner.encode(question, false).map(|q| q.len()).map_err(|e| Error::Input(format!("could not tokenize: {e}")))?;
        let added = self.inner.get_post_processor().map_or(3, |p| p.added_tokens(true));
        let room = max_len.saturating_sub(question_len + added);
        if room < 2 {
            return Err(Error::Input(format!("the question is {question_len} tokens long: with the passage it must fit in {max_len}")));
        }
        let stride = stride.min(room / 2);
        let mut windowing = self.inner.clone();
        windowing
            .with_truncation(Some(TruncationParams {
                max_length: max_len,
                strategy: TruncationStrategy::OnlySecond,
                stride,
                ..Default::default()
            }))
            .map_err(|e| Error::Tokenizer(e.to_string()))?;
        let mut first = windowing
            .encode_char_offsets(EncodeInput::Dual(question.into(), context.into()), true)
            .map_err(|e| Error::Input(format!("could not tokenize: {e}")))?;
        let rest = first.take_overflowing();
        std::iter::once(first)
            .chain(rest)
            .map(|e| {
                let sequences = e.get_sequence_ids();
                let from = sequences.iter().position(|s| *s == Some(1));
                let to = sequences.iter().rposition(|s| *s == Some(1));
                let (Some(from), Some(to)) = (from, to) else {
                    return Err(Error::Input("the question leaves no room for the passage".into()));
                };
                Ok(Window { encoded: Encoded::from_encoding(&e, None), context: from..to + 1 })
            })
            .collect()
    }

    fn encode_input(&self, input: EncodeInput<'_>, empty: bool) -> Result<Encoded> {
        if empty {
            return Err(Error::Input("the text is empty".into()));
        }
        let full = self
            .inner
            .encode_char_offsets(input.clone(), true)
            .map_err(|e| Error::Input(format!("could not tokenize: {e}")))?;
        if full.len() <= self.max_len {
            return Ok(Encoded::from_encoding(&full, None));
        }
        // Too long: let the tokenizer truncate (longest-first for pairs), keeping specials.
        let mut truncating = self.inner.clone();
        truncating
            .with_truncation(Some(TruncationParams {
                max_length: self.max_len,
                strategy: TruncationStrategy::LongestFirst,
                ..Default::default()
            }))
            .map_err(|e| Error::Tokenizer(e.to_string()))?;
        let cut = truncating
            .encode_char_offsets(input, true)
            .map_err(|e| Error::Input(format!("could not tokenize: {e}")))?;
        Ok(Encoded::from_encoding(&cut, Some(full.len())))
    }
}

/// A SentencePiece `tokenizer.json` (XLM-RoBERTa's, CamemBERT's) pre-tokenizes with a lone
/// `Metaspace`, which turns every space into the `▁` that starts the next piece: that piece's
/// character offsets then begin on the space before its word, a tagged word would start
/// between words and a question-answering span with a space. `transformers` builds these
/// tokenizers with `WhitespaceSplit` before the `Metaspace` (prepending `▁` to every word); the
/// same here gives its pieces and ids, and offsets on the word's own characters. Only a
/// `Metaspace` that prepends `▁` to every word and splits there is changed (for it, the two
/// pipelines differ only in where a piece's offsets start and in runs of whitespace).
/// A folder's `tokenizer.json` as this crate runs it, for an export: a SentencePiece
/// tokenizer's whitespace split written into the file ([`split_on_whitespace_first`]), so that
/// `transformers` 4, which runs the file as it is, tokenizes as 5 does (and as the page did):
/// `le <mask>` without a `▁` piece of its own before the mask. Bytes it cannot read are kept.
pub fn tokenizer_json_as_run(bytes: &[u8]) -> Vec<u8> {
    let Ok(mut inner) = Tokenizer::from_bytes(bytes) else { return bytes.to_vec() };
    let before = format!("{:?}", inner.get_pre_tokenizer());
    split_on_whitespace_first(&mut inner);
    if format!("{:?}", inner.get_pre_tokenizer()) == before {
        return bytes.to_vec();
    }
    inner.to_string(true).map(String::into_bytes).unwrap_or_else(|_| bytes.to_vec())
}

fn split_on_whitespace_first(tokenizer: &mut Tokenizer) {
    if let Some(PreTokenizerWrapper::Metaspace(metaspace)) = tokenizer.get_pre_tokenizer() {
        if metaspace.get_prepend_scheme() == PrependScheme::Always && metaspace.get_split() {
            let steps = vec![PreTokenizerWrapper::WhitespaceSplit(WhitespaceSplit), PreTokenizerWrapper::Metaspace(metaspace.clone())];
            tokenizer.with_pre_tokenizer(Some(Sequence::new(steps)));
        }
    }
}

/// One window of a question over a passage: `[CLS] question [SEP] part of the passage [SEP]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    /// The window's tokens; a passage token's offsets are characters of the passage.
    pub encoded: Encoded,
    /// Token positions of the passage's part in this window.
    pub context: std::ops::Range<usize>,
}

/// Positions of `encoded`, shortest first (a stable sort: equal lengths keep their order).
/// Batching texts in this order pads each batch to about its own length, not its longest
/// random member's.
pub fn by_length(encoded: &[Encoded]) -> Vec<usize> {
    shortest_first(&encoded.iter().map(|e| e.tokens.len()).collect::<Vec<_>>())
}

/// Positions of `lengths`, shortest first (a stable sort).
pub fn shortest_first(lengths: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&i| lengths[i]);
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny_vocab() -> Vec<u8> {
        ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "play", "##ing", "##s", "."]
            .join("\n")
            .into_bytes()
    }

    #[test]
    fn wordpiece_from_vocab_txt() {
        let tok = BertTokenizer::from_vocab_txt(&tiny_vocab(), true, 512).unwrap();
        let e = tok.encode("The cat playing zebras.").unwrap();
        let pieces: Vec<_> = e.tokens.iter().map(|t| t.piece.as_str()).collect();
        assert_eq!(pieces, ["[CLS]", "the", "cat", "play", "##ing", "[UNK]", ".", "[SEP]"]);
        assert_eq!(e.ids(), [2, 5, 6, 7, 8, 1, 10, 3]);
        assert!(e.tokens[0].special && e.tokens[7].special && !e.tokens[1].special);
        // Character offsets point back into the original text.
        assert_eq!(e.tokens[3].offsets, (8, 12)); // "play"
        assert_eq!(e.tokens[4].offsets, (12, 15)); // "ing"
        assert_eq!(e.truncated_from, None);
    }

    #[test]
    fn pairs_get_segment_ids() {
        let tok = BertTokenizer::from_vocab_txt(&tiny_vocab(), true, 512).unwrap();
        let e = tok.encode_pair("the cat", "cats").unwrap();
        let pieces: Vec<_> = e.tokens.iter().map(|t| t.piece.as_str()).collect();
        assert_eq!(pieces, ["[CLS]", "the", "cat", "[SEP]", "cat", "##s", "[SEP]"]);
        assert_eq!(e.type_ids(), [0, 0, 0, 0, 1, 1, 1]);
    }

    #[test]
    fn long_text_is_truncated_and_says_so() {
        let tok = BertTokenizer::from_vocab_txt(&tiny_vocab(), true, 6).unwrap();
        let e = tok.encode("the cat the cat the cat").unwrap();
        assert_eq!(e.tokens.len(), 6);
        assert_eq!(e.truncated_from, Some(8));
        assert_eq!(e.tokens.last().unwrap().piece, "[SEP]");
    }

    #[test]
    fn a_long_passage_is_split_into_overlapping_windows_with_the_question_in_each() {
        let tok = BertTokenizer::from_vocab_txt(&tiny_vocab(), true, 512).unwrap();
        let context = "the cat plays. the cat plays. the cat";
        let windows = tok.encode_windows("cats", context, 10, 2).unwrap();
        assert!(windows.len() > 1);
        let mut covered = Vec::new();
        for w in &windows {
            let pieces: Vec<_> = w.encoded.tokens.iter().map(|t| t.piece.as_str()).collect();
            assert_eq!(&pieces[..4], ["[CLS]", "cat", "##s", "[SEP]"]);
            assert_eq!(pieces.last(), Some(&"[SEP]"));
            assert!(pieces.len() <= 10);
            assert_eq!(w.context.start, 4);
            assert_eq!(w.context.end, pieces.len() - 1);
            covered.push(w.encoded.tokens[w.context.clone()].iter().map(|t| t.offsets).collect::<Vec<_>>());
        }
        // Consecutive windows share two tokens; the offsets are the passage's characters.
        for pair in covered.windows(2) {
            assert_eq!(pair[0][pair[0].len() - 2..], pair[1][..2]);
        }
        assert_eq!(covered[0][1], (4, 7)); // "cat"
        assert_eq!(covered.last().unwrap().last(), Some(&(34, 37)));
        // A question that leaves no room is refused, saying why.
        let err = tok.encode_windows("the cat the cat the cat", context, 8, 2).unwrap_err();
        assert!(err.to_string().contains("question"), "{err}");
    }

    #[test]
    fn empty_text_is_refused_with_a_message() {
        let tok = BertTokenizer::from_vocab_txt(&tiny_vocab(), true, 512).unwrap();
        assert!(tok.encode("   ").unwrap_err().to_string().contains("empty"));
    }

    #[test]
    fn batch_pads_to_the_longest() {
        let b = Batch::from_rows(&[vec![2, 5, 3], vec![2, 3]], &[vec![0, 0, 0], vec![0, 0]], 0);
        assert_eq!(b.seq_len, 3);
        assert_eq!(b.input_ids, [2, 5, 3, 2, 3, 0]);
        assert_eq!(b.attention_mask, [1, 1, 1, 1, 1, 0]);
    }

    #[test]
    fn malformed_tokenizer_json_is_an_error_not_a_panic() {
        let err = BertTokenizer::from_tokenizer_json(b"{\"model\": 3}", 512).unwrap_err();
        assert!(err.to_string().contains("tokenizer.json"), "{err}");
    }

    #[test]
    fn a_sentencepiece_unigram_tokenizer_marks_word_starts_and_keeps_offsets_on_the_words() {
        let tok = BertTokenizer::from_tokenizer_json(&crate::test_util::unigram_tokenizer_json(), 512).unwrap();
        assert_eq!([tok.cls_id, tok.pad_id, tok.sep_id, tok.unk_id, tok.mask_id], [0, 1, 2, 3, 4]);
        assert_eq!(tok.mask_token(), "<mask>");
        let text = "Le café près de la rivière";
        let e = tok.encode(text).unwrap();
        let pieces: Vec<_> = e.tokens.iter().map(|t| t.piece.as_str()).collect();
        assert_eq!(pieces, ["<s>", "▁Le", "▁café", "▁pr", "ès", "▁de", "▁la", "▁", "ri", "vi", "ère", "</s>"]);
        assert!(e.tokens[0].special && e.tokens[11].special && !e.tokens[7].special);
        // Character offsets (not bytes) on each word's own characters, never on the space
        // before it; the lone `▁` of "rivière" sits on its first letter, as in transformers.
        let offsets: Vec<_> = e.tokens.iter().map(|t| t.offsets).collect();
        assert_eq!(offsets, [(0, 0), (0, 2), (3, 7), (8, 10), (10, 12), (13, 15), (16, 18), (19, 20), (19, 21), (21, 23), (23, 26), (0, 0)]);
        let chars: Vec<char> = text.chars().collect();
        assert_eq!(chars[3..7].iter().collect::<String>(), "café");
        // Runs of spaces and a trailing space change nothing.
        assert_eq!(tok.encode("Le  café près de la rivière ").unwrap().ids(), e.ids());
        // Pairs as RoBERTa: <s> A </s></s> B </s>, one segment.
        let p = tok.encode_pair("Le café", "Die Straße").unwrap();
        let pieces: Vec<_> = p.tokens.iter().map(|t| t.piece.as_str()).collect();
        assert_eq!(pieces, ["<s>", "▁Le", "▁café", "</s>", "</s>", "▁Die", "▁Stra", "ße", "</s>"]);
        assert_eq!(p.tokens[7].offsets, (8, 10));
        // The mask token typed in a text stays whole.
        let m = tok.encode("Le <mask> de la").unwrap();
        assert!(m.ids().contains(&tok.mask_id), "{:?}", m.tokens);
        assert!(tok.is_cased());
    }

    #[test]
    fn a_trained_vocabulary_covers_its_corpus_with_whole_words_and_pieces() {
        let lines: Vec<String> = (0..200)
            .map(|i| ["the cat sleeps on the mat", "the dog sleeps in the kennel", "cats and dogs are sleeping"][i % 3].to_string())
            .collect();
        let (tok, vocab_txt) = BertTokenizer::train_wordpiece(&lines, 80, true, 32).unwrap();
        let vocab = String::from_utf8(vocab_txt).unwrap();
        let pieces: Vec<&str> = vocab.lines().collect();
        assert_eq!(&pieces[..5], &["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]);
        assert!(pieces.len() <= 80);
        assert!(pieces.iter().any(|p| p.starts_with("##")), "no continuation pieces: {pieces:?}");
        // Frequent words become whole pieces; nothing in the corpus is [UNK].
        let e = tok.encode("The cat sleeps").unwrap();
        assert!(e.tokens.iter().any(|t| t.piece == "cat"), "{:?}", e.tokens);
        assert!(e.tokens.iter().all(|t| t.id != tok.unk_id));
        assert_eq!(tok.mask_id, 4);
        assert!(BertTokenizer::train_wordpiece(&lines, 10, true, 32).is_err());
        assert!(BertTokenizer::train_wordpiece(&[" ".to_string()], 100, true, 32).is_err());
    }

    /// The lab says the same settings train the same model: its vocabulary too. Many pairs tie
    /// on this corpus, and the trainer breaks ties by the pieces' ids.
    #[test]
    fn the_same_corpus_trains_the_same_vocabulary_every_time() {
        let lines: Vec<String> = (0..40).map(|i| format!("{} {}", ["ox", "yak", "gnu", "emu", "kiwi", "zebu"][i % 6], ["quiz", "jinx", "vex", "fjord"][i % 4])).collect();
        let first = BertTokenizer::train_wordpiece(&lines, 60, true, 32).unwrap().1;
        for _ in 0..8 {
            assert_eq!(BertTokenizer::train_wordpiece(&lines, 60, true, 32).unwrap().1, first);
        }
    }

    /// The lesson on tokens says the trainer merges the most frequent neighbouring pair (as BPE),
    /// not the pair of best likelihood score count(ab) / (count(a) · count(b)) of Google's
    /// WordPiece: a corpus where the two rules disagree tells which one ran.
    #[test]
    fn the_trainer_merges_the_most_frequent_pair_first() {
        let lines: Vec<String> = ["that thin thing", "this the then", "qz qz"].iter().map(|s| s.to_string()).collect();
        // Counted here: the pieces of each word and each pair of neighbours, over the corpus.
        let words: Vec<Vec<char>> = lines.iter().flat_map(|l| l.split_whitespace()).map(|w| w.chars().collect()).collect();
        let mut pairs = std::collections::HashMap::<(char, char), usize>::new();
        let mut singles = std::collections::HashMap::<char, usize>::new();
        for w in &words {
            w.iter().for_each(|c| *singles.entry(*c).or_default() += 1);
            w.windows(2).for_each(|p| *pairs.entry((p[0], p[1])).or_default() += 1);
        }
        let by = |score: &dyn Fn(&((char, char), usize)) -> f64| {
            let best = pairs.iter().map(|(k, v)| (*k, *v)).max_by(|a, b| score(a).total_cmp(&score(b))).unwrap().0;
            format!("{}{}", best.0, best.1)
        };
        let frequent = by(&|(_, n)| *n as f64);
        let likely = by(&|((a, b), n)| *n as f64 / (singles[a] * singles[b]) as f64);
        assert_eq!((frequent.as_str(), likely.as_str()), ("th", "qz"), "the corpus no longer tells the two rules apart");
        let (_, vocab_txt) = BertTokenizer::train_wordpiece(&lines, 40, true, 32).unwrap();
        let vocab = String::from_utf8(vocab_txt).unwrap();
        // Merged pieces follow the specials and the alphabet, in the order they were merged.
        let first_merge = vocab.lines().find(|p| !p.starts_with('[') && p.trim_start_matches("##").chars().count() > 1).unwrap();
        assert_eq!(first_merge, frequent, "vocabulary: {vocab:?}");
    }
}
