//! Disentangled self-attention (DeBERTa, He et al. 2021): a word is its content alone, and its
//! position enters attention as the *relative* distance between query and key. Each layer's score
//! of query `i` and key `j` adds three terms, each scaled by `1 / √(d · (1 + terms))`:
//!
//! ```text
//! content → content    q_i · k_j
//! content → position   q_i · K(r)_δ(i,j)       c2p: the query's content against the key's distance
//! position → content   k_j · Q(r)_δ(i,j)       p2c: the key's content against the query's distance
//! ```
//!
//! `r` is one table of relative-position embeddings shared by every layer (the encoder's
//! `rel_embeddings`, `2 × span` rows, through a LayerNorm in DeBERTa-v3); `K(r)` and `Q(r)` are
//! its rows projected by the layer's own key and query projections (`share_att_key`, v3) or by
//! `pos_key_proj` / `pos_query_proj`. `δ(i, j)` is the row of the distance `i − j`
//! ([`RelativePositions::index`]): distances up to `position_buckets / 2` exact, farther ones in
//! log-spaced buckets up to `max_relative_positions`, beyond which all share the last row.
//!
//! The distance rows are computed once per forward pass ([`RelativeInputs`]) and every layer
//! gathers its terms from its own projections of them.

use burn::nn::{Dropout, DropoutConfig, Linear};
use burn::prelude::*;
use burn::tensor::TensorData;

use crate::bert::attention::BertSelfOutput;
use crate::bert::config::{BertConfig, PositionAttention};
use crate::nn::dropout;
use crate::nn::layer_norm::LayerNorm;
use crate::nn::linear::{init_linear, linear, matmul};
use crate::nn::masked_softmax::scaled_masked_softmax;

/// How DeBERTa turns the distance between a query and a key into a row of its relative table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelativePositions {
    /// Log buckets each side (`position_buckets`); `None`: distances are rows as they are.
    pub buckets: Option<usize>,
    /// The distance the buckets stretch to (`max_relative_positions`), or without buckets the
    /// distance at which rows stop.
    pub reach: usize,
}

impl RelativePositions {
    /// A model configuration's.
    pub fn of(config: &BertConfig) -> Self {
        Self { buckets: config.position_buckets.filter(|&b| b > 0), reach: config.relative_reach() }
    }

    /// Rows of the table each side of distance 0: the buckets, else the reach.
    pub fn span(self) -> usize {
        self.buckets.unwrap_or(self.reach)
    }

    /// The bucketed distance of a query `relative` positions after its key (`i − j`), as
    /// `transformers`' `make_log_bucket_position` computes it: distances up to half the buckets
    /// as they are, farther ones `⌈ln(|δ| / mid) / ln((reach − 1) / mid) · (mid − 1)⌉ + mid` with
    /// their sign, in f32 as there, so that the same distances land on the same side of each
    /// bucket's edge.
    pub fn bucket(self, relative: i64) -> i64 {
        let Some(buckets) = self.buckets else { return relative };
        let mid = (buckets / 2) as i64;
        let far = if relative < mid && relative > -mid { mid - 1 } else { relative.abs() };
        if far <= mid {
            return relative;
        }
        let ratio = ((self.reach as f64 - 1.0) / mid as f64) as f32;
        let log = ((far as f32 / mid as f32).ln() / ratio.ln() * (mid - 1) as f32).ceil() + mid as f32;
        log as i64 * relative.signum()
    }

    /// The table row a query `relative` positions after its key reads: its bucket counted from
    /// the table's middle, clipped to the table.
    pub fn index(self, relative: i64) -> i64 {
        let span = self.span() as i64;
        (self.bucket(relative) + span).clamp(0, 2 * span - 1)
    }

    /// Every query–key pair's row for `seq` tokens, row-major `[query, key]`: content to
    /// position reads row `index(i − j)`; position to content, gathered along the key's rows,
    /// `index(−(j − i))` at `[j, i]`, as `transformers` builds it.
    pub fn tables(self, seq: usize) -> (Vec<i64>, Vec<i64>) {
        let span = self.span() as i64;
        let pairs = || (0..seq as i64).flat_map(|i| (0..seq as i64).map(move |j| (i, j)));
        let c2p = pairs().map(|(i, j)| self.index(i - j)).collect();
        let p2c = pairs().map(|(i, j)| (-self.bucket(i - j) + span).clamp(0, 2 * span - 1)).collect();
        (c2p, p2c)
    }
}

