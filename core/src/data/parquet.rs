//! Parquet in, as the Hub's dataset viewer and `datasets` hand it out
//! (`train-00000-of-00001.parquet`): every row becomes one JSON Lines object in the file's
//! column order, nested lists and structs as JSON (SQuAD's `answers`, a tagger's `tokens`), so
//! each task reads it with its JSON Lines reader.
//!
//! Integer class labels get their names from the features `datasets` keeps in the file's
//! schema metadata (the `huggingface` key: a `ClassLabel`'s `names`, for a column such as
//! `label`, or for each item of a list such as `ner_tags`); `-1`, `datasets`' "no label",
//! becomes null, which the readers count as unlabelled. Pages compressed with snappy (the Hub's
//! and pyarrow's default), zstd (polars'), gzip or LZ4 are read; brotli and LZO are refused by
//! name. Read with the `parquet` crate's record reader.

use bytes::Bytes;
use parquet::basic::Compression;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use serde_json::Value;

use super::DataError;
use super::features::{feature_names as class_names, name_classes};

/// A Parquet file as JSON Lines text, and what was read, for the report.
pub(super) fn to_json_lines(bytes: &[u8]) -> Result<(String, String), DataError> {
    if bytes.len() < 12 || !bytes.ends_with(b"PAR1") {
        return Err(DataError::Parquet("the file is cut short: a Parquet file ends with its footer, and this one has none (did the download finish?)".into()));
    }
    let reader = SerializedFileReader::new(Bytes::copy_from_slice(bytes)).map_err(|e| DataError::Parquet(format!("its footer does not read: {e}")))?;
    let meta = reader.metadata();
    let codecs = codecs(meta);
    if let Some(refused) = codecs.iter().find(|c| matches!(c.as_str(), "brotli" | "lzo")) {
        return Err(DataError::Parquet(format!(
            "its pages are compressed with {refused}, which this page does not read; write it with snappy, zstd or gzip (pyarrow's and pandas' compression=\"snappy\", the default)"
        )));
    }
    let features = meta
        .file_metadata()
        .key_value_metadata()
        .into_iter()
        .flatten()
        .find(|kv| kv.key == "huggingface")
        .and_then(|kv| kv.value.as_deref())
        .and_then(|v| serde_json::from_str::<Value>(v).ok())
        .and_then(|v| v.pointer("/info/features").cloned());
    let mut named: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut rows = 0usize;
    for row in reader.get_row_iter(None).map_err(|e| DataError::Parquet(e.to_string()))? {
        let row = row.map_err(|e| DataError::Parquet(format!("row {}: {e}", rows + 1)))?;
        text.push('{');
        for (i, (name, field)) in row.get_column_iter().enumerate() {
            let mut value = json_of(field);
            if let Some(names) = features.as_ref().and_then(|f| f.get(name)).and_then(class_names) {
                if name_classes(&mut value, &names) && !named.contains(name) {
                    named.push(name.clone());
                }
            }
            if i > 0 {
                text.push_str(", ");
            }
            text.push_str(&Value::String(name.clone()).to_string());
            text.push_str(": ");
            text.push_str(&value.to_string());
        }
        text.push_str("}\n");
        rows += 1;
        if text.len() > super::MAX_FILE_BYTES {
            return Err(DataError::TooLarge { bytes: text.len() });
        }
    }
    if rows == 0 {
        return Err(DataError::Empty);
    }
    let mut note = format!("read from Parquet ({rows} rows, {})", if codecs.is_empty() { "no pages".to_string() } else { codecs.join(" and ") });
    if !named.is_empty() {
        note.push_str(&format!("; the class names of {} came from the features `datasets` stored in it", named.join(", ")));
    }
    Ok((text, note))
}

/// A field as JSON, as `Field::to_json_value` gives it, except that a 32-bit float keeps its
/// own shortest digits (an STS-B score 4.8, not 4.800000190734863), in lists and structs too.
fn json_of(field: &Field) -> Value {
    match field {
        Field::Float(f) => f.to_string().parse::<f64>().ok().and_then(serde_json::Number::from_f64).map_or(Value::Null, Value::Number),
        Field::ListInternal(list) => Value::Array(list.elements().iter().map(json_of).collect()),
        Field::Group(row) => Value::Object(row.get_column_iter().map(|(name, f)| (name.clone(), json_of(f))).collect()),
        other => other.to_json_value(),
    }
}

