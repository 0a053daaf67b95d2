//! Tagged text in, for token tagging (named entities, chunks, parts of speech): CoNLL-style
//! columns (a word and its tag per line, a blank line between sentences) and JSON Lines (`tokens`
//! and `tags` lists, or a `text` with character spans) → sentences of words with IOB2 tags.
//!
//! Tags are checked: `O`, `B-TYPE` (an entity's first word) and `I-TYPE` (its next words).
//! BIOES/BILOU files are converted (`S-`/`U-` → `B-`, `E-`/`L-` → `I-`: the same spans), and an
//! `I-` that starts an entity (the IOB1 convention, or a slip) is repaired to `B-`; each with a
//! warning. Any other tag is refused with its line. Tags without a `B-`/`I-` prefix (parts of
//! speech, chunk labels written plainly) are read as they are, with no entity spans.

use std::collections::BTreeSet;

use serde_json::Value;

use super::DataError;
use super::decode::decode;
use crate::rng::Rng;

/// The formats [`parse_tagged`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaggedFormat {
    /// A word and its tag per line (tag in the last column), sentences separated by blank lines.
    Conll,
    /// JSON Lines with a list of words and a list of tags.
    JsonTokens,
    /// JSON Lines with a text and entity spans by character offsets.
    JsonSpans,
}

impl TaggedFormat {
    /// Short label for the report.
    pub fn label(self) -> &'static str {
        match self {
            TaggedFormat::Conll => "CoNLL columns (word and tag per line)",
            TaggedFormat::JsonTokens => "JSON Lines, tokens + tags",
            TaggedFormat::JsonSpans => "JSON Lines, text + entity spans",
        }
    }
}

/// One sentence: words and their tags, as many of each.
#[derive(Debug, Clone, PartialEq)]
pub struct TaggedSentence {
    /// 1-based line of the file where it starts.
    pub line: usize,
    /// The words.
    pub words: Vec<String>,
    /// One tag per word, IOB2 after repair.
    pub tags: Vec<String>,
}

/// A tagged file, read.
#[derive(Debug, Clone, PartialEq)]
pub struct TaggedData {
    /// What it was read as.
    pub format: TaggedFormat,
    /// The sentences, in file order.
    pub sentences: Vec<TaggedSentence>,
    /// Every tag a model of this data predicts: `O` first, then `B-` and `I-` of each entity
    /// type (both, even where the file has only one), then any plain tags, each group sorted.
    pub tags: Vec<String>,
    /// What was converted or repaired, and how the file was decoded, for the report.
    pub warnings: Vec<String>,
}

impl TaggedData {
    /// The entity types (`PER`, `LOC`, …), sorted.
    pub fn entity_types(&self) -> Vec<String> {
        self.tags.iter().filter_map(|t| t.strip_prefix("B-")).map(str::to_string).collect()
    }

    /// Each tag's id in [`tags`](Self::tags), per sentence.
    pub fn tag_ids(&self) -> Vec<Vec<usize>> {
        self.sentences
            .iter()
            .map(|s| s.tags.iter().map(|t| self.tags.iter().position(|x| x == t).expect("every tag is listed")).collect())
            .collect()
    }

    /// A random split of the sentences (seeded: the same inputs give the same split):
    /// `round(n × valid_fraction)` sentences, at least one and at most `n - 1`, for validation.
    pub fn split(&self, valid_fraction: f32, seed: u64) -> Result<super::Split, DataError> {
        if !(valid_fraction > 0.0 && valid_fraction < 1.0) {
            return Err(DataError::BadFraction(valid_fraction));
        }
        let n = self.sentences.len();
        if n < 2 {
            return Err(DataError::Tagged { line: 1, message: format!("the file has {n} sentence; training needs at least two (one to validate on)") });
        }
        let mut order: Vec<usize> = (0..n).collect();
        Rng::new(seed).shuffle(&mut order);
        let k = ((n as f32 * valid_fraction).round() as usize).clamp(1, n - 1);
        let (mut valid, mut train) = (order[..k].to_vec(), order[k..].to_vec());
        valid.sort_unstable();
        train.sort_unstable();
        Ok(super::Split { train, valid })
    }
}

