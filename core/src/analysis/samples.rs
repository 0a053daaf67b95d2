//! Example texts the explorer ships with (written for this project), and small helpers for
//! choosing which texts a view shows.

use crate::data::Dataset;

/// At most `cap` example indices, the same number from each label where possible, in a fixed
/// order (so a view is reproducible).
pub fn balanced_sample(dataset: &Dataset, cap: usize) -> Vec<usize> {
    let ids = dataset.label_ids();
    let labels = dataset.labels.len().max(1);
    let mut by_label: Vec<Vec<usize>> = vec![Vec::new(); labels];
    for (i, &l) in ids.iter().enumerate() {
        by_label[l].push(i);
    }
    let mut out = Vec::new();
    let mut round = 0;
    while out.len() < cap && by_label.iter().any(|v| round < v.len()) {
        for v in &by_label {
            if let Some(&i) = v.get(round)
                && out.len() < cap
            {
                out.push(i);
            }
        }
        round += 1;
    }
    out.sort_unstable();
    out
}

/// A word with two senses and example sentences for each.
pub struct SensePreset {
    /// The ambiguous word.
    pub word: &'static str,
    /// `(sense, sentence)` pairs.
    pub sentences: &'static [(&'static str, &'static str)],
}

/// The word-sense demos.
pub const SENSES: &[SensePreset] = &[
    SensePreset {
        word: "bank",
        sentences: &[
            ("river", "We had a picnic on the bank of the river."),
            ("river", "The fisherman sat on the muddy bank all morning."),
            ("river", "Reeds grew thick along the bank of the stream."),
            ("river", "The canoe drifted slowly toward the far bank."),
            ("river", "Floodwater spilled over the bank after the storm."),
            ("river", "Otters dig their dens into the soft bank."),
            ("river", "She climbed the steep grassy bank to reach the path."),
            ("river", "Ducks nested on the bank beside the lake."),
            ("money", "I deposited my salary at the bank."),
            ("money", "The bank approved our loan for the house."),
            ("money", "He works as a cashier at a bank downtown."),
            ("money", "The bank raised its interest rates again."),
            ("money", "She opened a savings account at the local bank."),
            ("money", "Robbers broke into the bank vault overnight."),
            ("money", "The central bank cut rates to support the economy."),
            ("money", "Call the bank at once if your card is stolen."),
        ],
    },
    SensePreset {
        word: "die",
        sentences: &[
            ("death", "Many plants die in the first frost."),
            ("death", "Without water the fish will die."),
            ("death", "Old soldiers never die, they simply fade away."),
            ("death", "He was afraid he would die alone."),
            ("death", "Stars eventually die when they run out of fuel."),
            ("death", "Honey bees die soon after they sting."),
            ("death", "If nobody feeds it, the kitten could die."),
            ("death", "Languages die when children stop learning them."),
            ("dice", "Roll the die and move your piece forward."),
            ("dice", "She threw a six with the first die."),
            ("dice", "Each player rolls one die at the start of the game."),
            ("dice", "The die landed on three again."),
            ("dice", "A fair die gives every face the same chance."),
            ("dice", "He shook the die in a cup before throwing it."),
            ("dice", "The board game comes with a single wooden die."),
            ("dice", "The die rolled under the table and showed a four."),
        ],
    },
];

/// The map's default sentences: `[label] text`, four topics.
pub const TOPIC_SENTENCES: &str = "[animals] The cat curled up on the warm windowsill.
[animals] A dog barked at the passing mail carrier.
[animals] The horse galloped across the open field.
[animals] Two owls hooted in the oak tree at night.
[finance] The stock market fell sharply today.
[finance] Investors sold their shares before the report.
[finance] Interest rates rose for the third time this year.
[finance] The company reported record quarterly profits.
[sports] The striker scored in the final minute.
[sports] Our team won the championship after extra time.
[sports] She ran the marathon in under three hours.
[sports] The goalkeeper saved a penalty kick.
[food] Fresh bread is baking in the oven.
[food] He added garlic and basil to the tomato sauce.
[food] We ate noodles with a spicy peanut sauce.
[food] The soup needs more salt and pepper.";

/// Splits `[label] text` lines; lines without a leading `[label]` have no label. Blank lines
/// are dropped.
pub fn labeled_lines(input: &str) -> Vec<(Option<String>, String)> {
    input
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|line| {
            if let Some(rest) = line.strip_prefix('[')
                && let Some((label, text)) = rest.split_once(']')
                && !label.trim().is_empty()
                && !text.trim().is_empty()
            {
                return (Some(label.trim().to_string()), text.trim().to_string());
            }
            (None, line.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_in_brackets_are_split_off() {
        let lines = labeled_lines("[sports] A goal.\nNo label here.\n\n[ ] empty label\n[x]");
        assert_eq!(lines[0], (Some("sports".into()), "A goal.".into()));
        assert_eq!(lines[1], (None, "No label here.".into()));
        assert_eq!(lines[2], (None, "[ ] empty label".into()));
        assert_eq!(lines[3], (None, "[x]".into()));
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn every_sense_sentence_contains_its_word() {
        for preset in SENSES {
            for (_, s) in preset.sentences {
                assert!(s.to_lowercase().split(|c: char| !c.is_alphanumeric()).any(|w| w == preset.word), "{s}");
            }
        }
    }

    #[test]
    fn balanced_sample_takes_each_label_in_turn() {
        use crate::data::Example;
        let ex = |label: &str| Example { line: 0, text: "t".into(), text_pair: None, label: label.into() };
        let examples: Vec<Example> = ["a", "a", "a", "a", "b", "a", "b"].iter().map(|l| ex(l)).collect();
        let dataset = Dataset { examples, labels: vec!["a".into(), "b".into()], skipped: Vec::new(), multiline: Vec::new(), extra_fields: Vec::new() };
        // Two of each label: indices 0, 1 (a) and 4, 6 (b).
        assert_eq!(balanced_sample(&dataset, 4), vec![0, 1, 4, 6]);
        // An odd cap takes the extra one from the first label.
        assert_eq!(balanced_sample(&dataset, 3), vec![0, 1, 4]);
        // Asking for more than there are gives everything once.
        assert_eq!(balanced_sample(&dataset, 100), (0..7).collect::<Vec<_>>());
        assert!(balanced_sample(&dataset, 0).is_empty());
    }
}
