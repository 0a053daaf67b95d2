//! A text file's bytes as people have them, as UTF-8 text: gzip opened, UTF-16 (Excel's "Unicode
//! text") and Windows-1252/Latin-1 decoded with `encoding_rs`, and what was done said, so the
//! report can tell the person. Archives and documents that are not text (a zip, an `.xlsx`
//! workbook, a PDF) are told apart in the message.

use std::io::Read;

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, WINDOWS_1252};

use super::text::line_of;
use super::{DataError, MAX_FILE_BYTES};

/// A file's text, and how it was read when it was not plain UTF-8.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The text (a UTF-8 byte-order mark dropped).
    pub text: String,
    /// What was done to read it ("decompressed from gzip; decoded from UTF-16"), for the report.
    pub note: Option<String>,
}

/// Decodes a file's bytes (see the module docs). Refuses files over [`MAX_FILE_BYTES`] (after
/// decompression too), archives and binary files.
pub fn decode(bytes: &[u8]) -> Result<Decoded, DataError> {
    if bytes.len() > MAX_FILE_BYTES {
        return Err(DataError::TooLarge { bytes: bytes.len() });
    }
    let mut notes = Vec::new();
    let unzipped;
    let bytes = if bytes.starts_with(&[0x1F, 0x8B]) {
        unzipped = gunzip(bytes)?;
        notes.push("decompressed from gzip".to_string());
        &unzipped[..]
    } else {
        bytes
    };
    if let Some(kind) = container(bytes) {
        return Err(DataError::NotText { kind });
    }
    if bytes.starts_with(b"PAR1") {
        return parquet(bytes, notes);
    }
    if bytes.starts_with(LFS_POINTER) {
        return Err(DataError::NotText { kind: "a Git LFS pointer: the repository was cloned without its large files. Run `git lfs pull` in it (or download the file from the Hub's page) and load the file itself" });
    }
    let text = match utf16(bytes) {
        Some((encoding, body)) => {
            notes.push(format!("decoded from {} (Excel's “Unicode text”)", encoding.name()));
            encoding.decode_without_bom_handling(body).0.into_owned()
        }
        None => {
            let bytes = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes);
            match std::str::from_utf8(bytes) {
                Ok(text) => text.to_string(),
                Err(e) => {
                    notes.push(format!(
                        "decoded as Windows-1252 (Latin-1): line {} is not UTF-8",
                        line_of(bytes, e.valid_up_to())
                    ));
                    WINDOWS_1252.decode_without_bom_handling(bytes).0.into_owned()
                }
            }
        }
    };
    if let Some(at) = text.find('\0') {
        return Err(DataError::Binary { line: line_of(text.as_bytes(), at) });
    }
    Ok(Decoded { text, note: (!notes.is_empty()).then(|| notes.join("; ")) })
}

/// The first line of a Git LFS pointer, what a Hub repository cloned without `git lfs` holds in
/// place of each large file.
const LFS_POINTER: &[u8] = b"version https://git-lfs.github.com/spec/";

/// A Parquet file as JSON Lines text ([`super::parquet`]), which every task reads.
#[cfg(feature = "parquet")]
fn parquet(bytes: &[u8], mut notes: Vec<String>) -> Result<Decoded, DataError> {
    let (text, note) = super::parquet::to_json_lines(bytes)?;
    notes.push(note);
    Ok(Decoded { text, note: Some(notes.join("; ")) })
}

#[cfg(not(feature = "parquet"))]
fn parquet(_: &[u8], _: Vec<String>) -> Result<Decoded, DataError> {
    Err(DataError::NotText { kind: "a Parquet file, which this build does not read" })
}

/// A file's bytes decoded, after checking that one named `.parquet` is one: an HTML page, a
/// Git LFS pointer or a text file saved under that name is said to be what it is.
pub fn decode_named(bytes: &[u8], file_name: Option<&str>) -> Result<Decoded, DataError> {
    let named = file_name.is_some_and(|n| n.to_ascii_lowercase().ends_with(".parquet"));
    if named && !bytes.starts_with(b"PAR1") {
        let start = String::from_utf8_lossy(&bytes[..bytes.len().min(512)]).trim_start().to_ascii_lowercase();
        let kind = if bytes.starts_with(LFS_POINTER) {
            "a Git LFS pointer: the repository was cloned without its large files. Run `git lfs pull` in it (or download the file from the Hub's page) and load the file itself".to_string()
        } else if start.starts_with("<!doctype html") || start.starts_with("<html") {
            "a web page (HTML), perhaps an error or sign-in page saved in place of the file".to_string()
        } else if let Some(kind) = container(bytes) {
            kind.to_string()
        } else if bytes.starts_with(&[0x1F, 0x8B]) {
            "gzip-compressed, not Parquet (Parquet compresses its own pages): rename it to .gz if it holds text".to_string()
        } else if start.starts_with('{') || start.starts_with('[') {
            "JSON text: rename it to .jsonl or .json".to_string()
        } else if bytes.is_empty() {
            "empty".to_string()
        } else {
            "not Parquet (a Parquet file starts with the bytes PAR1); if it is text, name it .csv, .tsv or .jsonl".to_string()
        };
        return Err(DataError::NotParquet { kind });
    }
    decode(bytes)
}

