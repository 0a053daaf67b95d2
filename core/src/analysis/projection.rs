//! 2-D maps of high-dimensional vectors: PCA (through nalgebra's SVD) and t-SNE (the `bhtsne`
//! crate), plus the TensorFlow Embedding Projector's TSV format.
//!
//! Everything here is plain host math on `f32` rows, so it runs the same natively and in wasm.

use nalgebra::DMatrix;

use crate::error::{Error, Result};

/// A principal component analysis of a set of row vectors.
#[derive(Debug, Clone)]
pub struct Pca {
    /// The mean that was subtracted, `dim` long.
    pub mean: Vec<f32>,
    /// Unit-length principal directions, largest variance first; `k` rows of `dim`.
    pub components: Vec<Vec<f32>>,
    /// Fraction of the total variance along each component.
    pub explained: Vec<f32>,
    /// Each input row projected onto the components (`k` coordinates per row).
    pub coords: Vec<Vec<f32>>,
}

fn check_rows(vectors: &[Vec<f32>]) -> Result<usize> {
    let Some(first) = vectors.first() else {
        return Err(Error::Input("there are no vectors to project".into()));
    };
    let dim = first.len();
    if dim == 0 || vectors.iter().any(|v| v.len() != dim) {
        return Err(Error::Input("the vectors to project differ in length".into()));
    }
    if vectors.iter().flatten().any(|x| !x.is_finite()) {
        return Err(Error::Input("a vector to project has NaN or infinite values".into()));
    }
    Ok(dim)
}

/// Principal components of `vectors` (one row each), keeping `k` of them.
///
/// The sign of each component is fixed so that its largest-magnitude entry is positive, as
/// scikit-learn does, so the same data always gives the same picture. With fewer than `k`
/// independent directions the remaining components are zero.
pub fn pca(vectors: &[Vec<f32>], k: usize) -> Result<Pca> {
    let dim = check_rows(vectors)?;
    let n = vectors.len();
    let mut mean = vec![0f64; dim];
    for v in vectors {
        for (m, &x) in mean.iter_mut().zip(v) {
            *m += x as f64 / n as f64;
        }
    }
    let centered = DMatrix::<f64>::from_fn(n, dim, |i, j| vectors[i][j] as f64 - mean[j]);
    let total: f64 = centered.iter().map(|x| x * x).sum();
    let svd = centered.clone().svd(false, true);
    let v_t = svd.v_t.ok_or_else(|| Error::Input("the SVD did not converge".into()))?;
    // nalgebra does not promise an order: sort singular values, largest first.
    let mut order: Vec<usize> = (0..svd.singular_values.len()).collect();
    order.sort_by(|&a, &b| svd.singular_values[b].total_cmp(&svd.singular_values[a]));
    let mut components = Vec::with_capacity(k);
    let mut explained = Vec::with_capacity(k);
    for c in 0..k {
        let Some(&row) = order.get(c) else {
            components.push(vec![0f32; dim]);
            explained.push(0.0);
            continue;
        };
        let mut direction: Vec<f64> = v_t.row(row).iter().copied().collect();
        let largest = direction.iter().copied().fold(0f64, |m, x| if x.abs() > m.abs() { x } else { m });
        if largest < 0.0 {
            direction.iter_mut().for_each(|x| *x = -*x);
        }
        let s = svd.singular_values[row];
        explained.push(if total > 0.0 { (s * s / total) as f32 } else { 0.0 });
        components.push(direction.iter().map(|&x| x as f32).collect());
    }
    let coords = (0..n)
        .map(|i| {
            components
                .iter()
                .map(|c| (0..dim).map(|j| centered[(i, j)] * c[j] as f64).sum::<f64>() as f32)
                .collect()
        })
        .collect();
    Ok(Pca { mean: mean.into_iter().map(|m| m as f32).collect(), components, explained, coords })
}

/// How to draw vectors in two dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Principal components: linear, distances along the axes are meaningful.
    Pca,
    /// t-SNE: keeps neighbourhoods, not distances; cluster sizes and gaps mean little.
    Tsne,
}

