//! Splits and shuffles: a stratified train/validation [`Split`] and seeded epoch orders.

use super::DataError;
use crate::rng::Rng;

/// A train/validation split: indices into the examples, each list sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Indices of the training examples.
    pub train: Vec<usize>,
    /// Indices of the validation examples.
    pub valid: Vec<usize>,
}

/// Splits so that every class keeps its proportion: each class's indices are shuffled with
/// [`Rng`] seeded by `seed`, and `round(n × valid_fraction)` of them, but at least 1 and at most
/// `n - 1`, go to validation. The same inputs always give the same split. Classes with no examples
/// are ignored; a class with one example is an error (it cannot be in both parts), named `#id`
/// (use [`Dataset::split`] for names).
///
/// [`Dataset::split`]: super::Dataset::split
pub fn stratified_split(
    label_ids: &[usize],
    num_labels: usize,
    valid_fraction: f32,
    seed: u64,
) -> Result<Split, DataError> {
    split_classes(label_ids, num_labels, valid_fraction, seed, None)
}

pub(super) fn split_classes(
    label_ids: &[usize],
    num_labels: usize,
    valid_fraction: f32,
    seed: u64,
    names: Option<&[String]>,
) -> Result<Split, DataError> {
    if !(valid_fraction > 0.0 && valid_fraction < 1.0) {
        return Err(DataError::BadFraction(valid_fraction));
    }
    let mut classes = vec![Vec::new(); num_labels];
    for (index, &label) in label_ids.iter().enumerate() {
        classes
            .get_mut(label)
            .ok_or(DataError::LabelOutOfRange { index, label, num_labels })?
            .push(index);
    }
    let mut rng = Rng::new(seed);
    let (mut train, mut valid) = (Vec::new(), Vec::new());
    for (id, mut members) in classes.into_iter().enumerate() {
        let n = members.len();
        if n == 0 {
            continue;
        }
        if n < 2 {
            let label = names.and_then(|l| l.get(id).cloned()).unwrap_or_else(|| format!("#{id}"));
            return Err(DataError::TooFewToSplit { label, count: n });
        }
        rng.shuffle(&mut members);
        let k = ((n as f64 * valid_fraction as f64).round() as usize).clamp(1, n - 1);
        valid.extend_from_slice(&members[..k]);
        train.extend_from_slice(&members[k..]);
    }
    train.sort_unstable();
    valid.sort_unstable();
    Ok(Split { train, valid })
}

/// Indices of the training and the validation items when `fraction` of `n` items is held out
/// (rounded, at least one on each side), shuffled by `seed`: the split of the tasks whose items
/// have no class to stratify by (questions with endings, multi-label texts), the same in the
/// studio and on the command line. `None` for fewer than two items.
pub fn held_out(n: usize, fraction: f32, seed: u64) -> Option<(Vec<usize>, Vec<usize>)> {
    if n < 2 {
        return None;
    }
    let order = shuffled(n, seed);
    let held = ((n as f32 * fraction).round() as usize).clamp(1, n - 1);
    Some((order[held..].to_vec(), order[..held].to_vec()))
}

/// `0..n` in a random order fixed by `seed` (an epoch's order).
pub fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    Rng::new(seed).shuffle(&mut order);
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_out_share_keeps_every_item_once_on_one_side() {
        let (train, valid) = held_out(218, 0.2, 13).unwrap();
        assert_eq!((train.len(), valid.len()), (174, 44));
        let mut all: Vec<usize> = train.iter().chain(&valid).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..218).collect::<Vec<_>>());
        assert_eq!(held_out(218, 0.2, 13), Some((train, valid)), "the same seed, the same split");
        assert_eq!(held_out(2, 0.01, 1).map(|(t, v)| (t.len(), v.len())), Some((1, 1)), "never an empty side");
        assert_eq!(held_out(1, 0.2, 1), None);
    }
    use crate::data::test_util::{example, labeled};

    #[test]
    fn stratified_split_is_deterministic_proportional_and_complete() {
        let ids: Vec<usize> = (0..100).map(|i| if i % 4 == 0 { 1 } else { 0 }).collect(); // 75 / 25
        let a = stratified_split(&ids, 2, 0.2, 42).unwrap();
        assert_eq!(a, stratified_split(&ids, 2, 0.2, 42).unwrap());
        assert_ne!(a, stratified_split(&ids, 2, 0.2, 43).unwrap());
        assert_eq!(a.valid.iter().filter(|&&i| ids[i] == 0).count(), 15);
        assert_eq!(a.valid.iter().filter(|&&i| ids[i] == 1).count(), 5);
        assert!(a.train.windows(2).all(|w| w[0] < w[1]) && a.valid.windows(2).all(|w| w[0] < w[1]));
        let mut all: Vec<usize> = a.train.iter().chain(&a.valid).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..100).collect::<Vec<_>>());

        // Small classes: at least one in each part.
        let s = stratified_split(&[0, 0, 1, 1, 1], 3, 0.01, 0).unwrap();
        assert_eq!((s.train.len(), s.valid.len()), (3, 2));
        let s = stratified_split(&[0, 0], 1, 0.99, 0).unwrap();
        assert_eq!((s.train.len(), s.valid.len()), (1, 1));
    }

    #[test]
    fn split_errors() {
        assert_eq!(
            stratified_split(&[0, 0, 1], 2, 0.2, 0),
            Err(DataError::TooFewToSplit { label: "#1".into(), count: 1 })
        );
        let d =
            labeled(vec![example(2, "a", "pos"), example(3, "b", "pos"), example(4, "c", "neg")]);
        let e = d.split(0.2, 0).unwrap_err();
        assert!(e.to_string().starts_with("The label “neg” has only 1 example"), "{e}");
        assert_eq!(
            stratified_split(&[0, 2], 2, 0.2, 0),
            Err(DataError::LabelOutOfRange { index: 1, label: 2, num_labels: 2 })
        );
        for bad in [0.0, 1.0, -0.5, f32::NAN] {
            assert!(matches!(stratified_split(&[0, 0], 1, bad, 0), Err(DataError::BadFraction(_))));
        }
    }

    #[test]
    fn shuffled_is_a_seeded_permutation() {
        let a = shuffled(50, 1);
        assert_eq!(a, shuffled(50, 1));
        assert_ne!(a, shuffled(50, 2));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        assert!(shuffled(0, 1).is_empty());
    }
}
