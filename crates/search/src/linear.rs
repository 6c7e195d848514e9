//! A dense layer `y = x·Wᵀ + b` with its weights packed once for a fast single-threaded matmul:
//! column panels of [`NR`] outputs stored contiguously along the input dimension, and a
//! register-blocked kernel of [`MR`] rows × [`NR`] columns written with `pulp`'s vector fused
//! multiply-adds, for the CPU features it detects at run time (AVX2+FMA on x86-64, NEON on
//! aarch64; plain scalar code elsewhere). Explicit SIMD rather than loops left to the
//! auto-vectorizer, which the release profile's opt-level "s" turns off (see [`crate::lanes`]).

/// Output columns per packed panel (two 8-lane vectors).
pub(crate) const NR: usize = 16;
/// Input rows per kernel call: 6 × 16 accumulators are 12 of AVX2's 16 registers, leaving room
/// for two panel vectors and a broadcast (the classic 6×16 FMA kernel).
pub(crate) const MR: usize = 6;

/// A linear layer: `out` outputs from `inp` inputs.
#[derive(Clone)]
pub struct Linear {
    inp: usize,
    out: usize,
    /// Panel `p` holds, for every input `k`, the weights of outputs `p*NR..p*NR+NR` (zero past
    /// `out`): `panels[(p * inp + k) * NR + j] = W[p*NR + j][k]`.
    panels: Vec<f32>,
    bias: Vec<f32>,
}

impl std::fmt::Debug for Linear {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Linear({} -> {})", self.inp, self.out)
    }
}

impl Linear {
    /// Pack row-major weights `w` (`out` rows of `inp`) and a bias of `out`.
    pub fn new(w: &[f32], bias: &[f32], inp: usize, out: usize) -> Option<Self> {
        if w.len() != inp * out || bias.len() != out || inp == 0 || out == 0 {
            return None;
        }
        let panels_n = out.div_ceil(NR);
        let mut panels = vec![0f32; panels_n * inp * NR];
        for (o, row) in w.chunks_exact(inp).enumerate() {
            let (p, j) = (o / NR, o % NR);
            for (k, &v) in row.iter().enumerate() {
                panels[(p * inp + k) * NR + j] = v;
            }
        }
        Some(Self {
            inp,
            out,
            panels,
            bias: bias.to_vec(),
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

    /// `y = x·Wᵀ + b` for `x` of `rows × inputs` (row-major); `y` is resized to `rows × outputs`.
    pub fn forward(&self, x: &[f32], y: &mut Vec<f32>) {
        let rows = x.len() / self.inp;
        // Every element is written below, so a reused buffer keeps its old values rather than
        // being zeroed first (the encoder calls this 24 times per text).
        y.resize(rows * self.out, 0.0);
        pulp::Arch::new().dispatch(Forward {
            lin: self,
            x,
            rows,
            y,
        });
    }

    #[inline(always)]
    fn forward_inner<S: pulp::Simd>(&self, simd: S, x: &[f32], rows: usize, y: &mut [f32]) {
        let k = self.inp;
        // Pack the input in blocks of MR rows, interleaved by input: a[(blk*k + kk)*MR + r].
        let blocks = rows.div_ceil(MR);
        let mut a = vec![0f32; blocks * k * MR];
        for (row, xr) in x.chunks_exact(k).enumerate() {
            let (blk, r) = (row / MR, row % MR);
            let base = blk * k * MR;
            for (kk, &v) in xr.iter().enumerate() {
                a[base + kk * MR + r] = v;
            }
        }
        for (p, panel) in self.panels.chunks_exact(k * NR).enumerate() {
            let col0 = p * NR;
            let cols = NR.min(self.out - col0);
            let bias = &self.bias[col0..col0 + cols];
            for (blk, ablock) in a.chunks_exact(k * MR).enumerate() {
                let acc = kernel(simd, ablock, panel);
                for (r, acc_row) in acc.iter().enumerate() {
                    let row = blk * MR + r;
                    if row >= rows {
                        break;
                    }
                    let dst = &mut y[row * self.out + col0..row * self.out + col0 + cols];
                    crate::lanes::sum2(simd, dst, &acc_row[..cols], bias);
                }
            }
        }
    }
}

/// [`Linear::forward`] as a SIMD operation: `pulp` compiles `with_simd` once per instruction
/// set and runs the best one the CPU has (a closure would not inherit the target features).
struct Forward<'a> {
    lin: &'a Linear,
    x: &'a [f32],
    rows: usize,
    y: &'a mut [f32],
}

impl pulp::WithSimd for Forward<'_> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) {
        self.lin.forward_inner(simd, self.x, self.rows, self.y);
    }
}

