//! The model's linear layers, with their matrix product chosen per backend.
//!
//! Every dense layer (attention's query, key, value and output, the feed-forward pair, the
//! pooler and the heads) runs through [`linear`]: `x · W + b` with burn's `Linear` parameters,
//! its product a burn backend extension ([`MatmulBackend::batched_matmul`]), as are attention's
//! per-head products ([`matmul`]). On burn's CPU backend in WebAssembly the product is this
//! crate's kernel ([`gemm`]); on burn's GPU backend (WebGPU, Vulkan, CUDA) it is this crate's
//! register-tiled CubeCL kernel ([`tiled`]); natively on the CPU it is burn's own matmul. Autodiff gets a
//! hand-written backward pass (`dx = dy · Wᵀ`, `dW = xᵀ · dy`) whose products go through the same
//! extension, so training runs the faster kernels forwards and backwards.

pub mod gemm;
#[cfg(any(feature = "wgpu", feature = "cuda"))]
pub mod tiled;

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind, binary};
use burn::backend::autodiff::NodeId;
use burn::backend::ops::FloatTensorOps;
use burn::backend::tensor::FloatTensor;
use burn::tensor::DType;
use burn::backend::{Autodiff, Backend, Dispatch, Flex, backend_extension};
use burn::nn::{Initializer, Linear, LinearConfig};
use burn::prelude::*;

#[cfg(any(feature = "wgpu", feature = "cuda"))]
use burn::backend::Cube;

/// A matrix product that a backend may implement its own way.
#[backend_extension(Flex, Cube: cfg(any(feature = "wgpu", feature = "cuda")), Autodiff)]
pub trait MatmulBackend: Backend {
    /// `lhs [..., m, k] · rhs [..., k, n]` → `[..., m, n]`, the batch dimensions the same on both
    /// sides (no broadcasting). By default the backend's matmul.
    fn batched_matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::float_matmul(lhs, rhs)
    }
}

/// burn's CPU backend: this crate's kernel in WebAssembly, `gemm` natively (its AVX2/AVX-512
/// kernels with fused multiply-add are faster there).
impl MatmulBackend for Flex {
    #[cfg(target_family = "wasm")]
    fn batched_matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        flex_matmul(lhs, rhs)
    }
}

/// WebGPU, Vulkan, CUDA: the register-tiled kernel ([`tiled`]) where it applies, else the
/// backend's matmul.
#[cfg(any(feature = "wgpu", feature = "cuda"))]
impl MatmulBackend for Cube {
    fn batched_matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        if tiled::supports(&lhs, &rhs) {
            tiled::matmul(lhs, rhs)
        } else {
            Self::float_matmul(lhs, rhs)
        }
    }
}

/// The product's backward pass: `d lhs = d out · rhsᵀ`, `d rhs = lhsᵀ · d out`, both through
/// the inner backend's [`MatmulBackend::batched_matmul`] (transposes of the last two dimensions
/// are views, which the kernels read in place or copy as they need).
impl<B: Backend + MatmulBackend, C: CheckpointStrategy> MatmulBackend for Autodiff<B, C> {
    fn batched_matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct BatchedMatmul;

        impl<B: Backend + MatmulBackend> Backward<B, 2> for BatchedMatmul {
            /// The checkpointed operands each gradient needs: `lhs` for `d rhs`, `rhs` for `d lhs`.
            type State = (Option<NodeId>, Option<NodeId>);

            fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, checkpointer: &mut Checkpointer) {
                let (lhs, rhs) = ops.state;
                let lhs: Option<FloatTensor<B>> = lhs.map(|id| checkpointer.retrieve_node_output(id));
                let rhs: Option<FloatTensor<B>> = rhs.map(|id| checkpointer.retrieve_node_output(id));
                binary::<B, _, _>(
                    ops.parents,
                    ops.node,
                    grads,
                    |grad| B::batched_matmul(grad, B::float_transpose(rhs.expect("rhs is kept when lhs needs a gradient"))),
                    |grad| B::batched_matmul(B::float_transpose(lhs.expect("lhs is kept when rhs needs a gradient")), grad),
                );
            }
        }

        let (lhs_tracked, rhs_tracked) = (lhs.is_tracked(), rhs.is_tracked());
        match BatchedMatmul.prepare::<C>([lhs.node(), rhs.node()]).compute_bound().stateful() {
            OpsKind::Tracked(mut prep) => {
                let lhs_state = rhs_tracked.then(|| prep.checkpoint(&lhs));
                let rhs_state = lhs_tracked.then(|| prep.checkpoint(&rhs));
                prep.finish((lhs_state, rhs_state), B::batched_matmul(lhs.into_primitive(), rhs.into_primitive()))
            }
            OpsKind::UnTracked(prep) => prep.finish(B::batched_matmul(lhs.into_primitive(), rhs.into_primitive())),
        }
    }
}

