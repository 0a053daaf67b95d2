//! The studio's default recipes: core's for each task, told apart further where the data or the
//! kind of model changes what trains best (pairs of texts read together; a cross-encoder against
//! a bi-encoder), each with what it gave where it was chosen. The studio keeps a default recipe
//! in step as the task, the kind of similarity model or the pair columns change, and leaves a
//! recipe the person set alone.

use bertbench_core::tasks::classification::Level;
use bertbench_core::train::FineTuneConfig;
use leptos::prelude::*;

use super::{Studio, Task};

/// Which default recipe applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecipeKind {
    pub task: Task,
    /// The kind of model trained (a similarity run's: cross- or bi-encoder).
    pub level: Level,
    /// A classifier reads pairs of texts together.
    pub pairs: bool,
}

impl RecipeKind {
    /// The recipe `task` trains with now in `studio` (tracked: the kind of model the task
    /// chose, its pair column).
    pub fn of(task: Task, studio: Studio) -> Self {
        let panel = task.panel();
        Self { task, level: panel.chosen_level(studio).unwrap_or(task.level()), pairs: panel.reads_pairs(studio) }
    }

    /// The recipe: core's (`FineTuneConfig::recipe_for_data`, which the command line starts with too).
    pub fn recipe(self) -> FineTuneConfig {
        FineTuneConfig::recipe_for_data(self.level, self.pairs)
    }

    /// What the recipe is and what it gave where it was chosen (docs/performance.md).
    pub fn note(self) -> &'static str {
        self.task.panel().recipe_note(self.level, self.pairs)
    }

    /// Whether `config` is this recipe (the settings a recipe sets; the features and data
    /// settings aside).
    pub fn is_recipe(self, config: &FineTuneConfig) -> bool {
        let r = self.recipe();
        (config.mode, config.batch_size, config.epochs, config.head_epochs) == (r.mode, r.batch_size, r.epochs, r.head_epochs)
            && (config.learning_rate, config.head_learning_rate, config.warmup_ratio, config.weight_decay) == (r.learning_rate, r.head_learning_rate, r.warmup_ratio, r.weight_decay)
    }

    /// `config` with this recipe (its features and data settings kept).
    pub fn with_recipe(self, config: &FineTuneConfig) -> FineTuneConfig {
        let r = self.recipe();
        FineTuneConfig {
            mode: r.mode,
            batch_size: r.batch_size,
            epochs: r.epochs,
            head_epochs: r.head_epochs,
            learning_rate: r.learning_rate,
            head_learning_rate: r.head_learning_rate,
            warmup_ratio: r.warmup_ratio,
            weight_decay: r.weight_decay,
            ..config.clone()
        }
    }
}

impl Studio {
    /// Which default recipe applies now (tracked: the task, the kind of similarity model, the
    /// classifier's pair column).
    pub fn recipe_kind(self) -> RecipeKind {
        RecipeKind::of(self.task.get(), self)
    }

    /// Keeps the recipe a default one as [`recipe_kind`](Self::recipe_kind) changes: a
    /// configuration that is the last kind's default becomes the new kind's; one the person set
    /// is left as it is.
    pub fn follow_recipe_kind(self) {
        Effect::new(move |last: Option<RecipeKind>| {
            let now = self.recipe_kind();
            if let Some(last) = last.filter(|l| *l != now) {
                if self.config.with_untracked(|c| last.is_recipe(c)) {
                    self.config.update(|c| *c = now.with_recipe(c));
                }
            }
            now
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind's recipe is core's for its data, and a recipe changed by hand is not a default.
    #[test]
    fn kinds_have_their_own_recipes() {
        let kind = |task, level, pairs| RecipeKind { task, level, pairs };
        let single = kind(Task::Classify, Level::Sentence, false);
        let pairs = kind(Task::Classify, Level::Sentence, true);
        let (bi, cross) = (kind(Task::Similar, Level::Embedding, false), kind(Task::Similar, Level::Score, false));
        use bertbench_core::train::TrainMode::{Full, HeadOnly};
        assert_eq!([single, pairs, bi, cross].map(|k| k.recipe().mode), [HeadOnly, Full, Full, Full]);
        let mut own = pairs.recipe();
        assert!(pairs.is_recipe(&own) && !single.is_recipe(&own));
        own.epochs = 7;
        assert!(!pairs.is_recipe(&own));
        assert!(single.is_recipe(&single.with_recipe(&own)));
        assert!(pairs.note().contains("MRPC") && cross.note().contains("cross-encoder") && bi.note().contains("bi-encoder"));
    }
}
