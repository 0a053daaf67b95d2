//! The default model's lighter copies, written once at setup from its f32 `model.safetensors`:
//! every f32 tensor as f16 ([`halve`]), or every matrix in 8 bits with a scale per group of
//! weights ([`quantize`], the layout `core/src/bert/quantized.rs` reads). The other files of the
//! folder are copied as they are.

use serde_json::{Map, Value, json};

use crate::Result;

/// Weights per scale in [`quantize`]: a row of 384 has 6 scales. Smaller groups follow outliers
/// more closely: a scale per row lets the feed-forward matrices' long rows, which carry outliers,
/// dominate the error (docs/performance.md, "Stored weights", has the figures).
pub const GROUP: usize = 64;

/// One tensor as written: name, safetensors dtype, shape, little-endian bytes.
type Tensor = (String, &'static str, Vec<usize>, Vec<u8>);

/// The file with its F32 tensors as F16 (IEEE half, rounded to nearest even).
pub fn halve(bytes: &[u8]) -> Result<Vec<u8>> {
    rewrite(bytes, |name, dtype, shape, raw| {
        if dtype != "F32" {
            return None;
        }
        let data = floats(raw).flat_map(|x| half::f16::from_f32(x).to_le_bytes()).collect();
        Some(vec![(name.to_string(), "F16", shape.to_vec(), data)])
    })
}

/// The file with each F32 matrix whose rows divide into [`GROUP`]s stored as I8 `q` plus an F16
/// `<name>_scale` of shape `[rows, cols / GROUP]`, so that a weight is `q * scale` (symmetric:
/// a group's largest magnitude becomes ±127). Vectors (biases, layer norms) stay F32.
pub fn quantize(bytes: &[u8]) -> Result<Vec<u8>> {
    rewrite(bytes, |name, dtype, shape, raw| {
        let [rows, cols] = shape else { return None };
        if dtype != "F32" || cols % GROUP != 0 {
            return None;
        }
        let w: Vec<f32> = floats(raw).collect();
        let (mut q, mut scales) = (Vec::with_capacity(w.len()), Vec::with_capacity(w.len() / GROUP * 2));
        for group in w.chunks_exact(GROUP) {
            let max = group.iter().fold(0f32, |m, x| m.max(x.abs()));
            let scale = half::f16::from_f32(if max > 0.0 { max / 127.0 } else { 1.0 });
            let s = scale.to_f32();
            scales.extend_from_slice(&scale.to_le_bytes());
            q.extend(group.iter().map(|x| if s > 0.0 { (x / s).round().clamp(-127.0, 127.0) as i8 as u8 } else { 0 }));
        }
        Some(vec![
            (name.to_string(), "I8", vec![*rows, *cols], q),
            (format!("{name}_scale"), "F16", vec![*rows, cols / GROUP], scales),
        ])
    })
}

fn floats(raw: &[u8]) -> impl Iterator<Item = f32> + '_ {
    raw.chunks_exact(4).map(|x| f32::from_le_bytes([x[0], x[1], x[2], x[3]]))
}

/// The safetensors file with each tensor for which `change(name, dtype, shape, bytes)` says
/// `Some` replaced by what it returns, the others copied; in the original order of the data,
/// its `__metadata__` kept.
fn rewrite(bytes: &[u8], mut change: impl FnMut(&str, &str, &[usize], &[u8]) -> Option<Vec<Tensor>>) -> Result<Vec<u8>> {
    let bad = || "model.safetensors is not a readable safetensors file".to_string();
    let n = u64::from_le_bytes(bytes.get(..8).ok_or_else(bad)?.try_into().map_err(|_| bad())?) as usize;
    let header: Map<String, Value> = serde_json::from_slice(bytes.get(8..8 + n).ok_or_else(bad)?).map_err(|e| e.to_string())?;
    let data = &bytes[8 + n..];
    let mut tensors: Vec<(&String, &Value)> = header.iter().filter(|(k, _)| *k != "__metadata__").collect();
    tensors.sort_by_key(|(_, v)| v["data_offsets"][0].as_u64().unwrap_or(0));
    let (mut out_header, mut out_data) = (Map::new(), Vec::new());
    if let Some(meta) = header.get("__metadata__") {
        out_header.insert("__metadata__".into(), meta.clone());
    }
    for (name, info) in tensors {
        let offset = |i: usize| info["data_offsets"][i].as_u64().map(|x| x as usize).ok_or_else(bad);
        let raw = data.get(offset(0)?..offset(1)?).ok_or_else(bad)?;
        let shape: Vec<usize> = info["shape"].as_array().ok_or_else(bad)?.iter().map(|d| d.as_u64().unwrap_or(0) as usize).collect();
        let dtype = info["dtype"].as_str().ok_or_else(bad)?;
        let written = change(name, dtype, &shape, raw).unwrap_or_else(|| vec![(name.clone(), "", shape.clone(), raw.to_vec())]);
        for (name, new_dtype, shape, bytes) in written {
            let start = out_data.len();
            out_data.extend_from_slice(&bytes);
            let dtype = if new_dtype.is_empty() { dtype } else { new_dtype };
            out_header.insert(name, json!({ "dtype": dtype, "shape": shape, "data_offsets": [start, out_data.len()] }));
        }
    }
    let mut head = serde_json::to_vec(&out_header).map_err(|e| e.to_string())?;
    // The data starts 8-byte aligned, as safetensors' own writer leaves it.
    while (8 + head.len()) % 8 != 0 {
        head.push(b' ');
    }
    let mut out = (head.len() as u64).to_le_bytes().to_vec();
    out.extend(head);
    out.extend(out_data);
    Ok(out)
}
