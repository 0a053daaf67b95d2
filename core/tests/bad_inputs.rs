//! The bad-input corpus (`tests/bad_inputs/`, written by `scripts/make_bad_inputs.py`): every
//! broken data file, checkpoint and awkward text goes through the same path the page uses, and
//! must end as `expected.json` says: refused with a message naming the problem, or accepted
//! (with the expected warning). A panic anywhere fails the test with the file's name.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use bertbench_core::burn::prelude::Device;
use bertbench_core::bert::checkpoint::{self, CheckpointFiles};
use bertbench_core::data;
use bertbench_core::tokenizer::BertTokenizer;

#[derive(serde::Deserialize)]
struct Expected {
    outcome: String,
    message: String,
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/bad_inputs")
}

/// What the page's data path makes of a file: `Err(message)` when it refuses it, or the
/// warnings and skipped-row reasons of an accepted one.
fn load_data(bytes: &[u8], name: &str) -> Result<Vec<String>, String> {
    let table = data::parse_table(bytes, Some(name)).map_err(|e| e.to_string())?;
    let map = data::guess_columns(&table);
    let dataset = data::to_examples(&table, &map).map_err(|e| e.to_string())?;
    let lengths: Vec<usize> = dataset.examples.iter().map(|e| e.text.split_whitespace().count() + 2).collect();
    let report = data::validate(&dataset, &lengths, 128, 2);
    if !report.errors.is_empty() {
        return Err(report.errors.join(" "));
    }
    let mut notes: Vec<String> = table.decoded.iter().map(|d| format!("the file was {d}")).collect();
    notes.extend(report.warnings.clone());
    notes.extend(dataset.skipped.iter().map(|s| format!("skipped line {}: {}", s.line, s.reason)));
    Ok(notes)
}

fn load_checkpoint(folder: &Path) -> Result<Vec<String>, String> {
    let read = |f: &str| std::fs::read(folder.join(f)).ok();
    let files = CheckpointFiles {
        config_json: read("config.json").ok_or("no config.json")?,
        weights: read("model.safetensors").ok_or("no model.safetensors")?,
        tokenizer_json: read("tokenizer.json"),
        vocab_txt: read("vocab.txt"),
    };
    let bert = checkpoint::load(files, &Device::flex()).map_err(|e| e.to_string())?;
    Ok(bert.report.skipped.clone())
}

fn encode_text(tokenizer: &BertTokenizer, bytes: &[u8]) -> Result<Vec<String>, String> {
    let text = String::from_utf8(bytes.to_vec()).map_err(|e| e.to_string())?;
    let encoded = tokenizer.encode(&text).map_err(|e| e.to_string())?;
    assert!(encoded.tokens.len() <= 512, "more than 512 tokens");
    Ok(encoded.truncated_from.map(|n| format!("truncated from {n} tokens")).into_iter().collect())
}

#[test]
fn every_bad_input_gets_its_message_and_nothing_panics() {
    let root = corpus();
    let expected: BTreeMap<String, Expected> =
        serde_json::from_slice(&std::fs::read(root.join("expected.json")).expect("expected.json")).expect("expected.json parses");
    assert!(expected.len() >= 40, "the corpus has only {} inputs", expected.len());
    let control = std::fs::read(root.join("checkpoints/valid_control/vocab.txt")).unwrap();
    let tokenizer = BertTokenizer::from_vocab_txt(&control, true, 512).unwrap();

    let mut failures = Vec::new();
    for (name, want) in &expected {
        let path = root.join(name);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            if name.starts_with("checkpoints/") {
                load_checkpoint(&path)
            } else {
                let bytes = std::fs::read(&path).unwrap();
                if name.starts_with("text/") { encode_text(&tokenizer, &bytes) } else { load_data(&bytes, name) }
            }
        }));
        let said = match &outcome {
            Ok(Err(message)) => format!("refused: {message}"),
            Ok(Ok(notes)) => format!("accepted: {}", notes.join(" | ")),
            Err(_) => "panicked".into(),
        };
        let problem = match (outcome, want.outcome.as_str()) {
            (Err(_), _) => Some("panicked".to_string()),
            (Ok(Err(message)), "refused") => (!message.to_lowercase().contains(&want.message.to_lowercase()) || message.trim().is_empty())
                .then(|| format!("refused with {message:?}, which does not mention {:?}", want.message)),
            (Ok(Ok(notes)), "accepted") => {
                let all = notes.join(" | ").to_lowercase();
                (!all.contains(&want.message.to_lowercase())).then(|| format!("accepted, but no note mentions {:?}: {notes:?}", want.message))
            }
            (Ok(Err(message)), _) => Some(format!("refused ({message}) but should be accepted")),
            (Ok(Ok(notes)), _) => Some(format!("accepted ({notes:?}) but should be refused")),
        };
        println!("{name}: {} ({said})", problem.as_deref().unwrap_or("as expected"));
        if let Some(p) = problem {
            failures.push(format!("{name}: {p}"));
        }
    }
    assert!(failures.is_empty(), "{} of {} inputs misbehaved:\n{}", failures.len(), expected.len(), failures.join("\n"));
}

#[test]
fn huge_files_are_handled_without_panicking() {
    // 100,000 rows: loads, every row usable.
    let mut big = String::from("text,label\n");
    for i in 0..100_000 {
        big.push_str(&format!("review number {i} is {},{}\n", if i % 2 == 0 { "good" } else { "bad" }, i % 2));
    }
    let notes = load_data(big.as_bytes(), "big.csv").expect("100k rows load");
    assert!(notes.iter().all(|n| !n.contains("skipped")), "{notes:?}");
    // One 10 MB field: loads, and the text is there to be truncated by the tokenizer.
    let field = "x".repeat(10_000_000);
    let csv = format!("text,label\n{field},a\nshort one,b\nshort two,a\nshort three,b\n");
    let table = data::parse_table(csv.as_bytes(), Some("wide.csv")).expect("10 MB field parses");
    let dataset = data::to_examples(&table, &data::guess_columns(&table)).unwrap();
    assert_eq!(dataset.examples[0].text.len(), 10_000_000);
}
