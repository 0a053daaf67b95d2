//! Multi-label data: texts (or pairs) each with any number of labels, GoEmotions', toxic
//! comments', topics' and intents' data. Two ways files hold them ([`LabelColumns`]):
//!
//! - one 0/1 column per label, named after it (Kaggle's toxic-comment files, GoEmotions' raw
//!   CSVs): guessed when every column but the texts holds only 0s and 1s;
//! - one column holding each text's list of labels: a JSON array (JSON Lines as `datasets`
//!   writes them; guessed when every cell is one), or labels parted by a separator in one cell
//!   (`joy;surprise`), which is asked, never guessed ([`separators_in`] says which ones a column
//!   holds).
//!
//! Rows are read as [`to_examples`] reads them (the same rows skipped, for the same reasons);
//! a row whose labels cannot be read is skipped too, and says why.

use std::collections::HashMap;

use super::examples::{row_preview, summarise};
use super::table::Table;
use super::{ColumnMap, DataError, SkipReason, Skipped, to_examples};

/// Where a table keeps each text's labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelColumns {
    /// One column per label, each cell 0 or 1 (also `true`/`false`, `1.0`/`0.0`); the label
    /// is the column's name.
    Flags(Vec<usize>),
    /// One column of lists.
    List {
        /// The column.
        column: usize,
        /// How its cells part the labels.
        separator: Separator,
    },
}

/// How a list column's cell parts its labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Separator {
    /// The cell is a JSON array (`["joy", "surprise"]`, `[3, 27]`): what a JSON Lines file's
    /// list becomes in a [`Table`]. `[]` is a text with no label.
    Json,
    /// The labels are parted by this character (`;`, `|`, `,`); spaces around each are trimmed.
    Char(char),
}

/// The separators [`separators_in`] looks for, in the order it offers them.
pub const SEPARATORS: [char; 4] = [';', '|', ',', ' '];

/// Which columns hold the texts and the labels of a multi-label table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelSetMap {
    /// Column of the text.
    pub text: usize,
    /// Column of the second text, for pairs.
    pub text_pair: Option<usize>,
    /// Where the labels are.
    pub labels: LabelColumns,
}

/// A text (or pair) and the ids of its labels.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelSet {
    /// 1-based line of the file where its row starts.
    pub line: usize,
    /// The text, trimmed.
    pub text: String,
    /// The second text of a pair, trimmed.
    pub text_pair: Option<String>,
    /// Its labels' ids (indices into [`LabelSetData::labels`]), ascending; empty: none applies.
    pub labels: Vec<usize>,
}

/// A multi-label table read: its texts with their labels, and the rows left out.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelSetData {
    /// The usable rows, in file order.
    pub examples: Vec<LabelSet>,
    /// The label names: the flag columns' names in column order, or a list's distinct labels
    /// sorted (numerically when all are integers).
    pub labels: Vec<String>,
    /// The rows left out, in file order.
    pub skipped: Vec<Skipped>,
}

impl LabelSetData {
    /// How many texts have each label, in `labels` order.
    pub fn label_counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.labels.len()];
        for id in self.examples.iter().flat_map(|e| &e.labels) {
            counts[*id] += 1;
        }
        counts
    }

    /// Why a classifier cannot be trained on these labels, if it cannot: fewer than two (a
    /// validation file may have fewer; its texts are read in the training file's labels).
    pub fn too_few_labels(&self) -> Option<DataError> {
        let n = self.labels.len();
        (n < 2).then(|| {
            DataError::LabelSets(format!(
                "The data has {n} label{}; a multi-label classifier needs two or more (one yes-or-no label is a classifier of two labels).",
                if n == 1 { "" } else { "s" }
            ))
        })
    }

    /// How many texts have no label at all.
    pub fn without_labels(&self) -> usize {
        self.examples.iter().filter(|e| e.labels.is_empty()).count()
    }

    /// `example`'s labels as a 0/1 row `labels.len()` wide (a multi-label head's targets).
    pub fn targets(&self, example: &LabelSet) -> Vec<f32> {
        example.targets(self.labels.len())
    }
}

