//! Class names for integer labels, from the features `datasets` describes a dataset with: a
//! Parquet file's schema metadata (read in [`super::parquet`]), or, for a JSON or CSV export
//! that holds the ids only, the files beside it: `dataset_info.json` (what `save_to_disk`
//! writes), `dataset_infos.json` (one entry per configuration) or a Hub repository's `README.md`,
//! whose YAML front matter has a `dataset_info` with each feature's `class_label` names.
//!
//! A `ClassLabel` column (`label`) or a list of them (`ner_tags`, a multi-label list) gets its
//! names in place of the ids; `-1`, `datasets`' "no label", becomes empty, which every reader
//! counts as unlabelled; an id past the names is left as it is, for the task to refuse.

use serde_json::Value;
use yaml_rust2::{Yaml, YamlLoader};

use super::DataError;
use super::features::{feature_names, name_classes};
use super::decode::decode_named;
use super::table::{delimiting, parse_delimited};

/// Each `ClassLabel` feature's names, and where they were read.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassNames {
    /// Each column's names, in the order the features list them.
    pub columns: Vec<(String, Vec<String>)>,
    /// The file they came from, with its configuration where it has several
    /// ("README.md, configuration default"), for the report.
    pub source: String,
}

/// A data file with its class ids named ([`ClassNames::apply`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Named {
    /// The file as UTF-8 text, in its own format (JSON Lines, a JSON array, CSV or TSV), each
    /// row on the line it had.
    pub bytes: Vec<u8>,
    /// The columns that had ids named, in the order of [`ClassNames::columns`].
    pub columns: Vec<String>,
}

