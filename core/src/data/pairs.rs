//! Scored sentence pairs in, for sentence similarity: two texts and how alike they are, as a
//! number (STS-B's 0–5, SICK's 1–5, sentence-transformers' 0–1) or as a two-valued label
//! (Quora's `is_duplicate`, MRPC's `Quality`, PAWS's `label`: paraphrase or not).
//!
//! A pair file is read as any table ([`parse_table`]: CSV, TSV, JSON Lines); its columns are
//! guessed by [`guess_pair_columns`], and [`to_pairs`] takes its rows from [`to_examples`] and
//! reads the label column as a score, normalised to 0..=1 on the file's [`ScoreScale`]. A
//! decimal comma (`"4,5"`, as Excel writes numbers in many locales) is read as a point.
//!
//! [`parse_table`]: super::parse_table

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::columns::{ColumnMap, ColumnStats, column_stats};
use super::examples::{Example, SkipReason, Skipped, row_preview, summarise, to_examples};
use super::split::{Split, split_classes};
use super::table::Table;
use super::text::normalise_name;
use super::{DataError, SAMPLE_ROWS};

/// One pair with its score.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredPair {
    /// 1-based line of the row in the file.
    pub line: usize,
    /// The first text, trimmed.
    pub text: String,
    /// The second text, trimmed.
    pub text_pair: String,
    /// How alike the texts are, normalised to 0..=1 (see [`PairData::scale`]).
    pub score: f32,
    /// The score cell as written (trimmed).
    pub raw: String,
}

/// Which raw values mean 0 and 1 after normalisation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ScoreScale {
    /// The raw value read as 0 (least alike).
    pub low: f32,
    /// The raw value read as 1 (most alike).
    pub high: f32,
}

impl ScoreScale {
    /// Scores already in 0..=1.
    pub const UNIT: ScoreScale = ScoreScale { low: 0.0, high: 1.0 };

    /// A raw score → 0..=1: `(raw - low) / (high - low)`.
    pub fn normalise(&self, raw: f32) -> f32 {
        (raw - self.low) / (self.high - self.low)
    }

    /// A normalised score (a prediction) → the file's scale.
    pub fn denormalise(&self, s: f32) -> f32 {
        self.low + s * (self.high - self.low)
    }

    /// The scale as people write it: `"0–5"`, `"1–5"`, `"-1 to 1"`.
    pub fn label(&self) -> String {
        if self.low < 0.0 {
            format!("{} to {}", self.low, self.high)
        } else {
            format!("{}–{}", self.low, self.high)
        }
    }
}

/// A pair file, read.
#[derive(Debug, Clone, PartialEq)]
pub struct PairData {
    /// The usable pairs, in file order.
    pub pairs: Vec<ScoredPair>,
    /// The file's scale: which raw values were read as 0 and 1.
    pub scale: ScoreScale,
    /// Whether the scores are two values (a label such as `is_duplicate`): then 0 and 1.
    pub binary: bool,
    /// For text labels mapped to 0/1: (the value read as 0, the value read as 1), as written.
    pub label_names: Option<(String, String)>,
    /// The rows left out, in file order, and why.
    pub skipped: Vec<Skipped>,
    /// Sentences worth knowing before training: how the scores were read, rows left out,
    /// repeated pairs.
    pub warnings: Vec<String>,
}

/// Equal-width bins of the normalised score that [`PairData::split`] keeps in proportion.
const SPLIT_BINS: usize = 5;

impl PairData {
    /// These pairs (a separate validation or test file) read on `train`'s scale, so that both
    /// files' scores mean the same: a validation file of STS-B scores from 0.2 to 4.8 is still
    /// scored on the training file's 0–5. Two-valued text labels must name the same two values.
    pub fn on_scale_of(mut self, train: &PairData) -> Result<PairData, DataError> {
        if self.label_names != train.label_names {
            let names = |d: &PairData| d.label_names.as_ref().map_or("numbers".to_string(), |(a, b)| format!("“{a}” and “{b}”"));
            return Err(DataError::Pairs(format!(
                "The validation file's scores are {}, the training file's {}: both files need the same kind of score.",
                names(&self),
                names(train)
            )));
        }
        if self.scale != train.scale {
            for p in &mut self.pairs {
                p.score = train.scale.normalise(self.scale.denormalise(p.score));
            }
            self.scale = train.scale;
        }
        self.binary = train.binary;
        Ok(self)
    }

    /// A seeded train/validation split (the same inputs give the same split), stratified by
    /// score: 5 equal-width bins of the normalised score, or the two classes of binary data,
    /// each split as [`Dataset::split`] splits a label. A bin with a single pair is merged into
    /// a neighbouring bin (the smaller one), so that only a file of fewer than 2 pairs fails.
    ///
    /// [`Dataset::split`]: super::Dataset::split
    pub fn split(&self, valid_fraction: f32, seed: u64) -> Result<Split, DataError> {
        let n = self.pairs.len();
        if n < 2 {
            return Err(DataError::Pairs(format!(
                "Only {n} pair(s) can be used; training needs at least 2 (one for training, one \
                 for validation). Add pairs to the file."
            )));
        }
        let bins = if self.binary { 2 } else { SPLIT_BINS };
        let ids: Vec<usize> = self.pairs.iter().map(|p| bin(p.score, bins)).collect();
        // Groups of adjacent bins: (first bin, last bin, pairs), the empty bins left out.
        let mut groups: Vec<(usize, usize, usize)> = (0..bins)
            .map(|b| (b, b, ids.iter().filter(|&&i| i == b).count()))
            .filter(|g| g.2 > 0)
            .collect();
        while let Some(i) = groups.iter().position(|g| g.2 < 2).filter(|_| groups.len() > 1) {
            let j = match i {
                0 => 1,
                i if i + 1 == groups.len() => i - 1,
                i if groups[i - 1].2 <= groups[i + 1].2 => i - 1,
                i => i + 1,
            };
            let (a, b) = (i.min(j), i.max(j));
            groups[a] = (groups[a].0, groups[b].1, groups[a].2 + groups[b].2);
            groups.remove(b);
        }
        let group_of = |b: usize| groups.iter().position(|g| g.0 <= b && b <= g.1).unwrap_or(0);
        let ids: Vec<usize> = ids.into_iter().map(group_of).collect();
        let names: Vec<String> = groups
            .iter()
            .map(|&(lo, hi, _)| {
                let at = |b: usize| self.scale.denormalise(b as f32 / bins as f32);
                format!("scores {:.1}–{:.1}", at(lo), at(hi + 1))
            })
            .collect();
        split_classes(&ids, groups.len(), valid_fraction, seed, Some(&names))
    }

