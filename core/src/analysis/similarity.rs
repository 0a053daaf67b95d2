//! Cosine similarity between vectors on the host.

/// `a · b / (|a| |b|)`; 0 when either vector is zero.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (&x, &y) in a.iter().zip(b) {
        dot += x as f64 * y as f64;
        na += x as f64 * x as f64;
        nb += y as f64 * y as f64;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    (dot / (na.sqrt() * nb.sqrt())) as f32
}

/// The symmetric matrix of pairwise cosines, ones on the diagonal (for non-zero vectors).
pub fn cosine_matrix(vectors: &[Vec<f32>]) -> Vec<Vec<f32>> {
    let n = vectors.len();
    let mut m = vec![vec![0f32; n]; n];
    for i in 0..n {
        for j in i..n {
            let c = cosine(&vectors[i], &vectors[j]);
            m[i][j] = c;
            m[j][i] = c;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_angles() {
        assert!((cosine(&[1.0, 0.0], &[0.0, 3.0])).abs() < 1e-7);
        assert!((cosine(&[1.0, 1.0], &[2.0, 2.0]) - 1.0).abs() < 1e-7);
        assert!((cosine(&[1.0, 0.0], &[-1.0, 0.0]) + 1.0).abs() < 1e-7);
        assert!((cosine(&[1.0, 0.0], &[1.0, 1.0]) - 0.5f32.sqrt()).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 1.0]), 0.0);
    }

    #[test]
    fn matrix_is_symmetric_with_unit_diagonal() {
        let m = cosine_matrix(&[vec![1.0, 2.0], vec![3.0, -1.0], vec![0.5, 0.5]]);
        for i in 0..3 {
            assert!((m[i][i] - 1.0).abs() < 1e-6);
            for j in 0..3 {
                assert_eq!(m[i][j], m[j][i]);
            }
        }
    }
}
