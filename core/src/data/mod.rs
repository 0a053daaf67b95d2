//! Labeled text in: CSV, TSV and JSON Lines files → a [`Table`] → [`Example`]s with labels →
//! a [`ValidationReport`] and a stratified train/validation [`Split`]; tagged sentences
//! ([`parse_tagged`]), questions over passages ([`parse_qa`]) and scored sentence pairs
//! ([`to_pairs`], for sentence similarity) for the other tasks.
//!
//! Everything works on bytes (no paths, no clock, no threads), so it runs the same in the browser
//! and natively. Problems with a whole file are [`DataError`]s; problems with one row never stop
//! the import: the row is kept in the [`Table`] and reported as [`Skipped`] by [`to_examples`].
//! Every message is written for the person who made the file: what is wrong, where, what to do.

mod annotations;
mod class_names;
mod columns;
mod decode;
mod examples;
mod features;
mod label_sets;
mod pairs;
#[cfg(feature = "parquet")]
mod parquet;
mod report;
mod split;
mod squad;
mod table;
mod tagged;
mod text;

use thiserror::Error;

pub use class_names::{ClassNames, Named};
pub use columns::{ColumnMap, guess_columns};
pub use decode::{Decoded, decode, decode_named};
pub use examples::{Dataset, Example, SkipReason, Skipped, to_examples};
pub use label_sets::{LabelColumns, LabelSet, LabelSetData, LabelSetMap, SEPARATORS, Separator, guess_label_sets, separators_in, to_label_sets};
pub use pairs::{PairData, ScoreScale, ScoredPair, guess_pair_columns, to_pairs};
pub use report::{LengthStats, ValidationReport, validate};
pub use split::{Split, held_out, shuffled, stratified_split};
pub use squad::{QaAnswer, QaData, QaFormat, QaItem, parse_qa, parse_questions};
pub use tagged::{TaggedData, TaggedFormat, TaggedSentence, parse_tagged, split_words};
pub use table::{Format, Record, Table, detect_format, looks_like_header, parse_table};

/// The largest file [`parse_table`] accepts, in bytes (200 MB).
pub const MAX_FILE_BYTES: usize = 200_000_000;

/// How many characters of a row [`Skipped::preview`] keeps.
const PREVIEW_CHARS: usize = 80;

/// Rows looked at when guessing a header or the role of a column.
const SAMPLE_ROWS: usize = 2000;