impl ClassNames {
    /// Whether a file with this name may hold class names (so the page can tell it from data).
    pub fn is_info_file(file_name: &str) -> bool {
        let name = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name).to_ascii_lowercase();
        matches!(name.as_str(), "dataset_info.json" | "dataset_infos.json") || name.ends_with(".md")
    }

    /// Reads the names from a `dataset_info.json`, `dataset_infos.json` or a README with
    /// `dataset_info` front matter. Refuses a file that has none, saying what it holds.
    pub fn from_file(bytes: &[u8], file_name: &str) -> Result<Self, DataError> {
        let shown = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name).to_string();
        let text = std::str::from_utf8(bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes))
            .map_err(|_| DataError::ClassNames(format!("{shown} is not UTF-8 text")))?;
        let configs = if text.trim_start().starts_with('{') {
            json_configs(text).map_err(|e| DataError::ClassNames(format!("{shown} does not read as JSON: {e}")))?
        } else {
            readme_configs(text).map_err(|e| DataError::ClassNames(format!("{shown}: {e}")))?
        };
        // A repository with several configurations (GLUE's tasks) names each; "default" is
        // what `load_dataset` takes without one, else the first.
        let several = configs.len() > 1;
        let (config, columns) = configs
            .iter()
            .find(|(name, _)| name.as_deref() == Some("default"))
            .or_else(|| configs.iter().find(|(_, c)| !c.is_empty()))
            .cloned()
            .unwrap_or_default();
        if columns.is_empty() {
            return Err(DataError::ClassNames(format!(
                "{shown} names no class labels (no feature of type ClassLabel / class_label); the labels stay as the file writes them"
            )));
        }
        let source = match config {
            Some(config) if several => format!("{shown}, configuration {config}"),
            _ => shown,
        };
        Ok(Self { columns, source })
    }

    /// The names `datasets`' JSON features give (`{"label": {"names": [...], "_type":
    /// "ClassLabel"}}`), as a Parquet file's metadata and `dataset_info.json` hold them.
    pub fn from_features(features: &Value) -> Vec<(String, Vec<String>)> {
        features.as_object().into_iter().flatten().filter_map(|(name, f)| Some((name.clone(), feature_names(f)?))).collect()
    }

    /// The names of `column`, if it is one of the features.
    pub fn of(&self, column: &str) -> Option<&[String]> {
        self.columns.iter().find(|(c, _)| c == column).map(|(_, n)| n.as_slice())
    }

    /// A data file with the ids of the named columns replaced by their names. JSON Lines and
    /// JSON arrays keep their structure (a tagger's `ner_tags` list is named item by item); a
    /// CSV or TSV file with a header row is written again with the same delimiter, each row on
    /// its own line number. A file none of whose columns is named comes back with `columns`
    /// empty.
    pub fn apply(&self, bytes: &[u8], file_name: Option<&str>) -> Result<Named, DataError> {
        let text = decode_named(bytes, file_name)?.text;
        let name = file_name.map(|n| n.strip_suffix(".gz").or_else(|| n.strip_suffix(".GZ")).unwrap_or(n));
        let mut named = Vec::new();
        let out = match delimiting(&text, name) {
            None => self.apply_json(&text, &mut named),
            Some((format, delimiter, quoting)) => {
                let table = parse_delimited(&text, format, delimiter, quoting)?;
                self.apply_delimited(&text, table, delimiter, &mut named)?
            }
        };
        let columns = self.columns.iter().map(|(c, _)| c.clone()).filter(|c| named.contains(c)).collect();
        Ok(Named { bytes: out.into_bytes(), columns })
    }

    fn apply_json(&self, text: &str, named: &mut Vec<String>) -> String {
        let mut name_object = |object: &mut Ordered| {
            for (column, value) in &mut object.0 {
                if let Some(names) = self.of(column) {
                    if name_classes(value, names) && !named.contains(column) {
                        named.push(column.clone());
                    }
                }
            }
        };
        if text.trim_start().starts_with('[') {
            // A JSON array of records (`to_json(lines=False)`); a file that does not parse as
            // one is left for its task to report.
            return match serde_json::from_str::<Vec<Ordered>>(text) {
                Ok(mut items) => {
                    items.iter_mut().for_each(&mut name_object);
                    let items: Vec<String> = items.iter().map(Ordered::to_json).collect();
                    format!("[{}]\n", items.join(",\n"))
                }
                Err(_) => text.to_string(),
            };
        }
        let mut out = String::with_capacity(text.len());
        for line in text.split_inclusive('\n') {
            let body = line.trim_end_matches(['\n', '\r']);
            match serde_json::from_str::<Ordered>(body) {
                Ok(mut object) => {
                    name_object(&mut object);
                    out.push_str(&object.to_json());
                    out.push_str(&line[body.len()..]);
                }
                // Blank lines, a SQuAD-style single object over many lines, bad lines: as they are.
                Err(_) => out.push_str(line),
            }
        }
        out
    }

    fn apply_delimited(&self, text: &str, table: super::Table, delimiter: u8, named: &mut Vec<String>) -> Result<String, DataError> {
        let targets: Vec<(usize, &[String])> = if table.has_header {
            table.columns.iter().enumerate().filter_map(|(i, c)| Some((i, self.of(c)?))).collect()
        } else {
            Vec::new()
        };
        if targets.is_empty() {
            return Ok(text.to_string());
        }
        let mut out = csv_row(&table.columns, delimiter)?;
        let mut line = 2;
        for record in table.rows {
            while line < record.line {
                out.push(b'\n');
                line += 1;
            }
            let mut fields = record.fields;
            for &(i, names) in &targets {
                let Some(field) = fields.get_mut(i) else { continue };
                let mut value = match field.trim().parse::<i64>() {
                    Ok(id) => Value::from(id),
                    Err(_) => continue,
                };
                let was = name_classes(&mut value, names);
                *field = match value {
                    Value::String(s) => s,
                    Value::Null => String::new(),
                    _ => continue,
                };
                let column = &table.columns[i];
                if was && !named.contains(column) {
                    named.push(column.clone());
                }
            }
            let row = csv_row(&fields, delimiter)?;
            line += row.iter().filter(|&&b| b == b'\n').count();
            out.extend(row);
        }
        String::from_utf8(out).map_err(|e| DataError::ClassNames(e.to_string()))
    }
}

/// A JSON object with its keys in the file's order (serde_json's own map sorts them, and the
/// readers take the columns in the order the file has them).
struct Ordered(Vec<(String, Value)>);

impl Ordered {
    fn to_json(&self) -> String {
        let fields: Vec<String> = self.0.iter().map(|(k, v)| format!("{}: {v}", Value::String(k.clone()))).collect();
        format!("{{{}}}", fields.join(", "))
    }
}

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut fields = Vec::new();
                while let Some(field) = map.next_entry::<String, Value>()? {
                    fields.push(field);
                }
                Ok(Ordered(fields))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// One row written as CSV with `delimiter`, quoted where needed, ending in `\n`.
fn csv_row(fields: &[String], delimiter: u8) -> Result<Vec<u8>, DataError> {
    let failed = |e: String| DataError::ClassNames(format!("the file could not be written again with its names: {e}"));
    let mut writer = csv::WriterBuilder::new().delimiter(delimiter).terminator(csv::Terminator::Any(b'\n')).flexible(true).from_writer(Vec::new());
    writer.write_record(fields).map_err(|e| failed(e.to_string()))?;
    writer.into_inner().map_err(|e| failed(e.to_string()))
}

/// Each configuration's class names in a `dataset_info.json` (one `features` object) or a
/// `dataset_infos.json` (an object of configurations, each with its `features`).
fn json_configs(text: &str) -> Result<Vec<(Option<String>, Vec<(String, Vec<String>)>)>, serde_json::Error> {
    let value: Value = serde_json::from_str(text)?;
    if let Some(features) = value.get("features") {
        return Ok(vec![(value.get("config_name").and_then(Value::as_str).map(str::to_string), ClassNames::from_features(features))]);
    }
    Ok(value
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(config, info)| Some((Some(config.clone()), ClassNames::from_features(info.get("features")?))))
        .collect())
}

