//! Reading BERT's insides for the explorer: every layer's token vectors, attention maps, the
//! parts of the input representation, and static (input-embedding) vectors.
//!
//! All read-backs are `async` (see [`crate::analysis::embed`]). Each call does one forward pass over the
//! texts it is given, so a caller that wants to stay responsive passes a few texts at a time.

use burn::prelude::*;
use burn::tensor::TensorData;

use crate::bert::attention::AttentionMask;
use crate::bert::checkpoint::LoadedModel;
use crate::error::{Error, Result};
use crate::nn::read_f32;
use crate::bert::model::{BertInput, ForwardOptions};
use crate::tokenizer::{Batch, Encoded};

/// Which vector stands for a text (or a token) in the explorer's views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VectorKind {
    /// One vector per WordPiece token (specials left out).
    Token,
    /// The `[CLS]` token's vector, one per text.
    Cls,
    /// The mean of the text's token vectors (`[CLS]`/`[SEP]` included, as mean pooling does).
    #[default]
    Mean,
}

impl VectorKind {
    /// Name for the page.
    pub fn label(self) -> &'static str {
        match self {
            VectorKind::Token => "tokens",
            VectorKind::Cls => "sentences ([CLS])",
            VectorKind::Mean => "sentences (mean)",
        }
    }
}

/// Every layer's vectors for one text.
#[derive(Debug, Clone)]
pub struct TextStates {
    /// The text's tokens.
    pub encoded: Encoded,
    /// Vector width.
    pub hidden: usize,
    /// `L + 1` entries (0 = embedding output, `l` = after layer `l`), each `tokens × hidden`,
    /// row-major.
    pub layers: Vec<Vec<f32>>,
}

impl TextStates {
    /// Number of tokens (specials included).
    pub fn len(&self) -> usize {
        self.encoded.tokens.len()
    }

    /// Whether the text has no tokens (never, for real texts: `[CLS]` is always there).
    pub fn is_empty(&self) -> bool {
        self.encoded.tokens.is_empty()
    }

    /// Token `t`'s vector at `layer`.
    pub fn token(&self, layer: usize, t: usize) -> &[f32] {
        &self.layers[layer][t * self.hidden..(t + 1) * self.hidden]
    }

    /// The mean of tokens `range` at `layer`.
    pub fn mean_of(&self, layer: usize, range: std::ops::Range<usize>) -> Vec<f32> {
        let mut out = vec![0f32; self.hidden];
        let n = range.len().max(1) as f32;
        for t in range {
            for (o, x) in out.iter_mut().zip(self.token(layer, t)) {
                *o += x / n;
            }
        }
        out
    }

    /// The text's vector at `layer`: `[CLS]` or the mean over all its tokens. For
    /// [`VectorKind::Token`] this is the mean too (a text has no single token vector).
    pub fn sentence(&self, layer: usize, kind: VectorKind) -> Vec<f32> {
        match kind {
            VectorKind::Cls => self.token(layer, 0).to_vec(),
            VectorKind::Mean | VectorKind::Token => self.mean_of(layer, 0..self.len()),
        }
    }
}

/// Every layer's and head's attention for one input.
#[derive(Debug, Clone)]
pub struct AttentionMap {
    /// The token pieces, in order.
    pub tokens: Vec<String>,
    /// Segment of each token.
    pub segments: Vec<u32>,
    /// Number of layers.
    pub layers: usize,
    /// Heads per layer.
    pub heads: usize,
    /// Tokens.
    pub seq: usize,
    /// `[layer][head][query][key]`, row-major: row `q` is how token `q` spreads its attention.
    pub weights: Vec<f32>,
}

