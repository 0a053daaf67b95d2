//! The activations `config.json` names ([`HiddenAct`]), and GELU (the exact, erf-based one BERT uses) with a fast CPU implementation.
//!
//! burn's CPU backend computes GELU and its derivative one value at a time through libm's `erff`
//! and `expf`, a visible share of a fine-tuning step in the browser (`node bench/profile.mjs`;
//! docs/performance.md). Here both are branch-free arithmetic (an exponential by range reduction
//! and a polynomial, and Abramowitz & Stegun's erf 7.1.26, absolute error below 1.5e-7), which
//! the compiler turns into SIMD, the forward and backward pass sharing one exponential each. On
//! [−10, 10] GELU stays within 5e-7 of the exact function and its derivative within 3e-7 (unit
//! tests against f64 libm). On burn's GPU backend the forward pass is burn's and the backward
//! pass a CubeCL kernel of the exact derivative (burn's differentiates the tanh approximation,
//! whose `tanh` is NaN for large arguments on SwiftShader). The backward pass is hand-written
//! for autodiff, like [`crate::nn::linear`]'s.

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind, unary};
use burn::backend::autodiff::NodeId;
use burn::backend::flex::FlexTensor;

use crate::cpu::{exp_nonpositive, map_split, values};
use burn::backend::ops::ActivationOps;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Autodiff, Backend, Dispatch, Flex, backend_extension};
use burn::prelude::*;
use burn::tensor::DType;

#[cfg(any(feature = "wgpu", feature = "cuda"))]
use burn::backend::Cube;

/// GELU and its derivative, which a backend may implement its own way.
#[backend_extension(Flex, Cube: cfg(any(feature = "wgpu", feature = "cuda")), Autodiff)]
pub trait GeluBackend: Backend {
    /// `x · Φ(x)`, elementwise. By default the backend's GELU.
    fn gelu_erf(x: FloatTensor<Self>) -> FloatTensor<Self> {
        <Self as ActivationOps<Self>>::gelu(x)
    }

    /// `grad · (Φ(x) + x · φ(x))`, elementwise. By default the backend's GELU derivative.
    fn gelu_erf_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        <Self as ActivationOps<Self>>::gelu_backward(x, grad)
    }
}

/// burn's CPU backend: the branch-free versions below (f32 only).
impl GeluBackend for Flex {
    fn gelu_erf(x: FloatTensor<Self>) -> FloatTensor<Self> {
        if x.dtype() != DType::F32 {
            return <Self as ActivationOps<Self>>::gelu(x);
        }
        let shape = x.layout().shape().clone();
        let x = values(&x);
        let mut out = vec![0.0; x.len()];
        map_split(&x, None, &mut out, 1, 0, &|_, x, _, out| {
            for (o, &x) in out.iter_mut().zip(x) {
                *o = gelu_value(x);
            }
        });
        FlexTensor::from_data(TensorData::new(out, shape))
    }

    fn gelu_erf_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        if x.dtype() != DType::F32 || grad.dtype() != DType::F32 || x.layout().shape() != grad.layout().shape() {
            return <Self as ActivationOps<Self>>::gelu_backward(x, grad);
        }
        let shape = x.layout().shape().clone();
        let (x, grad) = (values(&x), values(&grad));
        let mut out = vec![0.0; x.len()];
        map_split(&x, Some(&grad), &mut out, 1, 0, &|_, x, g, out| {
            for ((o, &x), &g) in out.iter_mut().zip(x).zip(g.expect("a gradient")) {
                *o = g * gelu_derivative(x);
            }
        });
        FlexTensor::from_data(TensorData::new(out, shape))
    }
}

/// WebGPU, Vulkan, CUDA: burn's GELU forwards (through its erf), and the exact derivative
/// backwards ([`gpu::gelu_derivative`]).
///
/// burn's own GELU backward is the derivative of the tanh approximation, `tanh(0.0357·x³ +
/// 0.798·x)`, and SwiftShader's WGSL `tanh` returns NaN from |89| on (its exponential
/// overflows), which that argument reaches from x ≈ 13. Real models' activations get there
/// (MiniLM's do), and fine-tuning on WebGPU would stop at its first step with NaN gradients.
#[cfg(any(feature = "wgpu", feature = "cuda"))]
impl GeluBackend for Cube {
    fn gelu_erf_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        if gpu::supports(&x, &grad) {
            gpu::gelu_derivative(x, grad)
        } else {
            <Self as ActivationOps<Self>>::gelu_backward(x, grad)
        }
    }
}

