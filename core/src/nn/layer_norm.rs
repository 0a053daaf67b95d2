//! LayerNorm with a one-pass backward on the CPU.
//!
//! burn's autodiff has no LayerNorm of its own: under `Autodiff` it differentiates the
//! decomposed one (mean, subtract, square, mean, add, square root, divide, scale, shift), nine
//! tracked tensors a call and their backward passes, each a walk over the whole activation and an
//! allocation. BERT has two LayerNorms a layer and one after the embeddings. Here the forward
//! pass is the backend's own fused kernel and the backward pass one walk over the rows, which
//! recomputes each row's mean and spread and gives the input's gradient and the row's share of
//! `γ`'s and `β`'s. On the GPU both directions are burn's ops (the trait's defaults). The module
//! stays burn's [`LayerNorm`], so checkpoints load as before.

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::NodeId;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::flex::FlexTensor;
use burn::backend::ops::ModuleOps;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Autodiff, Backend, Dispatch, Flex, TensorMetadata, backend_extension};
use burn::module::Param;
use burn::nn::Initializer;
use burn::prelude::*;
use burn::tensor::DType;

use crate::cpu::{sum_pairs, values};

#[cfg(any(feature = "wgpu", feature = "cuda"))]
use burn::backend::Cube;

/// LayerNorm over the last dimension and its gradients, which a backend may compute its own way.
#[backend_extension(Flex, Cube: cfg(any(feature = "wgpu", feature = "cuda")), Autodiff)]
pub trait LayerNormBackend: Backend {
    /// `(x − mean) / √(var + ε) · γ + β` over the last dimension. By default the backend's.
    fn layer_norm_last(x: FloatTensor<Self>, gamma: FloatTensor<Self>, beta: FloatTensor<Self>, epsilon: f64) -> FloatTensor<Self> {
        <Self as ModuleOps<Self>>::layer_norm(x, gamma, Some(beta), epsilon)
    }

    /// The gradients of `x`, `γ` and `β` given the output's, `grad`. By default in tensor ops:
    /// with `x̂` the normalised input and `g = grad · γ`,
    /// `dx = (g − mean(g) − x̂ · mean(g · x̂)) / √(var + ε)`, `dγ = Σ grad · x̂`, `dβ = Σ grad`.
    fn layer_norm_last_backward(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        epsilon: f64,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        backward_in_ops::<Self>(x, gamma, grad, epsilon)
    }
}

/// burn's CPU backend: its fused forward kernel, and the backward pass in one walk (f32 only).
impl LayerNormBackend for Flex {
    fn layer_norm_last_backward(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        epsilon: f64,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        let width = x.layout().shape().last().copied().unwrap_or(0);
        let f32s = [&x, &gamma, &grad].iter().all(|t| t.dtype() == DType::F32);
        if !f32s || width == 0 || x.layout().shape() != grad.layout().shape() || gamma.layout().shape().num_elements() != width {
            return backward_in_ops::<Self>(x, gamma, grad, epsilon);
        }
        let shape = x.layout().shape().clone();
        let (xs, gs, gamma) = (values(&x), values(&grad), values(&gamma));
        let mut dx = vec![0.0; xs.len()];
        let (d_gamma, d_beta) = backward_rows(&xs, &gs, &gamma, &mut dx, width, epsilon as f32);
        (
            FlexTensor::from_data(TensorData::new(dx, shape)),
            FlexTensor::from_data(TensorData::new(d_gamma, [width])),
            FlexTensor::from_data(TensorData::new(d_beta, [width])),
        )
    }
}

