//! An 8-bit dense layer `y = x·Wᵀ + b`: weights quantized once to int8 with one scale per
//! output channel, each input row quantized on the fly to int16 with its own scale, the products
//! summed exactly in int32 and scaled back to f32. On x86-64 with AVX2 the kernel multiplies
//! pairs of int16 with `vpmaddwd` (16 multiply-adds per instruction, twice the lanes of an f32
//! FMA, and exact: no saturation); elsewhere a scalar kernel computes the same integers, so both
//! paths give bit-identical outputs. The weights are packed in panels of [`NR`] output columns,
//! the input rows in balanced blocks of up to [`MR`]; per panel every block runs the kernel over
//! the whole input, the first one prefetching the weight stream ahead.

/// Output columns per packed panel (two registers of 8 int32 accumulators).
const NR: usize = 16;
/// Input rows per kernel call at most: 6 × 2 accumulators plus a broadcast and a product fit
/// in AVX2's 16 registers (the weights are read straight from memory by `vpmaddwd`).
const MR: usize = 6;

/// How `rows` input rows split into row blocks: as few blocks as [`MR`] allows, their sizes
/// differing by at most one (21 rows: 6, 5, 5, 5 rather than 6, 6, 6, 3). Every block re-reads
/// the whole panel and widens its weights, so a block of few rows does that work for little
/// (with the prefetch below, ~3% off the encoder's layers at 21 rows; RESULTS.md).
#[derive(Clone, Copy)]
struct RowBlocks {
    /// Number of blocks.
    count: usize,
    /// Rows of the smaller blocks (≥ 1).
    base: usize,
    /// How many blocks, the first ones, have `base + 1` rows.
    big: usize,
}

impl RowBlocks {
    fn new(rows: usize) -> Self {
        let count = rows.div_ceil(MR).max(1);
        Self {
            count,
            base: rows / count,
            big: rows % count,
        }
    }

    /// Rows in block `blk`.
    fn size(self, blk: usize) -> usize {
        self.base + usize::from(blk < self.big)
    }

    /// The first row of block `blk`.
    fn start(self, blk: usize) -> usize {
        blk * self.base + blk.min(self.big)
    }

    /// The block of `row` and its place in it.
    fn locate(self, row: usize) -> (usize, usize) {
        let in_big = self.big * (self.base + 1);
        if row < in_big {
            (row / (self.base + 1), row % (self.base + 1))
        } else {
            let t = row - in_big;
            (self.big + t / self.base, t % self.base)
        }
    }
}

/// How far ahead of its loads, in bytes of the weight stream, the first row block of each
/// panel asks for the weights with `prefetcht0` (4 KiB ≈ 500 cycles of a 6-row block; 2–16
/// KiB measured within noise of each other).
const PREFETCH: usize = 4096;

/// Largest weight magnitude after quantization.
const WMAX: f32 = 127.0;

/// A linear layer with int8 weights (widened to int16, the operand `vpmaddwd` reads, as they
/// are loaded: half the bytes to stream per query than int16 storage).
#[derive(Clone)]
pub struct QLinear {
    inp: usize,
    out: usize,
    /// Input pairs: `inp` rounded up to even, halved.
    pairs: usize,
    /// Panel `p`, input pair `kp`: 32 values, output `j` of the panel at `(j / 8) * 16 +
    /// (j % 8) * 2 + t` for input `2 kp + t` (zero past `out` and past `inp`).
    panels: Vec<i8>,
    /// Per output channel: the float a weight step is worth.
    scale: Vec<f32>,
    bias: Vec<f32>,
    /// Largest activation magnitude after quantization, so that a row's dot product cannot
    /// overflow int32: `pairs · 2 · 127 · amax < 2³¹`.
    amax: f32,
}

impl std::fmt::Debug for QLinear {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "QLinear({} -> {}, int8)", self.inp, self.out)
    }
}

/// Reusable buffers of [`QLinear::forward_with`]: the quantized, packed input rows and their
/// scales.
#[derive(Default)]
pub struct QScratch {
    packed: Vec<i32>,
    row_scale: Vec<f32>,
}

impl QScratch {
    /// Bytes allocated.
    pub fn bytes(&self) -> usize {
        (self.packed.capacity() + self.row_scale.capacity()) * 4
    }
}