/// GELU's exact derivative as a CubeCL kernel.
#[cfg(any(feature = "wgpu", feature = "cuda"))]
mod gpu {
    use burn_cubecl::tensor::CubeTensor;
    use burn::tensor::DType;
    use burn_cubecl::kernel::into_contiguous;
    use burn_cubecl::ops::numeric::empty_device_dtype;
    use cubecl::prelude::*;

    /// `out = grad · (Φ(x) + x · φ(x))`, a vector of values per invocation. For large |x| the
    /// Gaussian underflows to 0 and Φ saturates at 0 or 1: no step overflows.
    #[cube(launch_unchecked)]
    fn gelu_derivative_kernel<N: Size>(x: &Tensor<Vector<f32, N>>, grad: &Tensor<Vector<f32, N>>, out: &mut Tensor<Vector<f32, N>>) {
        if ABSOLUTE_POS >= out.len() {
            terminate!();
        }
        let v = x[ABSOLUTE_POS];
        let half = Vector::broadcast(0.5f32);
        let cdf = half * (Vector::erf(v * Vector::broadcast(core::f32::consts::FRAC_1_SQRT_2)) + Vector::broadcast(1.0f32));
        let pdf = Vector::exp(-(v * v) * half) * Vector::broadcast(0.398_942_3f32);
        out[ABSOLUTE_POS] = grad[ABSOLUTE_POS] * (cdf + v * pdf);
    }

    /// f32 operands of the same shape.
    pub fn supports(x: &CubeTensor, grad: &CubeTensor) -> bool {
        x.dtype == DType::F32 && grad.dtype == DType::F32 && x.qparams.is_none() && grad.qparams.is_none() && x.meta.shape() == grad.meta.shape()
    }

    /// The derivative for operands [`supports`] takes (copied first unless contiguous).
    pub fn gelu_derivative(x: CubeTensor, grad: CubeTensor) -> CubeTensor {
        let contiguous = |t: CubeTensor| if t.is_contiguous() { t } else { into_contiguous(t) };
        let (x, grad) = (contiguous(x), contiguous(grad));
        let shape = x.meta.shape().clone();
        let len = shape.num_elements();
        let out = empty_device_dtype(x.client.clone(), x.device.clone(), shape, DType::F32);
        if len == 0 {
            return out;
        }
        let line = crate::nn::linear::tiled::vector_width(len);
        let units = len / line;
        let cube_dim = CubeDim::new(&out.client, units);
        let cube_count = cubecl::calculate_cube_count_elemwise(&out.client, units, cube_dim);
        unsafe {
            gelu_derivative_kernel::launch_unchecked(
                &out.client,
                cube_count,
                cube_dim,
                line,
                x.into_tensor_arg(),
                grad.into_tensor_arg(),
                out.clone().into_tensor_arg(),
            );
        }
        out
    }
}

/// Autodiff: the derivative through the inner backend's [`GeluBackend::gelu_erf_backward`].
impl<B: Backend + GeluBackend, C: CheckpointStrategy> GeluBackend for Autodiff<B, C> {
    fn gelu_erf(x: FloatTensor<Self>) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct Gelu;

        impl<B: Backend + GeluBackend> Backward<B, 1> for Gelu {
            /// The input, which the derivative needs.
            type State = NodeId;

            fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, checkpointer: &mut Checkpointer) {
                let x: FloatTensor<B> = checkpointer.retrieve_node_output(ops.state);
                unary::<B, _>(ops.parents, ops.node, grads, |grad| B::gelu_erf_backward(x, grad));
            }
        }

        match Gelu.prepare::<C>([x.node()]).compute_bound().stateful() {
            OpsKind::Tracked(mut prep) => {
                let state = prep.checkpoint(&x);
                prep.finish(state, B::gelu_erf(x.into_primitive()))
            }
            OpsKind::UnTracked(prep) => prep.finish(B::gelu_erf(x.into_primitive())),
        }
    }
}

