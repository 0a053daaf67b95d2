//! A training file of any bytes, under each name the page accepts: parsed, its columns guessed,
//! its rows turned into examples and validated. Errors are fine; a panic is a bug.
#![no_main]

use bertbench_core::data::{guess_columns, parse_table, to_examples, validate};
use libfuzzer_sys::fuzz_target;

const NAMES: [Option<&str>; 5] = [Some("data.csv"), Some("data.tsv"), Some("data.jsonl"), Some("data.txt"), None];

fuzz_target!(|input: &[u8]| {
    let Some((&pick, bytes)) = input.split_first() else { return };
    let Ok(table) = parse_table(bytes, NAMES[pick as usize % NAMES.len()]) else { return };
    let map = guess_columns(&table);
    if let Ok(dataset) = to_examples(&table, &map) {
        let lengths: Vec<usize> = dataset.examples.iter().map(|e| e.text.len() % 700).collect();
        let _ = validate(&dataset, &lengths, 128, 2);
        let _ = dataset.split(0.2, 7);
    }
});
