//! What a layer's vectors know, measured on the host: linear probes, nearest-centroid word-sense
//! assignment, anisotropy (with and without z-scoring), and linear CKA between two sets of
//! representations (before vs after fine-tuning).

use serde::Serialize;

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
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
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
}