/// Reads a tagged file: JSON when its first non-blank character is `{` or `[`, CoNLL columns
/// otherwise. Text encodings and gzip as [`decode`] reads them.
pub fn parse_tagged(bytes: &[u8]) -> Result<TaggedData, DataError> {
    let decoded = decode(bytes)?;
    let text = decoded.text.as_str();
    if text.trim().is_empty() {
        return Err(DataError::Empty);
    }
    // JSON starts with `{` or `[`; so may a CoNLL file whose first word is a bracket, which
    // is read as CoNLL when it does not parse as JSON.
    let (format, mut sentences, unannotated) = match text.trim_start().chars().next() {
        Some('{') | Some('[') => match parse_json(text) {
            Err(DataError::Json { .. }) if looks_like_conll(text) => (TaggedFormat::Conll, parse_conll(text)?, Vec::new()),
            other => other?,
        },
        _ => (TaggedFormat::Conll, parse_conll(text)?, Vec::new()),
    };
    if sentences.is_empty() && !unannotated.is_empty() {
        return Err(DataError::Tagged { line: unannotated[0], message: format!("none of the file's {} Label Studio tasks has an annotation (or each was cancelled): there is nothing to learn from yet", unannotated.len()) });
    }
    if sentences.is_empty() {
        return Err(DataError::Empty);
    }
    let mut warnings: Vec<String> = decoded.note.into_iter().map(|n| format!("The file was {n}.")).collect();
    if !unannotated.is_empty() {
        warnings.push(format!(
            "{} Label Studio task(s) nobody annotated (or whose annotations were all cancelled) were left out: {}.",
            unannotated.len(),
            lines_named(&unannotated)
        ));
    }
    let mut converted = None;
    let mut repaired: Option<(usize, usize)> = None;
    let mut prefixed = false;
    let mut plain = false;
    for s in &mut sentences {
        for (i, tag) in s.tags.iter_mut().enumerate() {
            let line = if format == TaggedFormat::Conll { s.line + i } else { s.line };
            let (scheme, kind) = read_tag(tag).map_err(|message| DataError::Tagged { line, message })?;
            match scheme {
                Scheme::Outside => {}
                Scheme::Plain => plain = true,
                Scheme::Begin | Scheme::Inside => prefixed = true,
                Scheme::Single | Scheme::End => {
                    prefixed = true;
                    converted.get_or_insert(line);
                }
            }
            *tag = match scheme {
                Scheme::Outside => "O".into(),
                Scheme::Plain => kind.to_string(),
                Scheme::Begin | Scheme::Single => format!("B-{kind}"),
                Scheme::Inside | Scheme::End => format!("I-{kind}"),
            };
        }
        for i in 0..s.tags.len() {
            let Some(kind) = s.tags[i].strip_prefix("I-") else { continue };
            let continues = i > 0 && matches!(s.tags[i - 1].split_once('-'), Some(("B" | "I", k)) if k == kind);
            if !continues {
                let line = if format == TaggedFormat::Conll { s.line + i } else { s.line };
                let r = repaired.get_or_insert((0, line));
                r.0 += 1;
                s.tags[i] = format!("B-{kind}");
            }
        }
    }
    if prefixed && plain {
        let line = sentences.iter().find(|s| s.tags.iter().any(|t| t != "O" && !t.contains('-'))).map_or(1, |s| s.line);
        return Err(DataError::Tagged {
            line,
            message: "some tags have a B-/I- prefix and some (from this sentence on) have none; use one scheme for the whole file".into(),
        });
    }
    if let Some(line) = converted {
        warnings.push(format!("BIOES/BILOU tags (first at line {line}) were converted to BIO: S-/U- became B-, E-/L- became I-. The entities are the same."));
    }
    if let Some((n, line)) = repaired {
        warnings.push(format!(
            "{n} tag(s) were repaired (first at line {line}): an I- tag that starts an entity became B- (IOB1 files write entities this way; elsewhere it is a slip)."
        ));
    }
    let tags = tag_list(&sentences);
    Ok(TaggedData { format, sentences, tags, warnings })
}

#[derive(Clone, Copy, PartialEq)]
enum Scheme {
    Outside,
    Begin,
    Inside,
    Single,
    End,
    Plain,
}

