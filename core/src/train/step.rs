//! What every optimizer step does between the backward pass and the update, whatever the task:
//! clip the gradients, read the step's numbers back in one go, refuse a step whose loss or
//! gradients are not finite before it changes a weight, and take the learning rate from the
//! schedule. [`super::FineTuner`] and [`super::Pretrainer`] both go through here, so both stop
//! with the same message at the same point.

use burn::optim::GradientsParams;
use burn::prelude::*;

use super::grads::{GradNorm, clip_grad_norm_by_parameter};
use super::schedule::linear_schedule;
use crate::error::{Error, Result};
use crate::nn::read_f32;

/// A run's learning-rate schedule: linear warmup over a share of the steps, then linear decay
/// to zero at the last step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    /// Steps in the run (or the stage).
    pub total: usize,
    /// Steps of warmup.
    pub warmup: usize,
    /// The rate reached at the end of warmup.
    pub peak: f64,
}

impl Schedule {
    /// Warmup over `warmup_ratio` of `total` steps, rounded.
    pub fn new(total: usize, warmup_ratio: f64, peak: f64) -> Self {
        Self { total, warmup: (total as f64 * warmup_ratio).round() as usize, peak }
    }

    /// The rate of step `step` (counted from 0).
    pub fn lr(&self, step: usize) -> f64 {
        linear_schedule(step, self.total, self.warmup, self.peak)
    }
}

/// Clips `grads` (of `module`) to a global norm of `max_norm` (0: no clipping); keeps each
/// parameter's norm, so a failed step can name where.
pub fn clip<M: Module>(module: &M, grads: &mut GradientsParams, max_norm: f64, device: &Device) -> GradNorm {
    clip_grad_norm_by_parameter(module, grads, max_norm, &device.clone().inner())
}

/// What a step read back.
#[derive(Debug, Clone, PartialEq)]
pub struct StepValues {
    /// The step's loss.
    pub loss: f32,
    /// The global gradient norm before clipping.
    pub grad_norm: f32,
    /// The task's own values, in the order given to [`read_back`].
    pub extra: Vec<f32>,
}

/// Reads `loss` (`[1]`), the gradient norm and the task's `extra` tensors (flattened, in
/// order) back in one read, and refuses the step (`Error::Training`, naming step `step + 1`
/// and, for finite losses, the parameters whose gradients are not) when the loss or the
/// gradients are not finite, before its update: the model keeps its last good weights.
/// `on_gpu` adds the advice that fits a GPU, where a finite loss with broken gradients is more
/// likely the device than the learning rate.
pub async fn read_back(loss: Tensor<1>, norm: &GradNorm, extra: Vec<Tensor<1>>, step: usize, on_gpu: bool) -> Result<StepValues> {
    let mut parts = vec![loss, norm.total.clone()];
    parts.extend(extra);
    let values = read_f32(Tensor::cat(parts, 0)).await?;
    let (loss, grad_norm) = (values[0], values[1]);
    if !loss.is_finite() || !grad_norm.is_finite() {
        let what = if loss.is_finite() {
            format!("finite but the gradients did not{}", norm.describe_non_finite().await)
        } else {
            "NaN or infinite".to_string()
        };
        let advice = if loss.is_finite() && on_gpu {
            "Try a lower learning rate, or train on the CPU."
        } else {
            "Try a lower learning rate."
        };
        return Err(Error::Training(format!(
            "the loss became {what} at step {}: training stopped before that step's update, so the model keeps its last good weights. {advice}",
            step + 1
        )));
    }
    Ok(StepValues { loss, grad_norm, extra: values[2..].to_vec() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;

    fn norm_of(values: Vec<f32>, device: &Device) -> GradNorm {
        let n = values.len();
        let squares = Tensor::<1>::from_data(TensorData::new(values, [n]), device);
        GradNorm { total: squares.clone().sum().sqrt(), names: (0..n).map(|i| format!("p{i}")).collect(), squares: Some(squares) }
    }

    fn scalar(v: f32, device: &Device) -> Tensor<1> {
        Tensor::from_data(TensorData::new(vec![v], [1]), device)
    }

    #[test]
    fn the_schedule_warms_up_over_its_share_of_the_steps() {
        let s = Schedule::new(100, 0.06, 1e-3);
        assert_eq!(s.warmup, 6);
        assert_eq!(s.lr(5), 1e-3);
        assert!(s.lr(2) < s.lr(3));
        assert_eq!(s.lr(100), 0.0);
    }

    #[test]
    fn a_finite_step_comes_back_with_its_values_in_order() {
        let device = Device::flex();
        let norm = norm_of(vec![9.0, 16.0], &device);
        let extra = vec![Tensor::<1>::from_data(TensorData::new(vec![1.0f32, 2.0], [2]), &device), scalar(7.0, &device)];
        let v = pollster::block_on(read_back(scalar(0.5, &device), &norm, extra, 0, false)).unwrap();
        assert_eq!(v, StepValues { loss: 0.5, grad_norm: 5.0, extra: vec![1.0, 2.0, 7.0] });
    }

    #[test]
    fn a_nan_loss_or_gradient_stops_the_step_and_says_where() {
        let device = Device::flex();
        let fine = norm_of(vec![1.0, 1.0], &device);
        let err = pollster::block_on(read_back(scalar(f32::NAN, &device), &fine, vec![], 4, true)).unwrap_err().to_string();
        assert!(err.contains("NaN or infinite at step 5") && err.ends_with("Try a lower learning rate."), "{err}");
        let broken = norm_of(vec![1.0, f32::INFINITY], &device);
        let err = pollster::block_on(read_back(scalar(0.7, &device), &broken, vec![], 0, true)).unwrap_err().to_string();
        assert!(err.contains("the gradients did not (in 1 of 2 parameters: p1) at step 1"), "{err}");
        assert!(err.ends_with("or train on the CPU."), "{err}");
    }
}