    /// How many normalised scores fall in each of `bins` equal bins over 0..=1 (1 in the last).
    pub fn histogram(&self, bins: usize) -> Vec<usize> {
        let mut counts = vec![0; bins];
        if bins > 0 {
            for p in &self.pairs {
                counts[bin(p.score, bins)] += 1;
            }
        }
        counts
    }

    /// The mean normalised score (0 without pairs).
    pub fn mean_score(&self) -> f32 {
        let sum: f64 = self.pairs.iter().map(|p| f64::from(p.score)).sum();
        if self.pairs.is_empty() { 0.0 } else { (sum / self.pairs.len() as f64) as f32 }
    }
}

/// The bin of a normalised score among `bins` (> 0) equal bins over 0..=1.
fn bin(score: f32, bins: usize) -> usize {
    ((score.clamp(0.0, 1.0) * bins as f32) as usize).min(bins - 1)
}

/// Column names (after [`column_name`]) of the first text, the second text and the score, in
/// order of preference, and of id columns (never the score).
#[rustfmt::skip]
const TEXT_NAMES: &[&str] = &[
    "sentence1", "sentence_a", "text1", "text_1", "text_a", "question1", "question_1", "1_string",
    "s1", "sent1", "string1", "premise", "query", "anchor", "sentence", "text", "question",
];
#[rustfmt::skip]
const PAIR_NAMES: &[&str] = &[
    "sentence2", "sentence_b", "text2", "text_2", "text_b", "question2", "question_2", "2_string",
    "s2", "sent2", "string2", "hypothesis", "positive",
];
#[rustfmt::skip]
const SCORE_NAMES: &[&str] = &[
    "score", "similarity", "relatedness_score", "similarity_score", "relatedness", "gold_score",
    "sim", "rating", "label", "labels", "is_duplicate", "is_paraphrase", "paraphrase", "duplicate",
    "quality", "gold_label", "target", "y",
];
const ID_NAMES: &[&str] = &["id", "idx", "index", "old_index", "pair_id", "qid", "qid1", "qid2"];

/// Labels that mean "alike" (1) and "not alike" (0), lowercase.
#[rustfmt::skip]
const SIMILAR: &[&str] = &[
    "1", "true", "yes", "y", "similar", "paraphrase", "duplicate", "positive", "pos", "entailment",
    "same", "match",
];
#[rustfmt::skip]
const DIFFERENT: &[&str] = &[
    "0", "false", "no", "n", "different", "not_paraphrase", "not_duplicate", "negative", "neg",
    "contradiction", "non-entailment", "not_entailment", "mismatch",
];

/// `"#1 String"` → `"1_string"`: [`normalise_name`] without MRPC's `#`.
fn column_name(name: &str) -> String {
    normalise_name(&name.replace('#', ""))
}

/// Guesses the columns of a pair file: the text, the second text (always `Some` when two text
/// columns exist) and the score (the `label` field of [`ColumnMap`]).
///
/// By name first (case, spaces, dashes and `#` ignored): the text from `sentence1`,
/// `sentence_a`, `text1`, `text_a`, `question1`, `#1 String`, `s1`, `premise`, `query`,
/// `anchor`, …; the second text from `sentence2`, `sentence_b`, `text2`, `text_b`, `question2`,
/// `#2 String`, `s2`, `hypothesis`, `positive`, …; the score from `score`, `similarity`,
/// `relatedness_score`, `similarity_score`, `label`, `is_duplicate`, `quality`, `gold_score`,
/// `sim`, `rating`, …. Else by content: the two columns (not numbers) with the longest average
/// text are the texts, in file order; the score is a column of numbers (preferring one with a
/// decimal point, then the most distinct values), else a two-valued column, else a column of a
/// few labels (which [`to_pairs`] then explains). Id columns (named `id`, `qid1`, `pair_ID`,
/// `index`, `…_id`, or integers that are all distinct or in the thousands) are never the score.
pub fn guess_pair_columns(table: &Table) -> ColumnMap {
    let names: Vec<String> = table.columns.iter().map(|c| column_name(c)).collect();
    let stats = column_stats(table);
    let numbers = number_stats(table);
    let width = stats.len();
    let by_name = |wanted: &[&str], except: &[Option<usize>]| {
        let usable = |j: usize| stats[j].cells > 0 && !except.contains(&Some(j));
        let found = wanted.iter().find_map(|w| (0..width).find(|&j| names[j] == *w && usable(j)));
        found.filter(|_| table.has_header)
    };
    let is_id = |j: usize| {
        let name = names[j].as_str();
        (table.has_header && (ID_NAMES.contains(&name) || name.ends_with("_id")))
            || numbers[j].id_like(&stats[j])
    };

    let named_score = by_name(SCORE_NAMES, &[]);
    let named_text = by_name(TEXT_NAMES, &[named_score]);
    let named_pair = by_name(PAIR_NAMES, &[named_score, named_text]);
    let named = [named_score, named_text, named_pair];
    let mut texts: Vec<usize> = (0..width)
        .filter(|&j| stats[j].cells > 0 && !numbers[j].numeric(&stats[j]) && !is_id(j))
        .filter(|&j| !named.contains(&Some(j)))
        .collect();
    texts.sort_by(|&a, &b| stats[b].mean_chars.total_cmp(&stats[a].mean_chars).then(a.cmp(&b)));
    let (text, text_pair) = match (named_text, named_pair) {
        (Some(text), pair) => (text, pair.or(texts.first().copied())),
        (None, Some(pair)) => {
            (texts.first().copied().unwrap_or(usize::from(pair == 0)), Some(pair))
        }
        (None, None) => {
            let mut two = texts[..texts.len().min(2)].to_vec();
            two.sort_unstable();
            (two.first().copied().unwrap_or(0), two.get(1).copied())
        }
    };
    let label = named_score.or_else(|| {
        (0..width)
            .filter(|&j| j != text && Some(j) != text_pair && stats[j].cells > 0 && !is_id(j))
            .filter_map(|j| {
                let (s, n) = (&stats[j], &numbers[j]);
                // (kind of column, decimal point, distinct values: more for numbers, fewer for
                // labels, later column)
                let key = if n.numeric(s) {
                    (2, n.decimal, n.distinct as i64, j)
                } else if s.distinct == 2 || s.label_like() {
                    (1, false, -(s.distinct as i64), j)
                } else {
                    return None;
                };
                Some(key)
            })
            .max()
            .map(|key| key.3)
    });
    ColumnMap { text, text_pair, label }
}