/// `lhs [..., m, k] · rhs [..., k, n]` on burn's CPU backend with [`gemm::matmul`] (a batch,
/// attention's per-head products, with [`gemm::matmul_batch`]), reading either operand in place
/// whatever its strides (a transposed view, heads split off a sequence's width). Other dtypes,
/// and batch dimensions that differ (broadcasting), go to the backend's matmul.
pub fn flex_matmul(lhs: FloatTensor<Flex>, rhs: FloatTensor<Flex>) -> FloatTensor<Flex> {
    use burn::backend::flex::FlexTensor;
    let (ls, rs) = (lhs.layout().shape().clone(), rhs.layout().shape().clone());
    let rank = ls.num_dims();
    if lhs.dtype() != DType::F32 || rhs.dtype() != DType::F32 || rank < 2 || rs.num_dims() != rank || ls[..rank - 2] != rs[..rank - 2] {
        return Flex::float_matmul(lhs, rhs);
    }
    /// Batch entry `entry`'s matrix of `t` (entries counted row-major over the batch dimensions).
    fn view(t: &FlexTensor, entry: usize) -> gemm::MatRef<'_> {
        let layout = t.layout();
        let (shape, strides) = (layout.shape(), layout.strides());
        let rank = shape.num_dims();
        let (mut rest, mut offset) = (entry, layout.start_offset() as isize);
        for d in (0..rank - 2).rev() {
            offset += (rest % shape[d]) as isize * strides[d];
            rest /= shape[d];
        }
        gemm::MatRef {
            data: t.storage::<f32>(),
            offset: offset as usize,
            rows: shape[rank - 2],
            cols: shape[rank - 1],
            row_stride: strides[rank - 2],
            col_stride: strides[rank - 1],
        }
    }
    let entries = ls[..rank - 2].iter().product::<usize>();
    let values = if rank == 2 {
        gemm::matmul(view(&lhs, 0), view(&rhs, 0))
    } else {
        gemm::matmul_batch(&(0..entries).map(|e| (view(&lhs, e), view(&rhs, e))).collect::<Vec<_>>())
    };
    let mut shape = ls;
    shape[rank - 1] = rs[rank - 1];
    FlexTensor::from_data(TensorData::new(values, shape))
}

/// `x · W + b` for burn's `Linear` (`W` is `[d_in, d_out]`): `x [..., d_in]` → `[..., d_out]`.
/// The same function as `Linear::forward`, with the product through [`MatmulBackend`].
pub fn linear<const D: usize>(layer: &Linear, x: Tensor<D>) -> Tensor<D> {
    let mut dims = x.dims();
    let weight = layer.weight.val();
    let [d_in, d_out] = weight.dims();
    assert_eq!(dims[D - 1], d_in, "linear: input width {} for a {d_in}→{d_out} layer", dims[D - 1]);
    let rows = dims[..D - 1].iter().product::<usize>();
    let x = x.reshape([rows, d_in]);
    let y = matmul(x, weight);
    let y = match &layer.bias {
        Some(bias) => y + bias.val().unsqueeze::<2>(),
        None => y,
    };
    dims[D - 1] = d_out;
    y.reshape(dims)
}

/// `lhs [..., m, k] · rhs [..., k, n]` → `[..., m, n]` through [`MatmulBackend`]: the MLM
/// decoder's product with the transposed embedding table, and attention's per-head products.
/// Unlike `Tensor::matmul` the batch dimensions must be equal (no broadcasting).
///
/// # Panics
///
/// If the shapes do not fit.
pub fn matmul<const D: usize>(lhs: Tensor<D>, rhs: Tensor<D>) -> Tensor<D> {
    let (l, r) = (lhs.dims(), rhs.dims());
    assert!(
        D >= 2 && l[..D - 2] == r[..D - 2] && l[D - 1] == r[D - 2],
        "matmul: {l:?} · {r:?} (batch dimensions must be equal, inner dimensions must agree)"
    );
    Tensor::from_dispatch(<Dispatch as MatmulBackend>::batched_matmul(lhs.into_dispatch(), rhs.into_dispatch()))
}

