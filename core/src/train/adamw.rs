//! AdamW whose state a browser checkpoint can keep.
//!
//! The update is burn's `AdamW` (decoupled weight decay, bias-corrected moments, the same
//! operations in the same order: a unit test holds the two to the same weights), set up as
//! transformers' `Trainer` does: ε = 1e-8 and no decay on biases and LayerNorm. What differs is
//! the state: burn's optimizer record is read back synchronously and loaded onto the default
//! device, which the browser cannot do on WebGPU, nor on the CPU in a worker without WebGPU.
//! Here the moments are read with asynchronous reads ([`AdamW::write_state`]) and restored onto
//! a given device ([`AdamW::load_state`]), so a run resumed from a checkpoint in the browser
//! continues exactly as a native one does.

use std::collections::HashMap;

use burn::module::{Module, ModuleMapper, Param, ParamId};
use burn::optim::GradientsParams;
use burn::prelude::*;
use safetensors::tensor::Dtype;

use super::stream::{Entry, FileSink, Files, write_safetensors};

use crate::error::{Error, Result};

/// Path parts of parameters that are not decayed.
const NO_DECAY: [&str; 2] = ["bias", "layer_norm"];

/// Whether the parameter at `path` (its modules' field names, outermost first) is decayed: not a
/// bias nor a LayerNorm's, as `transformers`' `Trainer` decides by module type and by name
/// (`bias`, `layer_norm`, and ModernBERT's `norm`, `attn_norm`, `final_norm`…: a part that is
/// `norm` or ends in `_norm`).
fn decays<S: AsRef<str>>(path: &[S]) -> bool {
    !path.iter().map(AsRef::as_ref).any(|p| NO_DECAY.iter().any(|n| p.contains(n)) || p == "norm" || p.ends_with("_norm"))
}

/// One parameter's state: steps taken, first and second moments (flat, `[numel]`).
#[derive(Clone)]
struct Moments {
    time: usize,
    first: Tensor<1>,
    second: Tensor<1>,
}

/// AdamW over a module's parameters, keyed by parameter id.
#[derive(Clone)]
pub struct AdamW {
    beta_1: f32,
    beta_2: f32,
    epsilon: f32,
    weight_decay: f32,
    state: HashMap<ParamId, Moments>,
    /// Whether CPU parameters take the one-pass update ([`AdamW::update_on_host`]); the tests
    /// switch it off to hold both versions to burn's.
    fused: bool,
}

impl AdamW {
    /// β = (0.9, 0.999), ε = 1e-8, `weight_decay` on every parameter but biases and LayerNorm.
    pub fn new(weight_decay: f64) -> Self {
        Self { beta_1: 0.9, beta_2: 0.999, epsilon: 1e-8, weight_decay: weight_decay as f32, state: HashMap::new(), fused: true }
    }

    /// One update of every parameter of `module` that has a gradient in `grads`, at learning
    /// rate `lr`.
    pub fn step<M: Module>(&mut self, lr: f64, module: M, mut grads: GradientsParams) -> M {
        let mut mapper = Step { optim: self, lr, grads: &mut grads, path: Vec::new() };
        module.map(&mut mapper)
    }

    /// Parameters with a state.
    pub fn len(&self) -> usize {
        self.state.len()
    }

    /// Whether no step has been taken.
    pub fn is_empty(&self) -> bool {
        self.state.is_empty()
    }

    /// Writes the moments into `sink` as the safetensors file `name` (`{id}.m` and `{id}.v`, the
    /// step counts in the metadata), a piece at a time, with asynchronous reads: safe on WebGPU
    /// in the browser, and never a whole copy of the moments in memory.
    pub async fn write_state(&self, sink: &mut impl FileSink, name: &str) -> Result<()> {
        let mut ids: Vec<&ParamId> = self.state.keys().collect();
        ids.sort_by_key(|id| id.val());
        let mut entries = Vec::with_capacity(ids.len() * 2);
        let mut metadata = HashMap::new();
        for id in ids {
            let m = &self.state[id];
            metadata.insert(id.val().to_string(), m.time.to_string());
            for (suffix, t) in [("m", &m.first), ("v", &m.second)] {
                entries.push(Entry { name: format!("{}.{suffix}", id.val()), shape: t.dims().to_vec(), values: t.clone() });
            }
        }
        write_safetensors(sink, name, entries, metadata).await
    }