impl QLinear {
    /// Quantize row-major weights `w` (`out` rows of `inp`) and keep the bias of `out` in f32.
    pub fn new(w: &[f32], bias: &[f32], inp: usize, out: usize) -> Option<Self> {
        if w.len() != inp * out || bias.len() != out || inp == 0 || out == 0 {
            return None;
        }
        if w.iter().chain(bias).any(|v| !v.is_finite()) {
            return None;
        }
        let pairs = inp.div_ceil(2);
        let panels_n = out.div_ceil(NR);
        let mut panels = vec![0i8; panels_n * pairs * 2 * NR];
        let mut scale = vec![0f32; out];
        pulp::Arch::new().dispatch(QuantizeWeights {
            w,
            inp,
            pairs,
            panels: &mut panels,
            scale: &mut scale,
        });
        let amax = ((i32::MAX as f64) / (pairs as f64 * 2.0 * WMAX as f64))
            .floor()
            .min(i16::MAX as f64) as f32;
        Some(Self {
            inp,
            out,
            pairs,
            panels,
            scale,
            bias: bias.to_vec(),
            amax,
        })
    }

    /// Inputs per row.
    pub fn inputs(&self) -> usize {
        self.inp
    }

    /// Outputs per row.
    pub fn outputs(&self) -> usize {
        self.out
    }

    /// `y ≈ x·Wᵀ + b` for `x` of `rows × inputs` (row-major); `y` is resized to
    /// `rows × outputs`. Uses AVX2 when the CPU has it.
    pub fn forward(&self, x: &[f32], y: &mut Vec<f32>) {
        self.forward_with(x, y, &mut QScratch::default());
    }

    /// [`Self::forward`] reusing `scratch` across calls (no allocation once it has grown).
    pub fn forward_with(&self, x: &[f32], y: &mut Vec<f32>, scratch: &mut QScratch) {
        self.forward_on(x, y, scratch, Kernel::Best);
    }

    /// [`Self::forward`] with the scalar kernel only (the fallback for CPUs without AVX2;
    /// public so tests and benches can compare the two).
    pub fn forward_scalar(&self, x: &[f32], y: &mut Vec<f32>) {
        self.forward_on(x, y, &mut QScratch::default(), Kernel::Scalar);
    }

