//! Multi-label classification (`*ForSequenceClassification` with `problem_type:
//! "multi_label_classification"`): any number of labels per text, each a yes or no of its own.
//! The head gives one logit per label, a sigmoid each; the loss is `transformers`'
//! `BCEWithLogitsLoss` (the binary cross-entropy of every label of every text, averaged); a
//! label is given where its probability reaches a decision threshold, chosen on the validation
//! set; the metrics are scikit-learn's for label indicators: each label's precision, recall and
//! F1, their micro average (every decision pooled) and macro average (the labels' mean), and the
//! share of texts whose labels are all right (`accuracy_score`, "exact match").

use burn::prelude::*;
use serde::{Deserialize, Serialize};

use super::classification::sigmoid;
use super::metrics::ClassMetrics;

/// The thresholds [`choose_threshold`] tries: 0.05, 0.10, …, 0.95.
pub fn thresholds() -> impl Iterator<Item = f32> {
    (1..20).map(|i| i as f32 * 0.05)
}

/// The mean binary cross-entropy of each logit against its 0/1 target, computed as
/// `max(x, 0) - x·y + log(1 + e^-|x|)` so large logits do not overflow (PyTorch's
/// `BCEWithLogitsLoss`).
///
/// # Shapes
/// - `logits`, `targets`: `[texts, labels]`
/// - output: `[1]`
pub fn loss(logits: Tensor<2>, targets: Tensor<2>) -> Tensor<1> {
    let softplus = logits.clone().abs().neg().exp().log1p();
    (logits.clone().clamp_min(0.0) - logits * targets + softplus).mean()
}

/// [`loss`] on the host, for the validation set.
pub fn host_loss(logits: &[f32], targets: &[f32]) -> f32 {
    let each = logits.iter().zip(targets).map(|(&x, &y)| f64::from(x.max(0.0) - x * y) + f64::from((-x.abs()).exp()).ln_1p());
    (each.sum::<f64>() / logits.len().max(1) as f64) as f32
}

/// Each label's probability: a sigmoid of its logit.
pub fn probabilities(logits: &[f32]) -> Vec<f32> {
    logits.iter().map(|&x| sigmoid(x)).collect()
}

/// How a multi-label model does on texts at one decision threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelSetMetrics {
    /// A label is given where its probability is at least this.
    pub threshold: f32,
    /// Precision of every decision pooled: of the labels given, the share that are right.
    pub micro_precision: f32,
    /// Recall of every decision pooled: of the labels the texts have, the share given.
    pub micro_recall: f32,
    /// F1 of the pooled decisions (scikit-learn's `average="micro"`).
    pub micro_f1: f32,
    /// Mean of the labels' F1, every label counted (scikit-learn's `average="macro"` on label
    /// indicators; a label no text has and none is given counts 0).
    pub macro_f1: f32,
    /// Share of texts whose labels are given exactly (scikit-learn's `accuracy_score`).
    pub exact_match: f32,
    /// Each label's precision, recall and F1, and how many texts have it.
    pub per_label: Vec<ClassMetrics>,
    /// Texts scored.
    pub texts: usize,
}

impl LabelSetMetrics {
    /// Scores `probs` (a row of each label's probability per text) against `truth` (the same
    /// rows, 1 where the text has the label) at `threshold`; `labels` names the columns.
    pub fn new(probs: &[f32], truth: &[f32], labels: &[String], threshold: f32) -> Self {
        let k = labels.len().max(1);
        let said = |p: f32| p >= threshold;
        let mut counts = vec![(0usize, 0usize, 0usize); k]; // (tp, given, has)
        for (row_p, row_t) in probs.chunks(k).zip(truth.chunks(k)) {
            for (j, (&p, &t)) in row_p.iter().zip(row_t).enumerate() {
                let (given, has) = (said(p), t >= 0.5);
                counts[j].0 += usize::from(given && has);
                counts[j].1 += usize::from(given);
                counts[j].2 += usize::from(has);
            }
        }
        let texts = probs.len() / k;
        let exact = probs.chunks(k).zip(truth.chunks(k)).filter(|(p, t)| p.iter().zip(*t).all(|(&p, &t)| said(p) == (t >= 0.5))).count();
        let per_label: Vec<ClassMetrics> = labels
            .iter()
            .zip(&counts)
            .map(|(label, &(tp, given, has))| {
                let (precision, recall) = (ratio(tp, given), ratio(tp, has));
                ClassMetrics { label: label.clone(), precision, recall, f1: f1(precision, recall), support: has }
            })
            .collect();
        let (tp, given, has) = counts.iter().fold((0, 0, 0), |(a, b, c), &(x, y, z)| (a + x, b + y, c + z));
        let (micro_precision, micro_recall) = (ratio(tp, given), ratio(tp, has));
        let macro_f1 = per_label.iter().map(|m| m.f1).sum::<f32>() / per_label.len().max(1) as f32;
        Self { threshold, micro_precision, micro_recall, micro_f1: f1(micro_precision, micro_recall), macro_f1, exact_match: ratio(exact, texts), per_label, texts }
    }

