//! Annotation tools' exports, read as the tables they stand for.
//!
//! - Label Studio's JSON export: a list of tasks, each `{"data": {"text": …}, "annotations":
//!   [{"result": [{"from_name": "sentiment", "type": "choices", "value": {"choices":
//!   ["Positive"]}}], "was_cancelled": false}]}`: a row of the task's data fields and one column
//!   per choice control (`from_name`), holding its choices as a list (one is the classifier's
//!   label, several the multi-label mode's). The first annotation not cancelled is read; a task
//!   without one has an empty label, which skips it as unlabelled. (Its JSON-MIN export is a
//!   flat list of objects already; CSV and TSV exports are tables.)
//! - Label Studio's JSON export of a named-entity project: each task's text with the spans of
//!   its first annotation not cancelled (`"type": "labels"`, `"value": {"start", "end", "text",
//!   "labels": ["PER"]}`), read by the tagging task as character spans ([`label_studio_spans`]);
//!   its JSON-MIN export (`"label": [{"start", "end", "text", "labels"}]`) is such spans already.
//! - A one-label list (doccano's classification export: `"label": ["positive"]`) is read as its
//!   label by [`one_label`].

use serde_json::Value;

/// Whether `entries` (a JSON object's, in file order) are a Label Studio task.
fn is_task(entries: &[(String, Value)]) -> bool {
    let has = |key: &str, test: fn(&Value) -> bool| entries.iter().any(|(k, v)| k == key && test(v));
    has("data", Value::is_object) && has("annotations", Value::is_array)
}

/// A Label Studio task's fields as a flat record: its data's fields, then each choice
/// control's choice from its first annotation that was not cancelled (`""` where it has none);
/// anything else unchanged.
pub(super) fn label_studio(entries: Vec<(String, Value)>) -> Vec<(String, Value)> {
    if !is_task(&entries) {
        return entries;
    }
    let mut out: Vec<(String, Value)> = Vec::new();
    let mut annotations = Vec::new();
    for (key, value) in entries {
        match (key.as_str(), value) {
            ("data", Value::Object(data)) => out.extend(data),
            ("annotations", Value::Array(list)) => annotations = list,
            _ => {}
        }
    }
    let kept = annotations.iter().find(|a| !a.get("was_cancelled").and_then(Value::as_bool).unwrap_or(false));
    let results = kept.and_then(|a| a.get("result")).and_then(Value::as_array).cloned().unwrap_or_default();
    let controls = annotations
        .iter()
        .flat_map(|a| a.get("result").and_then(Value::as_array).cloned().unwrap_or_default())
        .filter(|r| r.get("type").and_then(Value::as_str) == Some("choices"))
        .filter_map(|r| r.get("from_name").and_then(Value::as_str).map(String::from));
    let mut names: Vec<String> = Vec::new();
    for name in controls {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    for name in names {
        let choices: Vec<Value> = results
            .iter()
            .filter(|r| r.get("from_name").and_then(Value::as_str) == Some(name.as_str()))
            .flat_map(|r| r.pointer("/value/choices").and_then(Value::as_array).cloned().unwrap_or_default())
            .collect();
        // Always a list, as a control may allow several: one label is the classifier's label
        // ([`one_label`]), several the multi-label mode's; none leaves the cell empty.
        let value = if choices.is_empty() { Value::String(String::new()) } else { Value::Array(choices) };
        out.push((name, value));
    }
    out
}

/// A Label Studio task of a named-entity project as `{"text", "entities"}`: its data's `text`
/// (else its first text field) and the `labels` results of its first annotation not cancelled.
/// `None` for an object that is no task; `Some(None)` for a task nobody annotated (unlabelled,
/// not a text without entities).
pub(super) fn label_studio_spans(o: &serde_json::Map<String, Value>) -> Option<Option<serde_json::Map<String, Value>>> {
    let entries: Vec<(String, Value)> = o.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    if !is_task(&entries) {
        return None;
    }
    let data = o.get("data").and_then(Value::as_object)?;
    let text = data.get("text").or_else(|| data.values().find(|v| v.is_string())).cloned().unwrap_or_default();
    let annotations = o.get("annotations").and_then(Value::as_array).cloned().unwrap_or_default();
    let Some(kept) = annotations.iter().find(|a| !a.get("was_cancelled").and_then(Value::as_bool).unwrap_or(false)) else { return Some(None) };
    let spans: Vec<Value> = kept
        .get("result")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter(|r| r.get("type").and_then(Value::as_str) == Some("labels")).filter_map(|r| r.get("value").cloned()).collect())
        .unwrap_or_default();
    Some(Some(serde_json::Map::from_iter([("text".to_string(), text), ("entities".to_string(), Value::Array(spans))])))
}

