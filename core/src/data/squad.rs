//! Questions over passages in, for extractive question answering: SQuAD's JSON (v1.1, and v2.0
//! with unanswerable questions), JSON Lines as `datasets` writes SQuAD (`answers: {text: [...],
//! answer_start: [...]}`), and flat CSV/TSV tables (question, context, answer text, answer start).
//!
//! Every answer is checked against its passage: the text must be at its start (counted in
//! characters, as SQuAD counts; starts counted in UTF-8 bytes are recognised and said). An
//! empty answer list is a question without an answer, which a SQuAD v1.1 file cannot have.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::decode_named;
use super::table::parse_table;
use super::{DataError, Split};
use crate::rng::Rng;

/// The formats [`parse_qa`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QaFormat {
    /// SQuAD's nested JSON: `data → paragraphs → qas`.
    Squad,
    /// One question per JSON object (JSON Lines or a list).
    JsonLines,
    /// A CSV or TSV table with a header.
    Table,
}

impl QaFormat {
    /// Short label for the report.
    pub fn label(self) -> &'static str {
        match self {
            QaFormat::Squad => "SQuAD JSON",
            QaFormat::JsonLines => "JSON Lines, one question per line",
            QaFormat::Table => "table: question, context, answer, answer start",
        }
    }
}

/// One answer: its text and where it starts in the passage, in characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QaAnswer {
    /// The answer as written in the passage.
    pub text: String,
    /// Its first character's position in the passage (characters, not bytes).
    pub start: usize,
}

/// One question over its passage.
#[derive(Debug, Clone, PartialEq)]
pub struct QaItem {
    /// 1-based line of the file where it is (SQuAD JSON: its `id`'s line, where found).
    pub line: usize,
    /// Its id (the file's, or its line).
    pub id: String,
    /// The question.
    pub question: String,
    /// The passage the answer is in.
    pub context: String,
    /// Its answers (SQuAD's evaluation sets give several, training sets one). Empty: the
    /// passage does not answer it.
    pub answers: Vec<QaAnswer>,
}

/// A question-answering file, read.
#[derive(Debug, Clone, PartialEq)]
pub struct QaData {
    /// What it was read as.
    pub format: QaFormat,
    /// The questions, in file order.
    pub items: Vec<QaItem>,
    /// Whether questions may have no answer (SQuAD 2.0): some have none, or the file says v2.
    pub unanswerable: bool,
    /// How the file was decoded, starts recognised as bytes, answers found by their text.
    pub warnings: Vec<String>,
}

impl QaData {
    /// Distinct passages.
    pub fn contexts(&self) -> usize {
        self.items.iter().map(|q| q.context.as_str()).collect::<std::collections::BTreeSet<_>>().len()
    }

    /// Questions the passage does not answer.
    pub fn without_answer(&self) -> usize {
        self.items.iter().filter(|q| q.answers.is_empty()).count()
    }

    /// A random split by passage (seeded): every question of a passage lands on the same side,
    /// so validation never reads a passage trained on. About `valid_fraction` of the passages,
    /// at least one and at most all but one, go to validation.
    pub fn split(&self, valid_fraction: f32, seed: u64) -> Result<Split, DataError> {
        if !(valid_fraction > 0.0 && valid_fraction < 1.0) {
            return Err(DataError::BadFraction(valid_fraction));
        }
        let mut by_context: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, q) in self.items.iter().enumerate() {
            by_context.entry(&q.context).or_default().push(i);
        }
        let mut groups: Vec<Vec<usize>> = by_context.into_values().collect();
        groups.sort_by_key(|g| g[0]);
        let n = groups.len();
        if n < 2 {
            let message = "all questions are about one passage; training needs at least two (one to validate on)".to_string();
            return Err(DataError::Qa { place: "The file".into(), message });
        }
        Rng::new(seed).shuffle(&mut groups);
        let k = ((n as f32 * valid_fraction).round() as usize).clamp(1, n - 1);
        let mut valid: Vec<usize> = groups[..k].concat();
        let mut train: Vec<usize> = groups[k..].concat();
        valid.sort_unstable();
        train.sort_unstable();
        Ok(Split { train, valid })
    }
}

