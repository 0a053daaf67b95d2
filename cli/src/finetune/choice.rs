//! `--task choice`: multiple choice (SWAG), a premise and its endings, one of them right, from
//! JSON Lines (`question` or `context`, `endings`, `label`) or SWAG's CSV (`sent1`, `sent2`,
//! `ending0`…, `label`), read by core's reader. Each ending is read with its premise and scored
//! from the pooled `[CLS]` vector, as `BertForMultipleChoice` does, so the features are fixed:
//! `[CLS]` + pooler of the last layer (an encoder saved without a pooler gets a fresh one).

use std::path::Path;

use bertbench_core::BertConfig;
use bertbench_core::Pooling;
use bertbench_core::bert::model::BertModel;
use bertbench_core::burn::prelude::Device;
use bertbench_core::data;
use bertbench_core::tasks::choice::{self, ChoiceItem};
use bertbench_core::tasks::classification::{FeatureLayers, FeatureSpec, Level};
use bertbench_core::tokenizer::BertTokenizer;
use bertbench_core::train::{FineTuner, choice_labels, encode_choices};

use super::{SPLIT_SEED, Task, Units, VALID_FRACTION, core_error, pick, refused};
use crate::{Args, Result, read};

/// The features `BertForMultipleChoice` reads; `--pooling` and `--layers` are refused, not
/// ignored.
pub(super) fn features(args: &Args) -> Result<FeatureSpec> {
    if let Some(option) = ["pooling", "layers"].into_iter().find(|o| args.get(o).is_some()) {
        return Err(format!("--{option} is not for --task choice: it reads [CLS] + pooler of the last layer, as BertForMultipleChoice does"));
    }
    Ok(FeatureSpec { pooling: Pooling::Pooler, layers: FeatureLayers::Last, level: Level::Choice })
}

/// The encoder with the pooler its `*ForMultipleChoice` reads (ModernBERT's: its `head`, the MLM
/// head's where `head_weights` hold one).
pub(super) fn model(bert: BertModel, config: &BertConfig, head_weights: Option<&[u8]>, seed: u64, device: &Device) -> Result<BertModel> {
    let fresh = bert.pooler.is_none();
    let bert = choice::with_pooler(bert, config, head_weights, seed, device).map_err(core_error)?;
    if fresh {
        eprintln!("the checkpoint has no pooler: {}'s is trained, started as transformers starts it", config.model_type.base_architecture().replace("Model", "ForMultipleChoice"));
    }
    Ok(bert)
}

fn questions(path: &str) -> Result<Vec<ChoiceItem>> {
    let bytes = read(Path::new(path))?;
    choice::parse_choices(&bytes, Some(path)).map_err(|e| refused(Task::Choice, path, &bytes, e))
}

pub(super) fn units(tokenizer: &BertTokenizer, train: &str, valid: Option<&str>) -> Result<Units> {
    let all = questions(train)?;
    let (train, valid) = match valid {
        Some(v) => (all, questions(v)?),
        None => {
            // A fifth held out, at the studio's seed.
            let order = data::shuffled(all.len(), SPLIT_SEED);
            let held = ((all.len() as f32 * VALID_FRACTION).round() as usize).clamp(1, all.len().saturating_sub(1).max(1));
            (pick(&all, &order[held..]), pick(&all, &order[..held]))
        }
    };
    eprintln!("{} endings per question", train.first().map_or(0, |q| q.choices.len()));
    let train = encode_choices(tokenizer, &train).map_err(core_error)?;
    let valid = encode_choices(tokenizer, &valid).map_err(|e| format!("the validation file: {e}"))?;
    Ok(Units { labels: choice_labels(), train, valid, what: "questions" })
}

/// The best validation accuracy, over questions.
pub(super) fn best(tuner: &FineTuner) -> String {
    match tuner.best() {
        Some((m, _)) => format!("best validation accuracy {:.2}% ({} questions)", m.accuracy * 100.0, m.count),
        None => "no evaluation".into(),
    }
}
