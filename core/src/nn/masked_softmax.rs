//! Attention's softmax: scale, mask and normalise in one pass, with a one-pass backward on the
//! CPU.
//!
//! Attention turns its scores into probabilities with `softmax(scores / √d + mask)`. Under
//! `Autodiff`, burn differentiates that as written: a division, an addition and the decomposed
//! softmax (max, subtract, exp, sum, divide), seven tracked tensors of `[batch, heads, seq, seq]`
//! a layer, and an exponential recomputed on the way back. Here the forward pass reads the
//! scores and the mask once and writes the probabilities, and the backward pass needs only them:
//! `dx = scale · y ⊙ (dy − Σ dy ⊙ y)` along each row. On the GPU both directions are burn's ops
//! (the trait's defaults).

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind, unary};
use burn::backend::flex::FlexTensor;
use burn::backend::ops::ActivationOps;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Autodiff, Backend, Dispatch, Flex, TensorMetadata, backend_extension};
use burn::prelude::*;
use burn::tensor::DType;

#[cfg(any(feature = "wgpu", feature = "cuda"))]
use burn::backend::Cube;

use crate::cpu::{exp_nonpositive, map_split, sum_pairs, values};

/// Softmax over the last dimension of `x · scale + mask`, and its backward pass.
#[backend_extension(Flex, Cube: cfg(any(feature = "wgpu", feature = "cuda")), Autodiff)]
pub trait SoftmaxBackend: Backend {
    /// `softmax(x · scale + mask)` along the last dimension; `mask` broadcasts to `x`'s shape.
    /// By default in the backend's ops.
    fn scaled_masked_softmax(x: FloatTensor<Self>, mask: FloatTensor<Self>, scale: f64) -> FloatTensor<Self> {
        forward_in_ops::<Self>(x, mask, scale)
    }

    /// `scale · y ⊙ (grad − Σ grad ⊙ y)` along the last dimension, from the probabilities `y`.
    /// By default in the backend's ops.
    fn scaled_softmax_backward(y: FloatTensor<Self>, grad: FloatTensor<Self>, scale: f64) -> FloatTensor<Self> {
        backward_in_ops::<Self>(y, grad, scale)
    }
}

/// [`SoftmaxBackend::scaled_masked_softmax`] in tensor ops.
fn forward_in_ops<B: Backend>(x: FloatTensor<B>, mask: FloatTensor<B>, scale: f64) -> FloatTensor<B> {
    let shape = x.shape();
    let last = shape.num_dims() - 1;
    let mask = B::float_expand(mask, shape);
    <B as ActivationOps<B>>::softmax(B::float_add(B::float_mul_scalar(x, scale.into()), mask), last)
}

/// [`SoftmaxBackend::scaled_softmax_backward`] in tensor ops.
fn backward_in_ops<B: Backend>(y: FloatTensor<B>, grad: FloatTensor<B>, scale: f64) -> FloatTensor<B> {
    let last = y.shape().num_dims() - 1;
    let dot = B::float_sum_dim(B::float_mul(grad.clone(), y.clone()), last);
    B::float_mul_scalar(B::float_mul(y, B::float_sub(grad, dot)), scale.into())
}

/// burn's CPU backend: both passes a row at a time, for f32 scores `[batch, heads, seq, seq]`
/// and a mask of `[batch, 1 or heads, seq, seq]` with any strides (padding masks are expanded
/// views). Other shapes and dtypes go through the ops.
impl SoftmaxBackend for Flex {
    fn scaled_masked_softmax(x: FloatTensor<Self>, mask: FloatTensor<Self>, scale: f64) -> FloatTensor<Self> {
        let Some(mask_index) = MaskIndex::new(&x, &mask) else {
            return forward_in_ops::<Self>(x, mask, scale);
        };
        let shape = x.layout().shape().clone();
        let width = shape[3];
        let xs = values(&x);
        let mask_values = mask.storage::<f32>();
        let mut out = vec![0.0; xs.len()];
        map_split(&xs, None, &mut out, width, 0, &|first_row, x, _, out| {
            for (i, (x, out)) in x.chunks_exact(width).zip(out.chunks_exact_mut(width)).enumerate() {
                let row = first_row + i;
                let start = mask_index.at(row, 0);
                if mask_index.strides[3] == 1 {
                    softmax_row(x, &mask_values[start..start + width], scale as f32, out);
                } else {
                    let mask: Vec<f32> = (0..width).map(|j| mask_values[mask_index.at(row, j)]).collect();
                    softmax_row(x, &mask, scale as f32, out);
                }
            }
        });
        FlexTensor::from_data(TensorData::new(out, shape))
    }