/// Why a file (or a requested split) cannot be used. `to_string()` is meant to be shown as is.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum DataError {
    /// Nothing but whitespace in the file.
    #[error(
        "The file is empty (or has only blank lines). Choose a file with one example per line."
    )]
    Empty,

    /// Over [`MAX_FILE_BYTES`].
    #[error(
        "The file is {} MB; the limit is {} MB. Use a smaller sample of your data.",
        .bytes / 1_000_000, MAX_FILE_BYTES / 1_000_000
    )]
    TooLarge {
        /// Size of the file in bytes.
        bytes: usize,
    },

    /// A line of a tagged file (CoNLL or JSON) that cannot be read.
    #[error("Line {line}: {message}.")]
    Tagged {
        /// 1-based line.
        line: usize,
        /// What is wrong there.
        message: String,
    },

    /// A question of a question-answering file that cannot be used.
    #[error("{place}: {message}.")]
    Qa {
        /// Where: "Line 12 (question 5733be28)", "The header".
        place: String,
        /// What is wrong there.
        message: String,
    },

    /// A zip archive (an `.xlsx` workbook is one), an old Office file or a PDF.
    #[error(
        "This is {kind}, not a text file. Save the data as text first (in Excel: File → Save As → \
         “CSV UTF-8”), or unzip an archive and load the file inside."
    )]
    NotText {
        /// What it is, e.g. `"an Excel workbook (.xlsx)"`.
        kind: &'static str,
    },

    /// A Parquet file that cannot be read (cut short, or compressed in a way not read here).
    #[error("This Parquet file could not be read: {0}.")]
    Parquet(String),

    /// A file of class names (`dataset_info.json`, a dataset's README) that gives none, or a
    /// data file that could not be written again with them.
    #[error("No class names were read: {0}.")]
    ClassNames(String),

    /// A file named `.parquet` that is something else.
    #[error("The file is named .parquet but is {kind}.")]
    NotParquet {
        /// What it is, e.g. `"a Git LFS pointer"`.
        kind: String,
    },

    /// A file that starts like gzip but does not decompress.
    #[error("The file looks gzip-compressed (.gz) but could not be decompressed: {message}. Is it complete?")]
    Gzip {
        /// What the decompressor said.
        message: String,
    },

    /// A NUL byte: a spreadsheet, archive or other binary file rather than text.
    #[error(
        "This does not look like a text file: line {line} contains a NUL byte. Export the data as \
         CSV (UTF-8) and load that."
    )]
    Binary {
        /// 1-based line of the first NUL byte.
        line: usize,
    },

    /// The CSV reader gave up (should not happen on text input; kept for completeness).
    #[error("Line {line} could not be read as CSV: {message}.")]
    Csv {
        /// 1-based line where the reader stopped.
        line: usize,
        /// What the reader said.
        message: String,
    },

    /// The first JSON Lines record, or the JSON document, is not what we need.
    #[error(
        "Line {line} is not a JSON object ({message}). In a JSON Lines file every line must be one \
         object, such as {{\"text\": \"I liked it\", \"label\": \"positive\"}}; a .json file must \
         hold a list of such objects."
    )]
    Json {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },

    /// A [`ColumnMap`] points past the last column.
    #[error(
        "The {role} column is column {}, but the file has only {columns} column(s). Choose one of \
         the columns in the file.",
        .index + 1
    )]
    ColumnOutOfRange {
        /// `"text"`, `"second text"` or `"label"`.
        role: &'static str,
        /// The 0-based index asked for.
        index: usize,
        /// How many columns the table has.
        columns: usize,
    },

    /// Two roles of a [`ColumnMap`] share a column.
    #[error(
        "The {first} and the {second} are both column “{column}”. Choose a different column for \
         the {second}."
    )]
    SameColumn {
        /// The first role.
        first: &'static str,
        /// The role to change.
        second: &'static str,
        /// The column's name.
        column: String,
    },

    /// Every row was skipped.
    #[error(
        "None of the {rows} row(s) can be used: {summary}. Check that the right columns are chosen \
         for the text and the label."
    )]
    NoUsableRows {
        /// How many rows there were.
        rows: usize,
        /// The reasons, counted.
        summary: String,
    },

    /// A class too small for a stratified split.
    #[error(
        "The label “{label}” has only {count} example; every label needs at least 2 (one for \
         training, one for validation). Add examples of it or remove it."
    )]
    TooFewToSplit {
        /// The label's name (or `#index` when only the index is known).
        label: String,
        /// Its number of examples.
        count: usize,
    },

    /// `valid_fraction` outside `(0, 1)`.
    #[error("The validation share must be between 0 and 1 (exclusive), not {0}.")]
    BadFraction(f32),

    /// Sentence pairs whose columns or scores cannot be used for similarity (see [`to_pairs`]):
    /// the whole message, in sentences.
    #[error("{0}")]
    Pairs(String),

    /// Multi-label data that cannot be used (see [`to_label_sets`]): the whole message.
    #[error("{0}")]
    LabelSets(String),

    /// A label id at least `num_labels`.
    #[error("Example {index} has label id {label}, but there are only {num_labels} labels.")]
    LabelOutOfRange {
        /// Position of the example.
        index: usize,
        /// Its label id.
        label: usize,
        /// The number of labels given.
        num_labels: usize,
    },
}

/// Helpers shared by the unit tests of every file of this module.
#[cfg(test)]
mod test_util {
    use super::*;

    pub(super) fn table(text: &str, name: Option<&str>) -> Table {
        parse_table(text.as_bytes(), name).expect("parses")
    }

    pub(super) fn fields(t: &Table) -> Vec<Vec<&str>> {
        t.rows.iter().map(|r| r.fields.iter().map(String::as_str).collect()).collect()
    }

    pub(super) fn dataset(text: &str, name: Option<&str>) -> Dataset {
        let t = table(text, name);
        to_examples(&t, &guess_columns(&t)).expect("usable")
    }

    pub(super) fn example(line: usize, text: &str, label: &str) -> Example {
        Example { line, text: text.into(), text_pair: None, label: label.into() }
    }

    pub(super) fn labeled(examples: Vec<Example>) -> Dataset {
        let labels = examples::sorted_labels(&examples);
        Dataset { examples, labels, skipped: Vec::new(), multiline: Vec::new(), extra_fields: Vec::new() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_sentiment_example() {
        let bytes = include_bytes!("../../../public/examples/sentiment.csv");
        let t = parse_table(bytes, Some("sentiment.csv")).unwrap();
        assert!(t.has_header);
        let map = guess_columns(&t);
        assert_eq!(map, ColumnMap { text: 0, text_pair: None, label: Some(1) });
        let d = to_examples(&t, &map).unwrap();
        assert!(d.skipped.is_empty(), "{:?}", d.skipped);
        assert!(d.examples.len() >= 200, "{}", d.examples.len());
        assert_eq!(d.labels, ["negative", "positive"]);
        let counts = d.class_counts();
        let (lo, hi) = (counts[0].min(counts[1]) as f32, counts[0].max(counts[1]) as f32);
        assert!(hi / lo <= 1.1, "{counts:?}");
        assert!(d.examples.iter().any(|e| e.text.contains(',')), "quoting is exercised");
        let words: Vec<usize> =
            d.examples.iter().map(|e| e.text.split_whitespace().count()).collect();
        assert!(words.iter().all(|n| (5..=20).contains(n)), "{words:?}");
        let r = validate(&d, &vec![16; d.examples.len()], 128, 10);
        assert!(r.errors.is_empty() && r.warnings.is_empty(), "{r:?}");
    }
}