    fn forward_on(&self, x: &[f32], y: &mut Vec<f32>, s: &mut QScratch, kernel: Kernel) {
        let rows = x.len() / self.inp;
        // Every element is written below, so a reused buffer keeps its old values rather than
        // being zeroed first (the encoder calls this 24 times per text).
        y.resize(rows * self.out, 0.0);
        if rows == 0 {
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if matches!(kernel, Kernel::Best)
            && let Some(simd) = pulp::x86::V3::try_new()
        {
            simd.vectorize(Avx2Forward {
                simd,
                lin: self,
                x,
                scratch: s,
                rows,
                y,
            });
            return;
        }
        let _ = kernel;
        self.quantize_rows(x, rows, s, ScalarKernel);
        self.each_block(&s.packed, &s.row_scale, rows, y, ScalarKernel);
    }

    /// Quantize each row to int16 with its own scale and pack the [`RowBlocks`] of up to [`MR`]
    /// rows interleaved by input pair: `packed[(blk * pairs + kp) * MR + r]` holds inputs `2 kp`
    /// (low half) and `2 kp + 1` (high half) of row `start(blk) + r`. A row with an infinity or
    /// a NaN gets a NaN scale (so its outputs are NaN rather than numbers) and zeros.
    #[inline(always)]
    fn quantize_rows(&self, x: &[f32], rows: usize, s: &mut QScratch, kernel: impl BlockKernel) {
        let blocks = RowBlocks::new(rows);
        // A reused buffer keeps its old values: every pair of a row is written below, and the
        // slots of a block past its rows (which no kernel reads) are zeroed here all the same.
        s.packed.resize(blocks.count * self.pairs * MR, 0);
        for blk in 0..blocks.count {
            let at = blk * self.pairs * MR;
            for r in blocks.size(blk)..MR {
                s.packed[at + r..at + self.pairs * MR]
                    .iter_mut()
                    .step_by(MR)
                    .for_each(|v| *v = 0);
            }
        }
        s.row_scale.clear();
        for (row, xr) in x.chunks_exact(self.inp).enumerate() {
            let Some(max) = kernel.abs_max(xr) else {
                s.row_scale.push(f32::NAN);
                // Zeros, not another layer's values (which could overflow this one's sums).
                let (blk, r) = blocks.locate(row);
                let base = blk * self.pairs * MR + r;
                s.packed[base..base + (self.pairs - 1) * MR + 1]
                    .iter_mut()
                    .step_by(MR)
                    .for_each(|v| *v = 0);
                continue;
            };
            // Never zero (a subnormal `max` over `amax` would underflow), so `inv` is finite.
            let scale = if max > 0.0 {
                (max / self.amax).max(f32::MIN_POSITIVE)
            } else {
                1.0
            };
            s.row_scale.push(scale);
            let (blk, r) = blocks.locate(row);
            let base = blk * self.pairs * MR + r;
            let dst = &mut s.packed[base..base + (self.pairs - 1) * MR + 1];
            kernel.quantize(xr, 1.0 / scale, self.amax, dst);
        }
    }

    /// Run `kernel` over every panel and row block and write the scaled results to `y`.
    #[inline(always)]
    fn each_block(
        &self,
        packed: &[i32],
        row_scale: &[f32],
        rows: usize,
        y: &mut [f32],
        kernel: impl BlockKernel,
    ) {
        let pairs = self.pairs;
        let blocks = RowBlocks::new(rows);
        let len = pairs * 2 * NR;
        for (p, panel) in self.panels.chunks_exact(len).enumerate() {
            let col0 = p * NR;
            let cols = NR.min(self.out - col0);
            let scale = &self.scale[col0..col0 + cols];
            let bias = &self.bias[col0..col0 + cols];
            for (blk, ablock) in packed.chunks_exact(pairs * MR).enumerate() {
                let n = blocks.size(blk);
                // The first block streams the panel from L3 or memory (the layer's weights do
                // not fit in L2); the others find it in L1 or L2.
                let acc = kernel.run(ablock, panel, n, blk == 0 && n > 1);
                for (r, acc_row) in acc.iter().take(n).enumerate() {
                    let row = blocks.start(blk) + r;
                    let dst = &mut y[row * self.out + col0..row * self.out + col0 + cols];
                    kernel.store(acc_row, row_scale[row], scale, bias, dst);
                }
            }
        }
    }
}

/// [`QLinear::new`]'s quantization of the weights, under the CPU's best instruction set: a
/// scalar loop, but `round_ties_even` is then one `roundss` rather than a call to `rintf` (the
/// release profile's opt-level "s" does not vectorize it; it runs once per model load).
struct QuantizeWeights<'a> {
    w: &'a [f32],
    inp: usize,
    pairs: usize,
    panels: &'a mut [i8],
    scale: &'a mut [f32],
}

