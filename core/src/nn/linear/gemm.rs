//! Single-precision matrix product for the browser's CPU fallback: a packed, blocked GEMM whose
//! inner kernel is written for WebAssembly's 128-bit SIMD as V8 compiles it.
//!
//! burn's CPU backend multiplies with the `gemm` crate, whose wasm kernel keeps a 12×4 tile of
//! accumulators: with its operands, 16 vector registers, all that x86-64 has, of which V8 keeps
//! one for itself. This kernel keeps a 4×8 tile (8 accumulators, 2 loads of B, 1 broadcast of
//! A: 11 registers) and broadcasts with `v128.load32_splat`, a load rather than a shuffle; on the
//! shapes of a MiniLM training step it is the faster of the two in Chromium (`node
//! bench/matmul.mjs`, figures in docs/performance.md; 12- and 10-accumulator tiles and a 4-step
//! unrolled loop were slower). Natively burn's `gemm` (AVX2/AVX-512 with FMA) is the faster one,
//! so only wasm builds route products here ([`super::MatmulBackend`]).
//!
//! Off wasm the same code runs on four-lane arrays instead of `v128`, with the same operations
//! in the same order (multiply, then add), so the native unit tests check the packing, tiling
//! and edge handling that the browser runs, bit for bit. The one exception is a build with
//! relaxed SIMD ([`FUSED_MULTIPLY_ADD`]), whose kernel fuses each multiply and add: faster, and
//! one rounding instead of two per step.

/// Whether this build's kernel multiplies and adds with wasm relaxed SIMD's `f32x4.relaxed_madd`
/// (compiled in only where core is built with `+relaxed-simd`: the training worker's second
/// threaded build, which only browsers that validate relaxed SIMD load). V8 compiles it to one
/// fused `vfmadd` where the CPU has FMA, rounding once per step instead of twice.
pub const FUSED_MULTIPLY_ADD: bool = cfg!(all(target_arch = "wasm32", target_feature = "relaxed-simd"));

/// Rows of the register tile.
const MR: usize = 4;
/// Columns of the register tile (two vectors of four).
const NR: usize = 8;
/// Depth of a block: a 4-row panel of A (4 KiB) and an 8-column panel of B (8 KiB) stay in L1.
const KC: usize = 256;
/// Rows of A per packed block (64 KiB at `KC`).
const MC: usize = 64;
/// Columns of B per packed block (1 MiB at `KC`).
const NC: usize = 1024;
/// Products smaller than this (m·n·k) are not split over threads.
#[cfg(any(not(target_family = "wasm"), feature = "threads"))]
const PARALLEL: usize = 1 << 22;

/// A read-only matrix: element `(i, j)` is `data[offset + i·row_stride + j·col_stride]`.
#[derive(Clone, Copy, Debug)]
pub struct MatRef<'a> {
    pub data: &'a [f32],
    pub offset: usize,
    pub rows: usize,
    pub cols: usize,
    pub row_stride: isize,
    pub col_stride: isize,
}

impl<'a> MatRef<'a> {
    /// A row-major `[rows, cols]` matrix.
    pub fn row_major(data: &'a [f32], rows: usize, cols: usize) -> Self {
        assert_eq!(data.len(), rows * cols, "a {rows}×{cols} matrix needs {} values", rows * cols);
        Self { data, offset: 0, rows, cols, row_stride: cols as isize, col_stride: 1 }
    }

    /// The same values read as the transpose, without a copy.
    pub fn t(self) -> Self {
        Self { rows: self.cols, cols: self.rows, row_stride: self.col_stride, col_stride: self.row_stride, ..self }
    }

    /// Rows `start..start + len` (for the thread split).
    #[cfg(any(not(target_family = "wasm"), feature = "threads"))]
    fn rows(self, start: usize, len: usize) -> Self {
        let offset = (self.offset as isize + start as isize * self.row_stride) as usize;
        Self { offset, rows: len, ..self }
    }

