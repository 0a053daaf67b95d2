//! The studio's tasks, registered once. Each task is a module of `studio/` that owns its state
//! (its data, and the settings only it has) and answers, through [`TaskPanel`], for what the
//! shared parts of the studio need of it: the chooser's words, its data card, whether it has data
//! to train on, how many examples an epoch reads, which features its head may read, how its run
//! starts, its results, its predict box and its export's name. A new task
//! is a module, a [`Task`] variant and its row in `Task::panel` (in `studio/mod.rs`, which holds
//! every task module: the modules use this file, and this file uses none of them); the chooser,
//! the page, the Train button, the progress bar and the results panel follow from them.

use std::sync::Arc;

use bertbench_core::bert::family::Family;
use bertbench_core::tasks::classification::{ClassifierMeta, Level};
use bertbench_core::train::{FineTuneConfig, TrainMode};
use leptos::prelude::*;

use super::held_out::HeldOutRead;
use super::{RunState, Studio};
use crate::app::AppState;
use crate::runs::RunSummary;

/// What the studio trains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Task {
    /// A label per text (or pair).
    #[default]
    Classify,
    /// Any number of labels per text (or pair), each a yes or no.
    MultiLabel,
    /// A tag per word.
    Tag,
    /// An answer span per question over a passage.
    Answer,
    /// A similarity score per pair of texts.
    Similar,
    /// The right ending of a premise among several (multiple choice, SWAG).
    Choice,
}

/// What a task's module answers for the studio's shared parts.
pub(crate) trait TaskPanel: Sync {
    /// The chooser's words for the task, and their test id.
    fn choice(&self) -> (&'static str, &'static str);
    /// Step 1: the task's data card.
    fn data_panel(&self) -> AnyView;
    /// Whether data is loaded and ready to train on (tracked: the Train button follows it).
    fn has_data(&self, studio: Studio) -> bool;
    /// About how many examples one epoch of the configured run reads (untracked).
    fn epoch_examples(&self, studio: Studio) -> usize;
    /// Starts a run on the task's data, or says why it cannot.
    fn start(&self, studio: Studio, state: AppState) -> Result<(), String>;
    /// A finished run's results: its metrics and the mistakes it made.
    fn results(&self, summary: Arc<RunSummary>, studio: Studio) -> AnyView;
    /// Step 3's predict box for the task's model.
    fn predict(&self) -> AnyView;
    /// The exported zip's name for a model of the task labelling at `level`.
    fn export_name(&self, level: Level) -> &'static str;
    /// What step 2 lets the user choose of the features the head reads, for a base of `family`
    /// (tracked: the similarity mode's choice of encoder changes it). Each token's vector from a
    /// chosen layer unless the task says otherwise.
    fn features(&self, _studio: Studio, _family: Option<Family>) -> Features {
        Features::PerToken
    }
    /// Reads `bytes`, the file `name`, as a validation file of the task (see [`held_out`]), or
    /// says why it cannot be one.
    ///
    /// [`held_out`]: super::held_out
    fn read_held_out(&self, _studio: Studio, _name: &str, _bytes: &[u8]) -> Result<HeldOutRead, String> {
        Err("this mode takes its validation file in its own card".into())
    }
    /// The kind of model the task trains now where it lets the user choose (tracked: the
    /// similarity mode's cross- or bi-encoder); `None`: the task's one [`Task::level`].
    fn chosen_level(&self, _studio: Studio) -> Option<Level> {
        None
    }
    /// Whether the task's model reads two texts together now (tracked: a classifier's pair
    /// column); step 2's default recipe follows it.
    fn reads_pairs(&self, _studio: Studio) -> bool {
        false
    }
    /// Reads `bytes`, the file `name`, as the task's training file (a saved one reopened).
    fn open_file(&self, studio: Studio, state: AppState, name: String, bytes: Vec<u8>);
    /// The studio took a model of the task (imported, opened from the disk, a saved run's):
    /// the task's settings follow what `meta` says it is.
    fn took(&self, _studio: Studio, _meta: &ClassifierMeta) {}
    /// A warning that `mode` trains the task poorly, shown beside the recipe.
    fn mode_warning(&self, _mode: TrainMode) -> Option<AnyView> {
        None
    }
    /// Whether the task sets its input length in its own card (question answering's window),
    /// so step 2 hides its "max tokens per example".
    fn sets_own_length(&self) -> bool {
        false
    }
    /// The loss chart's name for the task's training loss.
    fn loss_name(&self) -> &'static str {
        "cross-entropy"
    }
    /// How Python loads the task's export, and what it then computes.
    fn export_note(&self) -> &'static str;
    /// A run's name in the runs table: the task and `config`'s recipe ("tagging · full
    /// fine-tuning · …").
    fn run_label(&self, config: &FineTuneConfig) -> String;
    /// What the task's default recipe is and what it gave where it was chosen
    /// (docs/performance.md), for a model labelling at `level`, on pairs of texts read together
    /// where `pairs`.
    fn recipe_note(&self, level: Level, pairs: bool) -> &'static str;
    /// What a model of the task labelling at `level` is called ("a tagger").
    fn model_noun(&self, level: Level) -> &'static str;
    /// What the studio says of `model`, opened from the disk with the task's head (`meta`): what
    /// it does here now.
    fn opened(&self, model: &str, meta: &ClassifierMeta) -> String;
}

