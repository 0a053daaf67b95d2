//! What a layer's vectors know, measured on the host: linear probes, nearest-centroid word-sense
//! assignment, anisotropy (with and without z-scoring), and linear CKA between two sets of
//! representations (before vs after fine-tuning).

use crate::error::{Error, Result};
use crate::rng::Rng;
use crate::analysis::similarity::cosine;

/// Subtracts each dimension's mean and divides by its standard deviation (dimensions with no
/// spread are only centred).
pub fn standardize(vectors: &[Vec<f32>]) -> Vec<Vec<f32>> {
    let (mean, sd) = moments(vectors);
    vectors.iter().map(|v| apply_standardize(v, &mean, &sd)).collect()
}

fn moments(vectors: &[Vec<f32>]) -> (Vec<f32>, Vec<f32>) {
    let Some(first) = vectors.first() else { return (Vec::new(), Vec::new()) };
    let (n, dim) = (vectors.len() as f64, first.len());
    let mut mean = vec![0f64; dim];
    for v in vectors {
        for (m, &x) in mean.iter_mut().zip(v) {
            *m += x as f64 / n;
        }
    }
    let mut var = vec![0f64; dim];
    for v in vectors {
        for ((s, &x), m) in var.iter_mut().zip(v).zip(&mean) {
            *s += (x as f64 - m).powi(2) / n;
        }
    }
    (mean.iter().map(|&m| m as f32).collect(), var.iter().map(|&s| s.sqrt() as f32).collect())
}

fn apply_standardize(v: &[f32], mean: &[f32], sd: &[f32]) -> Vec<f32> {
    v.iter()
        .zip(mean)
        .zip(sd)
        .map(|((x, m), s)| if *s > 1e-12 { (x - m) / s } else { x - m })
        .collect()
}

/// The mean cosine between `pairs` random pairs of distinct vectors (seeded). Contextual
/// embeddings are anisotropic: random tokens point in similar directions, so this is far above 0;
/// after [`standardize`] it drops towards 0.
pub fn mean_random_cosine(vectors: &[Vec<f32>], pairs: usize, seed: u64) -> Result<f32> {
    let n = vectors.len();
    if n < 2 {
        return Err(Error::Input("anisotropy needs at least two vectors".into()));
    }
    let mut rng = Rng::new(seed);
    let mut total = 0f64;
    for _ in 0..pairs.max(1) {
        let i = rng.below(n);
        let mut j = rng.below(n - 1);
        if j >= i {
            j += 1;
        }
        total += cosine(&vectors[i], &vectors[j]) as f64;
    }
    Ok((total / pairs.max(1) as f64) as f32)
}

/// Leave-one-out nearest-centroid accuracy: each vector is assigned the label whose centroid
/// (of the *other* vectors with that label) is closest by cosine. Vectors whose label has no
/// other member are left out. `None` if nothing could be scored.
pub fn nearest_centroid_accuracy(vectors: &[Vec<f32>], labels: &[usize]) -> Option<f32> {
    let num_labels = labels.iter().max()? + 1;
    let dim = vectors.first()?.len();
    let mut sums = vec![vec![0f64; dim]; num_labels];
    let mut counts = vec![0usize; num_labels];
    for (v, &l) in vectors.iter().zip(labels) {
        counts[l] += 1;
        for (s, &x) in sums[l].iter_mut().zip(v) {
            *s += x as f64;
        }
    }
    let (mut scored, mut right) = (0usize, 0usize);
    for (v, &l) in vectors.iter().zip(labels) {
        if counts[l] < 2 {
            continue;
        }
        let best = (0..num_labels)
            .filter(|&c| counts[c] > usize::from(c == l))
            .map(|c| {
                let own = usize::from(c == l);
                let centroid: Vec<f32> = sums[c]
                    .iter()
                    .zip(v)
                    .map(|(s, &x)| ((s - own as f64 * x as f64) / (counts[c] - own) as f64) as f32)
                    .collect();
                (c, cosine(v, &centroid))
            })
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(c, _)| c);
        scored += 1;
        right += usize::from(best == Some(l));
    }
    (scored > 0).then(|| right as f32 / scored as f32)
}