    /// Where element `(i, j)` lies in `data`.
    #[inline(always)]
    fn index(&self, i: usize, j: usize) -> usize {
        (self.offset as isize + i as isize * self.row_stride + j as isize * self.col_stride) as usize
    }

    #[inline(always)]
    fn at(&self, i: usize, j: usize) -> f32 {
        self.data[self.index(i, j)]
    }

    /// Panics unless every element's index lies in `data`, so [`MatRef::at`] cannot go out of
    /// bounds (it still checks) and the result is a plain slice panic at worst.
    fn check(&self) {
        if self.rows == 0 || self.cols == 0 {
            return;
        }
        let corners = [(0, 0), (self.rows - 1, 0), (0, self.cols - 1), (self.rows - 1, self.cols - 1)];
        for (i, j) in corners {
            let idx = self.offset as isize + i as isize * self.row_stride + j as isize * self.col_stride;
            assert!(idx >= 0 && (idx as usize) < self.data.len(), "matrix view reaches outside its data");
        }
    }
}

/// `a · b` as a row-major `[a.rows, b.cols]` vector.
pub fn matmul(a: MatRef, b: MatRef) -> Vec<f32> {
    assert_eq!(a.cols, b.rows, "matmul: {}×{} by {}×{}", a.rows, a.cols, b.rows, b.cols);
    a.check();
    b.check();
    let (m, n) = (a.rows, b.cols);
    let mut c = vec![0.0; m * n];
    if m > 0 && n > 0 && a.cols > 0 {
        matmul_into(a, b, &mut c);
    }
    c
}

/// `a · b` for each pair of a batch (attention's per-head products: every `a` of the same shape,
/// every `b` too), as one row-major `[entries, a.rows, b.cols]` vector. Where the build has
/// threads and the batch is large, its entries split into halves (and those again while large)
/// that rayon may run side by side; each entry's product runs on one thread, so the bits are the
/// same either way.
pub fn matmul_batch(entries: &[(MatRef, MatRef)]) -> Vec<f32> {
    let Some(&(first_a, first_b)) = entries.first() else { return Vec::new() };
    let (m, n, k) = (first_a.rows, first_b.cols, first_a.cols);
    for &(a, b) in entries {
        assert!(
            (a.rows, a.cols, b.rows, b.cols) == (m, k, k, n),
            "matmul_batch: a {}×{} by {}×{} among {m}×{k} by {k}×{n}",
            a.rows,
            a.cols,
            b.rows,
            b.cols
        );
        a.check();
        b.check();
    }
    let mut c = vec![0.0; entries.len() * m * n];
    if m > 0 && n > 0 && k > 0 {
        batch_into(entries, &mut c, m * n);
    }
    c
}

/// [`matmul_batch`]'s loop: `c` holds `entries.len()` outputs of `size` values each.
fn batch_into(entries: &[(MatRef, MatRef)], c: &mut [f32], size: usize) {
    #[cfg(any(not(target_family = "wasm"), feature = "threads"))]
    if entries.len() >= 2 && entries.len() * size * entries[0].0.cols >= PARALLEL {
        let half = entries.len() / 2;
        let (c_first, c_second) = c.split_at_mut(half * size);
        crate::cpu::join(|| batch_into(&entries[..half], c_first, size), || batch_into(&entries[half..], c_second, size));
        return;
    }
    for (&(a, b), c) in entries.iter().zip(c.chunks_exact_mut(size)) {
        serial(a, b, c);
    }
}

/// `c += a · b`, `c` row-major `[a.rows, b.cols]`. Where the build has threads and the product
/// is large, the rows split once into two halves that rayon may run side by side (each packs
/// all of `b`; inside a training step's halves the other thread is usually busy, and then the
/// two run one after the other at the cost of that one extra packing).
fn matmul_into(a: MatRef, b: MatRef, c: &mut [f32]) {
    #[cfg(any(not(target_family = "wasm"), feature = "threads"))]
    if a.rows >= 2 * MR && a.rows * b.cols * a.cols >= PARALLEL {
        let top = (a.rows / 2).next_multiple_of(MR);
        let (c_top, c_bottom) = c.split_at_mut(top * b.cols);
        crate::cpu::join(|| serial(a.rows(0, top), b, c_top), || serial(a.rows(top, a.rows - top), b, c_bottom));
        return;
    }
    serial(a, b, c);
}

