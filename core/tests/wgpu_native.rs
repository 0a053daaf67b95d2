//! wgpu natively (Vulkan; on a machine without a GPU, Mesa's lavapipe) against the CPU backend.
//! `cargo xtask test` installs lavapipe; without any Vulkan driver these tests fail, loudly.

mod common;

use std::sync::OnceLock;

use bertbench_core::burn::prelude::Device;
use bertbench_core::device_check::{compare_devices, compare_devices_on, family_check_configs};
use common::*;

fn gpu() -> Device {
    static GPU: OnceLock<Device> = OnceLock::new();
    GPU.get_or_init(|| {
        Device::wgpu_options()
            .init()
            .unwrap_or_else(|e| panic!("no wgpu adapter ({e}); install a Vulkan driver (Debian: mesa-vulkan-drivers)"))
    })
    .clone()
}

#[test]
fn wgpu_tiny_model_forward_and_training_step_match_cpu() {
    let report = pollster::block_on(compare_devices(&Device::flex(), &gpu(), 42)).unwrap();
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
    assert!(report.passed, "{report:#?}");
}

/// ALBERT's shared layer and projected embeddings, MPNet's relative position bias, ModernBERT's
/// rotary, local-window, pre-norm gated layers, DeBERTa's disentangled attention: forward and
/// gradients on wgpu as on the CPU.
#[test]
fn wgpu_families_own_blocks_match_cpu() {
    for config in family_check_configs() {
        let family = config.model_type;
        let report = pollster::block_on(compare_devices_on(&Device::flex(), &gpu(), 42, config)).unwrap();
        assert!(report.passed, "{family:?}: {report:#?}");
    }
}

#[test]
fn wgpu_minilm_matches_pytorch() {
    let device = gpu();
    let bert = minilm(&device);
    let fx = fixtures();
    let examples: Vec<_> = fx["examples"].as_array().unwrap().iter().filter(|e| e["pair"].is_null()).collect();
    let texts: Vec<String> = examples.iter().map(|e| e["text"].as_str().unwrap().to_string()).collect();
    let out = pollster::block_on(bert.embed(&texts, Default::default(), &device)).unwrap();
    for (v, ex) in out.vectors.iter().zip(&examples) {
        let err = max_abs_diff(v, &floats(&ex["mean_pooled"]));
        assert!(err <= 1e-4, "{}: max abs error {err:e}", ex["text"]);
    }
}

/// `linear::matmul` on wgpu (the register-tiled kernel, or burn's matmul where it does not
/// apply) against the CPU: ragged row counts, a transposed `lhs` read in place, a transposed
/// `rhs` made contiguous, column counts that take vectors of 4, 2 and 1, and the model's own
/// shapes.
#[test]
fn wgpu_linear_matmul_matches_cpu() {
    use bertbench_core::burn::tensor::{Distribution, Tensor};
    use bertbench_core::nn::linear::matmul;
    let gpu = gpu();
    let cpu = Device::flex();
    // (m, k, n, lhs stored transposed, rhs stored transposed)
    let cases = [
        (1, 1, 4, false, false),
        (37, 20, 12, false, false),
        (9, 33, 44, true, false),
        (70, 16, 28, false, true),
        (13, 7, 6, false, false),
        (5, 9, 3, false, false),
        (17, 12, 30_522 % 64 + 2, false, true),
        (130, 384, 1536, false, false),
        (512, 1536, 384, true, true),
    ];
    for (m, k, n, lt, rt) in cases {
        let a = Tensor::<2>::random(if lt { [k, m] } else { [m, k] }, Distribution::Uniform(-1.0, 1.0), &cpu);
        let b = Tensor::<2>::random(if rt { [n, k] } else { [k, n] }, Distribution::Uniform(-1.0, 1.0), &cpu);
        let on = |t: &Tensor<2>, d: &Device, transposed: bool| {
            let t = Tensor::<2>::from_data(t.to_data(), d);
            if transposed { t.transpose() } else { t }
        };
        let want = matmul(on(&a, &cpu, lt), on(&b, &cpu, rt)).into_data().try_to_vec::<f32>().unwrap();
        let got = matmul(on(&a, &gpu, lt), on(&b, &gpu, rt)).into_data().try_to_vec::<f32>().unwrap();
        assert_eq!(got.len(), m * n);
        let err = got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0f32, f32::max);
        assert!(err <= 1e-4 * (k as f32).sqrt(), "[{m}, {k}] · [{k}, {n}] (lhs transposed {lt}, rhs transposed {rt}): max abs error {err:e}");
    }
}