impl LabelSetData {
    /// Its texts with their label ids in `labels` (a training file's), as a validation file's
    /// are read; a label `labels` lacks is refused by name.
    pub fn in_labels(self, labels: &[String]) -> Result<Vec<LabelSet>, DataError> {
        let unknown: Vec<&str> = self.labels.iter().filter(|l| !labels.contains(l)).map(String::as_str).collect();
        if !unknown.is_empty() {
            return Err(DataError::LabelSets(format!("Its labels {} are not among the training file's ({}).", unknown.join(", "), labels.join(", "))));
        }
        let id = |l: usize| labels.iter().position(|t| *t == self.labels[l]).unwrap_or_default();
        let examples = self.examples.iter().map(|e| LabelSet { labels: e.labels.iter().map(|&l| id(l)).collect(), ..e.clone() }).collect();
        Ok(examples)
    }
}

impl LabelSet {
    /// Its labels as a 0/1 row `labels` wide: 1 at each of its label ids.
    pub fn targets(&self, labels: usize) -> Vec<f32> {
        let mut row = vec![0.0; labels];
        for &id in self.labels.iter().filter(|&&id| id < labels) {
            row[id] = 1.0;
        }
        row
    }
}

/// A flag cell's value: `Some(true)` for 1, `Some(false)` for 0 (an empty cell is neither).
fn flag(cell: &str) -> Option<bool> {
    match cell.trim().to_ascii_lowercase().as_str() {
        "1" | "1.0" | "true" => Some(true),
        "0" | "0.0" | "false" => Some(false),
        _ => None,
    }
}

/// Guesses a multi-label table's columns, or `None` when it does not look like one: the text
/// (and second text) as [`guess_columns`](super::guess_columns) guesses them, and the labels
/// as a column whose every non-empty cell is a JSON array of short labels each used more than
/// once on average (not a multiple-choice file's endings), else as every other column that
/// holds only 0s and 1s (and Kaggle's `-1`), when there are two or more (an `id` or other column beside them is
/// then no label). Lists parted by a separator are never guessed: the user says so.
pub fn guess_label_sets(table: &Table) -> Option<LabelSetMap> {
    let ColumnMap { text, text_pair, .. } = super::guess_columns(table);
    let rows: Vec<_> = table.rows.iter().filter(|r| r.error.is_none()).take(super::SAMPLE_ROWS).collect();
    let others = (0..table.columns.len()).filter(|&j| j != text && Some(j) != text_pair);
    let cells = |j: usize| rows.iter().filter_map(move |r| r.fields.get(j)).map(|f| f.trim()).filter(|f| !f.is_empty());
    let all = |j: usize, test: &dyn Fn(&str) -> bool| cells(j).next().is_some() && cells(j).all(test);
    // Lists of labels, not of texts (a multiple-choice file's endings): short, each used again.
    let labels_like = |j: usize| {
        let items: Vec<String> = cells(j).filter_map(super::annotations::json_list).flatten().collect();
        let distinct = items.iter().collect::<std::collections::HashSet<_>>().len();
        let chars: usize = items.iter().map(|l| l.chars().count()).sum();
        distinct * 2 <= items.len() && chars <= 40 * items.len()
    };
    if let Some(column) = others.clone().find(|&j| all(j, &|c| super::annotations::json_list(c).is_some()) && labels_like(j)) {
        return Some(LabelSetMap { text, text_pair, labels: LabelColumns::List { column, separator: Separator::Json } });
    }
    // Kaggle's `-1` ("not scored") does not make a column any less a label's.
    let flags: Vec<usize> = others.filter(|&j| all(j, &|c| flag(c).is_some() || c == "-1") && cells(j).any(|c| flag(c).is_some())).collect();
    (flags.len() >= 2).then_some(LabelSetMap { text, text_pair, labels: LabelColumns::Flags(flags) })
}

