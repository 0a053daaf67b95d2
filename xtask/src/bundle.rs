//! The page's bundle in `dist/`, everything a static host serves: the page's wasm and its
//! wasm-bindgen glue, the training worker's two threaded builds, `www/index.html` with its
//! directives expanded, the files of `public/`, gzip, the loader's hash in the page's
//! Content-Security-Policy, and the offline service worker.
//!
//! `www/index.html` names what goes in with `<link data-build rel=… href=…>` tags, each replaced
//! here: `css` (copied under a name with its content's hash, loaded with its integrity),
//! `copy-file` and `copy-dir` (copied under their own names, the tag removed), and `wasm` (the
//! app crate's build: its module script and the preloads). The bundle is written to
//! `dist/.stage` and replaces `dist/`'s files only once it is complete.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

use crate::{INT8_DIR, Result, locked_version, root, run, run_in, step};

/// The cargo command of the page's wasm and its environment: the same for the build that
/// `Builds` starts early and for [`build`], which then finds it done (each leaves a report of its
/// crates' compile times in `cargo-timings/`). Its own target dir
/// (`<target>-wasm`), so the native test builds run beside it (cargo locks a target dir for one
/// build at a time; nothing is shared between the two anyway, another target and profile).
pub fn page_cargo() -> ([&'static str; 8], [(&'static str, String); 1]) {
    let args = ["build", "--target=wasm32-unknown-unknown", "--manifest-path", "app/Cargo.toml", "--profile", "web", "--locked", "--timings"];
    (args, [("CARGO_TARGET_DIR", page_target().display().to_string())])
}

fn page_target() -> PathBuf {
    PathBuf::from(format!("{}-wasm", target_base().display()))
}

/// The target dir the native builds use (`CARGO_TARGET_DIR`, else `target/`).
fn target_base() -> PathBuf {
    env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target"))
}

/// Builds the bundle into `dist/`. `threaded`: the threaded builds' modules where they were just
/// built ([`threads`], baseline then relaxed), else they are built here.
pub fn build(threaded: Option<[PathBuf; 2]>) -> Result {
    step("build the app: the page's wasm, the training worker's threaded wasm, dist/");
    let dist = root().join("dist");
    let staging = dist.join(".stage");
    let _ = fs::remove_dir_all(&staging);
    fs::create_dir_all(&staging).map_err(|e| format!("{}: {e}", staging.display()))?;
    let (args, envs) = page_cargo();
    run_in(&root(), "cargo", &args, &envs.iter().map(|(k, v)| (*k, v.as_str())).collect::<Vec<_>>())?;
    let page = bindgen_page(&staging)?;
    let threaded = match threaded {
        Some(built) => built,
        None => [threads(Simd::Baseline)?, threads(Simd::Relaxed)?],
    };
    let metas = [stage_threads(&staging, Simd::Baseline, &threaded[0])?, stage_threads(&staging, Simd::Relaxed, &threaded[1])?];
    let template = root().join("www/index.html");
    let html = fs::read_to_string(&template).map_err(|e| format!("{}: {e}", template.display()))?;
    let html = expand(&html, &root().join("www"), &staging, &page, &metas)?;
    let index = staging.join("index.html");
    fs::write(&index, html).map_err(|e| e.to_string())?;
    compress(&staging)?;
    pin_inline_scripts(&index)?;
    precache(&staging)?;
    replace(&dist, &staging)
}

