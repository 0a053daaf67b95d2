//! The run policy every training run shares, whatever its task: one unit of work at a time
//! between the host's pause and cancel, a turn for the host's event loop now and then, a
//! checkpoint at each epoch's end (but not twice within a short gap) and every few minutes of a
//! long epoch, and, across restarts with new seeds, keeping the run whose best validation score
//! is highest. The page's worker and the command line drive their runs through
//! [`Session::drive`], so this policy is tested natively.
//!
//! `core` has no clock and no event loop: the host gives both ([`Host`]).

use super::finetune::{Event, FineTuner, Phase};
use super::pretrain::{PretrainStep, Pretrainer};
use crate::error::Result;

/// What the host gives a running session. (`async fn` without `Send` bounds on purpose: in the
/// browser the futures live on one thread.)
#[allow(async_fn_in_trait)]
pub trait Host {
    /// Milliseconds on any monotonic clock.
    fn now_ms(&self) -> f64;
    /// Whether the user asked to stop; the session stops between two units of work.
    fn cancelled(&self) -> bool;
    /// Returns once the run is not paused (or is cancelled); at once when it is not paused.
    async fn until_resumed(&self);
    /// Gives the host's event loop a turn (in the browser: messages such as Pause and Cancel
    /// arrive then); natively nothing.
    async fn breathe(&self);
}

/// A run the session drives, one unit of work per [`Run::advance`].
#[allow(async_fn_in_trait)]
pub trait Run {
    /// What one unit of work did.
    type Event;
    /// The next unit of work; `None` once the run is over.
    async fn advance(&mut self) -> Result<Option<Self::Event>>;
    /// Changes exactly when an epoch (or a stage) ends: the session checkpoints there.
    fn epoch_mark(&self) -> (u8, usize);
    /// Whether the run is over.
    fn is_done(&self) -> bool;
    /// Whether a snapshot can be taken now (between two optimizer steps).
    fn can_snapshot(&self) -> bool;
}

impl Run for FineTuner {
    type Event = Event;

    async fn advance(&mut self) -> Result<Option<Event>> {
        Ok(match FineTuner::advance(self).await? {
            Event::Finished => None,
            event => Some(event),
        })
    }

    fn epoch_mark(&self) -> (u8, usize) {
        (self.progress().phase as u8, self.epochs_done())
    }

    fn is_done(&self) -> bool {
        self.progress().phase == Phase::Done
    }

    fn can_snapshot(&self) -> bool {
        FineTuner::can_snapshot(self)
    }
}

impl Run for Pretrainer {
    type Event = PretrainStep;

    async fn advance(&mut self) -> Result<Option<PretrainStep>> {
        self.step().await
    }

    fn epoch_mark(&self) -> (u8, usize) {
        (0, self.epochs_done())
    }

    fn is_done(&self) -> bool {
        let (step, total) = self.progress();
        step >= total
    }

    fn can_snapshot(&self) -> bool {
        false
    }
}

/// When checkpoints are written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckpointPolicy {
    /// No checkpoint at an epoch's end within this many ms of the last one (head-only epochs
    /// take milliseconds).
    pub min_gap_ms: f64,
    /// During a long epoch, one every this many ms. 0: only at epochs' ends.
    pub every_ms: f64,
}

impl Default for CheckpointPolicy {
    fn default() -> Self {
        Self { min_gap_ms: 15_000.0, every_ms: 120_000.0 }
    }
}

impl CheckpointPolicy {
    /// No checkpoints at all.
    pub const NEVER: Self = Self { min_gap_ms: f64::INFINITY, every_ms: 0.0 };

    /// Whether a checkpoint is due at `now`, for a run that started at `started`, whose last
    /// checkpoint was at `last` (none yet: the first epoch's end writes one) and whose epoch
    /// just ended or not.
    pub fn due(&self, epoch_ended: bool, now: f64, started: f64, last: Option<f64>) -> bool {
        let periodic = |since: f64| self.every_ms > 0.0 && now - since >= self.every_ms;
        match last {
            None => (epoch_ended && self.min_gap_ms.is_finite()) || periodic(started),
            Some(last) => (epoch_ended && now - last >= self.min_gap_ms) || periodic(last),
        }
    }
}