/// The features a task's head reads, as step 2 offers them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Features {
    /// Each token's vector from a chosen layer (tagging, question answering).
    PerToken,
    /// A text's one vector: a pooling, and (where `layers`) the layers pooled. `pooler` offers
    /// `[CLS]` + pooler; where `pooler_fixes_layers`, choosing it fixes the layer (the pooler
    /// reads the last one).
    Pooled { pooler: bool, layers: bool, pooler_fixes_layers: bool },
    /// Nothing to choose: this sentence says what the task's model reads.
    Fixed(String),
}

impl Task {
    /// Every task, in the chooser's order.
    pub const ALL: [Task; 6] = [Task::Classify, Task::MultiLabel, Task::Tag, Task::Answer, Task::Similar, Task::Choice];

    /// The kind of model the task trains (a similarity model's: the cross-encoder's; the studio's
    /// choice between the two is the similarity mode's `level`).
    pub fn level(self) -> Level {
        match self {
            Task::Classify => Level::Sentence,
            Task::MultiLabel => Level::MultiLabel,
            Task::Tag => Level::Token,
            Task::Answer => Level::Span,
            Task::Similar => Level::Score,
            Task::Choice => Level::Choice,
        }
    }

    /// Its name in what is saved (a training file's task).
    pub fn key(self) -> &'static str {
        match self {
            Task::Classify => "classify",
            Task::MultiLabel => "multilabel",
            Task::Tag => "tag",
            Task::Answer => "answer",
            Task::Similar => "similar",
            Task::Choice => "choice",
        }
    }

    /// The task named `key` ([`key`](Self::key)).
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.key() == key)
    }

    /// The task whose model labels at `level`.
    pub fn of(level: Level) -> Self {
        match level {
            Level::Sentence => Task::Classify,
            Level::MultiLabel => Task::MultiLabel,
            Level::Token => Task::Tag,
            Level::Span => Task::Answer,
            Level::Score | Level::Embedding => Task::Similar,
            Level::Choice => Task::Choice,
        }
    }
}

/// The task the studio trains, one choice per registered task.
#[component]
pub fn StudioTaskSwitch() -> impl IntoView {
    let studio = expect_context::<Studio>();
    let running = move || matches!(studio.run.get(), RunState::Running { .. });
    let choice = move |task: Task| {
        let (label, testid) = task.panel().choice();
        view! {
            <label class="small">
                <input type="radio" name="studio-task" data-testid=testid prop:checked=move || studio.task.get() == task
                    prop:disabled=running on:change=move |_| { studio.switch_task(task); studio.data_error.set(None); } />
                {label}
            </label>
        }
    };
    view! {
        <section class="card" data-testid="studio-task">
            <div class="row">
                <b>"What to train: "</b>
                {Task::ALL.map(choice).collect_view()}
            </div>
        </section>
    }
}

/// Step 1 of every task, the chosen one shown (the others keep their state, hidden).
#[component]
pub fn StudioTaskData() -> impl IntoView {
    let studio = expect_context::<Studio>();
    Task::ALL
        .map(|task| view! { <div class:hidden=move || studio.task.get() != task>{task.panel().data_panel()}</div> })
        .collect_view()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every level maps to a task whose model labels at it, and each task's chooser entry is its
    /// own.
    #[test]
    fn levels_and_tasks_agree() {
        for task in Task::ALL {
            assert_eq!(Task::of(task.level()), task);
        }
        assert_eq!(Task::of(Level::Embedding), Task::Similar);
        for task in Task::ALL {
            assert_eq!(Task::from_key(task.key()), Some(task));
        }
        let ids: std::collections::HashSet<_> = Task::ALL.iter().map(|t| t.panel().choice().1).collect();
        assert_eq!(ids.len(), Task::ALL.len());
    }
}
