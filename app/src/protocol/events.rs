//! A run's events as they cross from the worker to the page: plain serialisable copies of
//! `runs::TrainEvent` and `runs::LabEvent`, made of the same copies a finished run or a lab model
//! saves them in (`saved/`), so core's steps, evaluations, masked tokens and fills carry no serde
//! of their own. The worker converts each event as it sends it, the page as it reads it.

use serde::{Deserialize, Serialize};

use crate::runs;
use crate::saved::lab::{MaskFill, PretrainStep, ShownToken};
use crate::saved::list;
use crate::saved::scores::{EvalReport, Phase, StepPoint};

/// A fine-tuning event (`runs::TrainEvent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TrainEvent {
    Restart { index: usize, of: usize, seed: u64 },
    Features { done: usize, total: usize },
    Phase { phase: Phase, steps: usize },
    Step(StepPoint),
    Evaluating { done: usize, total: usize },
    Evaluated(Box<EvalReport>),
}

impl From<runs::TrainEvent> for TrainEvent {
    fn from(c: runs::TrainEvent) -> Self {
        use runs::TrainEvent as C;
        match c {
            C::Restart { index, of, seed } => Self::Restart { index, of, seed },
            C::Features { done, total } => Self::Features { done, total },
            C::Phase { phase, steps } => Self::Phase { phase: phase.into(), steps },
            C::Step(point) => Self::Step(point.into()),
            C::Evaluating { done, total } => Self::Evaluating { done, total },
            C::Evaluated(report) => Self::Evaluated(Box::new((*report).into())),
        }
    }
}

impl From<TrainEvent> for runs::TrainEvent {
    fn from(s: TrainEvent) -> Self {
        use TrainEvent as S;
        match s {
            S::Restart { index, of, seed } => Self::Restart { index, of, seed },
            S::Features { done, total } => Self::Features { done, total },
            S::Phase { phase, steps } => Self::Phase { phase: phase.into(), steps },
            S::Step(point) => Self::Step(point.into()),
            S::Evaluating { done, total } => Self::Evaluating { done, total },
            S::Evaluated(report) => Self::Evaluated(Box::new((*report).into())),
        }
    }
}

/// Progress of an MLM-lab run (`runs::LabEvent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum LabEvent {
    Vocab { size: usize, trained: bool, sample: Vec<String> },
    Ready { params: usize, total_steps: usize, preview: Vec<Vec<ShownToken>> },
    Step(PretrainStep),
    Probes { step: usize, fills: Vec<(String, Vec<MaskFill>)> },
}

impl From<runs::LabEvent> for LabEvent {
    fn from(c: runs::LabEvent) -> Self {
        use runs::LabEvent as C;
        match c {
            C::Vocab { size, trained, sample } => Self::Vocab { size, trained, sample },
            C::Ready { params, total_steps, preview } => Self::Ready { params, total_steps, preview: preview.into_iter().map(list).collect() },
            C::Step(step) => Self::Step(step.into()),
            C::Probes { step, fills } => Self::Probes { step, fills: fills.into_iter().map(|(s, f)| (s, list(f))).collect() },
        }
    }
}

impl From<LabEvent> for runs::LabEvent {
    fn from(s: LabEvent) -> Self {
        use LabEvent as S;
        match s {
            S::Vocab { size, trained, sample } => Self::Vocab { size, trained, sample },
            S::Ready { params, total_steps, preview } => Self::Ready { params, total_steps, preview: preview.into_iter().map(list).collect() },
            S::Step(step) => Self::Step(step.into()),
            S::Probes { step, fills } => Self::Probes { step, fills: fills.into_iter().map(|(s, f)| (s, list(f))).collect() },
        }
    }
}

#[cfg(test)]
mod tests {
    use bertbench_core::tasks::{metrics, pretraining, qa};
    use bertbench_core::train;

    use super::*;

    fn across<T: Serialize + serde::de::DeserializeOwned>(wire: T) -> T {
        serde_json::from_str(&serde_json::to_string(&wire).unwrap()).unwrap()
    }

    /// Every fine-tuning event reaches the page as the worker sent it.
    #[test]
    fn each_fine_tuning_event_crosses_unchanged() {
        let point = train::StepPoint { phase: train::Phase::Full, step: 7, epoch: 1.25, loss: 0.5, lr: 3e-5, grad_norm: 1.5 };
        let metrics = metrics::Metrics::new(&[0, 1, 1], &[0, 1, 0], &["a".to_string(), "b".to_string()]);
        let scores = train::TaskScores::Answers(qa::AnswerMetrics::new(&[vec!["the cat"]], &["a cat"]));
        let report = train::EvalReport { phase: train::Phase::Head, step: 9, epoch: 2.0, train_loss: 0.4, train_accuracy: 0.8, valid_loss: 0.5, metrics, scores: scores.clone(), best: true };
        let events = vec![
            runs::TrainEvent::Restart { index: 1, of: 3, seed: 42 },
            runs::TrainEvent::Features { done: 5, total: 10 },
            runs::TrainEvent::Phase { phase: train::Phase::Full, steps: 40 },
            runs::TrainEvent::Step(point),
            runs::TrainEvent::Evaluating { done: 2, total: 4 },
            runs::TrainEvent::Evaluated(Box::new(report)),
        ];
        for event in events {
            let before = format!("{event:?}");
            let back: runs::TrainEvent = across(TrainEvent::from(event)).into();
            assert_eq!(format!("{back:?}"), before);
        }
    }

    /// Every lab event reaches the page as the worker sent it.
    #[test]
    fn each_lab_event_crosses_unchanged() {
        let step = train::PretrainStep { step: 3, total_steps: 90, epoch: 0.1, mlm_loss: 6.2, mlm_accuracy: 0.05, pair_loss: Some(0.7), lr: 1e-3, tokens: 900, picked: 135, rtd_loss: None, rtd_accuracy: None, replaced: 0 };
        let shown = train::ShownToken { original: "cow".into(), shown: "[MASK]".into(), case: Some(bertbench_core::tasks::masking::MaskCase::Mask) };
        let fill = pretraining::MaskFill { position: 2, top: vec![("jumped".into(), 0.25), ("ran".into(), 0.125)] };
        let events = vec![
            runs::LabEvent::Vocab { size: 501, trained: true, sample: vec!["##s".into()] },
            runs::LabEvent::Ready { params: 1_000, total_steps: 90, preview: vec![vec![shown]] },
            runs::LabEvent::Step(step),
            runs::LabEvent::Probes { step: 3, fills: vec![("the cow [MASK].".into(), vec![fill])] },
        ];
        for event in events {
            let before = format!("{event:?}");
            let back: runs::LabEvent = across(LabEvent::from(event)).into();
            assert_eq!(format!("{back:?}"), before);
        }
    }
}
