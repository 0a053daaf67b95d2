//! Examples: a [`Table`] and a [`ColumnMap`] → a [`Dataset`] of [`Example`]s, with the
//! rows left out listed as [`Skipped`] and why.

use std::collections::HashMap;
use std::fmt;


use super::DataError;
use super::columns::ColumnMap;
use super::split::{Split, split_classes};
use super::table::{Format, Record, Table};
use super::text::preview;

/// One labeled (or, for prediction, unlabeled) text.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    /// 1-based line in the file where its row starts.
    pub line: usize,
    /// The text, trimmed.
    pub text: String,
    /// The second text of a pair, trimmed.
    pub text_pair: Option<String>,
    /// The label, trimmed; `""` when unlabeled.
    pub label: String,
}

/// Why a row did not become an [`Example`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// The text (or the second text) is empty.
    EmptyText,
    /// The label cell is empty.
    MissingLabel,
    /// The row has a different number of fields than the table has columns.
    WrongFieldCount {
        /// Fields in the row.
        found: usize,
        /// Columns in the table.
        expected: usize,
    },
    /// The row could not be read at all (see [`Record::error`]).
    ///
    /// [`Record::error`]: super::Record::error
    Invalid(String),
    /// The score of a sentence pair (see [`to_pairs`]) is not a number: the cell as written.
    ///
    /// [`to_pairs`]: super::to_pairs
    NotANumber(String),
}

impl SkipReason {
    /// A short name for the kind of reason, for counting (`"empty text"`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::EmptyText => "empty text",
            Self::MissingLabel => "missing label",
            Self::WrongFieldCount { .. } => "wrong number of fields",
            Self::Invalid(_) => "unreadable row",
            Self::NotANumber(_) => "score that is not a number",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Self::EmptyText => f.write_str("the text is empty"),
            Self::MissingLabel => f.write_str("the label is empty"),
            Self::WrongFieldCount { found, expected } if found > expected => write!(
                f,
                "row has {found} fields, header has {expected} (a text that contains the separator, \
                 such as a comma, must be put in double quotes)"
            ),
            Self::WrongFieldCount { found, expected } => {
                write!(f, "row has {found} fields, header has {expected}")
            }
            Self::Invalid(why) => f.write_str(why),
            Self::NotANumber(cell) => write!(f, "the score “{cell}” is not a number"),
        }
    }
}

/// A row left out of the [`Dataset`], and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// 1-based line where the row starts.
    pub line: usize,
    /// Why it was left out.
    pub reason: SkipReason,
    /// The first 80 characters of the row (fields joined by the separator, line breaks as spaces).
    pub preview: String,
}

/// Examples ready for training or prediction, and the rows that were left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// The usable rows, in file order.
    pub examples: Vec<Example>,
    /// The distinct labels, sorted numerically when all are integers, else lexicographically.
    /// Empty for unlabeled data. A label's position here is its class id.
    pub labels: Vec<String>,
    /// The rows left out, in file order.
    pub skipped: Vec<Skipped>,
    /// The lines where the rows start whose fields hold a line break (a quoted field over several
    /// lines of the file): each is one example, which the report says.
    pub multiline: Vec<usize>,
    /// The lines of a tab-separated file's rows with fields past its last column (STS-B's test
    /// file appends two attributions to some rows): each is read by its columns' positions, and
    /// the fields past them are not read, which the report says.
    pub extra_fields: Vec<usize>,
}

impl Dataset {
    /// The class id (index into `labels`) of every example. Only meaningful for labeled data: an
    /// example whose label is not in `labels` gets 0.
    pub fn label_ids(&self) -> Vec<usize> {
        let ids: HashMap<&str, usize> =
            self.labels.iter().enumerate().map(|(i, l)| (l.as_str(), i)).collect();
        self.examples.iter().map(|e| ids.get(e.label.as_str()).copied().unwrap_or(0)).collect()
    }

    /// The class id of `label`.
    pub fn label_index(&self, label: &str) -> Option<usize> {
        self.labels.iter().position(|l| l == label)
    }

    /// Examples per class, in `labels` order.
    pub fn class_counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.labels.len()];
        for id in self.label_ids() {
            if let Some(c) = counts.get_mut(id) {
                *c += 1;
            }
        }
        counts
    }

    /// [`stratified_split`] of these examples; errors name the label.
    ///
    /// [`stratified_split`]: super::stratified_split
    pub fn split(&self, valid_fraction: f32, seed: u64) -> Result<Split, DataError> {
        split_classes(
            &self.label_ids(),
            self.labels.len(),
            valid_fraction,
            seed,
            Some(&self.labels),
        )
    }
}