/// MR rows × NR columns of `a·panel` over the whole input dimension: per input, each row's value
/// broadcast and multiply-added to the panel's `NR / lanes` vectors (two with AVX2).
#[inline(always)]
pub(crate) fn kernel<S: pulp::Simd>(simd: S, a: &[f32], panel: &[f32]) -> [[f32; NR]; MR] {
    // Vectors per NR columns: NR is a multiple of every `pulp` f32 width (1, 4, 8, 16).
    let nv = NR / S::F32_LANES;
    let zero = simd.splat_f32s(0.0);
    let mut acc = [[zero; NR]; MR];
    for (av, bv) in a.chunks_exact(MR).zip(panel.chunks_exact(NR)) {
        let (bv, _) = S::as_simd_f32s(bv);
        for r in 0..MR {
            let x = simd.splat_f32s(av[r]);
            for j in 0..nv {
                acc[r][j] = simd.mul_add_e_f32s(x, bv[j], acc[r][j]);
            }
        }
    }
    let mut out = [[0f32; NR]; MR];
    for (o, a) in out.iter_mut().zip(&acc) {
        let (ov, _) = S::as_mut_simd_f32s(o);
        ov.copy_from_slice(&a[..nv]);
    }
    out
}

/// Dot product of two slices (over the shorter), with the best SIMD the CPU has.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    pulp::Arch::new().dispatch(Dot { a, b })
}

/// [`dot`] as a SIMD operation.
struct Dot<'a> {
    a: &'a [f32],
    b: &'a [f32],
}

impl pulp::WithSimd for Dot<'_> {
    type Output = f32;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) -> f32 {
        crate::lanes::dot(simd, self.a, self.b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_naive_matmul_for_odd_shapes() {
        for (rows, inp, out) in [(1, 3, 1), (5, 7, 17), (9, 33, 40), (4, 16, 16)] {
            let w: Vec<f32> = (0..inp * out)
                .map(|i| ((i * 7) % 11) as f32 - 5.0)
                .collect();
            let b: Vec<f32> = (0..out).map(|i| i as f32 * 0.5).collect();
            let x: Vec<f32> = (0..rows * inp)
                .map(|i| ((i * 3) % 5) as f32 - 2.0)
                .collect();
            let lin = Linear::new(&w, &b, inp, out).unwrap();
            let mut y = Vec::new();
            lin.forward(&x, &mut y);
            assert_eq!(y.len(), rows * out);
            for r in 0..rows {
                for o in 0..out {
                    let want: f32 = (0..inp)
                        .map(|k| x[r * inp + k] * w[o * inp + k])
                        .sum::<f32>()
                        + b[o];
                    assert!((y[r * out + o] - want).abs() < 1e-3, "{rows}x{inp}x{out}");
                }
            }
        }
        assert!(Linear::new(&[1.0], &[0.0, 1.0], 1, 1).is_none());
    }

    #[test]
    fn dot_handles_tails() {
        let a: Vec<f32> = (0..19).map(|i| i as f32).collect();
        let want: f32 = a.iter().map(|x| x * x).sum();
        assert_eq!(dot(&a, &a), want);
    }
}