impl AttentionMap {
    /// The map of `encoded` (one input, no padding) from its weights, `[layer][head][query][key]`
    /// with `heads` heads a layer; refused when the weights are not a whole number of layers.
    pub fn new(encoded: &Encoded, heads: usize, weights: Vec<f32>) -> Result<Self> {
        let seq = encoded.tokens.len();
        let per_layer = heads * seq * seq;
        if per_layer == 0 || !weights.len().is_multiple_of(per_layer) {
            return Err(Error::Device(format!("{} attention weights are not whole layers of {heads} heads over {seq} tokens", weights.len())));
        }
        check_finite(&weights)?;
        Ok(Self {
            tokens: encoded.tokens.iter().map(|t| t.piece.clone()).collect(),
            segments: encoded.type_ids(),
            layers: weights.len() / per_layer,
            heads,
            seq,
            weights,
        })
    }

    /// One head's `seq × seq` matrix.
    pub fn head(&self, layer: usize, head: usize) -> &[f32] {
        let size = self.seq * self.seq;
        let start = (layer * self.heads + head) * size;
        &self.weights[start..start + size]
    }

    /// The mean over a layer's heads, `seq × seq`.
    pub fn mean(&self, layer: usize) -> Vec<f32> {
        let mut out = vec![0f32; self.seq * self.seq];
        for h in 0..self.heads {
            for (o, w) in out.iter_mut().zip(self.head(layer, h)) {
                *o += w / self.heads as f32;
            }
        }
        out
    }

    /// The largest distance of any row's sum from 1 (softmax rows must sum to 1).
    pub fn max_row_sum_error(&self) -> f32 {
        self.weights.chunks(self.seq.max(1)).map(|row| (row.iter().sum::<f32>() - 1.0).abs()).fold(0.0, f32::max)
    }
}

/// The input representation of one text, token by token: the three looked-up embeddings, their
/// sum, and the sum after LayerNorm (what layer 1 receives).
#[derive(Debug, Clone)]
pub struct InputParts {
    /// The token pieces.
    pub tokens: Vec<String>,
    /// WordPiece embedding of each token.
    pub token: Vec<Vec<f32>>,
    /// Segment embedding of each token.
    pub segment: Vec<Vec<f32>>,
    /// Position embedding of each token.
    pub position: Vec<Vec<f32>>,
    /// `token + segment + position`.
    pub sum: Vec<Vec<f32>>,
    /// `LayerNorm(sum)`.
    pub normalized: Vec<Vec<f32>>,
}

impl InputParts {
    /// The parts of `encoded` from the five `tokens × width` arrays, in field order (token,
    /// segment, position, sum, normalised); refused when one is not that size.
    pub fn new(encoded: &Encoded, width: usize, parts: [Vec<f32>; 5]) -> Result<Self> {
        let size = encoded.tokens.len() * width;
        if let Some(bad) = parts.iter().find(|p| p.len() != size) {
            return Err(Error::Device(format!("an input part has {} values, not {} tokens × {width}", bad.len(), encoded.tokens.len())));
        }
        parts.iter().try_for_each(|p| check_finite(p))?;
        let [token, segment, position, sum, normalized] = parts.map(|p| rows(p, width.max(1)));
        Ok(Self { tokens: encoded.tokens.iter().map(|t| t.piece.clone()).collect(), token, segment, position, sum, normalized })
    }
}

/// The Euclidean length of a vector.
pub fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

fn rows(flat: Vec<f32>, width: usize) -> Vec<Vec<f32>> {
    flat.chunks(width).map(<[f32]>::to_vec).collect()
}

fn check_finite(values: &[f32]) -> Result<()> {
    if values.iter().any(|x| !x.is_finite()) {
        return Err(Error::Device("the model produced NaN or infinite values".into()));
    }
    Ok(())
}