/// The blocked product on this thread.
fn serial(a: MatRef, b: MatRef, c: &mut [f32]) {
    thread_local! {
        /// Packing buffers, kept between products: a step makes hundreds, and allocating (and
        /// zeroing) the buffers for each would cost time on every product.
        static PACKED: std::cell::RefCell<(Vec<f32>, Vec<f32>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
    }
    PACKED.with_borrow_mut(|(packed_a, packed_b)| {
        let (m, n) = (a.rows, b.cols);
        packed_a.resize(KC * MC.min(m.next_multiple_of(MR)), 0.0);
        packed_b.resize(KC * NC.min(n.next_multiple_of(NR)), 0.0);
        blocked(a, b, c, packed_a, packed_b);
    });
}

/// [`serial`]'s loops, with its packing buffers.
fn blocked(a: MatRef, b: MatRef, c: &mut [f32], packed_a: &mut [f32], packed_b: &mut [f32]) {
    let (m, n, k) = (a.rows, b.cols, a.cols);
    for jc in (0..n).step_by(NC) {
        let nc = NC.min(n - jc);
        for pc in (0..k).step_by(KC) {
            let kc = KC.min(k - pc);
            pack::<NR>(b.t(), jc, nc, pc, kc, packed_b);
            for ic in (0..m).step_by(MC) {
                let mc = MC.min(m - ic);
                pack::<MR>(a, ic, mc, pc, kc, packed_a);
                for jr in (0..nc).step_by(NR) {
                    let panel_b = &packed_b[jr * kc..(jr + NR) * kc];
                    for ir in (0..mc).step_by(MR) {
                        let panel_a = &packed_a[ir * kc..(ir + MR) * kc];
                        let (rows, cols) = (MR.min(mc - ir), NR.min(nc - jr));
                        let start = (ic + ir) * n + jc + jr;
                        tile(kc, panel_a, panel_b, &mut c[start..], n, rows, cols);
                    }
                }
            }
        }
    }
}

/// Packs rows `i0..i0 + len`, depth (columns) `p0..p0 + kc` of `m` into panels of `W` rows:
/// panel `r` holds, for each depth `p`, its `W` rows' values side by side (zeros past the last
/// row). A's panels are `pack::<MR>(a, ..)`; B's are `pack::<NR>(b.t(), ..)`, its columns being
/// the rows of its transpose. Where a panel's `W` values at one depth are adjacent in memory
/// (`row_stride == 1`: A read transposed, B row-major) each depth is one copy; where each row's
/// depth run is (`col_stride == 1`) a whole panel is transposed in registers
/// ([`transpose_rows`]) and a last, shorter one copied row by row.
#[inline(never)]
fn pack<const W: usize>(m: MatRef, i0: usize, len: usize, p0: usize, kc: usize, out: &mut [f32]) {
    for (r, panel) in out[..len.next_multiple_of(W) * kc].chunks_exact_mut(W * kc).enumerate() {
        let rows = W.min(len - r * W);
        let first = i0 + r * W;
        if rows == W && m.row_stride == 1 {
            for (p, step) in panel.chunks_exact_mut(W).enumerate() {
                let start = m.index(first, p0 + p);
                step.copy_from_slice(&m.data[start..start + W]);
            }
        } else if rows == W && m.col_stride == 1 {
            transpose_rows::<W>(m, first, p0, kc, panel);
        } else if m.col_stride == 1 {
            for lane in 0..W {
                if lane < rows {
                    let start = m.index(first + lane, p0);
                    for (step, &v) in panel.chunks_exact_mut(W).zip(&m.data[start..start + kc]) {
                        step[lane] = v;
                    }
                } else {
                    panel.chunks_exact_mut(W).for_each(|step| step[lane] = 0.0);
                }
            }
        } else {
            for (p, step) in panel.chunks_exact_mut(W).enumerate() {
                for (lane, v) in step.iter_mut().enumerate() {
                    *v = if lane < rows { m.at(first + lane, p0 + p) } else { 0.0 };
                }
            }
        }
    }
}

/// [`pack`]'s panel of `W` whole rows (`first..first + W`) each stored with `col_stride == 1`:
/// four rows' next four values at a time are transposed in registers (a 4×4 block of loads
/// becomes four depth steps), not written one by one to every `W`-th place.
#[inline(always)]
fn transpose_rows<const W: usize>(m: MatRef, first: usize, p0: usize, kc: usize, panel: &mut [f32]) {
    let rows: [&[f32]; W] = std::array::from_fn(|lane| {
        let start = m.index(first + lane, p0);
        &m.data[start..start + kc]
    });
    assert!(panel.len() >= W * kc);
    let whole = kc - kc % 4;
    for group in 0..W / 4 {
        for p in (0..whole).step_by(4) {
            // SAFETY: each row slice holds `kc` values and `p + 4 <= kc`; the panel holds
            // `W·kc` values and step `p + j`'s group of four lies at `(p + j)·W + 4·group`.
            unsafe {
                let block = lanes::transpose([0, 1, 2, 3].map(|r| lanes::load(rows[4 * group + r].as_ptr().add(p))));
                for (j, v) in block.into_iter().enumerate() {
                    lanes::store(panel.as_mut_ptr().add((p + j) * W + 4 * group), v);
                }
            }
        }
    }
    for p in whole..kc {
        for (lane, row) in rows.iter().enumerate() {
            panel[p * W + lane] = row[p];
        }
    }
}

/// `c[..rows, ..cols] += panel_a · panel_b` over depth `kc`; `c` starts at the tile's first
/// element and has row stride `ldc`.
#[inline(always)]
fn tile(kc: usize, panel_a: &[f32], panel_b: &[f32], c: &mut [f32], ldc: usize, rows: usize, cols: usize) {
    assert!(panel_a.len() >= kc * MR && panel_b.len() >= kc * NR);
    // SAFETY: the panels hold `kc` steps of `MR` and `NR` values (asserted above).
    let acc = unsafe { kernel(kc, panel_a.as_ptr(), panel_b.as_ptr()) };
    if rows == MR && cols == NR {
        assert!(c.len() >= (MR - 1) * ldc + NR);
        for (i, row) in acc.iter().enumerate() {
            // SAFETY: row `i` of the tile is `c[i·ldc .. i·ldc + 8]`, in bounds (asserted above).
            unsafe {
                let p = c.as_mut_ptr().add(i * ldc);
                lanes::add_store(p, row[0]);
                lanes::add_store(p.add(4), row[1]);
            }
        }
    } else {
        for (i, row) in acc.iter().enumerate().take(rows) {
            let values = [lanes::to_array(row[0]), lanes::to_array(row[1])];
            for j in 0..cols {
                c[i * ldc + j] += values[j / 4][j % 4];
            }
        }
    }
}

/// The register tile: `MR` rows × `NR` columns of `panel_a · panel_b` over depth `kc`.
///
/// # Safety
/// `a` must point to `kc·MR` values and `b` to `kc·NR`.
#[inline(always)]
unsafe fn kernel(kc: usize, mut a: *const f32, mut b: *const f32) -> [[lanes::V; 2]; MR] {
    let mut acc = [[lanes::zero(); 2]; MR];
    for _ in 0..kc {
        // SAFETY: step `p` reads `a[p·MR .. p·MR + MR]` and `b[p·NR .. p·NR + NR]`.
        unsafe {
            let b0 = lanes::load(b);
            let b1 = lanes::load(b.add(4));
            for (i, row) in acc.iter_mut().enumerate() {
                let ai = lanes::splat(a.add(i));
                row[0] = lanes::mul_add(row[0], ai, b0);
                row[1] = lanes::mul_add(row[1], ai, b1);
            }
            a = a.add(MR);
            b = b.add(NR);
        }
    }
    acc
}

/// WebAssembly SIMD: each helper is one wasm instruction (two for `mul_add`, `add_store`).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod lanes {
    use core::arch::wasm32::*;

    pub type V = v128;

    #[inline(always)]
    pub fn zero() -> V {
        f32x4_splat(0.0)
    }

    /// # Safety
    /// `p` must point to 4 readable values.
    #[inline(always)]
    pub unsafe fn load(p: *const f32) -> V {
        unsafe { v128_load(p as *const v128) }
    }

    /// # Safety
    /// `p` must point to a readable value.
    #[inline(always)]
    pub unsafe fn splat(p: *const f32) -> V {
        unsafe { v128_load32_splat(p as *const u32) }
    }

    /// `acc + a·b`: a multiply then an add, or in a build with relaxed SIMD
    /// ([`super::FUSED_MULTIPLY_ADD`]) one `f32x4.relaxed_madd`.
    #[inline(always)]
    pub fn mul_add(acc: V, a: V, b: V) -> V {
        #[cfg(target_feature = "relaxed-simd")]
        return f32x4_relaxed_madd(a, b, acc);
        #[cfg(not(target_feature = "relaxed-simd"))]
        f32x4_add(acc, f32x4_mul(a, b))
    }

    /// # Safety
    /// `p` must point to 4 writable values.
    #[inline(always)]
    pub unsafe fn add_store(p: *mut f32, v: V) {
        unsafe { v128_store(p as *mut v128, f32x4_add(v128_load(p as *const v128), v)) }
    }

    #[inline(always)]
    pub fn to_array(v: V) -> [f32; 4] {
        [f32x4_extract_lane::<0>(v), f32x4_extract_lane::<1>(v), f32x4_extract_lane::<2>(v), f32x4_extract_lane::<3>(v)]
    }

    /// # Safety
    /// `p` must point to 4 writable values.
    #[inline(always)]
    pub unsafe fn store(p: *mut f32, v: V) {
        unsafe { v128_store(p as *mut v128, v) }
    }

    /// The 4×4 transpose: lane `j` of row `i` becomes lane `i` of row `j` (eight shuffles).
    #[inline(always)]
    pub fn transpose([r0, r1, r2, r3]: [V; 4]) -> [V; 4] {
        let (t0, t1) = (i32x4_shuffle::<0, 4, 1, 5>(r0, r1), i32x4_shuffle::<2, 6, 3, 7>(r0, r1));
        let (t2, t3) = (i32x4_shuffle::<0, 4, 1, 5>(r2, r3), i32x4_shuffle::<2, 6, 3, 7>(r2, r3));
        [
            i32x4_shuffle::<0, 1, 4, 5>(t0, t2),
            i32x4_shuffle::<2, 3, 6, 7>(t0, t2),
            i32x4_shuffle::<0, 1, 4, 5>(t1, t3),
            i32x4_shuffle::<2, 3, 6, 7>(t1, t3),
        ]
    }
}

