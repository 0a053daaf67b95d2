//! `--task classify`: a label per text, or per pair of texts (MRPC, QQP, NLI), from a CSV, TSV
//! or JSON Lines table whose columns are guessed as the studio guesses them (pair columns by
//! name: `sentence1`/`sentence2`, `#1 String`/`#2 String`, `question1`/`question2`, …).

use std::path::Path;

use bertbench_core::data::{self, ColumnMap, Dataset, Table};
use bertbench_core::tokenizer::BertTokenizer;
use bertbench_core::train::encode_examples;

use super::{SPLIT_SEED, Task, Units, VALID_FRACTION, core_error, pick, refused};
use crate::{Result, read};

/// A table's examples with `map` (the training file's columns when `map` is given, as the
/// studio reads a validation file), the rows it skipped said on stderr.
fn dataset(path: &str, map: Option<ColumnMap>) -> Result<(Dataset, ColumnMap, Table)> {
    let bytes = read(Path::new(path))?;
    let table = data::parse_table(&bytes, Some(path)).map_err(|e| refused(Task::Classify, path, &bytes, e))?;
    let map = map.unwrap_or_else(|| data::guess_columns(&table));
    let set = data::to_examples(&table, &map).map_err(|e| refused(Task::Classify, path, &bytes, e))?;
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

pub(super) fn units(tokenizer: &BertTokenizer, train: &str, valid: Option<&str>) -> Result<Units> {
    let (train_set, map, table) = dataset(train, None)?;
    eprintln!("{train}: columns: {}", columns(&table, &map));
    let (train, valid) = match valid {
        Some(v) => (train_set.examples.clone(), dataset(v, Some(map))?.0.examples),
        None => {
            let split = train_set.split(VALID_FRACTION, SPLIT_SEED).map_err(core_error)?;
            (pick(&train_set.examples, &split.train), pick(&train_set.examples, &split.valid))
        }
    };
    let labels = train_set.labels.clone();
    let train = encode_examples(tokenizer, &train, &labels).map_err(core_error)?;
    let valid = encode_examples(tokenizer, &valid, &labels).map_err(|e| format!("the validation file: {e}"))?;
    let what = if map.text_pair.is_some() { "pairs" } else { "examples" };
    Ok(Units { labels, train, valid, what })
}