impl pulp::WithSimd for QuantizeWeights<'_> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let pairs = self.pairs;
        for (o, row) in self.w.chunks_exact(self.inp).enumerate() {
            let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
            let s = if max > 0.0 { max / WMAX } else { 1.0 };
            self.scale[o] = s;
            let inv = 1.0 / s;
            let (p, j) = (o / NR, o % NR);
            for (k, &v) in row.iter().enumerate() {
                let q = (v * inv).round_ties_even().clamp(-WMAX, WMAX) as i8;
                let (kp, t) = (k / 2, k % 2);
                self.panels[(p * pairs + kp) * 2 * NR + (j / 8) * 16 + (j % 8) * 2 + t] = q;
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Kernel {
    Best,
    Scalar,
}

/// Two int16 in one int32, `lo` in the low half (the order `vpmaddwd` pairs them in).
#[inline(always)]
fn pack(lo: i16, hi: i16) -> i32 {
    (lo as u16 as u32 | ((hi as u16 as u32) << 16)) as i32
}

/// The instruction-set-specific steps of a forward pass: the kernel (`n` rows, ≤ [`MR`], of a
/// packed block against one panel, in int32), and the per-row loops around it. A trait rather
/// than closures so that it is inlined into the caller compiled with AVX2 enabled (a closure is
/// a function of its own, compiled without the caller's target features). Every implementation
/// gives bit-identical results.
trait BlockKernel: Copy {
    /// With `prefetch`, the kernel also asks for the weights [`PREFETCH`] bytes ahead of those
    /// it reads (past the panel's end: the next panel's, which follows it in memory). The
    /// hardware prefetchers alone left the first block's loop waiting on the weight stream: the
    /// encoder's 24 layers took about the sum of their compute and of streaming their weights.
    /// Not for a block of one row, whose loop is the stream itself.
    fn run(self, a: &[i32], panel: &[i8], n: usize, prefetch: bool) -> [[i32; NR]; MR];

    /// The largest magnitude in `x` (0 when empty), or `None` if `x` has an infinity or a NaN.
    fn abs_max(self, x: &[f32]) -> Option<f32>;

    /// Quantize finite `x` to `round_ties_even(v · inv)` clamped to `±amax` (an integer),
    /// packed by pairs (see [`pack`]; a last odd input is paired with 0) into
    /// `dst[0], dst[MR], dst[2 MR]…`.
    fn quantize(self, x: &[f32], inv: f32, amax: f32, dst: &mut [i32]);

    /// `dst[j] = acc[j] as f32 · (rs · scale[j]) + bias[j]` (a multiply, then an add).
    fn store(self, acc: &[i32; NR], rs: f32, scale: &[f32], bias: &[f32], dst: &mut [f32]);
}

#[derive(Clone, Copy)]
struct ScalarKernel;

impl BlockKernel for ScalarKernel {
    #[inline(always)]
    fn run(self, a: &[i32], panel: &[i8], n: usize, _prefetch: bool) -> [[i32; NR]; MR] {
        scalar_kernel(a, panel, n)
    }

    #[inline(always)]
    fn abs_max(self, x: &[f32]) -> Option<f32> {
        let finite = x.iter().all(|v| v.is_finite());
        finite.then(|| x.iter().fold(0f32, |m, v| m.max(v.abs())))
    }

    #[inline(always)]
    fn quantize(self, x: &[f32], inv: f32, amax: f32, dst: &mut [i32]) {
        let q = |v: f32| (v * inv).round_ties_even().clamp(-amax, amax) as i16;
        let pairs = x
            .chunks(2)
            .map(|p| pack(q(p[0]), p.get(1).map_or(0, |&v| q(v))));
        for (d, p) in dst.iter_mut().step_by(MR).zip(pairs) {
            *d = p;
        }
    }

    #[inline(always)]
    fn store(self, acc: &[i32; NR], rs: f32, scale: &[f32], bias: &[f32], dst: &mut [f32]) {
        for (((d, &a), &s), &b) in dst.iter_mut().zip(acc).zip(scale).zip(bias) {
            *d = a as f32 * (rs * s) + b;
        }
    }
}

/// The scalar kernel: `n` rows (≤ [`MR`]) of the block against one panel, in int32.
#[inline(always)]
fn scalar_kernel(a: &[i32], panel: &[i8], n: usize) -> [[i32; NR]; MR] {
    let mut acc = [[0i32; NR]; MR];
    for (av, w) in a.chunks_exact(MR).zip(panel.chunks_exact(2 * NR)) {
        for (r, acc_row) in acc.iter_mut().enumerate().take(n) {
            let (lo, hi) = (av[r] as i16 as i32, (av[r] >> 16) as i16 as i32);
            for (j, slot) in acc_row.iter_mut().enumerate() {
                let at = (j / 8) * 16 + (j % 8) * 2;
                *slot += lo * w[at] as i32 + hi * w[at + 1] as i32;
            }
        }
    }
    acc
}

/// [`QLinear`]'s forward pass with the AVX2 kernel, run under AVX2's target features.
#[cfg(target_arch = "x86_64")]
struct Avx2Forward<'a> {
    simd: pulp::x86::V3,
    lin: &'a QLinear,
    x: &'a [f32],
    scratch: &'a mut QScratch,
    rows: usize,
    y: &'a mut [f32],
}

#[cfg(target_arch = "x86_64")]
impl pulp::NullaryFnOnce for Avx2Forward<'_> {
    type Output = ();
    #[inline(always)]
    fn call(self) {
        let kernel = Avx2Kernel(self.simd);
        self.lin
            .quantize_rows(self.x, self.rows, self.scratch, kernel);
        self.lin.each_block(
            &self.scratch.packed,
            &self.scratch.row_scale,
            self.rows,
            self.y,
            kernel,
        );
    }
}