/// An activation as `config.json` names it (`transformers`' `ACT2FN`): the feed-forward block's
/// (`hidden_act`), a task head's (`classifier_activation`), a pooler's or a convolution's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum HiddenAct {
    /// Exact GELU, `x * Φ(x)` with the error function (`"gelu"`).
    #[serde(rename = "gelu")]
    Gelu,
    /// The tanh approximation of GELU (`"gelu_new"`, `"gelu_pytorch_tanh"`).
    #[serde(rename = "gelu_new", alias = "gelu_pytorch_tanh", alias = "gelu_fast")]
    GeluApproximate,
    /// ReLU (`"relu"`).
    #[serde(rename = "relu")]
    Relu,
    /// SiLU, `x * sigmoid(x)` (`"silu"`, `"swish"`).
    #[serde(rename = "silu", alias = "swish")]
    Silu,
    /// tanh (`"tanh"`): BERT's pooler, DeBERTa's convolution by default.
    #[serde(rename = "tanh")]
    Tanh,
}

impl HiddenAct {
    /// The activation applied to `x`.
    pub fn apply<const D: usize>(self, x: burn::prelude::Tensor<D>) -> burn::prelude::Tensor<D> {
        match self {
            HiddenAct::Gelu => gelu(x),
            HiddenAct::GeluApproximate => burn::tensor::activation::gelu_approximate(x),
            HiddenAct::Relu => burn::tensor::activation::relu(x),
            HiddenAct::Silu => burn::tensor::activation::silu(x),
            HiddenAct::Tanh => tanh(x),
        }
    }
}

/// GELU, `x · Φ(x)` with `Φ` the standard normal CDF (BERT's `hidden_act = "gelu"`).
pub fn gelu<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    Tensor::from_dispatch(<Dispatch as GeluBackend>::gelu_erf(x.into_dispatch()))
}

/// Where f32 `tanh` reaches ±1: `tanh(x)` rounds to exactly 1 for every `x` above 9.01, and its
/// derivative `1 − tanh²` to exactly 0.
const TANH_SATURATION: f32 = 10.0;

/// `tanh`, clamped to [−10, 10] first. In f32 this changes no value and no gradient (both are
/// already ±1 and 0 there), but some WebGPU implementations compute `tanh` through an
/// exponential that overflows: SwiftShader returns NaN from |89| on, which a pooler's
/// pre-activation can reach. The device check probes it ([`crate::device_check`]).
pub fn tanh<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    x.clamp(-TANH_SATURATION, TANH_SATURATION).tanh()
}

const FRAC_1_SQRT_2: f32 = std::f32::consts::FRAC_1_SQRT_2;
/// `1 / sqrt(2π)`.
const FRAC_1_SQRT_2PI: f32 = 0.398_942_3;

/// `Φ(x) = (1 + erf(x/√2)) / 2` and `e^(−x²/2)`, with erf from Abramowitz & Stegun 7.1.26.
#[inline(always)]
fn cdf_and_gaussian(x: f32) -> (f32, f32) {
    const P: f32 = 0.327_591_1;
    const A: [f32; 5] = [0.254_829_6, -0.284_496_7, 1.421_413_8, -1.453_152, 1.061_405_4];
    let u = (x * FRAC_1_SQRT_2).abs();
    let gaussian = exp_nonpositive(-0.5 * x * x);
    let t = 1.0 / (1.0 + P * u);
    let poly = t * (A[0] + t * (A[1] + t * (A[2] + t * (A[3] + t * A[4]))));
    // erf(u) = 1 - poly · e^(−u²), and e^(−u²) = e^(−x²/2).
    let erf = 1.0 - poly * gaussian;
    let erf = if x < 0.0 { -erf } else { erf };
    (0.5 * (1.0 + erf), gaussian)
}

#[inline(always)]
fn gelu_value(x: f32) -> f32 {
    x * cdf_and_gaussian(x).0
}

