//! Helpers shared by the CPU kernels in [`crate::nn`]: two closures side by side where the
//! build has threads, a row-wise split of element-wise work, a Flex tensor's values, SIMD-shaped
//! sums and the exponential the kernels vectorise. Below every kernel: nothing here imports
//! the model or training.

use burn::backend::flex::FlexTensor;

/// `(a(), b())`, side by side on rayon's threads where this build has them.
#[cfg(any(not(target_family = "wasm"), feature = "threads"))]
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    rayon::join(a, b)
}

/// `(a(), b())`: the browser's single-thread build.
#[cfg(all(target_family = "wasm", not(feature = "threads")))]
pub fn join<RA, RB>(a: impl FnOnce() -> RA, b: impl FnOnce() -> RB) -> (RA, RB) {
    (a(), b())
}

/// Runs `f(first row, x, g, out)` over matching chunks of `x`, `g` and `out`, each chunk whole
/// rows of `width` values: halves of the rows on two threads above 64k values where the build
/// has threads. Elementwise work passes a width of 1.
pub fn map_split(
    x: &[f32],
    g: Option<&[f32]>,
    out: &mut [f32],
    width: usize,
    first_row: usize,
    f: &(dyn Fn(usize, &[f32], Option<&[f32]>, &mut [f32]) + Sync),
) {
    const SERIAL: usize = 1 << 16;
    let rows = x.len() / width;
    if x.len() > SERIAL && rows >= 2 && cfg!(any(not(target_family = "wasm"), feature = "threads")) {
        let mid = rows / 2;
        let (x1, x2) = x.split_at(mid * width);
        let (g1, g2) = match g {
            Some(g) => {
                let (a, b) = g.split_at(mid * width);
                (Some(a), Some(b))
            }
            None => (None, None),
        };
        let (o1, o2) = out.split_at_mut(mid * width);
        join(|| map_split(x1, g1, o1, width, first_row, f), || map_split(x2, g2, o2, width, first_row + mid, f));
        return;
    }
    f(first_row, x, g, out);
}

/// A Flex tensor's values in logical order (borrowed when contiguous, copied otherwise).
pub fn values(t: &FlexTensor) -> std::borrow::Cow<'_, [f32]> {
    let layout = t.layout();
    match layout.contiguous_offsets() {
        Some((start, end)) if layout.is_contiguous() => std::borrow::Cow::Borrowed(&t.storage::<f32>()[start..end]),
        _ => std::borrow::Cow::Owned(t.to_contiguous().storage::<f32>().to_vec()),
    }
}

/// `Σ f(a_i, b_i)` in eight interleaved partial sums, added in a fixed order: the compiler
/// turns it into SIMD (a single running sum would be a chain it must keep in order).
#[inline(always)]
pub fn sum_pairs(a: &[f32], b: &[f32], f: impl Fn(f32, f32) -> f32) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += f(x[l], y[l]);
        }
    }
    let mut sum = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (&x, &y) in ra.iter().zip(rb) {
        sum += f(x, y);
    }
    sum
}

/// `e^x` for `x ≤ 0` (the arguments here are `-x²/2`), within about 2 ulp; 0 below −87.
#[inline(always)]
pub fn exp_nonpositive(x: f32) -> f32 {
    const LOG2_E: f32 = std::f32::consts::LOG2_E;
    // ln 2 split so that n · LN2_HI is exact for the n that occur.
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let underflow = x < -87.0;
    // A select, not `x.max(-87.0)`: wasm's `f32x4.max` treats NaN differently from Rust's
    // `f32::max`, so a vectorised loop would call libm's `fmaxf` for each lane instead.
    let x = if underflow { -87.0 } else { x };
    // The nearest integer to x · log₂e, by adding and removing 1.5 · 2²³ (exact for |y| < 2²²):
    // plain additions, which vectorise on every target (`floor` is a libm call on baseline x86-64).
    const ROUND: f32 = 12_582_912.0;
    let n = (x * LOG2_E + ROUND) - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    // e^r on |r| ≤ ln2/2: Taylor to degree 7 (remainder below 6e-9).
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    let scale = f32::from_bits(((n as i32 + 127) as u32) << 23);
    if underflow { 0.0 } else { p * scale }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_accurate_on_its_range() {
        for i in 0..=86_990 {
            let x = -(i as f32) * 1e-3;
            let (got, want) = (f64::from(exp_nonpositive(x)), f64::from(x).exp());
            assert!((got - want).abs() <= 3.0 * f64::from(f32::EPSILON) * want + 1e-38, "exp({x}) = {got}, want {want}");
        }
        assert_eq!(exp_nonpositive(-88.0), 0.0);
        assert_eq!(exp_nonpositive(0.0), 1.0);
    }
}