/// Attention's batched products on wgpu against the CPU: `q · kᵀ` and `p · v` per head, on the
/// strided views attention makes (`[batch, seq, heads, d]` with its middle dimensions swapped).
#[test]
fn wgpu_batched_matmul_matches_cpu() {
    use bertbench_core::burn::tensor::{Distribution, Tensor};
    use bertbench_core::nn::linear::matmul;
    let gpu = gpu();
    let cpu = Device::flex();
    for (batch, seq, heads, d) in [(2, 7, 3, 32), (3, 64, 12, 32), (1, 1, 2, 4)] {
        let qkv: Vec<Tensor<4>> =
            (0..3).map(|_| Tensor::<4>::random([batch, seq, heads, d], Distribution::Uniform(-1.0, 1.0), &cpu)).collect();
        let run = |device: &Device| {
            let [q, k, v] = [0, 1, 2].map(|i| Tensor::<4>::from_data(qkv[i].to_data(), device).swap_dims(1, 2));
            let scores = matmul(q, k.swap_dims(2, 3));
            let context = matmul(scores.clone(), v);
            (scores.into_data().try_to_vec::<f32>().unwrap(), context.into_data().try_to_vec::<f32>().unwrap())
        };
        let (want_scores, want_context) = run(&cpu);
        let (got_scores, got_context) = run(&gpu);
        for (what, got, want) in [("q·kᵀ", got_scores, want_scores), ("p·v", got_context, want_context)] {
            assert_eq!(got.len(), want.len());
            let err = got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0f32, f32::max);
            let scale = want.iter().fold(1.0f32, |m, w| m.max(w.abs()));
            assert!(err <= 1e-5 * scale, "{what} for [{batch}, {heads}, {seq}, {d}]: max abs error {err:e} (scale {scale})");
        }
    }
}

/// GELU's derivative on wgpu (core's exact-derivative kernel) against the CPU's, over ordinary
/// values and the large ones where burn's tanh-based derivative gave NaN on SwiftShader, at
/// lengths that take vectors of 4, 2 and 1 values, and on a transposed (strided) view.
#[test]
fn wgpu_gelu_derivative_matches_cpu() {
    use bertbench_core::nn::activation::GeluBackend;
    use bertbench_core::burn::backend::Dispatch;
    use bertbench_core::burn::tensor::{Distribution, Tensor};
    let gpu = gpu();
    let cpu = Device::flex();
    let derivative = |x: Tensor<2>, g: Tensor<2>| Tensor::<2>::from_dispatch(<Dispatch as GeluBackend>::gelu_erf_backward(x.into_dispatch(), g.into_dispatch()));
    let large = [-300.0f32, -100.0, -89.0, -20.0, -13.0, -3.0, 0.0, 3.0, 13.0, 20.0, 89.0, 100.0, 300.0];
    for (rows, cols) in [(1, large.len()), (3, 4), (5, 6), (7, 3), (64, 1536)] {
        let mut x = Tensor::<2>::random([rows, cols], Distribution::Uniform(-6.0, 6.0), &cpu).into_data().try_to_vec::<f32>().unwrap();
        for (v, l) in x.iter_mut().zip(large) {
            *v = l;
        }
        let x = Tensor::<2>::from_data(burn_data(x, [rows, cols]), &cpu);
        let g = Tensor::<2>::random([rows, cols], Distribution::Uniform(-1.0, 1.0), &cpu);
        for transposed in [false, true] {
            let on = |t: &Tensor<2>, d: &Device| {
                let t = Tensor::<2>::from_data(t.to_data(), d);
                if transposed { t.transpose() } else { t }
            };
            let want = derivative(on(&x, &cpu), on(&g, &cpu)).into_data().try_to_vec::<f32>().unwrap();
            let got = derivative(on(&x, &gpu), on(&g, &gpu)).into_data().try_to_vec::<f32>().unwrap();
            assert!(got.iter().all(|v| v.is_finite()), "[{rows}, {cols}]: non-finite derivative on wgpu");
            let err = got.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
            assert!(err <= 1e-5, "[{rows}, {cols}] (transposed {transposed}): max abs error {err:e}");
        }
    }
}

fn burn_data(values: Vec<f32>, shape: [usize; 2]) -> bertbench_core::burn::tensor::TensorData {
    bertbench_core::burn::tensor::TensorData::new(values, shape)
}