/// Reads a question-answering file: SQuAD JSON, JSON Lines (or a JSON list) of questions, or a
/// CSV/TSV table with a header. `file_name` helps tell a table's separator.
pub fn parse_qa(bytes: &[u8], file_name: Option<&str>) -> Result<QaData, DataError> {
    parse(bytes, file_name, true)
}

/// Reads questions to answer, as [`parse_qa`] does, except that a table needs no answer column
/// (its questions then have no gold answer to score against).
pub fn parse_questions(bytes: &[u8], file_name: Option<&str>) -> Result<QaData, DataError> {
    parse(bytes, file_name, false)
}

fn parse(bytes: &[u8], file_name: Option<&str>, answers_required: bool) -> Result<QaData, DataError> {
    let decoded = decode_named(bytes, file_name)?;
    let text = decoded.text.as_str();
    if text.trim().is_empty() {
        return Err(DataError::Empty);
    }
    let mut warnings: Vec<String> = decoded.note.iter().map(|n| format!("The file was {n}.")).collect();
    let (format, raw, v1) = match text.trim_start().chars().next() {
        Some('{') | Some('[') => read_json(text)?,
        _ => (QaFormat::Table, read_table(bytes, file_name, answers_required)?, false),
    };
    let mut items = Vec::with_capacity(raw.len());
    let (mut in_bytes, mut found) = (0, 0);
    for r in raw {
        let place = || match &r.id {
            Some(id) => format!("Line {} (question {id})", r.line),
            None => format!("Line {}", r.line),
        };
        let bad = |message: String| DataError::Qa { place: place(), message };
        if r.question.trim().is_empty() {
            return Err(bad("the question is empty".into()));
        }
        if r.context.trim().is_empty() {
            return Err(bad("the passage (context) is empty".into()));
        }
        if r.answers.is_empty() && v1 {
            return Err(bad(
                "this question has no answer, but the file is SQuAD v1.1, where every question is answered; \
                 mark questions without an answer with \"is_impossible\": true and set \"version\": \"v2.0\""
                    .into(),
            ));
        }
        let mut answers = Vec::with_capacity(r.answers.len());
        for (answer, start) in r.answers {
            if answer.trim().is_empty() {
                return Err(bad("an answer is empty; leave the answer list empty for a question without an answer".into()));
            }
            let start = match start {
                Some(s) => match locate(&r.context, &answer, s) {
                    Located::Chars(s) => s,
                    Located::Bytes(s) => {
                        in_bytes += 1;
                        s
                    }
                    Located::Elsewhere(there) => {
                        return Err(bad(format!("the answer {answer:?} is not at character {s} of its passage (there: {there:?})")));
                    }
                },
                None => match r.context.find(&answer) {
                    Some(b) => {
                        found += 1;
                        r.context[..b].chars().count()
                    }
                    None => return Err(bad(format!("the answer {answer:?} is not in its passage"))),
                },
            };
            answers.push(QaAnswer { text: answer, start });
        }
        let id = r.id.unwrap_or_else(|| format!("line {}", r.line));
        items.push(QaItem { line: r.line, id, question: r.question, context: r.context, answers });
    }
    if items.is_empty() {
        return Err(DataError::Empty);
    }
    if in_bytes > 0 {
        warnings.push(format!("{in_bytes} answer start(s) count UTF-8 bytes, not characters; they were read as bytes."));
    }
    if found > 0 {
        warnings.push(format!("{found} answer(s) had no start; each was taken where its text first occurs in the passage."));
    }
    let unanswerable = !v1 && items.iter().any(|q| q.answers.is_empty());
    Ok(QaData { format, items, unanswerable, warnings })
}

