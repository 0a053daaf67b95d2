//! Exports for `bench/matmul.mjs`: `C = A · B` with core's kernel or with `gemm`, on operands
//! stored row-major or transposed. No wasm-bindgen: plain exported functions over linear memory.

#[path = "../../../core/src/nn/linear/gemm.rs"]
#[allow(dead_code)]
mod ours;

/// A zeroed buffer of `n` floats that JavaScript fills; never freed (the bench is one page).
#[unsafe(no_mangle)]
pub extern "C" fn alloc_f32(n: usize) -> *mut f32 {
    Box::leak(vec![0.0f32; n].into_boxed_slice()).as_mut_ptr()
}

/// Reads `A [m, k]` (stored `[k, m]` when `ta`) and `B [k, n]` (stored `[n, k]` when `tb`).
///
/// # Safety
/// `a` and `b` must point to `m·k` and `k·n` floats.
unsafe fn operands<'a>(m: usize, n: usize, k: usize, a: *const f32, b: *const f32, ta: bool, tb: bool) -> (ours::MatRef<'a>, ours::MatRef<'a>) {
    let (a, b) = unsafe { (core::slice::from_raw_parts(a, m * k), core::slice::from_raw_parts(b, k * n)) };
    let a = if ta { ours::MatRef::row_major(a, k, m).t() } else { ours::MatRef::row_major(a, m, k) };
    let b = if tb { ours::MatRef::row_major(b, n, k).t() } else { ours::MatRef::row_major(b, k, n) };
    (a, b)
}

/// core's kernel; writes `C [m, n]` to `c`.
///
/// # Safety
/// `a`, `b` and `c` must point to `m·k`, `k·n` and `m·n` floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ours_matmul(m: usize, n: usize, k: usize, a: *const f32, b: *const f32, ta: bool, tb: bool, c: *mut f32) {
    let (a, b) = unsafe { operands(m, n, k, a, b, ta, tb) };
    let out = ours::matmul(a, b);
    unsafe { core::ptr::copy_nonoverlapping(out.as_ptr(), c, m * n) };
}

/// `gemm::gemm` as burn's CPU backend calls it (strided operands, one thread); writes to `c`.
///
/// # Safety
/// `a`, `b` and `c` must point to `m·k`, `k·n` and `m·n` floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gemm_matmul(m: usize, n: usize, k: usize, a: *const f32, b: *const f32, ta: bool, tb: bool, c: *mut f32) {
    let (a_cs, a_rs) = if ta { (m as isize, 1) } else { (1, k as isize) };
    let (b_cs, b_rs) = if tb { (k as isize, 1) } else { (1, n as isize) };
    unsafe { gemm::gemm(m, n, k, c, 1, n as isize, false, a, a_cs, a_rs, b, b_cs, b_rs, 0.0f32, 1.0f32, false, false, false, gemm::Parallelism::None) };
}
