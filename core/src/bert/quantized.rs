//! Weights stored in 8 bits, widened to f32 when read: the page's default model travels as a
//! quarter of its f32 size (a class on one school connection downloads it 30 times).
//!
//! The layout (written by `cargo xtask setup`, read here): in `model.safetensors`, a matrix
//! `W` (`[rows, cols]`, an I8 tensor under its own name) has a companion `W_scale`, an F16 or
//! F32 tensor of shape `[rows, cols / group]`: each run of `group` weights along a row shares one
//! scale, and a weight is `q * scale` (symmetric, `q` in -127..=127). Groups of 64 keep the
//! error well under per-row scales' (the feed-forward matrices' long rows carry outliers).
//! Every other tensor is stored as it is.
//!
//! 8-bit tensors without such a scale (`bitsandbytes`, GPTQ and other quantized exports) are
//! refused: their values are not weights until a scheme this reader does not know is undone.

use std::collections::HashMap;

use safetensors::{Dtype, SafeTensors};

use crate::error::{Error, Result};

/// The suffix of a quantized matrix's scales: `W` and `W_scale`.
pub const SCALE_SUFFIX: &str = "_scale";

/// Whether `weights` (safetensors bytes) hold 8-bit matrices with their scales.
pub fn is_quantized(weights: &[u8]) -> bool {
    SafeTensors::read_metadata(weights).is_ok_and(|(_, m)| m.tensors().values().any(|t| t.dtype == Dtype::I8))
}

