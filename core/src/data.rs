//! Labeled text in: CSV, TSV and JSON Lines files → a [`Table`] → [`Example`]s with labels →
//! a [`ValidationReport`] and a stratified train/validation [`Split`].
//!
//! Everything works on bytes (no paths, no clock, no threads), so it runs the same in the browser
//! and natively. Problems with a whole file are [`DataError`]s; problems with one row never stop
//! the import: the row is kept in the [`Table`] and reported as [`Skipped`] by [`to_examples`].
//! Every message is written for the person who made the file: what is wrong, where, what to do.

use std::collections::HashMap;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::rng::Rng;

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

    /// The file starts with a UTF-16 byte-order mark.
    #[error(
        "The file is saved as UTF-16 text. Save it again as UTF-8 (in Excel: “CSV UTF-8”; in a text \
         editor: encoding UTF-8) and load it again."
    )]
    Utf16,

    /// Bytes that are not UTF-8.
    #[error(
        "Line {line} is not valid UTF-8 text (it was probably saved in an older encoding such as \
         Windows-1252 or Latin-1). Save the file again as UTF-8 (in Excel: “CSV UTF-8”) and load it \
         again."
    )]
    NotUtf8 {
        /// 1-based line of the first bad byte.
        line: usize,
    },

    /// A NUL byte: a spreadsheet, archive or other binary file rather than text.
    #[error(
        "This does not look like a text file: line {line} contains a NUL byte. Is it an Excel \
         (.xlsx), zip or PDF file? Export it as CSV (UTF-8) first."
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

// ---------------------------------------------------------------------------------------------
// Formats and tables
// ---------------------------------------------------------------------------------------------

/// A file format for labeled text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Format {
    /// Comma-separated values (semicolon-separated is recognised too, as Excel writes it in many
    /// locales), RFC 4180 quoting.
    Csv,
    /// Tab-separated values, same quoting as CSV.
    Tsv,
    /// JSON Lines: one object per line. A `.json` file holding one array of objects also reads as
    /// this format.
    Jsonl,
}

/// Guesses the format: by the file name's extension first (`.csv`; `.tsv`/`.tab`;
/// `.jsonl`/`.ndjson`/`.json`), else from the content: a first non-blank line starting with `{`
/// (or `[` then `{`) is JSON; otherwise TSV when at least as many of the first 20 lines contain a
/// tab as contain a comma (tabs are rare inside sentences, commas are not), else CSV.
pub fn detect_format(bytes: &[u8], file_name: Option<&str>) -> Format {
    if let Some(ext) =
        file_name.and_then(|n| n.rsplit_once('.')).map(|(_, e)| e.to_ascii_lowercase())
    {
        match ext.as_str() {
            "csv" => return Format::Csv,
            "tsv" | "tab" => return Format::Tsv,
            "jsonl" | "ndjson" | "json" => return Format::Jsonl,
            _ => {}
        }
    }
    let bytes = strip_bom(bytes);
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(bytes.len());
    match bytes.get(start) {
        Some(b'{') => return Format::Jsonl,
        Some(b'[') if matches!(first_non_space(&bytes[start + 1..]), Some(b'{') | Some(b']')) => {
            return Format::Jsonl;
        }
        _ => {}
    }
    let (tabs, commas, _, _) = count_separators(bytes);
    if tabs > 0 && tabs >= commas { Format::Tsv } else { Format::Csv }
}

/// A parsed file: named columns and the rows under them, fields as text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// The format it was read as.
    pub format: Format,
    /// Whether the first row held column names (always true for JSON).
    pub has_header: bool,
    /// Column names: from the header, the JSON keys (in first-seen order), or `column 1`, ….
    pub columns: Vec<String>,
    /// The data rows (header excluded; blank lines dropped, rows of empty fields kept).
    pub rows: Vec<Record>,
}

/// One row of a [`Table`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// 1-based line of the file where the row starts (for a top-level JSON array: the item's
    /// 1-based position in the array).
    pub line: usize,
    /// The fields as written (untrimmed). For CSV/TSV there may be more or fewer than
    /// `columns.len()`; for JSON there are exactly `columns.len()`, a missing key being `""`.
    /// For an invalid row, the raw line.
    pub fields: Vec<String>,
    /// Why the row could not be read, for a row that is kept only to be reported as skipped (a
    /// JSON line that is not an object; a quoted CSV field that never closes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Reads CSV, TSV or JSON Lines (see [`detect_format`]) into a [`Table`].
///
/// Refuses files over [`MAX_FILE_BYTES`], empty files, binary files (a NUL byte), UTF-16 and
/// non-UTF-8 text; a leading UTF-8 byte-order mark is dropped. CSV/TSV rows of the wrong length
/// are kept as they are ([`to_examples`] reports them), blank lines are dropped, and whether the
/// first row is a header is guessed (see [`looks_like_header`]). For JSON Lines, an invalid first
/// line is an error; a later invalid line is kept as a [`Record`] with its `error` set.
pub fn parse_table(bytes: &[u8], file_name: Option<&str>) -> Result<Table, DataError> {
    if bytes.len() > MAX_FILE_BYTES {
        return Err(DataError::TooLarge { bytes: bytes.len() });
    }
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(DataError::Utf16);
    }
    let bytes = strip_bom(bytes);
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(DataError::Binary { line: line_of(bytes, at) });
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|e| DataError::NotUtf8 { line: line_of(bytes, e.valid_up_to()) })?;
    if text.trim().is_empty() {
        return Err(DataError::Empty);
    }
    match detect_format(bytes, file_name) {
        Format::Jsonl => parse_json(text),
        Format::Tsv => parse_delimited(text, Format::Tsv, b'\t'),
        Format::Csv => {
            let (tabs, commas, semicolons, lines) = count_separators(bytes);
            // Excel writes `;` where the decimal separator is a comma; a tab-separated `.csv`
            // also happens. Switch only when every sampled line agrees.
            let delimiter = if semicolons == lines && commas < lines {
                b';'
            } else if tabs == lines && commas < lines {
                b'\t'
            } else {
                b','
            };
            parse_delimited(text, Format::Csv, delimiter)
        }
    }
}

