//! A register-tiled matrix product for burn's CubeCL backend (WebGPU, Vulkan, CUDA).
//!
//! Without cooperative-matrix instructions (WebGPU has none) burn's matmul falls back to
//! cubek's `SimpleUnit` routine, which stages tiles through workgroup memory. Each invocation
//! here computes a block of `ROWS` rows × `COLS` vectors of 4 columns of the output straight
//! from the operands: per step of the inner dimension it loads `COLS` vectors of `rhs` and
//! `ROWS` scalars of `lhs`, and does `ROWS × COLS` vector multiply-adds on accumulators that stay
//! in registers. That is the shape of the classic register-blocked SGEMM, with no barriers.
//!
//! `lhs` may be strided (a transposed view is read in place); `rhs` and the output are
//! row-major with a column count divisible by 4. Anything else goes to burn's matmul.

use burn::backend::wgpu::CubeTensor;
use burn::tensor::DType;
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::empty_device_dtype;
use cubecl::prelude::*;

/// Output rows per invocation.
pub const ROWS: usize = 8;
/// Output vectors (of [`VECTOR`] columns) per invocation.
pub const COLS: usize = 2;
/// Columns per vector.
pub const VECTOR: usize = 4;
/// Invocations per workgroup along the columns and along the rows.
const WORKGROUP: (u32, u32) = (8, 8);

/// One invocation: the output block at rows `ROWS · y ..`, vectors `COLS · x ..`.
///
/// Rows and vectors past the end are clamped when read (their results are never written), so
/// the loop has no branches.
#[cube(launch_unchecked)]
fn tiled_matmul_kernel<N: Size>(
    lhs: &Tensor<f32>,
    rhs: &Tensor<Vector<f32, N>>,
    out: &mut Tensor<Vector<f32, N>>,
    #[comptime] rows: usize,
    #[comptime] cols: usize,
) {
    let line = rhs.vector_size();
    let m = out.shape(0);
    let n_vectors = out.shape(1) / line;
    let k_len = lhs.shape(1);
    let row0 = ABSOLUTE_POS_Y as usize * rows;
    let col0 = ABSOLUTE_POS_X as usize * cols;
    if row0 >= m || col0 >= n_vectors {
        terminate!();
    }

    let lhs_k_stride = lhs.stride(1);
    let rhs_row = rhs.stride(0) / line;
    let mut lhs_rows = Array::<usize>::new(rows);
    #[unroll]
    for i in 0..rows {
        lhs_rows[i] = clamp_max(row0 + i, m - 1) * lhs.stride(0);
    }
    let mut rhs_cols = Array::<usize>::new(cols);
    #[unroll]
    for j in 0..cols {
        rhs_cols[j] = clamp_max(col0 + j, n_vectors - 1);
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

    let out_row = out.stride(0) / line;
    #[unroll]
    for i in 0..rows {
        #[unroll]
        for j in 0..cols {
            if row0 + i < m && col0 + j < n_vectors {
                out[(row0 + i) * out_row + col0 + j] = acc[i * cols + j];
            }
        }
    }
}

/// Whether [`matmul`] takes these operands: 2-D f32, inner dimensions that agree, and a column
/// count divisible by [`VECTOR`].
pub fn supports(lhs: &CubeTensor, rhs: &CubeTensor) -> bool {
    let (ls, rs) = (lhs.meta.shape(), rhs.meta.shape());
    lhs.dtype == DType::F32
        && rhs.dtype == DType::F32
        && lhs.qparams.is_none()
        && rhs.qparams.is_none()
        && ls.num_dims() == 2
        && rs.num_dims() == 2
        && ls[1] == rs[0]
        && rs[1] % VECTOR == 0
        && ls[0] > 0
        && ls[1] > 0
}

/// `lhs [m, k] · rhs [k, n]` → `[m, n]`, for operands [`supports`] takes.
pub fn matmul(lhs: CubeTensor, rhs: CubeTensor) -> CubeTensor {
    let (m, n) = (lhs.meta.shape()[0], rhs.meta.shape()[1]);
    // The kernel reads `rhs` a row of vectors at a time.
    let rhs = if rhs.meta.strides()[1] == 1 && rhs.meta.strides()[0] % VECTOR == 0 { rhs } else { into_contiguous(rhs) };
    let out = empty_device_dtype(lhs.client.clone(), lhs.device.clone(), [m, n].into(), DType::F32);
    let (wx, wy) = WORKGROUP;
    let blocks_x = (n / VECTOR).div_ceil(COLS).div_ceil(wx as usize) as u32;
    let blocks_y = m.div_ceil(ROWS).div_ceil(wy as usize) as u32;
    unsafe {
        tiled_matmul_kernel::launch_unchecked(
            &out.client,
            CubeCount::Static(blocks_x, blocks_y, 1),
            CubeDim::new_2d(wx, wy),
            VECTOR,
            lhs.into_tensor_arg(),
            rhs.into_tensor_arg(),
            out.clone().into_tensor_arg(),
            ROWS,
            COLS,
        );
    }
    out
}
