//! The code's structure as ARCHITECTURE.md states it, read from the sources: in `core` and in
//! `app`, each layer (a top-level module) uses only the layers listed before it, and no two
//! files use each other round (an import circle), a module and its own submodules aside. A file
//! that breaks either rule is named with the line that does.
//!
//! Read as text: every `crate::…`, `super::…` and `self::…` path outside comments and outside
//! `#[cfg(test)]` code, resolved to the file of the longest module path it names.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// `core`'s layers, lowest first: `core/src/lib.rs` lists them in this order.
const CORE_LAYERS: &[&[&str]] = &[
    &["error", "rng", "cpu"],
    &["tokenizer"],
    &["data"],
    &["nn"],
    &["bert"],
    &["tasks"],
    &["train"],
    &["analysis"],
    &["device_check"],
];

/// `app`'s layers, lowest first (ARCHITECTURE.md, "app/"): plain data and browser helpers; the
/// saved work and the engine; the worker and its client; what every tab shares; the tabs; the
/// frame; the entry point.
const APP_LAYERS: &[&[&str]] = &[
    &["store", "examples", "local_store", "js_bytes", "files", "fetch", "saved"],
    &["runs", "protocol", "engine"],
    &["worker_client", "worker"],
    &["app", "widgets", "saved_work", "pwa", "bench"],
    &["compute", "backend_choice"],
    &["explore", "studio", "lab"],
    &["lessons"],
    &["shell"],
];

/// A file of the crate: its module path (`["tasks", "similarity"]`; the crate's root is `[]`).
struct Source {
    module: Vec<String>,
    file: PathBuf,
    text: String,
}

fn sources(src: &Path) -> Vec<Source> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut module: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            if module.iter().any(|m| m == "test_util") {
                continue;
            }
            out.push(Source { module, file: path.clone(), text: fs::read_to_string(&path).unwrap() });
        }
    }
    out
}

/// The lines of `text` that are code outside tests: `(line number, code)`, comments removed,
/// the file cut where a `#[cfg(test)]` module starts.
fn code_lines(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            let next = lines[i + 1..].iter().find(|l| !l.trim().is_empty()).map_or("", |l| l.trim_start());
            if next.contains("mod ") && next.ends_with('{') {
                break;
            }
        }
        let code = match trimmed.find("//") {
            Some(0) => continue,
            Some(at) if !trimmed[..at].contains('"') => &trimmed[..at],
            _ => trimmed,
        };
        out.push((i + 1, code.to_string()));
    }
    out
}

/// Every module path the code names from `crate::`, `super::` or `self::`, as absolute paths
/// (the items after the module included; a group `{a, b::c}` gives one path per member).
fn named_paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (prefix, base) in [("crate::", Vec::new()), ("super::", Vec::new()), ("self::", module.to_vec())] {
        let mut from = 0;
        while let Some(at) = code[from..].find(prefix) {
            let start = from + at;
            from = start + prefix.len();
            // Part of a longer name (`my_crate::`), or `super::super::`'s second `super`.
            if code[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut base = base.clone();
            let mut rest = &code[from..];
            if prefix == "super::" {
                base = module[..module.len().saturating_sub(1)].to_vec();
                while let Some(r) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = r;
                }
            }
            for tail in expand(rest) {
                let mut path = base.clone();
                path.extend(tail);
                out.push(path);
            }
        }
    }
    out
}

/// `a::b::{c, d::e}::…` → `[[a, b, c], [a, b, d, e]]`: the path segments a use names.
fn expand(rest: &str) -> Vec<Vec<String>> {
    let mut segments = Vec::new();
    let mut chars = rest.char_indices().peekable();
    let mut word = String::new();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c.is_alphanumeric() || c == '_' => word.push(c),
            ':' => {
                if !word.is_empty() {
                    segments.push(std::mem::take(&mut word));
                }
            }
            '{' if word.is_empty() => {
                // A group: split at its top-level commas.
                let mut depth = 1;
                let mut end = i + 1;
                for (j, d) in rest[i + 1..].char_indices() {
                    match d {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        end = i + 1 + j;
                        break;
                    }
                }
                let inner = &rest[i + 1..end.max(i + 1)];
                let mut members = Vec::new();
                let (mut depth, mut last) = (0, 0);
                for (j, d) in inner.char_indices() {
                    match d {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            members.push(&inner[last..j]);
                            last = j + 1;
                        }
                        _ => {}
                    }
                }
                members.push(&inner[last..]);
                return members
                    .into_iter()
                    .map(str::trim)
                    .filter(|m| !m.is_empty())
                    .flat_map(|m| {
                        expand(m).into_iter().map(|tail| segments.iter().cloned().chain(tail).collect::<Vec<_>>()).collect::<Vec<_>>()
                    })
                    .collect();
            }
            _ => break,
        }
    }
    if !word.is_empty() {
        segments.push(word);
    }
    vec![segments]
}

/// The module (a file of `known`) that `path` lands in: its longest known prefix.
fn resolve<'a>(path: &[String], known: &'a BTreeSet<Vec<String>>) -> Option<&'a Vec<String>> {
    (0..=path.len()).rev().find_map(|n| known.get(&path[..n]))
}

