//! Formats and tables: [`Format`] detection, [`parse_table`] for CSV/TSV (with header detection)
//! and JSON Lines.

use std::collections::HashMap;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::text::{
    LineCounter, count_separators, first_non_space, is_number, normalise_name, strip_bom,
};
use super::decode::{Decoded, decode_named};
use super::{DataError, SAMPLE_ROWS};

/// A file format for labeled text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values (semicolon-separated is recognised too, as Excel writes it in many
    /// locales), RFC 4180 quoting.
    Csv,
    /// Tab-separated values. Quotes are text, as GLUE, MSR, CoNLL and spreadsheets' "text
    /// (tab-delimited)" write them, unless the file demonstrably quotes its fields the CSV way
    /// (see [`tsv_uses_quotes`]).
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
            // Parquet is read as the JSON Lines of its rows (`decode`).
            "jsonl" | "ndjson" | "json" | "parquet" => return Format::Jsonl,
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
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The format it was read as.
    pub format: Format,
    /// Whether the first row held column names (always true for JSON).
    pub has_header: bool,
    /// Column names: from the header, the JSON keys (in first-seen order), or `column 1`, ….
    pub columns: Vec<String>,
    /// The data rows (header excluded; blank lines dropped, rows of empty fields kept).
    pub rows: Vec<Record>,
    /// How the file was read when it was not plain UTF-8 text (see [`decode_named`]), for the report.
    pub decoded: Option<String>,
}

/// One row of a [`Table`].
#[derive(Debug, Clone, PartialEq)]
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
    pub error: Option<String>,
}

/// Reads CSV, TSV or JSON Lines (see [`detect_format`]) into a [`Table`].
///
/// Reads the text as people save it ([`decode_named`]: gzip, UTF-16, Windows-1252; said in
/// [`Table::decoded`]); refuses files over [`MAX_FILE_BYTES`], empty files, archives and binary
/// files (a NUL byte). A `.gz` suffix is looked through for the format. CSV/TSV rows of the wrong length
/// are kept as they are ([`to_examples`] reports them), blank lines are dropped, and whether the
/// first row is a header is guessed (see [`looks_like_header`]). For JSON Lines, an invalid first
/// line is an error; a later invalid line is kept as a [`Record`] with its `error` set.
///
/// [`to_examples`]: super::to_examples
pub fn parse_table(bytes: &[u8], file_name: Option<&str>) -> Result<Table, DataError> {
    let Decoded { text, note } = decode_named(bytes, file_name)?;
    if text.trim().is_empty() {
        return Err(DataError::Empty);
    }
    let name = file_name.map(|n| n.strip_suffix(".gz").or_else(|| n.strip_suffix(".GZ")).unwrap_or(n));
    let mut table = match delimiting(&text, name) {
        None => parse_json(&text),
        Some((format, delimiter, quoting)) => parse_delimited(&text, format, delimiter, quoting),
    }?;
    table.decoded = note;
    Ok(table)
}

/// How `text` (named `name`, a `.gz` suffix dropped) is read when it is not JSON (`None`): its
/// format, delimiter, and whether a `"` quotes a field.
pub(super) fn delimiting(text: &str, name: Option<&str>) -> Option<(Format, u8, bool)> {
    match detect_format(text.as_bytes(), name) {
        Format::Jsonl => None,
        Format::Tsv => Some((Format::Tsv, b'\t', tsv_uses_quotes(text))),
        Format::Csv => {
            let (tabs, commas, semicolons, lines) = count_separators(text.as_bytes());
            // Excel writes `;` where the decimal separator is a comma; a tab-separated `.csv`
            // also happens. Switch only when every sampled line agrees. A tab-separated `.csv`
            // (STS-B's original files) is read as tab-separated: its rule on quotes, and its
            // fields past the last column.
            Some(if semicolons == lines && commas < lines {
                (Format::Csv, b';', true)
            } else if tabs == lines && commas < lines {
                (Format::Tsv, b'\t', tsv_uses_quotes(text))
            } else {
                (Format::Csv, b',', true)
            })
        }
    }
}