    /// [`write_state`](Self::write_state) into memory: the file's bytes.
    pub async fn state_bytes(&self) -> Result<Vec<u8>> {
        let mut files = Files::new();
        self.write_state(&mut files, "optimizer").await?;
        Ok(files.pop().map(|(_, bytes)| bytes).unwrap_or_default())
    }

    /// Replaces the state with the one [`AdamW::state_bytes`] wrote, on `device` (where the
    /// gradients will be: the inner device of an autodiff one).
    pub fn load_state(&mut self, bytes: &[u8], device: &Device) -> Result<()> {
        let bad = |e: String| Error::Training(format!("the checkpoint's optimizer state is unreadable: {e}"));
        let file = safetensors::SafeTensors::deserialize(bytes).map_err(|e| bad(e.to_string()))?;
        let (_, meta) = safetensors::SafeTensors::read_metadata(bytes).map_err(|e| bad(e.to_string()))?;
        let read = |name: &str| -> Result<Tensor<1>> {
            let view = file.tensor(name).map_err(|e| bad(e.to_string()))?;
            if view.dtype() != Dtype::F32 || view.shape().len() != 1 {
                return Err(bad(format!("{name} is not a flat f32 tensor")));
            }
            let values: Vec<f32> = view.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
            let n = values.len();
            Ok(Tensor::from_data(TensorData::new(values, [n]), device))
        };
        let mut state = HashMap::new();
        for (id, time) in meta.metadata().clone().unwrap_or_default() {
            let key: u64 = id.parse().map_err(|_| bad(format!("“{id}” is not a parameter id")))?;
            let time: usize = time.parse().map_err(|_| bad(format!("“{time}” is not a step count")))?;
            let (first, second) = (read(&format!("{id}.m"))?, read(&format!("{id}.v"))?);
            if first.dims() != second.dims() {
                return Err(bad(format!("the moments of parameter {id} differ in size")));
            }
            state.insert(ParamId::from(key), Moments { time, first, second });
        }
        self.state = state;
        Ok(())
    }

    /// The new value of a parameter `tensor` (any rank, flattened) with gradient `grad`.
    fn update(&mut self, id: ParamId, decay: bool, lr: f64, tensor: Tensor<1>, grad: Tensor<1>) -> Tensor<1> {
        if self.fused && grad.device() == Device::flex() {
            return self.update_on_host(id, decay, lr, tensor, grad);
        }
        let (b1, b2) = (self.beta_1, self.beta_2);
        let moments = match self.state.remove(&id) {
            Some(Moments { time, first, second }) if first.dims() == grad.dims() => Moments {
                time: time + 1,
                first: first.mul_scalar(b1).add(grad.clone().mul_scalar(1.0 - b1)),
                second: second.mul_scalar(b2).add(grad.square().mul_scalar(1.0 - b2)),
            },
            _ => Moments { time: 1, first: grad.clone().mul_scalar(1.0 - b1), second: grad.square().mul_scalar(1.0 - b2) },
        };
        let time = moments.time as i32;
        let correction_2 = (1.0 - b2.powi(time)).sqrt();
        let factor = correction_2 / (1.0 - b1.powi(time));
        let delta = moments.first.clone().mul_scalar(factor).div(moments.second.clone().sqrt().add_scalar(self.epsilon * correction_2));
        self.state.insert(id, moments);
        let decay_rate = if decay { lr * f64::from(self.weight_decay) } else { 0.0 };
        let decayed = if decay_rate == 0.0 { tensor } else { tensor.mul_scalar(1.0 - decay_rate) };
        decayed - delta.mul_scalar(lr)
    }
    /// [`AdamW::update`] on the CPU: the same arithmetic in the same order, in one pass over the
    /// values instead of fourteen tensor operations (each a pass and an allocation), split over
    /// the threads where there are any. It runs over every weight at every step, so each pass
    /// it saves counts.
    fn update_on_host(&mut self, id: ParamId, decay: bool, lr: f64, tensor: Tensor<1>, grad: Tensor<1>) -> Tensor<1> {
        let device = grad.device();
        let host = |t: Tensor<1>| t.into_data().try_into_vec::<f32>().expect("the model's parameters are f32");
        let g = host(grad);
        let mut w = host(tensor);
        let (time, mut m, mut v) = match self.state.remove(&id) {
            Some(Moments { time, first, second }) if first.dims() == [g.len()] => (time + 1, host(first), host(second)),
            _ => (1, vec![0.0; g.len()], vec![0.0; g.len()]),
        };
        let (b1, b2) = (self.beta_1, self.beta_2);
        let correction_2 = (1.0 - b2.powi(time as i32)).sqrt();
        let decay_rate = if decay { lr * f64::from(self.weight_decay) } else { 0.0 };
        let k = Coefficients {
            b1,
            b2,
            factor: correction_2 / (1.0 - b1.powi(time as i32)),
            epsilon: self.epsilon * correction_2,
            keep: (1.0 - decay_rate) as f32,
            lr: lr as f32,
        };
        fused_update(&mut w, &g, &mut m, &mut v, &k);
        let n = g.len();
        let make = |values: Vec<f32>| Tensor::<1>::from_data(TensorData::new(values, [n]), &device);
        self.state.insert(id, Moments { time, first: make(m), second: make(v) });
        make(w)
    }
}

