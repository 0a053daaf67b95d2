//! Checkpoint files written a piece at a time.
//!
//! A full fine-tuning checkpoint is three or four times the model's weights (weights, AdamW's two
//! moments, maybe the best weights). Built whole, each file would sit in memory as read-back
//! values, then as serialized bytes: in the browser's training worker that grows the wasm memory
//! (which never shrinks) by a file's size or more. Here a file goes to a [`FileSink`] as a
//! safetensors header and then each tensor's values, read from the device [`PIECE`] values at a
//! time, so the writer holds a few megabytes however large the file. The header is built by the
//! `safetensors` crate's own [`Metadata`], so the files are exactly what
//! [`safetensors::SafeTensors`] reads.

use std::collections::HashMap;
use std::future::Future;

use burn::prelude::*;
use safetensors::tensor::{Dtype, Metadata, TensorInfo};

use crate::error::{Error, Result};
use crate::nn::read_f32;

/// Values read from the device at a time (4 MB of f32).
pub const PIECE: usize = 1 << 20;

/// Where files go, a piece at a time: the browser's storage, or memory ([`Files`]).
pub trait FileSink {
    /// Starts file `name`: the [`write`](Self::write)s until the next `begin` are its bytes.
    fn begin(&mut self, name: &str) -> impl Future<Output = Result<()>>;

    /// Appends `bytes` to the file begun last.
    fn write(&mut self, bytes: &[u8]) -> Result<()>;
}

/// Whole files in memory, in the order they were written.
pub type Files = Vec<(String, Vec<u8>)>;

impl FileSink for Files {
    async fn begin(&mut self, name: &str) -> Result<()> {
        self.push((name.to_string(), Vec::new()));
        Ok(())
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        match self.last_mut() {
            Some((_, file)) => {
                file.extend_from_slice(bytes);
                Ok(())
            }
            None => Err(Error::Training("bytes were written before a file was begun".into())),
        }
    }
}

/// One f32 tensor of a file: its name, its shape in the file, and its values, flat.
pub struct Entry {
    /// Name in the file.
    pub name: String,
    /// Shape recorded in the file; its product is `values`' length.
    pub shape: Vec<usize>,
    /// The values, `[numel]`.
    pub values: Tensor<1>,
}

/// Writes `entries` into `sink` as the safetensors file `name`, in the given order, with
/// `metadata` in its header.
pub async fn write_safetensors(sink: &mut impl FileSink, name: &str, entries: Vec<Entry>, metadata: HashMap<String, String>) -> Result<()> {
    write_safetensors_in(sink, name, entries, metadata, PIECE).await
}

/// [`write_safetensors`], reading `piece` values at a time.
async fn write_safetensors_in(
    sink: &mut impl FileSink,
    name: &str,
    entries: Vec<Entry>,
    metadata: HashMap<String, String>,
    piece: usize,
) -> Result<()> {
    let failed = |e: String| Error::Training(format!("could not write {name}: {e}"));
    let mut offset = 0;
    let mut infos = Vec::with_capacity(entries.len());
    for entry in &entries {
        let numel = entry.values.dims()[0];
        if entry.shape.iter().product::<usize>() != numel {
            return Err(failed(format!("{} has {numel} values for the shape {:?}", entry.name, entry.shape)));
        }
        let info = TensorInfo { dtype: Dtype::F32, shape: entry.shape.clone(), data_offsets: (offset, offset + 4 * numel) };
        infos.push((entry.name.clone(), info));
        offset += 4 * numel;
    }
    // No metadata rather than an empty map: safetensors' serializer writes an empty map next
    // to no tensors as `{},"__metadata__":{}}`, which no reader accepts (AdamW before its first
    // step has no moments to write).
    let metadata = (!metadata.is_empty()).then_some(metadata);
    let header = Metadata::new(metadata, infos).map_err(|e| failed(e.to_string()))?;
    let mut header = serde_json::to_vec(&header).map_err(|e| failed(e.to_string()))?;
    // Padded with spaces to a multiple of 8 bytes, as the crate's own writer does.
    header.resize(header.len().next_multiple_of(8), b' ');
    sink.begin(name).await?;
    sink.write(&(header.len() as u64).to_le_bytes())?;
    sink.write(&header)?;
    for entry in entries {
        let numel = entry.values.dims()[0];
        let mut start = 0;
        while start < numel {
            let end = (start + piece).min(numel);
            let values = read_f32(entry.values.clone().slice([start..end])).await?;
            write_f32(sink, &values)?;
            start = end;
        }
    }
    Ok(())
}