/// Anywhere else: the same operations on four-lane arrays.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
mod lanes {
    pub type V = [f32; 4];

    #[inline(always)]
    pub fn zero() -> V {
        [0.0; 4]
    }

    /// # Safety
    /// `p` must point to 4 readable values.
    #[inline(always)]
    pub unsafe fn load(p: *const f32) -> V {
        unsafe { p.cast::<[f32; 4]>().read_unaligned() }
    }

    /// # Safety
    /// `p` must point to a readable value.
    #[inline(always)]
    pub unsafe fn splat(p: *const f32) -> V {
        [unsafe { p.read() }; 4]
    }

    #[inline(always)]
    pub fn mul_add(acc: V, a: V, b: V) -> V {
        std::array::from_fn(|l| acc[l] + a[l] * b[l])
    }

    /// # Safety
    /// `p` must point to 4 writable values.
    #[inline(always)]
    pub unsafe fn add_store(p: *mut f32, v: V) {
        for (l, x) in v.iter().enumerate() {
            unsafe { *p.add(l) += x };
        }
    }

    #[inline(always)]
    pub fn to_array(v: V) -> [f32; 4] {
        v
    }

    /// # Safety
    /// `p` must point to 4 writable values.
    #[inline(always)]
    pub unsafe fn store(p: *mut f32, v: V) {
        unsafe { p.cast::<[f32; 4]>().write_unaligned(v) }
    }