/// The numbers one AdamW update of a parameter needs besides its values.
struct Coefficients {
    b1: f32,
    b2: f32,
    /// `sqrt(1 - β₂ᵗ) / (1 - β₁ᵗ)`.
    factor: f32,
    /// `ε · sqrt(1 - β₂ᵗ)`.
    epsilon: f32,
    /// `1 - lr · weight_decay`.
    keep: f32,
    lr: f32,
}

/// Updates weights `w` and moments `m`, `v` from gradients `g` in place, element by element as
/// the tensor version does (halves on two threads above 64k values).
fn fused_update(w: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32], k: &Coefficients) {
    const SERIAL: usize = 1 << 16;
    if w.len() > SERIAL {
        let mid = w.len() / 2;
        let (w1, w2) = w.split_at_mut(mid);
        let (g1, g2) = g.split_at(mid);
        let (m1, m2) = m.split_at_mut(mid);
        let (v1, v2) = v.split_at_mut(mid);
        crate::cpu::join(|| fused_update(w1, g1, m1, v1, k), || fused_update(w2, g2, m2, v2, k));
        return;
    }
    let (one_minus_b1, one_minus_b2) = (1.0 - k.b1, 1.0 - k.b2);
    for (((w, &g), m), v) in w.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
        *m = *m * k.b1 + g * one_minus_b1;
        *v = *v * k.b2 + g * g * one_minus_b2;
        let delta = *m * k.factor / (v.sqrt() + k.epsilon);
        *w = *w * k.keep - delta * k.lr;
    }
}

/// Updates each parameter that has a gradient, knowing its path (for the no-decay group).
struct Step<'a> {
    optim: &'a mut AdamW,
    lr: f64,
    grads: &'a mut GradientsParams,
    path: Vec<String>,
}

impl ModuleMapper for Step<'_> {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.push(name.to_string());
    }

    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.pop();
    }

    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let (id, tensor, mapper) = param.consume();
        let Some(grad) = self.grads.remove::<D>(id) else {
            return Param::from_mapped_value(id, tensor, mapper);
        };
        let require_grad = tensor.is_require_grad();
        // `from_inner` gives the default strategy; the parameter keeps its device's (gradient
        // checkpointing or not), or the next forward pass would mix two strategies.
        let strategy = tensor.gradient_checkpointing_strategy();
        let dims = tensor.dims();
        let n = dims.iter().product::<usize>();
        let decay = decays(&self.path);
        let updated = self.optim.update(id, decay, self.lr, tensor.inner().reshape([n]), grad.reshape([n]));
        let mut tensor = Tensor::from_inner(updated.reshape(dims));
        if let Some(strategy) = strategy {
            tensor = tensor.with_gradient_checkpointing_strategy(strategy);
        }
        if require_grad {
            tensor = tensor.require_grad();
        }
        Param::from_mapped_value(id, tensor, mapper)
    }
}