fn parse_delimited(text: &str, format: Format, delimiter: u8) -> Result<Table, DataError> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    // The reader's own record positions miscount lines after blank lines and with CRLF, so the
    // start of each record is found here: the first byte after the previous record's end that is
    // not a line break.
    let bytes = text.as_bytes();
    let mut lines = LineCounter::default();
    let mut raw: Vec<Record> = Vec::new();
    let (mut end, mut last_start) = (0usize, 0usize);
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {
                let start = end
                    + bytes[end.min(bytes.len())..]
                        .iter()
                        .take_while(|&&b| b == b'\n' || b == b'\r')
                        .count();
                end = reader.position().byte() as usize;
                // A row of empty fields (",,") is kept: `to_examples` counts and lists it.
                // Truly blank lines never reach here (the reader skips them).
                last_start = start;
                let line = lines.line_at(bytes, start);
                raw.push(Record {
                    line,
                    fields: record.iter().map(String::from).collect(),
                    error: None,
                });
            }
            Err(e) => {
                let at = e.position().map_or(end, |p| p.byte() as usize);
                return Err(DataError::Csv {
                    line: lines.line_at(bytes, at),
                    message: e.to_string(),
                });
            }
        }
    }
    // Nothing but separators is an empty file, not a table of empty rows.
    if raw.iter().all(|r| r.fields.iter().all(|f| f.trim().is_empty())) {
        return Err(DataError::Empty);
    }
    // A quote that never closes swallows the rest of the file into one field: say so.
    if let Some(last) = raw.last_mut() {
        let tail = text.get(last_start..).unwrap_or("");
        if last.fields.iter().any(|f| f.contains('\n')) && tail.matches('"').count() % 2 == 1 {
            last.error = Some(format!(
                "a quoted text starting on line {} never ends, so everything after it was read as \
                 one field; add the missing closing quote (\")",
                last.line
            ));
        }
    }

    let has_header = looks_like_header(&raw);
    let columns: Vec<String> = if has_header {
        let header = raw.remove(0);
        header
            .fields
            .iter()
            .enumerate()
            .map(|(j, name)| match name.trim() {
                "" => format!("column {}", j + 1),
                name => name.to_string(),
            })
            .collect()
    } else {
        (1..=most_common_width(&raw)).map(|j| format!("column {j}")).collect()
    };
    Ok(Table { format, has_header, columns, rows: raw })
}

/// Column names people use for text and labels (compared after [`normalise_name`]).
#[rustfmt::skip]
const KNOWN_NAMES: &[&str] = &[
    "text", "texts", "sentence", "sentence1", "sentence2", "text_a", "text_b", "review", "content",
    "question", "answer", "premise", "hypothesis", "comment", "tweet", "body", "document",
    "message", "utterance", "title", "label", "labels", "label_text", "sentiment", "class",
    "category", "target", "y", "polarity", "emotion", "intent", "topic", "tag", "gold_label", "id",
    "idx", "index", "source",
];

/// Whether the first row of a CSV/TSV file names the columns. Never when one of its cells is a
/// number. Otherwise yes when any of these holds:
///
/// 1. a cell is a usual column name (`text`, `sentence`, `label`, `sentiment`, …);
/// 2. a column is numeric below (≥ 80% of the sampled cells) but not in the first row;
/// 3. a column has few distinct values below (a label column: at least 4 rows, at most 50 values,
///    fewer than half the rows) and the first row's cell is none of them;
/// 4. every first-row cell is a short word (no spaces, ≤ 32 characters, all different) and some
///    column below averages at least three times that cell's length and several words.
///
/// Only the first [`SAMPLE_ROWS`] rows are looked at.
pub fn looks_like_header(rows: &[Record]) -> bool {
    let Some((first, rest)) = rows.split_first() else { return false };
    let head: Vec<&str> = first.fields.iter().map(|f| f.trim()).collect();
    if first.error.is_some() || head.iter().any(|c| is_number(c)) {
        return false;
    }
    if head.iter().any(|c| KNOWN_NAMES.contains(&normalise_name(c).as_str())) {
        return true;
    }
    let rest = &rest[..rest.len().min(SAMPLE_ROWS)];
    let short_words = {
        let mut seen: Vec<&str> = Vec::new();
        head.iter().all(|c| {
            let ok = !c.is_empty() && c.chars().count() <= 32 && !c.contains(char::is_whitespace);
            let fresh = !seen.contains(c);
            seen.push(c);
            ok && fresh
        })
    };
    for (j, cell) in head.iter().enumerate() {
        let below: Vec<&str> = rest
            .iter()
            .filter_map(|r| r.fields.get(j).map(|f| f.trim()))
            .filter(|f| !f.is_empty())
            .collect();
        if below.is_empty() {
            continue;
        }
        let numeric = below.iter().filter(|c| is_number(c)).count();
        if numeric * 5 >= below.len() * 4 {
            return true; // rule 2 (the first cell is not a number, checked above)
        }
        let mut distinct: Vec<&str> = Vec::new();
        for c in &below {
            if !distinct.contains(c) {
                distinct.push(c);
                if distinct.len() > 50 {
                    break;
                }
            }
        }
        if below.len() >= 4
            && distinct.len() <= 50
            && distinct.len() * 2 < below.len()
            && !distinct.contains(cell)
        {
            return true; // rule 3
        }
        if short_words {
            let mean_chars =
                below.iter().map(|c| c.chars().count()).sum::<usize>() as f32 / below.len() as f32;
            let mean_words = below.iter().map(|c| c.split_whitespace().count()).sum::<usize>()
                as f32
                / below.len() as f32;
            if mean_words >= 3.0 && mean_chars >= 3.0 * cell.chars().count() as f32 {
                return true; // rule 4
            }
        }
    }
    false
}

fn parse_json(text: &str) -> Result<Table, DataError> {
    let trimmed = text.trim_start();
    let items: Vec<(usize, &str, Result<JsonItem, String>)> = if trimmed.starts_with('[') {
        // One JSON document holding a list of objects; `line` becomes the item's position.
        let list: Vec<JsonItem> = serde_json::from_str(text)
            .map_err(|e| DataError::Json { line: e.line(), message: json_message(&e) })?;
        list.into_iter().enumerate().map(|(i, item)| (i + 1, "", Ok(item))).collect()
    } else {
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                (i + 1, l, serde_json::from_str::<JsonItem>(l).map_err(|e| json_message(&e)))
            })
            .collect()
    };

    let mut columns: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut rows = Vec::with_capacity(items.len());
    for (n, (line, raw, item)) in items.into_iter().enumerate() {
        let problem = match item {
            Ok(JsonItem::Object(entries)) => {
                let mut fields = vec![String::new(); columns.len()];
                for (key, value) in entries {
                    let j = *index.entry(key.clone()).or_insert_with(|| {
                        columns.push(key);
                        columns.len() - 1
                    });
                    if j >= fields.len() {
                        fields.resize(j + 1, String::new());
                    }
                    fields[j] = json_to_text(value);
                }
                rows.push(Record { line, fields, error: None });
                continue;
            }
            Ok(JsonItem::Other(kind)) => format!("it is {kind}, not an object"),
            Err(message) => message,
        };
        if n == 0 {
            return Err(DataError::Json { line, message: problem });
        }
        let error = Some(format!("not a JSON object: {problem}"));
        rows.push(Record { line, fields: vec![raw.to_string()], error });
    }
    if rows.is_empty() {
        return Err(DataError::Empty);
    }
    for row in rows.iter_mut().filter(|r| r.error.is_none()) {
        row.fields.resize(columns.len(), String::new());
    }
    Ok(Table { format: Format::Jsonl, has_header: true, columns, rows })
}