#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Avx2Kernel(pulp::x86::V3);

#[cfg(target_arch = "x86_64")]
impl BlockKernel for Avx2Kernel {
    #[inline(always)]
    fn run(self, a: &[i32], w: &[i8], n: usize, prefetch: bool) -> [[i32; NR]; MR] {
        match (n, prefetch) {
            (6, true) => avx2_kernel::<6, true>(self.0, a, w),
            (5, true) => avx2_kernel::<5, true>(self.0, a, w),
            (4, true) => avx2_kernel::<4, true>(self.0, a, w),
            (3, true) => avx2_kernel::<3, true>(self.0, a, w),
            (2, true) => avx2_kernel::<2, true>(self.0, a, w),
            (6, false) => avx2_kernel::<6, false>(self.0, a, w),
            (5, false) => avx2_kernel::<5, false>(self.0, a, w),
            (4, false) => avx2_kernel::<4, false>(self.0, a, w),
            (3, false) => avx2_kernel::<3, false>(self.0, a, w),
            (2, false) => avx2_kernel::<2, false>(self.0, a, w),
            _ => avx2_kernel::<1, false>(self.0, a, w),
        }
    }

    #[inline(always)]
    fn abs_max(self, x: &[f32]) -> Option<f32> {
        use pulp::Simd;
        let simd = self.0;
        let (xv, xt) = pulp::x86::V3::as_simd_f32s(x);
        let zero = simd.splat_f32s(0.0);
        // `v · 0` is 0 for a finite `v` and NaN for an infinity or a NaN, so `bad` ends up NaN
        // exactly when the vector part has one (`max_f32s` alone would skip a NaN).
        let (mut max, mut bad) = ([zero; 2], [zero; 2]);
        let x2 = xv.chunks_exact(2);
        if let [v] = x2.remainder() {
            max[1] = simd.abs_f32s(*v);
            bad[1] = simd.mul_f32s(*v, zero);
        }
        for v in x2 {
            for i in 0..2 {
                max[i] = simd.max_f32s(max[i], simd.abs_f32s(v[i]));
                bad[i] = simd.add_f32s(bad[i], simd.mul_f32s(v[i], zero));
            }
        }
        let bad = simd.reduce_sum_f32s(simd.add_f32s(bad[0], bad[1]));
        let max = simd.reduce_max_f32s(simd.max_f32s(max[0], max[1]));
        if bad.is_nan() || !xt.iter().all(|v| v.is_finite()) {
            return None;
        }
        Some(xt.iter().fold(max, |m, v| m.max(v.abs())))
    }

    #[inline(always)]
    fn quantize(self, x: &[f32], inv: f32, amax: f32, dst: &mut [i32]) {
        let chunks = x.chunks_exact(16);
        let tail = chunks.remainder();
        let mut dst = dst.chunks_mut(16 / 2 * MR);
        for (c, d) in chunks.zip(&mut dst) {
            let c: &[f32; 16] = c.try_into().unwrap_or(&[0.0; 16]);
            self.quantize16(c, inv, amax, d);
        }
        if !tail.is_empty()
            && let Some(d) = dst.next()
        {
            // Zeros past the end quantize to 0, the odd input's partner `pack` expects.
            let mut c = [0f32; 16];
            c[..tail.len()].copy_from_slice(tail);
            self.quantize16(&c, inv, amax, d);
        }
    }