/// `weights` with every 8-bit matrix widened to F32 (`q * scale`) and its scales dropped; the
/// other tensors as they are, in the same order. Bytes without an 8-bit tensor come back
/// unchanged (not copied); bytes that are not safetensors too (the loader says why).
pub fn widen(weights: Vec<u8>) -> Result<Vec<u8>> {
    if !is_quantized(&weights) {
        return Ok(weights);
    }
    let st = SafeTensors::deserialize(&weights).map_err(|e| Error::Weights(e.to_string()))?;
    let views: HashMap<String, safetensors::tensor::TensorView<'_>> = st.tensors().into_iter().collect();
    // What goes where: each tensor's new dtype and byte range, and its 8-bit source's scales.
    let mut plan: Vec<(&String, Dtype, usize, Option<&safetensors::tensor::TensorView<'_>>)> = Vec::new();
    let mut names: Vec<&String> = views.keys().collect();
    names.sort_by_key(|n| views[*n].data().as_ptr() as usize);
    for name in names {
        let view = &views[name];
        if name.strip_suffix(SCALE_SUFFIX).is_some_and(|base| views.get(base).is_some_and(|v| v.dtype() == Dtype::I8)) {
            continue;
        }
        match view.dtype() {
            Dtype::I8 => {
                let scale = views.get(&format!("{name}{SCALE_SUFFIX}")).ok_or_else(|| unknown_scheme(name))?;
                plan.push((name, Dtype::F32, view.data().len() * 4, Some(scale)));
            }
            // Packed or 8-bit floats: another scheme's codes, not weights.
            Dtype::U8 | Dtype::F4 | Dtype::F6_E2M3 | Dtype::F6_E3M2 | Dtype::F8_E5M2 | Dtype::F8_E4M3 | Dtype::F8_E8M0
            | Dtype::F8_E4M3FNUZ | Dtype::F8_E5M2FNUZ => return Err(unknown_scheme(name)),
            dtype => plan.push((name, dtype, view.data().len(), None)),
        }
    }
    // The file written straight into one buffer (the widened model is four times the quantized
    // one: no second copy of it through `safetensors::serialize`), laid out as its writer lays
    // a file out: the header's JSON padded with spaces to 8 bytes, the data in order.
    let mut header = serde_json::Map::new();
    if let Some(meta) = SafeTensors::read_metadata(&weights).ok().and_then(|(_, m)| m.metadata().clone()) {
        header.insert("__metadata__".into(), serde_json::json!(meta));
    }
    let mut offset = 0;
    for (name, dtype, len, _) in &plan {
        let entry = serde_json::json!({ "dtype": dtype, "shape": views[*name].shape(), "data_offsets": [offset, offset + len] });
        header.insert((*name).clone(), entry);
        offset += len;
    }
    let mut head = serde_json::to_vec(&header).map_err(|e| Error::Weights(e.to_string()))?;
    head.resize(head.len().next_multiple_of(8), b' ');
    let mut out = Vec::with_capacity(8 + head.len() + offset);
    out.extend_from_slice(&(head.len() as u64).to_le_bytes());
    out.extend_from_slice(&head);
    for (name, _, len, scale) in plan {
        let view = &views[name];
        match scale {
            Some(scale) => {
                let start = out.len();
                out.resize(start + len, 0);
                dequantize(name, view, scale, &mut out[start..])?;
            }
            None => out.extend_from_slice(view.data()),
        }
    }
    Ok(out)
}

fn unknown_scheme(name: &str) -> Error {
    Error::Weights(format!(
        "`{name}` is stored in 8 bits or fewer without the per-group scales bertbench reads ({name}{SCALE_SUFFIX}): \
         a quantized export (bitsandbytes, GPTQ, …) this page cannot undo exactly. Save the model in f32 or f16 \
         (`model.save_pretrained` of the unquantized model) and open that"
    ))
}

/// One matrix's `q * scale` as little-endian f32 bytes, into `out` (four bytes per code).
fn dequantize(name: &str, q: &safetensors::tensor::TensorView<'_>, scale: &safetensors::tensor::TensorView<'_>, out: &mut [u8]) -> Result<()> {
    let bad = |why: String| Error::Weights(format!("`{name}`: {why}"));
    let (rows, cols) = match q.shape() {
        [r, c] => (*r, *c),
        s => return Err(bad(format!("an 8-bit tensor of shape {s:?} (only matrices are stored in 8 bits)"))),
    };
    let scales: Vec<f32> = match scale.dtype() {
        Dtype::F32 => scale.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
        Dtype::F16 => scale.data().chunks_exact(2).map(|b| burn::tensor::f16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        d => return Err(bad(format!("its scales are {d:?}, not F16 or F32"))),
    };
    let groups = match scale.shape() {
        [r, g] if *r == rows && *g > 0 && cols % g == 0 => *g,
        s => return Err(bad(format!("scales of shape {s:?} do not divide a [{rows}, {cols}] matrix into groups"))),
    };
    // Row-major, so the groups follow each other in the data as their scales do.
    let group = cols / groups;
    for ((codes, &s), dst) in q.data().chunks_exact(group).zip(&scales).zip(out.chunks_exact_mut(group * 4)) {
        for (&b, d) in codes.iter().zip(dst.chunks_exact_mut(4)) {
            d.copy_from_slice(&(f32::from(b as i8) * s).to_le_bytes());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rows × cols` f32 values quantized as `cargo xtask` does, in groups of `group`: the I8
    /// tensor, its F16 scales, and the values they stand for.
    fn quantize(w: &[f32], rows: usize, cols: usize, group: usize) -> (Vec<u8>, Vec<u8>, Vec<f32>) {
        let (mut q, mut s, mut back) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..rows {
            for g in 0..cols / group {
                let chunk = &w[r * cols + g * group..r * cols + (g + 1) * group];
                let max = chunk.iter().fold(0f32, |m, x| m.max(x.abs()));
                let scale = burn::tensor::f16::from_f32(if max > 0.0 { max / 127.0 } else { 1.0 });
                s.extend_from_slice(&scale.to_le_bytes());
                for x in chunk {
                    let v = (x / scale.to_f32()).round().clamp(-127.0, 127.0) as i8;
                    q.push(v as u8);
                    back.push(f32::from(v) * scale.to_f32());
                }
            }
        }
        (q, s, back)
    }

    fn file(tensors: Vec<(&str, Dtype, Vec<usize>, &[u8])>) -> Vec<u8> {
        let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = tensors
            .into_iter()
            .map(|(n, d, s, b)| (n.to_string(), safetensors::tensor::TensorView::new(d, s, b).unwrap()))
            .collect();
        safetensors::serialize(views, None).unwrap()
    }

    fn f32s(bytes: &[u8]) -> Vec<f32> {
        bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
    }

    #[test]
    fn widening_gives_each_group_its_own_scale_and_keeps_the_rest() {
        let (rows, cols, group) = (3, 8, 4);
        // Each group of four a different magnitude, one group all zeros.
        let w: Vec<f32> = (0..rows * cols).map(|i| if i / 4 == 2 { 0.0 } else { ((i as f32) - 11.5) * 10f32.powi((i / 4) as i32 % 3 - 1) }).collect();
        let (q, s, back) = quantize(&w, rows, cols, group);
        let bias: Vec<u8> = [0.5f32, -1.0, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect();
        let bytes = file(vec![
            ("a.weight", Dtype::I8, vec![rows, cols], &q),
            ("a.weight_scale", Dtype::F16, vec![rows, cols / group], &s),
            ("a.bias", Dtype::F32, vec![3], &bias),
        ]);
        assert!(is_quantized(&bytes));
        let out = widen(bytes).unwrap();
        let st = SafeTensors::deserialize(&out).unwrap();
        let mut names: Vec<&str> = st.names();
        names.sort();
        assert_eq!(names, ["a.bias", "a.weight"], "the scales are dropped");
        let weight = st.tensor("a.weight").unwrap();
        assert_eq!((weight.dtype(), weight.shape()), (Dtype::F32, &[rows, cols][..]));
        assert_eq!(f32s(weight.data()), back);
        // Within half a step of the original: each group's step is its own max / 127.
        for (i, (a, b)) in w.iter().zip(&back).enumerate() {
            let max = w[i / group * group..(i / group + 1) * group].iter().fold(0f32, |m, x| m.max(x.abs()));
            assert!((a - b).abs() <= max / 127.0 * 0.51 + 1e-6, "{i}: {a} vs {b}");
        }
        assert_eq!(st.tensor("a.bias").unwrap().data(), &bias[..]);
    }

    #[test]
    fn files_without_8_bit_tensors_pass_through_untouched() {
        let bias: Vec<u8> = [1f32, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect();
        let bytes = file(vec![("b", Dtype::F32, vec![2], &bias)]);
        assert!(!is_quantized(&bytes));
        assert_eq!(widen(bytes.clone()).unwrap(), bytes);
        assert_eq!(widen(b"not safetensors".to_vec()).unwrap(), b"not safetensors");
    }

    #[test]
    fn other_quantization_schemes_are_refused_by_name() {
        let q = [1u8, 2, 3, 4];
        let e = widen(file(vec![("encoder.layer.0.output.dense.weight", Dtype::I8, vec![2, 2], &q)])).unwrap_err().to_string();
        assert!(e.contains("encoder.layer.0.output.dense.weight") && e.contains("f32 or f16"), "{e}");
        let s = burn::tensor::f16::from_f32(0.1).to_le_bytes().repeat(3);
        let e = widen(file(vec![("w", Dtype::I8, vec![2, 2], &q), ("w_scale", Dtype::F16, vec![3, 1], &s)])).unwrap_err().to_string();
        assert!(e.contains("do not divide"), "{e}");
    }
}
