//! Classification metrics on the host: accuracy, per-class precision/recall/F1, macro-F1 and the
//! confusion matrix; `argmax` and a numerically stable `softmax` for turning logits into answers.
//!
//! Conventions follow scikit-learn's `classification_report` with `zero_division=0`: a ratio
//! whose denominator is 0 (no prediction of a class, or no example of it) counts as 0.

use serde::{Deserialize, Serialize};

/// Precision, recall and F1 of one class (one-vs-rest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassMetrics {
    /// The class's label.
    pub label: String,
    /// Of the examples predicted as this class, the share that are: `tp / (tp + fp)`.
    pub precision: f32,
    /// Of the examples of this class, the share found: `tp / (tp + fn)`.
    pub recall: f32,
    /// Harmonic mean of precision and recall: `2PR / (P + R)`.
    pub f1: f32,
    /// Number of examples of this class in the truth.
    pub support: usize,
}

/// Metrics of predictions against the truth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Share of correct predictions (0 for no examples).
    pub accuracy: f32,
    /// Mean F1 over the classes that occur in the truth or the predictions (scikit-learn's
    /// `average="macro"` when it is not given the label list): a class absent from both says
    /// nothing about the model and is left out.
    pub macro_f1: f32,
    /// One entry per class, in class-id order.
    pub per_class: Vec<ClassMetrics>,
    /// `confusion[truth][pred]`: how many examples of class `truth` were predicted as `pred`.
    pub confusion: Vec<Vec<usize>>,
    /// Number of (truth, prediction) pairs counted.
    pub count: usize,
}

impl Metrics {
    /// Compares `pred` with `truth` (class ids; `labels[id]` names class `id`). Pairs are taken
    /// up to the shorter of the two slices. An id without a name in `labels` gets one
    /// (`"class 7"`) rather than being dropped, so nothing here can panic.
    pub fn new(truth: &[usize], pred: &[usize], labels: &[String]) -> Metrics {
        let pairs = || truth.iter().copied().zip(pred.iter().copied());
        let classes =
            pairs().map(|(t, p)| t.max(p).saturating_add(1)).max().unwrap_or(0).max(labels.len());
        let mut confusion = vec![vec![0usize; classes]; classes];
        for (t, p) in pairs() {
            confusion[t][p] += 1;
        }
        let count = pairs().count();
        let correct: usize = (0..classes).map(|c| confusion[c][c]).sum();

        let per_class: Vec<ClassMetrics> = (0..classes)
            .map(|c| {
                let tp = confusion[c][c];
                let support: usize = confusion[c].iter().sum();
                let predicted: usize = confusion.iter().map(|row| row[c]).sum();
                let precision = ratio(tp, predicted);
                let recall = ratio(tp, support);
                let f1 = if precision + recall > 0.0 {
                    2.0 * precision * recall / (precision + recall)
                } else {
                    0.0
                };
                let label = labels.get(c).cloned().unwrap_or_else(|| format!("class {c}"));
                ClassMetrics { label, precision, recall, f1, support }
            })
            .collect();

        let present: Vec<f32> = (0..classes)
            .filter(|&c| per_class[c].support > 0 || confusion.iter().any(|row| row[c] > 0))
            .map(|c| per_class[c].f1)
            .collect();
        let macro_f1 = if present.is_empty() {
            0.0
        } else {
            present.iter().sum::<f32>() / present.len() as f32
        };

        Metrics { accuracy: ratio(correct, count), macro_f1, per_class, confusion, count }
    }
}

fn ratio(num: usize, den: usize) -> f32 {
    if den == 0 { 0.0 } else { num as f32 / den as f32 }
}

/// Index of the largest value; the first on a tie, NaNs ignored, 0 for an empty (or all-NaN) row.
pub fn argmax(row: &[f32]) -> usize {
    let mut best: Option<(usize, f32)> = None;
    for (i, &x) in row.iter().enumerate() {
        if !x.is_nan() && best.is_none_or(|(_, b)| x > b) {
            best = Some((i, x));
        }
    }
    best.map_or(0, |(i, _)| i)
}

