//! `--task qa`: extractive question answering on SQuAD files (JSON v1.1/v2, JSON Lines or a
//! table, as the studio reads them), each question's passage cut into windows.

use std::path::Path;

use bertbench_core::data::{self, QaItem};
use bertbench_core::Pooling;
use bertbench_core::tasks::classification::{FeatureLayers, FeatureSpec, Level};
use bertbench_core::tasks::qa;
use bertbench_core::train::{EvalReport, FineTuneConfig, FineTuner, TaskScores, encode_questions};

use super::{CliTask, Input, SPLIT_SEED, Units, VALID_FRACTION, core_error, pick, refused};
use crate::{Args, Result, read};

fn questions(path: &str) -> Result<data::QaData> {
    let bytes = read(Path::new(path))?;
    data::parse_qa(&bytes, Some(path)).map_err(|e| refused(&Answer, path, &bytes, e))
}

/// The training and validation questions: `valid`'s, or a share of `train`'s passages, as the
/// studio splits them (a passage's questions stay together).
fn split(train: &str, valid: Option<&str>) -> Result<(Vec<QaItem>, Vec<QaItem>)> {
    let data = questions(train)?;
    if let Some(v) = valid {
        return Ok((data.items, questions(v)?.items));
    }
    let split = data.split(VALID_FRACTION, SPLIT_SEED).map_err(core_error)?;
    Ok((pick(&data.items, &split.train), pick(&data.items, &split.valid)))
}

/// `--task qa`.
pub(super) struct Answer;

impl CliTask for Answer {
    fn name(&self) -> &'static str {
        "qa"
    }

    fn holds(&self) -> &'static str {
        "questions over passages"
    }

    fn reads(&self, bytes: &[u8], path: &str) -> bool {
        data::parse_qa(bytes, Some(path)).is_ok()
    }

    fn options(&self) -> &'static [&'static str] {
        &["stride"]
    }

    fn level(&self, _args: &Args) -> Result<Level> {
        Ok(Level::Span)
    }

    /// The studio's window.
    fn max_len(&self) -> usize {
        192
    }

    /// Each token's vector of a window, from `--layers`.
    fn features(&self, _args: &Args, _pooling: Pooling, layers: FeatureLayers) -> Result<FeatureSpec> {
        Ok(FeatureSpec { layers, ..FeatureSpec::spans() })
    }

    fn units(&self, input: &Input, config: FineTuneConfig) -> Result<(FineTuneConfig, Units)> {
        let (train, valid) = split(input.train, input.valid)?;
        let (train, lost) = encode_questions(input.tokenizer, &train, &config.spans).map_err(core_error)?;
        let (valid, _) = encode_questions(input.tokenizer, &valid, &config.spans).map_err(core_error)?;
        if lost > 0 {
            eprintln!("{lost} training question(s) have their answer in no window whole: they learn only \"no answer\"");
        }
        Ok((config, Units { labels: qa::LABELS.iter().map(|l| l.to_string()).collect(), train, valid, what: "windows", pairs_recipe: false }))
    }

    fn columns(&self) -> [&'static str; 2] {
        ["exact match", "F1"]
    }

    fn cells(&self, r: &EvalReport) -> [String; 2] {
        r.scores.answers().map_or(["–".into(), "–".into()], |a| [format!("{:.2}", a.all.exact * 100.0), format!("{:.2}", a.all.f1 * 100.0)])
    }

    fn best(&self, tuner: &FineTuner) -> String {
        match tuner.best_scores().and_then(TaskScores::answers) {
            Some(a) => format!("best validation exact match {:.2}, F1 {:.2}", a.all.exact * 100.0, a.all.f1 * 100.0),
            None => "no evaluation".into(),
        }
    }
}
