//! Columns: which column holds the text, the second text and the label ([`ColumnMap`],
//! [`guess_columns`]), guessed from names and per-column statistics.

use super::SAMPLE_ROWS;
use super::table::Table;
use super::text::normalise_name;

/// Which columns hold the text, the optional second text (sentence pairs) and the label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    // The first text of a pair file: GLUE, MSR's MRPC (`#1 String`), Quora (`question1`), ….
    "sentence_a", "text1", "text_1", "question1", "question_1", "1_string", "string1", "s1", "sent1",
];
#[rustfmt::skip]
const PAIR_NAMES: &[&str] = &[
    "sentence2", "text_b", "hypothesis", "sentence_b", "text2", "text_2", "question2", "question_2",
    "2_string", "string2", "s2", "sent2",
];
#[rustfmt::skip]
const LABEL_NAMES: &[&str] = &[
    "label", "labels", "sentiment", "class", "category", "target", "y", "polarity", "gold_label",
    "emotion", "intent", "topic", "label_text", "tag", "is_duplicate", "is_paraphrase", "quality",
];

/// Guesses the [`ColumnMap`]. By name first (case, spaces, dashes and `#` ignored): text from
/// `text`, `sentence`, `sentence1`, `review`, `content`, `question`, `#1 String`, `question1`, …;
/// label from `label`, `labels`, `sentiment`, `class`, `category`, `target`, `y`, …; a second
/// text from `sentence2`, `text_b`, `hypothesis`, `#2 String`, `question2`, … when that column
/// also holds text. Else by content: the label is the
/// column with the fewest distinct short values (at most 50, at most half the rows), the text
/// the column with the longest average length; a column named as the second text is never
/// guessed to be the label. A table of one column is unlabeled text.
pub fn guess_columns(table: &Table) -> ColumnMap {
    let names: Vec<String> = table.columns.iter().map(|c| normalise_name(&c.replace('#', ""))).collect();
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
    // The second text is chosen by its name before any label is guessed by content: in a file
    // of a few rows, short second texts look like labels, but their header says what they are.
    let text_pair = if table.has_header {
        by_name(PAIR_NAMES, &[Some(text), named_label].into_iter().flatten().collect::<Vec<_>>())
            .filter(|&j| stats.get(j).is_some_and(|s| s.text_like()))
    } else {
        None
    };
    let label = named_label.or_else(|| {
        (0..stats.len())
            .filter(|&j| j != text && Some(j) != text_pair && stats[j].label_like())
            // Fewest distinct values, but a constant column only when nothing else fits.
            .min_by_key(|&j| (stats[j].distinct < 2, stats[j].distinct, j))
    });
    ColumnMap { text, text_pair, label }
}

/// What the first [`SAMPLE_ROWS`] rows hold in one column (also used by
/// [`guess_pair_columns`](super::guess_pair_columns)).
#[derive(Debug, Default)]
pub(super) struct ColumnStats {
    /// Non-empty cells.
    pub(super) cells: usize,
    /// Their mean length in characters.
    pub(super) mean_chars: f32,
    /// Distinct values, counted up to 51.
    pub(super) distinct: usize,
}

impl ColumnStats {
    pub(super) fn label_like(&self) -> bool {
        self.cells > 0
            && self.distinct <= 50
            && (self.distinct * 2 <= self.cells || self.cells < 4)
            && self.mean_chars <= 30.0
    }
    /// Long or varied cells. Fewer than 4 cells say too little to tell (as in
    /// [`label_like`](Self::label_like)): any non-empty column then passes.
    fn text_like(&self) -> bool {
        self.cells > 0 && (self.mean_chars >= 8.0 || self.distinct * 2 > self.cells || self.cells < 4)
    }
}