/// The token range (start..end) covering the first whole-word, case-insensitive occurrence of
/// `word` in the text an encoding came from, or `None`. A word split into pieces ("bank" +
/// "##s") covers all of them. Offsets are in characters, as [`crate::tokenizer::Token`] keeps them.
pub fn find_word(encoded: &Encoded, text: &str, word: &str) -> Option<std::ops::Range<usize>> {
    let chars: Vec<char> = text.chars().flat_map(char::to_lowercase).collect();
    let target: Vec<char> = word.trim().chars().flat_map(char::to_lowercase).collect();
    // Lowercasing can change the character count (rare: 'İ'); fall back to no match then.
    if target.is_empty() || chars.len() != text.chars().count() {
        return None;
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '\'';
    let start = (0..=chars.len().saturating_sub(target.len())).find(|&i| {
        chars[i..].starts_with(&target)
            && (i == 0 || !is_word(chars[i - 1]))
            && chars.get(i + target.len()).is_none_or(|&c| !is_word(c))
    })?;
    let end = start + target.len();
    let covered: Vec<usize> = encoded
        .tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.special && t.type_id == 0 && t.offsets.0 < end && t.offsets.1 > start)
        .map(|(i, _)| i)
        .collect();
    Some(*covered.first()?..*covered.last()? + 1)
}

impl LoadedModel {
    /// Every layer's token vectors for each encoding, in one forward pass.
    pub async fn text_states(&self, encoded: &[Encoded], device: &Device) -> Result<Vec<TextStates>> {
        if encoded.is_empty() {
            return Ok(Vec::new());
        }
        let batch = Batch::from_encoded(encoded, self.tokenizer.pad_id);
        let input = BertInput::from_batch(&batch, device);
        let options = ForwardOptions { hidden_states: true, ..Default::default() };
        let out = self.model.forward(input, options);
        let hidden = self.config.hidden_size;
        let seq = batch.seq_len;
        let mut per_layer = Vec::with_capacity(out.hidden_states.len());
        for state in out.hidden_states {
            let flat = read_f32(state).await?;
            check_finite(&flat)?;
            per_layer.push(flat);
        }
        Ok(encoded
            .iter()
            .enumerate()
            .map(|(b, e)| {
                let n = e.tokens.len();
                let layers = per_layer
                    .iter()
                    .map(|flat| flat[b * seq * hidden..(b * seq + n) * hidden].to_vec())
                    .collect();
                TextStates { encoded: e.clone(), hidden, layers }
            })
            .collect())
    }

    /// Every layer's and head's attention probabilities for one input.
    pub async fn attention_map(&self, encoded: &Encoded, mask: AttentionMask, device: &Device) -> Result<AttentionMap> {
        let batch = Batch::from_encoded(std::slice::from_ref(encoded), self.tokenizer.pad_id);
        let input = BertInput::from_batch(&batch, device);
        let options = ForwardOptions { attentions: true, mask, ..Default::default() };
        let out = self.model.forward(input, options);
        let mut weights = Vec::new();
        for a in out.attentions {
            weights.extend(read_f32(a).await?);
        }
        AttentionMap::new(encoded, self.config.num_attention_heads, weights)
    }

    /// The input representation of one encoding, part by part.
    pub async fn input_parts(&self, encoded: &Encoded, device: &Device) -> Result<InputParts> {
        let batch = Batch::from_encoded(std::slice::from_ref(encoded), self.tokenizer.pad_id);
        let input = BertInput::from_batch(&batch, device);
        let embeddings = &self.model.embeddings;
        let parts = embeddings.parts(input.input_ids, input.token_type_ids);
        let sum = parts.token.clone() + parts.segment.clone() + parts.position.clone();
        let normalized = embeddings.layer_norm.forward(sum.clone());
        let mut read = Vec::new();
        for t in [parts.token, parts.segment, parts.position, sum, normalized] {
            read.push(read_f32(t).await?);
        }
        let parts = <[Vec<f32>; 5]>::try_from(read).expect("five parts");
        // The embeddings' own width, before any projection up to the encoder's.
        InputParts::new(encoded, self.config.embedding_width(), parts)
    }

