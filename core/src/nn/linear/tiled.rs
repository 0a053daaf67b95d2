//! A register-tiled matrix product for burn's CubeCL backend (WebGPU, Vulkan, CUDA).
//!
//! Without cooperative-matrix instructions (WebGPU has none) burn's matmul falls back to
//! cubek's `SimpleUnit` routine, which stages tiles through workgroup memory. Each invocation
//! here computes a block of [`ROWS`] rows × [`COLS`] vectors (of up to 4 columns) of the output
//! straight from the operands: per step of the inner dimension it loads `COLS` vectors of `rhs`
//! and `ROWS` scalars of `lhs`, and does `ROWS × COLS` vector multiply-adds on accumulators that
//! stay in registers: the classic register-blocked SGEMM, with no barriers. The block shape was
//! chosen with `bench/wgsl_matmul.mjs`; what it gains is in docs/performance.md.
//!
//! Batched products (`[..., m, k] · [..., k, n]`, the same batch dimensions on both sides, as
//! attention's per-head products have) run one batch entry per workgroup layer. `lhs` is read
//! through its strides (a transposed view in place); `rhs` is read a row of vectors at a time,
//! so a view whose last dimension is not contiguous is copied first. Anything else goes to
//! burn's matmul.

use burn_cubecl::tensor::CubeTensor;
use burn::tensor::DType;
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::empty_device_dtype;
use cubecl::prelude::*;

/// Output rows per invocation.
pub const ROWS: usize = 8;
/// Output vectors per invocation.
pub const COLS: usize = 2;
/// Invocations per workgroup along the columns and along the rows.
const WORKGROUP: (u32, u32) = (8, 8);
/// The most batch entries one launch takes (WebGPU's smallest guaranteed dispatch size).
const MAX_BATCH: usize = 65_535;

/// One invocation: batch entry `z`, the output block at rows `ROWS · y ..`, vectors `COLS · x ..`.
///
/// Rows and vectors past the end are clamped when read (their results are never written), so
/// the inner loop has no branches.
#[cube(launch_unchecked)]
fn tiled_matmul_kernel<N: Size>(
    lhs: &Tensor<f32>,
    rhs: &Tensor<Vector<f32, N>>,
    out: &mut Tensor<Vector<f32, N>>,
    #[comptime] rows: usize,
    #[comptime] cols: usize,
) {
    let line = rhs.vector_size();
    let rank = out.rank();
    let m = out.shape(rank - 2);
    let n_vectors = out.shape(rank - 1) / line;
    let k_len = lhs.shape(rank - 1);
    let row0 = ABSOLUTE_POS_Y as usize * rows;
    let col0 = ABSOLUTE_POS_X as usize * cols;
    if row0 >= m || col0 >= n_vectors {
        terminate!();
    }

    // Where this batch entry starts in each operand.
    let mut rest = ABSOLUTE_POS_Z as usize;
    let mut lhs_start = 0usize;
    let mut rhs_start = 0usize;
    let mut out_start = 0usize;
    for i in 0..rank - 2 {
        let dim = rank - 3 - i;
        let index = rest % out.shape(dim);
        rest /= out.shape(dim);
        lhs_start += index * lhs.stride(dim);
        rhs_start += index * rhs.stride(dim);
        out_start += index * out.stride(dim);
    }

    let lhs_row_stride = lhs.stride(rank - 2);
    let lhs_k_stride = lhs.stride(rank - 1);
    let rhs_row = rhs.stride(rank - 2) / line;
    let rhs_start = rhs_start / line;
    let mut lhs_rows = Array::<usize>::new(rows);
    #[unroll]
    for i in 0..rows {
        lhs_rows[i] = lhs_start + clamp_max(row0 + i, m - 1) * lhs_row_stride;
    }
    let mut rhs_cols = Array::<usize>::new(cols);
    #[unroll]
    for j in 0..cols {
        rhs_cols[j] = rhs_start + clamp_max(col0 + j, n_vectors - 1);
    }

    let mut acc = Array::<Vector<f32, N>>::new(rows * cols);
    #[unroll]
    for t in 0..rows * cols {
        acc[t] = Vector::broadcast(0.0f32);
    }
    let mut b = Array::<Vector<f32, N>>::new(cols);
    for k in 0..k_len {
        #[unroll]
        for j in 0..cols {
            b[j] = rhs[k * rhs_row + rhs_cols[j]];
        }
        #[unroll]
        for i in 0..rows {
            let a = Vector::broadcast(lhs[lhs_rows[i] + k * lhs_k_stride]);
            #[unroll]
            for j in 0..cols {
                acc[i * cols + j] += a * b[j];
            }
        }
    }

    let out_row = out.stride(rank - 2) / line;
    let out_start = out_start / line;
    #[unroll]
    for i in 0..rows {
        #[unroll]
        for j in 0..cols {
            if row0 + i < m && col0 + j < n_vectors {
                out[out_start + (row0 + i) * out_row + col0 + j] = acc[i * cols + j];
            }
        }
    }
}

/// Whether [`matmul`] takes these operands: f32, `[..., m, k] · [..., k, n]` with the same
/// batch dimensions and nothing empty.
pub fn supports(lhs: &CubeTensor, rhs: &CubeTensor) -> bool {
    let (ls, rs) = (lhs.meta.shape(), rhs.meta.shape());
    let rank = ls.num_dims();
    lhs.dtype == DType::F32
        && rhs.dtype == DType::F32
        && lhs.qparams.is_none()
        && rhs.qparams.is_none()
        && rank >= 2
        && rs.num_dims() == rank
        && ls[..rank - 2] == rs[..rank - 2]
        && ls[rank - 1] == rs[rank - 2]
        && ls.num_elements() > 0
        && rs.num_elements() > 0
        && ls[..rank - 2].iter().product::<usize>() <= MAX_BATCH
}

/// The widest vector (4, 2 or 1 values) that divides `n`.
pub(crate) fn vector_width(n: usize) -> usize {
    [4, 2].into_iter().find(|w| n % w == 0).unwrap_or(1)
}

/// `lhs [..., m, k] · rhs [..., k, n]` → `[..., m, n]`, for operands [`supports`] takes.
pub fn matmul(lhs: CubeTensor, rhs: CubeTensor) -> CubeTensor {
    let rank = lhs.meta.num_dims();
    let mut shape = lhs.meta.shape().clone();
    let (m, n) = (shape[rank - 2], rhs.meta.shape()[rank - 1]);
    shape[rank - 1] = n;
    let batch = shape[..rank - 2].iter().product::<usize>();
    let line = vector_width(n);
    // Rows of `rhs` are read as whole vectors: the last dimension contiguous, every other
    // stride a whole number of vectors.
    let strides = rhs.meta.strides();
    let rhs = if strides[rank - 1] == 1 && strides[..rank - 1].iter().all(|s| s % line == 0) { rhs } else { into_contiguous(rhs) };
    let out = empty_device_dtype(lhs.client.clone(), lhs.device.clone(), shape, DType::F32);
    let (wx, wy) = WORKGROUP;
    let blocks_x = (n / line).div_ceil(COLS).div_ceil(wx as usize) as u32;
    let blocks_y = m.div_ceil(ROWS).div_ceil(wy as usize) as u32;
    unsafe {
        tiled_matmul_kernel::launch_unchecked(
            &out.client,
            CubeCount::Static(blocks_x, blocks_y, batch as u32),
            CubeDim::new_2d(wx, wy),
            line,
            lhs.into_tensor_arg(),
            rhs.into_tensor_arg(),
            out.clone().into_tensor_arg(),
            ROWS,
            COLS,
        );
    }
    out
}