/// Turns a [`Table`] into a [`Dataset`] using `map`. Texts and labels are trimmed. A row is
/// skipped (and listed in [`Dataset::skipped`]) when it could not be read, when its field count
/// differs from the number of columns (extra fields that are all empty are tolerated:
/// spreadsheets write them; so are a tab-separated file's fields past its last column, listed in
/// [`Dataset::extra_fields`]: a tab is not written inside a text, so the columns before them
/// stand where they are, whereas a comma past a CSV's last column may be one inside a text
/// that shifted the row), when its text is empty, or, for labeled data, when its label is empty.
///
/// Errors when `map` names a column the table lacks, uses one column for two roles, or when no
/// row is usable.
pub fn to_examples(table: &Table, map: &ColumnMap) -> Result<Dataset, DataError> {
    let width = table.columns.len();
    let check = |role: &'static str, index: usize| {
        if index < width {
            Ok(())
        } else {
            Err(DataError::ColumnOutOfRange { role, index, columns: width })
        }
    };
    check("text", map.text)?;
    let roles = [("text", Some(map.text)), ("second text", map.text_pair), ("label", map.label)];
    for (role, index) in &roles[1..] {
        if let Some(index) = *index {
            check(role, index)?;
        }
    }
    for (a, (first, x)) in roles.iter().enumerate() {
        for (second, y) in &roles[a + 1..] {
            if let (Some(j), true) = (x, x == y) {
                let column = table.columns[*j].clone();
                return Err(DataError::SameColumn { first, second, column });
            }
        }
    }

    let mut examples = Vec::with_capacity(table.rows.len());
    let mut skipped = Vec::new();
    let mut multiline = Vec::new();
    let mut extra_fields = Vec::new();
    let tabs = table.format == Format::Tsv;
    for row in &table.rows {
        if row.error.is_none() && row.fields.iter().any(|f| f.contains(['\n', '\r'])) {
            multiline.push(row.line);
        }
        let reason = if let Some(why) = &row.error {
            Some(SkipReason::Invalid(why.clone()))
        } else if row.fields.len() < width || (!tabs && row.fields[width..].iter().any(|f| !f.trim().is_empty())) {
            Some(SkipReason::WrongFieldCount { found: row.fields.len(), expected: width })
        } else {
            if row.fields[width..].iter().any(|f| !f.trim().is_empty()) {
                extra_fields.push(row.line);
            }
            let text = row.fields[map.text].trim();
            let pair = map.text_pair.map(|j| row.fields[j].trim());
            let cell = map.label.map_or("", |j| row.fields[j].trim());
            // A JSON list of one label (doccano's, Label Studio's) is that label.
            let listed = if table.format == Format::Jsonl { super::annotations::one_label(cell) } else { None };
            let label = match &listed {
                Some(Ok(one)) => one.trim(),
                _ => cell,
            };
            if text.is_empty() || pair.is_some_and(str::is_empty) {
                Some(SkipReason::EmptyText)
            } else if map.label.is_some() && label.is_empty() {
                Some(SkipReason::MissingLabel)
            } else if let Some(Err(why)) = listed {
                Some(SkipReason::Invalid(why))
            } else {
                examples.push(Example {
                    line: row.line,
                    text: text.to_string(),
                    text_pair: pair.map(String::from),
                    label: label.to_string(),
                });
                None
            }
        };
        if let Some(reason) = reason {
            skipped.push(Skipped {
                line: row.line,
                reason,
                preview: row_preview(table, row),
            });
        }
    }
    if examples.is_empty() {
        return Err(DataError::NoUsableRows {
            rows: table.rows.len(),
            summary: summarise(&skipped),
        });
    }
    let labels = if map.label.is_some() { sorted_labels(&examples) } else { Vec::new() };
    Ok(Dataset { examples, labels, skipped, multiline, extra_fields })
}

/// A row's [`Skipped::preview`]: its fields joined by the file's separator.
pub(super) fn row_preview(table: &Table, row: &Record) -> String {
    let separator = match table.format {
        Format::Tsv => "\t",
        Format::Csv | Format::Jsonl => ",",
    };
    preview(&row.fields, separator)
}

pub(super) fn sorted_labels(examples: &[Example]) -> Vec<String> {
    let mut labels: Vec<String> = {
        let mut seen = std::collections::HashSet::new();
        examples.iter().filter(|e| seen.insert(e.label.as_str())).map(|e| e.label.clone()).collect()
    };
    let numbers: Option<Vec<i128>> = labels.iter().map(|l| l.parse::<i128>().ok()).collect();
    match numbers {
        Some(numbers) => {
            let mut pairs: Vec<(i128, String)> = numbers.into_iter().zip(labels).collect();
            pairs.sort();
            pairs.into_iter().map(|(_, l)| l).collect()
        }
        None => {
            labels.sort();
            labels
        }
    }
}

/// "3 with an empty text (first on line 4: the text is empty); 2 with the wrong number of …".
pub(super) fn summarise(skipped: &[Skipped]) -> String {
    let mut parts = Vec::new();
    for (kind, count) in count_reasons(skipped) {
        let first = skipped.iter().find(|s| s.reason.kind() == kind);
        let detail =
            first.map_or(String::new(), |s| format!(" (first on line {}: {})", s.line, s.reason));
        parts.push(format!("{count} with {}{detail}", with_article(&kind)));
    }
    if parts.is_empty() { "the table has no rows".to_string() } else { parts.join("; ") }
}

fn with_article(kind: &str) -> String {
    match kind {
        "empty text" => "an empty text".into(),
        "missing label" => "no label".into(),
        "wrong number of fields" => "the wrong number of fields".into(),
        "score that is not a number" => "a score that is not a number".into(),
        other => format!("an {other}"),
    }
}