/// The compression of every column chunk, named once each, in the order met.
fn codecs(meta: &parquet::file::metadata::ParquetMetaData) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for group in meta.row_groups() {
        for column in group.columns() {
            let name = match column.compression() {
                Compression::UNCOMPRESSED => "uncompressed",
                Compression::SNAPPY => "snappy",
                Compression::GZIP(_) => "gzip",
                Compression::ZSTD(_) => "zstd",
                Compression::LZ4 | Compression::LZ4_RAW => "lz4",
                Compression::BROTLI(_) => "brotli",
                Compression::LZO => "lzo",
            };
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A file with a text column and an integer `label` whose `ClassLabel` names are in the
    /// `huggingface` metadata, as `datasets` writes it, compressed with `compression`.
    fn labelled_file(compression: Compression) -> Vec<u8> {
        use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
        use parquet::file::metadata::KeyValue;
        use parquet::file::properties::WriterProperties;
        use parquet::file::writer::SerializedFileWriter;
        use std::sync::Arc;
        let schema = Arc::new(parquet::schema::parser::parse_message_type("message schema { REQUIRED BYTE_ARRAY text (UTF8); REQUIRED INT64 label; }").unwrap());
        let features = r#"{"info": {"features": {"text": {"dtype": "string", "_type": "Value"}, "label": {"names": ["neg", "pos"], "_type": "ClassLabel"}}}}"#;
        let props = WriterProperties::builder().set_compression(compression).set_key_value_metadata(Some(vec![KeyValue::new("huggingface".into(), features.to_string())])).build();
        let mut out = Vec::new();
        let mut writer = SerializedFileWriter::new(&mut out, schema, Arc::new(props)).unwrap();
        let mut group = writer.next_row_group().unwrap();
        let mut column = group.next_column().unwrap().unwrap();
        let texts: Vec<ByteArray> = ["a \"warm\" film", "dull", "unlabelled"].iter().map(|t| ByteArray::from(*t)).collect();
        column.typed::<ByteArrayType>().write_batch(&texts, None, None).unwrap();
        column.close().unwrap();
        let mut column = group.next_column().unwrap().unwrap();
        column.typed::<Int64Type>().write_batch(&[1, 0, -1], None, None).unwrap();
        column.close().unwrap();
        group.close().unwrap();
        writer.close().unwrap();
        out
    }

    #[test]
    fn a_32_bit_float_keeps_its_own_digits_in_lists_too() {
        assert_eq!(json_of(&Field::Float(4.8)), json!(4.8));
        assert_eq!(json_of(&Field::Double(0.1)), json!(0.1));
        assert_eq!(json_of(&Field::Str("x".into())), json!("x"));
    }

    #[test]
    fn rows_become_json_lines_in_column_order_with_class_names() {
        for (compression, said) in [(Compression::SNAPPY, "snappy"), (Compression::ZSTD(Default::default()), "zstd"), (Compression::GZIP(Default::default()), "gzip"), (Compression::UNCOMPRESSED, "uncompressed")] {
            let (text, note) = to_json_lines(&labelled_file(compression)).unwrap();
            assert_eq!(text, "{\"text\": \"a \\\"warm\\\" film\", \"label\": \"pos\"}\n{\"text\": \"dull\", \"label\": \"neg\"}\n{\"text\": \"unlabelled\", \"label\": null}\n");
            assert_eq!(note, format!("read from Parquet (3 rows, {said}); the class names of label came from the features `datasets` stored in it"));
        }
        // Brotli is refused by name: this build cannot write it, so the browser test
        // (`tests/e2e/parquet.test.mjs`) checks that with a file pyarrow wrote.
    }

    /// Every reader sees the rows: a table through `parse_table`, with the names as labels.
    #[test]
    fn a_parquet_file_reads_as_a_table_and_a_misnamed_one_is_said_to_be_what_it_is() {
        let table = crate::data::parse_table(&labelled_file(Compression::SNAPPY), Some("train-00000-of-00001.parquet")).unwrap();
        assert_eq!(table.columns, ["text", "label"]);
        assert_eq!(table.rows.iter().map(|r| r.fields[1].as_str()).collect::<Vec<_>>(), ["pos", "neg", ""]);
        assert!(table.decoded.unwrap().starts_with("read from Parquet (3 rows, snappy)"));
        let refused = |bytes: &[u8]| crate::data::parse_table(bytes, Some("train.parquet")).unwrap_err().to_string();
        assert!(refused(b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 9\n").contains("is a Git LFS pointer"));
        assert!(refused(b"<!DOCTYPE html><html><body>Sign in</body></html>").contains("is a web page (HTML)"));
        assert!(refused(b"text,label\nfine,pos\n").contains("not Parquet (a Parquet file starts with the bytes PAR1)"));
    }

    #[test]
    fn a_file_cut_short_is_said_to_be() {
        let err = to_json_lines(b"PAR1\x15\x04\x15\x10\x15\x14L\x15\x02\x15\x00").unwrap_err().to_string();
        assert!(err.contains("cut short"), "{err}");
    }
}