/// Writes `values` as little-endian bytes (without a copy on little-endian machines: wasm, x86,
/// ARM).
pub fn write_f32(sink: &mut impl FileSink, values: &[f32]) -> Result<()> {
    if cfg!(target_endian = "little") {
        sink.write(bytemuck::cast_slice(values))
    } else {
        sink.write(&values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, shape: &[usize], first: f32) -> Entry {
        let numel: usize = shape.iter().product();
        let values: Vec<f32> = (0..numel).map(|i| first + i as f32 * 0.5).collect();
        Entry { name: name.into(), shape: shape.to_vec(), values: Tensor::from_data(TensorData::new(values, [numel]), &Device::flex()) }
    }

    /// Files that the `safetensors` crate reads back exactly, whatever the piece size (tensors
    /// smaller than, equal to and several pieces long, one empty), in the order written.
    #[test]
    fn streamed_files_read_back_exactly() {
        for piece in [1, 3, 7, 1000] {
            let entries = || vec![entry("b", &[2, 3], 1.0), entry("a", &[7], -4.0), entry("empty", &[0, 5], 0.0), entry("c", &[3, 2, 2], 100.0)];
            let mut files = Files::new();
            let metadata = HashMap::from([("a".to_string(), "17".to_string())]);
            pollster::block_on(write_safetensors_in(&mut files, "x.safetensors", entries(), metadata.clone(), piece)).unwrap();
            pollster::block_on(files.begin("other")).unwrap();
            files.write(b"next").unwrap();
            assert_eq!(files.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["x.safetensors", "other"]);
            assert_eq!(files[1].1, b"next");
            let bytes = &files[0].1;
            let read = safetensors::SafeTensors::deserialize(bytes).unwrap();
            let (header, meta) = safetensors::SafeTensors::read_metadata(bytes).unwrap();
            assert_eq!(header % 8, 0);
            assert_eq!(meta.metadata().as_ref(), Some(&metadata));
            for e in entries() {
                let view = read.tensor(&e.name).unwrap();
                assert_eq!(view.dtype(), Dtype::F32);
                assert_eq!(view.shape(), e.shape.as_slice());
                let values: Vec<f32> = view.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
                assert_eq!(values, e.values.into_data().try_to_vec::<f32>().unwrap(), "{} with pieces of {piece}", e.name);
            }
            // The data follows the given order, not the crate's sorted one.
            let offsets: Vec<usize> = ["b", "a", "empty", "c"].iter().map(|n| meta.info(n).unwrap().data_offsets.0).collect();
            assert_eq!(offsets, [0, 24, 52, 52]);
        }
    }

    #[test]
    fn a_shape_that_does_not_fit_the_values_is_refused() {
        let mut bad = entry("a", &[2, 3], 0.0);
        bad.shape = vec![4, 2];
        let mut files = Files::new();
        let err = pollster::block_on(write_safetensors(&mut files, "x", vec![bad], HashMap::new())).unwrap_err();
        assert!(err.to_string().contains("6 values for the shape [4, 2]"), "{err}");
        assert!(files.is_empty(), "nothing is begun");
        assert!(files.write(b"x").is_err());
    }

    #[test]
    fn a_file_with_no_tensors_reads_back() {
        let mut files = Files::new();
        pollster::block_on(write_safetensors(&mut files, "empty.safetensors", Vec::new(), HashMap::new())).unwrap();
        let (name, bytes) = files.remove(0);
        assert_eq!(name, "empty.safetensors");
        assert_eq!(safetensors::SafeTensors::deserialize(&bytes).unwrap().len(), 0);
    }
}