/// A label cell that is a JSON list of one label (doccano's `["positive"]`): that label;
/// `Err` with why for a list of none or of several (a multi-label row); `None` for any other
/// cell, which is its own label.
pub(super) fn one_label(cell: &str) -> Option<Result<String, String>> {
    let items = json_list(cell)?;
    Some(match items.as_slice() {
        [] => Err("the label list is empty".into()),
        [one] => Ok(one.clone()),
        many => Err(format!("{} labels ({}): a row of several labels is the multi-label mode's", many.len(), many.join(", "))),
    })
}

/// A JSON array cell's labels, each a string or a number; `None` when the cell is no such array.
pub(super) fn json_list(cell: &str) -> Option<Vec<String>> {
    let cell = cell.trim();
    if !cell.starts_with('[') {
        return None;
    }
    match serde_json::from_str::<serde_json::Value>(cell).ok()? {
        serde_json::Value::Array(items) => items
            .into_iter()
            .map(|v| match v {
                serde_json::Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
                serde_json::Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{guess_columns, guess_label_sets, to_examples, to_label_sets};
    use crate::data::test_util::table;

    /// Label Studio's JSON export of a text-classification project (tasks written for this
    /// test): the first annotation not cancelled is read, a task without one is skipped as
    /// unlabelled, and a multiple-choice control's ticks are a list the multi-label mode reads.
    #[test]
    fn label_studio_tasks_are_read_as_rows_of_their_data_and_choices() {
        let task = |id: u32, text: &str, annotations: &str| format!(r#"{{"id": {id}, "data": {{"text": "{text}"}}, "annotations": [{annotations}], "predictions": [], "meta": {{}}}}"#);
        let choice = |cancelled: bool, choices: &str| format!(r#"{{"id": 9, "was_cancelled": {cancelled}, "result": [{{"id": "a", "from_name": "sentiment", "to_name": "text", "type": "choices", "value": {{"choices": [{choices}]}}}}]}}"#);
        let export = format!(
            "[{}, {}, {}, {}]",
            task(1, "A warm and funny film", &choice(false, r#""Positive""#)),
            task(2, "Dull and far too long", &format!("{}, {}", choice(true, r#""Positive""#), choice(false, r#""Negative""#))),
            task(3, "Not annotated yet", ""),
            task(4, "Loved it, cried a bit", &choice(false, r#""Positive""#)),
        );
        let t = table(&export, Some("project-1-at-2026-12-03.json"));
        assert_eq!(t.columns, ["text", "sentiment"]);
        let map = guess_columns(&t);
        let data = to_examples(&t, &map).unwrap();
        let read: Vec<(&str, &str)> = data.examples.iter().map(|e| (e.text.as_str(), e.label.as_str())).collect();
        assert_eq!(read, [("A warm and funny film", "Positive"), ("Dull and far too long", "Negative"), ("Loved it, cried a bit", "Positive")]);
        assert_eq!((data.skipped.len(), data.skipped[0].line), (1, 3));

        let multi = format!("[{}, {}, {}]", task(1, "Rain on the train", &choice(false, r#""weather", "travel""#)), task(2, "Rain again", &choice(false, r#""weather""#)), task(3, "A late train", &choice(false, r#""travel""#)));
        let t = table(&multi, Some("export.json"));
        let data = to_label_sets(&t, &guess_label_sets(&t).expect("a list column")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(data.labels, ["travel", "weather"]);
        assert_eq!(data.examples.iter().map(|e| e.labels.clone()).collect::<Vec<_>>(), [vec![0, 1], vec![1], vec![0]]);
    }

    #[test]
    fn a_one_label_list_is_its_label_and_several_are_said() {
        assert_eq!(one_label(r#"["positive"]"#), Some(Ok("positive".into())));
        assert_eq!(one_label("positive"), None);
        assert!(one_label("[]").unwrap().unwrap_err().contains("empty"));
        assert!(one_label(r#"["a", "b"]"#).unwrap().unwrap_err().contains("2 labels (a, b)"));
        // doccano's classification export, as the classifier reads it.
        let t = table("{\"id\": 1, \"text\": \"A warm and funny film\", \"label\": [\"positive\"]}\n{\"id\": 2, \"text\": \"Dull and long\", \"label\": [\"negative\"]}\n{\"id\": 3, \"text\": \"Both at once\", \"label\": [\"negative\", \"positive\"]}\n", Some("all.jsonl"));
        let data = to_examples(&t, &guess_columns(&t)).unwrap();
        assert_eq!(data.labels, ["negative", "positive"]);
        assert_eq!(data.skipped.len(), 1);
        assert!(data.skipped[0].reason.to_string().contains("2 labels (negative, positive): a row of several labels"), "{:?}", data.skipped);
    }
}