/// Linear CKA (Kornblith et al., 2019) between two representations of the same `n` inputs:
/// 1 when one is a rotation and uniform scaling of the other, near 0 when unrelated.
pub fn linear_cka(x: &[Vec<f32>], y: &[Vec<f32>]) -> Result<f32> {
    let n = x.len();
    if n != y.len() || n < 2 {
        return Err(Error::Input("CKA needs the same inputs (at least two) on both sides".into()));
    }
    // Centred Gram matrices K = Xc Xcᵀ, L = Yc Ycᵀ; CKA = ⟨K, L⟩ / (‖K‖ ‖L‖).
    let gram = |rows: &[Vec<f32>]| -> Vec<f64> {
        let (mean, _) = moments(rows);
        let c: Vec<Vec<f64>> = rows.iter().map(|r| r.iter().zip(&mean).map(|(a, m)| (*a - m) as f64).collect()).collect();
        let mut k = vec![0f64; n * n];
        for i in 0..n {
            for j in i..n {
                let d: f64 = c[i].iter().zip(&c[j]).map(|(a, b)| a * b).sum();
                k[i * n + j] = d;
                k[j * n + i] = d;
            }
        }
        k
    };
    let (k, l) = (gram(x), gram(y));
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>();
    let denom = (dot(&k, &k) * dot(&l, &l)).sqrt();
    if denom == 0.0 {
        return Err(Error::Input("CKA is undefined for representations with no variance".into()));
    }
    Ok((dot(&k, &l) / denom) as f32)
}

/// How well a linear classifier reads a property off one layer's vectors.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeResult {
    /// Accuracy on the vectors it was fitted on.
    pub train_accuracy: f32,
    /// Accuracy on held-out vectors: what the layer "knows".
    pub test_accuracy: f32,
    /// Accuracy of always guessing the most frequent training label, on the held-out vectors.
    pub majority: f32,
}

/// Settings of [`linear_probe`].
#[derive(Debug, Clone, Copy)]
pub struct ProbeOptions {
    /// Full-batch gradient steps.
    pub steps: usize,
    /// Step size (the features are standardised, so one value suits every layer).
    pub learning_rate: f32,
    /// L2 penalty on the weights.
    pub l2: f32,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        Self { steps: 300, learning_rate: 0.5, l2: 1e-2 }
    }
}

/// Fits a multinomial logistic regression on `train` (standardised with the training
/// statistics) and scores it on `test`. Deterministic: weights start at zero.
pub fn linear_probe(
    train: (&[Vec<f32>], &[usize]),
    test: (&[Vec<f32>], &[usize]),
    num_labels: usize,
    options: ProbeOptions,
) -> Result<ProbeResult> {
    let (xs, ys) = train;
    if xs.is_empty() || test.0.is_empty() || xs.len() != ys.len() || test.0.len() != test.1.len() {
        return Err(Error::Input("a probe needs labeled vectors on both sides of the split".into()));
    }
    if num_labels < 2 || ys.iter().chain(test.1).any(|&y| y >= num_labels) {
        return Err(Error::Input("a probe needs at least two labels, and every label in range".into()));
    }
    let (mean, sd) = moments(xs);
    let xs: Vec<Vec<f32>> = xs.iter().map(|v| apply_standardize(v, &mean, &sd)).collect();
    let test_x: Vec<Vec<f32>> = test.0.iter().map(|v| apply_standardize(v, &mean, &sd)).collect();
    let (n, dim, c) = (xs.len(), xs[0].len(), num_labels);
    let mut w = vec![0f32; c * dim];
    let mut b = vec![0f32; c];
    let logits = |w: &[f32], b: &[f32], x: &[f32]| -> Vec<f32> {
        (0..c).map(|k| b[k] + w[k * dim..(k + 1) * dim].iter().zip(x).map(|(p, q)| p * q).sum::<f32>()).collect()
    };
    for _ in 0..options.steps {
        let mut gw = vec![0f32; c * dim];
        let mut gb = vec![0f32; c];
        for (x, &y) in xs.iter().zip(ys) {
            let p = crate::tasks::metrics::softmax(&logits(&w, &b, x));
            for k in 0..c {
                let g = (p[k] - f32::from(k == y)) / n as f32;
                gb[k] += g;
                for (gw, xi) in gw[k * dim..(k + 1) * dim].iter_mut().zip(x) {
                    *gw += g * xi;
                }
            }
        }
        for (wi, gi) in w.iter_mut().zip(&gw) {
            *wi -= options.learning_rate * (gi + options.l2 * *wi);
        }
        for (bi, gi) in b.iter_mut().zip(&gb) {
            *bi -= options.learning_rate * gi;
        }
    }
    let accuracy = |xs: &[Vec<f32>], ys: &[usize]| {
        let right = xs.iter().zip(ys).filter(|(x, y)| crate::tasks::metrics::argmax(&logits(&w, &b, x)) == **y).count();
        right as f32 / xs.len() as f32
    };
    let mut counts = vec![0usize; c];
    ys.iter().for_each(|&y| counts[y] += 1);
    let majority_label = (0..c).max_by_key(|&k| (counts[k], std::cmp::Reverse(k))).unwrap_or(0);
    let majority = test.1.iter().filter(|&&y| y == majority_label).count() as f32 / test.1.len() as f32;
    if w.iter().any(|x| !x.is_finite()) {
        return Err(Error::Training("the probe diverged".into()));
    }
    Ok(ProbeResult { train_accuracy: accuracy(&xs, ys), test_accuracy: accuracy(&test_x, test.1), majority })
}

