//! The encoder's element-wise loops (dot products, residual adds, LayerNorm, GELU, pooling)
//! written with explicit SIMD through `pulp`, so that their speed does not depend on LLVM's
//! auto-vectorizer. It matters in the shipped binary: the release profile is `opt-level = "s"`
//! with fat LTO, vectorization runs after the link at the final crate's level, and rustc turns
//! the loop and SLP vectorizers off at "s", so a plain loop here would run one float at a time.
//!
//! Every function takes the `pulp::Simd` token of the caller's `with_simd` and is
//! `#[inline(always)]`: it must be inlined into a function compiled with the token's target
//! features (a call to a function of its own would lose them). Slices of any length work; the
//! elements past the last full vector are handled one at a time.

use pulp::Simd;

/// `Σ a·b` over the shorter of the two slices, in four independent vector sums.
#[inline(always)]
pub fn dot<S: Simd>(simd: S, a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (av, at) = S::as_simd_f32s(&a[..n]);
    let (bv, bt) = S::as_simd_f32s(&b[..n]);
    let mut acc = [simd.splat_f32s(0.0); 4];
    let (a4, b4) = (av.chunks_exact(4), bv.chunks_exact(4));
    let (ar, br) = (a4.remainder(), b4.remainder());
    for (x, y) in a4.zip(b4) {
        for i in 0..4 {
            acc[i] = simd.mul_add_e_f32s(x[i], y[i], acc[i]);
        }
    }
    for (i, (&x, &y)) in ar.iter().zip(br).enumerate() {
        acc[i] = simd.mul_add_e_f32s(x, y, acc[i]);
    }
    let sum = simd.add_f32s(simd.add_f32s(acc[0], acc[1]), simd.add_f32s(acc[2], acc[3]));
    let tail: f32 = at.iter().zip(bt).map(|(x, y)| x * y).sum();
    simd.reduce_sum_f32s(sum) + tail
}

/// `Σ a`, in two independent vector sums.
#[inline(always)]
pub fn sum<S: Simd>(simd: S, a: &[f32]) -> f32 {
    let (av, at) = S::as_simd_f32s(a);
    let mut acc = [simd.splat_f32s(0.0); 2];
    let a2 = av.chunks_exact(2);
    if let [x] = a2.remainder() {
        acc[1] = *x;
    }
    for x in a2 {
        acc[0] = simd.add_f32s(acc[0], x[0]);
        acc[1] = simd.add_f32s(acc[1], x[1]);
    }
    simd.reduce_sum_f32s(simd.add_f32s(acc[0], acc[1])) + at.iter().sum::<f32>()
}

/// `acc += x`, element by element (over the shorter of the two).
#[inline(always)]
pub fn add_assign<S: Simd>(simd: S, acc: &mut [f32], x: &[f32]) {
    let n = acc.len().min(x.len());
    let (yv, yt) = S::as_mut_simd_f32s(&mut acc[..n]);
    let (xv, xt) = S::as_simd_f32s(&x[..n]);
    for (y, &x) in yv.iter_mut().zip(xv) {
        *y = simd.add_f32s(*y, x);
    }
    for (y, &x) in yt.iter_mut().zip(xt) {
        *y += x;
    }
}

/// `v /= d`, element by element.
#[inline(always)]
pub fn div_assign<S: Simd>(simd: S, v: &mut [f32], d: f32) {
    let (vv, vt) = S::as_mut_simd_f32s(v);
    let dv = simd.splat_f32s(d);
    for x in vv {
        *x = simd.div_f32s(*x, dv);
    }
    for x in vt {
        *x /= d;
    }
}

/// `dst = a + b`, element by element (over the shortest of the three).
#[inline(always)]
pub fn sum2<S: Simd>(simd: S, dst: &mut [f32], a: &[f32], b: &[f32]) {
    let n = dst.len().min(a.len()).min(b.len());
    let (dv, dt) = S::as_mut_simd_f32s(&mut dst[..n]);
    let (av, at) = S::as_simd_f32s(&a[..n]);
    let (bv, bt) = S::as_simd_f32s(&b[..n]);
    for ((d, &a), &b) in dv.iter_mut().zip(av).zip(bv) {
        *d = simd.add_f32s(a, b);
    }
    for ((d, &a), &b) in dt.iter_mut().zip(at).zip(bt) {
        *d = a + b;
    }
}