/// Whether tab-separated `text` quotes its fields as CSV does, so that a `"` opens a quoted field.
/// Yes only when the file shows it: at least one field starts with `"`, every field that does is
/// a well-formed quoted field (closed by a `"` before a tab, a line end or the end of the file,
/// with the quotes inside doubled), and a quoted field runs over several lines only where most
/// fields are quoted. Otherwise a `"` is part of the text: a sentence that starts with a quotation
/// (`"Nobody is there," he said.`) must not swallow the tabs and lines up to the next quote.
pub fn tsv_uses_quotes(text: &str) -> bool {
    let b = text.as_bytes();
    let (mut fields, mut quoted, mut spanning) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while i < b.len() {
        // At the start of a field.
        fields += 1;
        if b[i] == b'"' {
            quoted += 1;
            let mut j = i + 1;
            let mut lines = false;
            loop {
                match b.get(j) {
                    None => return false, // never closed
                    Some(b'"') if b.get(j + 1) == Some(&b'"') => j += 2,
                    Some(b'"') => break,
                    Some(b'\n' | b'\r') => {
                        lines = true;
                        j += 1;
                    }
                    Some(_) => j += 1,
                }
            }
            // `j` is the closing quote: what follows must end the field.
            if !matches!(b.get(j + 1), None | Some(b'\t' | b'\n' | b'\r')) {
                return false;
            }
            spanning += usize::from(lines);
            i = j + 1;
        } else {
            while i < b.len() && !matches!(b[i], b'\t' | b'\n' | b'\r') {
                i += 1;
            }
        }
        // The field's end: a tab starts another on this line; line breaks start a new line.
        match b.get(i) {
            Some(b'\t') => i += 1,
            Some(b'\n' | b'\r') => {
                while i < b.len() && matches!(b[i], b'\n' | b'\r') {
                    i += 1;
                }
            }
            _ => {}
        }
    }
    quoted > 0 && (spanning == 0 || quoted * 2 >= fields)
}

