//! Relative position bias (MPNet; the bucketing of T5, Raffel et al. 2020): one learned number
//! per attention head and per *bucket* of the distance between query and key, added to every
//! layer's attention scores. Near distances each have a bucket of their own; far ones share
//! buckets that grow logarithmically, up to `max_distance`, beyond which all fall in the last.
//! Half the buckets are for keys to the left of the query, half for keys to the right.
//!
//! The table is the encoder's `relative_attention_bias` (`[buckets, heads]`), computed once per
//! forward pass and shared by every layer, as MPNet's encoder does.

use burn::nn::{Embedding, EmbeddingConfig, Initializer};
use burn::prelude::*;
use burn::tensor::TensorData;

/// How distances are bucketed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelativeBuckets {
    /// Buckets for both directions together (MPNet: 32).
    pub num_buckets: usize,
    /// The distance from which every key falls in its direction's last bucket (MPNet: 128).
    pub max_distance: usize,
}

impl RelativeBuckets {
    /// MPNet's: its encoder calls the bucketing with these whatever its config says.
    pub const MPNET: RelativeBuckets = RelativeBuckets { num_buckets: 32, max_distance: 128 };

    /// The bucket of a key `relative` positions after its query (negative: before it).
    pub fn bucket(self, relative: i64) -> usize {
        let half = self.num_buckets / 2;
        // Keys to the left of the query (n > 0) count from 0, keys to the right from `half`.
        let n = -relative;
        let side = if n < 0 { half } else { 0 };
        let n = n.unsigned_abs() as usize;
        let exact = half / 2;
        if n < exact {
            return side + n;
        }
        // Logarithmic beyond: exact + ⌊log(n / exact) / log(max / exact) · (half − exact)⌋.
        // The small margin lands the distances where the value is a whole number in exact
        // arithmetic (16, 32, 64 for MPNet) on it, as `transformers`' f32 computation does.
        let scaled = ((n as f64 / exact as f64).ln() / (self.max_distance as f64 / exact as f64).ln()) * (half - exact) as f64;
        side + (exact + (scaled + 1e-6).floor() as usize).min(half - 1)
    }

    /// Every query–key pair's bucket for a sequence of `seq` tokens, row-major `[query, key]`.
    pub fn table(self, seq: usize) -> Vec<i64> {
        (0..seq).flat_map(|q| (0..seq).map(move |k| self.bucket(k as i64 - q as i64) as i64)).collect()
    }
}

/// A fresh bias table: `buckets` rows of one value per head, initialised as `transformers`
/// initialises an embedding (normal, std `initializer_range`).
pub fn init_table(buckets: usize, heads: usize, initializer_range: f64, device: &Device) -> Embedding {
    EmbeddingConfig::new(buckets, heads)
        .with_initializer(Initializer::Normal { mean: 0.0, std: initializer_range })
        .init(device)
}

/// The bias every layer adds to its scaled attention scores.
///
/// # Shapes
/// - `table`: `[buckets, heads]` (an embedding)
/// - output: `[1, heads, seq, seq]`
pub fn position_bias(table: &Embedding, buckets: RelativeBuckets, seq: usize) -> Tensor<4> {
    let device = table.weight.device();
    let ids = Tensor::<2, Int>::from_data(TensorData::new(buckets.table(seq), [seq, seq]), &device);
    // [seq, seq, heads] → [heads, seq, seq]
    let values = table.forward(ids).permute([2, 0, 1]);
    let heads = values.dims()[0];
    values.reshape([1, heads, seq, seq])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MPNet's buckets at the distances where the rule changes, as
    /// `MPNetEncoder.relative_position_bucket` gives them (transformers 5.24); the families test
    /// checks every distance up to 600 against the same function in `expected.json`.
    #[test]
    fn mpnet_buckets_near_are_exact_and_far_are_logarithmic() {
        let b = |r| RelativeBuckets::MPNET.bucket(r);
        // Keys before the query: 0..16; after it: 16..32.
        assert_eq!([b(0), b(-1), b(-7), b(-8), b(-15), b(-16), b(-17), b(-31), b(-32), b(-63), b(-64), b(-128), b(-1000)], [0, 1, 7, 8, 9, 10, 10, 11, 12, 13, 14, 15, 15]);
        assert_eq!([b(1), b(7), b(8), b(15), b(16), b(17), b(31), b(32), b(33), b(63), b(64), b(65), b(127), b(128), b(129)], [17, 23, 24, 25, 26, 26, 27, 28, 28, 29, 30, 30, 31, 31, 31]);
        let table = RelativeBuckets::MPNET.table(3);
        assert_eq!(table, vec![0, 17, 18, 1, 0, 17, 2, 1, 0]);
    }

    #[test]
    fn the_bias_is_the_table_row_of_each_pairs_bucket_per_head() {
        let device = Device::flex();
        let table = init_table(32, 2, 1.0, &device);
        let bias = position_bias(&table, RelativeBuckets::MPNET, 3);
        assert_eq!(bias.dims(), [1, 2, 3, 3]);
        let rows = table.weight.val().into_data().try_to_vec::<f32>().unwrap();
        let got = bias.into_data().try_to_vec::<f32>().unwrap();
        for (head, q, k) in (0..2).flat_map(|h| (0..3).flat_map(move |q| (0..3).map(move |k| (h, q, k)))) {
            let bucket = RelativeBuckets::MPNET.bucket(k as i64 - q as i64);
            assert_eq!(got[(head * 3 + q) * 3 + k], rows[bucket * 2 + head]);
        }
    }
}