fn is_within(a: &[String], b: &[String]) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// `(from, to, where)` for every use of one file by another.
fn uses(src: &Path) -> (Vec<Source>, Vec<(Vec<String>, Vec<String>, String)>) {
    let files = sources(src);
    let known: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let mut edges = Vec::new();
    for f in &files {
        for (line, code) in code_lines(&f.text) {
            for path in named_paths(&f.module, &code) {
                if let Some(to) = resolve(&path, &known) {
                    if !is_within(&f.module, to) {
                        edges.push((f.module.clone(), to.clone(), format!("{}:{line}: {}", f.file.display(), code.trim())));
                    }
                }
            }
        }
    }
    (files, edges)
}

fn layer_of(module: &[String], layers: &[&[&str]]) -> Option<usize> {
    let top = module.first()?;
    layers.iter().position(|l| l.contains(&top.as_str()))
}

/// Every use of a later layer, and every top-level module no layer lists.
fn upward(src: &Path, layers: &[&[&str]]) -> Vec<String> {
    let (files, edges) = uses(src);
    let mut problems: Vec<String> = files
        .iter()
        .filter(|f| !f.module.is_empty() && layer_of(&f.module, layers).is_none())
        .map(|f| format!("{} is in no layer: add `{}` to the list", f.file.display(), f.module[0]))
        .collect();
    for (from, to, at) in edges {
        if let (Some(a), Some(b)) = (layer_of(&from, layers), layer_of(&to, layers)) {
            if b > a {
                problems.push(format!("{} uses {} from a later layer: {at}", from.join("::"), to.join("::")));
            }
        }
    }
    problems.sort();
    problems.dedup();
    problems
}

/// The import circles: groups of files that reach each other through their uses (Tarjan).
fn circles(src: &Path) -> Vec<Vec<String>> {
    let (_, edges) = uses(src);
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (from, to, _) in &edges {
        graph.entry(from.clone()).or_default().insert(to.clone());
        graph.entry(to.clone()).or_default();
    }
    let nodes: Vec<Vec<String>> = graph.keys().cloned().collect();
    let index_of: BTreeMap<&Vec<String>, usize> = nodes.iter().enumerate().map(|(i, n)| (n, i)).collect();
    let next: Vec<Vec<usize>> = nodes.iter().map(|n| graph[n].iter().map(|m| index_of[m]).collect()).collect();
    struct Tarjan<'a> {
        next: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        found: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.counter);
            self.low[v] = self.counter;
            self.counter += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in &self.next[v].clone() {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(i) if self.on_stack[w] => self.low[v] = self.low[v].min(i),
                    _ => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut group = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    group.push(w);
                    if w == v {
                        break;
                    }
                }
                if group.len() > 1 {
                    self.found.push(group);
                }
            }
        }
    }
    let n = nodes.len();
    let mut t = Tarjan { next: &next, index: vec![None; n], low: vec![0; n], on_stack: vec![false; n], stack: Vec::new(), counter: 0, found: Vec::new() };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    t.found.into_iter().map(|g| g.into_iter().map(|i| nodes[i].join("::")).collect()).collect()
}

fn src(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(krate).join("src")
}

#[test]
fn core_uses_only_the_layers_below() {
    let problems = upward(&src("core"), CORE_LAYERS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn app_uses_only_the_layers_below() {
    let problems = upward(&src("app"), APP_LAYERS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_import_circle_in_core_or_app() {
    for krate in ["core", "app"] {
        let found = circles(&src(krate));
        assert!(found.is_empty(), "{krate}: files that use each other round: {found:?}");
    }
}

#[test]
fn the_reader_finds_uses_groups_and_circles() {
    let module = vec!["train".to_string(), "finetune".to_string()];
    let paths = named_paths(&module, "use crate::tasks::{classification::{Level, FeatureSpec}, qa};");
    assert_eq!(paths, [vec!["tasks", "classification", "Level"], vec!["tasks", "classification", "FeatureSpec"], vec!["tasks", "qa"]]);
    assert_eq!(named_paths(&module, "super::super::data::Example"), [vec!["data", "Example"]]);
    assert_eq!(named_paths(&module, "use super::units::LabeledText;"), [vec!["train", "units", "LabeledText"]]);
    assert!(named_paths(&module, "bertbench_core::train::x").is_empty());
    let code = code_lines("use crate::a;\n// crate::b in a comment\nfn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::c;\n}\n");
    assert_eq!(code.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [1, 3]);
    // A circle made on purpose is found.
    let dir = std::env::temp_dir().join(format!("bertbench-structure-{}", std::process::id()));
    fs::create_dir_all(dir.join("b")).unwrap();
    fs::write(dir.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    fs::write(dir.join("a.rs"), "use crate::b::x::Y;\n").unwrap();
    fs::write(dir.join("b/mod.rs"), "mod x;\n").unwrap();
    fs::write(dir.join("b/x.rs"), "use crate::a::Z;\n").unwrap();
    assert_eq!(circles(&dir), [vec!["b::x".to_string(), "a".to_string()]]);
    let layers: &[&[&str]] = &[&["b"], &["a"]];
    assert_eq!(upward(&dir, layers).len(), 1, "b::x uses a, a later layer");
    fs::remove_dir_all(dir).unwrap();
}
