//! Rotary position embeddings (RoPE, Su et al. 2021), as ModernBERT's attention applies them: no
//! position is added to the embeddings; instead each query and key, head by head, is turned in
//! `head_dim / 2` planes by angles `position · θ^(−2j / head_dim)`, so that a query–key product
//! depends on how far apart the two tokens are. `θ` is the *base*: ModernBERT's global layers use
//! 160,000, its local ones 10,000.
//!
//! Also the local layers' window (`local_attention`): a token sees only the tokens within half the
//! window either side.

use burn::prelude::*;
use burn::tensor::TensorData;

use crate::bert::attention::MASK_VALUE;

/// The cosines and sines of every position's angles, for one base.
#[derive(Debug, Clone)]
pub struct RotaryTables {
    /// `[seq, head_dim]`: the angles of planes `0..head_dim/2`, repeated for the second half.
    pub cos: Tensor<2>,
    /// `[seq, head_dim]`, as `cos`.
    pub sin: Tensor<2>,
}

/// The tables for positions `0..seq` with base `theta`, computed in f32 as `transformers` does
/// (`inv_freq = 1 / θ^(2j/d)`, then `position · inv_freq`), so the angles agree to the last bit
/// or so at thousands of positions.
pub fn tables(theta: f64, head_dim: usize, seq: usize, device: &Device) -> RotaryTables {
    let half = head_dim / 2;
    let inv_freq: Vec<f32> = (0..half).map(|j| 1.0 / (theta as f32).powf((2 * j) as f32 / head_dim as f32)).collect();
    let mut cos = Vec::with_capacity(seq * head_dim);
    let mut sin = Vec::with_capacity(seq * head_dim);
    for position in 0..seq {
        let angles: Vec<f32> = inv_freq.iter().map(|f| position as f32 * f).collect();
        for _ in 0..2 {
            cos.extend(angles.iter().map(|a| a.cos()));
            sin.extend(angles.iter().map(|a| a.sin()));
        }
    }
    let table = |values: Vec<f32>| Tensor::<2>::from_data(TensorData::new(values, [seq, head_dim]), device);
    RotaryTables { cos: table(cos), sin: table(sin) }
}

/// Turns every head's vectors by their position's angles: `x · cos + rotate_half(x) · sin`, where
/// `rotate_half` maps the halves `(a, b)` to `(−b, a)`.
///
/// # Shapes
/// - `x`: `[batch, heads, seq, head_dim]`; `tables`: `[seq, head_dim]` each
/// - output: `[batch, heads, seq, head_dim]`
pub fn rotate(x: Tensor<4>, tables: &RotaryTables) -> Tensor<4> {
    let [batch, heads, seq, dim] = x.dims();
    let half = dim / 2;
    let first = x.clone().slice([0..batch, 0..heads, 0..seq, 0..half]);
    let second = x.clone().slice([0..batch, 0..heads, 0..seq, half..dim]);
    let rotated = Tensor::cat(vec![second.neg(), first], 3);
    let cos = tables.cos.clone().reshape([1, 1, seq, dim]).expand([batch, heads, seq, dim]);
    let sin = tables.sin.clone().reshape([1, 1, seq, dim]).expand([batch, heads, seq, dim]);
    x * cos + rotated * sin
}

/// The additive mask of a local layer: [`MASK_VALUE`] where query and key are more than `reach`
/// positions apart (`transformers`' bidirectional sliding window, `|q − k| ≤ local_attention / 2`).
///
/// # Shapes
/// - output: `[1, 1, seq, seq]`
pub fn window_mask(seq: usize, reach: usize, device: &Device) -> Tensor<4> {
    let values: Vec<f32> = (0..seq).flat_map(|q| (0..seq).map(move |k| if q.abs_diff(k) > reach { MASK_VALUE } else { 0.0 })).collect();
    Tensor::<4>::from_data(TensorData::new(values, [1, 1, seq, seq]), device)
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::Distribution;

    fn values<const D: usize>(t: Tensor<D>) -> Vec<f32> {
        t.into_data().try_to_vec::<f32>().unwrap()
    }

    /// A rotation keeps each vector's length, and a query–key product depends only on how far
    /// apart the two positions are.
    #[test]
    fn rotation_keeps_lengths_and_products_depend_on_distance() {
        let device = Device::flex();
        let t = tables(10_000.0, 8, 12, &device);
        let v = Tensor::<4>::random([1, 1, 1, 8], Distribution::Normal(0.0, 1.0), &device);
        let w = Tensor::<4>::random([1, 1, 1, 8], Distribution::Normal(0.0, 1.0), &device);
        let at = |x: &Tensor<4>| rotate(x.clone().expand([1, 1, 12, 8]), &t);
        let (rv, rw) = (at(&v), at(&w));
        let norms = values((rv.clone() * rv.clone()).sum_dim(3));
        let norm = values((v.clone() * v).sum())[0];
        assert!(norms.iter().all(|n| (n - norm).abs() < 1e-4 * norm.max(1.0)), "{norms:?} vs {norm}");
        let dots = values(rv.matmul(rw.swap_dims(2, 3)));
        let dot = |q: usize, k: usize| dots[q * 12 + k];
        for (a, b) in [((0, 3), (5, 8)), ((7, 2), (9, 4)), ((1, 1), (11, 11))] {
            assert!((dot(a.0, a.1) - dot(b.0, b.1)).abs() < 1e-4, "{a:?} {b:?}");
        }
        // Position 0 is not turned; position 1's first plane by 1 radian.
        let c = values(t.cos);
        assert_eq!(c[..8], [1.0; 8]);
        assert!((c[8] - 1f32.cos()).abs() < 1e-7);
    }

    #[test]
    fn the_window_masks_keys_beyond_its_reach() {
        let mask = values(window_mask(5, 1, &Device::flex()));
        let open: Vec<bool> = mask.iter().map(|&m| m == 0.0).collect();
        assert_eq!(&open[..5], &[true, true, false, false, false]);
        assert_eq!(&open[10..15], &[false, true, true, true, false]);
    }
}