/// `dst = (a + b) + c`, element by element (over the shortest of the four).
#[inline(always)]
pub fn sum3<S: Simd>(simd: S, dst: &mut [f32], a: &[f32], b: &[f32], c: &[f32]) {
    let n = dst.len().min(a.len()).min(b.len()).min(c.len());
    let (dv, dt) = S::as_mut_simd_f32s(&mut dst[..n]);
    let (av, at) = S::as_simd_f32s(&a[..n]);
    let (bv, bt) = S::as_simd_f32s(&b[..n]);
    let (cv, ct) = S::as_simd_f32s(&c[..n]);
    for (((d, &a), &b), &c) in dv.iter_mut().zip(av).zip(bv).zip(cv) {
        *d = simd.add_f32s(simd.add_f32s(a, b), c);
    }
    for (((d, &a), &b), &c) in dt.iter_mut().zip(at).zip(bt).zip(ct) {
        *d = a + b + c;
    }
}

/// LayerNorm of one row in place: `(v - mean) / √(var + eps) · gamma + beta`.
#[inline(always)]
pub fn layer_norm<S: Simd>(simd: S, row: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let n = row.len().min(gamma.len()).min(beta.len());
    let row = &mut row[..n];
    let h = n as f32;
    let mean = sum(simd, row) / h;
    let var = {
        let (rv, rt) = S::as_simd_f32s(row);
        let m = simd.splat_f32s(mean);
        let mut acc = [simd.splat_f32s(0.0); 2];
        let r2 = rv.chunks_exact(2);
        if let [x] = r2.remainder() {
            let d = simd.sub_f32s(*x, m);
            acc[1] = simd.mul_f32s(d, d);
        }
        for x in r2 {
            let (d0, d1) = (simd.sub_f32s(x[0], m), simd.sub_f32s(x[1], m));
            acc[0] = simd.mul_add_e_f32s(d0, d0, acc[0]);
            acc[1] = simd.mul_add_e_f32s(d1, d1, acc[1]);
        }
        let tail: f32 = rt.iter().map(|v| (v - mean) * (v - mean)).sum();
        (simd.reduce_sum_f32s(simd.add_f32s(acc[0], acc[1])) + tail) / h
    };
    let inv = 1.0 / (var + eps).sqrt();
    let (rv, rt) = S::as_mut_simd_f32s(row);
    let (gv, gt) = S::as_simd_f32s(&gamma[..n]);
    let (bv, bt) = S::as_simd_f32s(&beta[..n]);
    let (m, iv) = (simd.splat_f32s(mean), simd.splat_f32s(inv));
    for ((v, &g), &b) in rv.iter_mut().zip(gv).zip(bv) {
        let z = simd.mul_f32s(simd.sub_f32s(*v, m), iv);
        *v = simd.mul_add_e_f32s(z, g, b);
    }
    for ((v, &g), &b) in rt.iter_mut().zip(gt).zip(bt) {
        *v = (*v - mean) * inv * g + b;
    }
}

/// BERT's erf-GELU in place (see [`crate::bert::erf`]), a vector at a time.
#[inline(always)]
pub fn gelu<S: Simd>(simd: S, v: &mut [f32]) {
    let (vv, vt) = S::as_mut_simd_f32s(v);
    let half = simd.splat_f32s(0.5);
    let c = simd.splat_f32s(std::f32::consts::FRAC_1_SQRT_2);
    for x in vv {
        let e = erf(simd, simd.mul_f32s(*x, c));
        let hx = simd.mul_f32s(*x, half);
        *x = simd.mul_add_e_f32s(hx, e, hx);
    }
    for x in vt {
        *x = crate::bert::gelu(*x);
    }
}

