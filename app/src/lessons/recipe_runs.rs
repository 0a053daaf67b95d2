//! Lesson 7's runs: a recipe trained in the training worker on the built-in sentiment examples
//! (as the studio's run, so it shows in its runs table), then its encoder compared with the
//! pretrained one: how each layer moved and what it kept (`studio::layer_change`). The lesson's
//! two recipes and its forgetting section both train through [`train`].

use std::sync::Arc;

use bertbench_core::train::{FineTuneConfig, TrainMode};
use leptos::prelude::*;

use crate::app::AppState;
use crate::compute::claim;
use crate::runs::RunSummary;
use crate::studio::{Change, RunState, Studio, builtin_sentiment, layer_change, recipe};
use crate::widgets::spawn_in_view;

/// Texts each encoder is compared on.
const TEXTS: usize = 48;

/// One recipe's outcome.
#[derive(Clone)]
pub(super) struct Trained {
    pub mode: TrainMode,
    pub summary: Arc<RunSummary>,
    pub change: Change,
}

/// Trains `config` in the worker on the built-in examples and measures how its encoder moved
/// and what it kept.
pub(super) async fn train(studio: Studio, state: AppState, config: FineTuneConfig, say: impl Fn(String) + Copy) -> Result<Trained, String> {
    let mode = config.mode;
    let dataset = builtin_sentiment()?;
    let split = dataset.split(0.25, 13).map_err(|e| e.to_string())?;
    let engine = state.engine().ok_or("the model is still loading")?;
    say(format!("{}: training in the worker ({} texts, {} held out)…", mode.label(), split.train.len(), split.valid.len()));
    // The lesson compares pretrained starts on one seed, whatever the studio is set to.
    let summary = studio.train_on_examples(&engine, config.clone(), format!("lesson 7: {}", recipe(&config))).await?;
    say(format!("{}: comparing every layer with the pretrained model…", mode.label()));
    let current = claim(state).await.ok_or("no model is loaded")?;
    // The run started from `engine`, the page's model at launch (not `state.base`, the model the
    // menu goes back to, which is another model once the lab's model plays on the page).
    let texts: Vec<String> = split.valid.iter().take(TEXTS).map(|&i| dataset.examples[i].text.clone()).collect();
    let change = layer_change(studio, state, &engine, &texts, say).await;
    drop(current);
    Ok(Trained { mode, summary, change: change? })
}

/// A lesson's runs as they go: each outcome as it comes, what is happening (or the error that
/// stopped it), and whether a run is on.
#[derive(Clone, Copy)]
pub(super) struct Runs {
    pub results: RwSignal<Vec<Trained>>,
    pub status: RwSignal<Option<Result<String, String>>>,
    pub running: RwSignal<bool>,
}

impl Runs {
    pub fn new() -> Self {
        Self { results: RwSignal::new(Vec::new()), status: RwSignal::new(None), running: RwSignal::new(false) }
    }

    /// Trains each of `configs` in turn through [`train`], from a clean slate; `done` is said at
    /// the end. Refused while the studio trains.
    pub fn start(self, studio: Studio, state: AppState, configs: Vec<FineTuneConfig>, done: &'static str) {
        if matches!(studio.run.get_untracked(), RunState::Running { .. }) {
            self.status.set(Some(Err("The studio is training: wait for its run to end (or cancel it there) first.".into())));
            return;
        }
        self.running.set(true);
        self.results.set(Vec::new());
        spawn_in_view(async move {
            let say = move |m: String| self.status.set(Some(Ok(m)));
            for config in configs {
                match train(studio, state, config, say).await {
                    Ok(t) => self.results.update(|r| r.push(t)),
                    Err(e) => {
                        self.status.set(Some(Err(e)));
                        self.running.set(false);
                        return;
                    }
                }
            }
            self.status.set(Some(Ok(done.into())));
            self.running.set(false);
        });
    }
}