pub(super) fn column_stats(table: &Table) -> Vec<ColumnStats> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::test_util::table;

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
    fn a_column_named_as_the_second_text_is_the_pair_in_a_file_of_a_few_rows() {
        // Two or three short second texts look like labels by content (few rows, few
        // characters); their header says they are the pair.
        let pairs = ColumnMap { text: 0, text_pair: Some(1), label: None };
        let t = table("sentence1,sentence2\nwhere is the cat sleeping,the cat is asleep on the sofa\nwhere is the cat sleeping,the bus leaves at nine\n", None);
        assert_eq!(guess_columns(&t), pairs);
        let t = table("sentence1,sentence2\nIs it raining?,Yes.\nIs it cold?,No.\nIs it late?,Yes.\n", None);
        assert_eq!(guess_columns(&t), pairs);
        // The same short second text twice is still a pair, not a constant label.
        let t = table("premise,hypothesis\nA man sleeps.,Yes.\nA dog barks.,Yes.\n", None);
        assert_eq!(guess_columns(&t), pairs);
        // An empty second-text column is no pair: every row would be skipped.
        let t = table("sentence1,sentence2,label\nA good film.,,pos\nA bad film.,,neg\n", None);
        assert_eq!(guess_columns(&t), ColumnMap { text: 0, text_pair: None, label: Some(2) });
    }

    #[test]
    fn a_named_label_beside_named_pairs_stays_the_label() {
        let nli = ColumnMap { text: 0, text_pair: Some(1), label: Some(2) };
        let t = table("sentence1,sentence2,label\nWhere is the tower?,In Paris.,answer\nWhere is the tower?,It is tall.,unrelated\n", None);
        assert_eq!(guess_columns(&t), nli);
        let t = table("premise,hypothesis,label\nA man sleeps.,A person rests.,entailment\nA man sleeps.,He runs.,contradiction\nA dog barks.,It is loud.,neutral\n", None);
        assert_eq!(guess_columns(&t), nli);
        let t = table("gold_label\tsentence1\tsentence2\nentailment\tA man sleeps.\tA person rests.\nneutral\tA dog barks.\tIt is hungry.\n", None);
        assert_eq!(guess_columns(&t), ColumnMap { text: 1, text_pair: Some(2), label: Some(0) });
    }

    #[test]
    fn pair_files_are_guessed_as_pairs() {
        // MSR's MRPC as shipped (rows written for this test).
        let t = table("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t702876\t702977\tThe firm raised its forecast on Monday.\tOn Monday the firm raised its outlook.\n0\t2108705\t2108831\tShares fell 3 percent.\tThe market closed higher on Friday.\n1\t1330381\t1330521\tHe resigned in May.\tHe stepped down in May.\n0\t3344667\t3344648\tThe vote was delayed.\tRain fell all day in the city.\n", Some("msr_paraphrase_train.txt"));
        assert_eq!(guess_columns(&t), ColumnMap { text: 3, text_pair: Some(4), label: Some(0) });
        // Quora's question pairs.
        let t = table("id,qid1,qid2,question1,question2,is_duplicate\n0,1,2,How do I learn Rust?,What is the best way to learn Rust?,1\n1,3,4,Why is the sky blue?,How tall is Everest?,0\n", None);
        assert_eq!(guess_columns(&t), ColumnMap { text: 3, text_pair: Some(4), label: Some(5) });
    }

    #[test]
    fn small_files_without_pair_names_keep_their_guesses() {
        // No pair name: the answer column is no second text, the named label stays the label.
        let t = table("question,answer,label\nWhere is the tower?,In Paris.,yes\nWhere is the tower?,It is tall.,no\n", None);
        assert_eq!(guess_columns(&t), ColumnMap { text: 0, text_pair: None, label: Some(2) });
        let t = table("text,label\nA warm and funny film,pos\nDull,neg\n", None);
        assert_eq!(guess_columns(&t), ColumnMap { text: 0, text_pair: None, label: Some(1) });
        // Without a header, the short column of a small file is the label, by content.
        let t = table("I loved every minute of it,positive\nNever again,negative\n", None);
        assert!(!t.has_header);
        assert_eq!(guess_columns(&t), ColumnMap { text: 0, text_pair: None, label: Some(1) });
    }
}
