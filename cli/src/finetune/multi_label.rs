//! `--task multilabel`: any number of labels per text (GoEmotions, toxic comments, topics),
//! from a table of one 0/1 column per label or of a list per text, read by core's reader
//! ([`data::to_label_sets`]). The columns are guessed as the studio guesses them (0/1 columns,
//! JSON Lines arrays); `--label-columns a,b,c` names the 0/1 columns, `--label-list COLUMN` a
//! column of lists, parted by `--separator` (a JSON array without it).


use bertbench_core::Pooling;
use bertbench_core::data::{self, LabelColumns, LabelSetData, LabelSetMap, Separator, Table};
use bertbench_core::tasks::classification::{FeatureLayers, FeatureSpec, Level};
use bertbench_core::train::{EvalReport, FineTuneConfig, FineTuner, TaskScores, encode_label_sets};

use super::{CliTask, Input, SPLIT_SEED, Units, VALID_FRACTION, core_error, data_file, pick, refused};
use crate::{Args, Result};

/// `--task multilabel`.
pub(super) struct MultiLabel;

/// The column named `name` (or numbered, from 1).
fn column(table: &Table, name: &str) -> Result<usize> {
    let name = name.trim();
    table
        .columns
        .iter()
        .position(|c| c.trim() == name)
        .or_else(|| name.parse::<usize>().ok().filter(|&n| (1..=table.columns.len()).contains(&n)).map(|n| n - 1))
        .ok_or_else(|| format!("no column {name:?}; the columns are {}", table.columns.join(", ")))
}

/// The map `args` give, else the guessed one.
fn label_map(table: &Table, args: &Args) -> Result<LabelSetMap> {
    let guessed = data::guess_label_sets(table);
    let texts = data::guess_columns(table);
    let (text, text_pair) = guessed.as_ref().map_or((texts.text, texts.text_pair), |m| (m.text, m.text_pair));
    let labels = match (args.get("label-columns"), args.get("label-list")) {
        (Some(_), Some(_)) => return Err("--label-columns and --label-list are two ways to say where the labels are: give one".into()),
        (Some(names), None) => LabelColumns::Flags(names.split(',').map(|n| column(table, n)).collect::<Result<_>>()?),
        (None, Some(name)) => {
            let separator = match args.get("separator") {
                None => Separator::Json,
                Some(s) if s.chars().count() == 1 => Separator::Char(s.chars().next().unwrap_or(';')),
                Some(s) => return Err(format!("--separator is one character, such as ; or |, not {s:?}")),
            };
            LabelColumns::List { column: column(table, name)?, separator }
        }
        (None, None) => match guessed {
            Some(map) => return Ok(map),
            None => return Err("no 0/1 label columns or column of label lists found; name them with --label-columns a,b,c or --label-list COLUMN [--separator ;].".into()),
        },
    };
    Ok(LabelSetMap { text, text_pair, labels })
}

/// A multi-label table read with `map` (the training file's when given), its skipped rows said.
fn label_sets(path: &str, args: &Args, map: Option<&LabelSetMap>) -> Result<(LabelSetData, LabelSetMap)> {
    let bytes = data_file(path, args)?;
    let table = data::parse_table(&bytes, Some(path)).map_err(|e| refused(&MultiLabel, path, &bytes, e))?;
    let map = match map {
        Some(m) => m.clone(),
        None => label_map(&table, args).map_err(|e| refused(&MultiLabel, path, &bytes, e))?,
    };
    let set = data::to_label_sets(&table, &map).map_err(|e| refused(&MultiLabel, path, &bytes, e))?;
    if !set.skipped.is_empty() {
        eprintln!("{path}: skipped {} row(s), e.g. line {}: {}", set.skipped.len(), set.skipped[0].line, set.skipped[0].reason);
    }
    Ok((set, map))
}

impl CliTask for MultiLabel {
    fn name(&self) -> &'static str {
        "multilabel"
    }

    fn holds(&self) -> &'static str {
        "texts with any number of labels"
    }

    fn reads(&self, bytes: &[u8], path: &str) -> bool {
        data::parse_table(bytes, Some(path)).is_ok_and(|t| data::guess_label_sets(&t).is_some_and(|m| data::to_label_sets(&t, &m).is_ok()))
    }

    fn options(&self) -> &'static [&'static str] {
        &["label-columns", "label-list", "separator"]
    }

    fn level(&self, _args: &Args) -> Result<Level> {
        Ok(Level::MultiLabel)
    }

    fn features(&self, _args: &Args, pooling: Pooling, layers: FeatureLayers) -> Result<FeatureSpec> {
        Ok(FeatureSpec { pooling, layers, level: Level::MultiLabel })
    }

    fn units(&self, input: &Input, config: FineTuneConfig) -> Result<(FineTuneConfig, Units)> {
        let (train_set, map) = label_sets(input.train, input.args, None)?;
        if let Some(why) = train_set.too_few_labels() {
            return Err(format!("{}: {why}", input.train));
        }
        let counts: Vec<String> = train_set.labels.iter().zip(train_set.label_counts()).map(|(l, n)| format!("{l} {n}")).collect();
        eprintln!("{}: {} labels ({}); {} texts with none", input.train, train_set.labels.len(), counts.join(", "), train_set.without_labels());
        let k = train_set.labels.len();
        let (train, valid) = match input.valid {
            // Its own columns (guessed, or as the options say), its labels the training file's.
            Some(v) => {
                let (valid_set, _) = label_sets(v, input.args, None)?;
                (train_set.examples.clone(), valid_set.in_labels(&train_set.labels).map_err(|e| format!("the validation file {v}: {e}"))?)
            }
            None => {
                // A fifth held out, at the studio's seed.
                let (train, valid) = data::held_out(train_set.examples.len(), VALID_FRACTION, SPLIT_SEED).ok_or("one text: holding some out for validation needs at least two; add texts or give --valid")?;
                (pick(&train_set.examples, &train), pick(&train_set.examples, &valid))
            }
        };
        let train = encode_label_sets(input.tokenizer, &train, k).map_err(core_error)?;
        let valid = encode_label_sets(input.tokenizer, &valid, k).map_err(|e| format!("the validation file: {e}"))?;
        let pairs = map.text_pair.is_some();
        Ok((config, Units { labels: train_set.labels, train, valid, what: if pairs { "pairs" } else { "texts" }, pairs_recipe: pairs }))
    }

    fn columns(&self) -> [&'static str; 2] {
        ["micro-F1", "macro-F1"]
    }

    fn cells(&self, r: &EvalReport) -> [String; 2] {
        match &r.scores {
            TaskScores::Labels(m) => [format!("{:.4}", m.micro_f1), format!("{:.4}", m.macro_f1)],
            _ => ["-".into(), "-".into()],
        }
    }

    /// The threshold chosen and each label's F1.
    fn evaluated(&self, r: &EvalReport) {
        if let TaskScores::Labels(m) = &r.scores {
            let each: Vec<String> = m.per_label.iter().map(|c| format!("{} {:.4} ({} texts)", c.label, c.f1, c.support)).collect();
            eprintln!("  threshold {:.2} (chosen on the validation set); exact match {:.2}%; F1 per label: {}", m.threshold, m.exact_match * 100.0, each.join(", "));
        }
    }

    fn best(&self, tuner: &FineTuner) -> String {
        match tuner.best_scores().and_then(TaskScores::labels) {
            Some(m) => format!("best validation micro-F1 {:.4} at threshold {:.2} (macro-F1 {:.4}, {} texts)", m.micro_f1, m.threshold, m.macro_f1, m.texts),
            None => "no evaluation".into(),
        }
    }
}
