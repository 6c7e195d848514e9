//! The encoder's multi-head self-attention over one sequence, as two small matrix products per
//! head on [`crate::linear`]'s register-blocked kernel: scores `Q·Kᵀ` (keys packed into column
//! panels), a softmax whose exponential is a vector polynomial, then `P·V` (values packed the
//! same way). One dot product per query and key pair, each ending in a horizontal sum, plus a
//! libm `expf` per score, is what this replaced: it was most of a long text's time (a 256-token
//! text spends ~24× more on attention than on a 21-token one per token).
//!
//! Like [`crate::lanes`], every function takes the caller's `pulp::Simd` token and is inlined
//! into the encoder's `with_simd`, so it runs with that instruction set's features.

use crate::linear::{MR, NR, kernel};
use pulp::Simd;

/// Reusable buffers of [`attend`], kept with the encoder's other scratch buffers.
#[derive(Default)]
pub(crate) struct AttnScratch {
    /// One head's query rows, scaled by `1/√d`, in blocks of [`MR`] interleaved by dimension.
    q: Vec<f32>,
    /// One head's key rows as column panels of [`NR`] keys along the head's dimensions.
    k: Vec<f32>,
    /// Scores, then probabilities: one row per query, [`NR`]-padded columns per key.
    p: Vec<f32>,
    /// The probabilities in blocks of [`MR`] rows interleaved by key.
    a: Vec<f32>,
    /// One head's value rows as column panels of [`NR`] dimensions along the keys.
    v: Vec<f32>,
}

impl AttnScratch {
    /// Bytes allocated.
    pub(crate) fn bytes(&self) -> usize {
        [&self.q, &self.k, &self.p, &self.a, &self.v]
            .iter()
            .map(|v| v.capacity() * 4)
            .sum()
    }
}

/// A learned bias added to every attention score by how far the key is from the query (MPNet's
/// relative positions): one row per head, indexed by `key − query + span`.
#[derive(Clone, Debug)]
pub(crate) struct RelBias {
    /// The largest distance the table covers on either side.
    span: usize,
    /// `heads × (2·span + 1)` biases.
    table: Vec<f32>,
}

impl RelBias {
    /// The table for sequences of up to `span + 1` tokens, from a model's `buckets × heads`
    /// weights (`relative_attention_bias.weight`) and its bucketing of distances.
    pub(crate) fn new(weights: &[f32], buckets: usize, heads: usize, span: usize) -> Self {
        let width = 2 * span + 1;
        let mut table = vec![0f32; heads * width];
        for (at, rel) in (-(span as i64)..=span as i64).enumerate() {
            let b = relative_bucket(rel, buckets).min(buckets.saturating_sub(1));
            for head in 0..heads {
                table[head * width + at] = weights.get(b * heads + head).copied().unwrap_or(0.0);
            }
        }
        Self { span, table }
    }

    /// The biases of `head` for a query at `i` against keys `0..len`.
    #[inline(always)]
    fn row(&self, head: usize, i: usize, len: usize) -> &[f32] {
        let width = 2 * self.span + 1;
        let from = head * width + self.span - i;
        &self.table[from..from + len]
    }
}

/// MPNet's (and T5's) bucket of a relative position `key − query`: half the buckets for keys
/// before the query, half after; exact distances up to a quarter of the buckets, then
/// logarithmic steps up to a distance of 128, beyond which every distance shares the last
/// bucket. Computed in f32, as the reference does, so that the distances where the logarithm
/// lands on a whole number fall in the same bucket.
pub(crate) fn relative_bucket(rel: i64, buckets: usize) -> usize {
    const MAX_DISTANCE: f32 = 128.0;
    let half = buckets / 2;
    let n = -rel;
    let side = if n < 0 { half } else { 0 };
    let n = n.unsigned_abs() as usize;
    let exact = half / 2;
    if n < exact || exact == 0 {
        return side + n.min(half.saturating_sub(1));
    }
    let log = (n as f32 / exact as f32).ln() / (MAX_DISTANCE / exact as f32).ln();
    let large = exact + (log * (half - exact) as f32) as usize;
    side + large.min(half - 1)
}

