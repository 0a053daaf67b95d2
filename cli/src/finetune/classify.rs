//! `--task classify`: a label per text, or per pair of texts (MRPC, QQP, NLI), from a CSV, TSV
//! or JSON Lines table whose columns are guessed as the studio guesses them (pair columns by
//! name: `sentence1`/`sentence2`, `#1 String`/`#2 String`, `question1`/`question2`, …).


use bertbench_core::data::{self, ColumnMap, Dataset, Table};
use bertbench_core::tasks::classification::Level;
use bertbench_core::train::{EvalReport, FineTuneConfig, FineTuner, encode_examples};

use super::{CliTask, Input, SPLIT_SEED, Units, VALID_FRACTION, core_error, data_file, pick, refused};
use crate::{Args, Result};

/// A table's examples with `map` (the training file's columns when `map` is given, as the
/// studio reads a validation file), the rows it skipped said on stderr.
fn dataset(path: &str, map: Option<ColumnMap>, args: &Args) -> Result<(Dataset, ColumnMap, Table)> {
    let bytes = data_file(path, args)?;
    let table = data::parse_table(&bytes, Some(path)).map_err(|e| refused(&Classify, path, &bytes, e))?;
    let map = map.unwrap_or_else(|| data::guess_columns(&table));
    let set = data::to_examples(&table, &map).map_err(|e| refused(&Classify, path, &bytes, e))?;
    if !set.skipped.is_empty() {
        eprintln!("{path}: skipped {} row(s), e.g. line {}: {}", set.skipped.len(), set.skipped[0].line, set.skipped[0].reason);
    }
    Ok((set, map, table))
}

/// The columns read, as a sentence for stderr.
fn columns(table: &Table, map: &ColumnMap) -> String {
    let name = |i: usize| table.columns.get(i).map_or_else(|| format!("column {}", i + 1), |c| format!("{c:?}"));
    let mut out = format!("text {}", name(map.text));
    if let Some(p) = map.text_pair {
        out += &format!(", second text {}", name(p));
    }
    if let Some(l) = map.label {
        out += &format!(", label {}", name(l));
    }
    out
}

/// `--task classify`.
pub(super) struct Classify;

impl CliTask for Classify {
    fn name(&self) -> &'static str {
        "classify"
    }

    fn holds(&self) -> &'static str {
        "labeled texts"
    }

    fn reads(&self, bytes: &[u8], path: &str) -> bool {
        data::parse_table(bytes, Some(path)).is_ok_and(|t| {
            let map = data::guess_columns(&t);
            map.label.is_some() && data::to_examples(&t, &map).is_ok()
        })
    }

    fn level(&self, _args: &Args) -> Result<Level> {
        Ok(Level::Sentence)
    }

    fn units(&self, input: &Input, config: FineTuneConfig) -> Result<(FineTuneConfig, Units)> {
        let (train_set, map, table) = dataset(input.train, None, input.args)?;
        eprintln!("{}: columns: {}", input.train, columns(&table, &map));
        let (train, valid) = match input.valid {
            Some(v) => (train_set.examples.clone(), dataset(v, Some(map), input.args)?.0.examples),
            None => {
                let split = train_set.split(VALID_FRACTION, SPLIT_SEED).map_err(core_error)?;
                (pick(&train_set.examples, &split.train), pick(&train_set.examples, &split.valid))
            }
        };
        let labels = train_set.labels.clone();
        let train = encode_examples(input.tokenizer, &train, &labels).map_err(core_error)?;
        let valid = encode_examples(input.tokenizer, &valid, &labels).map_err(|e| format!("the validation file: {e}"))?;
        let pairs = map.text_pair.is_some();
        Ok((config, Units { labels, train, valid, what: if pairs { "pairs" } else { "examples" }, pairs_recipe: pairs }))
    }

    fn students(&self) -> bool {
        true
    }

    fn columns(&self) -> [&'static str; 2] {
        ["valid accuracy", "macro-F1"]
    }

    fn cells(&self, r: &EvalReport) -> [String; 2] {
        [format!("{:.2}%", r.metrics.accuracy * 100.0), format!("{:.4}", r.metrics.macro_f1)]
    }

    /// Each label's F1: MRPC's and QQP's F1 is the positive class's, not the macro mean.
    fn evaluated(&self, r: &EvalReport) {
        let each: Vec<String> = r.metrics.per_class.iter().map(|c| format!("{} {:.4} ({} examples)", c.label, c.f1, c.support)).collect();
        eprintln!("  F1 per label: {}", each.join(", "));
    }

    fn best(&self, tuner: &FineTuner) -> String {
        format!("best validation accuracy {:.2}%", tuner.best_accuracy().unwrap_or(0.0) * 100.0)
    }
}