/// A question as read, before its answers are checked.
struct Raw {
    line: usize,
    id: Option<String>,
    question: String,
    context: String,
    /// Text and start (characters) as written.
    answers: Vec<(String, Option<usize>)>,
}

enum Located {
    Chars(usize),
    /// The start counted UTF-8 bytes; as characters.
    Bytes(usize),
    /// What is at the start instead.
    Elsewhere(String),
}

fn locate(context: &str, answer: &str, start: usize) -> Located {
    let at: String = context.chars().skip(start).take(answer.chars().count()).collect();
    if at == answer {
        return Located::Chars(start);
    }
    if context.get(start..start + answer.len()) == Some(answer) {
        return Located::Bytes(context[..start].chars().count());
    }
    Located::Elsewhere(at)
}

/// SQuAD's nested JSON, or one question per object. Returns whether the file says v1.
fn read_json(text: &str) -> Result<(QaFormat, Vec<Raw>, bool), DataError> {
    let json_error = |line: usize, e: serde_json::Error| DataError::Json { line, message: e.to_string() };
    // One JSON document (SQuAD, or a list), else JSON Lines.
    let whole: Option<Value> = serde_json::from_str(text).ok();
    let objects: Vec<(usize, Value)> = match whole {
        Some(Value::Object(o)) if o.contains_key("data") => return read_squad(text, &o),
        Some(Value::Array(list)) => list.into_iter().enumerate().map(|(i, v)| (i + 1, v)).collect(),
        Some(v) => vec![(1, v)],
        None => {
            let mut items = Vec::new();
            for (i, l) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                items.push((i + 1, serde_json::from_str(l).map_err(|e| json_error(i + 1, e))?));
            }
            items
        }
    };
    let mut raw = Vec::with_capacity(objects.len());
    for (line, v) in objects {
        let bad = |message: String| DataError::Qa { place: format!("Line {line}"), message };
        let Value::Object(o) = v else { return Err(bad("not a JSON object".into())) };
        let question = string(&o, &["question", "query"]).ok_or_else(|| bad("no \"question\"".into()))?;
        let context = string(&o, &["context", "passage", "paragraph"]).ok_or_else(|| bad("no \"context\" (the passage)".into()))?;
        let answers = answers(&o).map_err(bad)?;
        let id = o.get("id").and_then(scalar);
        raw.push(Raw { line, id, question, context, answers });
    }
    Ok((QaFormat::JsonLines, raw, false))
}

fn read_squad(text: &str, doc: &Map<String, Value>) -> Result<(QaFormat, Vec<Raw>, bool), DataError> {
    let bad = |place: String, message: &str| DataError::Qa { place, message: message.into() };
    let Some(Value::Array(articles)) = doc.get("data") else {
        return Err(bad("The file".into(), "\"data\" is not a list of articles"));
    };
    let version = doc.get("version").and_then(scalar).unwrap_or_default();
    let mut raw = Vec::new();
    let mut any_impossible = false;
    let mut searched = 0;
    for (a, article) in articles.iter().enumerate() {
        let paragraphs = article.get("paragraphs").and_then(Value::as_array);
        let paragraphs = paragraphs.ok_or_else(|| bad(format!("Article {}", a + 1), "no \"paragraphs\" list"))?;
        for (p, paragraph) in paragraphs.iter().enumerate() {
            let place = format!("Article {}, paragraph {}", a + 1, p + 1);
            let context = paragraph.get("context").and_then(Value::as_str).ok_or_else(|| bad(place.clone(), "no \"context\""))?;
            let qas = paragraph.get("qas").and_then(Value::as_array).ok_or_else(|| bad(place.clone(), "no \"qas\" list"))?;
            for (q, qa) in qas.iter().enumerate() {
                let Value::Object(o) = qa else { return Err(bad(place.clone(), "a question is not an object")) };
                let id = o.get("id").and_then(scalar);
                // Line numbers: each id is searched for after the previous one.
                let line = id
                    .as_ref()
                    .and_then(|id| text[searched..].find(&format!("\"{id}\"")).map(|at| searched + at))
                    .map(|at| {
                        searched = at;
                        1 + text[..at].matches('\n').count()
                    })
                    .unwrap_or(1);
                let at = format!("{place}, question {}", q + 1);
                let question = string(o, &["question"]).ok_or_else(|| bad(at.clone(), "no \"question\""))?;
                let impossible = o.get("is_impossible").and_then(Value::as_bool).unwrap_or(false);
                any_impossible |= o.contains_key("is_impossible");
                let answers = if impossible { Vec::new() } else { answers(o).map_err(|m| bad(at.clone(), &m))? };
                raw.push(Raw { line, id, question, context: context.to_string(), answers });
            }
        }
    }
    let v1 = !any_impossible && !version.contains('2');
    Ok((QaFormat::Squad, raw, v1))
}

