//! Multiple-choice questions from JSON Lines, in the layouts people have them in:
//!
//! - this project's own: `question` (or `context`), an `endings` list, `label` the right one's
//!   index;
//! - SWAG as `datasets` writes it: `sent1`, `sent2`, `ending0`…, `label` (each ending read as
//!   `sent2 + " " + ending`, as `run_swag.py` reads it; `startphrase` when there is no `sent1`);
//! - HellaSwag as `datasets` writes it: `ctx_a` and `ctx_b` (or `ctx`), an `endings` list, `label`
//!   as a string (`"3"`; the test split's empty label is refused: it has none);
//! - ARC and OpenBookQA as AI2 ships them: `question: {stem, choices: [{text, label}]}` and
//!   `answerKey`; as `datasets` writes them (and CommonsenseQA): `question` (or `question_stem`),
//!   `choices: {text: [...], label: [...]}`, `answerKey` (a choice's label: `"B"`, `"3"`).

use serde_json::{Map, Value};

use super::{ChoiceItem, label_of};
use crate::error::Error;

/// A non-empty string at `key`, trimmed; `Err` where `key` holds anything else.
fn text(o: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
        Some(_) => Err(format!("\"{key}\" must be a non-empty text")),
    }
}

/// A list of non-empty texts, named `what` in messages.
fn texts(list: &[Value], what: &str) -> Result<Vec<String>, String> {
    list.iter()
        .enumerate()
        .map(|(j, e)| match e {
            Value::String(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            _ => Err(format!("{what}[{j}] must be a non-empty text")),
        })
        .collect()
}

/// ARC's and the Hub's `choices`: a list of `{text, label}`, or `{text: [...], label: [...]}`.
/// Returns the texts and their labels.
fn choices(value: &Value, at: &str) -> Result<(Vec<String>, Vec<String>), String> {
    let label = |v: &Value| v.as_str().map_or_else(|| v.to_string(), |s| s.trim().to_string());
    match value {
        Value::Array(list) => list
            .iter()
            .enumerate()
            .map(|(j, c)| match (c.get("text"), c.get("label")) {
                (Some(Value::String(t)), Some(l)) if !t.trim().is_empty() => Ok((t.trim().to_string(), label(l))),
                _ => Err(format!("{at}[{j}] must be an object with a non-empty \"text\" and a \"label\"")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|pairs| pairs.into_iter().unzip()),
        Value::Object(o) => match (o.get("text"), o.get("label")) {
            (Some(Value::Array(t)), Some(Value::Array(l))) if t.len() == l.len() => Ok((texts(t, &format!("{at}.text"))?, l.iter().map(label).collect())),
            _ => Err(format!("{at} must hold lists \"text\" and \"label\" of one length")),
        },
        _ => Err(format!("{at} must be a list of choices")),
    }
}

/// The premise, the text put before each ending (SWAG's `sent2`, HellaSwag's `ctx_b`), the
/// endings, and their labels where the file names them (ARC's `A`, `B`, …).
type Parts = (String, Option<String>, Vec<String>, Option<Vec<String>>);

fn parts(o: &Map<String, Value>) -> Result<Parts, String> {
    // ARC and OpenBookQA as AI2 ships them: everything under `question`.
    if let Some(Value::Object(q)) = o.get("question") {
        let stem = text(q, "stem")?.ok_or("\"question\" is an object without a \"stem\"")?;
        let (endings, labels) = choices(q.get("choices").ok_or("\"question\" has no \"choices\"")?, "\"question\".\"choices\"")?;
        return Ok((stem, None, endings, Some(labels)));
    }
    let (premise, lead) = if let Some(sent1) = text(o, "sent1")? {
        (sent1, text(o, "sent2")?)
    } else if let Some(ctx_a) = text(o, "ctx_a")? {
        (ctx_a, text(o, "ctx_b")?)
    } else {
        let premise = ["question", "context", "question_stem", "ctx", "startphrase"]
            .iter()
            .map(|k| text(o, k))
            .find_map(|t| t.transpose())
            .transpose()?
            .ok_or("no premise: none of \"question\", \"context\", \"question_stem\", \"sent1\", \"ctx\"")?;
        (premise, None)
    };
    if let Some(value) = o.get("choices") {
        let (endings, labels) = choices(value, "\"choices\"")?;
        return Ok((premise, lead, endings, Some(labels)));
    }
    let endings = match o.get("endings") {
        Some(Value::Array(list)) => texts(list, "\"endings\"")?,
        Some(_) => return Err("\"endings\" must be a list of texts".into()),
        None => {
            let numbered: Vec<String> = (0..).map_while(|i| o.get(&format!("ending{i}"))).map(|v| v.as_str().unwrap_or_default().trim().to_string()).collect();
            if numbered.is_empty() {
                return Err("no \"endings\" (nor \"ending0\", \"ending1\", … or \"choices\")".into());
            }
            if let Some(j) = numbered.iter().position(String::is_empty) {
                return Err(format!("\"ending{j}\" must be a non-empty text"));
            }
            numbered
        }
    };
    Ok((premise, lead, endings, None))
}

/// The right ending's index: `label` (an index, or an index as text), else `answerKey` (one of
/// the choices' labels, or a letter A, B, … where they have none).
fn right(o: &Map<String, Value>, line: usize, endings: usize, labels: Option<&[String]>) -> crate::Result<usize> {
    let at = |what: String| Error::Input(format!("line {line}: {what}"));
    if let Some(key) = o.get("answerKey") {
        let key = key.as_str().map_or_else(|| key.to_string(), |s| s.trim().to_string());
        let letters: Vec<String> = (0..endings).map(|i| char::from(b'A' + i as u8).to_string()).collect();
        let names = labels.unwrap_or(&letters);
        return names.iter().position(|l| *l == key).ok_or_else(|| at(format!("\"answerKey\" {key:?} is none of the choices' labels ({})", names.join(", "))));
    }
    match o.get("label") {
        Some(Value::Number(n)) => label_of(line, "\"label\"", &n.to_string(), endings),
        Some(Value::String(s)) if s.trim().is_empty() => Err(at("\"label\" is empty: the question has no right ending (a test split without answers?)".into())),
        Some(Value::String(s)) if s.trim().parse::<usize>().is_ok() => label_of(line, "\"label\"", s, endings),
        Some(other) => Err(at(format!("\"label\" is {other}; it must be an ending's index (0 to {})", endings - 1))),
        None => Err(at("no \"label\" (nor \"answerKey\")".into())),
    }
}

/// Reads every non-blank line as one question; refuses, naming the line, what no layout above
/// reads.
pub(super) fn parse_jsonl(text: &str) -> crate::Result<Vec<ChoiceItem>> {
    let mut items = Vec::new();
    for (i, raw) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let line = i + 1;
        let at = |what: String| Error::Input(format!("line {line}: {what}"));
        let value: Value = serde_json::from_str(raw).map_err(|e| at(format!("not JSON ({e})")))?;
        let Value::Object(object) = value else { return Err(at("not a JSON object".into())) };
        let (premise, lead, endings, labels) = parts(&object).map_err(at)?;
        if endings.len() < 2 {
            return Err(at(format!("{} ending(s); a question needs at least two", endings.len())));
        }
        let label = right(&object, line, endings.len(), labels.as_deref())?;
        let choices = match lead {
            Some(lead) => endings.into_iter().map(|e| format!("{lead} {e}")).collect(),
            None => endings,
        };
        items.push(ChoiceItem { line, premise, choices, label });
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> crate::Result<ChoiceItem> {
        parse_jsonl(line).map(|mut items| items.remove(0))
    }

    /// Rows written for this test in each layout, as `datasets` and AI2 write them.
    #[test]
    fn swag_hellaswag_arc_openbookqa_and_commonsenseqa_lines_are_read() {
        let swag = read(r#"{"video-id": "anetv_x", "fold-ind": "3", "startphrase": "A man waves. He", "sent1": "A man waves.", "sent2": "He", "gold-source": "gold", "ending0": "smiles.", "ending1": "melts.", "ending2": "sings.", "ending3": "flies.", "label": 0}"#).unwrap();
        assert_eq!((swag.premise.as_str(), swag.choices[1].as_str(), swag.label), ("A man waves.", "He melts.", 0));
        let hella = read(r#"{"ind": 4, "activity_label": "Baking", "ctx_a": "She mixes the flour and eggs.", "ctx_b": "she", "ctx": "She mixes the flour and eggs. she", "endings": ["pours the batter into a tin.", "swims away.", "paints the oven.", "sings to the eggs."], "source_id": "x", "split": "val", "split_type": "indomain", "label": "0"}"#).unwrap();
        assert_eq!((hella.premise.as_str(), hella.choices[0].as_str(), hella.label), ("She mixes the flour and eggs.", "she pours the batter into a tin.", 0));
        let arc = read(r#"{"id": "Mercury_1", "question": {"stem": "Which gas do plants take in?", "choices": [{"text": "oxygen", "label": "A"}, {"text": "carbon dioxide", "label": "B"}, {"text": "helium", "label": "C"}, {"text": "neon", "label": "D"}]}, "answerKey": "B"}"#).unwrap();
        assert_eq!((arc.premise.as_str(), arc.choices.len(), arc.label), ("Which gas do plants take in?", 4, 1));
        let arc_digits = read(r#"{"id": "x", "question": {"stem": "Pick three.", "choices": [{"text": "one", "label": "1"}, {"text": "three", "label": "3"}]}, "answerKey": "3"}"#).unwrap();
        assert_eq!(arc_digits.label, 1);
        let obqa = read(r#"{"id": "7-980", "question_stem": "The sun is responsible for", "choices": {"text": ["puppies learning new tricks", "plants sprouting, blooming and wilting"], "label": ["A", "B"]}, "answerKey": "B"}"#).unwrap();
        assert_eq!((obqa.premise.as_str(), obqa.label), ("The sun is responsible for", 1));
        let csqa = read(r#"{"id": "1", "question": "Where would you put a plate after washing it?", "question_concept": "plate", "choices": {"label": ["A", "B", "C"], "text": ["cupboard", "ocean", "moon"]}, "answerKey": "A"}"#).unwrap();
        assert_eq!((csqa.choices.clone(), csqa.label), (vec!["cupboard".to_string(), "ocean".into(), "moon".into()], 0));
    }

    #[test]
    fn an_unlabelled_test_split_and_an_unknown_answer_key_are_refused_by_line() {
        let hella = r#"{"ctx_a": "A.", "ctx_b": "b", "endings": ["c", "d"], "label": ""}"#;
        assert!(read(hella).unwrap_err().to_string().contains("line 1: \"label\" is empty: the question has no right ending"));
        let arc = r#"{"question": {"stem": "Q?", "choices": [{"text": "a", "label": "A"}, {"text": "b", "label": "B"}]}, "answerKey": "E"}"#;
        let e = read(arc).unwrap_err().to_string();
        assert!(e.contains("\"answerKey\" \"E\" is none of the choices' labels (A, B)"), "{e}");
        let odd = r#"{"question_stem": "Q?", "choices": {"text": ["a", "b"], "label": ["A"]}, "answerKey": "A"}"#;
        assert!(read(odd).unwrap_err().to_string().contains("lists \"text\" and \"label\" of one length"));
        let swag = r#"{"sent1": "A.", "sent2": "B", "ending0": "c", "ending1": "", "label": 0}"#;
        assert!(read(swag).unwrap_err().to_string().contains("\"ending1\" must be a non-empty text"));
    }
}