/// What every disentangled layer of one forward pass reads: the relative table, normalised, and
/// each pair's row in it.
#[derive(Debug, Clone)]
pub struct RelativeInputs {
    /// `[2 × span, hidden]`: the encoder's `rel_embeddings`, after its LayerNorm where it has one.
    pub table: Tensor<2>,
    /// `[1, 1, seq, seq]`: the row content-to-position reads for query `i`, key `j`.
    pub c2p: Tensor<4, Int>,
    /// `[1, 1, seq, seq]`: the row position-to-content reads at key `i` for query `j`.
    pub p2c: Tensor<4, Int>,
}

impl RelativeInputs {
    /// The inputs for `seq` tokens.
    ///
    /// # Shapes
    /// - `table`: `[2 × span, hidden]`
    pub fn new(table: Tensor<2>, positions: RelativePositions, seq: usize) -> Self {
        let device = table.device();
        let (c2p, p2c) = positions.tables(seq);
        let rows = |v: Vec<i64>| Tensor::<4, Int>::from_data(TensorData::new(v, [1, 1, seq, seq]), &device);
        Self { table, c2p: rows(c2p), p2c: rows(p2c) }
    }
}

/// Multi-head self-attention with content-to-position and position-to-content terms
/// (`attention.self`: `query_proj`, `key_proj`, `value_proj`, and where the position
/// projections are not shared, `pos_key_proj` / `pos_query_proj`).
#[derive(Module, Debug)]
pub struct DisentangledSelfAttention {
    pub query_proj: Linear,
    pub key_proj: Linear,
    pub value_proj: Linear,
    /// Projects the relative table into keys for content to position, where not shared.
    pub pos_key_proj: Option<Linear>,
    /// Projects the relative table into queries for position to content, where not shared.
    pub pos_query_proj: Option<Linear>,
    /// Dropout on the attention probabilities.
    pub dropout: Dropout,
    /// Dropout on the relative table before it is projected (`pos_dropout`).
    pub pos_dropout: Dropout,
    #[module(skip)]
    c2p: bool,
    #[module(skip)]
    p2c: bool,
    #[module(skip)]
    share_att_key: bool,
    num_heads: usize,
    head_dim: usize,
}

impl DisentangledSelfAttention {
    /// A fresh attention of `config`'s DeBERTa, initialised as `transformers` draws it (normal,
    /// std `initializer_range`; biases zero).
    pub fn init(config: &BertConfig, device: &Device) -> Self {
        let (h, std) = (config.hidden_size, config.initializer_range);
        let c2p = config.adds_position_term(PositionAttention::C2p);
        let p2c = config.adds_position_term(PositionAttention::P2c);
        let share_att_key = config.share_att_key == Some(true);
        let relative = config.reads_relative_positions();
        Self {
            query_proj: init_linear(h, h, std, device),
            key_proj: init_linear(h, h, std, device),
            value_proj: init_linear(h, h, std, device),
            pos_key_proj: (relative && c2p && !share_att_key).then(|| init_linear(h, h, std, device)),
            pos_query_proj: (relative && p2c && !share_att_key).then(|| init_linear(h, h, std, device)),
            dropout: DropoutConfig::new(config.attention_probs_dropout_prob).init(),
            pos_dropout: DropoutConfig::new(config.hidden_dropout_prob).init(),
            c2p,
            p2c,
            share_att_key,
            num_heads: config.num_attention_heads,
            head_dim: config.head_dim(),
        }
    }

    /// `[rows, hidden]` → `[heads, rows, head_dim]`: the relative table's rows projected and
    /// split into heads.
    fn table_heads(&self, projection: &Linear, table: Tensor<2>) -> Tensor<3> {
        let rows = table.dims()[0];
        linear(projection, table).reshape([rows, self.num_heads, self.head_dim]).swap_dims(0, 1)
    }