/// Scaled dot-product attention of the `len` token rows that start at row `start`: `qkv` holds
/// rows of `3h` values (the queries, keys and values of every head side by side), and row `i`'s
/// context, head after head, goes to `ctx[i·h..(i+1)·h]`. `bias`, when given, is added to the
/// scores before the softmax (`len` must not exceed its span + 1).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn attend<S: Simd>(
    simd: S,
    qkv: &[f32],
    start: usize,
    len: usize,
    h: usize,
    heads: usize,
    bias: Option<&RelBias>,
    ctx: &mut [f32],
    s: &mut AttnScratch,
) {
    if len == 0 || heads == 0 {
        return;
    }
    let d = h / heads;
    let stride = 3 * h;
    let scale = 1.0 / (d as f32).sqrt();
    let blocks = len.div_ceil(MR);
    let lp = len.div_ceil(NR) * NR;
    let rows = &qkv[start * stride..(start + len) * stride];
    for head in 0..heads {
        let (qo, ko, vo) = (head * d, h + head * d, 2 * h + head * d);

        // Queries in blocks of MR rows (rows past `len` stay zero), keys in panels of NR.
        s.q.clear();
        s.q.resize(blocks * d * MR, 0.0);
        s.k.clear();
        s.k.resize(lp * d, 0.0);
        for (i, row) in rows.chunks_exact(stride).enumerate() {
            let (blk, r) = (i / MR, i % MR);
            let q = &mut s.q[blk * d * MR..(blk + 1) * d * MR];
            for (t, &x) in row[qo..qo + d].iter().enumerate() {
                q[t * MR + r] = x * scale;
            }
            let (p, j) = (i / NR, i % NR);
            let k = &mut s.k[p * d * NR..(p + 1) * d * NR];
            for (t, &x) in row[ko..ko + d].iter().enumerate() {
                k[t * NR + j] = x;
            }
        }

        // Scores of every query against every key.
        s.p.clear();
        s.p.resize(len * lp, 0.0);
        for (pi, panel) in s.k.chunks_exact(d * NR).enumerate() {
            for (blk, qb) in s.q.chunks_exact(d * MR).enumerate() {
                let acc = kernel(simd, qb, panel);
                for (r, acc_row) in acc.iter().enumerate() {
                    let i = blk * MR + r;
                    if i >= len {
                        break;
                    }
                    s.p[i * lp + pi * NR..i * lp + (pi + 1) * NR].copy_from_slice(acc_row);
                }
            }
        }

        // Softmax of each row over its `len` keys, then the rows in blocks for `P·V`.
        s.a.clear();
        s.a.resize(blocks * len * MR, 0.0);
        for (i, row) in s.p.chunks_exact_mut(lp).enumerate() {
            if let Some(b) = bias {
                crate::lanes::add_assign(simd, &mut row[..len], b.row(head, i, len));
            }
            softmax(simd, row, len);
            let (blk, r) = (i / MR, i % MR);
            let a = &mut s.a[blk * len * MR..(blk + 1) * len * MR];
            for (j, &p) in row[..len].iter().enumerate() {
                a[j * MR + r] = p;
            }
        }

        // Values in panels of NR dimensions (zero past `d`), then the context.
        let vpanels = d.div_ceil(NR);
        s.v.clear();
        s.v.resize(vpanels * len * NR, 0.0);
        for (j, row) in rows.chunks_exact(stride).enumerate() {
            for (p, chunk) in row[vo..vo + d].chunks(NR).enumerate() {
                let at = (p * len + j) * NR;
                s.v[at..at + chunk.len()].copy_from_slice(chunk);
            }
        }
        for (pi, panel) in s.v.chunks_exact(len * NR).enumerate() {
            let cols = NR.min(d - pi * NR);
            for (blk, ab) in s.a.chunks_exact(len * MR).enumerate() {
                let acc = kernel(simd, ab, panel);
                for (r, acc_row) in acc.iter().enumerate() {
                    let i = blk * MR + r;
                    if i >= len {
                        break;
                    }
                    let at = (start + i) * h + qo + pi * NR;
                    ctx[at..at + cols].copy_from_slice(&acc_row[..cols]);
                }
            }
        }
    }
}