/// Linear probes of one set of vectors fitted in closed form: ridge regression onto each label's
/// one-hot column, the label read as the largest output (a least-squares linear classifier).
/// The factorisation depends on the vectors only, so several label sets (a property and its
/// control task) cost one; that keeps word-level probes, with hundreds of vectors per layer,
/// within a second or so where gradient steps would take many.
#[derive(Debug, Clone)]
pub struct LeastSquaresProbes {
    /// The training vectors, standardised with their own statistics.
    train: Vec<Vec<f32>>,
    mean: Vec<f32>,
    sd: Vec<f32>,
    /// Lower-triangular Cholesky factor of XᵀX + λI (`dim × dim`, row-major).
    factor: Vec<f64>,
}

impl LeastSquaresProbes {
    /// Standardises `train` and factorises its regularised Gram matrix; `l2` is the penalty per
    /// training vector (λ = `l2` · n, so the same value suits any number of vectors).
    pub fn new(train: &[Vec<f32>], l2: f64) -> Result<Self> {
        let Some(dim) = train.first().map(Vec::len) else {
            return Err(Error::Input("a probe needs vectors to train on".into()));
        };
        if dim == 0 || train.iter().any(|v| v.len() != dim) || !(l2 > 0.0) {
            return Err(Error::Input("a probe needs vectors of one width and a positive penalty".into()));
        }
        let (mean, sd) = moments(train);
        let train: Vec<Vec<f32>> = train.iter().map(|v| apply_standardize(v, &mean, &sd)).collect();
        let mut gram = vec![0f64; dim * dim];
        for v in &train {
            for i in 0..dim {
                let vi = v[i] as f64;
                if vi == 0.0 {
                    continue;
                }
                let row = &mut gram[i * dim..i * dim + i + 1];
                for (g, &vj) in row.iter_mut().zip(&v[..=i]) {
                    *g += vi * vj as f64;
                }
            }
        }
        let lambda = l2 * train.len() as f64;
        for i in 0..dim {
            gram[i * dim + i] += lambda;
        }
        let factor = cholesky(gram, dim)?;
        Ok(Self { train, mean, sd, factor })
    }

