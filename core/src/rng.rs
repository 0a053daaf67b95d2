//! A small seeded pseudo-random generator (SplitMix64) for splits, shuffles and masking.
//!
//! The same seed gives the same numbers on every platform (wasm included) and in every release of
//! this crate, so a split or an epoch order can be reproduced from its seed alone. Not for
//! cryptography.

/// SplitMix64 (Steele, Lea & Flood, 2014): 64 bits of state, passes BigCrush, one add and three
/// multiply-xorshift steps per number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

/// SplitMix64's increment of the state per number (the golden ratio's fraction in 64 bits).
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function: three multiply-xorshift steps of the state.
#[inline(always)]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator started from `seed`. Every seed, 0 included, is fine.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The generator's state: `Rng::new(r.state())` continues where `r` is.
    pub fn state(&self) -> u64 {
        self.state
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix(self.state)
    }

    /// The next `count` numbers, the same as `count` calls of [`Rng::next_u64`]. Each is a
    /// function of its position alone, so a loop over them carries nothing from one to the next
    /// and the compiler can vectorise it (dropout draws millions a step).
    pub fn next_many(&mut self, count: usize) -> impl Iterator<Item = u64> + use<> {
        let start = self.state;
        self.state = start.wrapping_add((count as u64).wrapping_mul(GAMMA));
        (1..=count as u64).map(move |i| mix(start.wrapping_add(i.wrapping_mul(GAMMA))))
    }

    /// A uniform integer in `0..n`, without modulo bias (Lemire's multiply-and-reject).
    /// Returns 0 when `n` is 0.
    pub fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        let n = n as u64;
        let threshold = n.wrapping_neg() % n; // 2^64 mod n
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as usize;
            }
        }
    }

    /// A uniform `f32` in `[0, 1)`, from the top 24 bits (every value is exact in `f32`).
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 * (1.0 / (1u32 << 24) as f32)
    }

    /// Shuffles `items` in place (Fisher–Yates): every order equally likely.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_at_once_are_the_same_numbers_one_by_one() {
        let (mut one, mut many) = (Rng::new(99), Rng::new(99));
        let first: Vec<u64> = many.next_many(5).collect();
        assert_eq!(first, (0..5).map(|_| one.next_u64()).collect::<Vec<_>>());
        assert_eq!(many.next_u64(), one.next_u64(), "and leave the generator where they end");
        assert_eq!(many.next_many(0).count(), 0);
        assert_eq!(many, one);
    }

    #[test]
    fn matches_the_reference_splitmix64() {
        // First outputs of the reference C implementation (Vigna) seeded with 1234567.
        let mut rng = Rng::new(1234567);
        assert_eq!(rng.next_u64(), 6457827717110365317);
        assert_eq!(rng.next_u64(), 3203168211198807973);
        assert_eq!(rng.next_u64(), 9817491932198370423);
    }

    #[test]
    fn same_seed_same_stream_different_seed_different_stream() {
        let a: Vec<u64> = (0..8).scan(Rng::new(7), |r, _| Some(r.next_u64())).collect();
        let b: Vec<u64> = (0..8).scan(Rng::new(7), |r, _| Some(r.next_u64())).collect();
        let c: Vec<u64> = (0..8).scan(Rng::new(8), |r, _| Some(r.next_u64())).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut rng = Rng::new(1);
        assert_eq!(rng.below(0), 0);
        assert_eq!(rng.below(1), 0);
        let mut seen = [0usize; 7];
        for _ in 0..7000 {
            seen[rng.below(7)] += 1;
        }
        // Each bucket expects 1000; 5 standard deviations is about ±150.
        assert!(seen.iter().all(|&c| (850..1150).contains(&c)), "{seen:?}");
    }

    #[test]
    fn floats_are_in_the_unit_interval_with_mean_one_half() {
        let mut rng = Rng::new(3);
        let xs: Vec<f32> = (0..10_000).map(|_| rng.next_f32()).collect();
        assert!(xs.iter().all(|&x| (0.0..1.0).contains(&x)));
        let mean = xs.iter().sum::<f32>() / xs.len() as f32;
        assert!((mean - 0.5).abs() < 0.02, "{mean}");
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut v: Vec<usize> = (0..100).collect();
        Rng::new(9).shuffle(&mut v);
        assert_ne!(v, (0..100).collect::<Vec<_>>());
        v.sort_unstable();
        assert_eq!(v, (0..100).collect::<Vec<_>>());
        let mut empty: [u8; 0] = [];
        Rng::new(9).shuffle(&mut empty);
    }
}