/// A tag's scheme letter and entity type. Plain tags (no prefix) are their own type.
fn read_tag(tag: &str) -> Result<(Scheme, &str), String> {
    let tag = tag.trim();
    if tag.is_empty() {
        return Err("the tag is empty".into());
    }
    if tag == "O" {
        return Ok((Scheme::Outside, ""));
    }
    if let Some((prefix, kind)) = tag.split_once(['-', '_']).filter(|(p, _)| p.len() == 1) {
        let scheme = match prefix {
            "B" => Scheme::Begin,
            "I" => Scheme::Inside,
            "S" | "U" => Scheme::Single,
            "E" | "L" => Scheme::End,
            _ => return Err(format!("the tag “{tag}” is not BIO: entity tags are B-TYPE (an entity's first word) and I-TYPE (its next words), and O is outside any entity")),
        };
        if kind.is_empty() {
            return Err(format!("the tag “{tag}” has no entity type after its prefix (B-PER, I-LOC, …)"));
        }
        return Ok((scheme, kind));
    }
    if tag.chars().any(char::is_whitespace) {
        return Err(format!("the tag “{tag}” contains a space"));
    }
    Ok((Scheme::Plain, tag))
}

fn tag_list(sentences: &[TaggedSentence]) -> Vec<String> {
    let mut types = BTreeSet::new();
    let mut plain = BTreeSet::new();
    for tag in sentences.iter().flat_map(|s| &s.tags) {
        match tag.strip_prefix("B-").or_else(|| tag.strip_prefix("I-")) {
            Some(kind) => {
                types.insert(kind.to_string());
            }
            // A plain tag, which may hold a hyphen itself (the Penn Treebank's `-LRB-`).
            None if tag != "O" => {
                plain.insert(tag.clone());
            }
            None => {}
        }
    }
    let mut tags = vec!["O".to_string()];
    for kind in types {
        tags.push(format!("B-{kind}"));
        tags.push(format!("I-{kind}"));
    }
    tags.extend(plain);
    tags
}

/// Whether the first non-blank line is a word and a tag (two or more columns, no JSON quote).
fn looks_like_conll(text: &str) -> bool {
    text.lines().find(|l| !l.trim().is_empty()).is_some_and(|l| l.split_whitespace().count() >= 2 && !l.contains('"'))
}

fn parse_conll(text: &str) -> Result<Vec<TaggedSentence>, DataError> {
    let mut sentences = Vec::new();
    let mut current = TaggedSentence { line: 0, words: Vec::new(), tags: Vec::new() };
    let mut flush = |current: &mut TaggedSentence| {
        if !current.words.is_empty() {
            sentences.push(std::mem::replace(current, TaggedSentence { line: 0, words: Vec::new(), tags: Vec::new() }));
        }
    };
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with("-DOCSTART-") {
            flush(&mut current);
            continue;
        }
        // CoNLL-U style comments (`# sent_id = 3`) before a sentence.
        if current.words.is_empty() && trimmed.starts_with('#') && trimmed.contains(" = ") {
            continue;
        }
        let columns: Vec<&str> = if raw.contains('\t') { trimmed.split('\t').map(str::trim).collect() } else { trimmed.split_whitespace().collect() };
        if columns.len() < 2 || columns.last().is_some_and(|t| t.is_empty()) {
            return Err(DataError::Tagged {
                line,
                message: format!("“{}” has no tag column: each line needs a word and its tag, separated by a tab or a space, and a blank line between sentences", columns[0]),
            });
        }
        if current.words.is_empty() {
            current.line = line;
        }
        current.words.push(columns[0].to_string());
        current.tags.push(columns[columns.len() - 1].to_string());
    }
    flush(&mut current);
    Ok(sentences)
}

/// `line 4`, `lines 4, 9 and 12`, or the first few of many and how many more.
fn lines_named(lines: &[usize]) -> String {
    let shown: Vec<String> = lines.iter().take(5).map(usize::to_string).collect();
    match lines.len() {
        1 => format!("line {}", shown[0]),
        2..=5 => format!("lines {} and {}", shown[..shown.len() - 1].join(", "), shown[shown.len() - 1]),
        n => format!("lines {} and {} more", shown.join(", "), n - 5),
    }
}

