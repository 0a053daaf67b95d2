//! Lesson 7's runs: a recipe trained in the training worker on the built-in sentiment examples
//! (as the studio's run, so it shows in its runs table), then its encoder compared with the
//! pretrained one: how each layer moved and what it kept (`studio::layer_change`). The lesson's
//! two recipes and its forgetting section both train through [`train`].

use std::sync::Arc;

use bertbench_core::train::{FineTuneConfig, TrainMode};

use crate::app::AppState;
use crate::compute::claim;
use crate::runs::RunSummary;
use crate::studio::{Change, Studio, builtin_sentiment, layer_change, recipe};

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