#[inline(always)]
fn gelu_derivative(x: f32) -> f32 {
    let (cdf, gaussian) = cdf_and_gaussian(x);
    cdf + x * gaussian * FRAC_1_SQRT_2PI
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::Distribution;

    /// Values from −10 to 10 in small steps, and the extremes.
    fn grid() -> Vec<f32> {
        let mut v: Vec<f32> = (-20_000..=20_000).map(|i| i as f32 * 5e-4).collect();
        v.extend([-100.0, -87.5, -50.0, 50.0, 100.0, f32::MIN_POSITIVE, -f32::MIN_POSITIVE, 0.0]);
        v
    }

    fn exact_gelu(x: f64) -> f64 {
        0.5 * x * (1.0 + libm::erf(x / std::f64::consts::SQRT_2))
    }

    fn exact_derivative(x: f64) -> f64 {
        0.5 * (1.0 + libm::erf(x / std::f64::consts::SQRT_2)) + x * (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
    }

    #[test]
    fn gelu_and_its_derivative_match_the_exact_functions() {
        let (mut worst_gelu, mut worst_d) = (0.0f64, 0.0f64);
        for x in grid() {
            let (gelu, d) = (f64::from(gelu_value(x)), f64::from(gelu_derivative(x)));
            let xf = f64::from(x);
            // A&S 7.1.26's erf error (1.5e-7) times |x|/2, plus f32 rounding.
            let tol = 1e-7 * (1.0 + xf.abs()) + 2.0 * f64::from(f32::EPSILON) * exact_gelu(xf).abs();
            assert!((gelu - exact_gelu(xf)).abs() <= tol, "gelu({x}) = {gelu}, want {}", exact_gelu(xf));
            // The same erf error, and f32 cancellation in 1 - poly·e^(−u²) near 0.
            assert!((d - exact_derivative(xf)).abs() <= 4e-7 * (1.0 + xf.abs()), "gelu'({x}) = {d}, want {}", exact_derivative(xf));
            worst_gelu = worst_gelu.max((gelu - exact_gelu(xf)).abs());
            worst_d = worst_d.max((d - exact_derivative(xf)).abs());
        }
        println!("largest absolute errors: gelu {worst_gelu:e}, derivative {worst_d:e}");
    }

    #[test]
    fn clamped_tanh_is_tanh_in_f32_forward_and_backward() {
        let device = Device::flex().autodiff();
        let probes: Vec<f32> = [-1e30f32, -300.0, -89.0, -20.0, -10.0, -9.5, -9.0, -8.0, -3.0, -0.1, 0.0, 0.1, 3.0, 8.0, 9.0, 9.5, 10.0, 20.0, 89.0, 300.0, 1e30]
            .into_iter()
            .collect();
        let x = Tensor::<1>::from_data(TensorData::new(probes.clone(), [probes.len()]), &device).require_grad();
        let y = tanh(x.clone());
        let grads = y.clone().sum().backward();
        let y = y.into_data().try_to_vec::<f32>().unwrap();
        let dx = x.grad(&grads).unwrap().into_data().try_to_vec::<f32>().unwrap();
        for ((&x, &y), &d) in probes.iter().zip(&y).zip(&dx) {
            let exact = (x as f64).tanh();
            assert_eq!(y, exact as f32, "tanh({x}) = {y}");
            let slope = 1.0 - exact * exact;
            assert!((d as f64 - slope).abs() <= 1e-7, "tanh'({x}) = {d}, want {slope}");
        }
    }

    #[test]
    fn tensors_match_burns_gelu_forward_and_backward() {
        let device = Device::flex().autodiff();
        // Large enough to split over threads; a transposed (non-contiguous) input too.
        let x = Tensor::<2>::random([300, 400], Distribution::Normal(0.0, 2.0), &device).require_grad();
        let weights = Tensor::<2>::random([300, 400], Distribution::Uniform(-1.0, 1.0), &device);
        let ours = gelu(x.clone());
        let theirs = burn::tensor::activation::gelu(x.clone());
        let forward = (ours.clone() - theirs.clone()).abs().max().into_scalar::<f32>();
        assert!(forward < 1e-6, "forward: {forward}");
        let g_ours = (ours * weights.clone()).sum().backward();
        let g_theirs = (theirs * weights).sum().backward();
        let backward = (x.grad(&g_ours).unwrap() - x.grad(&g_theirs).unwrap()).abs().max().into_scalar::<f32>();
        assert!(backward < 1e-6, "backward: {backward}");

        let t = Tensor::<2>::random([70, 30], Distribution::Normal(0.0, 1.0), &Device::flex()).transpose();
        let d = (gelu(t.clone()) - burn::tensor::activation::gelu(t)).abs().max().into_scalar::<f32>();
        assert!(d < 1e-6, "transposed input: {d}");
    }
}