/// burn 0.22.1's sum over the first dimension on wgpu, of a tensor whose last two dimensions are
/// swapped (a transposed view, as the gradient of a product's transposed operand is before it
/// reaches a broadcast): wrong for some shapes ([2, 2, 4, 16], [2, 2, 4, 12]), right for others
/// ([2, 3, 5, 6]) and over other dimensions. The gradient of DeBERTa's relative table first went
/// through it (the device check found it); its attention now folds the batch into the rows
/// instead (`disentangled_attention::against_rows`). burn's bug, kept here until fixed.
#[test]
#[ignore = "known: burn 0.22.1's wgpu sum_dim(0) of a transposed view is wrong for some shapes"]
fn wgpu_sum_over_the_batch_of_a_transposed_view_matches_the_cpu() {
    use bertbench_core::burn::prelude::*;
    use bertbench_core::burn::tensor::TensorData;
    for shape in [[2usize, 3, 5, 6], [2, 2, 4, 16], [2, 2, 4, 12]] {
        let n: usize = shape.iter().product();
        let sums: Vec<Vec<f32>> = [Device::flex(), gpu()]
            .iter()
            .map(|device| {
                let x = Tensor::<4>::from_data(TensorData::new((0..n).map(|v| (v as f32 * 0.37).sin()).collect::<Vec<f32>>(), shape), device);
                x.swap_dims(2, 3).sum_dim(0).into_data().try_to_vec::<f32>().unwrap()
            })
            .collect();
        close(&format!("sum over the batch of a transposed {shape:?}"), &sums[1], &sums[0]);
    }
}

/// ELECTRA's pieces on wgpu: the discriminator's logits and loss as on the CPU from the same
/// weights, and the generator's sample (drawn on the device) replacing picked positions only.
#[test]
fn wgpu_electra_discriminator_matches_cpu_and_samples_at_the_picks_only() {
    use bertbench_core::bert::model::BertInput;
    use bertbench_core::burn::prelude::{Int, Tensor};
    use bertbench_core::burn::tensor::TensorData;
    use bertbench_core::tasks::replaced_token::{ElectraForPreTraining, discriminator_loss};
    let cpu = Device::flex();
    cpu.seed(5);
    let config = bertbench_core::bert::config::Preset::Tiny.config(20).with_max_position_embeddings(16).without_dropout();
    let model = ElectraForPreTraining::from_scratch(&config, &cpu);
    let on_gpu = pollster::block_on(bertbench_core::train::copy_to(model.clone(), &gpu())).unwrap();
    let ints = |v: Vec<i64>, d: &Device| Tensor::<2, Int>::from_data(TensorData::new(v, [2, 4]), d);
    let input = |d: &Device| BertInput { input_ids: ints(vec![2, 7, 9, 3, 2, 11, 3, 0], d), token_type_ids: ints(vec![0; 8], d), attention_mask: ints(vec![1, 1, 1, 1, 1, 1, 1, 0], d) };
    let replaced = |d: &Device| ints(vec![0, 1, 0, 0, 0, 1, 0, 0], d);
    let read = |t: Tensor<2>| t.into_data().try_to_vec::<f32>().unwrap();
    let (a, b) = (model.discriminator.forward(input(&cpu)), on_gpu.discriminator.forward(input(&gpu())));
    let (la, _) = discriminator_loss(a.clone(), replaced(&cpu), input(&cpu).attention_mask);
    let (lb, _) = discriminator_loss(b.clone(), replaced(&gpu()), input(&gpu()).attention_mask);
    let worst = read(a).iter().zip(read(b)).map(|(x, y)| (x - y).abs()).fold(0f32, f32::max);
    assert!(worst < 1e-4, "discriminator logits differ by {worst}");
    let (la, lb) = (la.into_data().try_to_vec::<f32>().unwrap()[0], lb.into_data().try_to_vec::<f32>().unwrap()[0]);
    assert!((la - lb).abs() < 1e-5, "loss {la} on the CPU, {lb} on wgpu");
    let g = gpu();
    let picked = Tensor::<1, Int>::from_data(TensorData::new(vec![1i64, 5], [2]), &g);
    let targets = Tensor::<1, Int>::from_data(TensorData::new(vec![7i64, 11], [2]), &g);
    let masked = BertInput { input_ids: ints(vec![2, 4, 9, 3, 2, 4, 3, 0], &g), ..input(&g) };
    let out = on_gpu.forward(masked, ints(vec![2, 7, 9, 3, 2, 11, 3, 0], &g), picked, targets);
    let flags = out.replaced.into_data().convert::<i64>().try_to_vec::<i64>().unwrap();
    assert!(flags.iter().enumerate().all(|(i, &f)| f == 0 || i == 1 || i == 5), "{flags:?}");
    assert!(read(out.logits).iter().all(|v| v.is_finite()));
}