/// How a drive ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Every planned step was taken.
    Finished,
    /// The host cancelled; the run keeps what it had (its best weights, for a fine-tuning run).
    Cancelled,
}

/// One drive of a run: the checkpoint clock and how often the host gets a turn.
#[derive(Debug, Clone)]
pub struct Session {
    /// When checkpoints are due.
    pub policy: CheckpointPolicy,
    /// The host's event loop gets a turn after this many ms of work.
    pub breathe_every_ms: f64,
    started: Option<f64>,
    last_checkpoint: Option<f64>,
}

impl Session {
    /// A session with `policy`; the host gets a turn every 25 ms.
    pub fn new(policy: CheckpointPolicy) -> Self {
        Self { policy, breathe_every_ms: 25.0, started: None, last_checkpoint: None }
    }

    /// When the last checkpoint was written, on the host's clock.
    pub fn last_checkpoint(&self) -> Option<f64> {
        self.last_checkpoint
    }

    /// Runs `run` to its end or until the host cancels. Each unit of work's event goes to
    /// `on_event` (awaited: the lab reads its probe sentences' fills there); when a checkpoint
    /// is due (and the run can be snapshotted), `checkpoint` is awaited with the run. An error from the run ends the drive; the run keeps its last good
    /// weights (a non-finite step is refused before its update).
    pub async fn drive<R: Run, H: Host>(
        &mut self,
        run: &mut R,
        host: &H,
        mut on_event: impl AsyncFnMut(&R, R::Event),
        mut checkpoint: impl AsyncFnMut(&R),
    ) -> Result<Ended> {
        let started = *self.started.get_or_insert(host.now_ms());
        let mut last_turn = host.now_ms();
        loop {
            host.until_resumed().await;
            if host.cancelled() {
                return Ok(Ended::Cancelled);
            }
            let before = run.epoch_mark();
            let Some(event) = run.advance().await? else { return Ok(Ended::Finished) };
            on_event(run, event).await;
            let epoch_ended = run.epoch_mark() != before && !run.is_done();
            let now = host.now_ms();
            if !run.is_done() && run.can_snapshot() && self.policy.due(epoch_ended, now, started, self.last_checkpoint) {
                checkpoint(run).await;
                self.last_checkpoint = Some(host.now_ms());
            }
            if host.now_ms() - last_turn > self.breathe_every_ms {
                host.breathe().await;
                last_turn = host.now_ms();
            }
        }
    }
}

/// The seed of restart `index` of a run seeded `seed`.
pub fn restart_seed(seed: u64, index: usize) -> u64 {
    seed + index as u64
}