/// A table with a header: question, context, answer text and (optionally) answer start.
fn read_table(bytes: &[u8], file_name: Option<&str>, answers_required: bool) -> Result<Vec<Raw>, DataError> {
    let table = parse_table(bytes, file_name)?;
    let find = |names: &[&str]| table.columns.iter().position(|c| names.contains(&c.trim().to_lowercase().as_str()));
    let missing = |what: &str, names: &str| DataError::Qa {
        place: "The header".into(),
        message: format!("no {what} column (name it {names}); the columns are {:?}", table.columns),
    };
    let question = find(&["question", "query", "questions"]).ok_or_else(|| missing("question", "\"question\""))?;
    let context = find(&["context", "passage", "paragraph", "text"]).ok_or_else(|| missing("passage", "\"context\""))?;
    let answer = find(&["answer", "answer_text", "answer text", "answers"]);
    if answer.is_none() && answers_required {
        return Err(missing("answer", "\"answer\""));
    }
    let start = find(&["answer_start", "answer start", "start"]);
    let mut raw = Vec::with_capacity(table.rows.len());
    for r in &table.rows {
        let bad = |message: String| DataError::Qa { place: format!("Line {}", r.line), message };
        if let Some(e) = &r.error {
            return Err(bad(e.clone()));
        }
        let field = |i: usize| r.fields.get(i).map(|f| f.trim().to_string()).unwrap_or_default();
        let text = answer.map(field).unwrap_or_default();
        let answers = if text.is_empty() {
            Vec::new()
        } else {
            let start = match start.map(field).filter(|s| !s.is_empty()) {
                Some(s) => Some(s.parse::<usize>().map_err(|_| bad(format!("the answer start {s:?} is not a whole number")))?),
                None => None,
            };
            // Not trimmed: the answer must match the passage as written.
            let text = answer.and_then(|a| r.fields.get(a)).cloned().unwrap_or_default();
            vec![(text, start)]
        };
        let context = r.fields.get(context).cloned().unwrap_or_default();
        raw.push(Raw { line: r.line, id: None, question: field(question), context, answers });
    }
    Ok(raw)
}

