//! Validation: a [`ValidationReport`] on a labeled [`Dataset`] before training: counts, duplicates,
//! imbalance, token lengths, errors and warnings.

use std::collections::HashMap;

use super::examples::{Dataset, count_reasons, summarise};

/// Summary of token lengths.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
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
#[derive(Debug, Clone, PartialEq)]
pub struct ValidationReport {
    /// Rows in the table: usable plus skipped.
    pub total_rows: usize,
    /// Rows that became examples.
    pub usable: usize,
    /// Skipped rows counted by kind ([`SkipReason::kind`]), in order of first appearance.
    ///
    /// [`SkipReason::kind`]: super::SkipReason::kind
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
    if let Some(first) = data.extra_fields.first() {
        warnings.push(extra_fields_note(&data.extra_fields, *first));
    }
    if let Some(first) = data.multiline.first() {
        warnings.push(format!(
            "{} row(s) hold a line break inside a quoted text (the first starts on line {first}); \
             each was read as one example. If a text should not span lines, a double quote (\") \
             in the file opens a quoted text that runs to the next one: remove it or double it.",
            data.multiline.len()
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

/// What the report says of a tab-separated file's rows with fields past its last column.
pub(super) fn extra_fields_note(lines: &[usize], first: usize) -> String {
    format!(
        "{} row(s) have fields past the last column (the first on line {first}); each was read by \
         its columns, and the fields past them were not read.",
        lines.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::test_util::{example, labeled};
    use crate::data::{Example, SkipReason, Skipped};

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
    fn rows_over_several_lines_are_reported() {
        let d = crate::data::test_util::dataset("text,label\n\"two\nlines\",pos\none line,neg\nagain,pos\nmore,neg\n", None);
        assert_eq!(d.multiline, [2]);
        let r = validate(&d, &[], 128, 1);
        assert_eq!(r.total_rows, 4, "the file's 5 data lines hold 4 rows");
        assert!(r.warnings.iter().any(|w| w.starts_with("1 row(s) hold a line break inside a quoted text (the first starts on line 2)")), "{:?}", r.warnings);
    }
}