/// A dense layer with BERT's initialisation: weights from `N(0, std²)`, bias zero.
pub fn init_linear(d_in: usize, d_out: usize, std: f64, device: &Device) -> Linear {
    LinearConfig::new(d_in, d_out)
        .with_initializer(Initializer::Normal { mean: 0.0, std })
        .init(device)
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::backend::flex::FlexTensor;
    use burn::module::Param;
    use burn::tensor::Distribution;

    fn layer(d_in: usize, d_out: usize, device: &Device) -> Linear {
        Linear {
            weight: Param::from_tensor(Tensor::random([d_in, d_out], Distribution::Uniform(-1.0, 1.0), device)),
            bias: Some(Param::from_tensor(Tensor::random([d_out], Distribution::Uniform(-1.0, 1.0), device))),
        }
    }

    /// The Flex tensor behind a tensor of the Flex device.
    fn flex<const D: usize>(t: Tensor<D>) -> FlexTensor {
        match t.into_dispatch().kind {
            burn::backend::DispatchTensorKind::Flex(inner) => inner.float(),
            _ => unreachable!("a flex tensor"),
        }
    }

    fn max_diff<const D: usize>(a: Tensor<D>, b: Tensor<D>) -> f32 {
        (a - b).abs().max().into_scalar()
    }

    #[test]
    fn forward_equals_burns_linear() {
        let device = Device::flex();
        let l = layer(24, 40, &device);
        let x = Tensor::<3>::random([3, 7, 24], Distribution::Uniform(-1.0, 1.0), &device);
        let d = max_diff(linear(&l, x.clone()), l.forward(x));
        assert!(d < 1e-5, "max abs difference {d}");
    }

    #[test]
    fn gradients_equal_burns_linear() {
        let device = Device::flex().autodiff();
        let l = layer(24, 40, &device);
        let x = Tensor::<3>::random([3, 7, 24], Distribution::Uniform(-1.0, 1.0), &device).require_grad();
        let target = Tensor::<3>::random([3, 7, 40], Distribution::Uniform(-1.0, 1.0), &device);
        let loss = |y: Tensor<3>| (y - target.clone()).powi_scalar(2).sum();

        let ours = loss(linear(&l, x.clone())).backward();
        let theirs = loss(l.forward(x.clone())).backward();
        let grad = |t: &Tensor<3>, g| t.grad(g).unwrap();
        assert!(max_diff(grad(&x, &ours), grad(&x, &theirs)) < 1e-4, "d x");
        let (w, b) = (l.weight.val(), l.bias.as_ref().unwrap().val());
        assert!(max_diff(w.grad(&ours).unwrap(), w.grad(&theirs).unwrap()) < 1e-4, "d W");
        assert!(max_diff(b.grad(&ours).unwrap(), b.grad(&theirs).unwrap()) < 1e-4, "d b");
    }

    #[test]
    fn only_tracked_operands_get_gradients() {
        // A frozen layer (no gradient on W) still passes one back to x, and a constant input
        // still gives W its gradient: each needs the other operand kept, and only that one.
        let device = Device::flex().autodiff();
        let l = layer(8, 5, &device);
        let frozen = Linear { weight: Param::from_tensor(l.weight.val().detach()).set_require_grad(false), bias: None };
        let x = Tensor::<2>::random([4, 8], Distribution::Uniform(-1.0, 1.0), &device).require_grad();
        let grads = linear(&frozen, x.clone()).sum().backward();
        assert!(x.grad(&grads).is_some(), "x needs its gradient");
        assert!(frozen.weight.val().grad(&grads).is_none(), "a frozen W has none");

        let x = Tensor::<2>::random([4, 8], Distribution::Uniform(-1.0, 1.0), &device);
        let grads = linear(&l, x.clone()).sum().backward();
        assert!(x.grad(&grads).is_none(), "a constant x has none");
        assert!(l.weight.val().grad(&grads).is_some(), "W needs its gradient");
    }

    #[test]
    fn the_kernel_reads_flex_views_in_place() {
        // The backward pass hands the kernel transposed views; this is the path wasm builds take.
        let device = Device::flex();
        let a = Tensor::<2>::random([33, 70], Distribution::Uniform(-1.0, 1.0), &device);
        let b = Tensor::<2>::random([41, 70], Distribution::Uniform(-1.0, 1.0), &device);
        let expected = a.clone().matmul(b.clone().transpose());
        let bt = Flex::float_transpose(flex(b));
        assert!(!bt.layout().is_contiguous(), "the transpose is a view");
        let got = flex_matmul(flex(a), bt);
        let got = Tensor::<2>::from_data(got.into_data(), &device);
        assert!(max_diff(got, expected) < 1e-4);
    }

    #[test]
    fn the_kernel_takes_attentions_heads_as_a_batch() {
        // Queries and keys split into heads as attention splits them (a reshape and a swap of
        // dimensions: strided views), scores with the keys transposed, then the weighted values.
        let device = Device::flex();
        let (batch, seq, heads, dim) = (2, 9, 3, 4);
        let split = |t: Tensor<3>| t.reshape([batch, seq, heads, dim]).swap_dims(1, 2);
        let x = || Tensor::<3>::random([batch, seq, heads * dim], Distribution::Uniform(-1.0, 1.0), &device);
        let (q, k, v) = (split(x()), split(x()), split(x()));
        let back = |t: FlexTensor| Tensor::<4>::from_data(t.into_data(), &device);
        let kt = k.swap_dims(2, 3);
        let scores = back(flex_matmul(flex(q.clone()), flex(kt.clone())));
        assert_eq!(scores.dims(), [batch, heads, seq, seq]);
        assert!(max_diff(scores.clone(), q.matmul(kt)) < 1e-5, "scores");
        let context = back(flex_matmul(flex(scores.clone()), flex(v.clone())));
        assert!(max_diff(context, scores.matmul(v)) < 1e-4, "context");
    }
}