    /// Fits a probe for `labels` (one per training vector, below `num_labels`) and scores it on
    /// `test`; `majority` is the held-out share of the most frequent training label.
    pub fn score(&self, labels: &[usize], test: (&[Vec<f32>], &[usize]), num_labels: usize) -> Result<ProbeResult> {
        let (n, dim, c) = (self.train.len(), self.mean.len(), num_labels);
        if labels.len() != n || test.0.is_empty() || test.0.len() != test.1.len() {
            return Err(Error::Input("a probe needs labeled vectors on both sides of the split".into()));
        }
        if c < 2 || labels.iter().chain(test.1).any(|&y| y >= c) {
            return Err(Error::Input("a probe needs at least two labels, and every label in range".into()));
        }
        // The features are centred, so the intercept is each label's share and the weights solve
        // (XᵀX + λI) W = Xᵀ (Y − share).
        let mut counts = vec![0usize; c];
        labels.iter().for_each(|&y| counts[y] += 1);
        let share: Vec<f64> = counts.iter().map(|&k| k as f64 / n as f64).collect();
        let mut rhs = vec![0f64; c * dim];
        for (v, &y) in self.train.iter().zip(labels) {
            for k in 0..c {
                let t = f64::from(u8::from(k == y)) - share[k];
                for (r, &x) in rhs[k * dim..(k + 1) * dim].iter_mut().zip(v) {
                    *r += t * x as f64;
                }
            }
        }
        let weights: Vec<Vec<f64>> = rhs.chunks(dim).map(|b| solve_cholesky(&self.factor, dim, b)).collect();
        let predict = |x: &[f32]| -> usize {
            let outputs: Vec<f32> = weights.iter().zip(&share).map(|(w, b)| (b + w.iter().zip(x).map(|(p, &q)| p * q as f64).sum::<f64>()) as f32).collect();
            crate::tasks::metrics::argmax(&outputs)
        };
        if weights.iter().flatten().any(|w| !w.is_finite()) {
            return Err(Error::Training("the probe's weights are not finite".into()));
        }
        let right = |xs: &mut dyn Iterator<Item = (Vec<f32>, usize)>| {
            let (mut total, mut ok) = (0usize, 0usize);
            for (x, y) in xs {
                total += 1;
                ok += usize::from(predict(&x) == y);
            }
            ok as f32 / total.max(1) as f32
        };
        let train_accuracy = right(&mut self.train.iter().cloned().zip(labels.iter().copied()));
        let test_accuracy = right(&mut test.0.iter().map(|v| apply_standardize(v, &self.mean, &self.sd)).zip(test.1.iter().copied()));
        let majority_label = (0..c).max_by_key(|&k| (counts[k], std::cmp::Reverse(k))).unwrap_or(0);
        let majority = test.1.iter().filter(|&&y| y == majority_label).count() as f32 / test.1.len() as f32;
        Ok(ProbeResult { train_accuracy, test_accuracy, majority })
    }
}

/// The Cholesky factor L of a symmetric positive-definite `a` (`n × n`, lower triangle read),
/// with L Lᵀ = a.
fn cholesky(mut a: Vec<f64>, n: usize) -> Result<Vec<f64>> {
    for j in 0..n {
        let d = a[j * n + j] - (0..j).map(|k| a[j * n + k] * a[j * n + k]).sum::<f64>();
        if !(d > 0.0) {
            return Err(Error::Training("the probe's system is not positive definite".into()));
        }
        let d = d.sqrt();
        a[j * n + j] = d;
        for i in j + 1..n {
            let s = a[i * n + j] - (0..j).map(|k| a[i * n + k] * a[j * n + k]).sum::<f64>();
            a[i * n + j] = s / d;
        }
        for k in j + 1..n {
            a[j * n + k] = 0.0;
        }
    }
    Ok(a)
}

/// Solves L Lᵀ x = b for the factor of [`cholesky`].
fn solve_cholesky(l: &[f64], n: usize, b: &[f64]) -> Vec<f64> {
    let mut y = vec![0f64; n];
    for i in 0..n {
        y[i] = (b[i] - (0..i).map(|k| l[i * n + k] * y[k]).sum::<f64>()) / l[i * n + i];
    }
    let mut x = vec![0f64; n];
    for i in (0..n).rev() {
        x[i] = (y[i] - (i + 1..n).map(|k| l[k * n + i] * x[k]).sum::<f64>()) / l[i * n + i];
    }
    x
}