/// The separators of [`SEPARATORS`] that column `j`'s cells hold, most used first: what the
/// page offers when the user says a column holds lists.
pub fn separators_in(table: &Table, j: usize) -> Vec<char> {
    let mut counts: Vec<(char, usize)> = SEPARATORS
        .iter()
        .map(|&s| (s, table.rows.iter().take(super::SAMPLE_ROWS).filter(|r| r.fields.get(j).is_some_and(|f| f.trim().contains(s))).count()))
        .filter(|&(_, n)| n > 0)
        .collect();
    counts.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    counts.into_iter().map(|(s, _)| s).collect()
}

/// Why a row's labels cannot be read, as its [`Skipped`] says it.
fn bad_labels(why: String) -> SkipReason {
    SkipReason::Invalid(why)
}

/// Reads a multi-label table with `map`. Rows are skipped as [`to_examples`] skips them, and
/// also where a flag cell is neither 0 nor 1 (Kaggle's `-1`, "not scored", is one), where a
/// list cell is not a list, or where a separated list is empty (an empty cell says nothing; a
/// JSON `[]` says no label applies). Errors as [`to_examples`] does, and where a label column
/// is a text's; [`LabelSetData::too_few_labels`] says whether there are enough labels to train.
pub fn to_label_sets(table: &Table, map: &LabelSetMap) -> Result<LabelSetData, DataError> {
    let width = table.columns.len();
    let label_columns: Vec<usize> = match &map.labels {
        LabelColumns::Flags(columns) => columns.clone(),
        LabelColumns::List { column, .. } => vec![*column],
    };
    for &j in &label_columns {
        if j >= width {
            return Err(DataError::ColumnOutOfRange { role: "label", index: j, columns: width });
        }
        if j == map.text || Some(j) == map.text_pair {
            let role = if j == map.text { "text" } else { "second text" };
            return Err(DataError::SameColumn { first: role, second: "label", column: table.columns[j].clone() });
        }
    }
    let texts = to_examples(table, &ColumnMap { text: map.text, text_pair: map.text_pair, label: None })?;
    let rows: HashMap<usize, &super::Record> = table.rows.iter().map(|r| (r.line, r)).collect();
    let mut skipped = texts.skipped;
    let mut read: Vec<(super::Example, Vec<String>)> = Vec::with_capacity(texts.examples.len());
    for example in texts.examples {
        let row = rows[&example.line];
        let cell = |j: usize| row.fields[j].trim();
        let labels: Result<Vec<String>, SkipReason> = match &map.labels {
            LabelColumns::Flags(columns) => columns
                .iter()
                .filter_map(|&j| match flag(cell(j)) {
                    Some(true) => Some(Ok(table.columns[j].trim().to_string())),
                    Some(false) => None,
                    None if cell(j).is_empty() => Some(Err(SkipReason::MissingLabel)),
                    None => Some(Err(bad_labels(format!("“{}” in column “{}” is neither 0 nor 1", cell(j), table.columns[j])))),
                })
                .collect(),
            LabelColumns::List { column, separator: Separator::Json } => match cell(*column) {
                "" => Err(SkipReason::MissingLabel),
                c => super::annotations::json_list(c).ok_or_else(|| bad_labels(format!("“{c}” is not a list of labels such as [\"joy\", \"surprise\"]"))),
            },
            LabelColumns::List { column, separator: Separator::Char(s) } => {
                let labels: Vec<String> = cell(*column).split(*s).map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect();
                if labels.is_empty() { Err(SkipReason::MissingLabel) } else { Ok(labels) }
            }
        };
        match labels {
            Ok(labels) => read.push((example, labels)),
            Err(reason) => skipped.push(Skipped { line: example.line, reason, preview: row_preview(table, row) }),
        }
    }
    skipped.sort_by_key(|s| s.line);
    if read.is_empty() {
        return Err(DataError::NoUsableRows { rows: table.rows.len(), summary: summarise(&skipped) });
    }
    let labels: Vec<String> = match &map.labels {
        LabelColumns::Flags(columns) => columns.iter().map(|&j| table.columns[j].trim().to_string()).collect(),
        LabelColumns::List { .. } => sorted(read.iter().flat_map(|(_, l)| l.iter().cloned())),
    };
    let examples = {
        let ids: HashMap<&str, usize> = labels.iter().enumerate().map(|(i, l)| (l.as_str(), i)).collect();
        read.into_iter()
            .map(|(e, names)| {
                let mut set: Vec<usize> = names.iter().map(|n| ids[n.as_str()]).collect();
                set.sort_unstable();
                set.dedup();
                LabelSet { line: e.line, text: e.text, text_pair: e.text_pair, labels: set }
            })
            .collect()
    };
    Ok(LabelSetData { examples, labels, skipped })
}