/// The numbers in one column, among the first [`SAMPLE_ROWS`] rows.
#[derive(Debug, Default)]
struct NumberStats {
    /// Cells that are numbers ([`parse_score`]).
    count: usize,
    /// Whether one of them has a decimal point (or comma).
    decimal: bool,
    /// Whether all of them are whole numbers written without a decimal point.
    integers: bool,
    /// Distinct numbers.
    distinct: usize,
    /// The largest absolute value.
    max_abs: f32,
}

impl NumberStats {
    /// More than half of the non-empty cells are numbers.
    fn numeric(&self, column: &ColumnStats) -> bool {
        self.count * 2 > column.cells
    }

    /// Integers only, all distinct (in more rows than a score scale has values) or in the
    /// thousands: row or question ids, not scores.
    fn id_like(&self, column: &ColumnStats) -> bool {
        self.count == column.cells
            && self.integers
            && ((self.distinct == self.count && self.count > 6) || self.max_abs >= 1000.0)
    }
}

fn number_stats(table: &Table) -> Vec<NumberStats> {
    let width = table.columns.len();
    let mut values: Vec<Vec<f32>> = vec![Vec::new(); width];
    let mut stats: Vec<NumberStats> =
        (0..width).map(|_| NumberStats { integers: true, ..NumberStats::default() }).collect();
    for row in table.rows.iter().filter(|r| r.error.is_none()).take(SAMPLE_ROWS) {
        for (j, field) in row.fields.iter().take(width).enumerate() {
            let Some(x) = parse_score(field) else { continue };
            let s = &mut stats[j];
            let decimal = field.contains(['.', ',']);
            s.count += 1;
            s.decimal |= decimal;
            s.integers &= !decimal && x.fract() == 0.0;
            s.max_abs = s.max_abs.max(x.abs());
            values[j].push(x);
        }
    }
    for (s, mut v) in stats.iter_mut().zip(values) {
        v.sort_by(f32::total_cmp);
        v.dedup();
        s.distinct = v.len();
    }
    stats
}

/// A score as people write it: `4.5`, ` 3 `, `1e-1`, or `4,5` (a decimal comma, read as a
/// point when there is no point). Finite numbers only.
fn parse_score(cell: &str) -> Option<f32> {
    let cell = cell.trim();
    if !cell.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let value = if cell.contains(',') && !cell.contains('.') {
        cell.replacen(',', ".", 1).parse::<f32>()
    } else {
        cell.parse::<f32>()
    };
    value.ok().filter(|v| v.is_finite())
}

/// Turns rows into [`ScoredPair`]s. `map.text_pair` and `map.label` (the score) must be chosen.
/// Rows come from [`to_examples`] (its skipped rows are kept, with their reasons).
///
/// Scores are numbers (`4.5`, ` 3 `, `4,5`, `1e-1`) on a scale of 0–1 when all lie in it, else
/// of `floor(min)`–`ceil(max)` (0–5 for STS-B, 1–5 for SICK); a column of only 0 and 1 is
/// [`binary`](PairData::binary). A few cells that are not numbers are skipped rows
/// ([`SkipReason::NotANumber`]). When more than half are not numbers, the column must hold two
/// labels, one that reads as "similar" (`1`, `true`, `yes`, `paraphrase`, `duplicate`,
/// `entailment`, …) and one as "different" (`0`, `false`, `no`, `not_duplicate`,
/// `contradiction`, …), case ignored; they become 1 and 0.
///
/// Errors, besides those of [`to_examples`]: no second text or score column chosen; a score
/// column with one value only; two labels that do not read as similar and different; three or
/// more labels (a file for a classifier); a column where more than half are not numbers.
pub fn to_pairs(table: &Table, map: &ColumnMap) -> Result<PairData, DataError> {
    if map.text_pair.is_none() {
        return Err(DataError::Pairs(
            "Only one text column is chosen. A similarity model compares two texts: choose the \
             column that holds the second text of each pair."
                .into(),
        ));
    }
    let Some(score_column) = map.label else {
        return Err(DataError::Pairs(
            "No score column is chosen. Choose the column that says how alike the two texts are: \
             a number (such as 0–5) or a label (such as 0 and 1)."
                .into(),
        ));
    };
    let data = to_examples(table, map)?;
    let column = table.columns[score_column].as_str();
    let numbers: Vec<Option<f32>> = data.examples.iter().map(|e| parse_score(&e.label)).collect();
    let not_numbers = numbers.iter().filter(|n| n.is_none()).count();
    let mut warnings = Vec::new();
    if let Some(first) = data.extra_fields.first() {
        warnings.push(super::report::extra_fields_note(&data.extra_fields, *first));
    }

    let (values, scale, binary, label_names) = if not_numbers * 2 > numbers.len() {
        let (zero, one) = word_labels(&data.examples, &numbers, column)?;
        let one_lower = one.to_lowercase();
        let values: Vec<Option<f32>> = data
            .examples
            .iter()
            .map(|e| Some(if e.label.to_lowercase() == one_lower { 1.0 } else { 0.0 }))
            .collect();
        warnings.push(format!(
            "The labels in column “{column}” were read as “{one}” = similar (1) and “{zero}” = \
             different (0)."
        ));
        (values, ScoreScale::UNIT, true, Some((zero, one)))
    } else {
        let (min, max) = numbers
            .iter()
            .flatten()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        if min == max {
            let raw = data.examples.iter().find(|e| parse_score(&e.label).is_some());
            return Err(constant(column, raw.map_or("", |e| e.label.as_str())));
        }
        let scale = if min >= 0.0 && max <= 1.0 {
            ScoreScale::UNIT
        } else {
            ScoreScale { low: min.floor(), high: max.ceil() }
        };
        let binary = numbers.iter().flatten().all(|&x| x == 0.0 || x == 1.0);
        if scale != ScoreScale::UNIT {
            warnings.push(format!(
                "The scores in column “{column}” (from {min} to {max}) were read on a scale of \
                 {}, as similarity 0–1: {} is the least alike, {} the most.",
                scale.label(),
                scale.low,
                scale.high
            ));
        }
        (numbers, scale, binary, None)
    };

    let mut skipped = data.skipped;
    let mut pairs = Vec::with_capacity(data.examples.len());
    for (e, value) in data.examples.into_iter().zip(values) {
        match value {
            Some(raw) => pairs.push(ScoredPair {
                line: e.line,
                text: e.text,
                text_pair: e.text_pair.unwrap_or_default(),
                score: scale.normalise(raw),
                raw: e.label,
            }),
            None => {
                let row = table.rows.binary_search_by_key(&e.line, |r| r.line).ok();
                skipped.push(Skipped {
                    line: e.line,
                    preview: row.map_or(String::new(), |i| row_preview(table, &table.rows[i])),
                    reason: SkipReason::NotANumber(e.label),
                });
            }
        }
    }
    skipped.sort_by_key(|s| s.line);
    if !skipped.is_empty() {
        warnings.push(format!(
            "{} row(s) were left out: {}. They are listed below with their line numbers.",
            skipped.len(),
            summarise(&skipped)
        ));
    }
    warnings.extend(repeated_pairs(&pairs));
    Ok(PairData { pairs, scale, binary, label_names, skipped, warnings })
}