fn gunzip(bytes: &[u8]) -> Result<Vec<u8>, DataError> {
    let mut out = Vec::new();
    let limit = MAX_FILE_BYTES as u64 + 1;
    flate2::read::MultiGzDecoder::new(bytes)
        .take(limit)
        .read_to_end(&mut out)
        .map_err(|e| DataError::Gzip { message: e.to_string() })?;
    if out.len() > MAX_FILE_BYTES {
        return Err(DataError::TooLarge { bytes: out.len() });
    }
    Ok(out)
}

/// What a file that is not text is, from its first bytes.
fn container(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        // An .xlsx, .docx or .ods is a zip holding XML.
        let inner = &bytes[..bytes.len().min(2000)];
        let has = |name: &[u8]| inner.windows(name.len()).any(|w| w == name);
        return Some(if has(b"xl/") {
            "an Excel workbook (.xlsx)"
        } else if has(b"word/") {
            "a Word document (.docx)"
        } else {
            "a zip archive"
        });
    }
    if bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        return Some("an old Excel or Word file (.xls, .doc)");
    }
    if bytes.starts_with(b"%PDF") {
        return Some("a PDF document");
    }
    None
}

/// UTF-16 by its byte-order mark, or without one when every other byte of the start is NUL (as
/// text that is mostly ASCII is in UTF-16): the encoding and the bytes after any mark.
fn utf16(bytes: &[u8]) -> Option<(&'static Encoding, &[u8])> {
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return Some((UTF_16LE, rest));
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return Some((UTF_16BE, rest));
    }
    let head = &bytes[..bytes.len().min(400) & !1];
    if head.len() < 4 {
        return None;
    }
    let zeros = |parity: usize| head.iter().skip(parity).step_by(2).filter(|&&b| b == 0).count();
    let half = head.len() / 2;
    if zeros(1) * 10 >= half * 9 && zeros(0) == 0 {
        Some((UTF_16LE, bytes))
    } else if zeros(0) * 10 >= half * 9 && zeros(1) == 0 {
        Some((UTF_16BE, bytes))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16le(text: &str, bom: bool) -> Vec<u8> {
        let mut out = if bom { vec![0xFF, 0xFE] } else { vec![] };
        out.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        out
    }

    #[test]
    fn utf8_passes_through_and_loses_its_byte_order_mark() {
        let d = decode("\u{feff}text,label\ncafé,ok\n".as_bytes()).unwrap();
        assert_eq!(d, Decoded { text: "text,label\ncafé,ok\n".into(), note: None });
    }

    #[test]
    fn utf16_with_and_without_a_byte_order_mark_is_decoded_and_said() {
        for bom in [true, false] {
            let d = decode(&utf16le("text\tlabel\r\ncafé\tok\r\n", bom)).unwrap();
            assert_eq!(d.text, "text\tlabel\r\ncafé\tok\r\n");
            assert!(d.note.unwrap().contains("UTF-16LE"));
        }
        let mut be = vec![0xFE, 0xFF];
        be.extend("naïve,1\n".encode_utf16().flat_map(u16::to_be_bytes));
        assert_eq!(decode(&be).unwrap().text, "naïve,1\n");
    }

    #[test]
    fn windows_1252_is_decoded_and_the_first_bad_line_named() {
        let d = decode(b"text,label\nfine,ok\ncaf\xe9 \x93quoted\x94,ok\n").unwrap();
        assert_eq!(d.text, "text,label\nfine,ok\ncafé “quoted”,ok\n");
        assert_eq!(d.note.as_deref(), Some("decoded as Windows-1252 (Latin-1): line 3 is not UTF-8"));
    }

    #[test]
    fn gzip_is_opened_then_decoded() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&utf16le("a,b\n", true)).unwrap();
        let d = decode(&gz.finish().unwrap()).unwrap();
        assert_eq!(d.text, "a,b\n");
        assert_eq!(d.note.as_deref(), Some("decompressed from gzip; decoded from UTF-16LE (Excel's “Unicode text”)"));
        let broken = decode(&[0x1F, 0x8B, 8, 0, 0, 0]).unwrap_err();
        assert!(matches!(broken, DataError::Gzip { .. }), "{broken:?}");
    }

    #[test]
    fn archives_and_documents_are_named_not_called_binary() {
        let xlsx = b"PK\x03\x04\x14\x00\x06\x00[Content_Types].xml....xl/workbook.xml";
        let e = decode(xlsx).unwrap_err();
        assert_eq!(e, DataError::NotText { kind: "an Excel workbook (.xlsx)" });
        assert!(e.to_string().contains("Excel workbook") && e.to_string().contains("CSV UTF-8"), "{e}");
        assert_eq!(decode(b"PK\x03\x04\x14\x00data.csv").unwrap_err(), DataError::NotText { kind: "a zip archive" });
        assert_eq!(decode(b"%PDF-1.7\n").unwrap_err(), DataError::NotText { kind: "a PDF document" });
        assert_eq!(decode(b"a,b\nc\0d\n").unwrap_err(), DataError::Binary { line: 2 });
    }
}
