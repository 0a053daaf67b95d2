//! Knowledge distillation (Hinton et al., 2015; DistilBERT, Sanh et al., 2019): a smaller
//! *student* learns a classification task from a fine-tuned *teacher*'s class probabilities
//! ("soft labels", which say how wrong each wrong class is) as well as from the gold labels.
//!
//! The student here starts from the pretrained encoder with some of its layers kept, spaced
//! evenly from the first to the last ([`spaced_layers`]: from BERT-base's 12, the 6 DistilBERT
//! was initialised with), so it keeps the teacher's width and loses depth. Its loss is
//!
//! `(1 − w) · CE(student, gold) + w · T² · KL(softmax(teacher / T) ‖ softmax(student / T))`
//!
//! with temperature `T` (above 1, the teacher's small probabilities come out from under its top
//! one) and weight `w` of the soft labels; `T²` keeps the soft term's gradients on the scale of
//! the hard one's as `T` changes (Hinton et al., section 2).

use burn::prelude::*;
use burn::tensor::activation::{log_softmax, softmax};

use crate::tasks::classification::ClassificationHead;

/// How a student learns from its teacher.
#[derive(Config, Debug, PartialEq)]
pub struct Distillation {
    /// Temperature `T` both distributions are softened by.
    #[config(default = 2.0)]
    pub temperature: f64,
    /// Weight `w` of the soft labels (the gold labels get `1 − w`).
    #[config(default = 0.5)]
    pub soft_weight: f64,
}

impl Distillation {
    /// Refuses settings the loss cannot use.
    pub fn check(&self) -> crate::Result<()> {
        if !(self.temperature.is_finite() && self.temperature > 0.0) {
            return Err(crate::error::Error::Training(format!("the temperature must be above 0 (it is {})", self.temperature)));
        }
        if !(0.0..=1.0).contains(&self.soft_weight) {
            return Err(crate::error::Error::Training(format!("the weight of the soft labels is between 0 and 1 (it is {})", self.soft_weight)));
        }
        Ok(())
    }

    /// The student's loss on a batch: see the module's docs.
    ///
    /// # Shapes
    /// - `student`: logits `[batch, labels]`
    /// - `teacher`: the teacher's log-probabilities (or logits) `[batch, labels]`
    /// - `gold`: `[batch]`
    /// - output: `[1]`
    pub fn loss(&self, student: Tensor<2>, teacher: Tensor<2>, gold: Tensor<1, Int>) -> Tensor<1> {
        let t = self.temperature;
        let hard = ClassificationHead::loss(student.clone(), gold);
        let target = softmax(teacher.div_scalar(t), 1);
        // KL(p ‖ q) = Σ p (log p − log q), averaged over the batch; p (the teacher's) is a
        // constant, so its gradient is the student's through log q alone.
        let log_target = target.clone().clamp_min(1e-30).log();
        let log_student = log_softmax(student.div_scalar(t), 1);
        let batch = target.dims()[0] as f64;
        let kl = (target * (log_target - log_student)).sum().div_scalar(batch);
        hard.mul_scalar(1.0 - self.soft_weight) + kl.mul_scalar(self.soft_weight * t * t)
    }
}

/// `keep` of `depth` layers, spaced evenly from the first to the last (rounded): 6 of 12 gives
/// 0, 2, 4, 7, 9, 11, DistilBERT's; 3 of 6 gives 0, 3, 5.
pub fn spaced_layers(depth: usize, keep: usize) -> Vec<usize> {
    match keep.min(depth) {
        0 => Vec::new(),
        1 => vec![depth - 1],
        k => (0..k).map(|i| ((i * (depth - 1)) as f64 / (k - 1) as f64).round() as usize).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;

    use crate::tasks::metrics::softmax as host_softmax;

    #[test]
    fn spaced_layers_are_distilbert_s_from_twelve() {
        assert_eq!(spaced_layers(12, 6), [0, 2, 4, 7, 9, 11]);
        assert_eq!(spaced_layers(6, 3), [0, 3, 5]);
        assert_eq!(spaced_layers(6, 1), [5]);
        assert_eq!(spaced_layers(4, 9), [0, 1, 2, 3]);
    }

    /// The loss equals the formula computed here by hand on two rows.
    #[test]
    fn the_loss_is_the_weighted_hard_and_softened_terms() {
        let device = Device::flex();
        let (student, teacher, gold) = ([1.0f32, -0.5, 0.2, 0.3, 0.9, -1.2], [2.0f32, 0.1, -1.0, -0.4, 1.5, 0.0], [0usize, 2]);
        let d = Distillation::new().with_temperature(3.0).with_soft_weight(0.7);
        let t2 = |v: [f32; 6]| Tensor::<2>::from_data(TensorData::new(v.to_vec(), [2, 3]), &device);
        let gold_t = Tensor::<1, Int>::from_data(TensorData::new(gold.iter().map(|&g| g as i64).collect::<Vec<_>>(), [2]), &device);
        let got = d.loss(t2(student), t2(teacher), gold_t).into_scalar::<f32>();

        let mut hard = 0.0;
        let mut kl = 0.0;
        for r in 0..2 {
            let s = &student[r * 3..r * 3 + 3];
            let p = host_softmax(&teacher[r * 3..r * 3 + 3].iter().map(|x| x / 3.0).collect::<Vec<_>>());
            let q = host_softmax(&s.iter().map(|x| x / 3.0).collect::<Vec<_>>());
            hard += -host_softmax(s)[gold[r]].ln() / 2.0;
            kl += p.iter().zip(&q).map(|(p, q)| p * (p / q).ln()).sum::<f32>() / 2.0;
        }
        let want = 0.3 * hard + 0.7 * 9.0 * kl;
        assert!((got - want).abs() < 1e-5, "{got} vs {want}");
    }

    /// With soft labels only, a student that already gives the teacher's probabilities has
    /// nothing left to learn: the loss is 0.
    #[test]
    fn a_student_equal_to_its_teacher_has_no_soft_loss() {
        let device = Device::flex();
        let logits = Tensor::<2>::from_data(TensorData::new(vec![0.3f32, -1.0, 2.0, 0.5], [2, 2]), &device);
        let gold = Tensor::<1, Int>::from_data(TensorData::new(vec![0i64, 1], [2]), &device);
        let d = Distillation::new().with_soft_weight(1.0);
        assert!(d.loss(logits.clone(), log_softmax(logits, 1), gold).into_scalar::<f32>().abs() < 1e-6);
        assert!(Distillation::new().with_temperature(0.0).check().is_err());
        assert!(Distillation::new().with_soft_weight(1.5).check().is_err());
    }
}