    fn scaled_softmax_backward(y: FloatTensor<Self>, grad: FloatTensor<Self>, scale: f64) -> FloatTensor<Self> {
        let shape = y.layout().shape().clone();
        let width = shape.last().copied().unwrap_or(0);
        if y.dtype() != DType::F32 || grad.dtype() != DType::F32 || &shape != grad.layout().shape() || width == 0 {
            return backward_in_ops::<Self>(y, grad, scale);
        }
        let (ys, gs) = (values(&y), values(&grad));
        let mut out = vec![0.0; ys.len()];
        let scale = scale as f32;
        map_split(&ys, Some(&gs), &mut out, width, 0, &|_, y, grad, out| {
            let grad = grad.expect("a gradient");
            for ((y, grad), out) in y.chunks_exact(width).zip(grad.chunks_exact(width)).zip(out.chunks_exact_mut(width)) {
                let dot = sum_pairs(y, grad, |y, g| y * g);
                for ((o, &y), &g) in out.iter_mut().zip(y).zip(grad) {
                    *o = scale * y * (g - dot);
                }
            }
        });
        FlexTensor::from_data(TensorData::new(out, shape))
    }
}

/// Where row `row`, column `j` of the scores finds its mask value.
struct MaskIndex {
    heads: usize,
    seq: usize,
    start: isize,
    strides: [isize; 4],
}

impl MaskIndex {
    /// For f32 `x` of `[batch, heads, seq, width]` and a mask of `[batch, 1 or heads, seq,
    /// width]`; `None` for anything else.
    fn new(x: &FlexTensor, mask: &FlexTensor) -> Option<Self> {
        let (xs, ms) = (x.layout().shape(), mask.layout().shape());
        let fits = x.dtype() == DType::F32
            && mask.dtype() == DType::F32
            && xs.num_dims() == 4
            && ms.num_dims() == 4
            && ms[0] == xs[0]
            && (ms[1] == 1 || ms[1] == xs[1])
            && ms[2] == xs[2]
            && ms[3] == xs[3]
            && xs[3] > 0;
        if !fits {
            return None;
        }
        let s = mask.layout().strides();
        // A single head in the mask: every head reads it.
        let head_stride = if ms[1] == 1 { 0 } else { s[1] };
        Some(Self { heads: xs[1], seq: xs[2], start: mask.layout().start_offset() as isize, strides: [s[0], head_stride, s[2], s[3]] })
    }

    #[inline(always)]
    fn at(&self, row: usize, j: usize) -> usize {
        let (query, rest) = (row % self.seq, row / self.seq);
        let (head, batch) = (rest % self.heads, rest / self.heads);
        let s = &self.strides;
        (self.start + batch as isize * s[0] + head as isize * s[1] + query as isize * s[2] + j as isize * s[3]) as usize
    }
}

/// One row: `out = softmax(x · scale + mask)`. A NaN score makes the row NaN (an exponential
/// that saturates would otherwise hide it). Written in lanes of eight so that it vectorises.
#[inline(always)]
fn softmax_row(x: &[f32], mask: &[f32], scale: f32, out: &mut [f32]) {
    let mut max = [f32::NEG_INFINITY; 8];
    let mut nan = [false; 8];
    let (mut cx, mut cm) = (x.chunks_exact(8), mask.chunks_exact(8));
    let mut co = out.chunks_exact_mut(8);
    for ((x, m), o) in (&mut cx).zip(&mut cm).zip(&mut co) {
        for l in 0..8 {
            let z = x[l] * scale + m[l];
            nan[l] |= z.is_nan();
            max[l] = if z > max[l] { z } else { max[l] };
            o[l] = z;
        }
    }
    let mut row_max = max.iter().fold(f32::NEG_INFINITY, |a, &b| if b > a { b } else { a });
    let mut row_nan = nan.iter().any(|&n| n);
    for ((&x, &m), o) in cx.remainder().iter().zip(cm.remainder()).zip(co.into_remainder()) {
        let z = x * scale + m;
        row_nan |= z.is_nan();
        row_max = if z > row_max { z } else { row_max };
        *o = z;
    }
    if row_nan || row_max == f32::INFINITY {
        out.fill(f32::NAN);
        return;
    }
    for o in out.iter_mut() {
        *o = exp_nonpositive(*o - row_max);
    }
    let inv = 1.0 / sum_pairs(out, out, |a, _| a);
    for o in out.iter_mut() {
        *o *= inv;
    }
}

/// WebGPU, Vulkan, CUDA: burn's ops both ways (the trait's defaults).
#[cfg(any(feature = "wgpu", feature = "cuda"))]
impl SoftmaxBackend for Cube {}

