//! Gradients between the backward pass and the update: their global norm, clipping, the
//! parameters whose gradients are not finite, and the two tools that let a batch run as two
//! halves side by side (fresh autodiff leaves over the same weights, and adding the halves'
//! gradients).

use burn::module::{ModuleMapper, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::prelude::*;

use crate::nn::read_f32;

/// Sums the squares of each gradient of `module`'s parameters, by parameter path.
struct SquaredNorm<'a> {
    grads: &'a GradientsParams,
    path: Vec<String>,
    names: Vec<String>,
    squares: Vec<Tensor<1>>,
}

impl ModuleVisitor for SquaredNorm<'_> {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.push(name.to_string());
    }

    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.pop();
    }

    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        if let Some(g) = self.grads.get::<D>(param.id) {
            self.names.push(self.path.join("."));
            self.squares.push(g.square().sum());
        }
    }
}

/// A step's gradient norm, and the squared norm of each parameter's gradient, so that a step
/// whose gradients are not finite can say where.
pub struct GradNorm {
    /// The global L2 norm before clipping, `[1]`.
    pub total: Tensor<1>,
    /// Parameter paths (`encoder.layer.0.attention.self.query.weight`), in visiting order.
    pub names: Vec<String>,
    /// Each parameter's squared gradient norm, `[names.len()]` (`None` if no parameter has a
    /// gradient).
    pub squares: Option<Tensor<1>>,
}

impl GradNorm {
    /// The parameters whose gradients hold NaN or infinite values, in visiting order; one
    /// read-back.
    pub async fn non_finite(&self) -> Vec<String> {
        let Some(squares) = &self.squares else { return Vec::new() };
        let Ok(values) = read_f32(squares.clone()).await else { return Vec::new() };
        self.names.iter().zip(values).filter(|(_, v)| !v.is_finite()).map(|(n, _)| n.clone()).collect()
    }

    /// `" (in 7 of 9 parameters: a, b, c and 4 more)"`: where the gradients are not finite, or
    /// nothing.
    pub async fn describe_non_finite(&self) -> String {
        let names = self.non_finite().await;
        match names.len() {
            0 => String::new(),
            1..=3 => format!(" (in {} of {} parameters: {})", names.len(), self.names.len(), names.join(", ")),
            more => format!(" (in {more} of {} parameters: {} and {} more)", self.names.len(), names[..3].join(", "), more - 3),
        }
    }
}

/// Multiplies every gradient by a one-element tensor.
struct Scale<'a> {
    grads: &'a mut GradientsParams,
    factor: Tensor<1>,
}

impl ModuleVisitor for Scale<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        if let Some(g) = self.grads.remove::<D>(param.id) {
            self.grads.register(param.id, g * self.factor.clone().unsqueeze::<D>());
        }
    }
}

/// Scales `grads` so their global L2 norm is at most `max_norm` (PyTorch's
/// `clip_grad_norm_`), without reading anything back. Returns the norm before clipping, `[1]`.
pub fn clip_grad_norm<M: Module>(module: &M, grads: &mut GradientsParams, max_norm: f64, device: &Device) -> Tensor<1> {
    clip_grad_norm_by_parameter(module, grads, max_norm, device).total
}

/// [`clip_grad_norm`], keeping each parameter's squared gradient norm ([`GradNorm`]).
pub fn clip_grad_norm_by_parameter<M: Module>(module: &M, grads: &mut GradientsParams, max_norm: f64, device: &Device) -> GradNorm {
    let mut visit = SquaredNorm { grads, path: Vec::new(), names: Vec::new(), squares: Vec::new() };
    module.visit(&mut visit);
    let SquaredNorm { names, squares, .. } = visit;
    let squares = (!squares.is_empty()).then(|| Tensor::cat(squares, 0));
    let total = squares.clone().map_or_else(|| Tensor::zeros([1], device), |s| s.sum().sqrt());
    if max_norm > 0.0 {
        let factor = (total.clone() + 1e-6).recip().mul_scalar(max_norm).clamp_max(1.0);
        module.visit(&mut Scale { grads, factor });
    }
    GradNorm { total, names, squares }
}

/// Gives every trainable parameter a new autodiff leaf over the same values (no copy); the
/// parameter ids stay, so gradients found through the copy apply to the original.
pub(crate) struct FreshLeaves;

