//! Dropout that can draw its masks from a seeded generator of its own thread.
//!
//! burn's [`Dropout`] draws its masks from the device's one shared generator. That is right for a
//! batch that runs as one piece, but when [`crate::train`] runs the halves of a batch on two
//! threads at once, the order in which they draw from a shared generator depends on the
//! scheduler, and so would every mask and loss. Inside [`with_seeded_masks`] the masks of this
//! thread come from [`Rng`] instead, seeded per half: the same masks whatever the number of
//! threads or their timing. Outside it, [`forward`] is burn's dropout unchanged (the masks stay
//! on the device, which matters on a GPU).

use std::cell::RefCell;

use burn::nn::Dropout;
use burn::prelude::*;
use burn::tensor::TensorData;

use crate::rng::Rng;

thread_local! {
    static MASKS: RefCell<Option<Rng>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's dropout masks drawn from `Rng::new(seed)`, in the order the
/// layers run. Calls nest: the generator in place before is back when `f` returns (or unwinds),
/// which matters when a thread that waits for work takes another half of the batch meanwhile.
pub fn with_seeded_masks<R>(seed: u64, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Rng>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            MASKS.with(|m| *m.borrow_mut() = previous);
        }
    }
    let _restore = Restore(MASKS.with(|m| m.replace(Some(Rng::new(seed)))));
    f()
}

/// `dropout` applied to `input`: the input itself when the layer is not training (no autodiff
/// device, a frozen layer, or probability 0); otherwise each element is zeroed with probability
/// `p` and the others scaled by `1 / (1 - p)`.
///
/// # Shapes
/// - `input`: any; output: the same
pub fn forward<const D: usize>(dropout: &Dropout, input: Tensor<D>) -> Tensor<D> {
    if !dropout.training.is_enabled() || !input.device().is_autodiff() || dropout.prob == 0.0 {
        return input;
    }
    let shape = input.shape();
    let n = shape.num_elements();
    match MASKS.with(|m| m.borrow_mut().as_mut().map(|rng| mask(rng, dropout.prob, n))) {
        Some(values) => {
            let mask = Tensor::<D>::from_data(TensorData::new(values, shape), &input.device());
            input * mask
        }
        None => dropout.forward(input),
    }
}

/// `n` values, each `0` with probability `p` and `1 / (1 - p)` otherwise, from 32 random bits
/// apiece (two per draw of the generator, drawn all at once so the loop vectorises).
fn mask(rng: &mut Rng, p: f64, n: usize) -> Vec<f32> {
    let threshold = (p * 4_294_967_296.0).round().min(u32::MAX as f64) as u32;
    let keep = (1.0 / (1.0 - p)) as f32;
    let pick = |bits: u32| if bits < threshold { 0.0 } else { keep };
    let mut values = vec![0.0; n];
    let mut draws = rng.next_many(n.div_ceil(2));
    let mut pairs = values.chunks_exact_mut(2);
    for (pair, bits) in (&mut pairs).zip(&mut draws) {
        pair[0] = pick(bits as u32);
        pair[1] = pick((bits >> 32) as u32);
    }
    if let (Some(last), Some(bits)) = (pairs.into_remainder().first_mut(), draws.next()) {
        *last = pick(bits as u32);
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::nn::DropoutConfig;

    fn ones(n: usize, device: &Device) -> Tensor<2> {
        Tensor::ones([n, 1000], device)
    }

    #[test]
    fn seeded_masks_drop_the_right_share_and_scale_the_rest() {
        let device = Device::flex().autodiff();
        let dropout = DropoutConfig::new(0.1).init();
        let values: Vec<f32> =
            with_seeded_masks(7, || forward(&dropout, ones(200, &device))).into_data().try_to_vec().unwrap();
        let zeros = values.iter().filter(|&&v| v == 0.0).count();
        let kept = values.iter().filter(|&&v| (v - 1.0 / 0.9).abs() < 1e-6).count();
        assert_eq!(zeros + kept, values.len(), "every value is 0 or 1/(1-p)");
        let share = zeros as f64 / values.len() as f64;
        // 200,000 draws: the standard error of the share is 0.00067.
        assert!((share - 0.1).abs() < 0.003, "dropped {share}");
    }

    #[test]
    fn the_same_seed_gives_the_same_masks_and_another_seed_others() {
        let device = Device::flex().autodiff();
        let dropout = DropoutConfig::new(0.5).init();
        let draw = |seed| -> Vec<f32> {
            with_seeded_masks(seed, || {
                let first = forward(&dropout, ones(2, &device));
                let second = forward(&dropout, ones(2, &device));
                Tensor::cat(vec![first, second], 0).into_data().try_to_vec().unwrap()
            })
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
        let a = draw(1);
        assert_ne!(a[..2000], a[2000..], "the second layer draws new masks");
    }

    #[test]
    fn nested_seeds_restore_the_outer_generator() {
        let device = Device::flex().autodiff();
        let dropout = DropoutConfig::new(0.5).init();
        let alone: Vec<f32> = with_seeded_masks(3, || {
            let _ = forward(&dropout, ones(1, &device));
            forward(&dropout, ones(1, &device)).into_data().try_to_vec().unwrap()
        });
        let interrupted: Vec<f32> = with_seeded_masks(3, || {
            let _ = forward(&dropout, ones(1, &device));
            let _ = with_seeded_masks(9, || forward(&dropout, ones(1, &device)));
            forward(&dropout, ones(1, &device)).into_data().try_to_vec().unwrap()
        });
        assert_eq!(alone, interrupted);
    }

    #[test]
    fn masks_are_the_generators_numbers_in_order() {
        // Two values per 64 bits, low half first; an odd count takes the low half of one more.
        let mut rng = Rng::new(5);
        let values = mask(&mut rng, 0.5, 7);
        let mut reference = Rng::new(5);
        let bits: Vec<u32> = (0..4).flat_map(|_| {
            let b = reference.next_u64();
            [b as u32, (b >> 32) as u32]
        }).collect();
        let expected: Vec<f32> = bits[..7].iter().map(|&b| if b < 1 << 31 { 0.0 } else { 2.0 }).collect();
        assert_eq!(values, expected);
        assert_eq!(rng, reference, "the generator moves on by four numbers");
    }

    #[test]
    fn no_training_no_masks() {
        let dropout = DropoutConfig::new(0.5).init();
        // Not an autodiff device: inference.
        let x = ones(1, &Device::flex());
        let y = with_seeded_masks(1, || forward(&dropout, x.clone()));
        assert_eq!(y.into_data(), x.into_data());
    }
}