/// JSON Lines (or one JSON list) of sentences, and the lines (items of a list) of Label Studio
/// tasks nobody annotated.
fn parse_json(text: &str) -> Result<(TaggedFormat, Vec<TaggedSentence>, Vec<usize>), DataError> {
    let items: Vec<(usize, Value)> = if text.trim_start().starts_with('[') {
        let list: Vec<Value> = serde_json::from_str(text).map_err(|e| DataError::Json { line: e.line(), message: e.to_string() })?;
        list.into_iter().enumerate().map(|(i, v)| (i + 1, v)).collect()
    } else {
        let mut items = Vec::new();
        for (i, l) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let v = serde_json::from_str(l).map_err(|e| DataError::Json { line: i + 1, message: e.to_string() })?;
            items.push((i + 1, v));
        }
        items
    };
    let mut format = None;
    let mut sentences = Vec::with_capacity(items.len());
    let mut unannotated = Vec::new();
    for (line, item) in items {
        let bad = |message: String| DataError::Tagged { line, message };
        let Value::Object(o) = item else { return Err(bad("not a JSON object".into())) };
        // A Label Studio task: its text and its annotation's spans; one nobody annotated is
        // unlabelled, not a text without entities, and is left out.
        let o = match super::annotations::label_studio_spans(&o) {
            None => o,
            Some(Some(spans)) => spans,
            Some(None) => {
                unannotated.push(line);
                continue;
            }
        };
        let words = ["tokens", "words"].iter().find_map(|k| o.get(*k));
        let this = if let Some(words) = words {
            let tags = ["tags", "ner_tags", "labels", "ner", "pos_tags", "chunk_tags"]
                .iter()
                .find_map(|k| o.get(*k))
                .ok_or_else(|| bad("has tokens but no tags (a list named “tags”, as long as “tokens”)".into()))?;
            let words = strings(words).map_err(|m| bad(format!("tokens: {m}")))?;
            let tags = strings(tags).map_err(|m| bad(format!("tags: {m}")))?;
            if words.len() != tags.len() {
                return Err(bad(format!("{} tokens but {} tags; every token needs one tag", words.len(), tags.len())));
            }
            if words.is_empty() {
                continue;
            }
            sentences.push(TaggedSentence { line, words, tags });
            TaggedFormat::JsonTokens
        } else if let Some(Value::String(text)) = o.get("text") {
            let spans = ["entities", "spans", "label", "labels"].iter().find_map(|k| o.get(*k)).cloned().unwrap_or(Value::Array(vec![]));
            let spans = read_spans(text, &spans).map_err(bad)?;
            let (words, tags) = words_of(text, &spans);
            if words.is_empty() {
                continue;
            }
            sentences.push(TaggedSentence { line, words, tags });
            TaggedFormat::JsonSpans
        } else {
            return Err(bad("needs either “tokens” and “tags” lists, or a “text” with “entities” (character spans)".into()));
        };
        if format.is_some_and(|f| f != this) {
            return Err(bad("mixes the two JSON layouts (tokens + tags, text + spans); use one".into()));
        }
        format = Some(this);
    }
    Ok((format.unwrap_or(TaggedFormat::JsonTokens), sentences, unannotated))
}

fn strings(v: &Value) -> Result<Vec<String>, String> {
    let Value::Array(items) = v else { return Err("not a list".into()) };
    items
        .iter()
        .map(|x| match x {
            Value::String(s) => Ok(s.clone()),
            Value::Number(n) => Err(format!(
                "the tags are numbers ({n}, …); this page needs their names (O, B-PER, I-PER, …). Add the dataset's README.md or dataset_info.json, which name them, or replace each number by its tag name"
            )),
            other => Err(format!("{other} is not a string")),
        })
        .collect()
}

/// An entity span: character range (Unicode scalar values, as Python counts) and type.
#[derive(Debug, Clone, PartialEq)]
struct Span {
    start: usize,
    end: usize,
    kind: String,
}

