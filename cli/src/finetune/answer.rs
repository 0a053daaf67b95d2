//! `--task qa`: extractive question answering on SQuAD files (JSON v1.1/v2, JSON Lines or a
//! table, as the studio reads them), each question's passage cut into windows.

use std::path::Path;

use bertbench_core::data::{self, QaItem};
use bertbench_core::tasks::qa::{self, SpanConfig};
use bertbench_core::tokenizer::BertTokenizer;
use bertbench_core::train::encode_questions;

use super::{SPLIT_SEED, Task, Units, VALID_FRACTION, core_error, pick, refused};
use crate::{Result, read};

fn questions(path: &str) -> Result<data::QaData> {
    let bytes = read(Path::new(path))?;
    data::parse_qa(&bytes, Some(path)).map_err(|e| refused(Task::Answer, path, &bytes, e))
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

pub(super) fn units(tokenizer: &BertTokenizer, train: &str, valid: Option<&str>, spans: &SpanConfig) -> Result<Units> {
    let (train, valid) = split(train, valid)?;
    let (train, lost) = encode_questions(tokenizer, &train, spans).map_err(core_error)?;
    let (valid, _) = encode_questions(tokenizer, &valid, spans).map_err(core_error)?;
    if lost > 0 {
        eprintln!("{lost} training question(s) have their answer in no window whole: they learn only \"no answer\"");
    }
    Ok(Units { labels: qa::LABELS.iter().map(|l| l.to_string()).collect(), train, valid, what: "windows" })
}
