//! `--task similarity`: pairs of texts with a score (STS-B's 0–5, 0–1) or a two-valued label,
//! from a table whose columns are guessed as the studio guesses them, trained as a bi-encoder
//! (each text alone, compared by cosine; exported as a sentence-transformers folder) or a
//! cross-encoder (the pair read together; exported as `*ForSequenceClassification` with one
//! output, transformers' regression); scored by Spearman's and Pearson's correlations.

use std::path::Path;

use bertbench_core::data::{PairData, guess_pair_columns, parse_table, to_pairs};
use bertbench_core::tasks::classification::Level;
use bertbench_core::tasks::similarity::{LABELS, SimilarityLoss};
use bertbench_core::train::{EvalReport, FineTuneConfig, FineTuner, TaskScores, encode_pairs};

use super::{CliTask, Input, SPLIT_SEED, Units, VALID_FRACTION, core_error, pick, refused};
use crate::{Args, Result, read};

fn pairs(path: &str) -> Result<PairData> {
    let bytes = read(Path::new(path))?;
    let wrong = |e| refused(&Similarity, path, &bytes, e);
    let table = parse_table(&bytes, Some(path)).map_err(wrong)?;
    let map = guess_pair_columns(&table);
    let data = to_pairs(&table, &map).map_err(wrong)?;
    let name = |i: usize| table.columns.get(i).cloned().unwrap_or_default();
    eprintln!(
        "{path}: {} pairs, texts {:?} and {:?}, score {:?} read as 0..1 from {}",
        data.pairs.len(),
        name(map.text),
        map.text_pair.map(name).unwrap_or_default(),
        map.label.map(name).unwrap_or_default(),
        data.scale.label()
    );
    for w in &data.warnings {
        eprintln!("{path}: {w}");
    }
    Ok(data)
}

/// `--task similarity`.
pub(super) struct Similarity;

impl CliTask for Similarity {
    fn name(&self) -> &'static str {
        "similarity"
    }

    fn holds(&self) -> &'static str {
        "scored pairs of texts"
    }

    fn reads(&self, bytes: &[u8], path: &str) -> bool {
        parse_table(bytes, Some(path)).is_ok_and(|t| to_pairs(&t, &guess_pair_columns(&t)).is_ok())
    }

    fn options(&self) -> &'static [&'static str] {
        &["encoder", "loss"]
    }

    /// A cross-encoder (`Level::Score`) or a bi-encoder (`Level::Embedding`), as `--encoder`
    /// says.
    fn level(&self, args: &Args) -> Result<Level> {
        match args.get("encoder").unwrap_or("bi") {
            "bi" => Ok(Level::Embedding),
            "cross" => Ok(Level::Score),
            other => Err(format!("unknown encoder {other}; use bi (each text alone, compared by cosine) or cross (the pair read together)")),
        }
    }

    fn units(&self, input: &Input, config: FineTuneConfig) -> Result<(FineTuneConfig, Units)> {
        let (tokenizer, level) = (input.tokenizer, input.level);
        let loss = match input.args.get("loss").unwrap_or("cosine") {
            "cosine" => SimilarityLoss::Cosine,
            "contrastive" => SimilarityLoss::Contrastive,
            other => return Err(format!("unknown loss {other}; use cosine or contrastive")),
        };
        let data = pairs(input.train)?;
        if loss == SimilarityLoss::Contrastive && (level != Level::Embedding || !data.binary) {
            return Err("--loss contrastive needs a bi-encoder and pairs labelled similar or not (two values)".into());
        }
        let (train, valid) = match input.valid {
            // A validation file's scores are read on the training file's scale.
            Some(v) => (data.pairs.clone(), pairs(v)?.on_scale_of(&data).map_err(|e| format!("{v}: {e}"))?.pairs),
            None => {
                let split = data.split(VALID_FRACTION, SPLIT_SEED).map_err(core_error)?;
                (pick(&data.pairs, &split.train), pick(&data.pairs, &split.valid))
            }
        };
        let config = config.with_similarity_loss(loss).for_similarity(level, &data);
        let units = Units {
            labels: LABELS.iter().map(|l| l.to_string()).collect(),
            train: encode_pairs(tokenizer, &train, level).map_err(core_error)?,
            valid: encode_pairs(tokenizer, &valid, level).map_err(core_error)?,
            what: "pairs",
            pairs_recipe: false,
        };
        Ok((config, units))
    }

    fn columns(&self) -> [&'static str; 2] {
        ["Spearman", "Pearson"]
    }

    fn cells(&self, r: &EvalReport) -> [String; 2] {
        r.scores.similarity().map_or(["–".into(), "–".into()], |s| [format!("{:.4}", s.spearman), format!("{:.4}", s.pearson)])
    }

    /// The best correlations, as a sentence.
    fn best(&self, tuner: &FineTuner) -> String {
        let kind = if tuner.meta().spec.level == Level::Embedding { "bi-encoder" } else { "cross-encoder" };
        match tuner.best_scores().and_then(TaskScores::similarity) {
            Some(s) => {
                let accuracy = s.accuracy.map(|a| format!(", {:.2}% on the right side of 0.5", a * 100.0)).unwrap_or_default();
                format!("best validation Spearman {:.4}, Pearson {:.4} ({} pairs, {kind}{accuracy})", s.spearman, s.pearson, s.count)
            }
            None => format!("no evaluation ({kind})"),
        }
    }
}