/// [`LayerNormBackend::layer_norm_last_backward`] in the backend's tensor ops.
fn backward_in_ops<B: Backend>(
    x: FloatTensor<B>,
    gamma: FloatTensor<B>,
    grad: FloatTensor<B>,
    epsilon: f64,
) -> (FloatTensor<B>, FloatTensor<B>, FloatTensor<B>) {
    let shape = x.shape();
    let width = shape[shape.num_dims() - 1];
    let rows = shape.num_elements() / width.max(1);
    let x = B::float_reshape(x, Shape::new([rows, width]));
    let grad = B::float_reshape(grad, Shape::new([rows, width]));
    let mean = B::float_mean_dim(x.clone(), 1);
    let centered = B::float_sub(x, mean);
    let var = B::float_mean_dim(B::float_mul(centered.clone(), centered.clone()), 1);
    let rstd = B::float_recip(B::float_sqrt(B::float_add_scalar(var, epsilon.into())));
    let normalized = B::float_mul(centered, rstd.clone());
    let d_beta = B::float_reshape(B::float_sum_dim(grad.clone(), 0), Shape::new([width]));
    let d_gamma = B::float_reshape(B::float_sum_dim(B::float_mul(grad.clone(), normalized.clone()), 0), Shape::new([width]));
    let g = B::float_mul(grad, B::float_reshape(gamma, Shape::new([1, width])));
    let mean_g = B::float_mean_dim(g.clone(), 1);
    let mean_gx = B::float_mean_dim(B::float_mul(g.clone(), normalized.clone()), 1);
    let dx = B::float_sub(B::float_sub(g, mean_g), B::float_mul(normalized, mean_gx));
    (B::float_reshape(B::float_mul(dx, rstd), shape), d_gamma, d_beta)
}

/// WebGPU, Vulkan, CUDA: burn's ops both ways (the trait's defaults).
#[cfg(any(feature = "wgpu", feature = "cuda"))]
impl LayerNormBackend for Cube {}

/// Autodiff: the forward pass untracked, the backward pass through the inner backend's
/// [`LayerNormBackend::layer_norm_last_backward`] from the kept input and `γ`.
impl<B: Backend + LayerNormBackend, C: CheckpointStrategy> LayerNormBackend for Autodiff<B, C> {
    fn layer_norm_last(x: FloatTensor<Self>, gamma: FloatTensor<Self>, beta: FloatTensor<Self>, epsilon: f64) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct LayerNormLast {
            epsilon: f64,
        }

        impl<B: Backend + LayerNormBackend> Backward<B, 3> for LayerNormLast {
            /// The input and `γ`.
            type State = (NodeId, NodeId);

            fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, checkpointer: &mut Checkpointer) {
                let [node_x, node_gamma, node_beta] = ops.parents;
                let grad = grads.consume::<B>(&ops.node);
                let x: FloatTensor<B> = checkpointer.retrieve_node_output(ops.state.0);
                let gamma: FloatTensor<B> = checkpointer.retrieve_node_output(ops.state.1);
                let (dx, d_gamma, d_beta) = B::layer_norm_last_backward(x, gamma, grad, self.epsilon);
                for (node, grad) in [(node_x, dx), (node_gamma, d_gamma), (node_beta, d_beta)] {
                    if let Some(node) = node {
                        grads.register::<B>(node.id, grad);
                    }
                }
            }
        }

        match (LayerNormLast { epsilon }).prepare::<C>([x.node(), gamma.node(), beta.node()]).compute_bound().stateful() {
            OpsKind::Tracked(mut prep) => {
                let state = (prep.checkpoint(&x), prep.checkpoint(&gamma));
                prep.finish(state, B::layer_norm_last(x.into_primitive(), gamma.into_primitive(), beta.into_primitive(), epsilon))
            }
            OpsKind::UnTracked(prep) => prep.finish(B::layer_norm_last(x.into_primitive(), gamma.into_primitive(), beta.into_primitive(), epsilon)),
        }
    }
}

/// LayerNorm over the last dimension, with the field names of burn's `LayerNorm` (so
/// checkpoints map `LayerNorm.weight`/`.bias` to `gamma`/`beta` as before) and its `ε` readable.
#[derive(Module, Debug)]
pub struct LayerNorm {
    /// Scale, `[width]` (`LayerNorm.weight` in the checkpoint).
    pub gamma: Param<Tensor<1>>,
    /// Shift, `[width]` (`LayerNorm.bias`); none where the checkpoint's LayerNorm has no bias
    /// (ModernBERT's `norm_bias: false`), which is a shift of zero that does not learn.
    pub beta: Option<Param<Tensor<1>>>,
    /// Added to the variance.
    pub epsilon: f64,
}