    /// The metrics at the threshold of [`thresholds`] with the best micro F1 on these texts (the
    /// one nearest 0.5 on a tie): the threshold is chosen on the validation set it is reported
    /// on, so its F1 there is a little better than on texts it has not seen.
    pub fn at_best_threshold(probs: &[f32], truth: &[f32], labels: &[String]) -> Self {
        let key = |m: &Self| (m.micro_f1, -(m.threshold - 0.5).abs());
        thresholds()
            .map(|t| Self::new(probs, truth, labels, t))
            .fold(None::<Self>, |best, m| match best {
                Some(b) if key(&b) >= key(&m) => Some(b),
                _ => Some(m),
            })
            .expect("thresholds are not empty")
    }
}

fn ratio(num: usize, den: usize) -> f32 {
    if den == 0 { 0.0 } else { num as f32 / den as f32 }
}

fn f1(precision: f32, recall: f32) -> f32 {
    if precision + recall > 0.0 { 2.0 * precision * recall / (precision + recall) } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("l{i}")).collect()
    }

    /// scikit-learn on the same indicators (y_true [[1,0,1],[0,1,0],[1,1,0],[0,0,0]], y_pred at
    /// 0.5 [[1,0,0],[0,1,1],[1,0,0],[0,0,0]]): precision_score(average="micro") = 0.75,
    /// recall 0.6, f1 0.6667; f1_score(average=None) = [1.0, 0.6667, 0.0], macro 0.5556;
    /// accuracy_score 0.25 (only the last text is exactly right).
    #[test]
    fn metrics_are_scikit_learns_for_label_indicators() {
        let truth = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0];
        let probs = [0.9, 0.2, 0.4, 0.1, 0.8, 0.7, 0.6, 0.3, 0.2, 0.1, 0.4, 0.0];
        let m = LabelSetMetrics::new(&probs, &truth, &names(3), 0.5);
        let close = |a: f32, b: f32| (a - b).abs() < 1e-4;
        assert!(close(m.micro_precision, 0.75) && close(m.micro_recall, 0.6) && close(m.micro_f1, 2.0 / 3.0), "{m:?}");
        let f1s: Vec<f32> = m.per_label.iter().map(|c| c.f1).collect();
        assert!(close(f1s[0], 1.0) && close(f1s[1], 2.0 / 3.0) && close(f1s[2], 0.0), "{f1s:?}");
        assert!(close(m.macro_f1, 5.0 / 9.0) && close(m.exact_match, 0.25) && m.texts == 4, "{m:?}");
        assert_eq!(m.per_label.iter().map(|c| c.support).collect::<Vec<_>>(), [2, 2, 1]);
        // Below 0.4, the first text's third label (0.4) is found and the fourth text's second
        // (0.4) wrongly given: micro F1 0.8.
        let best = LabelSetMetrics::at_best_threshold(&probs, &truth, &names(3));
        assert!(best.micro_f1 >= m.micro_f1 && best.threshold != 0.5, "{best:?}");
        for t in thresholds() {
            assert!(LabelSetMetrics::new(&probs, &truth, &names(3), t).micro_f1 <= best.micro_f1);
        }
    }

    /// A tie keeps the threshold nearest 0.5: probabilities far from every threshold give the
    /// same decisions from 0.15 to 0.85.
    #[test]
    fn a_tie_keeps_the_threshold_nearest_a_half() {
        let (probs, truth) = ([0.95, 0.05, 0.1, 0.9], [1.0, 0.0, 0.0, 1.0]);
        assert_eq!(LabelSetMetrics::at_best_threshold(&probs, &truth, &names(2)).threshold, 0.5);
    }

    /// The loss is PyTorch's `BCEWithLogitsLoss()` (mean): for logits [[2, -1], [0.5, 30]] and
    /// targets [[1, 0], [0, 1]], torch gives 0.3349 (computed by hand from its formula:
    /// (log(1+e^-2) + log(1+e^-1) + log(1+e^0.5) + log(1+e^-30)) / 4), on the device and the host.
    #[test]
    fn the_loss_is_binary_cross_entropy_with_logits_on_the_device_and_the_host() {
        let (logits, targets) = ([2.0f32, -1.0, 0.5, 30.0], [1.0f32, 0.0, 0.0, 1.0]);
        let expected = ((1.0 + (-2.0f64).exp()).ln() + (1.0 + (-1.0f64).exp()).ln() + (1.0 + 0.5f64.exp()).ln() + (1.0 + (-30.0f64).exp()).ln()) / 4.0;
        assert!((f64::from(host_loss(&logits, &targets)) - expected).abs() < 1e-6);
        let device = Device::flex();
        let t = |v: [f32; 4]| Tensor::<2>::from_data(TensorData::new(v.to_vec(), [2, 2]), &device);
        let on_device = loss(t(logits), t(targets)).into_scalar::<f32>();
        assert!((f64::from(on_device) - expected).abs() < 1e-6, "{on_device} vs {expected}");
        assert_eq!(probabilities(&[0.0]), [0.5]);
    }
}
