//! `--task choice`: multiple choice (SWAG), a premise and its endings, one of them right, from
//! JSON Lines (`question` or `context`, `endings`, `label`) or SWAG's CSV (`sent1`, `sent2`,
//! `ending0`…, `label`), read by core's reader. Each ending is read with its premise and scored
//! from the pooled `[CLS]` vector, as `BertForMultipleChoice` does, so the features are fixed:
//! `[CLS]` + pooler of the last layer (an encoder saved without a pooler gets a fresh one).

use std::path::Path;

use bertbench_core::Pooling;
use bertbench_core::data;
use bertbench_core::tasks::choice::{self, ChoiceItem};
use bertbench_core::tasks::classification::{FeatureLayers, FeatureSpec, Level};
use bertbench_core::train::task::choice::{choice_labels, encode_choices};
use bertbench_core::train::{EvalReport, FineTuneConfig, FineTuner};

use super::{CliTask, Input, SPLIT_SEED, Units, VALID_FRACTION, core_error, pick, refused};
use crate::{Args, Result, read};

/// `--task choice`.
pub(super) struct Choice;

impl CliTask for Choice {
    fn name(&self) -> &'static str {
        "choice"
    }

    fn holds(&self) -> &'static str {
        "multiple-choice questions"
    }

    fn reads(&self, bytes: &[u8], path: &str) -> bool {
        choice::parse_choices(bytes, Some(path)).is_ok()
    }

    fn level(&self, _args: &Args) -> Result<Level> {
        Ok(Level::Choice)
    }

    /// The features `BertForMultipleChoice` reads; `--pooling` and `--layers` are refused, not
    /// ignored.
    fn features(&self, args: &Args, _pooling: Pooling, _layers: FeatureLayers) -> Result<FeatureSpec> {
        if let Some(option) = ["pooling", "layers"].into_iter().find(|o| args.get(o).is_some()) {
            return Err(format!("--{option} is not for --task choice: it reads [CLS] + pooler of the last layer, as BertForMultipleChoice does"));
        }
        Ok(FeatureSpec { pooling: Pooling::Pooler, layers: FeatureLayers::Last, level: Level::Choice })
    }

    fn units(&self, input: &Input, config: FineTuneConfig) -> Result<(FineTuneConfig, Units)> {
        let all = questions(input.train)?;
        let (train, valid) = match input.valid {
            Some(v) => (all, questions(v)?),
            None => {
                // A fifth held out, at the studio's seed.
                let (train, valid) = data::held_out(all.len(), VALID_FRACTION, SPLIT_SEED).ok_or("one question: holding some out for validation needs at least two; add questions or give --valid")?;
                (pick(&all, &train), pick(&all, &valid))
            }
        };
        eprintln!("{} endings per question", train.first().map_or(0, |q| q.choices.len()));
        let train = encode_choices(input.tokenizer, &train).map_err(core_error)?;
        let valid = encode_choices(input.tokenizer, &valid).map_err(|e| format!("the validation file: {e}"))?;
        Ok((config, Units { labels: choice_labels(), train, valid, what: "questions", pairs_recipe: false }))
    }

    fn columns(&self) -> [&'static str; 2] {
        ["valid accuracy", "questions"]
    }

    fn cells(&self, r: &EvalReport) -> [String; 2] {
        [format!("{:.2}%", r.metrics.accuracy * 100.0), r.metrics.count.to_string()]
    }

    /// The best validation accuracy, over questions.
    fn best(&self, tuner: &FineTuner) -> String {
        match tuner.best() {
            Some((m, _)) => format!("best validation accuracy {:.2}% ({} questions)", m.accuracy * 100.0, m.count),
            None => "no evaluation".into(),
        }
    }
}

fn questions(path: &str) -> Result<Vec<ChoiceItem>> {
    let bytes = read(Path::new(path))?;
    let file = choice::parse_choices(&bytes, Some(path)).map_err(|e| refused(&Choice, path, &bytes, e))?;
    if let Some(note) = file.set_aside_note() {
        eprintln!("{path}: {note}");
    }
    Ok(file.items)
}