impl ModuleMapper for FreshLeaves {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        param.map(|t| if t.is_require_grad() { t.detach().require_grad() } else { t })
    }
}

/// Adds the gradients of `from` into `into`, parameter by parameter.
pub(crate) struct AddGrads<'a> {
    pub(crate) into: &'a mut GradientsParams,
    pub(crate) from: GradientsParams,
}

impl ModuleVisitor for AddGrads<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        if let Some(b) = self.from.remove::<D>(param.id) {
            let sum = match self.into.remove::<D>(param.id) {
                Some(a) => a + b,
                None => b,
            };
            self.into.register(param.id, sum);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;
    use crate::tasks::classification::{ClassificationHead, ClassificationHeadConfig};

    fn labels_tensor(labels: &[usize], device: &Device) -> Tensor<1, Int> {
        let v: Vec<i64> = labels.iter().map(|&l| l as i64).collect();
        Tensor::from_data(TensorData::new(v, [labels.len()]), device)
    }

    #[test]
    fn global_norm_clipping_matches_the_definition() {
        let device = Device::flex().autodiff();
        // Zero weights: p = (0.5, 0.5) whatever the seed, so the gradient is known and large.
        let mut head = ClassificationHeadConfig::new(3, 2).with_dropout(0.0).init(&device);
        head.classifier.weight = Param::from_tensor(Tensor::zeros([3, 2], &device));
        head.classifier.bias = Some(Param::from_tensor(Tensor::zeros([2], &device)));
        let x = Tensor::<2>::from_data(TensorData::new(vec![30.0f32, -40.0, 50.0], [1, 3]), &device);
        let loss = ClassificationHead::loss(head.forward(x), labels_tensor(&[1], &device));
        let mut grads = GradientsParams::from_grads(loss.backward(), &head);
        let inner = device.clone().inner();
        let flat = |g: &GradientsParams| -> Vec<f32> {
            let w = g.get::<2>(head.classifier.weight.id).unwrap().into_data().try_to_vec::<f32>().unwrap();
            let b = g.get::<1>(head.classifier.bias.as_ref().unwrap().id).unwrap().into_data().try_to_vec::<f32>().unwrap();
            [w, b].concat()
        };
        let before = flat(&grads);
        let want = before.iter().map(|g| g * g).sum::<f32>().sqrt();
        assert!(want > 1.0, "test needs a large gradient, got {want}");
        let norm = clip_grad_norm(&head, &mut grads, 1.0, &inner).into_scalar::<f32>();
        assert!((norm - want).abs() < 1e-3 * want, "{norm} vs {want}");
        let after = flat(&grads);
        let clipped = after.iter().map(|g| g * g).sum::<f32>().sqrt();
        assert!((clipped - 1.0).abs() < 1e-4, "{clipped}");
        for (a, b) in after.iter().zip(&before) {
            assert!((a - b / want).abs() < 1e-5);
        }
    }

    #[test]
    fn grad_norm_names_the_parameters_whose_gradients_are_not_finite() {
        let device = Device::flex();
        let head = ClassificationHeadConfig::new(4, 3).init(&device);
        let weight = head.classifier.weight.id;
        let bias = head.classifier.bias.as_ref().unwrap().id;
        let mut grads = GradientsParams::new();
        grads.register(weight, Tensor::<2>::from_data(TensorData::new(vec![1.0f32, f32::NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [4, 3]), &device));
        grads.register(bias, Tensor::<1>::from_data(TensorData::new(vec![3.0f32, 4.0, 0.0], [3]), &device));
        let norm = clip_grad_norm_by_parameter(&head, &mut grads, 0.0, &device);
        assert_eq!(norm.names, ["classifier.weight", "classifier.bias"]);
        assert_eq!(pollster::block_on(norm.non_finite()), ["classifier.weight"]);
        assert_eq!(pollster::block_on(norm.describe_non_finite()), " (in 1 of 2 parameters: classifier.weight)");

        // Finite gradients: nothing to name, and the norm is theirs.
        grads.register(weight, Tensor::<2>::zeros([4, 3], &device));
        let norm = clip_grad_norm_by_parameter(&head, &mut grads, 0.0, &device);
        assert!(pollster::block_on(norm.non_finite()).is_empty());
        assert_eq!(pollster::block_on(norm.describe_non_finite()), "");
        assert!((norm.total.into_scalar::<f32>() - 5.0).abs() < 1e-6);
    }
}