/// A JSON value at the top of a line: an object keeps its keys in file order.
enum JsonItem {
    Object(Vec<(String, serde_json::Value)>),
    Other(&'static str),
}

impl<'de> Deserialize<'de> for JsonItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonItemVisitor)
    }
}

struct JsonItemVisitor;

impl<'de> Visitor<'de> for JsonItemVisitor {
    type Value = JsonItem;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonItem, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry::<String, serde_json::Value>()? {
            entries.push(entry);
        }
        Ok(JsonItem::Object(entries))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsonItem, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(JsonItem::Other("a list"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<JsonItem, E> {
        Ok(JsonItem::Other("a string"))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<JsonItem, E> {
        Ok(JsonItem::Other("true or false"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<JsonItem, E> {
        Ok(JsonItem::Other("a number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<JsonItem, E> {
        Ok(JsonItem::Other("a number"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<JsonItem, E> {
        Ok(JsonItem::Other("a number"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<JsonItem, E> {
        Ok(JsonItem::Other("null"))
    }
}

/// serde_json's message without its " at line L column C" tail (we name the line ourselves).
fn json_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    match full.find(" at line ") {
        Some(at) => format!("{}, at character {}", &full[..at], e.column()),
        None => full,
    }
}

fn json_to_text(value: serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s,
        serde_json::Value::Null => String::new(),
        serde_json::Value::Bool(b) => b.to_string(),
        serde_json::Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// Columns and examples
// ---------------------------------------------------------------------------------------------

/// Which columns hold the text, the optional second text (sentence pairs) and the label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnMap {
    /// Column of the text (0-based).
    pub text: usize,
    /// Column of the second text, for sentence-pair tasks.
    pub text_pair: Option<usize>,
    /// Column of the label; `None` for unlabeled text (batch prediction).
    pub label: Option<usize>,
}

#[rustfmt::skip]
const TEXT_NAMES: &[&str] = &[
    "text", "sentence", "sentence1", "text_a", "review", "content", "premise", "question",
    "comment", "tweet", "body", "document", "message", "utterance", "texts",
];
const PAIR_NAMES: &[&str] = &["sentence2", "text_b", "hypothesis"];
#[rustfmt::skip]
const LABEL_NAMES: &[&str] = &[
    "label", "labels", "sentiment", "class", "category", "target", "y", "polarity", "gold_label",
    "emotion", "intent", "topic", "label_text", "tag",
];

/// Guesses the [`ColumnMap`]. By name first (case, spaces and dashes ignored): text from
/// `text`, `sentence`, `sentence1`, `review`, `content`, `question`, …; label from `label`,
/// `labels`, `sentiment`, `class`, `category`, `target`, `y`, …; a second text from `sentence2`,
/// `text_b` or `hypothesis` when that column also holds text. Else by content: the label is the
/// column with the fewest distinct short values (at most 50, at most half the rows), the text
/// the column with the longest average length. A table of one column is unlabeled text.
pub fn guess_columns(table: &Table) -> ColumnMap {
    let names: Vec<String> = table.columns.iter().map(|c| normalise_name(c)).collect();
    let by_name = |wanted: &[&str], except: &[usize]| {
        wanted
            .iter()
            .find_map(|w| (0..names.len()).find(|j| names[*j] == *w && !except.contains(j)))
    };
    let stats = column_stats(table);

    let named_label = if table.has_header { by_name(LABEL_NAMES, &[]) } else { None };
    let named_text = if table.has_header {
        by_name(TEXT_NAMES, &named_label.into_iter().collect::<Vec<_>>())
    } else {
        None
    };
    let text = named_text.unwrap_or_else(|| {
        (0..stats.len())
            .filter(|j| Some(*j) != named_label)
            .max_by(|a, b| stats[*a].mean_chars.total_cmp(&stats[*b].mean_chars).then(b.cmp(a)))
            .unwrap_or(0)
    });
    let label = named_label.or_else(|| {
        (0..stats.len())
            .filter(|&j| j != text && stats[j].label_like())
            // Fewest distinct values, but a constant column only when nothing else fits.
            .min_by_key(|&j| (stats[j].distinct < 2, stats[j].distinct, j))
    });
    let text_pair = if table.has_header {
        by_name(PAIR_NAMES, &[Some(text), label].into_iter().flatten().collect::<Vec<_>>())
            .filter(|&j| stats.get(j).is_some_and(|s| s.text_like()))
    } else {
        None
    };
    ColumnMap { text, text_pair, label }
}

#[derive(Debug, Default)]
struct ColumnStats {
    cells: usize,
    mean_chars: f32,
    distinct: usize,
}

impl ColumnStats {
    fn label_like(&self) -> bool {
        self.cells > 0
            && self.distinct <= 50
            && (self.distinct * 2 <= self.cells || self.cells < 4)
            && self.mean_chars <= 30.0
    }
    fn text_like(&self) -> bool {
        self.mean_chars >= 8.0 || self.distinct * 2 > self.cells
    }
}

fn column_stats(table: &Table) -> Vec<ColumnStats> {
    let width = table.columns.len();
    let mut chars = vec![0usize; width];
    let mut cells = vec![0usize; width];
    let mut distinct: Vec<Vec<&str>> = vec![Vec::new(); width];
    for row in table.rows.iter().filter(|r| r.error.is_none()).take(SAMPLE_ROWS) {
        for (j, field) in row.fields.iter().take(width).enumerate() {
            let field = field.trim();
            if field.is_empty() {
                continue;
            }
            cells[j] += 1;
            chars[j] += field.chars().count().min(10_000);
            if distinct[j].len() <= 50 && !distinct[j].contains(&field) {
                distinct[j].push(field);
            }
        }
    }
    (0..width)
        .map(|j| ColumnStats {
            cells: cells[j],
            mean_chars: if cells[j] == 0 { 0.0 } else { chars[j] as f32 / cells[j] as f32 },
            distinct: distinct[j].len(),
        })
        .collect()
}

/// One labeled (or, for prediction, unlabeled) text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    Invalid(String),
}

impl SkipReason {
    /// A short name for the kind of reason, for counting (`"empty text"`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::EmptyText => "empty text",
            Self::MissingLabel => "missing label",
            Self::WrongFieldCount { .. } => "wrong number of fields",
            Self::Invalid(_) => "unreadable row",
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
        }
    }
}

/// A row left out of the [`Dataset`], and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    /// 1-based line where the row starts.
    pub line: usize,
    /// Why it was left out.
    pub reason: SkipReason,
    /// The first 80 characters of the row (fields joined by the separator, line breaks as spaces).
    pub preview: String,
}

/// Examples ready for training or prediction, and the rows that were left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dataset {
    /// The usable rows, in file order.
    pub examples: Vec<Example>,
    /// The distinct labels, sorted numerically when all are integers, else lexicographically.
    /// Empty for unlabeled data. A label's position here is its class id.
    pub labels: Vec<String>,
    /// The rows left out, in file order.
    pub skipped: Vec<Skipped>,
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
/// differs from the number of columns (extra fields that are all empty are tolerated: spreadsheets
/// write them), when its text is empty, or, for labeled data, when its label is empty.
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

    let separator = match table.format {
        Format::Tsv => "\t",
        Format::Csv | Format::Jsonl => ",",
    };
    let mut examples = Vec::with_capacity(table.rows.len());
    let mut skipped = Vec::new();
    for row in &table.rows {
        let reason = if let Some(why) = &row.error {
            Some(SkipReason::Invalid(why.clone()))
        } else if row.fields.len() < width
            || row.fields[width..].iter().any(|f| !f.trim().is_empty())
        {
            Some(SkipReason::WrongFieldCount { found: row.fields.len(), expected: width })
        } else {
            let text = row.fields[map.text].trim();
            let pair = map.text_pair.map(|j| row.fields[j].trim());
            let label = map.label.map_or("", |j| row.fields[j].trim());
            if text.is_empty() || pair.is_some_and(str::is_empty) {
                Some(SkipReason::EmptyText)
            } else if map.label.is_some() && label.is_empty() {
                Some(SkipReason::MissingLabel)
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
                preview: preview(&row.fields, separator),
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
    Ok(Dataset { examples, labels, skipped })
}

fn sorted_labels(examples: &[Example]) -> Vec<String> {
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
fn summarise(skipped: &[Skipped]) -> String {
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
        other => format!("an {other}"),
    }
}

fn count_reasons(skipped: &[Skipped]) -> Vec<(String, usize)> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for s in skipped {
        match counts.iter_mut().find(|(k, _)| k == s.reason.kind()) {
            Some((_, n)) => *n += 1,
            None => counts.push((s.reason.kind().to_string(), 1)),
        }
    }
    counts
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

/// Summary of token lengths.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LengthStats {
    /// The longest.
    pub max: usize,
    /// The mean.
    pub mean: f32,
    /// The 95th percentile (nearest rank).
    pub p95: usize,
}

/// What the page shows before training: counts, problems that block training (`errors`) and
/// problems worth knowing about (`warnings`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationReport {
    /// Rows in the table: usable plus skipped.
    pub total_rows: usize,
    /// Rows that became examples.
    pub usable: usize,
    /// Skipped rows counted by kind ([`SkipReason::kind`]), in order of first appearance.
    pub skipped_by_reason: Vec<(String, usize)>,
    /// `(line of the duplicate, line of its first occurrence)`: same text (and second text).
    pub duplicates: Vec<(usize, usize)>,
    /// How many of `duplicates` carry a different label than the first occurrence.
    pub conflicting_duplicates: usize,
    /// Examples per label, in label order.
    pub class_counts: Vec<(String, usize)>,
    /// Labels with fewer than `min_per_class` examples.
    pub too_few: Vec<String>,
    /// Largest class / smallest class (1 with fewer than two classes).
    pub imbalance_ratio: f32,
    /// Length in WordPiece tokens, `[CLS]` and `[SEP]` included, before truncation.
    pub token_lengths: LengthStats,
    /// Examples longer than `max_len` tokens (they will be truncated).
    pub over_max_len: usize,
    /// Sentences about problems that block training.
    pub errors: Vec<String>,
    /// Sentences about problems that do not.
    pub warnings: Vec<String>,
}

/// Checks a labeled [`Dataset`] before training. `token_lengths[i]` is the untruncated token
/// count of `data.examples[i]` (the caller runs the tokenizer); extra or missing lengths are
/// ignored. Errors: no usable examples, fewer than two labels, a label with fewer than 2 examples
/// (no stratified split possible). Warnings: skipped rows, labels under `min_per_class`,
/// duplicates (and duplicates with conflicting labels), imbalance over 3×, truncation.
pub fn validate(
    data: &Dataset,
    token_lengths: &[usize],
    max_len: usize,
    min_per_class: usize,
) -> ValidationReport {
    let skipped_by_reason = count_reasons(&data.skipped);
    let counts = data.class_counts();
    let class_counts: Vec<(String, usize)> =
        data.labels.iter().cloned().zip(counts.iter().copied()).collect();

    let mut first_seen: HashMap<(&str, Option<&str>), usize> = HashMap::new();
    let mut duplicates = Vec::new();
    let mut conflicting_duplicates = 0;
    for (i, e) in data.examples.iter().enumerate() {
        let first = *first_seen.entry((e.text.as_str(), e.text_pair.as_deref())).or_insert(i);
        if first != i {
            duplicates.push((e.line, data.examples[first].line));
            if data.examples[first].label != e.label {
                conflicting_duplicates += 1;
            }
        }
    }

    let too_few: Vec<String> =
        class_counts.iter().filter(|(_, n)| *n < min_per_class).map(|(l, _)| l.clone()).collect();
    let nonzero = counts.iter().copied().filter(|&n| n > 0);
    let imbalance_ratio = match (nonzero.clone().max(), nonzero.min()) {
        (Some(max), Some(min)) if counts.len() >= 2 => max as f32 / min as f32,
        _ => 1.0,
    };

    let lengths = &token_lengths[..token_lengths.len().min(data.examples.len())];
    let token_lengths_stats = length_stats(lengths);
    let over_max_len = lengths.iter().filter(|&&n| n > max_len).count();

    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    if data.examples.is_empty() {
        errors.push(
            "There are no usable examples. Check the file and the choice of columns.".to_string(),
        );
    } else if data.labels.is_empty() {
        errors.push("No labels: choose the column that holds the labels.".to_string());
    } else if data.labels.len() < 2 {
        errors.push(format!(
            "Every example has the label “{}”. A classifier needs at least two different labels; check \
             that the label column is the right one.",
            data.labels[0]
        ));
    }
    let singletons: Vec<&str> =
        class_counts.iter().filter(|(_, n)| *n < 2).map(|(l, _)| l.as_str()).collect();
    if !singletons.is_empty() {
        errors.push(format!(
            "{} {} only one example; every label needs at least 2 (one for training, one for \
             validation). Add examples or remove {}.",
            list_labels("The label", "The labels", &singletons),
            if singletons.len() == 1 { "has" } else { "have" },
            if singletons.len() == 1 { "it" } else { "them" },
        ));
    }

    if !data.skipped.is_empty() {
        warnings.push(format!(
            "{} row(s) were left out: {}. They are listed below with their line numbers.",
            data.skipped.len(),
            summarise(&data.skipped)
        ));
    }
    let few: Vec<&str> = class_counts
        .iter()
        .filter(|(_, n)| *n >= 2 && *n < min_per_class)
        .map(|(l, _)| l.as_str())
        .collect();
    if !few.is_empty() {
        let (verb, pronoun) = if few.len() == 1 { ("has", "it") } else { ("have", "them") };
        warnings.push(format!(
            "{} {verb} fewer than {min_per_class} examples; the model will learn {pronoun} poorly. \
             Aim for at least {min_per_class} examples per label.",
            list_labels("The label", "The labels", &few),
        ));
    }
    if let Some(&(line, first)) = duplicates.first() {
        let mut sentence = format!(
            "{} example(s) repeat an earlier text (for example line {line} repeats line {first}). A \
             repeated text can land in both training and validation and make the score look better \
             than it is.",
            duplicates.len()
        );
        if conflicting_duplicates > 0 {
            sentence.push_str(&format!(
                " {conflicting_duplicates} of them have a different label than the first copy: the \
                 model cannot get both right, so check those rows."
            ));
        }
        warnings.push(sentence);
    }
    if imbalance_ratio > 3.0 {
        let (big, small) = extremes(&class_counts);
        warnings.push(format!(
            "The labels are unbalanced: “{}” has {} examples, “{}” only {} ({imbalance_ratio:.1}×). \
             The model may learn to favour the large label; look at macro-F1 and the confusion \
             matrix, not only accuracy.",
            big.0, big.1, small.0, small.1
        ));
    }
    if over_max_len > 0 {
        warnings.push(format!(
            "{over_max_len} example(s) ({:.0}%) are longer than {max_len} tokens (the longest has {}) \
             and will be cut to their first {max_len} tokens.",
            100.0 * over_max_len as f32 / lengths.len().max(1) as f32,
            token_lengths_stats.max
        ));
    }

    ValidationReport {
        total_rows: data.examples.len() + data.skipped.len(),
        usable: data.examples.len(),
        skipped_by_reason,
        duplicates,
        conflicting_duplicates,
        class_counts,
        too_few,
        imbalance_ratio,
        token_lengths: token_lengths_stats,
        over_max_len,
        errors,
        warnings,
    }
}

fn length_stats(lengths: &[usize]) -> LengthStats {
    if lengths.is_empty() {
        return LengthStats::default();
    }
    let mut sorted = lengths.to_vec();
    sorted.sort_unstable();
    let rank = (0.95 * sorted.len() as f64).ceil() as usize;
    LengthStats {
        max: sorted[sorted.len() - 1],
        mean: (sorted.iter().map(|&n| n as f64).sum::<f64>() / sorted.len() as f64) as f32,
        p95: sorted[rank.clamp(1, sorted.len()) - 1],
    }
}

fn extremes(counts: &[(String, usize)]) -> ((&str, usize), (&str, usize)) {
    let present = counts.iter().filter(|(_, n)| *n > 0);
    let big = present.clone().max_by_key(|(_, n)| *n).map_or(("", 0), |(l, n)| (l.as_str(), *n));
    let small = present.min_by_key(|(_, n)| *n).map_or(("", 0), |(l, n)| (l.as_str(), *n));
    (big, small)
}

/// `The label “a”` / `The labels “a”, “b” and 3 more`.
fn list_labels(one: &str, many: &str, labels: &[&str]) -> String {
    const SHOWN: usize = 6;
    let mut quoted: Vec<String> = labels.iter().take(SHOWN).map(|l| format!("“{l}”")).collect();
    if labels.len() > SHOWN {
        quoted.push(format!("{} more", labels.len() - SHOWN));
    }
    let list = match quoted.len() {
        0 | 1 => quoted.join(""),
        n => format!("{} and {}", quoted[..n - 1].join(", "), quoted[n - 1]),
    };
    format!("{} {list}", if labels.len() == 1 { one } else { many })
}

// ---------------------------------------------------------------------------------------------
// Splits and shuffles
// ---------------------------------------------------------------------------------------------

/// A train/validation split: indices into the examples, each list sorted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Split {
    /// Indices of the training examples.
    pub train: Vec<usize>,
    /// Indices of the validation examples.
    pub valid: Vec<usize>,
}

/// Splits so that every class keeps its proportion: each class's indices are shuffled with
/// [`Rng`] seeded by `seed`, and `round(n × valid_fraction)` of them, but at least 1 and at most
/// `n - 1`, go to validation. The same inputs always give the same split. Classes with no examples
/// are ignored; a class with one example is an error (it cannot be in both parts), named `#id`
/// (use [`Dataset::split`] for names).
pub fn stratified_split(
    label_ids: &[usize],
    num_labels: usize,
    valid_fraction: f32,
    seed: u64,
) -> Result<Split, DataError> {
    split_classes(label_ids, num_labels, valid_fraction, seed, None)
}

fn split_classes(
    label_ids: &[usize],
    num_labels: usize,
    valid_fraction: f32,
    seed: u64,
    names: Option<&[String]>,
) -> Result<Split, DataError> {
    if !(valid_fraction > 0.0 && valid_fraction < 1.0) {
        return Err(DataError::BadFraction(valid_fraction));
    }
    let mut classes = vec![Vec::new(); num_labels];
    for (index, &label) in label_ids.iter().enumerate() {
        classes
            .get_mut(label)
            .ok_or(DataError::LabelOutOfRange { index, label, num_labels })?
            .push(index);
    }
    let mut rng = Rng::new(seed);
    let (mut train, mut valid) = (Vec::new(), Vec::new());
    for (id, mut members) in classes.into_iter().enumerate() {
        let n = members.len();
        if n == 0 {
            continue;
        }
        if n < 2 {
            let label = names.and_then(|l| l.get(id).cloned()).unwrap_or_else(|| format!("#{id}"));
            return Err(DataError::TooFewToSplit { label, count: n });
        }
        rng.shuffle(&mut members);
        let k = ((n as f64 * valid_fraction as f64).round() as usize).clamp(1, n - 1);
        valid.extend_from_slice(&members[..k]);
        train.extend_from_slice(&members[k..]);
    }
    train.sort_unstable();
    valid.sort_unstable();
    Ok(Split { train, valid })
}

/// `0..n` in a random order fixed by `seed` (an epoch's order).
pub fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    Rng::new(seed).shuffle(&mut order);
    order
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes)
}

fn first_non_space(bytes: &[u8]) -> Option<u8> {
    bytes.iter().copied().find(|b| !b.is_ascii_whitespace())
}

/// 1-based line numbers of increasing byte offsets, in one pass over the text. A line ends at
/// `\n`, `\r\n` or a lone `\r`.
#[derive(Default)]
struct LineCounter {
    at: usize,
    breaks: usize,
}

impl LineCounter {
    fn line_at(&mut self, bytes: &[u8], offset: usize) -> usize {
        let offset = offset.min(bytes.len());
        for i in self.at..offset {
            let lone_cr = bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n');
            self.breaks += usize::from(bytes[i] == b'\n' || lone_cr);
        }
        self.at = self.at.max(offset);
        self.breaks + 1
    }
}

/// 1-based line of byte `at`.
fn line_of(bytes: &[u8], at: usize) -> usize {
    1 + bytes[..at.min(bytes.len())].iter().filter(|&&b| b == b'\n').count()
}

/// Among the first 20 non-blank lines: how many contain a tab, a comma, a semicolon, and how many
/// lines were looked at.
fn count_separators(bytes: &[u8]) -> (usize, usize, usize, usize) {
    let (mut tabs, mut commas, mut semicolons, mut lines) = (0, 0, 0, 0);
    for line in bytes.split(|&b| b == b'\n').filter(|l| !l.trim_ascii().is_empty()).take(20) {
        lines += 1;
        tabs += usize::from(line.contains(&b'\t'));
        commas += usize::from(line.contains(&b','));
        semicolons += usize::from(line.contains(&b';'));
    }
    (tabs, commas, semicolons, lines)
}

fn is_number(cell: &str) -> bool {
    let cell = cell.trim();
    cell.bytes().any(|b| b.is_ascii_digit()) && cell.parse::<f64>().is_ok()
}

/// `"Sentence 1"` → `"sentence1"`, `"Gold-Label"` → `"gold_label"`.
fn normalise_name(name: &str) -> String {
    let lower = name.trim().to_lowercase();
    let joined: String = lower.split_whitespace().collect::<Vec<_>>().join("_").replace('-', "_");
    match joined.as_str() {
        "sentence_1" => "sentence1".into(),
        "sentence_2" => "sentence2".into(),
        _ => joined,
    }
}

/// The field count most rows have (the widest on a tie).
fn most_common_width(rows: &[Record]) -> usize {
    let mut counts: HashMap<usize, usize> = HashMap::new();
    for r in rows {
        *counts.entry(r.fields.len()).or_default() += 1;
    }
    counts.into_iter().max_by_key(|&(width, n)| (n, width)).map_or(1, |(width, _)| width)
}

/// The first [`PREVIEW_CHARS`] characters of the fields joined by `separator`, line breaks and
/// tabs shown as spaces, `…` when cut.
fn preview(fields: &[String], separator: &str) -> String {
    let mut out = String::new();
    let mut chars = fields
        .iter()
        .enumerate()
        .flat_map(|(i, f)| (if i == 0 { "" } else { separator }).chars().chain(f.chars()))
        .map(|c| if c.is_control() { ' ' } else { c });
    for c in chars.by_ref().take(PREVIEW_CHARS) {
        out.push(c);
    }
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str, name: Option<&str>) -> Table {
        parse_table(text.as_bytes(), name).expect("parses")
    }

    fn fields(t: &Table) -> Vec<Vec<&str>> {
        t.rows.iter().map(|r| r.fields.iter().map(String::as_str).collect()).collect()
    }

    fn dataset(text: &str, name: Option<&str>) -> Dataset {
        let t = table(text, name);
        to_examples(&t, &guess_columns(&t)).expect("usable")
    }

    #[test]
    fn detects_formats_by_extension_then_content() {
        assert_eq!(detect_format(b"a\tb", Some("x.CSV")), Format::Csv);
        assert_eq!(detect_format(b"a,b", Some("x.tab")), Format::Tsv);
        assert_eq!(detect_format(b"a,b", Some("data.ndjson")), Format::Jsonl);
        assert_eq!(detect_format(b"\n  {\"text\": 1}", Some("upload.txt")), Format::Jsonl);
        assert_eq!(detect_format(b"[ {\"text\": 1} ]", None), Format::Jsonl);
        assert_eq!(detect_format(b"[1] is a footnote,positive", None), Format::Csv);
        assert_eq!(detect_format(b"text\tlabel\nWell, fine.\tpositive\n", None), Format::Tsv);
        assert_eq!(detect_format(b"text,label\nI liked it,positive\n", None), Format::Csv);
        assert_eq!(detect_format(b"one sentence only\n", None), Format::Csv);
    }

    #[test]
    fn quoted_commas_quotes_and_embedded_newlines_with_line_numbers() {
        let t = table(
            "text,label\n\"Cheap, cheerful, and good\",positive\n\"She said \"\"meh\"\"\nthen left\",negative\nplain,positive\n",
            None,
        );
        assert!(t.has_header);
        assert_eq!(t.columns, ["text", "label"]);
        assert_eq!(
            fields(&t),
            [
                vec!["Cheap, cheerful, and good", "positive"],
                vec!["She said \"meh\"\nthen left", "negative"],
                vec!["plain", "positive"]
            ]
        );
        assert_eq!(t.rows.iter().map(|r| r.line).collect::<Vec<_>>(), [2, 3, 5]);
    }

    #[test]
    fn crlf_bom_and_blank_rows() {
        let t = table(
            "\u{feff}text,label\r\nGood film,positive\r\n\r\n,\r\n  Bad film  ,negative\r\n\"Two\r\nlines\",positive\r\nLast,negative",
            Some("a.csv"),
        );
        assert_eq!(t.columns, ["text", "label"]);
        assert_eq!(
            fields(&t),
            [
                vec!["Good film", "positive"],
                vec!["", ""],
                vec!["  Bad film  ", "negative"],
                vec!["Two\r\nlines", "positive"],
                vec!["Last", "negative"]
            ]
        );
        assert_eq!(t.rows.iter().map(|r| r.line).collect::<Vec<_>>(), [2, 4, 5, 6, 8]);
        // Old Mac line ends (a lone CR).
        let mac = table("text,label\rGood,positive\r\rBad,negative\r", None);
        assert_eq!(mac.rows.iter().map(|r| r.line).collect::<Vec<_>>(), [2, 4]);
        let d = to_examples(&t, &guess_columns(&t)).unwrap();
        assert_eq!(d.examples[1].text, "Bad film");
        // The row of empty fields is not dropped silently: it is listed as skipped.
        assert_eq!(d.skipped.len(), 1);
        assert_eq!((d.skipped[0].line, &d.skipped[0].reason), (4, &SkipReason::EmptyText));
    }

    #[test]
    fn tsv_and_semicolon_csv() {
        let t = table("sentence\tlabel\nWell, it was fine.\t1\nNo.\t0\n", None);
        assert_eq!((t.format, t.columns.len()), (Format::Tsv, 2));
        assert_eq!(t.rows[0].fields[0], "Well, it was fine.");
        let t = table("text;label\nGut, sehr gut;positiv\nSchlecht;negativ\n", Some("excel.csv"));
        assert_eq!((t.format, t.columns.len()), (Format::Csv, 2));
        assert_eq!(t.rows[0].fields, ["Gut, sehr gut", "positiv"]);
    }

    #[test]
    fn jsonl_with_numbers_missing_keys_and_bad_lines() {
        let text = "{\"text\": \"good\", \"label\": 1}\n\n{\"label\": 0, \"text\": \"bad\", \"score\": 0.5}\n[1, 2]\n{\"text\": \"no label\"}\n{\"text\": \"x\", \"label\": null, \"ok\": true}\nnot json\n";
        let t = table(text, Some("d.jsonl"));
        assert_eq!(t.columns, ["text", "label", "score", "ok"]);
        assert_eq!(t.rows[0].fields, ["good", "1", "", ""]);
        assert_eq!(t.rows[1].fields, ["bad", "0", "0.5", ""]);
        assert_eq!(t.rows[1].line, 3);
        assert!(t.rows[2].error.as_deref().unwrap().contains("a list"));
        assert_eq!(t.rows[5].line, 7);
        assert!(t.rows[5].error.is_some());

        let d = to_examples(&t, &guess_columns(&t)).unwrap();
        assert_eq!(d.labels, ["0", "1"]);
        assert_eq!(d.examples.len(), 2);
        let lines: Vec<(usize, &str)> =
            d.skipped.iter().map(|s| (s.line, s.reason.kind())).collect();
        assert_eq!(
            lines,
            [
                (4, "unreadable row"),
                (5, "missing label"),
                (6, "missing label"),
                (7, "unreadable row")
            ]
        );
        assert_eq!(d.skipped[3].preview, "not json");
    }

    #[test]
    fn json_array_and_bad_first_line() {
        let t = table(
            "[{\"sentence\": \"a b c\", \"label\": \"x\"},\n {\"sentence\": \"d\", \"label\": \"y\"}]",
            Some("d.json"),
        );
        assert_eq!(t.columns, ["sentence", "label"]);
        assert_eq!(t.rows[1].line, 2);
        let e = parse_table(b"text,label\n{}", Some("d.jsonl")).unwrap_err();
        assert!(matches!(e, DataError::Json { line: 1, .. }), "{e}");
        assert!(e.to_string().starts_with("Line 1 is not a JSON object"), "{e}");
        let e = parse_table(b"\"just a string\"\n{\"a\":1}", Some("d.jsonl")).unwrap_err();
        assert!(e.to_string().contains("it is a string"), "{e}");
    }

    #[test]
    fn header_detection() {
        // Known names.
        assert!(table("Review,Sentiment\nI loved it,pos\n", None).has_header);
        // Numeric column below a name.
        assert!(table("opinion,stars\nI loved every minute,5\nAwful,1\n", None).has_header);
        // A label-like column whose first cell is not one of its values.
        let t = table(
            "opinion,feeling\nI loved it,happy\nMeh,sad\nNo way,sad\nYes yes,happy\nOkay,happy\n",
            None,
        );
        assert!(t.has_header);
        // Short words over long texts.
        assert!(table("phrase,verdict\nThe soup was cold and bland,thumbs down\nLovely staff and quick service,thumbs up\n", None).has_header);

        // Headerless: labels repeat the first row's, numbers in the first row, sentences.
        let t = table(
            "I loved it,positive\nIt was awful,negative\nGreat fun,positive\nSo boring,negative\nWow,positive\n",
            None,
        );
        assert!(!t.has_header);
        assert_eq!(t.columns, ["column 1", "column 2"]);
        assert_eq!(t.rows.len(), 5);
        assert!(!table("1,great film\n0,bad film\n", None).has_header);
        assert!(!table("The plot was thin\nThe acting was superb\n", None).has_header);
        let d = dataset(
            "I loved it,positive\nIt was awful,negative\nGreat fun,positive\nSo boring,negative\n",
            None,
        );
        assert_eq!(d.examples[0].text, "I loved it");
        assert_eq!(d.labels, ["negative", "positive"]);
    }

    #[test]
    fn guesses_columns_by_name_and_by_content() {
        let t = table("id,label,sentence\n1,pos,A warm and funny film\n2,neg,Dull\n", None);
        assert_eq!(guess_columns(&t), ColumnMap { text: 2, text_pair: None, label: Some(1) });
        let t = table(
            "premise\thypothesis\tgold_label\nA man sleeps.\tA person rests.\tentailment\n",
            None,
        );
        assert_eq!(guess_columns(&t), ColumnMap { text: 0, text_pair: Some(1), label: Some(2) });
        let t = table(
            "positive,I loved it so much\nnegative,Never again\npositive,Fine work\nnegative,No\n",
            None,
        );
        assert_eq!(guess_columns(&t), ColumnMap { text: 1, text_pair: None, label: Some(0) });
        let t = table("just one sentence here\nand another one\n", None);
        assert_eq!(guess_columns(&t), ColumnMap { text: 0, text_pair: None, label: None });
    }

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

    #[test]
    fn unclosed_quote_is_reported_on_its_row() {
        let d = dataset(
            "text,label\nGood,positive\n\"Bad,negative\nOkay,positive\nFine,positive\n",
            None,
        );
        assert_eq!(d.examples.len(), 1);
        assert_eq!(d.skipped[0].line, 3);
        assert!(d.skipped[0].reason.to_string().contains("never ends"), "{}", d.skipped[0].reason);
    }

    #[test]
    fn refuses_empty_binary_and_non_utf8_files() {
        assert_eq!(parse_table(b"", None), Err(DataError::Empty));
        assert_eq!(parse_table(b" \n\r\n\t", None), Err(DataError::Empty));
        assert_eq!(parse_table(b"\xEF\xBB\xBF\n", None), Err(DataError::Empty));
        assert_eq!(parse_table(b",,\n,,\n", None), Err(DataError::Empty));
        assert_eq!(
            parse_table(b"PK\x03\x04\x14\x00\x06\x00", None),
            Err(DataError::Binary { line: 1 })
        );
        assert_eq!(parse_table(b"\xFF\xFEt\x00e\x00", None), Err(DataError::Utf16));
        let e = parse_table(b"text,label\nfine,positive\ncaf\xe9,positive\n", None).unwrap_err();
        assert_eq!(e, DataError::NotUtf8 { line: 3 });
        assert!(e.to_string().contains("Line 3") && e.to_string().contains("UTF-8"));
        assert!(DataError::TooLarge { bytes: 250_000_000 }.to_string().contains("250 MB"));
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

    fn example(line: usize, text: &str, label: &str) -> Example {
        Example { line, text: text.into(), text_pair: None, label: label.into() }
    }

    fn labeled(examples: Vec<Example>) -> Dataset {
        let labels = sorted_labels(&examples);
        Dataset { examples, labels, skipped: Vec::new() }
    }

    #[test]
    fn validation_counts_duplicates_imbalance_and_lengths() {
        let mut ex: Vec<Example> =
            (0..8).map(|i| example(i + 2, &format!("good {i}"), "pos")).collect();
        ex.push(example(10, "bad", "neg"));
        ex.push(example(11, "good 0", "neg")); // conflicting duplicate of line 2
        ex.push(example(12, "good 1", "pos")); // plain duplicate of line 3
        let mut d = labeled(ex);
        d.skipped.push(Skipped { line: 13, reason: SkipReason::EmptyText, preview: String::new() });
        let lengths: Vec<usize> = (1..=11).map(|n| n * 10).collect();
        let r = validate(&d, &lengths, 64, 5);
        assert_eq!((r.total_rows, r.usable), (12, 11));
        assert_eq!(r.skipped_by_reason, [("empty text".to_string(), 1)]);
        assert_eq!(r.duplicates, [(11, 2), (12, 3)]);
        assert_eq!(r.conflicting_duplicates, 1);
        assert_eq!(r.class_counts, [("neg".to_string(), 2), ("pos".to_string(), 9)]);
        assert_eq!(r.too_few, ["neg"]);
        assert!((r.imbalance_ratio - 4.5).abs() < 1e-6);
        assert_eq!(r.token_lengths, LengthStats { max: 110, mean: 60.0, p95: 110 });
        assert_eq!(r.over_max_len, 5);
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        let all = r.warnings.join("\n");
        for needle in [
            "1 row(s) were left out",
            "“neg” has fewer than 5",
            "repeat an earlier text",
            "1 of them have a different label",
            "unbalanced",
            "longer than 64 tokens",
        ] {
            assert!(all.contains(needle), "{needle:?} not in\n{all}");
        }
    }

    #[test]
    fn validation_errors_block_training() {
        let d = labeled(vec![example(2, "a", "pos"), example(3, "b", "pos")]);
        let r = validate(&d, &[3, 3], 128, 1);
        assert_eq!(r.errors.len(), 1);
        assert!(r.errors[0].contains("Every example has the label “pos”"));
        assert!(r.warnings.is_empty());
        assert_eq!(r.imbalance_ratio, 1.0);

        let d =
            labeled(vec![example(2, "a", "pos"), example(3, "b", "pos"), example(4, "c", "neg")]);
        let r = validate(&d, &[], 128, 1);
        assert_eq!(
            r.errors,
            [
                "The label “neg” has only one example; every label needs at least 2 (one for training, one for validation). Add examples or remove it."
            ]
        );
        assert_eq!(r.token_lengths, LengthStats::default());

        let r = validate(&labeled(Vec::new()), &[], 128, 1);
        assert!(r.errors[0].starts_with("There are no usable examples"));
    }

    #[test]
    fn stratified_split_is_deterministic_proportional_and_complete() {
        let ids: Vec<usize> = (0..100).map(|i| if i % 4 == 0 { 1 } else { 0 }).collect(); // 75 / 25
        let a = stratified_split(&ids, 2, 0.2, 42).unwrap();
        assert_eq!(a, stratified_split(&ids, 2, 0.2, 42).unwrap());
        assert_ne!(a, stratified_split(&ids, 2, 0.2, 43).unwrap());
        assert_eq!(a.valid.iter().filter(|&&i| ids[i] == 0).count(), 15);
        assert_eq!(a.valid.iter().filter(|&&i| ids[i] == 1).count(), 5);
        assert!(a.train.windows(2).all(|w| w[0] < w[1]) && a.valid.windows(2).all(|w| w[0] < w[1]));
        let mut all: Vec<usize> = a.train.iter().chain(&a.valid).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..100).collect::<Vec<_>>());

        // Small classes: at least one in each part.
        let s = stratified_split(&[0, 0, 1, 1, 1], 3, 0.01, 0).unwrap();
        assert_eq!((s.train.len(), s.valid.len()), (3, 2));
        let s = stratified_split(&[0, 0], 1, 0.99, 0).unwrap();
        assert_eq!((s.train.len(), s.valid.len()), (1, 1));
    }

    #[test]
    fn split_errors() {
        assert_eq!(
            stratified_split(&[0, 0, 1], 2, 0.2, 0),
            Err(DataError::TooFewToSplit { label: "#1".into(), count: 1 })
        );
        let d =
            labeled(vec![example(2, "a", "pos"), example(3, "b", "pos"), example(4, "c", "neg")]);
        let e = d.split(0.2, 0).unwrap_err();
        assert!(e.to_string().starts_with("The label “neg” has only 1 example"), "{e}");
        assert_eq!(
            stratified_split(&[0, 2], 2, 0.2, 0),
            Err(DataError::LabelOutOfRange { index: 1, label: 2, num_labels: 2 })
        );
        for bad in [0.0, 1.0, -0.5, f32::NAN] {
            assert!(matches!(stratified_split(&[0, 0], 1, bad, 0), Err(DataError::BadFraction(_))));
        }
    }

    #[test]
    fn shuffled_is_a_seeded_permutation() {
        let a = shuffled(50, 1);
        assert_eq!(a, shuffled(50, 1));
        assert_ne!(a, shuffled(50, 2));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        assert!(shuffled(0, 1).is_empty());
    }

    #[test]
    fn built_in_sentiment_example() {
        let bytes = include_bytes!("../../public/examples/sentiment.csv");
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