    /// # Shapes
    /// - `hidden`: `[batch, seq, hidden]`; `mask`: `[batch, 1, seq, seq]` additive; `relative`:
    ///   see [`RelativeInputs`]
    /// - output: context `[batch, seq, hidden]` and probabilities `[batch, heads, seq, seq]`
    pub fn forward(&self, hidden: Tensor<3>, mask: Tensor<4>, relative: Option<&RelativeInputs>) -> (Tensor<3>, Tensor<4>) {
        let [batch, seq, width] = hidden.dims();
        let heads = self.num_heads;
        let split = |x: Tensor<3>| x.reshape([batch, seq, heads, self.head_dim]).swap_dims(1, 2);
        let q = split(linear(&self.query_proj, hidden.clone()));
        let k = split(linear(&self.key_proj, hidden.clone()));
        let v = split(linear(&self.value_proj, hidden));
        let mut scores = matmul(q.clone(), k.clone().swap_dims(2, 3));
        // The scale counts `pos_att_type`'s terms even where no relative positions are read
        // (`relative_attention` false), as `transformers` scales.
        let terms = 1 + usize::from(self.c2p) + usize::from(self.p2c);
        if let Some(relative) = relative.filter(|_| self.c2p || self.p2c) {
            let table = dropout::forward(&self.pos_dropout, relative.table.clone());
            let shape = [batch, heads, seq, seq];
            if self.c2p {
                let projection = if self.share_att_key { &self.key_proj } else { self.pos_key_proj.as_ref().expect("c2p has its key projection") };
                let pos_key = self.table_heads(projection, table.clone());
                // Every query against every distance row, then each pair's own row.
                let by_row = against_rows(q, pos_key);
                scores = scores + by_row.gather(3, relative.c2p.clone().expand(shape));
            }
            if self.p2c {
                let projection = if self.share_att_key { &self.query_proj } else { self.pos_query_proj.as_ref().expect("p2c has its query projection") };
                let pos_query = self.table_heads(projection, table);
                // Every key against every distance row, gathered at the key's rows, turned to
                // [query, key].
                let by_row = against_rows(k, pos_query);
                scores = scores + by_row.gather(3, relative.p2c.clone().expand(shape)).swap_dims(2, 3);
            }
        }
        // Every term shares the scale, so it is applied once, in the softmax.
        let scale = 1.0 / ((self.head_dim * terms) as f32).sqrt() as f64;
        let probs = scaled_masked_softmax(scores, mask, scale);
        let context = matmul(dropout::forward(&self.dropout, probs.clone()), v);
        (context.swap_dims(1, 2).reshape([batch, seq, width]), probs)
    }
}

/// Every vector of `x` against every row of a relative table's heads, head by head.
///
/// The batch is folded into the rows (`[heads, batch × seq, d]`) rather than the table broadcast
/// over the batch: the table's gradient then needs no sum over the batch of a transposed view,
/// which burn 0.22.1 computes wrongly on wgpu for some shapes (the device check found it; see
/// `wgpu_native.rs`).
///
/// # Shapes
/// - `x`: `[batch, heads, seq, d]`; `rows`: `[heads, rows, d]`
/// - output: `[batch, heads, seq, rows]`
fn against_rows(x: Tensor<4>, rows: Tensor<3>) -> Tensor<4> {
    let [batch, heads, seq, d] = x.dims();
    let n = rows.dims()[1];
    let folded = x.swap_dims(0, 1).reshape([heads, batch * seq, d]);
    matmul(folded, rows.swap_dims(1, 2)).reshape([heads, batch, seq, n]).swap_dims(0, 1)
}

/// Disentangled self-attention and its output block (`attention`: `self`, `output`).
#[derive(Module, Debug)]
pub struct DebertaV2Attention {
    /// The attention itself (`attention.self`).
    pub self_attn: DisentangledSelfAttention,
    /// Projection, residual and LayerNorm, as BERT's.
    pub output: BertSelfOutput,
}

impl DebertaV2Attention {
    /// A fresh block of `config`'s DeBERTa.
    pub fn init(config: &BertConfig, device: &Device) -> Self {
        Self {
            self_attn: DisentangledSelfAttention::init(config, device),
            output: BertSelfOutput::init(config.hidden_size, config.hidden_size, config, device),
        }
    }

