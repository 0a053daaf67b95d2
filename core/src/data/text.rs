//! Small byte and text helpers shared by the parsers: byte-order marks, line numbers, separators,
//! numbers, column names and row previews.


use super::PREVIEW_CHARS;

pub(super) fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes)
}

pub(super) fn first_non_space(bytes: &[u8]) -> Option<u8> {
    bytes.iter().copied().find(|b| !b.is_ascii_whitespace())
}

/// 1-based line numbers of increasing byte offsets, in one pass over the text. A line ends at
/// `\n`, `\r\n` or a lone `\r`.
#[derive(Default)]
pub(super) struct LineCounter {
    at: usize,
    breaks: usize,
}

impl LineCounter {
    pub(super) fn line_at(&mut self, bytes: &[u8], offset: usize) -> usize {
        let offset = offset.min(bytes.len());
        for i in self.at..offset {
            let lone_cr = bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n');
            self.breaks += usize::from(bytes[i] == b'\n' || lone_cr);
        }
        self.at = self.at.max(offset);
        self.breaks + 1
    }
}

/// 1-based line of byte `at`.
pub(super) fn line_of(bytes: &[u8], at: usize) -> usize {
    1 + bytes[..at.min(bytes.len())].iter().filter(|&&b| b == b'\n').count()
}

/// Among the first 20 non-blank lines: how many contain a tab, a comma, a semicolon, and how many
/// lines were looked at.
pub(super) fn count_separators(bytes: &[u8]) -> (usize, usize, usize, usize) {
    let (mut tabs, mut commas, mut semicolons, mut lines) = (0, 0, 0, 0);
    for line in bytes.split(|&b| b == b'\n').filter(|l| !l.trim_ascii().is_empty()).take(20) {
        lines += 1;
        tabs += usize::from(line.contains(&b'\t'));
        commas += usize::from(line.contains(&b','));
        semicolons += usize::from(line.contains(&b';'));
    }
    (tabs, commas, semicolons, lines)
}

pub(super) fn is_number(cell: &str) -> bool {
    let cell = cell.trim();
    cell.bytes().any(|b| b.is_ascii_digit()) && cell.parse::<f64>().is_ok()
}

/// `"Sentence 1"` → `"sentence1"`, `"Gold-Label"` → `"gold_label"`.
pub(super) fn normalise_name(name: &str) -> String {
    let lower = name.trim().to_lowercase();
    let joined: String = lower.split_whitespace().collect::<Vec<_>>().join("_").replace('-', "_");
    match joined.as_str() {
        "sentence_1" => "sentence1".into(),
        "sentence_2" => "sentence2".into(),
        _ => joined,
    }
}


/// The first [`PREVIEW_CHARS`] characters of the fields joined by `separator`, line breaks and
/// tabs shown as spaces, `…` when cut.
pub(super) fn preview(fields: &[String], separator: &str) -> String {
    let mut out = String::new();
    let mut chars = fields
        .iter()
        .enumerate()
        .flat_map(|(i, f)| (if i == 0 { "" } else { separator }).chars().chain(f.chars()))
        .map(|c| if c.is_control() { ' ' } else { c });
    for c in chars.by_ref().take(PREVIEW_CHARS) {
        out.push(c);
    }
    if chars.next().is_some() {
        out.push('…');
    }
    out
}