/// The two labels of a column that is mostly not numbers, as (read as 0, read as 1).
fn word_labels(
    examples: &[Example],
    numbers: &[Option<f32>],
    column: &str,
) -> Result<(String, String), DataError> {
    // Distinct labels, case ignored, in their first spelling; at most 51 are needed.
    let mut distinct: Vec<(String, &str)> = Vec::new();
    for e in examples {
        let lower = e.label.to_lowercase();
        if !distinct.iter().any(|(l, _)| *l == lower) {
            distinct.push((lower, &e.label));
            if distinct.len() > 50 {
                break;
            }
        }
    }
    let side = |lower: &str| (SIMILAR.contains(&lower), DIFFERENT.contains(&lower));
    match distinct.as_slice() {
        [(_, only)] => Err(constant(column, only)),
        [(a, a_raw), (b, b_raw)] => match (side(a), side(b)) {
            ((true, false), (false, true)) => Ok((b_raw.to_string(), a_raw.to_string())),
            ((false, true), (true, false)) => Ok((a_raw.to_string(), b_raw.to_string())),
            _ => Err(DataError::Pairs(format!(
                "The column “{column}” holds two labels, “{a_raw}” and “{b_raw}”, and it is not \
                 clear which one means that the texts are alike. Write them as 1 (alike) and 0 \
                 (not alike)."
            ))),
        },
        // A few short labels (entailment, neutral, contradiction): a classifier's file.
        labels
            if numbers.iter().all(Option::is_none)
                && labels.len() <= 50
                && labels.iter().all(|(l, _)| l.chars().count() <= 30) =>
        {
            let shown: Vec<String> = labels.iter().take(4).map(|(_, l)| format!("“{l}”")).collect();
            let more = if labels.len() > 4 {
                format!(" and {} more", labels.len() - 4)
            } else {
                String::new()
            };
            Err(DataError::Pairs(format!(
                "The column “{column}” holds {} labels ({}{more}), not similarity scores. A \
                 similarity model needs numbers (such as 0–5) or two labels (such as 0 and 1). A \
                 file with three or more labels trains as a classifier: choose the “a label per \
                 text” task, which reads the two texts as a pair.",
                labels.len(),
                shown.join(", ")
            )))
        }
        _ => {
            let first = numbers.iter().position(Option::is_none).map(|i| &examples[i]);
            let (line, cell) = first.map_or((0, ""), |e| (e.line, e.label.as_str()));
            let bad = numbers.iter().filter(|n| n.is_none()).count();
            Err(DataError::Pairs(format!(
                "Line {line}: the score “{cell}” is not a number, and {bad} of the {} scores in \
                 column “{column}” are not numbers. Choose the column that holds the scores: \
                 numbers (such as 4.5) or two labels (such as 0 and 1).",
                numbers.len()
            )))
        }
    }
}

fn constant(column: &str, value: &str) -> DataError {
    DataError::Pairs(format!(
        "Every pair has the score “{value}” in column “{column}”. A similarity model learns from \
         pairs that are more and less alike: check that this is the score column, or add pairs \
         with other scores."
    ))
}