impl LayerNorm {
    /// The identity: `γ = 1`, `β = 0`.
    pub fn new(width: usize, epsilon: f64, device: &Device) -> Self {
        Self::with_bias(width, epsilon, true, device)
    }

    /// The identity, with a learned shift `β` or (`bias: false`) none.
    pub fn with_bias(width: usize, epsilon: f64, bias: bool, device: &Device) -> Self {
        Self {
            gamma: Initializer::Ones.init([width], device),
            beta: bias.then(|| Initializer::Zeros.init([width], device)),
            epsilon,
        }
    }

    /// # Shapes
    /// - `x`: `[..., width]`
    /// - output: the same
    pub fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let gamma = self.gamma.val();
        let beta = match &self.beta {
            Some(beta) => beta.val(),
            None => gamma.zeros_like(),
        };
        Tensor::from_dispatch(<Dispatch as LayerNormBackend>::layer_norm_last(
            x.into_dispatch(),
            gamma.into_dispatch(),
            beta.into_dispatch(),
            self.epsilon,
        ))
    }
}

/// The backward pass over rows of `width` values: writes `dx` and returns `(dγ, dβ)`. Above 64k
/// values the rows are halved, each half summing its own share of `dγ` and `dβ`, whether or not
/// the build has threads (the halves run side by side where it has), so one thread and two add
/// in the same order and give the same bits.
fn backward_rows(x: &[f32], grad: &[f32], gamma: &[f32], dx: &mut [f32], width: usize, epsilon: f32) -> (Vec<f32>, Vec<f32>) {
    const SERIAL: usize = 1 << 16;
    let rows = x.len() / width;
    if x.len() > SERIAL && rows >= 2 {
        let mid = rows / 2 * width;
        let (x1, x2) = x.split_at(mid);
        let (g1, g2) = grad.split_at(mid);
        let (d1, d2) = dx.split_at_mut(mid);
        let ((mut gamma_1, mut beta_1), (gamma_2, beta_2)) = crate::cpu::join(
            || backward_rows(x1, g1, gamma, d1, width, epsilon),
            || backward_rows(x2, g2, gamma, d2, width, epsilon),
        );
        gamma_1.iter_mut().zip(gamma_2).for_each(|(a, b)| *a += b);
        beta_1.iter_mut().zip(beta_2).for_each(|(a, b)| *a += b);
        return (gamma_1, beta_1);
    }
    let mut d_gamma = vec![0.0f32; width];
    let mut d_beta = vec![0.0f32; width];
    let mut g = vec![0.0f32; width];
    let n = width as f32;
    for ((x, grad), dx) in x.chunks_exact(width).zip(grad.chunks_exact(width)).zip(dx.chunks_exact_mut(width)) {
        let mean = sum_pairs(x, x, |v, _| v) / n;
        let var = sum_pairs(x, x, |v, _| (v - mean) * (v - mean)) / n;
        let rstd = 1.0 / (var + epsilon).sqrt();
        for (((g, &dy), &w), ((&v, dg), db)) in g.iter_mut().zip(grad).zip(gamma).zip(x.iter().zip(d_gamma.iter_mut()).zip(d_beta.iter_mut())) {
            *g = dy * w;
            *dg += dy * ((v - mean) * rstd);
            *db += dy;
        }
        let mean_g = sum_pairs(&g, &g, |g, _| g) / n;
        let mean_gx = sum_pairs(&g, x, |g, v| g * ((v - mean) * rstd)) / n;
        for ((d, &g), &v) in dx.iter_mut().zip(&g).zip(x) {
            *d = rstd * (g - mean_g - (v - mean) * rstd * mean_gx);
        }
    }
    (d_gamma, d_beta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::Distribution;

    /// burn's own LayerNorm, differentiated through its decomposition.
    fn reference(x: Tensor<3>, norm: &LayerNorm) -> Tensor<3> {
        burn::tensor::module::layer_norm(x, norm.gamma.val(), norm.beta.as_ref().map(|b| b.val()), norm.epsilon)
    }

    #[test]
    fn forward_and_gradients_match_burns_layer_norm() {
        let device = Device::flex().autodiff();
        // Rows of 384 with an offset and a spread, as BERT's residual sums have; enough rows to
        // split over threads; γ and β away from the identity.
        let mut norm = LayerNorm::new(384, 1e-12, &device);
        norm.gamma = Param::from_tensor(Tensor::random([384], Distribution::Normal(1.0, 0.3), &device));
        norm.beta = Some(Param::from_tensor(Tensor::random([384], Distribution::Normal(0.0, 0.3), &device)));
        let x = (Tensor::<3>::random([4, 64, 384], Distribution::Normal(0.0, 3.0), &device) + 2.0).require_grad();
        let weights = Tensor::<3>::random([4, 64, 384], Distribution::Uniform(-1.0, 1.0), &device);

        let ours = norm.forward(x.clone());
        let theirs = reference(x.clone(), &norm);
        let forward = (ours.clone() - theirs.clone()).abs().max().into_scalar::<f32>();
        assert!(forward < 1e-5, "forward: {forward}");

        let g_ours = (ours * weights.clone()).sum().backward();
        let g_theirs = (theirs * weights).sum().backward();
        let diff = |a: Tensor<1>, b: Tensor<1>| (a - b).abs().max().into_scalar::<f32>();
        let dx = (x.grad(&g_ours).unwrap() - x.grad(&g_theirs).unwrap()).abs().max().into_scalar::<f32>();
        let scale = x.grad(&g_theirs).unwrap().abs().max().into_scalar::<f32>();
        assert!(scale > 0.01 && dx < 1e-5 * scale.max(1.0), "dx: {dx} (scale {scale})");
        let dg = diff(norm.gamma.grad(&g_ours).unwrap(), norm.gamma.grad(&g_theirs).unwrap());
        let beta = norm.beta.as_ref().unwrap();
        let db = diff(beta.grad(&g_ours).unwrap(), beta.grad(&g_theirs).unwrap());
        assert!(dg < 1e-3 && db < 1e-3, "dγ: {dg}, dβ: {db}");
        assert!(norm.gamma.grad(&g_ours).unwrap().abs().max().into_scalar::<f32>() > 1.0, "dγ is not zero");
    }

    #[test]
    fn the_fast_backward_matches_the_one_in_tensor_ops() {
        // The same rows through both of Flex's paths: the walk, and the ops (as on the GPU).
        let device = Device::flex();
        let x = Tensor::<2>::random([300, 48], Distribution::Normal(0.5, 2.0), &device);
        let gamma = Tensor::<1>::random([48], Distribution::Normal(1.0, 0.5), &device);
        let grad = Tensor::<2>::random([300, 48], Distribution::Normal(0.0, 1.0), &device);
        let prim = |t: Tensor<2>| t.into_dispatch();
        let fast = <Dispatch as LayerNormBackend>::layer_norm_last_backward(prim(x.clone()), gamma.clone().into_dispatch(), prim(grad.clone()), 1e-5);
        let ops = backward_in_ops::<Dispatch>(prim(x), gamma.into_dispatch(), prim(grad), 1e-5);
        let d2 = |a, b| (Tensor::<2>::from_dispatch(a) - Tensor::<2>::from_dispatch(b)).abs().max().into_scalar::<f32>();
        let d1 = |a, b| (Tensor::<1>::from_dispatch(a) - Tensor::<1>::from_dispatch(b)).abs().max().into_scalar::<f32>();
        assert!(d2(fast.0, ops.0) < 1e-5);
        assert!(d1(fast.1, ops.1) < 1e-4);
        assert!(d1(fast.2, ops.2) < 1e-4);
    }
}
