//! When each example is seen and at what learning rate: the linear warmup-then-decay schedule,
//! steps per epoch, and transformers' length-grouped batching.

use crate::rng::Rng;

/// Batches per megabatch in [`group_by_length`] (transformers' `LengthGroupedSampler` uses 50).
const MEGABATCH: usize = 50;

/// Reorders a shuffled `order` so each run of `batch` consecutive positions holds examples of
/// similar length, as transformers' `group_by_length` does: `order` is cut into megabatches of
/// [`MEGABATCH`] batches, each sorted longest first and cut into batches, and the full batches
/// are shuffled (the one short batch, if any, stays last, so batch `k` is
/// `order[k * batch..]`). Which examples share a batch is still random, within a megabatch.
pub fn group_by_length(mut order: Vec<usize>, lengths: &[usize], batch: usize, rng: &mut Rng) -> Vec<usize> {
    let batch = batch.max(1);
    for mega in order.chunks_mut(batch * MEGABATCH) {
        mega.sort_by_key(|&i| std::cmp::Reverse(lengths[i]));
    }
    let mut batches: Vec<&[usize]> = order.chunks(batch).collect();
    let short = batches.pop_if(|b| b.len() < batch);
    rng.shuffle(&mut batches);
    batches.into_iter().chain(short).flatten().copied().collect()
}

pub(crate) fn steps_per_epoch(examples: usize, batch: usize) -> usize {
    examples.div_ceil(batch.max(1))
}

/// Linear warmup from 0 to `peak` over `warmup` steps, then linear decay to 0 at `total`
/// (transformers' `get_linear_schedule_with_warmup`). `step` counts from 0.
pub fn linear_schedule(step: usize, total: usize, warmup: usize, peak: f64) -> f64 {
    if step < warmup {
        peak * (step + 1) as f64 / warmup as f64
    } else {
        peak * (total.saturating_sub(step)) as f64 / (total.saturating_sub(warmup)).max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_warms_up_then_decays_to_zero() {
        let lr: Vec<f64> = (0..10).map(|s| linear_schedule(s, 10, 2, 1.0)).collect();
        assert_eq!(lr[0], 0.5);
        assert_eq!(lr[1], 1.0);
        assert_eq!(lr[2], 1.0);
        assert!((lr[9] - 0.125).abs() < 1e-12);
        assert!(lr.windows(2).skip(2).all(|w| w[1] < w[0]));
        assert_eq!(linear_schedule(10, 10, 2, 1.0), 0.0);
    }

    #[test]
    fn group_by_length_keeps_every_example_and_pads_less() {
        let mut rng = Rng::new(9);
        let lengths: Vec<usize> = (0..1000).map(|_| 3 + rng.below(62)).collect();
        let mut order: Vec<usize> = (0..1000).collect();
        rng.shuffle(&mut order);
        let batch = 16;
        let grouped = group_by_length(order.clone(), &lengths, batch, &mut rng);
        let mut sorted = grouped.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<_>>(), "a permutation");
        // Each full batch comes from one megabatch of the shuffled order; the short one is last.
        let megabatch_of = |i: usize| order.iter().position(|&j| j == i).unwrap() / (batch * MEGABATCH);
        for b in grouped.chunks(batch) {
            assert!(b.iter().all(|&i| megabatch_of(i) == megabatch_of(b[0])), "{b:?}");
        }
        assert_eq!(grouped.chunks(batch).last().unwrap().len(), 1000 % batch);
        // Padded tokens: each batch pads to its longest member.
        let padded = |o: &[usize]| o.chunks(batch).map(|b| b.len() * b.iter().map(|&i| lengths[i]).max().unwrap()).sum::<usize>();
        let real: usize = lengths.iter().sum();
        assert!(padded(&grouped) < real * 11 / 10, "grouped {} vs {real} real tokens", padded(&grouped));
        assert!(padded(&order) > real * 3 / 2, "shuffled {} vs {real} real tokens", padded(&order));
        // Batches are in a random order, not longest first.
        let maxima: Vec<usize> = grouped.chunks(batch).map(|b| lengths[b[0]]).collect();
        assert!(maxima.windows(2).any(|w| w[0] < w[1]), "{maxima:?}");
    }
}
