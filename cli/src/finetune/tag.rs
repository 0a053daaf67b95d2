//! `--task tag`: a tag per word (named entities), from CoNLL columns (CoNLL-2003's four, or a
//! word and a tag) or JSON Lines, read by core's `parse_tagged` (BIO repaired, said on
//! stderr); scored by entity-level F1 (exact spans, seqeval's), as the studio scores it.


use bertbench_core::data::{TaggedData, parse_tagged};
use bertbench_core::tasks::tagging::LabelPieces;
use bertbench_core::Pooling;
use bertbench_core::tasks::classification::{FeatureLayers, FeatureSpec, Level};
use bertbench_core::train::{EvalReport, FineTuneConfig, FineTuner, TaskScores, encode_tagged};

use super::{CliTask, Input, SPLIT_SEED, Units, VALID_FRACTION, core_error, data_file, pick, refused};
use crate::{Args, Result};

fn tagged(path: &str, args: &Args) -> Result<TaggedData> {
    let bytes = data_file(path, args)?;
    let data = parse_tagged(&bytes).map_err(|e| refused(&Tag, path, &bytes, e))?;
    for w in &data.warnings {
        eprintln!("{path}: {w}");
    }
    Ok(data)
}

/// `--task tag`.
pub(super) struct Tag;

impl CliTask for Tag {
    fn name(&self) -> &'static str {
        "tag"
    }

    fn holds(&self) -> &'static str {
        "tagged words"
    }

    fn reads(&self, bytes: &[u8], _path: &str) -> bool {
        parse_tagged(bytes).is_ok()
    }

    fn options(&self) -> &'static [&'static str] {
        &["pieces"]
    }

    fn level(&self, _args: &Args) -> Result<Level> {
        Ok(Level::Token)
    }

    /// Each token's vector from `--layers`.
    fn features(&self, _args: &Args, _pooling: Pooling, layers: FeatureLayers) -> Result<FeatureSpec> {
        Ok(FeatureSpec { layers, ..FeatureSpec::tokens() })
    }

    fn units(&self, input: &Input, config: FineTuneConfig) -> Result<(FineTuneConfig, Units)> {
        // Which pieces of a word the loss reads: the first (the BERT paper's) or every one.
        let pieces = match input.args.get("pieces").unwrap_or("first") {
            "first" => LabelPieces::First,
            "all" => LabelPieces::All,
            other => return Err(format!("unknown pieces {other}; use first or all")),
        };
        let data = tagged(input.train, input.args)?;
        let (train, valid) = match input.valid {
            Some(v) => {
                let valid = tagged(v, input.args)?;
                if let Some(tag) = valid.tags.iter().find(|t| !data.tags.contains(t)) {
                    return Err(format!("the validation file has the tag {tag}, which the training file never uses; the model could not predict it"));
                }
                (data.sentences.clone(), valid.sentences)
            }
            None => {
                let split = data.split(VALID_FRACTION, SPLIT_SEED).map_err(core_error)?;
                (pick(&data.sentences, &split.train), pick(&data.sentences, &split.valid))
            }
        };
        let (train, cut) = encode_tagged(input.tokenizer, &train, &data.tags, pieces).map_err(core_error)?;
        let (valid, valid_cut) = encode_tagged(input.tokenizer, &valid, &data.tags, pieces).map_err(core_error)?;
        if cut + valid_cut > 0 {
            eprintln!("{cut} training and {valid_cut} validation word(s) are past the run's length (--max-len): cut off, neither learned nor scored");
        }
        Ok((config, Units { labels: data.tags, train, valid, what: "sentences", pairs_recipe: false }))
    }

    fn columns(&self) -> [&'static str; 2] {
        ["entity F1", "word accuracy"]
    }

    fn cells(&self, r: &EvalReport) -> [String; 2] {
        [r.scores.entities().map_or("–".into(), |e| format!("{:.4}", e.f1)), format!("{:.2}%", r.metrics.accuracy * 100.0)]
    }

    /// The best entity F1, with precision and recall, as a sentence.
    fn best(&self, tuner: &FineTuner) -> String {
        let accuracy = tuner.best_accuracy().unwrap_or(0.0) * 100.0;
        match tuner.best_scores().and_then(TaskScores::entities) {
            Some(e) => format!(
                "best validation entity F1 {:.4} (precision {:.4}, recall {:.4}, {} entities), words tagged right {accuracy:.2}%",
                e.f1, e.precision, e.recall, e.support
            ),
            None => format!("best validation words tagged right {accuracy:.2}% (the tags are not BIO: no entities)"),
        }
    }

    /// Each entity type's scores at the best weights, one line each.
    fn finished(&self, tuner: &FineTuner) {
        let Some(e) = tuner.best_scores().and_then(TaskScores::entities) else { return };
        for t in &e.per_type {
            println!("{}: F1 {:.4}, precision {:.4}, recall {:.4}, {} entities", t.label, t.f1, t.precision, t.recall, t.support);
        }
    }
}