/// Autodiff: the mask is a constant; the backward pass reads the kept probabilities.
impl<B: Backend + SoftmaxBackend, C: CheckpointStrategy> SoftmaxBackend for Autodiff<B, C> {
    fn scaled_masked_softmax(x: FloatTensor<Self>, mask: FloatTensor<Self>, scale: f64) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct ScaledMaskedSoftmax {
            scale: f64,
        }

        impl<B: Backend + SoftmaxBackend> Backward<B, 1> for ScaledMaskedSoftmax {
            /// The probabilities.
            type State = FloatTensor<B>;

            fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _checkpointer: &mut Checkpointer) {
                let (y, scale) = (ops.state, self.scale);
                unary::<B, _>(ops.parents, ops.node, grads, |grad| B::scaled_softmax_backward(y, grad, scale));
            }
        }

        let mask = mask.into_primitive();
        match (ScaledMaskedSoftmax { scale }).prepare::<C>([x.node()]).compute_bound().stateful() {
            OpsKind::Tracked(prep) => {
                let y = B::scaled_masked_softmax(x.into_primitive(), mask, scale);
                prep.finish(y.clone(), y)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::scaled_masked_softmax(x.into_primitive(), mask, scale)),
        }
    }
}

/// `softmax(x · scale + mask)` along the last dimension; the mask gets no gradient.
///
/// # Shapes
/// - `x`: `[batch, heads, seq, seq]`; `mask`: `[batch, 1, seq, seq]` (or `x`'s shape)
/// - output: `[batch, heads, seq, seq]`
pub fn scaled_masked_softmax(x: Tensor<4>, mask: Tensor<4>, scale: f64) -> Tensor<4> {
    Tensor::from_dispatch(<Dispatch as SoftmaxBackend>::scaled_masked_softmax(x.into_dispatch(), mask.into_dispatch(), scale))
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::Distribution;
    use burn::tensor::activation::softmax;

    use crate::bert::attention::{AttentionMask, additive_mask};

    fn padding(device: &Device) -> Tensor<4> {
        let rows: Vec<i64> = [[1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0, 0, 0, 0, 0]].concat();
        additive_mask(Tensor::<2, Int>::from_data(TensorData::new(rows, [3, 10]), device), AttentionMask::Bidirectional)
    }

    #[test]
    fn forward_and_backward_match_burns_softmax() {
        let device = Device::flex().autodiff();
        // 3 × 12 × 10 × 10 scores (enough to split over threads only with more rows: both
        // paths are taken across the two tests), padding masks as attention builds them.
        for (heads, mask) in [(12, padding(&device)), (2, additive_mask(Tensor::ones([3, 10], &device), AttentionMask::Causal))] {
            let x = Tensor::<4>::random([3, heads, 10, 10], Distribution::Normal(0.0, 4.0), &device).require_grad();
            let weights = Tensor::<4>::random([3, heads, 10, 10], Distribution::Uniform(-1.0, 1.0), &device);
            let scale = 1.0 / 8f64.sqrt();
            let ours = scaled_masked_softmax(x.clone(), mask.clone(), scale);
            let theirs = softmax(x.clone() * scale + mask.clone(), 3);
            let forward = (ours.clone() - theirs.clone()).abs().max().into_scalar::<f32>();
            assert!(forward < 1e-6, "forward: {forward}");
            let g_ours = (ours * weights.clone()).sum().backward();
            let g_theirs = (theirs * weights).sum().backward();
            let theirs = x.grad(&g_theirs).unwrap();
            let backward = (x.grad(&g_ours).unwrap() - theirs.clone()).abs().max().into_scalar::<f32>();
            assert!(backward < 1e-6, "backward: {backward}");
            assert!(theirs.abs().max().into_scalar::<f32>() > 1e-3, "the gradient is not zero");
        }
    }

    #[test]
    fn large_batches_split_over_threads_and_nan_is_not_hidden() {
        let device = Device::flex();
        let x = Tensor::<4>::random([3, 12, 64, 64], Distribution::Normal(0.0, 4.0), &device);
        let mask = additive_mask(Tensor::ones([3, 64], &device), AttentionMask::Causal);
        let ours = scaled_masked_softmax(x.clone(), mask.clone(), 0.5);
        let theirs = softmax(x.clone() * 0.5 + mask.clone(), 3);
        assert!((ours - theirs).abs().max().into_scalar::<f32>() < 1e-6);

        let nan = x.slice_assign([0..1, 0..1, 0..1, 5..6], Tensor::full([1, 1, 1, 1], f32::NAN, &device));
        let out = scaled_masked_softmax(nan, mask, 0.5).into_data().try_to_vec::<f32>().unwrap();
        assert!(out[..64].iter().all(|v| v.is_nan()), "the NaN row is NaN");
        assert!(out[64..].iter().all(|v| v.is_finite()), "other rows are not");
    }
}