/// Runs wasm-bindgen on the page's wasm into `staging`, named `bertbench-app-<hash>` (the hash
/// of the module and the wasm-bindgen version, so a browser never mixes an old glue with a new
/// module); that name.
fn bindgen_page(staging: &Path) -> Result<String> {
    let wasm = page_target().join("wasm32-unknown-unknown/web/bertbench_app.wasm");
    let bytes = fs::read(&wasm).map_err(|e| format!("{}: {e}", wasm.display()))?;
    let version = locked_version("wasm-bindgen")?;
    let name = format!("bertbench-app-{:016x}", fnv1a(fnv1a(FNV_START, version.as_bytes()), &bytes));
    let (wasm, out) = (wasm.display().to_string(), staging.display().to_string());
    run("wasm-bindgen", &["--target", "web", "--no-typescript", "--out-name", &name, "--out-dir", &out, &wasm])?;
    eprintln!("the page's wasm: {name}_bg.wasm ({:.1} MB)", bytes.len() as f64 / 1e6);
    Ok(name)
}

/// `html` with each `<link data-build …>` tag of it replaced (see the module's doc), the files
/// it names (relative to `from`) copied into `staging`. `page` is the page's wasm-bindgen name
/// ([`bindgen_page`]), `metas` the threaded builds' meta tags ([`stage_threads`]).
fn expand(html: &str, from: &Path, staging: &Path, page: &str, metas: &[String]) -> Result<String> {
    let mut out = String::with_capacity(html.len() * 2);
    let mut rest = html;
    while let Some(at) = rest.find("<link data-build ") {
        // A tag that leaves nothing takes its line with it.
        let line_start = rest[..at].rfind('\n').map_or(0, |i| i + 1);
        let indent = &rest[line_start..at];
        let whole_line = indent.trim().is_empty();
        out.push_str(&rest[..if whole_line { line_start } else { at }]);
        let end = at + rest[at..].find('>').ok_or("www/index.html: unterminated <link data-build> tag")?;
        let tag = &rest[at..=end];
        let attr = |name: &str| {
            let key = format!(" {name}=\"");
            tag.find(&key).map(|i| {
                let value = &tag[i + key.len()..];
                value[..value.find('"').unwrap_or(value.len())].to_string()
            })
        };
        let rel = attr("rel").ok_or_else(|| format!("www/index.html: {tag} has no rel"))?;
        let href = attr("href").unwrap_or_default();
        let source = from.join(&href);
        let before = out.len();
        let file_name = || source.file_name().map(|n| n.to_string_lossy().into_owned()).ok_or_else(|| format!("www/index.html: {tag} names no file"));
        match rel.as_str() {
            "css" => {
                let css = fs::read(&source).map_err(|e| format!("{}: {e}", source.display()))?;
                let name = file_name()?;
                let (stem, ext) = name.rsplit_once('.').unwrap_or((&name, "css"));
                let hashed = format!("{stem}-{:016x}.{ext}", fnv1a(FNV_START, &css));
                fs::write(staging.join(&hashed), &css).map_err(|e| e.to_string())?;
                out.push_str(&format!("<link rel=\"stylesheet\" href=\"/{hashed}\" integrity=\"{}\"/>", integrity(&css)));
            }
            "copy-file" => {
                fs::copy(&source, staging.join(file_name()?)).map_err(|e| format!("{}: {e}", source.display()))?;
            }
            "copy-dir" => copy_dir(&source, &staging.join(file_name()?))?,
            "wasm" => out.push_str(&loader(staging, page, metas)?),
            other => return Err(format!("www/index.html: {tag}: no such directive `{other}` (css, copy-file, copy-dir, wasm)")),
        }
        rest = &rest[end + 1..];
        if whole_line && out.len() > before {
            out.insert_str(before, indent);
        } else if whole_line {
            rest = rest.strip_prefix('\n').unwrap_or(rest);
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The page's module script (it loads the gzipped wasm through `wasm_gz.js`, see [`compress`]),
/// the preloads of its glue and module, of the default model's config and tokenizer (so that they
/// download while the wasm compiles; the page asks for them only once it runs, with the same
/// request, so they are used, not doubled), the default model's weights to fetch once the wasm
/// has arrived (`public/wasm_gz.js`: on a slow link they would otherwise share it with the wasm,
/// and the first tab, which needs the wasm and the tokenizer only, would wait for both), and the
/// threaded builds' meta tags. The model is [`INT8_DIR`], which must be `app/src/engine.rs`'s
/// `DEFAULT_MODEL`: the offline browser test checks the page uses what it preloads.
fn loader(staging: &Path, page: &str, metas: &[String]) -> Result<String> {
    let js = fs::read(staging.join(format!("{page}.js"))).map_err(|e| format!("{page}.js: {e}"))?;
    let model = INT8_DIR.trim_start_matches("public/");
    let mut tags = vec![format!("<link rel=\"modulepreload\" href=\"/{page}.js\" crossorigin=\"anonymous\" integrity=\"{}\">", integrity(&js))];
    for href in [format!("/{page}_bg.wasm.gz"), format!("/{model}/config.json"), format!("/{model}/tokenizer.json.gz")] {
        tags.push(format!("<link rel=\"preload\" href=\"{href}\" crossorigin=\"anonymous\" as=\"fetch\">"));
    }
    tags.push(format!("<meta name=\"bertbench-after-wasm\" content=\"/{model}/model.safetensors.gz\">"));
    tags.extend(metas.iter().cloned());
    let script = format!(
        "<script type=\"module\">\nimport {{ gunzipped }} from '/wasm_gz.js';\nimport init, * as bindings from '/{page}.js';\n\
         await init({{ module_or_path: gunzipped('/{page}_bg.wasm.gz') }});\nwindow.wasmBindings = bindings;\n</script>"
    );
    Ok(std::iter::once(script).chain(tags).collect::<Vec<_>>().join("\n    "))
}

/// Subresource integrity of `bytes` (SHA-384, as browsers check it).
fn integrity(bytes: &[u8]) -> String {
    use base64::Engine;
    use sha2::Digest;
    format!("sha384-{}", base64::engine::general_purpose::STANDARD.encode(sha2::Sha384::digest(bytes)))
}

/// Copies the folder `from` to `to`, every file in it.
fn copy_dir(from: &Path, to: &Path) -> Result {
    fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    for entry in fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?.flatten() {
        let (path, target) = (entry.path(), to.join(entry.file_name()));
        if path.is_dir() {
            copy_dir(&path, &target)?;
        } else {
            fs::copy(&path, &target).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// Puts the complete bundle in `staging` in place of `dist`'s files.
fn replace(dist: &Path, staging: &Path) -> Result {
    for entry in fs::read_dir(dist).map_err(|e| format!("{}: {e}", dist.display()))?.flatten() {
        let path = entry.path();
        if path == staging {
            continue;
        }
        let removed = if path.is_dir() { fs::remove_dir_all(&path) } else { fs::remove_file(&path) };
        removed.map_err(|e| format!("{}: {e}", path.display()))?;
    }
    for entry in fs::read_dir(staging).map_err(|e| format!("{}: {e}", staging.display()))?.flatten() {
        fs::rename(entry.path(), dist.join(entry.file_name())).map_err(|e| format!("{}: {e}", entry.path().display()))?;
    }
    fs::remove_dir(staging).map_err(|e| format!("{}: {e}", staging.display()))?;
    eprintln!("the app is in {}", dist.display());
    Ok(())
}


/// The SIMD a threaded build's matrix kernel may use.
#[derive(Clone, Copy, PartialEq)]
pub enum Simd {
    /// 128-bit SIMD, which every browser with WebGPU or wasm threads has.
    Baseline,
    /// Also relaxed SIMD, for core only (`f32x4.relaxed_madd` in `core::nn::linear::gemm`). A module
    /// with it does not validate in browsers without relaxed SIMD; `public/cpu_builds.js` loads it
    /// only where a one-instruction probe validates, and the baseline build elsewhere.
    Relaxed,
}

impl Simd {
    /// The build's folder prefix in `dist/` and the name of its meta tag in index.html.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Simd::Baseline => ("threads", "bertbench-threads"),
            Simd::Relaxed => ("threads-relaxed", "bertbench-threads-relaxed"),
        }
    }
}

/// The rustc flags of every crate of the threaded build: atomics and bulk memory, and the same
/// SIMD as the main build.
const THREADS_RUSTFLAGS: &str = "-C target-feature=+atomics,+bulk-memory,+simd128";

/// wasm-ld's flags for the final link of the threaded build: a shared memory that JavaScript
/// creates and hands to every thread, room for 4 GiB (a shared memory must declare its maximum,
/// and 1 GiB, the usual choice, is less than fine-tuning MiniLM takes), and the thread-local
/// storage symbols wasm-bindgen's thread support looks for.
const THREADS_LINK_ARGS: [&str; 7] = [
    "--shared-memory",
    "--import-memory",
    "--max-memory=4294967296",
    "--export=__wasm_init_tls",
    "--export=__tls_size",
    "--export=__tls_align",
    "--export=__tls_base",
];

/// Builds the app crate again with wasm threads (feature `threads`: burn's CPU backend on rayon,
/// whose pool wasm-bindgen-rayon starts in Web Workers sharing the memory); a copy of its module,
/// which [`build`] runs wasm-bindgen on into the bundle and names in index.html's meta tag (see
/// [`Simd::names`]). Only the training worker loads it, and only in a cross-origin isolated page
/// (`public/worker.js`); the page itself keeps the single-thread build, which needs no isolation.
/// The standard library must be rebuilt with atomics (`-Z build-std`, allowed on stable by
/// `RUSTC_BOOTSTRAP`), in a target dir of its own so the main build's flags and these do not
/// invalidate each other. The two threaded builds share that dir: the relaxed one adds its
/// target feature to core alone (`-Z profile-rustflags`), so only core and the app are compiled
/// twice, not burn and the standard library; but both write the same `bertbench_app.wasm`, so each
/// is copied out right after its build (and the bundle after `Builds` compiles neither again).
pub fn threads(simd: Simd) -> Result<PathBuf> {
    let (args, envs) = threads_cargo(simd);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    run_in(&root(), "cargo", &args, &envs)?;
    let wasm = threads_target().join("wasm32-unknown-unknown/release/bertbench_app.wasm");
    let copy = threads_target().join(format!("{}.wasm", simd.names().0));
    fs::copy(&wasm, &copy).map_err(|e| format!("{}: {e}", wasm.display()))?;
    Ok(copy)
}

/// wasm-bindgen on the threaded build's module `wasm` ([`threads`]) into
/// `<staging>/<prefix>-<hash>/`; its meta tag for index.html.
fn stage_threads(staging: &Path, simd: Simd, wasm: &Path) -> Result<String> {
    let bytes = fs::read(wasm).map_err(|e| format!("{}: {e}", wasm.display()))?;
    let (prefix, meta_name) = simd.names();
    let dir = format!("{prefix}-{:016x}", fnv1a(FNV_START, &bytes));
    let (wasm_str, out_str) = (wasm.display().to_string(), staging.join(&dir).display().to_string());
    run("wasm-bindgen", &["--target", "web", "--no-typescript", "--out-name", "bertbench-app", "--out-dir", &out_str, &wasm_str])?;
    eprintln!("threaded build in {dir}/ ({:.1} MB wasm)", bytes.len() as f64 / 1e6);
    Ok(format!("<meta name=\"{meta_name}\" content=\"{dir}/bertbench-app.js\" />"))
}

/// The threaded builds' target dir (both share it: see [`build_threads`]).
fn threads_target() -> PathBuf {
    PathBuf::from(format!("{}-threads", target_base().display()))
}

/// The cargo command of a threaded build and its environment.
fn threads_cargo(simd: Simd) -> (Vec<String>, Vec<(&'static str, String)>) {
    let mut args: Vec<String> = [
        "rustc", "--release", "--locked", "--timings", "--target", "wasm32-unknown-unknown", "--package", "bertbench-app",
        "--no-default-features", "--features", "threads", "-Z", "build-std=panic_abort,std",
    ]
    .map(String::from)
    .to_vec();
    if simd == Simd::Relaxed {
        args.extend(["-Z", "profile-rustflags", "--config", r#"profile.release.package.bertbench-core.rustflags=["-C", "target-feature=+relaxed-simd"]"#].map(String::from));
    }
    args.push("--".into());
    for a in THREADS_LINK_ARGS {
        args.extend(["-C".to_string(), format!("link-arg={a}")]);
    }
    let envs = vec![("RUSTC_BOOTSTRAP", "1".to_string()), ("RUSTFLAGS", THREADS_RUSTFLAGS.to_string()), ("CARGO_TARGET_DIR", threads_target().display().to_string())];
    (args, envs)
}

/// FNV-1a: std only, and fast enough to hash every file of a build.
fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        hash = (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Where FNV-1a starts.
const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// Lists every file of the bundle in `staging` and writes `sw.js` from `public/sw.js` with that
/// list and a version that changes whenever any file does, so browsers install the new version
/// and drop the old cache.
fn precache(staging: &Path) -> Result {
    let mut files = Vec::new();
    for path in files_under(staging)? {
        let rel = path.strip_prefix(staging).map_err(|e| e.to_string())?.to_string_lossy().replace('\\', "/");
        if rel != "sw.js" && !on_demand(&rel) {
            files.push(rel);
        }
    }
    files.sort();
    // FNV-1a over names and contents.
    let mut hash = FNV_START;
    let mut bytes = 0u64;
    for f in &files {
        let content = fs::read(staging.join(f)).map_err(|e| format!("{f}: {e}"))?;
        bytes += content.len() as u64;
        hash = fnv1a(fnv1a(hash, f.as_bytes()), &content);
    }
    let quoted: Vec<String> = std::iter::once("./".to_string()).chain(files.iter().cloned()).map(|f| format!("{f:?}")).collect();
    let line = format!("const PRECACHE = {{ version: \"{hash:016x}\", files: [{}] }};", quoted.join(", "));
    let template = fs::read_to_string(root().join("public/sw.js")).map_err(|e| format!("public/sw.js: {e}"))?;
    let marker = "const PRECACHE = ";
    let start = template.find(marker).ok_or("public/sw.js has no `const PRECACHE = ` line")?;
    let end = start + template[start..].find('\n').unwrap_or(template.len() - start);
    let sw = format!("{}{line}{}", &template[..start], &template[end..]);
    fs::write(staging.join("sw.js"), sw).map_err(|e| e.to_string())?;
    eprintln!("sw.js: version {hash:016x}, {} files, {:.1} MB to cache for offline use", files.len() + 1, bytes as f64 / 1e6);
    Ok(())
}

/// Gzips every `_bg.wasm` of the bundle in place (`_bg.wasm.gz`, the original removed; its
/// function names dropped first, see [`without_names`]), and each model's weights and tokenizer
/// ([`is_model_file`]): the browser decompresses them (`public/wasm_gz.js`, `app/src/fetch.rs`),
/// so a plain static server sends a fifth of the bytes. The page's loader ([`loader`]) and the
/// worker (`public/worker.js`) ask for the `.gz`.
fn compress(staging: &Path) -> Result {
    for path in files_under(staging)? {
        if path.to_string_lossy().ends_with("_bg.wasm") {
            if env::var_os("BERTBENCH_KEEP_NAMES").is_none() {
                let wasm = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                fs::write(&path, without_names(&wasm)?).map_err(|e| e.to_string())?;
            }
            run("gzip", &["-9", "-n", "-f", &path.display().to_string()])?;
        } else if is_model_file(staging, &path) {
            run("gzip", &["-6", "-n", "-f", &path.display().to_string()])?;
        }
    }
    Ok(())
}

/// Every file in the folder `top` and its subfolders.
fn files_under(top: &Path) -> Result<Vec<PathBuf>> {
    let (mut files, mut stack) = (Vec::new(), vec![top.to_path_buf()]);
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?.flatten() {
            let path = entry.path();
            if path.is_dir() { stack.push(path) } else { files.push(path) }
        }
    }
    Ok(files)
}


/// A model folder's weights or tokenizer file in the build (`models/<name>/…`): stored gzipped, as
/// `app/src/fetch.rs`'s `fetch_model_file` reads them (sizes in docs/performance.md). config.json
/// stays as it is, a few hundred bytes.
fn is_model_file(staging: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(staging.join("models")) else { return false };
    rel.components().count() == 2 && ["model.safetensors", "tokenizer.json", "vocab.txt"].iter().any(|f| rel.ends_with(f))
}

/// A wasm module without its `name` section: the functions' names, a fifth of the page's
/// module, which only a debugger or profiler shows (a panic's message stays). Set
/// `BERTBENCH_KEEP_NAMES=1` for a build to profile.
fn without_names(wasm: &[u8]) -> Result<Vec<u8>> {
    let bad = || "a _bg.wasm of the build is not a WebAssembly module".to_string();
    let leb = |at: &mut usize| -> Result<usize> {
        let (mut value, mut shift) = (0usize, 0);
        loop {
            let byte = *wasm.get(*at).ok_or_else(bad)?;
            *at += 1;
            value |= usize::from(byte & 0x7f) << shift;
            shift += 7;
            if byte < 0x80 {
                return Ok(value);
            }
        }
    };
    if !wasm.starts_with(b"\0asm") {
        return Err(bad());
    }
    let (mut out, mut at) = (wasm[..8].to_vec(), 8);
    while at < wasm.len() {
        let start = at;
        let id = wasm[at];
        at += 1;
        let size = leb(&mut at)?;
        let end = at.checked_add(size).filter(|&e| e <= wasm.len()).ok_or_else(bad)?;
        let custom_name = id == 0 && {
            let mut name_at = at;
            let len = leb(&mut name_at)?;
            wasm.get(name_at..name_at + len) == Some(&b"name"[..])
        };
        if !custom_name {
            out.extend_from_slice(&wasm[start..end]);
        }
        at = end;
    }
    Ok(out)
}

/// Files the offline copy leaves out, fetched only when asked for: every model folder but the
/// default one (the f32 weights of the parity demo, the tests' bert-tiny). A class downloads the
/// models it uses, not the ones it might.
fn on_demand(file: &str) -> bool {
    let default = INT8_DIR.trim_start_matches("public/");
    file.strip_prefix("models/").is_some_and(|rest| rest.contains('/')) && !file.starts_with(&format!("{default}/"))
}

/// The page's Content-Security-Policy (www/index.html) allows no inline script. The bundle has
/// one, the module that loads the wasm ([`loader`]), so this adds its SHA-256 to `script-src`:
/// that script runs, and no other inline script or `eval` can. Refuses a policy that still says
/// 'unsafe-inline' for scripts, or a bundle with an inline script but no policy to pin it in.
fn pin_inline_scripts(index: &Path) -> Result {
    use base64::Engine;
    use sha2::Digest;

    let html = fs::read_to_string(index).map_err(|e| format!("{}: {e}", index.display()))?;
    let mut hashes = Vec::new();
    let mut rest = html.as_str();
    while let Some(open) = rest.find("<script") {
        let after = &rest[open..];
        let tag_end = after.find('>').ok_or("index.html: unterminated <script> tag")?;
        let body = &after[tag_end + 1..];
        let close = body.find("</script>").ok_or("index.html: <script> without </script>")?;
        if !after[..tag_end].contains("src=") {
            let digest = sha2::Sha256::digest(&body.as_bytes()[..close]);
            hashes.push(format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(digest)));
        }
        rest = &body[close..];
    }
    if hashes.is_empty() {
        return Ok(());
    }
    let no_policy = "index.html has an inline script but no Content-Security-Policy with a script-src to pin it in";
    let policy = html.find("http-equiv=\"Content-Security-Policy\"").ok_or(no_policy)?;
    let at = policy + html[policy..].find("script-src").ok_or(no_policy)?;
    let end = at + html[at..].find([';', '"']).ok_or("index.html: unterminated script-src")?;
    let directive = &html[at..end];
    if directive.contains("'unsafe-inline'") || directive.contains("'unsafe-eval'") {
        return Err(format!("index.html: `{directive}` must not allow inline scripts or eval"));
    }
    let pinned = format!("{directive} {}", hashes.join(" "));
    fs::write(index, format!("{}{pinned}{}", &html[..at], &html[end..])).map_err(|e| e.to_string())?;
    eprintln!("index.html: {} inline script(s) pinned in the Content-Security-Policy", hashes.len());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_build_tag_is_replaced_and_a_tag_that_leaves_nothing_takes_its_line() {
        let dir = std::env::temp_dir().join(format!("bertbench-bundle-{}", std::process::id()));
        let (from, staging) = (dir.join("www"), dir.join("stage"));
        fs::create_dir_all(from.join("icons")).unwrap();
        fs::create_dir_all(&staging).unwrap();
        fs::write(from.join("style.css"), "body {}").unwrap();
        fs::write(from.join("favicon.svg"), "<svg/>").unwrap();
        fs::write(from.join("icons/a.png"), "png").unwrap();
        let html = "<head>\n    <link data-build rel=\"css\" href=\"style.css\" />\n    <link data-build rel=\"copy-file\" href=\"favicon.svg\" />\n    \
                    <link data-build rel=\"copy-dir\" href=\"icons\" />\n    <link rel=\"icon\" href=\"favicon.svg\" />\n</head>\n";
        let out = expand(html, &from, &staging, "page", &[]).unwrap();
        let css = format!("style-{:016x}.css", fnv1a(FNV_START, b"body {}"));
        assert_eq!(out, format!("<head>\n    <link rel=\"stylesheet\" href=\"/{css}\" integrity=\"{}\"/>\n    <link rel=\"icon\" href=\"favicon.svg\" />\n</head>\n", integrity(b"body {}")));
        assert_eq!(fs::read_to_string(staging.join(&css)).unwrap(), "body {}");
        assert_eq!(fs::read_to_string(staging.join("favicon.svg")).unwrap(), "<svg/>");
        assert_eq!(fs::read_to_string(staging.join("icons/a.png")).unwrap(), "png");
        let unknown = expand("<link data-build rel=\"js\" href=\"x.js\" />", &from, &staging, "page", &[]).unwrap_err();
        assert!(unknown.contains("no such directive `js`"), "{unknown}");
        assert!(expand("<link data-build href=\"x\" />", &from, &staging, "page", &[]).unwrap_err().contains("has no rel"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_name_section_goes_and_every_other_section_stays() {
        let section = |id: u8, body: &[u8]| [&[id, body.len() as u8][..], body].concat();
        let types = section(1, &[1, 0x60, 0, 0]);
        let names = section(0, &[4, b'n', b'a', b'm', b'e', 1, 2, 3]);
        let producers = section(0, &[9, b'p', b'r', b'o', b'd', b'u', b'c', b'e', b'r', b's', 0]);
        let module = [&b"\0asm\x01\0\0\0"[..], &types, &names, &producers].concat();
        let expected = [&b"\0asm\x01\0\0\0"[..], &types, &producers].concat();
        assert_eq!(without_names(&module).unwrap(), expected);
        assert!(without_names(b"<html>").is_err());
        assert!(without_names(&module[..module.len() - 3]).is_err(), "a cut module is refused");
    }
}