    #[inline(always)]
    fn store(self, acc: &[i32; NR], rs: f32, scale: &[f32], bias: &[f32], dst: &mut [f32]) {
        use core::arch::x86_64::{__m256, __m256i};
        let simd = self.0;
        let (Ok(scale), Ok(bias), Ok(dst)) = (
            <&[f32; NR]>::try_from(scale),
            <&[f32; NR]>::try_from(bias),
            <&mut [f32; NR]>::try_from(&mut *dst),
        ) else {
            // A last panel narrower than NR.
            return ScalarKernel.store(acc, rs, scale, bias, dst);
        };
        let rs: __m256 = simd.avx._mm256_set1_ps(rs);
        for h in 0..NR / 8 {
            let at = h * 8..h * 8 + 8;
            let a: __m256i = pulp::cast(<[i32; 8]>::try_from(&acc[at.clone()]).unwrap_or([0; 8]));
            let s: __m256 =
                pulp::cast(<[f32; 8]>::try_from(&scale[at.clone()]).unwrap_or([0.0; 8]));
            let b: __m256 = pulp::cast(<[f32; 8]>::try_from(&bias[at.clone()]).unwrap_or([0.0; 8]));
            let a = simd.avx._mm256_cvtepi32_ps(a);
            // Multiply, then add (no FMA): the scalar kernel's two roundings.
            let v = simd
                .avx
                ._mm256_add_ps(simd.avx._mm256_mul_ps(a, simd.avx._mm256_mul_ps(rs, s)), b);
            dst[at].copy_from_slice(&pulp::cast::<__m256, [f32; 8]>(v));
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl Avx2Kernel {
    /// [`BlockKernel::quantize`] of 16 inputs into 8 pairs at `dst[0], dst[MR]…`: clamped in
    /// f32, then `vcvtps2dq`, which rounds ties to even (the default MXCSR rounding, which Rust
    /// never changes), and `vpackssdw` (exact: the values fit in int16).
    #[inline(always)]
    fn quantize16(self, x: &[f32; 16], inv: f32, amax: f32, dst: &mut [i32]) {
        let simd = self.0;
        let (a, b) = (
            self.quantize8(&x[..8], inv, amax),
            self.quantize8(&x[8..], inv, amax),
        );
        // Per 128-bit half: a0..a3 b0..b3 | a4..a7 b4..b7 as int16; the 64-bit lanes reordered
        // 0, 2, 1, 3 give a0..a7 b0..b7, and as int32 each lane is one pair (low, high).
        let p = simd.avx2._mm256_packs_epi32(a, b);
        let p = simd.avx2._mm256_permute4x64_epi64::<0b11_01_10_00>(p);
        let p: [i32; 8] = pulp::cast(p);
        for (d, p) in dst.iter_mut().step_by(MR).zip(p) {
            *d = p;
        }
    }

    /// Eight inputs (the first eight of `x`) times `inv`, clamped to `±amax`, rounded to int32.
    #[inline(always)]
    fn quantize8(self, x: &[f32], inv: f32, amax: f32) -> core::arch::x86_64::__m256i {
        let avx = self.0.avx;
        let v: core::arch::x86_64::__m256 =
            pulp::cast(<[f32; 8]>::try_from(&x[..8]).unwrap_or([0.0; 8]));
        let v = avx._mm256_mul_ps(v, avx._mm256_set1_ps(inv));
        let v = avx._mm256_max_ps(v, avx._mm256_set1_ps(-amax));
        let v = avx._mm256_min_ps(v, avx._mm256_set1_ps(amax));
        avx._mm256_cvtps_epi32(v)
    }
}

/// `R` rows × 16 columns in int32: per input pair, each row's two int16 broadcast to all lanes
/// and `vpmaddwd` against the panel's two registers (8 columns × 2 inputs each).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn avx2_kernel<const R: usize, const PREFETCH_AHEAD: bool>(
    simd: pulp::x86::V3,
    a: &[i32],
    panel: &[i8],
) -> [[i32; NR]; MR] {
    use core::arch::x86_64::{__m256i, _MM_HINT_T0};
    let zero: __m256i = pulp::cast([0i32; 8]);
    let mut acc = [[zero; 2]; R];
    for (av, w) in a.chunks_exact(MR).zip(panel.chunks_exact(2 * NR)) {
        if PREFETCH_AHEAD {
            // A hint: pulp's wrapper is safe (a prefetch never faults, even past the end of
            // the allocation, where the pointer points after the last panel).
            simd.sse
                ._mm_prefetch::<_MM_HINT_T0>(w.as_ptr().wrapping_add(PREFETCH));
        }
        let w0 = pulp::cast::<[i8; 16], _>(w[..16].try_into().unwrap_or([0; 16]));
        let w1 = pulp::cast::<[i8; 16], _>(w[16..].try_into().unwrap_or([0; 16]));
        let w0: __m256i = simd.avx2._mm256_cvtepi8_epi16(w0);
        let w1: __m256i = simd.avx2._mm256_cvtepi8_epi16(w1);
        for r in 0..R {
            let b = simd.avx._mm256_set1_epi32(av[r]);
            acc[r][0] = simd
                .avx2
                ._mm256_add_epi32(acc[r][0], simd.avx2._mm256_madd_epi16(b, w0));
            acc[r][1] = simd
                .avx2
                ._mm256_add_epi32(acc[r][1], simd.avx2._mm256_madd_epi16(b, w1));
        }
    }
    let mut out = [[0i32; NR]; MR];
    for (o, a) in out.iter_mut().zip(acc) {
        let lo: [i32; 8] = pulp::cast(a[0]);
        let hi: [i32; 8] = pulp::cast(a[1]);
        o[..8].copy_from_slice(&lo);
        o[8..].copy_from_slice(&hi);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::Linear;

    /// A deterministic pseudo-random sequence in [-1, 1).
    fn noise(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    #[test]
    fn simd_and_scalar_kernels_agree_exactly_and_track_f32() {
        for (rows, inp, out) in [
            (1, 3, 1),
            (5, 7, 17),
            (7, 33, 40),
            (8, 1536, 40),
            (13, 384, 48),
            (21, 384, 33),
            (27, 1536, 20),
        ] {
            let w = noise(inp * out, 1);
            let b = noise(out, 2);
            let x: Vec<f32> = noise(rows * inp, 3).iter().map(|v| v * 4.0).collect();
            let q = QLinear::new(&w, &b, inp, out).unwrap();
            let f = Linear::new(&w, &b, inp, out).unwrap();
            let (mut fast, mut slow, mut exact) = (Vec::new(), Vec::new(), Vec::new());
            q.forward(&x, &mut fast);
            q.forward_scalar(&x, &mut slow);
            f.forward(&x, &mut exact);
            assert_eq!(fast, slow, "{rows}x{inp}x{out}: SIMD and scalar differ");
            assert_eq!(fast.len(), rows * out);
            // Relative to the row's largest output magnitude, int8 weights stay within ~1%.
            for (qr, fr) in fast.chunks(out).zip(exact.chunks(out)) {
                let big = fr.iter().fold(1e-3f32, |m, v| m.max(v.abs()));
                for (a, e) in qr.iter().zip(fr) {
                    assert!((a - e).abs() / big < 0.02, "{rows}x{inp}x{out}: {a} vs {e}");
                }
            }
        }
    }

    #[test]
    fn row_blocks_are_balanced_and_cover_every_row_once() {
        for rows in 1..=100 {
            let b = RowBlocks::new(rows);
            assert_eq!(b.count, rows.div_ceil(MR), "{rows}");
            let sizes: Vec<usize> = (0..b.count).map(|blk| b.size(blk)).collect();
            assert_eq!(sizes.iter().sum::<usize>(), rows, "{rows}: {sizes:?}");
            let (lo, hi) = (sizes.iter().min(), sizes.iter().max());
            assert!(hi <= Some(&MR) && lo >= Some(&1), "{rows}: {sizes:?}");
            assert!(
                hi.zip(lo).is_some_and(|(h, l)| h - l <= 1),
                "{rows}: {sizes:?}"
            );
            for row in 0..rows {
                let (blk, r) = b.locate(row);
                assert!(r < b.size(blk), "{rows}: row {row}");
                assert_eq!(b.start(blk) + r, row, "{rows}: row {row}");
            }
        }
        let sizes = |rows| {
            let b = RowBlocks::new(rows);
            (0..b.count).map(|blk| b.size(blk)).collect::<Vec<_>>()
        };
        assert_eq!(sizes(21), [6, 5, 5, 5]);
        assert_eq!(sizes(8), [4, 4]);
    }

    #[test]
    fn extreme_inputs_do_not_overflow() {
        let (inp, out) = (1536, 16);
        let w: Vec<f32> = (0..inp * out)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let b = vec![0.0; out];
        let x: Vec<f32> = (0..inp)
            .map(|i| if i % 2 == 0 { 1e6 } else { -1e6 })
            .collect();
        let q = QLinear::new(&w, &b, inp, out).unwrap();
        let (mut fast, mut slow) = (Vec::new(), Vec::new());
        q.forward(&x, &mut fast);
        q.forward_scalar(&x, &mut slow);
        assert_eq!(fast, slow);
        let want = 1e6 * inp as f32;
        assert!(
            fast.iter().all(|v| (v - want).abs() / want < 1e-3),
            "{:?}",
            &fast[..2]
        );
    }

    #[test]
    fn a_non_finite_row_gives_nan_outputs_and_leaves_the_others_alone() {
        let (inp, out) = (37, 20);
        let q = QLinear::new(&noise(inp * out, 1), &noise(out, 2), inp, out).unwrap();
        let clean = noise(3 * inp, 3);
        let (mut want, mut fast, mut slow) = (Vec::new(), Vec::new(), Vec::new());
        q.forward(&clean, &mut want);
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            for at in [0, 16, inp - 1] {
                let mut x = clean.clone();
                x[inp + at] = bad;
                q.forward(&x, &mut fast);
                q.forward_scalar(&x, &mut slow);
                assert!(
                    fast[out..2 * out].iter().all(|v| v.is_nan()),
                    "{bad} at {at}"
                );
                assert!(
                    slow[out..2 * out].iter().all(|v| v.is_nan()),
                    "{bad} at {at}"
                );
                for r in [0, 2] {
                    assert_eq!(fast[r * out..(r + 1) * out], want[r * out..(r + 1) * out]);
                    assert_eq!(slow[r * out..(r + 1) * out], want[r * out..(r + 1) * out]);
                }
            }
        }
    }

    #[test]
    fn ties_round_to_even_in_both_kernels() {
        // With the row's largest input equal to `amax` the input scale is 1, so every other
        // input, k + 0.5, is a tie; rounding ties away from zero would add 1 for about half.
        let inp = 40;
        let q = QLinear::new(&vec![1.0; inp], &[0.0], inp, 1).unwrap();
        let mut x: Vec<f32> = (0..inp).map(|i| i as f32 + 0.5).collect();
        x[0] = q.amax;
        let (mut fast, mut slow) = (Vec::new(), Vec::new());
        q.forward(&x, &mut fast);
        q.forward_scalar(&x, &mut slow);
        assert_eq!(fast, slow);
        let want: f32 = x.iter().map(|v| v.round_ties_even()).sum();
        assert!((fast[0] - want).abs() < 0.1, "{} vs {want}", fast[0]);
    }

    #[test]
    fn a_reused_scratch_gives_the_same_outputs_as_a_fresh_one() {
        // Layers of different widths and row counts through one scratch, as the encoder runs
        // them, with a non-finite row after a bigger call (its old values must not leak in).
        let layers = [(384, 48), (1536, 20), (37, 16), (384, 48)];
        let mut scratch = QScratch::default();
        for (i, &(inp, out)) in layers.iter().enumerate() {
            let q = QLinear::new(&noise(inp * out, 1), &noise(out, 2), inp, out).unwrap();
            for rows in [13, 4, 1, 7] {
                let mut x = noise(rows * inp, 3 + i as u64);
                if rows == 4 {
                    x[inp + 2] = f32::NAN;
                }
                let (mut fresh, mut reused) = (Vec::new(), vec![1.0; 3]);
                q.forward(&x, &mut fresh);
                q.forward_with(&x, &mut reused, &mut scratch);
                assert_eq!(fresh.len(), reused.len());
                assert!(
                    fresh
                        .iter()
                        .zip(&reused)
                        .all(|(a, b)| a == b || a.is_nan() && b.is_nan()),
                    "{inp}x{out}, {rows} rows"
                );
                let mut slow = Vec::new();
                q.forward_scalar(&x, &mut slow);
                assert!(
                    slow.iter()
                        .zip(&fresh)
                        .all(|(a, b)| a == b || a.is_nan() && b.is_nan())
                );
            }
        }
    }

    #[test]
    fn zero_rows_and_bad_shapes() {
        let q = QLinear::new(&[0.0; 6], &[1.0, 2.0], 3, 2).unwrap();
        let mut y = Vec::new();
        q.forward(&[0.0; 3], &mut y);
        assert_eq!(y, vec![1.0, 2.0]);
        q.forward(&[], &mut y);
        assert!(y.is_empty());
        assert!(QLinear::new(&[1.0], &[0.0, 1.0], 1, 1).is_none());
        assert!(QLinear::new(&[f32::NAN], &[0.0], 1, 1).is_none());
    }
}
