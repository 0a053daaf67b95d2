//! `cargo xtask serve`'s web server: the files of `dist/` on the loopback address, with the
//! headers that make the page cross-origin isolated (so the training worker gets threads), for a
//! person trying the page on their own machine. A host serves `dist/` with any static server
//! (docs/deploy.md). GET and HEAD only, one thread per connection, one request per connection.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};

use crate::{Result, step};

/// Cross-origin isolation: a SharedArrayBuffer for the threaded wasm's shared memory. Any host
/// should send these two; the service worker adds them from the second visit where one cannot.
const ISOLATION: [(&str, &str); 2] = [("Cross-Origin-Opener-Policy", "same-origin"), ("Cross-Origin-Embedder-Policy", "require-corp")];

/// Serves `dist` on `127.0.0.1:port` until the process is stopped.
pub fn run(dist: &Path, port: u16) -> Result {
    let listener = TcpListener::bind(("127.0.0.1", port)).map_err(|e| format!("127.0.0.1:{port}: {e} (is another server on that port?)"))?;
    step(&format!("serve the app: open http://127.0.0.1:{port}/ (Ctrl-C stops)"));
    for stream in listener.incoming().flatten() {
        let dist = dist.to_path_buf();
        std::thread::spawn(move || {
            let _ = respond(&dist, stream);
        });
    }
    Ok(())
}

/// Reads one request from `stream` and answers it from `dist`.
fn respond(dist: &Path, mut stream: TcpStream) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // The headers are read and left: nothing here depends on them.
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    let mut parts = request.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let (status, kind, body) = match (method, file(dist, target)) {
        ("GET" | "HEAD", Some(path)) => match fs::read(&path) {
            Ok(bytes) => ("200 OK", content_type(&path), bytes),
            Err(_) => ("404 Not Found", "text/plain; charset=utf-8", b"not found\n".to_vec()),
        },
        ("GET" | "HEAD", None) => ("404 Not Found", "text/plain; charset=utf-8", b"not found\n".to_vec()),
        _ => ("405 Method Not Allowed", "text/plain; charset=utf-8", b"GET or HEAD only\n".to_vec()),
    };
    let mut head = format!("HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-cache\r\nConnection: close\r\n", body.len());
    for (name, value) in ISOLATION {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    if method != "HEAD" {
        stream.write_all(&body)?;
    }
    stream.flush()
}

/// The file of `dist` a request target names (`/` is `index.html`; the query is ignored), or
/// `None` for a path outside `dist` or a missing file.
fn file(dist: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next()?;
    let path = percent_decoded(path.strip_prefix('/')?)?;
    let relative = Path::new(&path);
    if !relative.components().all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    let full = if path.is_empty() { dist.join("index.html") } else { dist.join(relative) };
    let full = if full.is_dir() { full.join("index.html") } else { full };
    full.is_file().then_some(full)
}

/// `%XX` escapes decoded; `None` where that is not UTF-8 or an escape is cut.
fn percent_decoded(path: &str) -> Option<String> {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The Content-Type of a file of the bundle, by its extension. Gzipped files are sent as they
/// are stored: the page inflates them itself (`public/wasm_gz.js`), whatever the server says.
fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "wasm" => "application/wasm",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "webmanifest" => "application/manifest+json",
        "txt" | "csv" | "tsv" | "conll" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_names_a_file_of_dist_and_nothing_outside_it() {
        let dist = std::env::temp_dir().join(format!("bertbench-serve-{}", std::process::id()));
        fs::create_dir_all(dist.join("models/a b")).unwrap();
        fs::write(dist.join("index.html"), "<html>").unwrap();
        fs::write(dist.join("models/a b/config.json"), "{}").unwrap();
        assert_eq!(file(&dist, "/"), Some(dist.join("index.html")));
        assert_eq!(file(&dist, "/?model=bert-tiny"), Some(dist.join("index.html")));
        assert_eq!(file(&dist, "/models/a%20b/config.json"), Some(dist.join("models/a b/config.json")));
        assert_eq!(file(&dist, "/models/../index.html"), None, "no parent steps");
        assert_eq!(file(&dist, "/../../etc/passwd"), None);
        assert_eq!(file(&dist, "/missing.js"), None);
        assert_eq!(file(&dist, "/%zz"), None, "a broken escape");
        assert_eq!(content_type(Path::new("x_bg.wasm.gz")), "application/octet-stream");
        assert_eq!(content_type(Path::new("bertbench-app-1.js")), "text/javascript; charset=utf-8");
        fs::remove_dir_all(&dist).unwrap();
    }
}