    /// Static vectors: the mean of each text's WordPiece input embeddings (specials left out),
    /// straight from the embedding table, with no context at all.
    pub async fn static_vectors(&self, encoded: &[Encoded], device: &Device) -> Result<Vec<Vec<f32>>> {
        let table = self.model.embeddings.word_embeddings.weight.val();
        let width = self.config.embedding_width();
        let mut out = Vec::with_capacity(encoded.len());
        for e in encoded {
            let ids: Vec<i64> = e.tokens.iter().filter(|t| !t.special).map(|t| t.id as i64).collect();
            if ids.is_empty() {
                out.push(vec![0.0; width]);
                continue;
            }
            let n = ids.len();
            let index = Tensor::<1, Int>::from_data(TensorData::new(ids, [n]), device);
            let mean = table.clone().select(0, index).mean_dim(0).reshape([width]);
            let v = read_f32(mean).await?;
            check_finite(&v)?;
            out.push(v);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::tiny_bert;

    #[test]
    fn layer_states_match_the_model_and_ignore_padding() {
        let (bert, device) = tiny_bert();
        let texts = ["the river bank", "a loan . the money . the bank"];
        let encoded: Vec<Encoded> = texts.iter().map(|t| bert.tokenizer.encode(t).unwrap()).collect();
        let both = pollster::block_on(bert.text_states(&encoded, &device)).unwrap();
        let alone = pollster::block_on(bert.text_states(&encoded[..1], &device)).unwrap();
        assert_eq!(both[0].layers.len(), bert.config.num_hidden_layers + 1);
        assert_eq!(both[0].layers[0].len(), 5 * bert.config.hidden_size);
        for l in 0..both[0].layers.len() {
            for (a, b) in both[0].layers[l].iter().zip(&alone[0].layers[l]) {
                assert!((a - b).abs() < 1e-4, "layer {l}: the padded batch changed the short text");
            }
        }
        // Mean of [CLS] the river bank [SEP] equals the explicit mean of its five tokens.
        let mean = both[0].sentence(2, VectorKind::Mean);
        let by_hand: Vec<f32> =
            (0..bert.config.hidden_size).map(|k| (0..5).map(|t| both[0].token(2, t)[k]).sum::<f32>() / 5.0).collect();
        for (a, b) in mean.iter().zip(&by_hand) {
            assert!((a - b).abs() < 1e-5);
        }
        assert_eq!(both[0].sentence(1, VectorKind::Cls), both[0].token(1, 0));
    }

    #[test]
    fn attention_rows_sum_to_one_and_causal_hides_the_future() {
        let (bert, device) = tiny_bert();
        let e = bert.tokenizer.encode_pair("the bank", "a loan").unwrap();
        let bi = pollster::block_on(bert.attention_map(&e, AttentionMask::Bidirectional, &device)).unwrap();
        assert_eq!((bi.layers, bi.heads, bi.seq), (2, 2, 7));
        assert_eq!(bi.segments, vec![0, 0, 0, 0, 1, 1, 1]);
        assert!(bi.max_row_sum_error() < 1e-5);
        let causal = pollster::block_on(bert.attention_map(&e, AttentionMask::Causal, &device)).unwrap();
        assert!(causal.max_row_sum_error() < 1e-5);
        let head = causal.head(1, 1);
        for q in 0..7 {
            for k in q + 1..7 {
                assert_eq!(head[q * 7 + k], 0.0, "query {q} sees future key {k}");
            }
        }
        // The first token can only see itself.
        assert!((head[0] - 1.0).abs() < 1e-6);
        // Bidirectional attention does look ahead somewhere.
        assert!(bi.head(0, 0)[1] > 0.0);
        let mean = bi.mean(0);
        for q in 0..7 {
            assert!((mean[q * 7..(q + 1) * 7].iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn input_parts_add_up_to_the_embedding_output() {
        let (bert, device) = tiny_bert();
        let e = bert.tokenizer.encode_pair("the bank", "money").unwrap();
        let parts = pollster::block_on(bert.input_parts(&e, &device)).unwrap();
        let states = pollster::block_on(bert.text_states(std::slice::from_ref(&e), &device)).unwrap();
        for t in 0..e.tokens.len() {
            for k in 0..bert.config.hidden_size {
                let s = parts.token[t][k] + parts.segment[t][k] + parts.position[t][k];
                assert!((s - parts.sum[t][k]).abs() < 1e-6);
                // Layer 0 of the hidden states is LayerNorm(sum).
                assert!((parts.normalized[t][k] - states[0].token(0, t)[k]).abs() < 1e-5);
            }
        }
        // Same segment → same segment embedding; the second sentence differs.
        assert_eq!(parts.segment[0], parts.segment[1]);
        assert_ne!(parts.segment[0], parts.segment[5]);
    }

    /// A map or input parts rebuilt from their flat arrays (as the page does with the worker's)
    /// equal the computed ones; arrays of the wrong size or with NaNs are refused, not drawn.
    #[test]
    fn maps_and_parts_rebuild_from_their_arrays_and_refuse_wrong_sizes() {
        let (bert, device) = tiny_bert();
        let e = bert.tokenizer.encode("the river bank").unwrap();
        let map = pollster::block_on(bert.attention_map(&e, AttentionMask::Bidirectional, &device)).unwrap();
        let again = AttentionMap::new(&e, map.heads, map.weights.clone()).unwrap();
        assert_eq!((again.layers, again.seq, &again.tokens, &again.weights), (map.layers, map.seq, &map.tokens, &map.weights));
        assert!(AttentionMap::new(&e, map.heads, map.weights[1..].to_vec()).is_err());
        let mut nan = map.weights.clone();
        nan[3] = f32::NAN;
        assert!(AttentionMap::new(&e, map.heads, nan).is_err());

        let parts = pollster::block_on(bert.input_parts(&e, &device)).unwrap();
        let flat = [&parts.token, &parts.segment, &parts.position, &parts.sum, &parts.normalized].map(|p| p.concat());
        let again = InputParts::new(&e, bert.config.hidden_size, flat.clone()).unwrap();
        assert_eq!((&again.position, &again.normalized), (&parts.position, &parts.normalized));
        let mut short = flat;
        short[2].pop();
        assert!(InputParts::new(&e, bert.config.hidden_size, short).is_err());
    }

    #[test]
    fn static_vectors_are_means_of_table_rows() {
        let (bert, device) = tiny_bert();
        let e = bert.tokenizer.encode("river bank").unwrap();
        let v = pollster::block_on(bert.static_vectors(&[e], &device)).unwrap();
        let table = bert.model.embeddings.word_embeddings.weight.val().into_data().try_to_vec::<f32>().unwrap();
        let h = bert.config.hidden_size;
        for k in 0..h {
            let want = (table[6 * h + k] + table[7 * h + k]) / 2.0;
            assert!((v[0][k] - want).abs() < 1e-6);
        }
    }

    #[test]
    fn find_word_locates_whole_words_and_their_pieces() {
        let (bert, _) = tiny_bert();
        let text = "The banks. A river bank";
        let e = bert.tokenizer.encode(text).unwrap();
        // "banks" = bank + ##s at tokens 2..4; "bank" as a whole word is the last one.
        assert_eq!(find_word(&e, text, "banks"), Some(2..4));
        assert_eq!(find_word(&e, text, "BANK"), Some(7..8));
        assert_eq!(find_word(&e, text, "ban"), None);
        assert_eq!(find_word(&e, text, ""), None);
        // SentencePiece: "rivière" is `▁` ri vi ère, "café" one `▁café` piece with its accent.
        let tok = crate::tokenizer::BertTokenizer::from_tokenizer_json(&crate::test_util::unigram_tokenizer_json(), 64).unwrap();
        let text = "Le café près de la rivière";
        let e = tok.encode(text).unwrap();
        assert_eq!(find_word(&e, text, "rivière"), Some(7..11));
        assert_eq!(find_word(&e, text, "CAFÉ"), Some(2..3));
        assert_eq!(find_word(&e, text, "près"), Some(3..5));
        assert_eq!(find_word(&e, text, "la"), Some(6..7));
    }
}