    /// # Shapes
    /// - `hidden`: `[batch, seq, hidden]`; `mask`: `[batch, 1, seq, seq]`
    /// - output: `[batch, seq, hidden]` and probabilities `[batch, heads, seq, seq]`
    pub fn forward(&self, hidden: Tensor<3>, mask: Tensor<4>, relative: Option<&RelativeInputs>) -> (Tensor<3>, Tensor<4>) {
        let (context, probs) = self.self_attn.forward(hidden.clone(), mask, relative);
        (self.output.forward(context, hidden), probs)
    }
}

/// The relative table every layer reads (the encoder's `rel_embeddings`), after its LayerNorm
/// (`encoder.LayerNorm`) where the model has one.
///
/// # Shapes
/// - output: `[2 × span, hidden]`
pub fn normalised_table(rel_embeddings: &burn::nn::Embedding, norm: Option<&LayerNorm>) -> Tensor<2> {
    let table = rel_embeddings.weight.val();
    match norm {
        Some(norm) => norm.forward(table),
        None => table,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DeBERTa-v3's buckets (256 each side, reaching 512) and the test model's (32, reaching 64)
    /// where the rule changes, as `make_log_bucket_position` gives them (transformers 5.24); the
    /// families test checks every distance to ±600 against the function itself.
    #[test]
    fn near_distances_are_exact_and_far_ones_log_bucketed() {
        let small = RelativePositions { buckets: Some(32), reach: 64 };
        let b = |r| small.bucket(r);
        assert_eq!([b(0), b(1), b(15), b(16), b(17), b(20), b(40), b(63), b(64), b(100), b(600)], [0, 1, 15, 16, 17, 19, 27, 31, 32, 37, 56]);
        assert_eq!([b(-17), b(-63), b(-600)], [-17, -31, -56]);
        assert_eq!((small.span(), small.index(0), small.index(600), small.index(-600)), (32, 32, 63, 0));
        let v3 = RelativePositions { buckets: Some(256), reach: 512 };
        assert_eq!([v3.bucket(128), v3.bucket(129), v3.bucket(511), v3.bucket(-511)], [128, 129, 255, -255]);
        // Without buckets a distance is its own row, clipped at the reach.
        let plain = RelativePositions { buckets: None, reach: 24 };
        assert_eq!([plain.index(0), plain.index(5), plain.index(30), plain.index(-30)], [24, 29, 47, 0]);
        let (c2p, p2c) = plain.tables(3);
        assert_eq!(c2p, vec![24, 23, 22, 25, 24, 23, 26, 25, 24]);
        assert_eq!(p2c, vec![24, 25, 26, 23, 24, 25, 22, 23, 24]);
    }

    /// With a table of zeros (and zero biases on the position projections) the position terms
    /// vanish: the attention is BERT's with the scale of three terms.
    #[test]
    fn without_position_signal_it_is_scaled_content_attention() {
        let device = Device::flex();
        let config = crate::bert::config::Preset::Tiny
            .config(20)
            .with_model_type(crate::bert::family::Family::DebertaV2)
            .with_hidden_size(8)
            .with_num_attention_heads(2)
            .with_pos_att_type(Some(vec![PositionAttention::C2p, PositionAttention::P2c]))
            .with_share_att_key(Some(false))
            .without_dropout();
        let mut attn = DisentangledSelfAttention::init(&config, &device);
        for projection in [attn.pos_key_proj.as_mut(), attn.pos_query_proj.as_mut()].into_iter().flatten() {
            projection.bias = None;
        }
        let x = Tensor::<3>::random([1, 4, 8], burn::tensor::Distribution::Normal(0.0, 1.0), &device);
        let mask = Tensor::<4>::zeros([1, 1, 4, 4], &device);
        let relative = RelativeInputs::new(Tensor::zeros([8, 8], &device), RelativePositions { buckets: None, reach: 4 }, 4);
        let (_, probs) = attn.forward(x.clone(), mask.clone(), Some(&relative));
        let q = linear(&attn.query_proj, x.clone()).reshape([1, 4, 2, 4]).swap_dims(1, 2);
        let k = linear(&attn.key_proj, x).reshape([1, 4, 2, 4]).swap_dims(1, 2);
        let want = burn::tensor::activation::softmax(q.matmul(k.swap_dims(2, 3)) / (12f32).sqrt(), 3);
        let (got, want) = (probs.into_data().try_to_vec::<f32>().unwrap(), want.into_data().try_to_vec::<f32>().unwrap());
        assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-6), "{got:?} vs {want:?}");
    }
}