fn string(o: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| o.get(*k)?.as_str().map(str::to_string))
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A question's answers: SQuAD's list of `{text, answer_start}`, `datasets`' columns
/// `{text: [...], answer_start: [...]}`, or flat `answer` and `answer_start` fields.
fn answers(o: &Map<String, Value>) -> Result<Vec<(String, Option<usize>)>, String> {
    let start_of = |v: Option<&Value>| -> Result<Option<usize>, String> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_u64().map(|s| Some(s as usize)).ok_or_else(|| format!("the answer start {v} is not a whole number")),
        }
    };
    match o.get("answers").or_else(|| o.get("answer")) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(text)) if text.is_empty() => Ok(Vec::new()),
        Some(Value::String(text)) => Ok(vec![(text.clone(), start_of(o.get("answer_start"))?)]),
        Some(Value::Array(list)) => list
            .iter()
            .map(|a| match a {
                Value::Object(a) => {
                    let text = a.get("text").and_then(Value::as_str).ok_or("an answer has no \"text\"")?;
                    Ok((text.to_string(), start_of(a.get("answer_start"))?))
                }
                Value::String(text) => Ok((text.clone(), None)),
                _ => Err("an answer is neither an object nor a text".to_string()),
            })
            .collect(),
        Some(Value::Object(cols)) => {
            let texts = cols.get("text").and_then(Value::as_array).ok_or("\"answers\" has no \"text\" list")?;
            let starts = cols.get("answer_start").and_then(Value::as_array);
            if starts.is_some_and(|s| s.len() != texts.len()) {
                return Err("\"answers\" has not as many starts as texts".into());
            }
            texts
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let text = t.as_str().ok_or("an answer text is not a string")?;
                    Ok((text.to_string(), start_of(starts.and_then(|s| s.get(i)))?))
                })
                .collect()
        }
        Some(other) => Err(format!("\"answers\" is {other}, not a list")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SQUAD: &str = r#"{"version": "1.1", "data": [{"title": "Cats", "paragraphs": [
        {"context": "The cat sat on the mat. Tom fed it.", "qas": [
            {"id": "q1", "question": "Where did the cat sit?", "answers": [{"text": "on the mat", "answer_start": 12}]},
            {"id": "q2", "question": "Who fed the cat?", "answers": [{"text": "Tom", "answer_start": 24}, {"text": "Tom", "answer_start": 24}]}
        ]},
        {"context": "Dogs bark at night.", "qas": [
            {"id": "q3", "question": "When do dogs bark?", "answers": [{"text": "at night", "answer_start": 10}]}
        ]}
    ]}]}"#;

    #[test]
    fn squad_json_is_read_with_every_answer_and_its_line() {
        let d = parse_qa(SQUAD.as_bytes(), Some("train.json")).unwrap();
        assert_eq!(d.format, QaFormat::Squad);
        assert_eq!(d.items.len(), 3);
        assert!(!d.unanswerable);
        assert_eq!(d.contexts(), 2);
        assert_eq!(d.items[1].answers.len(), 2);
        assert_eq!(d.items[0].answers[0], QaAnswer { text: "on the mat".into(), start: 12 });
        assert_eq!((d.items[0].line, d.items[2].line), (3, 7));
        assert_eq!(d.items[2].id, "q3");
    }

    #[test]
    fn an_answer_start_that_points_elsewhere_is_refused_with_its_line() {
        let bad = SQUAD.replace("\"answer_start\": 12", "\"answer_start\": 4");
        let err = parse_qa(bad.as_bytes(), None).unwrap_err().to_string();
        assert!(err.contains("Line 3 (question q1)") && err.contains("not at character 4") && err.contains("cat sat on"), "{err}");
    }

    #[test]
    fn a_question_without_answer_is_refused_in_v1_and_read_in_v2() {
        let none = SQUAD.replace(r#"[{"text": "at night", "answer_start": 10}]"#, "[]");
        let err = parse_qa(none.as_bytes(), None).unwrap_err().to_string();
        assert!(err.contains("question q3") && err.contains("v1.1"), "{err}");
        let v2 = none.replace("\"1.1\"", "\"v2.0\"");
        let d = parse_qa(v2.as_bytes(), None).unwrap();
        assert!(d.unanswerable);
        assert_eq!(d.without_answer(), 1);
        // SQuAD 2.0 marks them, and keeps "plausible" answers that are not answers.
        let marked = SQUAD.replace(
            r#""answers": [{"text": "at night", "answer_start": 10}]"#,
            r#""answers": [], "is_impossible": true, "plausible_answers": [{"text": "Dogs", "answer_start": 0}]"#,
        );
        let d = parse_qa(marked.as_bytes(), None).unwrap();
        assert!(d.unanswerable && d.items[2].answers.is_empty());
    }

    #[test]
    fn json_lines_as_datasets_writes_squad() {
        let text = concat!(
            r#"{"id": "a", "context": "Café au lait is hot.", "question": "What is hot?", "answers": {"text": ["Café au lait"], "answer_start": [0]}}"#,
            "\n",
            r#"{"id": "b", "context": "Le café est chaud.", "question": "Quoi?", "answers": {"text": ["chaud"], "answer_start": [12]}}"#,
            "\n",
            r#"{"id": "c", "context": "Nothing here.", "question": "Why?", "answers": {"text": [], "answer_start": []}}"#,
        );
        let d = parse_qa(text.as_bytes(), Some("squad.jsonl")).unwrap();
        assert_eq!(d.format, QaFormat::JsonLines);
        assert_eq!(d.items[1].answers[0].start, 12);
        assert!(d.unanswerable);
        // A start counted in bytes ("é" is two) is recognised and said.
        let bytes = text.replace("[12]", "[13]");
        let d = parse_qa(bytes.as_bytes(), None).unwrap();
        assert_eq!(d.items[1].answers[0].start, 12);
        assert!(d.warnings.iter().any(|w| w.contains("bytes")), "{:?}", d.warnings);
    }

    #[test]
    fn a_table_with_or_without_answer_starts() {
        let csv = "question,context,answer,answer_start\nWho fed it?,\"The cat sat. Tom fed it.\",Tom,13\nWhy?,Nothing here.,,\n";
        let d = parse_qa(csv.as_bytes(), Some("qa.csv")).unwrap();
        assert_eq!(d.format, QaFormat::Table);
        assert_eq!(d.items[0].answers[0].start, 13);
        assert!(d.items[1].answers.is_empty() && d.unanswerable);
        let found = "question\tcontext\tanswer\nWho fed it?\tThe cat sat. Tom fed it.\tTom\n";
        let d = parse_qa(found.as_bytes(), Some("qa.tsv")).unwrap();
        assert_eq!(d.items[0].answers[0].start, 13);
        assert!(d.warnings.iter().any(|w| w.contains("first occurs")));
        let err = parse_qa(b"question,passage,label\na,b,c\n", Some("qa.csv")).unwrap_err().to_string();
        assert!(err.contains("no answer column"), "{err}");
        // Questions to answer need none.
        let d = parse_questions(b"question,passage\nWho?,Tom fed it.\n", Some("ask.csv")).unwrap();
        assert!(d.items[0].answers.is_empty());
        let err = parse_qa(b"question,context,answer\nWho?,The cat sat.,Tom\n", Some("qa.csv")).unwrap_err().to_string();
        assert!(err.contains("Line 2") && err.contains("not in its passage"), "{err}");
    }

    #[test]
    fn the_built_in_example_reads_whole() {
        let d = parse_qa(include_bytes!("../../../public/examples/questions.json"), Some("questions.json")).unwrap();
        assert_eq!(d.format, QaFormat::Squad);
        assert!(d.items.len() >= 300 && d.unanswerable && d.warnings.is_empty(), "{} {:?}", d.items.len(), d.warnings);
        assert_eq!(d.contexts(), 80);
        let none = d.without_answer();
        assert!(none * 20 > d.items.len() && none * 5 < d.items.len(), "{none} of {}", d.items.len());
    }

    #[test]
    fn split_keeps_a_passages_questions_together() {
        let d = parse_qa(SQUAD.as_bytes(), None).unwrap();
        let s = d.split(0.5, 1).unwrap();
        let side = |i: usize| s.valid.contains(&i);
        assert_eq!(side(0), side(1));
        assert_ne!(side(0), side(2));
        assert_eq!(s.train.len() + s.valid.len(), 3);
    }
}