pub(super) fn parse_delimited(text: &str, format: Format, delimiter: u8, quoting: bool) -> Result<Table, DataError> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .quoting(quoting)
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
    Ok(Table { format, has_header, columns, rows: raw, decoded: None })
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
                for (key, value) in super::annotations::label_studio(entries).into_iter().flat_map(|(k, v)| flatten(k, v)) {
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
    Ok(Table { format: Format::Jsonl, has_header: true, columns, rows, decoded: None })
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

/// A key and its value, an object's fields taking their own columns named `key.field` (so a
/// label `{"label": {"id": 0, "name": "neg"}}` is read from `label.id` or `label.name`, chosen in
/// the column mapping, never as the object's JSON text).
fn flatten(key: String, value: serde_json::Value) -> Vec<(String, serde_json::Value)> {
    match value {
        serde_json::Value::Object(map) if !map.is_empty() => {
            map.into_iter().flat_map(|(k, v)| flatten(format!("{key}.{k}"), v)).collect()
        }
        other => vec![(key, other)],
    }
}

fn json_to_text(value: serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s,
        serde_json::Value::Null => String::new(),
        serde_json::Value::Object(map) if map.is_empty() => String::new(),
        serde_json::Value::Bool(b) => b.to_string(),
        serde_json::Value::Number(n) => n.to_string(),
        other => other.to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::test_util::{dataset, fields, table};
    use crate::data::{SkipReason, guess_columns, to_examples};

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
    fn a_tsv_reads_its_quotes_as_text_unless_it_quotes_its_fields() {
        // GLUE's and MSR's files: a sentence may start with a quotation, and quotes are text.
        let glue = "index\tsentence1\tsentence2\tscore\n\
                    0\t\"Nobody is there,\" he said.\tHe said nobody came.\t3.2\n\
                    1\tA man plays a flute.\tA man plays \"a\" flute.\t4.8\n\
                    2\t\"Stop\tA cat sleeps.\t0.4\n\
                    3\tShe left.\tShe went away.\t4.0\n";
        let t = table(glue, Some("train.tsv"));
        assert_eq!(t.rows.len(), 4, "every line is a row");
        assert!(t.rows.iter().all(|r| r.fields.len() == 4));
        assert_eq!(t.rows[0].fields[1], "\"Nobody is there,\" he said.");
        assert_eq!(t.rows[2].fields[1], "\"Stop");
        assert_eq!(t.rows.iter().map(|r| r.line).collect::<Vec<_>>(), [2, 3, 4, 5]);
        // The same without the extension: found to be tab-separated, read the same way.
        assert_eq!(table(glue, None).rows, t.rows);
        // A tab-separated `.csv` too.
        assert_eq!(table(glue, Some("train.csv")).rows, t.rows);
        // A file that quotes every field (R's write.table, QUOTE_ALL) is read with its quotes,
        // a line break inside a quoted field included.
        let quoted = "\"text\"\t\"label\"\n\"He said \"\"hi\"\"\"\t\"1\"\n\"two\nlines\"\t\"0\"\n\"plain\"\t\"1\"\n";
        let t = table(quoted, Some("q.tsv"));
        assert_eq!(fields(&t), [vec!["He said \"hi\"", "1"], vec!["two\nlines", "0"], vec!["plain", "1"]]);
        // Quoting only where needed (pandas' default) is read with its quotes too.
        let minimal = "text\tlabel\n\"She said \"\"no\"\"\"\t0\nFine.\t1\n";
        assert_eq!(fields(&table(minimal, Some("m.tsv")))[0], ["She said \"no\"", "0"]);
        // A stray quote that happens to close at a field's end lines later is no quoting.
        let stray = "text\tlabel\n\"Hello there\t1\nplain\t0\nand then she said hi\"\t1\n";
        assert!(!tsv_uses_quotes(stray));
        assert_eq!(table(stray, Some("s.tsv")).rows.len(), 3);
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
    fn refuses_empty_and_binary_files() {
        assert_eq!(parse_table(b"", None), Err(DataError::Empty));
        assert_eq!(parse_table(b" \n\r\n\t", None), Err(DataError::Empty));
        assert_eq!(parse_table(b"\xEF\xBB\xBF\n", None), Err(DataError::Empty));
        assert_eq!(parse_table(b",,\n,,\n", None), Err(DataError::Empty));
        assert_eq!(
            parse_table(b"PK\x03\x04\x14\x00\x06\x00", None),
            Err(DataError::NotText { kind: "a zip archive" })
        );
        assert_eq!(parse_table(b"a,b\n\0\n", None), Err(DataError::Binary { line: 2 }));
        assert!(DataError::TooLarge { bytes: 250_000_000 }.to_string().contains("250 MB"));
    }

    #[test]
    fn a_json_object_field_is_read_through_its_named_fields() {
        let text = "{\"text\": \"good\", \"label\": {\"id\": 1, \"name\": \"pos\"}}\n{\"text\": \"bad\", \"label\": {\"id\": 0, \"name\": \"neg\"}}\n";
        let t = parse_table(text.as_bytes(), Some("train.jsonl")).unwrap();
        assert_eq!(t.columns, ["text", "label.id", "label.name"]);
        assert_eq!(fields(&t), [["good", "1", "pos"], ["bad", "0", "neg"]]);
        let map = guess_columns(&t);
        assert_eq!(map.text, 0);
        let label = map.label.expect("a label column is guessed");
        assert!(t.columns[label].starts_with("label."), "{:?}", t.columns[label]);
        // Deeper objects too; an empty one is an empty field.
        let t = parse_table(b"{\"a\": {\"b\": {\"c\": \"x\"}}, \"e\": {}}", Some("x.jsonl")).unwrap();
        assert_eq!(t.columns, ["a.b.c", "e"]);
        assert_eq!(fields(&t), [["x", ""]]);
    }
}