/// Distinct labels, sorted numerically when all are integers, else as text.
fn sorted(labels: impl Iterator<Item = String>) -> Vec<String> {
    let mut labels: Vec<String> = labels.collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    if labels.iter().all(|l| l.parse::<i128>().is_ok()) {
        labels.sort_by_key(|l| l.parse::<i128>().unwrap_or_default());
    }
    labels
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::test_util::table;

    const TOXIC: &str = "id,comment_text,toxic,obscene,insult\n\
        a1,You are a wonderful person,0,0,0\n\
        a2,What a stupid idiot you are,1,0,1\n\
        a3,This is filthy garbage talk,1,1,0\n\
        a4,Not scored in the test labels,-1,-1,-1\n\
        a5,,1,0,0\n";

    #[test]
    fn a_table_of_flag_columns_is_guessed_and_read_with_every_row_accounted_for() {
        let t = table(TOXIC, Some("train.csv"));
        let map = guess_label_sets(&t).expect("guessed as multi-label");
        assert_eq!(map, LabelSetMap { text: 1, text_pair: None, labels: LabelColumns::Flags(vec![2, 3, 4]) });
        let data = to_label_sets(&t, &map).unwrap();
        assert_eq!(data.labels, ["toxic", "obscene", "insult"]);
        let sets: Vec<(usize, Vec<usize>)> = data.examples.iter().map(|e| (e.line, e.labels.clone())).collect();
        assert_eq!(sets, [(2, vec![]), (3, vec![0, 2]), (4, vec![0, 1])]);
        assert_eq!((data.label_counts(), data.without_labels()), (vec![2, 1, 1], 1));
        assert_eq!(data.targets(&data.examples[1]), [1.0, 0.0, 1.0]);
        let why: Vec<(usize, String)> = data.skipped.iter().map(|s| (s.line, s.reason.to_string())).collect();
        assert_eq!(why, [(5, "“-1” in column “toxic” is neither 0 nor 1".to_string()), (6, "the text is empty".to_string())]);
    }

    #[test]
    fn json_lists_are_guessed_and_separated_lists_are_read_only_when_asked() {
        let jsonl = "{\"text\": \"I am so happy and surprised\", \"labels\": [\"joy\", \"surprise\"]}\n\
            {\"text\": \"This is sad\", \"labels\": [\"sadness\"]}\n\
            {\"text\": \"Nothing in particular\", \"labels\": []}\n\
            {\"text\": \"A fine day\", \"labels\": [\"joy\"]}\n\
            {\"text\": \"Sad news, and so sudden\", \"labels\": [\"sadness\", \"surprise\"]}\n\
            {\"text\": \"A label that is no list\", \"labels\": \"joy\"}\n";
        let t = table(jsonl, Some("train.jsonl"));
        // The string cell is no list: the column is not all lists, so nothing is guessed.
        assert_eq!(guess_label_sets(&t), None);
        let map = LabelSetMap { text: 0, text_pair: None, labels: LabelColumns::List { column: 1, separator: Separator::Json } };
        let data = to_label_sets(&t, &map).unwrap();
        assert_eq!(data.labels, ["joy", "sadness", "surprise"]);
        assert_eq!(data.examples.iter().map(|e| e.labels.clone()).collect::<Vec<_>>(), [vec![0, 2], vec![1], vec![], vec![0], vec![1, 2]]);
        assert_eq!(data.skipped.len(), 1);
        assert!(data.skipped[0].reason.to_string().contains("is not a list of labels"), "{:?}", data.skipped);
        let t = table(&jsonl.lines().take(5).collect::<Vec<_>>().join("\n"), Some("train.jsonl"));
        assert_eq!(guess_label_sets(&t), Some(map));

        // A multiple-choice file's endings are lists of texts, not of labels.
        let choices = table("{\"question\": \"The kettle whistles.\", \"endings\": [\"Someone takes it off the stove.\", \"It starts to snow indoors.\"], \"label\": 0}\n{\"question\": \"The tyre is flat.\", \"endings\": [\"He pumps it up.\", \"The sea turns green.\"], \"label\": 0}\n", Some("choices.jsonl"));
        assert_eq!(guess_label_sets(&choices), None);

        // GoEmotions' simplified TSV (rows written for this test): ids parted by commas, asked
        // for, sorted as numbers.
        let t = table("text\tlabels\tid\nMy favourite food is anything\t27\teebbqej\nNow if he does off himself\t2,27\ted00q6i\nWhy would anyone say that\t10,3\teezlygj\n", Some("train.tsv"));
        assert_eq!(guess_label_sets(&t), None, "a separated list is never guessed");
        assert_eq!(separators_in(&t, 1), [',']);
        let data = to_label_sets(&t, &LabelSetMap { text: 0, text_pair: None, labels: LabelColumns::List { column: 1, separator: Separator::Char(',') } }).unwrap();
        assert_eq!(data.labels, ["2", "3", "10", "27"]);
        assert_eq!(data.examples.iter().map(|e| e.labels.clone()).collect::<Vec<_>>(), [vec![3], vec![0, 3], vec![1, 2]]);
    }

    #[test]
    fn a_validation_file_is_read_in_the_training_labels() {
        let t = table("{\"text\": \"Only b here\", \"labels\": [\"b\"]}\n{\"text\": \"Only a here\", \"labels\": [\"a\"]}\n{\"text\": \"B again\", \"labels\": [\"b\"]}\n", Some("v.jsonl"));
        let map = LabelSetMap { text: 0, text_pair: None, labels: LabelColumns::List { column: 1, separator: Separator::Json } };
        let training = ["c".to_string(), "b".into(), "a".into()];
        let read = to_label_sets(&t, &map).unwrap().in_labels(&training).unwrap();
        assert_eq!(read.iter().map(|e| e.labels.clone()).collect::<Vec<_>>(), [vec![1], vec![2], vec![1]]);
        let e = to_label_sets(&t, &map).unwrap().in_labels(&training[..2]).unwrap_err();
        assert!(e.to_string().contains("Its labels a are not among the training file's (c, b)"), "{e}");
    }

    #[test]
    fn one_label_and_a_label_column_that_is_a_text_are_refused_by_name() {
        let t = table("text,a,b\nfirst text here,1,x\nsecond text here,0,y\n", None);
        let one = to_label_sets(&t, &LabelSetMap { text: 0, text_pair: None, labels: LabelColumns::Flags(vec![1]) }).unwrap();
        let why = one.too_few_labels().expect("one label is too few").to_string();
        assert!(why.contains("1 label; a multi-label classifier needs two or more"), "{why}");
        let same = to_label_sets(&t, &LabelSetMap { text: 0, text_pair: None, labels: LabelColumns::Flags(vec![0, 1]) }).unwrap_err();
        assert!(matches!(same, DataError::SameColumn { .. }), "{same}");
        let out = to_label_sets(&t, &LabelSetMap { text: 0, text_pair: None, labels: LabelColumns::Flags(vec![1, 7]) }).unwrap_err();
        assert!(matches!(out, DataError::ColumnOutOfRange { index: 7, .. }), "{out}");
    }
}
