//! The class names in `datasets`' features (its JSON form, as a Parquet file's metadata and
//! `dataset_info.json` keep them), and class ids replaced by them: shared by
//! [`super::parquet`] and [`super::class_names`].

use serde_json::Value;

/// A feature's class names in `datasets`' JSON form: a `ClassLabel`'s, or those of the
/// `ClassLabel` items of a list (`Sequence` or `List`, or a one-item JSON list in older files).
pub(super) fn feature_names(feature: &Value) -> Option<Vec<String>> {
    let class = match feature {
        Value::Array(items) if items.len() == 1 => &items[0],
        Value::Object(o) if matches!(o.get("_type").and_then(Value::as_str), Some("Sequence" | "List" | "LargeList")) => o.get("feature")?,
        other => other,
    };
    if class.get("_type").and_then(Value::as_str) != Some("ClassLabel") {
        return None;
    }
    class.get("names")?.as_array()?.iter().map(|n| n.as_str().map(str::to_string)).collect()
}

/// Replaces each class id in `value` (a number, or a list of them) by its name, `-1` by null;
/// whether any was named. An id past the names is left as it is, for the task to refuse.
pub(super) fn name_classes(value: &mut Value, names: &[String]) -> bool {
    match value {
        Value::Number(n) => match n.as_i64() {
            Some(-1) => {
                *value = Value::Null;
                false
            }
            Some(i) if (0..names.len() as i64).contains(&i) => {
                *value = Value::String(names[i as usize].clone());
                true
            }
            _ => false,
        },
        Value::Array(items) => items.iter_mut().fold(false, |any, v| name_classes(v, names) | any),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn class_names_are_read_from_each_form_datasets_writes() {
        let class = json!({"names": ["neg", "pos"], "_type": "ClassLabel"});
        assert_eq!(feature_names(&class), Some(vec!["neg".to_string(), "pos".to_string()]));
        for list in [json!({"feature": class, "_type": "Sequence"}), json!({"feature": class, "_type": "List"}), json!([class])] {
            assert_eq!(feature_names(&list).unwrap(), ["neg", "pos"], "{list}");
        }
        assert_eq!(feature_names(&json!({"dtype": "string", "_type": "Value"})), None);
    }

    #[test]
    fn ids_become_names_and_minus_one_no_label() {
        let names = vec!["O".to_string(), "B-PER".to_string()];
        let mut tags = json!([0, 1, 0]);
        assert!(name_classes(&mut tags, &names));
        assert_eq!(tags, json!(["O", "B-PER", "O"]));
        let mut none = json!(-1);
        assert!(!name_classes(&mut none, &names));
        assert_eq!(none, Value::Null);
        let mut past = json!(7);
        assert!(!name_classes(&mut past, &names));
        assert_eq!(past, json!(7));
    }
}