    #[inline(always)]
    pub fn transpose(r: [V; 4]) -> [V; 4] {
        std::array::from_fn(|j| std::array::from_fn(|i| r[i][j]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn random(n: usize, seed: u64) -> Vec<f32> {
        let mut rng = Rng::new(seed);
        (0..n).map(|_| rng.next_f32() * 2.0 - 1.0).collect()
    }

    /// The product in f64, element by element.
    fn reference(a: MatRef, b: MatRef) -> Vec<f64> {
        let mut c = vec![0.0; a.rows * b.cols];
        for i in 0..a.rows {
            for j in 0..b.cols {
                c[i * b.cols + j] = (0..a.cols).map(|p| f64::from(a.at(i, p)) * f64::from(b.at(p, j))).sum();
            }
        }
        c
    }

    fn assert_close(got: &[f32], want: &[f64], k: usize, what: &str) {
        assert_eq!(got.len(), want.len(), "{what}: length");
        // f32 sums of k products of values in [-1, 1]: error grows like sqrt(k)·eps.
        let tol = 1e-6 * (k as f64).sqrt().max(1.0) * 4.0;
        for (idx, (&g, &w)) in got.iter().zip(want).enumerate() {
            assert!((f64::from(g) - w).abs() <= tol, "{what}: element {idx}: {g} vs {w}");
        }
    }

    #[test]
    fn matches_the_reference_on_awkward_shapes() {
        // Edges of every block size: rows and columns that are not multiples of the tile, depths
        // that cross a block, products that split over threads.
        let shapes = [(1, 1, 1), (3, 5, 7), (4, 8, 1), (5, 9, 17), (13, 31, 255), (64, 8, 256), (65, 1025, 257), (130, 70, 600), (257, 129, 513)];
        for (s, &(m, n, k)) in shapes.iter().enumerate() {
            let (a, b) = (random(m * k, 2 * s as u64), random(k * n, 2 * s as u64 + 1));
            let (a, b) = (MatRef::row_major(&a, m, k), MatRef::row_major(&b, k, n));
            assert_close(&matmul(a, b), &reference(a, b), k, &format!("{m}×{k} · {k}×{n}"));
        }
    }

    #[test]
    fn reads_transposed_and_offset_views() {
        let (m, n, k) = (37, 45, 300);
        // a stored as [k, m] and read transposed; b stored as [n, k] and read transposed.
        let (at, bt) = (random(k * m, 7), random(n * k, 8));
        let (a, b) = (MatRef::row_major(&at, k, m).t(), MatRef::row_major(&bt, n, k).t());
        assert_close(&matmul(a, b), &reference(a, b), k, "transposed operands");
        // A window of a bigger matrix: rows 3.., every other column.
        let big = random(50 * 2 * k, 9);
        let window = MatRef { data: &big, offset: 3 * 2 * k, rows: m, cols: k, row_stride: 2 * k as isize, col_stride: 2 };
        assert_close(&matmul(window, b), &reference(window, b), k, "strided window");
    }

    #[test]
    fn the_thread_split_gives_the_same_bits() {
        // Large enough to split; each output row is summed in the same order either way.
        let (m, n, k) = (256, 256, 128);
        let (a, b) = (random(m * k, 11), random(k * n, 12));
        let (a, b) = (MatRef::row_major(&a, m, k), MatRef::row_major(&b, k, n));
        let mut serial_c = vec![0.0; m * n];
        serial(a, b, &mut serial_c);
        assert_eq!(matmul(a, b), serial_c);
    }

    #[test]
    fn a_batch_is_each_entrys_product() {
        // Heads read in place from `[seq, heads · head_dim]`: each head's `[seq, head_dim]`
        // strided by the heads' interleaving, the keys read transposed; a batch large enough
        // to split over threads, with rows and columns that are not multiples of the tile.
        let (heads, seq, dim) = (8, 130, 32);
        let (q, kv) = (random(heads * seq * dim, 21), random(heads * seq * dim, 22));
        let head = |data, h: usize| MatRef { data, offset: h * dim, rows: seq, cols: dim, row_stride: (heads * dim) as isize, col_stride: 1 };
        let entries: Vec<_> = (0..heads).map(|h| (head(&q, h), head(&kv, h).t())).collect();
        let got = matmul_batch(&entries);
        for (h, &(a, b)) in entries.iter().enumerate() {
            assert_eq!(got[h * seq * seq..(h + 1) * seq * seq], matmul(a, b)[..], "head {h}");
            assert_close(&got[h * seq * seq..(h + 1) * seq * seq], &reference(a, b), dim, "head against f64");
        }
        assert!(matmul_batch(&[]).is_empty());
        let mismatched = std::panic::catch_unwind(|| matmul_batch(&[entries[0], (entries[0].1, entries[0].0)]));
        assert!(mismatched.is_err(), "entries of different shapes must be refused");
    }

    #[test]
    fn packing_puts_each_value_in_its_panel_place() {
        // Every path of `pack`: rows stored contiguously (whole panels transposed in registers, a
        // ragged last one), columns stored contiguously, and neither; depths not a multiple of 4.
        let (rows, cols) = (19, 23);
        let data = random(rows * cols * 2, 31);
        let views = [
            MatRef::row_major(&data[..rows * cols], rows, cols),
            MatRef::row_major(&data[..rows * cols], cols, rows).t(),
            MatRef { data: &data, offset: 1, rows, cols, row_stride: 2 * cols as isize, col_stride: 2 },
        ];
        for m in views {
            for (i0, len, p0, kc) in [(0, rows, 0, cols), (2, 16, 3, 13), (5, 9, 1, 22)] {
                fn check<const W: usize>(m: MatRef, i0: usize, len: usize, p0: usize, kc: usize) {
                    let mut out = vec![f32::NAN; len.next_multiple_of(W) * kc];
                    pack::<W>(m, i0, len, p0, kc, &mut out);
                    for (r, panel) in out.chunks_exact(W * kc).enumerate() {
                        for p in 0..kc {
                            for lane in 0..W {
                                let i = r * W + lane;
                                let want = if i < len { m.at(i0 + i, p0 + p) } else { 0.0 };
                                assert_eq!(panel[p * W + lane], want, "W {W}, panel {r}, depth {p}, lane {lane}");
                            }
                        }
                    }
                }
                check::<4>(m, i0, len, p0, kc);
                check::<8>(m, i0, len, p0, kc);
            }
        }
    }

    #[test]
    fn empty_and_mismatched_shapes() {
        let a = random(6, 1);
        let empty = MatRef::row_major(&[], 0, 3);
        assert!(matmul(empty, MatRef::row_major(&a, 3, 2)).is_empty());
        assert_eq!(matmul(MatRef::row_major(&a, 2, 3), MatRef::row_major(&[], 3, 0)), Vec::<f32>::new());
        // Depth 0: a 2×0 by 0×2 product is a 2×2 matrix of zeros.
        assert_eq!(matmul(MatRef::row_major(&[], 2, 0), MatRef::row_major(&[], 0, 2)), vec![0.0; 4]);
        let r = std::panic::catch_unwind(|| matmul(MatRef::row_major(&a, 2, 3), MatRef::row_major(&a, 2, 3)));
        assert!(r.is_err(), "2×3 by 2×3 must be refused");
    }
}