/// Softmax in place over the first `n` values of `row`, whose length is a multiple of [`NR`]
/// (so of every vector width); the values past `n` become 0.
#[inline(always)]
fn softmax<S: Simd>(simd: S, row: &mut [f32], n: usize) {
    let max = row[..n].iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let m = simd.splat_f32s(max);
    let (rv, rt) = S::as_mut_simd_f32s(row);
    debug_assert!(rt.is_empty());
    for v in rv.iter_mut() {
        *v = exp(simd, simd.sub_f32s(*v, m));
    }
    row[n..].iter_mut().for_each(|v| *v = 0.0);
    let sum: f32 = {
        let (rv, _) = S::as_simd_f32s(row);
        let mut acc = simd.splat_f32s(0.0);
        for &v in rv {
            acc = simd.add_f32s(acc, v);
        }
        simd.reduce_sum_f32s(acc)
    };
    let inv = simd.splat_f32s(1.0 / sum);
    let (rv, _) = S::as_mut_simd_f32s(row);
    for v in rv {
        *v = simd.mul_f32s(*v, inv);
    }
}

/// `eˣ` on every lane for `x ≤ 0` (a softmax's shifted scores), within 2 ulp: `x = n·ln 2 + r`
/// with `|r| ≤ ln 2 / 2`, a degree-6 polynomial for `eʳ` and `2ⁿ` built in the exponent bits.
/// Below −87 the result is 0 rather than a subnormal; NaN stays NaN.
#[inline(always)]
pub(crate) fn exp<S: Simd>(simd: S, x: S::f32s) -> S::f32s {
    // 1.5 · 2²³: adding it rounds a float of magnitude < 2²² to an integer, kept in the low
    // mantissa bits of the sum.
    const ROUND: f32 = 12_582_912.0;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    const P: [f32; 6] = [
        1.987_569_1e-4,
        1.398_199_9e-3,
        8.333_452e-3,
        4.166_579_6e-2,
        1.666_666_5e-1,
        0.5,
    ];
    let floor = simd.splat_f32s(-87.0);
    let x_in = x;
    let under = simd.less_than_f32s(x, floor);
    let x = simd.max_f32s(x, floor);
    let shifted = simd.mul_add_e_f32s(
        x,
        simd.splat_f32s(std::f32::consts::LOG2_E),
        simd.splat_f32s(ROUND),
    );
    let n = simd.sub_f32s(shifted, simd.splat_f32s(ROUND));
    let r = simd.negate_mul_add_e_f32s(n, simd.splat_f32s(LN2_HI), x);
    let r = simd.negate_mul_add_e_f32s(n, simd.splat_f32s(LN2_LO), r);
    let mut p = simd.splat_f32s(P[0]);
    for &c in &P[1..] {
        p = simd.mul_add_e_f32s(p, r, simd.splat_f32s(c));
    }
    let r2 = simd.mul_f32s(r, r);
    let e = simd.add_f32s(simd.mul_add_e_f32s(p, r2, r), simd.splat_f32s(1.0));
    // 2ⁿ: n (two's complement in the low bits of `shifted`) plus the bias, into the exponent.
    let bits = simd.sub_u32s(
        simd.transmute_u32s_f32s(shifted),
        simd.transmute_u32s_f32s(simd.splat_f32s(ROUND)),
    );
    let bits = simd.add_u32s(bits, simd.splat_u32s(127));
    let pow = simd.wrapping_dyn_shl_u32s(bits, simd.splat_u32s(23));
    let y = simd.mul_f32s(e, simd.transmute_f32s_u32s(pow));
    let y = simd.select_f32s(under, simd.splat_f32s(0.0), y);
    // `max` above may have replaced a NaN by the floor.
    simd.select_f32s(simd.equal_f32s(x_in, x_in), y, x_in)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::tests::noise;

    /// A relative-position bias's weights (`buckets × heads`) for the naive attention.
    struct NaiveBias<'a> {
        weights: &'a [f32],
        buckets: usize,
    }

    /// The attention of the encoder before this module: a dot product per pair, libm `exp`;
    /// with a relative-position bias looked up pair by pair.
    fn naive(
        qkv: &[f32],
        (start, len): (usize, usize),
        h: usize,
        heads: usize,
        bias: Option<&NaiveBias>,
        ctx: &mut [f32],
    ) {
        let d = h / heads;
        let stride = 3 * h;
        let scale = 1.0 / (d as f32).sqrt();
        for head in 0..heads {
            let (qo, ko, vo) = (head * d, h + head * d, 2 * h + head * d);
            for i in start..start + len {
                let q = &qkv[i * stride + qo..i * stride + qo + d];
                let scores: Vec<f32> = (start..start + len)
                    .map(|j| {
                        let k = &qkv[j * stride + ko..j * stride + ko + d];
                        let b = bias.map_or(0.0, |b| {
                            let bucket = relative_bucket(j as i64 - i as i64, b.buckets);
                            b.weights[bucket * heads + head]
                        });
                        q.iter().zip(k).map(|(a, b)| a * b).sum::<f32>() * scale + b
                    })
                    .collect();
                let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let e: Vec<f32> = scores.iter().map(|s| (s - max).exp()).collect();
                let sum: f32 = e.iter().sum();
                for t in 0..d {
                    ctx[i * h + qo + t] = (start..start + len)
                        .zip(&e)
                        .map(|(j, p)| p / sum * qkv[j * stride + vo + t])
                        .sum();
                }
            }
        }
    }

    struct Check;
    impl pulp::WithSimd for Check {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: Simd>(self, simd: S) {
            let mut s = AttnScratch::default();
            // Head sizes that are and are not a multiple of NR; sequence lengths around MR and
            // NR; two sequences back to back, so `start` matters.
            for (h, heads) in [(384, 12), (40, 2), (12, 3)] {
                // MPNet's 32 buckets; weights of a few units, as trained ones are.
                let weights: Vec<f32> = noise(32 * heads, heads as u64)
                    .iter()
                    .map(|v| v * 4.0)
                    .collect();
                let table = RelBias::new(&weights, 32, heads, 40);
                let naive_bias = NaiveBias {
                    weights: &weights,
                    buckets: 32,
                };
                for (a, b) in [(1, 1), (5, 7), (6, 16), (17, 33), (21, 2), (41, 3)] {
                    for with_bias in [false, true] {
                        let rows = a + b;
                        let qkv: Vec<f32> = noise(rows * 3 * h, (h + a) as u64)
                            .iter()
                            .map(|v| v * 3.0)
                            .collect();
                        let (nb, tb) = if with_bias {
                            (Some(&naive_bias), Some(&table))
                        } else {
                            (None, None)
                        };
                        let mut want = vec![0.0; rows * h];
                        naive(&qkv, (0, a), h, heads, nb, &mut want);
                        naive(&qkv, (a, b), h, heads, nb, &mut want);
                        let mut got = vec![f32::NAN; rows * h];
                        attend(simd, &qkv, 0, a, h, heads, tb, &mut got, &mut s);
                        attend(simd, &qkv, a, b, h, heads, tb, &mut got, &mut s);
                        let worst = got
                            .iter()
                            .zip(&want)
                            .map(|(g, w)| (g - w).abs())
                            .fold(0.0, f32::max);
                        assert!(
                            worst < 1e-5,
                            "h {h} heads {heads} lens {a},{b} bias {with_bias}: {worst}"
                        );
                    }
                }
            }
        }
    }

    /// The buckets of the reference implementation (Hugging Face transformers' MPNet
    /// `relative_position_bucket`, 32 buckets, max distance 128), read off it for these
    /// distances: the boundaries of the exact and logarithmic ranges on both sides.
    #[test]
    fn relative_buckets_match_the_reference() {
        let want: [(i64, usize); 32] = [
            (0, 0),
            (1, 17),
            (-1, 1),
            (2, 18),
            (-3, 3),
            (7, 23),
            (-7, 7),
            (8, 24),
            (-8, 8),
            (11, 24),
            (-12, 9),
            (15, 25),
            (-16, 10),
            (16, 26),
            (-17, 10),
            (-20, 10),
            (-23, 11),
            (31, 27),
            (-32, 12),
            (32, 28),
            (-45, 12),
            (63, 29),
            (-64, 14),
            (64, 30),
            (-90, 14),
            (100, 31),
            (127, 31),
            (-127, 15),
            (128, 31),
            (-128, 15),
            (-200, 15),
            (-500, 15),
        ];
        for (rel, bucket) in want {
            assert_eq!(relative_bucket(rel, 32), bucket, "distance {rel}");
        }
    }

    #[test]
    fn attention_matches_a_dot_product_per_pair() {
        pulp::Arch::new().dispatch(Check);
        pulp::WithSimd::with_simd(Check, pulp::Scalar::new());
    }

    #[test]
    fn exp_lanes_are_within_two_ulp_of_libm() {
        struct Exp;
        impl pulp::WithSimd for Exp {
            type Output = (f32, f32);
            #[inline(always)]
            fn with_simd<S: Simd>(self, simd: S) -> (f32, f32) {
                let xs: Vec<f32> = (0..=100_000).map(|i| -(i as f32) / 1000.0).collect();
                let mut out = xs.clone();
                let (vv, _) = S::as_mut_simd_f32s(&mut out);
                for v in vv {
                    *v = exp(simd, *v);
                }
                let n = xs.len() / S::F32_LANES * S::F32_LANES;
                let mut worst_rel = 0f32;
                let mut worst_abs = 0f32;
                for (&x, &e) in xs[..n].iter().zip(&out[..n]) {
                    let want = x.exp();
                    if want >= f32::MIN_POSITIVE * 4.0 {
                        worst_rel = worst_rel.max((e - want).abs() / want);
                    } else {
                        worst_abs = worst_abs.max((e - want).abs());
                    }
                }
                (worst_rel, worst_abs)
            }
        }
        for (rel, abs) in [
            pulp::Arch::new().dispatch(Exp),
            pulp::WithSimd::with_simd(Exp, pulp::Scalar::new()),
        ] {
            assert!(rel < 2.5e-7, "relative error {rel}");
            assert!(abs < 1e-37, "absolute error near underflow {abs}");
        }
        // The edges: 0 is exactly 1, far below the floor is exactly 0, NaN stays NaN.
        struct Edges;
        impl pulp::WithSimd for Edges {
            type Output = Vec<f32>;
            #[inline(always)]
            fn with_simd<S: Simd>(self, simd: S) -> Vec<f32> {
                [0.0, -1000.0, f32::NEG_INFINITY, f32::NAN]
                    .iter()
                    .map(|&x| {
                        let mut v = vec![x; S::F32_LANES];
                        let (vv, _) = S::as_mut_simd_f32s(&mut v);
                        vv[0] = exp(simd, vv[0]);
                        v[0]
                    })
                    .collect()
            }
        }
        let e = pulp::Arch::new().dispatch(Edges);
        assert_eq!(&e[..3], &[1.0, 0.0, 0.0]);
        assert!(e[3].is_nan());
    }
}