/// A warning when a pair (in either order) repeats an earlier one.
fn repeated_pairs(pairs: &[ScoredPair]) -> Option<String> {
    let mut first: HashMap<(&str, &str), usize> = HashMap::new();
    let (mut count, mut differ, mut example) = (0, 0, None);
    for (i, p) in pairs.iter().enumerate() {
        let (a, b) = (p.text.as_str(), p.text_pair.as_str());
        let f = *first.entry(if a <= b { (a, b) } else { (b, a) }).or_insert(i);
        if f != i {
            count += 1;
            differ += usize::from(pairs[f].score != p.score);
            example.get_or_insert((p.line, pairs[f].line));
        }
    }
    let (line, earlier) = example?;
    let mut sentence = format!(
        "{count} pair(s) repeat an earlier pair, in the same or the other order (for example line \
         {line} repeats line {earlier}). A repeated pair can land in both training and validation \
         and make the score look better than it is."
    );
    if differ > 0 {
        sentence.push_str(&format!(
            " {differ} of them have a different score than the first copy; check those rows."
        ));
    }
    Some(sentence)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::parse_table;

    fn read(text: &str, name: &str) -> (ColumnMap, PairData) {
        let t = parse_table(text.as_bytes(), Some(name)).expect("parses");
        let map = guess_pair_columns(&t);
        let data = to_pairs(&t, &map).unwrap_or_else(|e| panic!("{e}"));
        (map, data)
    }

    fn error(text: &str, name: &str) -> String {
        let t = parse_table(text.as_bytes(), Some(name)).expect("parses");
        to_pairs(&t, &guess_pair_columns(&t)).unwrap_err().to_string()
    }

    /// A `sentence1,sentence2,score` file with these score cells, each pair different.
    fn scores(cells: &[&str]) -> Result<PairData, DataError> {
        let mut csv = String::from("sentence1,sentence2,score\n");
        for (i, c) in cells.iter().enumerate() {
            csv.push_str(&format!("first text {i},second text {i},\"{c}\"\n"));
        }
        let t = parse_table(csv.as_bytes(), Some("pairs.csv")).expect("parses");
        to_pairs(&t, &ColumnMap { text: 0, text_pair: Some(1), label: Some(2) })
    }

    fn normalised(d: &PairData) -> Vec<f32> {
        d.pairs.iter().map(|p| p.score).collect()
    }

    fn cols(text: usize, pair: usize, label: usize) -> ColumnMap {
        ColumnMap { text, text_pair: Some(pair), label: Some(label) }
    }

    fn assert_close(got: Vec<f32>, want: &[f32]) {
        let close =
            got.len() == want.len() && got.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6);
        assert!(close, "{got:?} != {want:?}");
    }

    const STSB_GLUE: &str = "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore
0\tmain-captions\tMSRvid\t2012test\t0001\tnone\tnone\tA plane is taking off.\tAn air plane is taking off.\t5.000
1\tmain-captions\tMSRvid\t2012test\t0004\tnone\tnone\tA man is playing a large flute.\tA man is playing a flute.\t3.800
2\tmain-captions\tMSRvid\t2012test\t0005\tnone\tnone\tA man is spreading shreded cheese on a pizza.\tA man is spreading shredded cheese on an uncooked pizza.\t3.800
3\tmain-captions\tMSRvid\t2012test\t0006\tnone\tnone\tThree men are playing chess.\tTwo men are playing chess.\t2.600
4\tmain-news\theadlines\t2013\t0010\tnone\tnone\tStocks fall as oil prices rise.\tA woman is slicing an onion.\t0.000
";

    #[test]
    fn glue_stsb_tsv_with_its_ten_columns() {
        let (map, d) = read(STSB_GLUE, "train.tsv");
        assert_eq!(map, cols(7, 8, 9));
        assert_eq!(d.scale, ScoreScale { low: 0.0, high: 5.0 });
        assert!(!d.binary && d.label_names.is_none() && d.skipped.is_empty());
        assert_close(normalised(&d), &[1.0, 0.76, 0.76, 0.52, 0.0]);
        let p = &d.pairs[0];
        assert_eq!(
            (p.line, p.text.as_str(), p.text_pair.as_str(), p.raw.as_str()),
            (2, "A plane is taking off.", "An air plane is taking off.", "5.000")
        );
        assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
        assert!(d.warnings[0].contains("scale of 0–5"), "{}", d.warnings[0]);
        // Without its header, by content: the longest texts, and the decimal column as the score.
        let headerless = STSB_GLUE.split_once('\n').unwrap().1;
        let t = parse_table(headerless.as_bytes(), Some("train.tsv")).unwrap();
        assert!(!t.has_header);
        assert_eq!(guess_pair_columns(&t), cols(7, 8, 9));
    }

    #[test]
    fn sentence_transformers_stsb_scores_in_0_to_1_are_kept() {
        let csv = "sentence1,sentence2,score\nA man is playing a flute.,A man is playing a bamboo flute.,0.72\nA girl is styling her hair.,A girl is brushing her hair.,0.5\nA dog runs.,The stock market fell.,0.04\n";
        let (map, d) = read(csv, "stsb.csv");
        assert_eq!(map, cols(0, 1, 2));
        assert_eq!(d.scale, ScoreScale::UNIT);
        assert_close(normalised(&d), &[0.72, 0.5, 0.04]);
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    }

    #[test]
    fn mteb_json_lines_with_numeric_scores() {
        let jsonl = r#"{"sentence1": "A cat sits on the mat.", "sentence2": "A cat is on a mat.", "score": 4.2}
{"sentence1": "Oil prices rise.", "sentence2": "A man plays the guitar.", "score": 0.8}
{"sentence1": "The sun is shining.", "sentence2": "It is a sunny day.", "score": 2.5}
"#;
        let (map, d) = read(jsonl, "test.jsonl");
        assert_eq!(map, cols(0, 1, 2));
        assert_eq!(d.scale, ScoreScale { low: 0.0, high: 5.0 });
        assert_eq!(d.pairs[0].raw, "4.2");
        assert_eq!(d.pairs.iter().map(|p| p.line).collect::<Vec<_>>(), [1, 2, 3]);
        assert!((d.pairs[0].score - 0.84).abs() < 1e-6);
    }

    #[test]
    fn sick_tsv_with_scores_1_to_5_and_an_entailment_column() {
        let tsv = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment
1\tA group of kids is playing in a yard and an old man is standing in the background\tA group of boys in a yard is playing and a man is standing in the background\t4.5\tNEUTRAL
2\tA group of children is playing in the house and there is no man standing in the background\tA group of kids is playing in a yard and an old man is standing in the background\t3.2\tNEUTRAL
3\tThe young boys are playing outdoors and the man is smiling nearby\tThere is no boy playing outdoors and there is no man smiling\t1\tCONTRADICTION
4\tA brown dog is attacking another animal in front of the man in pants\tTwo dogs are fighting\t5.0\tENTAILMENT
";
        let (map, d) = read(tsv, "SICK.txt");
        assert_eq!(map, cols(1, 2, 3));
        assert_eq!(d.scale, ScoreScale { low: 1.0, high: 5.0 });
        assert_close(normalised(&d), &[0.875, 0.55, 0.0, 1.0]);
        assert!(d.warnings[0].contains("scale of 1–5"), "{:?}", d.warnings);
    }

    #[test]
    fn quora_question_pairs_with_ids_are_binary() {
        let csv = "id,qid1,qid2,question1,question2,is_duplicate
0,1,2,What is the step by step guide to invest in share market in india?,What is the step by step guide to invest in share market?,0
1,3,4,What is the story of Kohinoor (Koh-i-Noor) Diamond?,What would happen if the Indian government stole the Kohinoor (Koh-i-Noor) diamond back?,0
2,5,6,How can I increase the speed of my internet connection while using a VPN?,How can Internet speed be increased by hacking through DNS?,1
";
        let (map, d) = read(csv, "quora.csv");
        assert_eq!(map, cols(3, 4, 5));
        assert!(d.binary && d.label_names.is_none());
        assert_close(normalised(&d), &[0.0, 0.0, 1.0]);
        // Without a header, the id columns (all distinct integers) are never the score.
        let mut rows = String::new();
        for i in 0..8 {
            rows.push_str(&format!("{i},{},{},How do I learn number {i} fast?,What is the quickest way to learn {i}?,{}\n", 2 * i + 1, 2 * i + 2, i % 2));
        }
        let t = parse_table(rows.as_bytes(), Some("quora.csv")).unwrap();
        assert!(!t.has_header);
        assert_eq!(guess_pair_columns(&t), cols(3, 4, 5));
    }

    #[test]
    fn mrpc_with_the_label_first_and_hash_names() {
        let tsv = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String
1\t702876\t702977\tAmrozi accused his brother , whom he called \" the witness \" , of deliberately distorting his evidence .\tReferring to him as only \" the witness \" , Amrozi accused his brother of deliberately distorting his evidence .
0\t2108705\t2108831\tYucaipa owned Dominick 's before selling the chain to Safeway in 1998 for $ 2.5 billion .\tYucaipa bought Dominick 's in 1995 for $ 867 million and sold it to Safeway for $ 1.8 billion in 1998 .
1\t1330381\t1330521\tThey had published an advertisement on the Internet on June 10 , offering the cargo for sale , he added .\tOn June 10 , the ship 's owners had published an advertisement on the Internet , offering the explosives for sale .
";
        let (map, d) = read(tsv, "msr_paraphrase_train.txt");
        assert_eq!(map, cols(3, 4, 0));
        assert!(d.binary);
        assert_close(normalised(&d), &[1.0, 0.0, 1.0]);
        assert!(d.pairs[0].text.contains("\" the witness \""));
    }

    #[test]
    fn paws_tsv_with_id_and_label() {
        let tsv = "id\tsentence1\tsentence2\tlabel
1\tIn Paris , in October 1560 , he secretly met the English ambassador .\tIn October 1560 , he secretly met with the English ambassador in Paris .\t0
2\tThe NBA season of 1975 -- 76 was the 30th season of the National Basketball Association .\tThe 1975 -- 76 season of the National Basketball Association was the 30th season of the NBA .\t1
3\tThere are also specific discussions , public profile debates and project discussions .\tThere are also public discussions , profile specific discussions , and project discussions .\t0
";
        let (map, d) = read(tsv, "train.tsv");
        assert_eq!(map, cols(1, 2, 3));
        assert!(d.binary);
        assert_eq!(d.pairs.iter().map(|p| p.raw.as_str()).collect::<Vec<_>>(), ["0", "1", "0"]);
    }

    #[test]
    fn spreadsheets_with_decimal_commas_and_a_bom() {
        let csv = "text1,text2,similarity\nThe cat sits on the mat,A cat is sitting on a mat,4.5\nA dog runs in the park,The stock market fell today,0.5\nA man plays the guitar,Someone is playing music,3\n";
        let (map, d) = read(csv, "sheet.csv");
        assert_eq!(map, cols(0, 1, 2));
        assert_close(normalised(&d), &[0.9, 0.1, 0.6]);
        // Excel in many locales: a byte-order mark, `;` between fields, a decimal comma.
        let excel = "\u{feff}text1;text2;similarity\r\nThe cat sits on the mat;A cat is sitting on a mat;4,5\r\nA dog runs in the park;The stock market fell today;0,5\r\nA man plays the guitar;Someone is playing music;3\r\n";
        let (map, e) = read(excel, "sheet.csv");
        assert_eq!(map, cols(0, 1, 2));
        assert_close(normalised(&e), &normalised(&d));
        assert_eq!(e.pairs[0].raw, "4,5");
        // A quoted decimal comma in a comma-separated file.
        let quoted = "text1,text2,similarity\nThe cat sits on the mat,A cat is sitting on a mat,\"4,5\"\nA dog runs in the park,The stock market fell today,\"0,5\"\n";
        let (_, q) = read(quoted, "sheet.csv");
        assert_close(normalised(&q), &[0.9, 0.1]);
    }

    #[test]
    fn scale_rules() {
        let d = scores(&["0", "0.25", "1"]).unwrap();
        assert_eq!(d.scale, ScoreScale::UNIT);
        assert_close(normalised(&d), &[0.0, 0.25, 1.0]);
        let d = scores(&["0.4", "4.6", " 3 ", "1e-1"]).unwrap();
        assert_eq!(d.scale, ScoreScale { low: 0.0, high: 5.0 });
        assert_eq!(d.pairs[2].raw, "3");
        assert!((d.pairs[3].score - 0.02).abs() < 1e-6);
        let d = scores(&["1.2", "4.8", "2"]).unwrap();
        assert_eq!(d.scale, ScoreScale { low: 1.0, high: 5.0 });
        let d = scores(&["-0.8", "0.9", "0"]).unwrap();
        assert_eq!(d.scale, ScoreScale { low: -1.0, high: 1.0 });
        assert_close(normalised(&d), &[0.1, 0.95, 0.5]);
        assert!(d.warnings[0].contains("scale of -1 to 1"), "{:?}", d.warnings);
        assert!(d.pairs.iter().all(|p| (0.0..=1.0).contains(&p.score)));
    }

    #[test]
    fn score_scale_round_trips_and_labels() {
        let s = ScoreScale { low: 1.0, high: 5.0 };
        assert_eq!(s.normalise(3.0), 0.5);
        assert_eq!(s.denormalise(0.5), 3.0);
        assert_eq!(s.denormalise(s.normalise(4.2)), 4.2);
        assert_eq!(s.label(), "1–5");
        assert_eq!(ScoreScale { low: 0.0, high: 5.0 }.label(), "0–5");
        assert_eq!(ScoreScale::UNIT.label(), "0–1");
    }

    #[test]
    fn binary_labels_as_numbers_or_words() {
        let d = scores(&["0", "1", "1"]).unwrap();
        assert!(d.binary && d.label_names.is_none() && d.warnings.is_empty());
        let d = scores(&["yes", "no", "Yes"]).unwrap();
        assert!(d.binary);
        assert_eq!(d.label_names, Some(("no".into(), "yes".into())));
        assert_close(normalised(&d), &[1.0, 0.0, 1.0]);
        assert_eq!(d.pairs[2].raw, "Yes");
        assert!(
            d.warnings[0].contains("“yes” = similar (1) and “no” = different (0)"),
            "{:?}",
            d.warnings
        );
        let d = scores(&["not_duplicate", "Duplicate", "not_duplicate"]).unwrap();
        assert_eq!(d.label_names, Some(("not_duplicate".into(), "Duplicate".into())));
        assert_close(normalised(&d), &[0.0, 1.0, 0.0]);
        let d = scores(&["true", "false"]).unwrap();
        assert_close(normalised(&d), &[1.0, 0.0]);
        let e = scores(&["cat", "dog", "cat"]).unwrap_err().to_string();
        assert!(
            e.contains("two labels, “cat” and “dog”") && e.contains("1 (alike) and 0 (not alike)"),
            "{e}"
        );
        let e = scores(&["yes", "true"]).unwrap_err().to_string();
        assert!(e.contains("“yes” and “true”"), "{e}");
    }

    #[test]
    fn a_three_class_nli_file_points_to_the_classifier() {
        let csv = "premise,hypothesis,label\nA man sleeps.,A person rests.,entailment\nA dog barks.,The dog is hungry.,neutral\nA girl runs.,The girl sits.,contradiction\nA boy eats.,A child is eating.,entailment\n";
        let e = error(csv, "snli.csv");
        assert!(e.contains("holds 3 labels (“entailment”, “neutral”, “contradiction”)"), "{e}");
        assert!(
            e.contains("needs numbers (such as 0–5) or two labels")
                && e.contains("“a label per text” task"),
            "{e}"
        );
    }

    /// STS-B's test file as it ships: tab-separated, no header, and 284 of its rows with two
    /// attribution fields past the gold score and the sentences. Every row is read, and the
    /// report says which had more.
    #[test]
    fn sts_b_test_rows_with_attributions_are_all_read() {
        let tsv = "main-captions\tMSRvid\t2012test\t0024\t2.500\tA girl is styling her hair.\tA girl is brushing her hair.\n\
                   main-forums\tanswer-answer\t2016\t0008\t3\tI stayed under the tree.\tI remained under the tree.\tStackExchange: a\tStackExchange: b\n\
                   main-captions\tMSRvid\t2012test\t0033\t3.600\tMen play soccer.\tBoys play soccer.\n";
        let t = parse_table(tsv.as_bytes(), Some("sts-test.csv")).unwrap();
        let d = to_pairs(&t, &cols(5, 6, 4)).unwrap();
        assert_eq!(d.pairs.iter().map(|p| (p.line, p.raw.as_str())).collect::<Vec<_>>(), [(1, "2.500"), (2, "3"), (3, "3.600")]);
        assert_eq!(d.pairs[1].text_pair, "I remained under the tree.");
        assert!(d.skipped.is_empty());
        assert!(d.warnings.iter().any(|w| w.starts_with("1 row(s) have fields past the last column (the first on line 2)")), "{:?}", d.warnings);
    }

    #[test]
    fn a_few_cells_that_are_not_numbers_are_skipped_with_their_lines() {
        let d = scores(&["4.5", "n/a", "3", "2.1", "-", "0.5"]).unwrap();
        assert_eq!(d.pairs.len(), 4);
        let got: Vec<(usize, SkipReason)> =
            d.skipped.iter().map(|s| (s.line, s.reason.clone())).collect();
        assert_eq!(
            got,
            [(3, SkipReason::NotANumber("n/a".into())), (6, SkipReason::NotANumber("-".into()))]
        );
        assert_eq!(d.skipped[0].preview, "first text 1,second text 1,n/a");
        assert!(d.warnings.iter().any(|w| w.starts_with(
            "2 row(s) were left out: 2 with a score that is not a number (first on line 3: the score “n/a” is not a number)"
        )), "{:?}", d.warnings);
        // Rows skipped by `to_examples` stay, in line order with the others.
        let t =
            parse_table(b"s1,s2,score\na,b,1\nc,,2\ne,f,x\ng,h,3\ni,j,4\n", Some("p.csv")).unwrap();
        let d = to_pairs(&t, &cols(0, 1, 2)).unwrap();
        assert_eq!(d.skipped.iter().map(|s| s.line).collect::<Vec<_>>(), [3, 4]);
        assert_eq!(d.skipped[0].reason, SkipReason::EmptyText);
        // More than half not numbers: the column is wrong.
        let e = scores(&["high", "3", "low", "medium"]).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "Line 2: the score “high” is not a number, and 3 of the 4 scores in column “score”"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_constant_score_column_is_an_error() {
        let e = scores(&["3", "3.0", "3"]).unwrap_err().to_string();
        assert!(e.starts_with("Every pair has the score “3” in column “score”"), "{e}");
        let e = scores(&["yes", "YES"]).unwrap_err().to_string();
        assert!(e.starts_with("Every pair has the score “yes”"), "{e}");
    }

    #[test]
    fn missing_columns_are_explained() {
        let t = parse_table(b"s1,s2,score\na,b,1\nc,d,0\n", Some("p.csv")).unwrap();
        let e = to_pairs(&t, &ColumnMap { text: 0, text_pair: None, label: Some(2) }).unwrap_err();
        assert!(e.to_string().contains("choose the column that holds the second text"), "{e}");
        let e = to_pairs(&t, &ColumnMap { text: 0, text_pair: Some(1), label: None }).unwrap_err();
        assert!(e.to_string().starts_with("No score column is chosen."), "{e}");
        let e = to_pairs(&t, &cols(0, 1, 7)).unwrap_err();
        assert_eq!(e, DataError::ColumnOutOfRange { role: "label", index: 7, columns: 3 });
    }

    #[test]
    fn repeated_pairs_are_warned_about_in_either_order() {
        let csv = "s1,s2,score\nA cat.,A dog.,1\nA dog.,A cat.,3\nRain.,Sun.,0\nA cat.,A dog.,1\n";
        let (_, d) = read(csv, "p.csv");
        let w = d.warnings.iter().find(|w| w.contains("repeat")).expect("a warning");
        assert!(
            w.starts_with("2 pair(s) repeat an earlier pair")
                && w.contains("line 3 repeats line 2"),
            "{w}"
        );
        assert!(w.contains("1 of them have a different score"), "{w}");
    }

    fn spread(n: usize) -> PairData {
        let cells: Vec<String> =
            (0..n).map(|i| format!("{}", (i % 50) as f32 / 10.0 + 0.05)).collect();
        scores(&cells.iter().map(String::as_str).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn split_is_deterministic_stratified_and_complete() {
        let d = spread(100); // 0.05..4.95 on 0–5: 20 pairs in each of the 5 bins
        assert_eq!(d.histogram(5), [20; 5]);
        let a = d.split(0.2, 7).unwrap();
        assert_eq!(a, d.split(0.2, 7).unwrap());
        assert_ne!(a, d.split(0.2, 8).unwrap());
        assert_eq!(d.histogram(5).iter().sum::<usize>(), 100);
        for b in 0..5 {
            let in_valid = a.valid.iter().filter(|&&i| bin(d.pairs[i].score, 5) == b).count();
            assert_eq!(in_valid, 4, "bin {b}");
        }
        let mut all: Vec<usize> = a.train.iter().chain(&a.valid).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..100).collect::<Vec<_>>());

        let d = scores(&["0", "1", "0", "1", "0", "1", "0", "1", "1", "1"]).unwrap();
        let s = d.split(0.5, 1).unwrap();
        assert_eq!(s.valid.iter().filter(|&&i| d.pairs[i].score == 0.0).count(), 2);
        assert_eq!(s.valid.len(), 5);
    }

    #[test]
    fn split_merges_bins_with_a_single_pair() {
        // Bins 0 and 4 hold one pair each, bin 1 three.
        let d = scores(&["0.05", "0.3", "0.3", "0.3", "0.95"]).unwrap();
        let s = d.split(0.4, 3).unwrap();
        assert_eq!(s.train.len() + s.valid.len(), 5);
        let mut all: Vec<usize> = s.train.iter().chain(&s.valid).copied().collect();
        all.sort_unstable();
        assert_eq!(all, [0, 1, 2, 3, 4]);
        // A binary file with one pair of a kind, and a file of two pairs.
        let d = scores(&["0", "0", "0", "1"]).unwrap();
        assert!(d.split(0.25, 0).is_ok());
        let d = scores(&["0.1", "0.9"]).unwrap();
        let s = d.split(0.5, 0).unwrap();
        assert_eq!((s.train.len(), s.valid.len()), (1, 1));
        let mut one = d.clone();
        one.pairs.truncate(1);
        assert!(
            one.split(0.2, 0).unwrap_err().to_string().starts_with("Only 1 pair(s) can be used")
        );
        assert!(matches!(d.split(1.0, 0), Err(DataError::BadFraction(_))));
    }

    #[test]
    fn histogram_and_mean() {
        let d = scores(&["0", "0.2", "1", "0.5"]).unwrap();
        assert_eq!(d.histogram(5), [1, 1, 1, 0, 1]);
        assert_eq!(d.histogram(1), [4]);
        assert!(d.histogram(0).is_empty());
        assert!((d.mean_score() - 0.425).abs() < 1e-6);
    }

    #[test]
    fn a_validation_file_is_read_on_the_training_files_scale() {
        let train = scores(&["0", "2.5", "5", "1", "4"]).unwrap();
        let valid = scores(&["0.4", "4.6", "2.5"]).unwrap();
        assert_eq!((valid.scale.low, valid.scale.high), (0.0, 5.0), "floor and ceiling");
        let narrow = scores(&["1.2", "3.8"]).unwrap();
        assert_eq!((narrow.scale.low, narrow.scale.high), (1.0, 4.0));
        let read = narrow.on_scale_of(&train).unwrap();
        assert_eq!(read.scale, train.scale);
        let got: Vec<f32> = read.pairs.iter().map(|p| p.score).collect();
        assert!((got[0] - 1.2 / 5.0).abs() < 1e-6 && (got[1] - 3.8 / 5.0).abs() < 1e-6, "{got:?}");
        assert!(valid.on_scale_of(&train).is_ok());
        let words = {
            let csv = "sentence1,sentence2,label\na,b,yes\nc,d,no\ne,f,yes\n";
            let t = parse_table(csv.as_bytes(), Some("p.csv")).unwrap();
            to_pairs(&t, &ColumnMap { text: 0, text_pair: Some(1), label: Some(2) }).unwrap()
        };
        let err = words.on_scale_of(&train).unwrap_err().to_string();
        assert!(err.contains("same kind of score"), "{err}");
    }
}