/// Spans as `[start, end, "TYPE"]` (doccano) or `{"start", "end", "label" | "type", "text"?}`
/// (Prodigy; Label Studio's with `"labels": ["TYPE"]`), checked against the text.
fn read_spans(text: &str, spans: &Value) -> Result<Vec<Span>, String> {
    let Value::Array(items) = spans else { return Err("the entities are not a list".into()) };
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    for item in items {
        let (start, end, kind, quoted) = match item {
            Value::Array(a) if a.len() == 3 => (a[0].as_u64(), a[1].as_u64(), a[2].as_str(), None),
            Value::Object(o) => (
                o.get("start").and_then(Value::as_u64),
                o.get("end").and_then(Value::as_u64),
                // Label Studio's spans name their type in a list of one (`"labels": ["PER"]`).
                ["label", "type", "entity"].iter().find_map(|k| o.get(*k)).and_then(Value::as_str).or_else(|| match o.get("labels").and_then(Value::as_array).map(Vec::as_slice) {
                    Some([one]) => one.as_str(),
                    _ => None,
                }),
                o.get("text").and_then(Value::as_str),
            ),
            _ => (None, None, None, None),
        };
        let (Some(start), Some(end), Some(kind)) = (start, end, kind) else {
            return Err(format!("the entity {item} is not [start, end, \"TYPE\"] or {{\"start\", \"end\", \"label\"}}"));
        };
        let (start, end) = (start as usize, end as usize);
        if start >= end || end > chars.len() {
            return Err(format!("the entity {item} does not fit the text ({} characters)", chars.len()));
        }
        let covered: String = chars[start..end].iter().collect();
        if let Some(q) = quoted.filter(|q| *q != covered) {
            return Err(format!("the entity {item} says “{q}”, but characters {start}..{end} of the text are “{covered}”"));
        }
        if covered.trim().is_empty() {
            return Err(format!("the entity {item} covers only spaces"));
        }
        out.push(Span { start, end, kind: kind.trim().to_string() });
    }
    out.sort_by_key(|s| (s.start, s.end));
    if let Some(w) = out.windows(2).find(|w| w[1].start < w[0].end) {
        return Err(format!("the entities at characters {}..{} and {}..{} overlap; each word belongs to at most one entity", w[0].start, w[0].end, w[1].start, w[1].end));
    }
    Ok(out)
}

/// A text's words as character ranges: split at whitespace, every punctuation mark or symbol a
/// word of its own (as BERT's pre-tokenizer splits), and also at each of `boundaries`.
pub fn split_words(text: &str, boundaries: &BTreeSet<usize>) -> Vec<(usize, usize)> {
    let mut words = Vec::new();
    let mut start = None;
    let mut n = 0;
    for (i, c) in text.chars().enumerate() {
        n = i + 1;
        if boundaries.contains(&i) {
            if let Some(s) = start.take() {
                words.push((s, i));
            }
        }
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                words.push((s, i));
            }
        } else if !c.is_alphanumeric() {
            if let Some(s) = start.take() {
                words.push((s, i));
            }
            words.push((i, i + 1));
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push((s, n));
    }
    words
}