/// `exp(x_i) / Σ exp(x_j)`, computed as `exp(x_i - max)` so large logits do not overflow.
/// NaN entries get probability 0; a row of only `-inf` (or NaN) is uniform; entries equal to
/// `+inf` share all the mass. Empty in, empty out.
pub fn softmax(row: &[f32]) -> Vec<f32> {
    let max = row.iter().copied().filter(|x| !x.is_nan()).fold(f32::NEG_INFINITY, f32::max);
    if max == f32::NEG_INFINITY {
        return vec![1.0 / row.len() as f32; row.len()];
    }
    let exps: Vec<f32> = row
        .iter()
        .map(|&x| match x {
            x if x.is_nan() => 0.0,
            x if max == f32::INFINITY => f32::from(u8::from(x == f32::INFINITY)),
            x => (x - max).exp(),
        })
        .collect();
    let sum: f32 = exps.iter().sum();
    exps.into_iter().map(|e| e / sum).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        ["cat", "dog", "bird", "fish"][..n].iter().map(|s| s.to_string()).collect()
    }

    fn close(a: f32, b: f32) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn three_classes_by_hand() {
        // truth: cat cat cat dog dog bird bird bird bird
        // pred:  cat dog cat dog bird bird bird cat bird
        let truth = [0, 0, 0, 1, 1, 2, 2, 2, 2];
        let pred = [0, 1, 0, 1, 2, 2, 2, 0, 2];
        let m = Metrics::new(&truth, &pred, &names(3));
        assert_eq!(m.confusion, vec![vec![2, 1, 0], vec![0, 1, 1], vec![1, 0, 3]]);
        assert_eq!(m.count, 9);
        assert!(close(m.accuracy, 6.0 / 9.0));
        // cat:  tp 2, predicted 3, support 3 → P 2/3, R 2/3, F1 2/3
        // dog:  tp 1, predicted 2, support 2 → P 1/2, R 1/2, F1 1/2
        // bird: tp 3, predicted 4, support 4 → P 3/4, R 3/4, F1 3/4
        // sklearn.metrics.f1_score(truth, pred, average="macro") = (2/3 + 1/2 + 3/4) / 3 = 0.638888…
        let expect = [(2.0 / 3.0, 2.0 / 3.0, 3), (0.5, 0.5, 2), (0.75, 0.75, 4)];
        for (c, (p, r, s)) in m.per_class.iter().zip(expect) {
            assert!(close(c.precision, p) && close(c.recall, r) && close(c.f1, p), "{c:?}");
            assert_eq!(c.support, s);
        }
        assert_eq!(m.per_class[2].label, "bird");
        assert!(close(m.macro_f1, 23.0 / 36.0));
    }

    #[test]
    fn unequal_precision_and_recall() {
        // truth: 0 0 0 0 1 1, pred: 0 0 1 1 1 1
        // class 0: tp 2, predicted 2, support 4 → P 1, R 0.5, F1 2/3
        // class 1: tp 2, predicted 4, support 2 → P 0.5, R 1, F1 2/3
        // sklearn: precision [1.0, 0.5], recall [0.5, 1.0], f1 [0.6667, 0.6667], accuracy 0.6667
        let m = Metrics::new(&[0, 0, 0, 0, 1, 1], &[0, 0, 1, 1, 1, 1], &names(2));
        assert!(close(m.per_class[0].precision, 1.0) && close(m.per_class[0].recall, 0.5));
        assert!(close(m.per_class[1].precision, 0.5) && close(m.per_class[1].recall, 1.0));
        assert!(close(m.per_class[0].f1, 2.0 / 3.0) && close(m.per_class[1].f1, 2.0 / 3.0));
        assert!(close(m.accuracy, 4.0 / 6.0) && close(m.macro_f1, 2.0 / 3.0));
    }

    #[test]
    fn zero_division_counts_as_zero() {
        // Never predicts dog: dog's precision is 0/0 → 0 (sklearn zero_division=0), recall 0/2.
        // sklearn macro F1 over the two present classes: cat F1 = 2·0.5·1/(1.5) = 2/3, dog 0 → 1/3.
        // "bird" (absent from truth and predictions) is left out of the macro average.
        let m = Metrics::new(&[0, 0, 1, 1], &[0, 0, 0, 0], &names(3));
        assert_eq!(m.per_class[1].precision, 0.0);
        assert_eq!(m.per_class[1].recall, 0.0);
        assert_eq!(m.per_class[1].f1, 0.0);
        assert_eq!(m.per_class[2].support, 0);
        assert!(close(m.per_class[0].precision, 0.5) && close(m.per_class[0].recall, 1.0));
        assert!(close(m.macro_f1, 1.0 / 3.0));
        assert!(close(m.accuracy, 0.5));
    }

    #[test]
    fn odd_inputs_do_not_panic() {
        let empty = Metrics::new(&[], &[], &names(2));
        assert_eq!((empty.count, empty.accuracy, empty.macro_f1), (0, 0.0, 0.0));
        assert_eq!(empty.confusion, vec![vec![0, 0], vec![0, 0]]);
        // An id past the label list, and slices of different lengths.
        let m = Metrics::new(&[0, 3, 1], &[0, 3], &names(2));
        assert_eq!(m.count, 2);
        assert_eq!(m.per_class.len(), 4);
        assert_eq!(m.per_class[3].label, "class 3");
        assert_eq!(m.accuracy, 1.0);
    }

    #[test]
    fn argmax_picks_the_first_largest() {
        assert_eq!(argmax(&[0.1, 0.7, 0.2]), 1);
        assert_eq!(argmax(&[2.0, 2.0, 1.0]), 0);
        assert_eq!(argmax(&[f32::NAN, -1.0, -3.0]), 1);
        assert_eq!(argmax(&[]), 0);
        assert_eq!(argmax(&[f32::NEG_INFINITY, f32::NEG_INFINITY]), 0);
    }

    #[test]
    fn softmax_is_stable_and_sums_to_one() {
        let p = softmax(&[1.0, 2.0, 3.0]);
        let e = [1f32.exp(), 2f32.exp(), 3f32.exp()];
        let z: f32 = e.iter().sum();
        for (a, b) in p.iter().zip(e) {
            assert!(close(*a, b / z));
        }
        // Would overflow exp() without subtracting the maximum.
        let p = softmax(&[1000.0, 1000.0, 0.0]);
        assert!(close(p[0], 0.5) && close(p[1], 0.5) && p[2] == 0.0);
        assert_eq!(softmax(&[]), Vec::<f32>::new());
        assert_eq!(softmax(&[f32::NEG_INFINITY; 2]), vec![0.5, 0.5]);
        assert_eq!(softmax(&[f32::INFINITY, 1.0]), vec![1.0, 0.0]);
        assert_eq!(softmax(&[f32::NAN, 0.0]), vec![0.0, 1.0]);
    }
}