pub(super) fn count_reasons(skipped: &[Skipped]) -> Vec<(String, usize)> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for s in skipped {
        match counts.iter_mut().find(|(k, _)| k == s.reason.kind()) {
            Some((_, n)) => *n += 1,
            None => counts.push((s.reason.kind().to_string(), 1)),
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::guess_columns;
    use crate::data::test_util::{dataset, table};

    #[test]
    fn ragged_rows_are_skipped_with_their_lines() {
        let d = dataset(
            "text,label\nGood,positive\nGood, really good,positive\nBad\nFine,positive,,\nBad,negative\n",
            None,
        );
        assert_eq!(d.examples.len(), 3, "trailing empty fields are tolerated");
        let got: Vec<(usize, SkipReason)> =
            d.skipped.iter().map(|s| (s.line, s.reason.clone())).collect();
        assert_eq!(
            got,
            [
                (3, SkipReason::WrongFieldCount { found: 3, expected: 2 }),
                (4, SkipReason::WrongFieldCount { found: 1, expected: 2 })
            ]
        );
        assert!(d.skipped[0].reason.to_string().starts_with("row has 3 fields, header has 2"));
        assert_eq!(d.skipped[0].preview, "Good, really good,positive");
    }

    /// A tab-separated file's fields past its last column (STS-B's test file appends two
    /// attributions to some rows) leave its columns where they are: the row is read and listed;
    /// in a CSV such a field may be a comma inside a text, so the row is left out.
    #[test]
    fn fields_past_a_tsv_last_column_are_read_around_and_listed() {
        let d = dataset("text\tlabel\nGood\tpositive\nFine\tpositive\tsource: a forum\tby someone\nBad\tnegative\n", Some("d.tsv"));
        assert_eq!(d.examples.iter().map(|e| (e.line, e.text.as_str(), e.label.as_str())).collect::<Vec<_>>(), [(2, "Good", "positive"), (3, "Fine", "positive"), (4, "Bad", "negative")]);
        assert_eq!((d.extra_fields.as_slice(), d.skipped.len()), (&[3][..], 0));
        let d = dataset("text,label\nGood,positive\nFine,positive,source\nBad,negative\n", Some("d.csv"));
        assert_eq!((d.examples.len(), d.extra_fields.len()), (2, 0));
        assert_eq!(d.skipped[0].reason, SkipReason::WrongFieldCount { found: 3, expected: 2 });
    }

    #[test]
    fn column_map_errors() {
        let t = table("text,label\na,b\n", None);
        let e =
            to_examples(&t, &ColumnMap { text: 0, text_pair: None, label: Some(5) }).unwrap_err();
        assert_eq!(e, DataError::ColumnOutOfRange { role: "label", index: 5, columns: 2 });
        let e =
            to_examples(&t, &ColumnMap { text: 1, text_pair: None, label: Some(1) }).unwrap_err();
        assert_eq!(
            e.to_string(),
            "The text and the label are both column “label”. Choose a different column for the label."
        );
        let t = table("text,label\n,positive\n  ,negative\n", None);
        let e = to_examples(&t, &guess_columns(&t)).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "None of the 2 row(s) can be used: 2 with an empty text (first on line 2"
            ),
            "{e}"
        );
    }

    #[test]
    fn unlabeled_data_for_prediction() {
        let t = table("text\nfirst\n\nsecond\n", None);
        let d = to_examples(&t, &ColumnMap { text: 0, text_pair: None, label: None }).unwrap();
        assert_eq!(
            d.examples.iter().map(|e| e.text.as_str()).collect::<Vec<_>>(),
            ["first", "second"]
        );
        assert!(d.labels.is_empty() && d.examples.iter().all(|e| e.label.is_empty()));
    }

    #[test]
    fn labels_sort_numerically_or_lexically() {
        let d = dataset("text,label\na,10\nb,2\nc,-1\nd,2\n", None);
        assert_eq!(d.labels, ["-1", "2", "10"]);
        assert_eq!(d.label_ids(), [2, 1, 0, 1]);
        assert_eq!(d.class_counts(), [1, 2, 1]);
        assert_eq!(d.label_index("10"), Some(2));
        assert_eq!(d.label_index("3"), None);
        let d = dataset("text,label\na,b10\nb,B2\nc,10\n", None);
        assert_eq!(d.labels, ["10", "B2", "b10"]);
    }

    #[test]
    fn large_inputs_are_linear() {
        let mut csv = String::from("text,label\n");
        for i in 0..100_000 {
            csv.push_str(&format!("\"This is sentence number {i}, quoted\",{}\n", i % 3));
        }
        let d = dataset(&csv, None);
        assert_eq!(d.examples.len(), 100_000);
        assert_eq!(d.labels, ["0", "1", "2"]);

        let long = "word ".repeat(2_000_000); // 10 MB in one field
        let d = dataset(&format!("text,label\n\"{long}\",positive\nshort,negative\n"), None);
        assert_eq!(d.examples[0].text.len(), long.trim().len());
    }
}