impl Method {
    /// Name for the page.
    pub fn label(self) -> &'static str {
        match self {
            Method::Pca => "PCA",
            Method::Tsne => "t-SNE",
        }
    }
}

/// Settings of a t-SNE map.
#[derive(Debug, Clone, Copy)]
pub struct TsneOptions {
    /// Roughly the number of neighbours each point keeps close (lowered for small sets).
    pub perplexity: f32,
    /// Optimisation steps.
    pub epochs: usize,
}

impl Default for TsneOptions {
    fn default() -> Self {
        Self { perplexity: 15.0, epochs: 750 }
    }
}

/// A 2-D map of a set of vectors.
#[derive(Debug, Clone)]
pub struct Projection {
    /// How it was made.
    pub method: Method,
    /// One `(x, y)` per input row.
    pub points: Vec<[f32; 2]>,
    /// For PCA, the variance fraction along each axis.
    pub explained: Option<[f32; 2]>,
    /// For t-SNE, the perplexity actually used.
    pub perplexity: Option<f32>,
}

/// The fewest points t-SNE accepts (perplexity 1 needs three neighbours).
pub const TSNE_MIN_POINTS: usize = 4;

/// Maps `vectors` to 2-D.
///
/// t-SNE first reduces to (at most) 50 principal components, as is customary, and starts from
/// the PCA layout scaled down, so the result is deterministic.
pub fn project(vectors: &[Vec<f32>], method: Method, tsne: TsneOptions) -> Result<Projection> {
    check_rows(vectors)?;
    match method {
        Method::Pca => {
            let p = pca(vectors, 2)?;
            Ok(Projection {
                method,
                points: p.coords.iter().map(|c| [c[0], c[1]]).collect(),
                explained: Some([p.explained[0], p.explained[1]]),
                perplexity: None,
            })
        }
        Method::Tsne => {
            let n = vectors.len();
            if n < TSNE_MIN_POINTS {
                return Err(Error::Input(format!("t-SNE needs at least {TSNE_MIN_POINTS} points; there are {n}")));
            }
            // bhtsne requires n - 1 ≥ 3 · ⌊perplexity⌋.
            let perplexity = tsne.perplexity.min(((n - 1) / 3) as f32).max(1.0);
            let reduced = pca(vectors, 50.min(vectors[0].len()))?;
            let sd = |axis: usize| {
                let m = reduced.coords.iter().map(|c| c[axis]).sum::<f32>() / n as f32;
                (reduced.coords.iter().map(|c| (c[axis] - m).powi(2)).sum::<f32>() / n as f32).sqrt().max(1e-12)
            };
            let sd0 = sd(0);
            // PCA initialisation, first axis with standard deviation 1e-4 (openTSNE's habit).
            let init: Vec<f32> = reduced.coords.iter().flat_map(|c| [c[0] / sd0 * 1e-4, c[1] / sd0 * 1e-4]).collect();
            let rows: Vec<&[f32]> = reduced.coords.iter().map(Vec::as_slice).collect();
            let mut fit: bhtsne::tSNE<f32, &[f32], 2> = bhtsne::tSNE::new(&rows);
            fit.perplexity(perplexity).epochs(tsne.epochs.max(1)).initial_embedding(init).barnes_hut(0.5, |a, b| {
                a.iter().zip(b.iter()).map(|(x, y)| (x - y).powi(2)).sum::<f32>().sqrt()
            });
            let flat = fit.embedding();
            if flat.iter().any(|x| !x.is_finite()) {
                return Err(Error::Input("t-SNE diverged (NaN coordinates); try PCA or more points".into()));
            }
            Ok(Projection {
                method,
                points: flat.chunks(2).map(|c| [c[0], c[1]]).collect(),
                explained: None,
                perplexity: Some(perplexity),
            })
        }
    }
}