/// AdamW as transformers' Trainer sets it up: ε = 1e-8, no decay on biases and LayerNorm.
pub fn adamw(weight_decay: f64) -> AdamW {
    AdamW::new(weight_decay)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::config::Preset;
    use crate::bert::model::{BertModel, BertModelConfig};
    use burn::module::ModuleVisitor;

    fn model(device: &Device) -> BertModel {
        BertModelConfig::new(Preset::Tiny.config(40).with_max_position_embeddings(16).without_dropout()).init(device)
    }

    /// Made-up gradients for every parameter, the same for the same `step` (a real backward
    /// pass sums in a thread-dependent order, and Adam's normalisation magnifies the last bit of
    /// near-zero gradients). Some entries are exactly zero, as for unused embedding rows.
    fn grads(model: &BertModel, step: usize, device: &Device) -> GradientsParams {
        struct Fill {
            grads: GradientsParams,
            step: usize,
            index: usize,
            device: Device,
        }
        impl ModuleVisitor for Fill {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                let dims = param.val().dims();
                let n: usize = dims.iter().product();
                let values: Vec<f32> = (0..n)
                    .map(|i| if i % 5 == 3 { 0.0 } else { ((i * 31 + self.index * 7 + self.step * 13) as f32 * 0.37).sin() * 0.1 })
                    .collect();
                self.grads.register(param.id, Tensor::<D>::from_data(TensorData::new(values, dims), &self.device));
                self.index += 1;
            }
        }
        let mut fill = Fill { grads: GradientsParams::new(), step, index: 0, device: device.clone().inner() };
        model.visit(&mut fill);
        fill.grads
    }

    fn max_diff(a: &BertModel, b: &BertModel) -> f32 {
        let flat = |m: &BertModel| crate::bert::checkpoint::save_weights(m).unwrap();
        let (fa, fb) = (flat(a), flat(b));
        let (sa, sb) = (safetensors::SafeTensors::deserialize(&fa).unwrap(), safetensors::SafeTensors::deserialize(&fb).unwrap());
        let mut worst = 0f32;
        for name in sa.names() {
            let (x, y) = (sa.tensor(name).unwrap(), sb.tensor(name).unwrap());
            for (p, q) in x.data().chunks_exact(4).zip(y.data().chunks_exact(4)) {
                let (p, q) = (f32::from_le_bytes(p.try_into().unwrap()), f32::from_le_bytes(q.try_into().unwrap()));
                worst = worst.max((p - q).abs());
            }
        }
        worst
    }

    /// Both versions of the update, the one-pass CPU one and the tensor one (every other
    /// device's), against burn's.
    #[test]
    fn matches_burns_adamw_with_the_same_groups() {
        for fused in [true, false] {
            let mut ours = AdamW::new(0.01);
            ours.fused = fused;
            matches_burns_adamw(ours);
        }
    }

    #[test]
    fn a_long_parameter_split_over_threads_gets_the_same_update() {
        let n = 300_000; // above the split threshold twice over
        let wave = |k: f32| -> Vec<f32> { (0..n).map(|i| ((i as f32) * k).sin()).collect() };
        let g = wave(0.37);
        let k = Coefficients { b1: 0.9, b2: 0.999, factor: 0.5, epsilon: 1e-8, keep: 0.999, lr: 1e-3 };
        let (mut w, mut m, mut v) = (wave(0.11), wave(0.05), wave(0.07).iter().map(|x| x * x).collect::<Vec<f32>>());
        let (mut w2, mut m2, mut v2) = (w.clone(), m.clone(), v.clone());
        fused_update(&mut w, &g, &mut m, &mut v, &k);
        // The same, 1,000 values at a time: never split.
        for at in (0..n).step_by(1000) {
            let end = (at + 1000).min(n);
            fused_update(&mut w2[at..end], &g[at..end], &mut m2[at..end], &mut v2[at..end], &k);
        }
        assert_eq!((w.clone(), m, v), (w2, m2, v2));
        assert!(w.iter().zip(wave(0.11)).any(|(a, b)| a != &b), "the update changed the weights");
    }

    fn matches_burns_adamw(mut ours: AdamW) {
        let device = Device::flex().autodiff();
        let start = model(&device);
        let decayed = burn::optim::AdamWConfig::new().with_epsilon(1e-8).with_weight_decay(0.01);
        let plain = burn::optim::AdamWConfig::new().with_epsilon(1e-8).with_weight_decay(0.0);
        let mut burns = decayed.init().with_group(burn::module::ParamGroup::from_any_predicates(vec!["bias", "layer_norm"]), plain.build(), None);
        let (mut a, mut b) = (start.clone(), start.clone());
        for (step, lr) in [1e-2, 5e-3, 2e-2, 1e-3, 1e-2].into_iter().enumerate() {
            a = ours.step(lr, a.clone(), grads(&a, step, &device));
            b = burns.step(lr, b.clone(), grads(&b, step, &device));
        }
        assert!(max_diff(&a, &start) > 1e-3, "the steps changed nothing");
        let diff = max_diff(&a, &b);
        assert!(diff < 1e-6, "ours (fused: {}) and burn's AdamW differ by {diff}", ours.fused);
        // The no-decay group matters: decaying everything lands elsewhere.
        let mut all = burn::optim::AdamWConfig::new().with_epsilon(1e-8).with_weight_decay(0.01).init();
        let mut c = start.clone();
        for (step, lr) in [1e-2, 5e-3, 2e-2, 1e-3, 1e-2].into_iter().enumerate() {
            c = all.step(lr, c.clone(), grads(&c, step, &device));
        }
        assert!(max_diff(&a, &c) > 1e-5);
    }

    #[test]
    fn biases_and_every_layer_norm_are_not_decayed() {
        let path = |p: &str| p.split('.').map(String::from).collect::<Vec<_>>();
        for kept in ["bert.encoder.layer.0.attention.output.layer_norm.gamma", "head.classifier.bias", "bert.encoder.layers.1.attn_norm.gamma",
            "bert.encoder.layers.1.mlp_norm.gamma", "bert.encoder.final_norm.gamma", "bert.pooler.norm.beta", "head.transform.norm.gamma"] {
            assert!(!decays(&path(kept)), "{kept}");
        }
        for decayed in ["bert.encoder.layer.0.attention.self_attn.query.weight", "head.transform.dense.weight", "bert.encoder.layers.1.attn.wqkv.weight", "bert.embeddings.word_embeddings.weight"] {
            assert!(decays(&path(decayed)), "{decayed}");
        }
    }

    #[test]
    fn a_restored_state_continues_as_the_uninterrupted_run() {
        let device = Device::flex().autodiff();
        let mut optim = AdamW::new(0.01);
        let mut m = model(&device);
        for step in 0..2 {
            m = optim.step(1e-2, m.clone(), grads(&m, step, &device));
        }
        let bytes = pollster::block_on(optim.state_bytes()).unwrap();
        let mut restored = AdamW::new(0.01);
        restored.load_state(&bytes, &device.clone().inner()).unwrap();
        assert_eq!(restored.len(), optim.len());
        let (mut a, mut b, mut c) = (m.clone(), m.clone(), m.clone());
        let mut fresh = AdamW::new(0.01);
        for step in 2..4 {
            a = optim.step(1e-2, a.clone(), grads(&a, step, &device));
            b = restored.step(1e-2, b.clone(), grads(&b, step, &device));
            c = fresh.step(1e-2, c.clone(), grads(&c, step, &device));
        }
        assert_eq!(max_diff(&a, &b), 0.0);
        // Without the moments the run goes elsewhere: the state matters.
        assert!(max_diff(&a, &c) > 1e-4);
        assert!(restored.load_state(&bytes[..bytes.len() / 2], &device.clone().inner()).is_err());
    }
}