/// Each configuration's class names in a README's YAML front matter: `dataset_info` is one
/// configuration or a list of them, each with `features`, a list of `name` and `dtype` (a
/// `class_label` with `names` from id to name), or `sequence` / `list` of one.
fn readme_configs(text: &str) -> Result<Vec<(Option<String>, Vec<(String, Vec<String>)>)>, String> {
    let body = text.trim_start_matches('\u{feff}');
    let front = body
        .strip_prefix("---")
        .and_then(|rest| rest.split_once("\n---"))
        .map(|(front, _)| front)
        .ok_or("it has no YAML front matter (the block between --- lines at the top of a Hub dataset's README)")?;
    let docs = YamlLoader::load_from_str(front).map_err(|e| format!("its front matter does not read as YAML: {e}"))?;
    let info = docs.first().map(|d| &d["dataset_info"]).filter(|i| !i.is_badvalue()).ok_or("its front matter has no dataset_info")?;
    let configs = match info {
        Yaml::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    Ok(configs
        .into_iter()
        .map(|config| {
            let columns = config["features"]
                .as_vec()
                .into_iter()
                .flatten()
                .filter_map(|f| Some((scalar(&f["name"])?, yaml_names(f)?)))
                .collect();
            (scalar(&config["config_name"]), columns)
        })
        .collect())
}

/// A feature's class names in the README's form: `dtype: {class_label: {names: {'0': neg}}}`,
/// or a `sequence` / `list` of such.
fn yaml_names(feature: &Yaml) -> Option<Vec<String>> {
    for key in ["dtype", "sequence", "list", "feature"] {
        let inner = &feature[key];
        if let Some(names) = inner["class_label"]["names"].as_hash() {
            let mut pairs: Vec<(i64, String)> = names.iter().filter_map(|(k, v)| Some((scalar(k)?.parse().ok()?, scalar(v)?))).collect();
            pairs.sort();
            // The ids must be 0..n, each once, to be a list of names.
            return pairs.iter().enumerate().all(|(i, (id, _))| *id == i as i64).then(|| pairs.into_iter().map(|(_, n)| n).collect());
        }
        if inner.as_hash().is_some() {
            if let Some(names) = yaml_names(inner) {
                return Some(names);
            }
        }
    }
    None
}

fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const README: &str = "---\nlicense: mit\ndataset_info:\n  features:\n  - name: text\n    dtype: string\n  - name: label\n    dtype:\n      class_label:\n        names:\n          '0': neg\n          '1': pos\n  - name: ner_tags\n    sequence:\n      class_label:\n        names:\n          0: O\n          1: B-PER\n          2: I-PER\n  splits:\n  - name: train\n    num_examples: 3\n---\n# A dataset\n";

    fn names(pairs: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
        pairs.iter().map(|(c, n)| (c.to_string(), n.iter().map(|s| s.to_string()).collect())).collect()
    }

    #[test]
    fn a_readme_front_matter_gives_each_class_label_its_names() {
        let read = ClassNames::from_file(README.as_bytes(), "README.md").unwrap();
        assert_eq!(read.columns, names(&[("label", &["neg", "pos"]), ("ner_tags", &["O", "B-PER", "I-PER"])]));
        assert_eq!(read.source, "README.md");
        // datasets 4 writes `list:` where it wrote `sequence:`.
        let list = README.replace("    sequence:", "    list:");
        assert_eq!(ClassNames::from_file(list.as_bytes(), "README.md").unwrap().columns, read.columns);
    }

    #[test]
    fn several_configurations_take_default_else_the_first_and_say_which() {
        let two = "---\ndataset_info:\n- config_name: mrpc\n  features:\n  - name: label\n    dtype:\n      class_label:\n        names:\n          '0': not_equivalent\n          '1': equivalent\n- config_name: sst2\n  features:\n  - name: label\n    dtype:\n      class_label:\n        names:\n          '0': negative\n          '1': positive\n---\n";
        let read = ClassNames::from_file(two.as_bytes(), "README.md").unwrap();
        assert_eq!(read.columns, names(&[("label", &["not_equivalent", "equivalent"])]));
        assert_eq!(read.source, "README.md, configuration mrpc");
        let with_default = two.replace("config_name: sst2", "config_name: default");
        assert_eq!(ClassNames::from_file(with_default.as_bytes(), "README.md").unwrap().columns, names(&[("label", &["negative", "positive"])]));
    }

    #[test]
    fn dataset_info_json_in_both_forms_and_files_without_names_are_refused_by_cause() {
        let info = r#"{"description": "", "features": {"text": {"dtype": "string", "_type": "Value"}, "label": {"num_classes": 2, "names": ["neg", "pos"], "_type": "ClassLabel"}}}"#;
        assert_eq!(ClassNames::from_file(info.as_bytes(), "dataset_info.json").unwrap().columns, names(&[("label", &["neg", "pos"])]));
        let infos = format!(r#"{{"plain_text": {info}}}"#);
        assert_eq!(ClassNames::from_file(infos.as_bytes(), "dataset_infos.json").unwrap().columns, names(&[("label", &["neg", "pos"])]));
        let refused = |bytes: &str, name: &str| ClassNames::from_file(bytes.as_bytes(), name).unwrap_err().to_string();
        assert!(refused("# Just a README\n", "README.md").contains("no YAML front matter"));
        assert!(refused("---\nlicense: mit\n---\n", "README.md").contains("no dataset_info"));
        assert!(refused("---\ndataset_info:\n  features:\n  - name: text\n    dtype: string\n---\n", "README.md").contains("names no class labels"));
        assert!(refused("---\ndataset_info: [\n---\n", "README.md").contains("does not read as YAML"));
        assert!(refused("{\"features\": ", "dataset_info.json").contains("does not read as JSON"));
        // Ids that are not 0..n are not a list of names.
        let gap = README.replace("'1': pos", "'2': pos");
        assert_eq!(ClassNames::from_file(gap.as_bytes(), "README.md").unwrap().columns, names(&[("ner_tags", &["O", "B-PER", "I-PER"])]));
        assert!(ClassNames::is_info_file("data/README.md") && ClassNames::is_info_file("dataset_info.json") && !ClassNames::is_info_file("train.jsonl"));
    }

    #[test]
    fn json_lines_keep_their_lines_key_order_and_bad_lines() {
        let read = ClassNames::from_file(README.as_bytes(), "README.md").unwrap();
        let file = "{\"text\": \"a film\", \"label\": 1}\n\n{\"tokens\": [\"Ann\", \"ran\"], \"ner_tags\": [1, 0], \"label\": -1}\nnot json\r\n{\"text\": \"x\", \"label\": 9}\n";
        let named = read.apply(file.as_bytes(), Some("train.jsonl")).unwrap();
        let text = String::from_utf8(named.bytes).unwrap();
        assert_eq!(
            text,
            "{\"text\": \"a film\", \"label\": \"pos\"}\n\n{\"tokens\": [\"Ann\",\"ran\"], \"ner_tags\": [\"B-PER\",\"O\"], \"label\": null}\nnot json\r\n{\"text\": \"x\", \"label\": 9}\n"
        );
        assert_eq!(named.columns, ["label", "ner_tags"]);
        let array = read.apply(br#"[{"text": "a", "label": 0}, {"text": "b", "label": 1}]"#, Some("train.json")).unwrap();
        assert_eq!(String::from_utf8(array.bytes).unwrap(), "[{\"text\": \"a\", \"label\": \"neg\"},\n{\"text\": \"b\", \"label\": \"pos\"}]\n");
        let none = read.apply(b"{\"sentence\": \"a\", \"score\": 1}\n", None).unwrap();
        assert!(none.columns.is_empty());
    }

    #[test]
    fn csv_and_tsv_are_written_again_with_their_delimiter_on_the_same_lines() {
        let read = ClassNames::from_file(README.as_bytes(), "README.md").unwrap();
        let csv = "text,label\n\"a, warm \"\"film\"\"\",1\n\n\"split\nline\",0\ndull,-1\n";
        let named = read.apply(csv.as_bytes(), Some("train.csv")).unwrap();
        assert_eq!(String::from_utf8(named.bytes).unwrap(), "text,label\n\"a, warm \"\"film\"\"\",pos\n\n\"split\nline\",neg\ndull,\n");
        let table = crate::data::parse_table(&read.apply(csv.as_bytes(), Some("train.csv")).unwrap().bytes, Some("train.csv")).unwrap();
        assert_eq!(table.rows.iter().map(|r| (r.line, r.fields[1].as_str())).collect::<Vec<_>>(), [(2, "pos"), (4, "neg"), (6, "")]);
        let tsv = read.apply(b"label\ttext\n0\tsaid \"no\" twice\n", Some("train.tsv")).unwrap();
        let table = crate::data::parse_table(&tsv.bytes, Some("train.tsv")).unwrap();
        assert_eq!(table.rows[0].fields, ["neg", "said \"no\" twice"]);
        // No header, no column names to match: as it was.
        let bare = read.apply(b"a film,1\ndull,0\n", Some("train.csv")).unwrap();
        assert!(bare.columns.is_empty());
        assert_eq!(bare.bytes, b"a film,1\ndull,0\n");
    }
}