/// One metadata cell of a projector TSV: tabs and line breaks would split the row.
fn tsv_cell(s: &str) -> String {
    s.chars().map(|c| if c == '\t' || c == '\n' || c == '\r' { ' ' } else { c }).collect()
}

/// The TensorFlow Embedding Projector's two files (projector.tensorflow.org, "Load"):
/// `vectors.tsv` (one tab-separated vector per line) and `metadata.tsv` (a header row, then one
/// row per vector; with a single column the projector wants no header, so none is written).
pub fn projector_tsv(vectors: &[Vec<f32>], columns: &[&str], metadata: &[Vec<String>]) -> Result<(String, String)> {
    check_rows(vectors)?;
    if metadata.len() != vectors.len() || metadata.iter().any(|m| m.len() != columns.len()) {
        return Err(Error::Input("the metadata does not match the vectors".into()));
    }
    let mut v = String::new();
    for row in vectors {
        let cells: Vec<String> = row.iter().map(|x| format!("{x}")).collect();
        v.push_str(&cells.join("\t"));
        v.push('\n');
    }
    let mut m = String::new();
    if columns.len() > 1 {
        m.push_str(&columns.iter().map(|c| tsv_cell(c)).collect::<Vec<_>>().join("\t"));
        m.push('\n');
    }
    for row in metadata {
        m.push_str(&row.iter().map(|c| tsv_cell(c)).collect::<Vec<_>>().join("\t"));
        m.push('\n');
    }
    Ok((v, m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn pca_finds_the_known_axis_and_variance() {
        // Points on the line y = 2x (plus a tiny orthogonal wobble): the first component is
        // (1, 2)/√5, and it carries almost all the variance.
        let vectors: Vec<Vec<f32>> =
            (0..20).map(|i| i as f32 - 10.0).map(|t| vec![t - 0.02 * (t % 2.0), 2.0 * t + 0.01 * (t % 2.0)]).collect();
        let p = pca(&vectors, 2).unwrap();
        let c = &p.components[0];
        let s5 = 5f32.sqrt();
        assert!((c[0] - 1.0 / s5).abs() < 1e-3 && (c[1] - 2.0 / s5).abs() < 1e-3, "{c:?}");
        assert!(p.explained[0] > 0.999, "{:?}", p.explained);
        assert!((p.explained.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        // Components are orthonormal.
        let dot: f32 = p.components[0].iter().zip(&p.components[1]).map(|(a, b)| a * b).sum();
        assert!(dot.abs() < 1e-5);
        // The coordinate along the first axis is the centred point's projection: the first
        // point is t = -10 and the mean of t is -0.5, so it sits at -9.5·√5.
        assert!((p.coords[0][0] - (-9.5 * s5)).abs() < 0.05, "{:?}", p.coords[0]);
    }

    #[test]
    fn pca_matches_the_eigenvalues_of_a_known_covariance() {
        // Axis-aligned data with variances 9, 4 and 1 (±3, ±2, ±1 on each axis): the components
        // are the axes, the explained fractions 9/14, 4/14, 1/14.
        let mut vectors = Vec::new();
        for (axis, scale) in [(0, 3.0f32), (1, 2.0), (2, 1.0)] {
            for sign in [-1.0f32, 1.0] {
                let mut v = vec![0.0; 3];
                v[axis] = sign * scale;
                vectors.push(v);
            }
        }
        let p = pca(&vectors, 3).unwrap();
        for (k, want) in [9.0f32 / 14.0, 4.0 / 14.0, 1.0 / 14.0].iter().enumerate() {
            assert!((p.explained[k] - want).abs() < 1e-5, "{:?}", p.explained);
            assert!((p.components[k][k] - 1.0).abs() < 1e-5, "{:?}", p.components);
        }
    }

    #[test]
    fn pca_of_a_rotated_square_recovers_distances() {
        // With as many components as dimensions, PCA is a rotation: distances are kept.
        let mut rng = Rng::new(3);
        let vectors: Vec<Vec<f32>> = (0..12).map(|_| (0..5).map(|_| rng.next_f32() * 2.0 - 1.0).collect()).collect();
        let p = pca(&vectors, 5).unwrap();
        let dist = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f32>().sqrt();
        for i in 0..12 {
            for j in 0..12 {
                assert!((dist(&vectors[i], &vectors[j]) - dist(&p.coords[i], &p.coords[j])).abs() < 1e-4);
            }
        }
    }

    #[test]
    fn pca_is_deterministic_and_rejects_bad_input() {
        let vectors = vec![vec![1.0, 0.0, 2.0], vec![0.0, 1.0, 1.0], vec![3.0, 1.0, 0.0]];
        let a = pca(&vectors, 2).unwrap();
        let b = pca(&vectors, 2).unwrap();
        assert_eq!(a.coords, b.coords);
        assert!(pca(&[], 2).is_err());
        assert!(pca(&[vec![1.0, 2.0], vec![1.0]], 2).is_err());
        assert!(pca(&[vec![f32::NAN, 2.0], vec![1.0, 0.0]], 2).is_err());
        // One point: no variance at all, but no panic either.
        let one = pca(&[vec![1.0, 2.0]], 2).unwrap();
        assert_eq!(one.coords[0], vec![0.0, 0.0]);
    }

    #[test]
    fn tsne_keeps_two_clusters_apart() {
        // Two tight clusters far apart in 10-D: every point's nearest map neighbour is from
        // its own cluster, and the clusters' centres are further apart than their spreads.
        let mut rng = Rng::new(7);
        let mut vectors = Vec::new();
        for c in 0..2 {
            for _ in 0..15 {
                vectors.push((0..10).map(|d| if d == c { 10.0 } else { 0.0 } + rng.next_f32() * 0.1).collect::<Vec<f32>>());
            }
        }
        let map = project(&vectors, Method::Tsne, TsneOptions { perplexity: 5.0, epochs: 500 }).unwrap();
        assert_eq!(map.points.len(), 30);
        for i in 0..30 {
            let nearest = (0..30)
                .filter(|&j| j != i)
                .min_by(|&a, &b| {
                    let d = |j: usize| (map.points[i][0] - map.points[j][0]).powi(2) + (map.points[i][1] - map.points[j][1]).powi(2);
                    d(a).total_cmp(&d(b))
                })
                .unwrap();
            assert_eq!(nearest / 15, i / 15, "point {i}'s nearest neighbour {nearest} is in the other cluster");
        }
        // Deterministic: PCA start, no random seed.
        let again = project(&vectors, Method::Tsne, TsneOptions { perplexity: 5.0, epochs: 500 }).unwrap();
        assert_eq!(map.points, again.points);
    }

    #[test]
    fn tsne_lowers_perplexity_for_small_sets_and_refuses_tiny_ones() {
        let vectors: Vec<Vec<f32>> = (0..7).map(|i| vec![i as f32, (i * i) as f32]).collect();
        let map = project(&vectors, Method::Tsne, TsneOptions::default()).unwrap();
        assert_eq!(map.perplexity, Some(2.0));
        assert!(project(&vectors[..3], Method::Tsne, TsneOptions::default()).is_err());
    }

    #[test]
    fn projector_files_have_one_row_per_vector() {
        let vectors = vec![vec![0.5, -1.0], vec![2.0, 0.25]];
        let meta = vec![vec!["bank".to_string(), "river\tside".to_string()], vec!["bank".into(), "loan".into()]];
        let (v, m) = projector_tsv(&vectors, &["token", "sentence"], &meta).unwrap();
        assert_eq!(v, "0.5\t-1\n2\t0.25\n");
        assert_eq!(m, "token\tsentence\nbank\triver side\nbank\tloan\n");
        let (_, single) = projector_tsv(&vectors, &["label"], &[vec!["a".into()], vec!["b".into()]]).unwrap();
        assert_eq!(single, "a\nb\n");
        assert!(projector_tsv(&vectors, &["label"], &[vec!["a".into()]]).is_err());
    }
}
