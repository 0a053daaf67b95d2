//! `bertbench pretrain`: masked-language-model pretraining from scratch (and NSP or SOP), or
//! ELECTRA's replaced-token detection, with the tokenizer of a folder, reported every N steps as a
//! table, with probe sentences filled (by ELECTRA's generator).

use std::path::{Path, PathBuf};
use std::time::Instant;

use bertbench_core::bert::config::Preset;
use bertbench_core::tasks::masking::PairTask;
use bertbench_core::tasks::pretraining::BertForPreTraining;
use bertbench_core::tasks::replaced_token::ElectraForPreTraining;
use bertbench_core::tokenizer::BertTokenizer;
use bertbench_core::train::{PretrainConfig, Pretrainer};

use crate::{Args, Result, device, parse, read};

pub fn pretrain(args: &[String]) -> Result {
    let args = Args::parse(args)?;
    let backend = args.get("backend").unwrap_or("cpu");
    let device = device(backend)?.autodiff();
    let corpus_path = args.require("corpus")?;
    let text = String::from_utf8(read(Path::new(corpus_path))?).map_err(|_| format!("{corpus_path} is not UTF-8 text"))?;
    let lines: Vec<String> = text.lines().map(String::from).collect();
    let tokenizer_dir = PathBuf::from(args.require("tokenizer-from")?);
    let max_len: usize = parse(&args, "max-len", 64)?;
    let tokenizer = BertTokenizer::from_tokenizer_json(&read(&tokenizer_dir.join("tokenizer.json"))?, max_len).map_err(|e| e.to_string())?;
    let preset = Preset::ALL
        .into_iter()
        .find(|p| p.name() == format!("bert-{}", args.get("preset").unwrap_or("tiny")))
        .ok_or("--preset must be one of tiny, mini, small, medium, base, large")?;
    let pair_task = match args.get("pair") {
        None | Some("none") => None,
        Some("nsp") => Some(PairTask::Nsp),
        Some("sop") => Some(PairTask::Sop),
        Some(other) => return Err(format!("--pair {other}: use nsp, sop or none")),
    };
    let electra = match args.get("objective") {
        None | Some("mlm") => false,
        Some("electra") => true,
        Some(other) => return Err(format!("--objective {other}: use mlm or electra")),
    };
    let config = preset.config(tokenizer.vocab_size()).with_max_position_embeddings(max_len.max(16));
    let seed: u64 = parse(&args, "seed", 42)?;
    device.seed(seed);
    let run = PretrainConfig::new()
        .with_epochs(parse(&args, "epochs", 3)?)
        .with_batch_size(parse(&args, "batch", 32)?)
        .with_max_len(max_len)
        .with_learning_rate(parse(&args, "lr", 1e-3)?)
        .with_pair_task(pair_task)
        .with_replaced_token_detection(Some(electra))
        .with_dynamic_masking(args.get("masking").unwrap_or("dynamic") != "static")
        .with_seed(seed);
    let every: usize = parse(&args, "every", 50)?;
    let minutes: f64 = parse(&args, "minutes", f64::INFINITY)?;
    let mut trainer = if electra {
        Pretrainer::new_electra(ElectraForPreTraining::from_scratch(&config, &device), &tokenizer, lines, run, &device)
    } else {
        Pretrainer::new(BertForPreTraining::from_scratch(&config, pair_task.is_some(), &device), &tokenizer, lines, run, &device)
    }
    .map_err(|e| e.to_string())?;
    eprintln!("{}: {} parameters, {} steps planned, native {backend}", preset.name(), config.num_params(true), trainer.progress().1);
    let second = if electra { "replaced-token loss" } else { "pair loss" };
    println!("| step | epoch | minutes | MLM loss | MLM accuracy | {second} | tokens/s |");
    println!("|---|---|---|---|---|---|---|");
    let start = Instant::now();
    let (mut window_start, mut sums, mut tokens, mut n) = (Instant::now(), (0f64, 0f64, 0f64), 0usize, 0usize);
    let probes = &args.positional;
    let show_probes = |trainer: &Pretrainer| -> Result {
        for p in probes {
            let fills = pollster::block_on(trainer.fill_mask(p, 3)).map_err(|e| e.to_string())?;
            let guesses: Vec<String> = fills
                .iter()
                .map(|f| f.top.iter().map(|(w, p)| format!("{w} {:.0}%", p * 100.0)).collect::<Vec<_>>().join(", "))
                .collect();
            eprintln!("    {p} → {}", guesses.join(" | "));
        }
        Ok(())
    };
    while let Some(step) = pollster::block_on(trainer.step()).map_err(|e| e.to_string())? {
        sums.0 += step.mlm_loss as f64;
        sums.1 += step.mlm_accuracy as f64;
        sums.2 += step.pair_loss.or(step.rtd_loss).unwrap_or(0.0) as f64;
        tokens += step.tokens;
        n += 1;
        let out_of_time = start.elapsed().as_secs_f64() / 60.0 >= minutes;
        if n == every || step.step == step.total_steps || out_of_time {
            let secs = window_start.elapsed().as_secs_f64();
            println!(
                "| {} | {:.2} | {:.1} | {:.3} | {:.1}% | {} | {:.0} |",
                step.step,
                step.epoch,
                start.elapsed().as_secs_f64() / 60.0,
                sums.0 / n as f64,
                sums.1 / n as f64 * 100.0,
                if pair_task.is_some() || electra { format!("{:.3}", sums.2 / n as f64) } else { "–".into() },
                tokens as f64 / secs.max(1e-9)
            );
            show_probes(&trainer)?;
            (window_start, sums, tokens, n) = (Instant::now(), (0.0, 0.0, 0.0), 0, 0);
        }
        if out_of_time {
            eprintln!("stopped after {minutes} minutes");
            break;
        }
    }
    Ok(())
}