/// [`crate::bert::erf`] on every lane: the same rational function, its polynomials evaluated
/// with multiply-adds.
#[inline(always)]
pub fn erf<S: Simd>(simd: S, x: S::f32s) -> S::f32s {
    use crate::bert::{ERF_P, ERF_Q};
    let x = simd.min_f32s(
        simd.max_f32s(x, simd.splat_f32s(-4.0)),
        simd.splat_f32s(4.0),
    );
    let x2 = simd.mul_f32s(x, x);
    let mut p = simd.splat_f32s(ERF_P[0]);
    for &c in &ERF_P[1..] {
        p = simd.mul_add_e_f32s(p, x2, simd.splat_f32s(c));
    }
    let mut q = simd.splat_f32s(ERF_Q[0]);
    for &c in &ERF_Q[1..] {
        q = simd.mul_add_e_f32s(q, x2, simd.splat_f32s(c));
    }
    simd.div_f32s(simd.mul_f32s(x, p), q)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A deterministic pseudo-random sequence in [-1, 1) (scan.rs's tests use it too).
    pub(crate) fn noise(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    struct Check;
    impl pulp::WithSimd for Check {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: Simd>(self, simd: S) {
            // Lengths around the vector widths, so that every tail is exercised.
            for n in [0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 383, 384] {
                let a = noise(n, 1);
                let b = noise(n, 2);
                let c = noise(n, 3);
                let close = |x: f32, y: f32| (x - y).abs() <= 1e-5 * (1.0 + y.abs());

                let want: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
                assert!(close(dot(simd, &a, &b), want), "dot {n}");
                assert!(close(sum(simd, &a), a.iter().sum()), "sum {n}");

                let mut acc = b.clone();
                add_assign(simd, &mut acc, &a);
                assert!(
                    acc.iter()
                        .zip(a.iter().zip(&b))
                        .all(|(&r, (x, y))| r == x + y)
                );

                let mut v = a.clone();
                div_assign(simd, &mut v, 3.0);
                assert!(v.iter().zip(&a).all(|(&r, x)| r == x / 3.0));

                let mut d = vec![0.0; n];
                sum2(simd, &mut d, &a, &b);
                assert!(d.iter().enumerate().all(|(i, &r)| r == a[i] + b[i]));
                sum3(simd, &mut d, &a, &b, &c);
                assert!(d.iter().enumerate().all(|(i, &r)| r == a[i] + b[i] + c[i]));

                let (gamma, beta) = (noise(n, 4), noise(n, 5));
                let mut row: Vec<f32> = a.iter().map(|v| v * 3.0 + 1.0).collect();
                let mut want = row.clone();
                layer_norm(simd, &mut row, &gamma, &beta, 1e-12);
                if n > 0 {
                    let h = n as f32;
                    let mean = want.iter().sum::<f32>() / h;
                    let var = want.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h;
                    let inv = 1.0 / (var + 1e-12).sqrt();
                    for ((v, g), b) in want.iter_mut().zip(&gamma).zip(&beta) {
                        *v = (*v - mean) * inv * g + b;
                    }
                }
                assert!(
                    row.iter().zip(&want).all(|(&r, &w)| (r - w).abs() < 1e-4),
                    "norm {n}"
                );

                let mut g: Vec<f32> = a.iter().map(|v| v * 6.0).collect();
                let want: Vec<f32> = g.iter().map(|&v| crate::bert::gelu(v)).collect();
                gelu(simd, &mut g);
                assert!(
                    g.iter().zip(&want).all(|(&r, &w)| (r - w).abs() < 1e-6),
                    "gelu {n}"
                );
            }
        }
    }

    #[test]
    fn lanes_match_the_scalar_loops() {
        // The best instruction set the CPU has (as the encoder runs), then plain scalar code.
        pulp::Arch::new().dispatch(Check);
        pulp::WithSimd::with_simd(Check, pulp::Scalar::new());
    }

    #[test]
    fn erf_lanes_match_scalar_erf() {
        struct Erf;
        impl pulp::WithSimd for Erf {
            type Output = f32;
            #[inline(always)]
            fn with_simd<S: Simd>(self, simd: S) -> f32 {
                let xs: Vec<f32> = (-600..=600).map(|i| i as f32 / 100.0).collect();
                let mut out = xs.clone();
                let (vv, _) = S::as_mut_simd_f32s(&mut out);
                for v in vv {
                    *v = erf(simd, *v);
                }
                let n = xs.len() / S::F32_LANES * S::F32_LANES;
                xs[..n]
                    .iter()
                    .zip(&out[..n])
                    .map(|(&x, &e)| (crate::bert::erf(x) - e).abs())
                    .fold(0.0, f32::max)
            }
        }
        let worst = pulp::Arch::new().dispatch(Erf);
        assert!(worst < 1e-6, "worst difference {worst}");
    }
}