/// The text's words (see [`split_words`], split at every span boundary too) and their BIO tags.
fn words_of(text: &str, spans: &[Span]) -> (Vec<String>, Vec<String>) {
    let chars: Vec<char> = text.chars().collect();
    let boundaries: BTreeSet<usize> = spans.iter().flat_map(|s| [s.start, s.end]).collect();
    let words = split_words(text, &boundaries);
    let mut tags = Vec::with_capacity(words.len());
    let mut open: Option<usize> = None;
    for &(s, e) in &words {
        let span = spans.iter().position(|x| x.start <= s && e <= x.end);
        tags.push(match span {
            Some(k) if open == Some(k) => format!("I-{}", spans[k].kind),
            Some(k) => format!("B-{}", spans[k].kind),
            None => "O".into(),
        });
        open = span;
    }
    (words.iter().map(|&(s, e)| chars[s..e].iter().collect()).collect(), tags)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(d: &TaggedData) -> Vec<Vec<&str>> {
        d.sentences.iter().map(|s| s.tags.iter().map(String::as_str).collect()).collect()
    }

    #[test]
    fn conll_columns_with_docstart_tabs_and_extra_columns() {
        let text = "-DOCSTART- -X- O O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\nGerman JJ B-NP B-MISC\n\nPeter\tB-PER\nBlackburn\tI-PER\n";
        let d = parse_tagged(text.as_bytes()).unwrap();
        assert_eq!(d.format, TaggedFormat::Conll);
        assert_eq!(d.sentences.len(), 2);
        assert_eq!(d.sentences[0].words, ["EU", "rejects", "German"]);
        assert_eq!((d.sentences[0].line, d.sentences[1].line), (3, 7));
        assert_eq!(tags(&d), [vec!["B-ORG", "O", "B-MISC"], vec!["B-PER", "I-PER"]]);
        assert_eq!(d.tags, ["O", "B-MISC", "I-MISC", "B-ORG", "I-ORG", "B-PER", "I-PER"]);
        assert_eq!(d.entity_types(), ["MISC", "ORG", "PER"]);
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        assert_eq!(d.tag_ids()[1], [5, 6]);
    }

    #[test]
    fn iob1_is_repaired_and_bioes_converted_with_warnings() {
        let d = parse_tagged(b"New I-LOC\nYork I-LOC\nis O\nnice I-MISC\n").unwrap();
        assert_eq!(tags(&d), [vec!["B-LOC", "I-LOC", "O", "B-MISC"]]);
        assert!(d.warnings[0].starts_with("2 tag(s) were repaired (first at line 1)"), "{:?}", d.warnings);
        let d = parse_tagged(b"Ann S-PER\nvisits O\nLos B-LOC\nAngeles E-LOC\n").unwrap();
        assert_eq!(tags(&d), [vec!["B-PER", "O", "B-LOC", "I-LOC"]]);
        assert!(d.warnings[0].contains("BIOES"), "{:?}", d.warnings);
    }

    #[test]
    fn bad_tags_and_missing_columns_name_their_line() {
        let e = parse_tagged(b"Ann B-PER\nsings\n").unwrap_err();
        assert_eq!(e.to_string(), "Line 2: “sings” has no tag column: each line needs a word and its tag, separated by a tab or a space, and a blank line between sentences.");
        let e = parse_tagged(b"Ann B-PER\n\nBob X-PER\n").unwrap_err();
        assert!(matches!(e, DataError::Tagged { line: 3, .. }) && e.to_string().contains("not BIO"), "{e}");
        let e = parse_tagged(b"Ann B-PER\nBob PER\n").unwrap_err();
        assert!(matches!(e, DataError::Tagged { line: 1, .. }) && e.to_string().contains("one scheme"), "{e}");
        let e = parse_tagged(b"Ann B-\n").unwrap_err();
        assert!(e.to_string().contains("no entity type"), "{e}");
    }

    #[test]
    fn plain_tags_such_as_parts_of_speech_are_kept() {
        let d = parse_tagged(b"The DET\ncat NOUN\nsat VERB\n( -LRB-\n").unwrap();
        assert_eq!(d.tags, ["O", "-LRB-", "DET", "NOUN", "VERB"]);
        assert!(d.entity_types().is_empty());
    }

    #[test]
    fn a_conll_file_whose_first_word_is_a_bracket_is_not_taken_for_json() {
        let d = parse_tagged(b"[ O\nAnn B-PER\n] O\n").unwrap();
        assert_eq!(d.format, TaggedFormat::Conll);
        assert_eq!(d.sentences[0].words, ["[", "Ann", "]"]);
    }

    #[test]
    fn json_lines_with_token_and_tag_lists() {
        let text = "{\"tokens\": [\"Ann\", \"sings\"], \"tags\": [\"B-PER\", \"O\"]}\n\n{\"words\": [\"Oslo\"], \"ner_tags\": [\"B-LOC\"]}\n";
        let d = parse_tagged(text.as_bytes()).unwrap();
        assert_eq!(d.format, TaggedFormat::JsonTokens);
        assert_eq!(tags(&d), [vec!["B-PER", "O"], vec!["B-LOC"]]);
        assert_eq!(d.sentences[1].line, 3);
        let e = parse_tagged(b"{\"tokens\": [\"a\", \"b\"], \"tags\": [\"O\"]}").unwrap_err();
        assert_eq!(e.to_string(), "Line 1: 2 tokens but 1 tags; every token needs one tag.");
        let e = parse_tagged(b"{\"tokens\": [\"a\"], \"ner_tags\": [3]}").unwrap_err();
        assert!(e.to_string().contains("the tags are numbers"), "{e}");
    }

    #[test]
    fn json_lines_with_text_and_character_spans() {
        let text = r#"{"text": "Ann Lee flew to São Paulo-based Acme.", "entities": [[0, 7, "PER"], {"start": 16, "end": 25, "label": "LOC", "text": "São Paulo"}, [32, 36, "ORG"]]}"#;
        let d = parse_tagged(text.as_bytes()).unwrap();
        assert_eq!(d.format, TaggedFormat::JsonSpans);
        let s = &d.sentences[0];
        assert_eq!(s.words, ["Ann", "Lee", "flew", "to", "São", "Paulo", "-", "based", "Acme", "."]);
        assert_eq!(s.tags, ["B-PER", "I-PER", "O", "O", "B-LOC", "I-LOC", "O", "O", "B-ORG", "O"]);
        let e = parse_tagged(br#"{"text": "Ann sings", "entities": [{"start": 0, "end": 3, "label": "PER", "text": "Bob"}]}"#).unwrap_err();
        assert!(e.to_string().contains("says “Bob”, but characters 0..3 of the text are “Ann”"), "{e}");
        let e = parse_tagged(br#"{"text": "Ann", "entities": [[0, 9, "PER"]]}"#).unwrap_err();
        assert!(e.to_string().contains("does not fit the text (3 characters)"), "{e}");
        let e = parse_tagged(br#"{"text": "Ann Lee", "entities": [[0, 7, "PER"], [4, 7, "PER"]]}"#).unwrap_err();
        assert!(e.to_string().contains("overlap"), "{e}");
    }

    /// Label Studio's exports of a named-entity project (written for this test): the JSON
    /// export's tasks (the first annotation not cancelled; a task nobody annotated left out) and
    /// the JSON-MIN export's flat spans read as the same sentences.
    #[test]
    fn label_studio_named_entity_exports_are_read_as_character_spans() {
        let span = |start: u32, end: u32, text: &str, label: &str| format!(r#"{{"start": {start}, "end": {end}, "text": "{text}", "labels": ["{label}"]}}"#);
        let result = |value: String| format!(r#"{{"id": "r", "from_name": "label", "to_name": "text", "type": "labels", "value": {value}}}"#);
        let task = |text: &str, annotations: String| format!(r#"{{"id": 1, "data": {{"text": "{text}"}}, "annotations": [{annotations}], "predictions": []}}"#);
        let json = format!(
            "[{}, {}, {}]",
            task("Ann flew to Oslo.", format!(r#"{{"was_cancelled": true, "result": []}}, {{"was_cancelled": false, "result": [{}, {}]}}"#, result(span(0, 3, "Ann", "PER")), result(span(12, 16, "Oslo", "LOC")))),
            task("Nobody yet.", String::new()),
            task("Rome sleeps.", format!(r#"{{"result": [{}]}}"#, result(span(0, 4, "Rome", "LOC")))),
        );
        let min = format!(r#"[{{"id": 1, "text": "Ann flew to Oslo.", "label": [{}, {}], "annotator": 1}}, {{"id": 3, "text": "Rome sleeps.", "label": [{}]}}]"#, span(0, 3, "Ann", "PER"), span(12, 16, "Oslo", "LOC"), span(0, 4, "Rome", "LOC"));
        for (file, left_out) in [(json, Some("1 Label Studio task(s) nobody annotated (or whose annotations were all cancelled) were left out: line 2.")), (min, None)] {
            let d = parse_tagged(file.as_bytes()).unwrap();
            assert_eq!(d.format, TaggedFormat::JsonSpans);
            let tags: Vec<&[String]> = d.sentences.iter().map(|s| s.tags.as_slice()).collect();
            assert_eq!(tags, [&["B-PER", "O", "O", "B-LOC", "O"][..], &["B-LOC", "O", "O"][..]]);
            assert_eq!(d.warnings.iter().find(|w| w.contains("Label Studio")).map(String::as_str), left_out);
        }
        // A project nobody has annotated yet is refused as such, not as an empty file.
        let none = format!("[{}, {}]", task("One.", String::new()), task("Two.", r#"{"was_cancelled": true, "result": []}"#.into()));
        let err = parse_tagged(none.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("none of the file's 2 Label Studio tasks has an annotation"), "{err}");
    }

    #[test]
    fn lines_are_named_briefly() {
        assert_eq!(lines_named(&[4]), "line 4");
        assert_eq!(lines_named(&[4, 9, 12]), "lines 4, 9 and 12");
        assert_eq!(lines_named(&[1, 2, 3, 4, 5, 6, 7]), "lines 1, 2, 3, 4, 5 and 2 more");
    }

    #[test]
    fn a_latin_1_conll_file_is_decoded_and_said() {
        let d = parse_tagged(b"Jos\xe9 B-PER\n").unwrap();
        assert_eq!(d.sentences[0].words, ["José"]);
        assert!(d.warnings[0].contains("Windows-1252"), "{:?}", d.warnings);
    }

    #[test]
    fn split_is_seeded_and_keeps_both_sides() {
        let d = parse_tagged("a O\n\nb O\n\nc O\n\nd O\n\ne O\n".as_bytes()).unwrap();
        let s = d.split(0.2, 7).unwrap();
        assert_eq!((s.train.len(), s.valid.len()), (4, 1));
        assert_eq!(s, d.split(0.2, 7).unwrap());
        let one = parse_tagged(b"a O\n").unwrap();
        assert!(one.split(0.2, 1).is_err());
    }
}