/// Whether a restart whose best validation score is `candidate` replaces the one kept (`kept`):
/// only a strictly higher score does, and a restart never evaluated never does.
pub fn better(kept: Option<f32>, candidate: Option<f32>) -> bool {
    match (kept, candidate) {
        (_, None) => false,
        (None, Some(_)) => true,
        (Some(k), Some(c)) => c > k,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::model::BertModelConfig;
    use crate::tasks::classification::predict;
    use crate::tasks::metrics::argmax;
    use crate::test_util::{device_rng, tiny_config, toy};
    use crate::tokenizer::Encoded;
    use crate::train::{FineTuneConfig, TrainMode};
    use burn::prelude::*;
    use std::cell::{Cell, RefCell};

    /// A clock the test moves, pause and cancel flags, and a log of what the session asked.
    #[derive(Default)]
    struct FakeHost {
        now: Cell<f64>,
        /// Milliseconds each unit of work takes.
        tick: f64,
        cancel_after: Cell<Option<usize>>,
        paused_for: Cell<usize>,
        waits: Cell<usize>,
        turns: Cell<usize>,
        units: Cell<usize>,
    }

    impl Host for FakeHost {
        fn now_ms(&self) -> f64 {
            self.now.get()
        }
        fn cancelled(&self) -> bool {
            self.cancel_after.get().is_some_and(|n| self.units.get() >= n)
        }
        async fn until_resumed(&self) {
            if self.paused_for.get() > 0 {
                self.paused_for.set(0);
                self.waits.set(self.waits.get() + 1);
            }
        }
        async fn breathe(&self) {
            self.turns.set(self.turns.get() + 1);
        }
    }

    /// `epochs` epochs of `steps` units each; the host's clock moves `tick` per unit.
    struct Counter<'a> {
        host: &'a FakeHost,
        steps: usize,
        epochs: usize,
        done: usize,
    }

    impl Run for Counter<'_> {
        type Event = usize;
        async fn advance(&mut self) -> Result<Option<usize>> {
            if self.done == self.steps * self.epochs {
                return Ok(None);
            }
            self.done += 1;
            self.host.units.set(self.done);
            self.host.now.set(self.host.now.get() + self.host.tick);
            Ok(Some(self.done))
        }
        fn epoch_mark(&self) -> (u8, usize) {
            (0, self.done / self.steps)
        }
        fn is_done(&self) -> bool {
            self.done == self.steps * self.epochs
        }
        fn can_snapshot(&self) -> bool {
            true
        }
    }

    fn drive(host: &FakeHost, steps: usize, epochs: usize, policy: CheckpointPolicy) -> (Ended, Vec<usize>, Vec<usize>) {
        let mut run = Counter { host, steps, epochs, done: 0 };
        let (events, saved) = (RefCell::new(Vec::new()), RefCell::new(Vec::new()));
        let ended = pollster::block_on(Session::new(policy).drive(
            &mut run,
            host,
            async |_: &Counter, e| events.borrow_mut().push(e),
            async |r: &Counter| saved.borrow_mut().push(r.done),
        ))
        .unwrap();
        (ended, events.into_inner(), saved.into_inner())
    }

    #[test]
    fn checkpoints_at_epoch_ends_but_not_within_the_gap_and_never_after_the_last_step() {
        // 1 s per step, 10 steps an epoch, 4 epochs; gap 15 s: epoch ends at 10, 20, 30 s.
        let host = FakeHost { tick: 1_000.0, ..Default::default() };
        let (ended, events, saved) = drive(&host, 10, 4, CheckpointPolicy { min_gap_ms: 15_000.0, every_ms: 0.0 });
        assert_eq!(ended, Ended::Finished);
        assert_eq!(events, (1..=40).collect::<Vec<_>>());
        // At 10 s (the first end), not at 20 s (10 s later), at 30 s; the run's end is no checkpoint.
        assert_eq!(saved, [10, 30]);
    }

    #[test]
    fn a_long_epoch_is_checkpointed_every_period() {
        let host = FakeHost { tick: 50_000.0, ..Default::default() };
        let (_, _, saved) = drive(&host, 10, 1, CheckpointPolicy::default());
        // 50 s a step: 120 s after the start (step 3, at 150 s), then 120 s after that (step 6 at 300 s), step 9 at 450 s.
        assert_eq!(saved, [3, 6, 9]);
        let host = FakeHost { tick: 1.0, ..Default::default() };
        let (_, _, saved) = drive(&host, 10, 3, CheckpointPolicy::NEVER);
        assert!(saved.is_empty());
    }

    #[test]
    fn cancel_stops_between_units_and_pause_waits_for_the_host() {
        let host = FakeHost { tick: 10.0, ..Default::default() };
        host.cancel_after.set(Some(7));
        host.paused_for.set(1);
        let (ended, events, _) = drive(&host, 5, 3, CheckpointPolicy::NEVER);
        assert_eq!(ended, Ended::Cancelled);
        assert_eq!(events.len(), 7);
        assert_eq!(host.waits.get(), 1);
        // 10 ms a unit, a turn after more than 25 ms of work.
        assert_eq!(host.turns.get(), 2);
    }

    #[test]
    fn restarts_keep_the_strictly_best() {
        assert!(better(None, Some(0.5)));
        assert!(!better(Some(0.5), None));
        assert!(!better(Some(0.5), Some(0.5)));
        assert!(better(Some(0.5), Some(0.75)));
        assert_eq!(restart_seed(42, 2), 44);
    }

    /// Freeze-then-unfreeze through a session that checkpoints at every epoch's end: the second
    /// stage is checkpointed once, at its start, and announced by the next unit, which is no
    /// epoch's end (no second checkpoint of the same step).
    #[test]
    fn freeze_then_unfreeze_announces_its_second_stage_after_the_checkpoint_between_the_stages() {
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        let bert = BertModelConfig::new(tiny_config(64)).init(&device);
        // 16 training examples in batches of 8: 2 steps an epoch.
        let cfg = FineTuneConfig::new().with_mode(TrainMode::FreezeThenUnfreeze).with_batch_size(8).with_head_epochs(2).with_epochs(1).with_seed(5);
        let mut tuner = FineTuner::new(bert, 0, 16, vec!["a".into(), "b".into()], toy(16, 1), toy(8, 2), cfg, &device).unwrap();
        let host = FakeHost::default();
        let log = RefCell::new(Vec::new());
        let ended = pollster::block_on(Session::new(CheckpointPolicy { min_gap_ms: 0.0, every_ms: 0.0 }).drive(
            &mut tuner,
            &host,
            async |_: &FineTuner, e| {
                log.borrow_mut().push(match e {
                    Event::PhaseStarted { phase, steps } => format!("start {phase:?}, {steps} steps"),
                    Event::Step(s) => format!("step {}", s.step),
                    Event::Evaluated(r) => format!("evaluated {:?}", r.phase),
                    _ => return,
                })
            },
            async |t: &FineTuner| log.borrow_mut().push(format!("checkpoint: {:?} at step {}", t.progress().phase, t.progress().step)),
        ))
        .unwrap();
        assert_eq!(ended, Ended::Finished);
        assert_eq!(
            log.into_inner(),
            [
                "start Head, 4 steps",
                "checkpoint: Head at step 0",
                "step 1",
                "step 2",
                "evaluated Head",
                "checkpoint: Head at step 2",
                "step 3",
                "step 4",
                "evaluated Head",
                "checkpoint: Full at step 4",
                "start Full, 2 steps",
                "step 5",
                "step 6",
                "evaluated Full",
            ]
        );
    }

    /// Cancelling a real fine-tuning run after its first evaluations keeps the best weights
    /// evaluated so far, not the last ones.
    #[test]
    fn a_cancelled_fine_tuning_keeps_its_best_weights() {
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        device.seed(4);
        let bert = BertModelConfig::new(tiny_config(64)).init(&device);
        let cfg = FineTuneConfig::new().with_mode(TrainMode::Full).with_batch_size(8).with_learning_rate(3e-3).with_epochs(6).with_eval_every(2).with_seed(5);
        let valid = toy(16, 2);
        let mut tuner = FineTuner::new(bert, 0, 16, vec!["a".into(), "b".into()], toy(48, 1), valid.clone(), cfg, &device).unwrap();
        let host = FakeHost { tick: 1.0, ..Default::default() };
        host.cancel_after.set(Some(30));
        let accuracies = RefCell::new(Vec::new());
        let ended = pollster::block_on(Session::new(CheckpointPolicy::NEVER).drive(
            &mut tuner,
            &host,
            async |_: &FineTuner, e| {
                host.units.set(host.units.get() + 1);
                if let Event::Evaluated(r) = e {
                    accuracies.borrow_mut().push(r.metrics.accuracy);
                }
            },
            async |_: &FineTuner| {},
        ))
        .unwrap();
        assert_eq!(ended, Ended::Cancelled);
        let accuracies = accuracies.into_inner();
        assert!(accuracies.len() >= 2, "{accuracies:?}");
        let best = accuracies.iter().cloned().fold(f32::MIN, f32::max);
        assert_eq!(tuner.best_accuracy(), Some(best));
        let enc: Vec<Encoded> = valid.iter().map(|t| t.encoded.clone()).collect();
        let probs = pollster::block_on(predict(&tuner.best_model(), crate::tasks::classification::Scoring::Softmax, &enc, 0, 8, &Device::flex())).unwrap();
        let acc = probs.iter().zip(&valid).filter(|(p, t)| argmax(p) == t.label).count() as f32 / valid.len() as f32;
        assert_eq!(acc, best);
    }
}