/// Hewitt and Liang's control task for a word-level property: each word type (`types[i]`, the
/// word of occurrence `i`) gets one label, drawn from the labels' own distribution (the label of
/// a random occurrence, seeded), the same wherever the word occurs. A probe reaches it only by
/// memorising words, so a real probe's lead over it (selectivity) is what the vectors add.
pub fn control_labels<S: AsRef<str>>(types: &[S], labels: &[usize], seed: u64) -> Vec<usize> {
    let mut rng = Rng::new(seed);
    let mut chosen = std::collections::BTreeMap::<&str, usize>::new();
    // Types in order of first occurrence, so the draw does not depend on a map's order.
    for t in types {
        if !chosen.contains_key(t.as_ref()) && !labels.is_empty() {
            chosen.insert(t.as_ref(), labels[rng.below(labels.len())]);
        }
    }
    types.iter().map(|t| chosen.get(t.as_ref()).copied().unwrap_or(0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(rng: &mut Rng, n: usize, dim: usize) -> Vec<Vec<f32>> {
        (0..n).map(|_| (0..dim).map(|_| rng.next_f32() * 2.0 - 1.0).collect()).collect()
    }

    #[test]
    fn standardize_gives_zero_mean_unit_spread() {
        let mut rng = Rng::new(1);
        let v: Vec<Vec<f32>> = noise(&mut rng, 50, 4).into_iter().map(|r| r.iter().map(|x| 3.0 * x + 5.0).collect()).collect();
        let z = standardize(&v);
        let (mean, sd) = moments(&z);
        for k in 0..4 {
            assert!(mean[k].abs() < 1e-5 && (sd[k] - 1.0).abs() < 1e-4, "{mean:?} {sd:?}");
        }
    }

    #[test]
    fn anisotropy_of_a_shared_offset_and_its_removal() {
        // Noise around a common direction: random pairs have a high mean cosine; z-scoring
        // removes the common direction and the mean cosine falls to about 0.
        let mut rng = Rng::new(2);
        let v: Vec<Vec<f32>> = noise(&mut rng, 200, 16)
            .into_iter()
            .map(|r| r.iter().enumerate().map(|(k, x)| x + if k == 0 { 8.0 } else { 0.0 }).collect())
            .collect();
        let raw = mean_random_cosine(&v, 2000, 9).unwrap();
        let z = mean_random_cosine(&standardize(&v), 2000, 9).unwrap();
        assert!(raw > 0.8, "{raw}");
        assert!(z.abs() < 0.05, "{z}");
        assert!(mean_random_cosine(&v[..1], 10, 9).is_err());
    }

    #[test]
    fn nearest_centroid_separates_two_senses() {
        let mut rng = Rng::new(4);
        let mut v = Vec::new();
        let mut labels = Vec::new();
        for sense in 0..2 {
            for _ in 0..10 {
                v.push((0..8).map(|k| if k == sense { 3.0 } else { 0.0 } + rng.next_f32() * 0.5).collect::<Vec<f32>>());
                labels.push(sense);
            }
        }
        assert_eq!(nearest_centroid_accuracy(&v, &labels), Some(1.0));
        // Pure noise with random labels is near chance (here: exactly computed, but below 0.8).
        let n = noise(&mut rng, 40, 8);
        let random: Vec<usize> = (0..40).map(|i| i % 2).collect();
        assert!(nearest_centroid_accuracy(&n, &random).unwrap() < 0.8);
        // A label with one member cannot be scored.
        assert_eq!(nearest_centroid_accuracy(&v[..1], &[0]), None);
    }

    #[test]
    fn cka_known_answers() {
        let mut rng = Rng::new(5);
        let x = noise(&mut rng, 30, 6);
        assert!((linear_cka(&x, &x).unwrap() - 1.0).abs() < 1e-6);
        // A rotation in the (0, 1) plane, a uniform scale and a shift change nothing.
        let (s, c) = (0.6f32, 0.8f32);
        let y: Vec<Vec<f32>> = x
            .iter()
            .map(|r| {
                let mut o: Vec<f32> = r.iter().map(|v| 3.0 * v + 1.0).collect();
                o[0] = 3.0 * (c * r[0] - s * r[1]) + 1.0;
                o[1] = 3.0 * (s * r[0] + c * r[1]) + 1.0;
                o
            })
            .collect();
        assert!((linear_cka(&x, &y).unwrap() - 1.0).abs() < 1e-5);
        // Independent noise: low similarity.
        let z = noise(&mut rng, 30, 6);
        assert!(linear_cka(&x, &z).unwrap() < 0.5);
        // CKA of 1-D representations is the squared correlation.
        let a: Vec<Vec<f32>> = (0..10).map(|i| vec![i as f32]).collect();
        let b: Vec<Vec<f32>> = (0..10).map(|i| vec![(i as f32 - 4.5).abs()]).collect();
        assert!(linear_cka(&a, &b).unwrap().abs() < 1e-6);
        assert!(linear_cka(&a, &b[..3]).is_err());
    }

    #[test]
    fn probe_reads_a_linear_property_and_not_noise() {
        let mut rng = Rng::new(6);
        let make = |rng: &mut Rng, n: usize| {
            let x = noise(rng, n, 10);
            let y: Vec<usize> = x.iter().map(|r| usize::from(r[3] + 0.5 * r[7] > 0.0)).collect();
            (x, y)
        };
        let (tx, ty) = make(&mut rng, 150);
        let (vx, vy) = make(&mut rng, 80);
        let r = linear_probe((&tx, &ty), (&vx, &vy), 2, ProbeOptions::default()).unwrap();
        assert!(r.test_accuracy > 0.9, "{r:?}");
        // Labels unrelated to the vectors: held-out accuracy near the majority baseline.
        let shuffled: Vec<usize> = (0..80).map(|_| rng.below(2)).collect();
        let train_random: Vec<usize> = (0..150).map(|_| rng.below(2)).collect();
        let r = linear_probe((&tx, &train_random), (&vx, &shuffled), 2, ProbeOptions::default()).unwrap();
        assert!(r.test_accuracy < 0.7, "{r:?}");
        assert!(linear_probe((&tx, &ty), (&vx, &vy), 1, ProbeOptions::default()).is_err());
    }

    #[test]
    fn least_squares_probes_read_a_linear_property_and_not_noise() {
        let mut rng = Rng::new(7);
        // Three classes along two directions, plus noise dimensions.
        let make = |rng: &mut Rng, n: usize| {
            let x = noise(rng, n, 12);
            let y: Vec<usize> = x.iter().map(|r| if r[2] > 0.3 { 2 } else if r[5] > 0.0 { 1 } else { 0 }).collect();
            (x, y)
        };
        let (tx, ty) = make(&mut rng, 300);
        let (vx, vy) = make(&mut rng, 150);
        let probes = LeastSquaresProbes::new(&tx, 1e-3).unwrap();
        let r = probes.score(&ty, (&vx, &vy), 3).unwrap();
        assert!(r.test_accuracy > 0.85, "{r:?}");
        // The same factorisation, labels unrelated to the vectors: about the majority share.
        let random: Vec<usize> = (0..300).map(|_| rng.below(3)).collect();
        let random_test: Vec<usize> = (0..150).map(|_| rng.below(3)).collect();
        let r = probes.score(&random, (&vx, &random_test), 3).unwrap();
        assert!(r.test_accuracy < 0.5, "{r:?}");
        assert!(probes.score(&ty, (&vx, &vy), 1).is_err());
        assert!(probes.score(&ty[1..], (&vx, &vy), 3).is_err());
        assert!(LeastSquaresProbes::new(&[], 1e-3).is_err());
    }

    #[test]
    fn cholesky_solves_a_known_system() {
        // a = [[4, 2], [2, 3]]: L = [[2, 0], [1, √2]]; a x = (2, 1) has x = (0.5, 0).
        let l = cholesky(vec![4.0, 0.0, 2.0, 3.0], 2).unwrap();
        assert!((l[0] - 2.0).abs() < 1e-12 && (l[2] - 1.0).abs() < 1e-12 && (l[3] - 2f64.sqrt()).abs() < 1e-12);
        let x = solve_cholesky(&l, 2, &[2.0, 1.0]);
        assert!((x[0] - 0.5).abs() < 1e-12 && x[1].abs() < 1e-12, "{x:?}");
        assert!(cholesky(vec![1.0, 0.0, 2.0, 1.0], 2).is_err(), "not positive definite");
    }

    #[test]
    fn a_control_task_gives_each_word_one_label_from_the_real_ones() {
        let types = ["the", "dog", "the", "runs", "dog", "the"];
        let labels = [0, 1, 0, 2, 1, 0];
        let control = control_labels(&types, &labels, 3);
        assert_eq!((control[0], control[0]), (control[2], control[5]));
        assert_eq!(control[1], control[4]);
        assert!(control.iter().all(|c| labels.contains(c)));
        assert_eq!(control, control_labels(&types, &labels, 3), "seeded");
    }
}
