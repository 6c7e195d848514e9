//! The tool vectors as a search scans them: int8 with one scale per vector, a quarter of the
//! f32 bytes (1,399 MiniLM vectors: 537 KB instead of 2.1 MB per set), so the scan of every
//! tool for every query stays in the L2/L3 caches instead of streaming from memory. The query
//! is quantized to int16 with its own scale and the dot products are summed exactly in int32
//! (`vpmaddwd` on x86-64 with AVX2, a scalar loop elsewhere: the same integers either way), so
//! the scores are deterministic and identical on every CPU. The f32 vectors stay the cache
//! file's format; they are quantized when an index is built.
//!
//! The error of a score is the int8 rounding of the tool vector: a step of `max |v| / 127`,
//! about 0.0016 for a unit vector of 384 floats, which moves a cosine by about 5e-4 (a few
//! thousandths of the spread of a query's cosines over a catalog).

/// Inputs per SIMD step: 16 int16 in one AVX2 register.
const STEP: usize = 16;
/// Largest weight magnitude after quantization.
const VMAX: f32 = 127.0;

/// Unit vectors of one width, int8 with a scale each, zero-padded to a multiple of [`STEP`].
#[derive(Clone, Debug, Default)]
pub(crate) struct QVectors {
    dim: usize,
    /// `dim` rounded up to a multiple of [`STEP`].
    stride: usize,
    data: Vec<i8>,
    /// Per vector: the float an int8 step is worth.
    scale: Vec<f32>,
    /// Largest query magnitude after quantization, so that a dot product cannot overflow int32:
    /// `stride · 127 · qmax < 2³¹`.
    qmax: f32,
}

impl QVectors {
    /// Quantize row-major `vectors` of `dim` floats each (a partial last row is ignored; a
    /// non-finite vector scores NaN).
    pub(crate) fn new(vectors: &[f32], dim: usize) -> Self {
        let dim = dim.max(1);
        let stride = dim.div_ceil(STEP) * STEP;
        let rows = vectors.len() / dim;
        let mut data = vec![0i8; rows * stride];
        let mut scale = Vec::with_capacity(rows);
        for (v, dst) in vectors.chunks_exact(dim).zip(data.chunks_exact_mut(stride)) {
            if v.iter().any(|x| !x.is_finite()) {
                scale.push(f32::NAN);
                continue;
            }
            let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
            let s = if max > 0.0 {
                (max / VMAX).max(f32::MIN_POSITIVE)
            } else {
                1.0
            };
            scale.push(s);
            let inv = 1.0 / s;
            for (d, &x) in dst.iter_mut().zip(v) {
                *d = (x * inv).round_ties_even().clamp(-VMAX, VMAX) as i8;
            }
        }
        let qmax = ((i32::MAX as f64) / (stride as f64 * VMAX as f64))
            .floor()
            .min(i16::MAX as f64) as f32;
        Self {
            dim,
            stride,
            data,
            scale,
            qmax,
        }
    }

    /// How many vectors.
    pub(crate) fn len(&self) -> usize {
        self.scale.len()
    }

    /// Bytes held (codes and scales).
    pub(crate) fn bytes(&self) -> usize {
        self.data.len() + self.scale.len() * 4
    }

    /// For each vector, its largest dot product with any of `queries` (each of `dim` floats;
    /// extra floats are ignored, missing ones count as 0). With no query, every score is -inf.
    /// A non-finite vector or query scores NaN (with several queries, `f32::max` then prefers
    /// another query's number).
    pub(crate) fn scan(&self, queries: &[Vec<f32>]) -> Vec<f32> {
        self.scan_rows(0..self.len(), queries)
    }

    /// [`Self::scan`] over the vectors `rows` only (clamped to the vectors there are).
    pub(crate) fn scan_rows(&self, rows: std::ops::Range<usize>, queries: &[Vec<f32>]) -> Vec<f32> {
        self.scan_rows_quantized(rows, &self.quantize_queries(queries))
    }

    /// Queries quantized once for several [`Self::scan_rows_quantized`] calls.
    pub(crate) fn quantize_queries(&self, queries: &[Vec<f32>]) -> Vec<(Vec<i16>, f32)> {
        queries
            .iter()
            .map(|query| {
                let mut q = vec![0i16; self.stride];
                let s = self.quantize_query(query, &mut q);
                (q, s)
            })
            .collect()
    }

    /// [`Self::scan_rows`] with queries from [`Self::quantize_queries`].
    pub(crate) fn scan_rows_quantized(
        &self,
        rows: std::ops::Range<usize>,
        queries: &[(Vec<i16>, f32)],
    ) -> Vec<f32> {
        let rows = rows.start.min(self.len())..rows.end.min(self.len());
        let rows = rows.start..rows.end.max(rows.start);
        let data = &self.data[rows.start * self.stride..rows.end * self.stride];
        let scale = &self.scale[rows.clone()];
        let mut out = vec![f32::NEG_INFINITY; rows.len()];
        for (n, (q, qs)) in queries.iter().enumerate() {
            let qs = *qs;
            let dots = self.dots(data, q, Kernel::Best);
            for ((best, d), &vs) in out.iter_mut().zip(dots).zip(scale) {
                let score = d as f32 * (qs * vs);
                // The first query's score as is (a NaN stays NaN), then the best.
                *best = if n == 0 { score } else { best.max(score) };
            }
        }
        out
    }

    /// Quantize a query into `q` (`stride` int16, zero past `dim`); its scale, NaN when the
    /// query has an infinity or a NaN.
    fn quantize_query(&self, query: &[f32], q: &mut [i16]) -> f32 {
        q.fill(0);
        let query = &query[..query.len().min(self.dim)];
        if query.iter().any(|x| !x.is_finite()) {
            return f32::NAN;
        }
        let max = query.iter().fold(0f32, |m, x| m.max(x.abs()));
        let s = if max > 0.0 {
            (max / self.qmax).max(f32::MIN_POSITIVE)
        } else {
            1.0
        };
        let inv = 1.0 / s;
        for (d, &x) in q.iter_mut().zip(query) {
            *d = (x * inv).round_ties_even().clamp(-self.qmax, self.qmax) as i16;
        }
        s
    }

    /// The int32 dot product of the quantized query with every vector.
    fn dots(&self, data: &[i8], q: &[i16], kernel: Kernel) -> Vec<i32> {
        #[cfg(target_arch = "x86_64")]
        if matches!(kernel, Kernel::Best)
            && let Some(simd) = pulp::x86::V3::try_new()
        {
            return simd.vectorize(Avx2Dots {
                simd,
                data,
                stride: self.stride,
                q,
            });
        }
        let _ = kernel;
        data.chunks_exact(self.stride)
            .map(|v| v.iter().zip(q).map(|(&a, &b)| a as i32 * b as i32).sum())
            .collect()
    }
}

#[derive(Clone, Copy)]
enum Kernel {
    Best,
    #[cfg(test)]
    Scalar,
}

/// [`QVectors::dots`] under AVX2's target features.
#[cfg(target_arch = "x86_64")]
struct Avx2Dots<'a> {
    simd: pulp::x86::V3,
    data: &'a [i8],
    stride: usize,
    q: &'a [i16],
}

#[cfg(target_arch = "x86_64")]
impl pulp::NullaryFnOnce for Avx2Dots<'_> {
    type Output = Vec<i32>;
    /// Per 16 inputs: the vector's int8 widened to int16 (`vpmovsxbw`), `vpmaddwd` with the
    /// query's int16 (8 sums of two products) and `vpaddd` into one of two accumulators; exact,
    /// so the same as the scalar loop.
    #[inline(always)]
    fn call(self) -> Vec<i32> {
        use core::arch::x86_64::{__m128i, __m256i};
        let simd = self.simd;
        let avx2 = simd.avx2;
        let q: Vec<__m256i> = self
            .q
            .chunks_exact(STEP)
            .map(|c| pulp::cast(<[i16; STEP]>::try_from(c).unwrap_or([0; STEP])))
            .collect();
        let zero: __m256i = pulp::cast([0i32; 8]);
        self.data
            .chunks_exact(self.stride)
            .map(|v| {
                let mut acc = [zero; 2];
                for (i, (c, &qv)) in v.chunks_exact(STEP).zip(&q).enumerate() {
                    let w: __m128i = pulp::cast(<[i8; STEP]>::try_from(c).unwrap_or([0; STEP]));
                    let w = avx2._mm256_cvtepi8_epi16(w);
                    let a = &mut acc[i % 2];
                    *a = avx2._mm256_add_epi32(*a, avx2._mm256_madd_epi16(w, qv));
                }
                let s = avx2._mm256_add_epi32(acc[0], acc[1]);
                let lanes: [i32; 8] = pulp::cast(s);
                lanes.iter().fold(0i32, |t, &x| t.wrapping_add(x))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::tests::noise;

    fn unit(mut v: Vec<f32>, dim: usize) -> Vec<f32> {
        for r in v.chunks_exact_mut(dim) {
            let n = r.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            r.iter_mut().for_each(|x| *x /= n);
        }
        v
    }

    #[test]
    fn scan_takes_each_vectors_best_dot_product_within_int8_error() {
        // Widths below one SIMD step, with a tail, past several steps, and MiniLM's.
        for dim in [3, 19, 45, 384] {
            let vectors = unit(noise(7 * dim, 1), dim);
            let queries: Vec<Vec<f32>> = (0..2).map(|q| unit(noise(dim, 10 + q), dim)).collect();
            let qv = QVectors::new(&vectors, dim);
            assert_eq!(qv.len(), 7);
            let got = qv.scan(&queries);
            for (v, g) in vectors.chunks_exact(dim).zip(&got) {
                let want = queries
                    .iter()
                    .map(|q| v.iter().zip(q).map(|(a, b)| a * b).sum::<f32>())
                    .fold(f32::NEG_INFINITY, f32::max);
                // Unit vectors: each int8 step is at most 1/127 of the largest element.
                assert!((g - want).abs() < 0.01, "dim {dim}: {g} vs {want}");
            }
            assert!(qv.scan(&[]).iter().all(|&s| s == f32::NEG_INFINITY));
        }
    }

    #[test]
    fn simd_and_scalar_dot_products_agree_exactly() {
        for dim in [1, 16, 17, 384] {
            let vectors: Vec<f32> = noise(9 * dim, 2);
            let qv = QVectors::new(&vectors, dim);
            let mut q = vec![0i16; qv.stride];
            qv.quantize_query(&noise(dim, 3), &mut q);
            assert_eq!(
                qv.dots(&qv.data, &q, Kernel::Best),
                qv.dots(&qv.data, &q, Kernel::Scalar)
            );
            // The largest magnitudes everywhere cannot overflow.
            let big = QVectors::new(&vec![1.0; 2 * dim], dim);
            let mut q = vec![0i16; big.stride];
            big.quantize_query(&vec![-1.0; dim], &mut q);
            let want = -(127 * big.qmax as i32) * dim as i32;
            assert_eq!(big.dots(&big.data, &q, Kernel::Best), [want, want]);
            assert_eq!(big.dots(&big.data, &q, Kernel::Scalar), [want, want]);
        }
    }

    #[test]
    fn non_finite_vectors_and_queries_score_nan() {
        let dim = 20;
        let mut vectors = unit(noise(3 * dim, 4), dim);
        vectors[dim + 5] = f32::NAN;
        let qv = QVectors::new(&vectors, dim);
        let s = qv.scan(&[unit(noise(dim, 5), dim)]);
        assert!(
            s[0].is_finite() && s[1].is_nan() && s[2].is_finite(),
            "{s:?}"
        );
        let mut bad = unit(noise(dim, 5), dim);
        bad[3] = f32::INFINITY;
        assert!(qv.scan(&[bad]).iter().all(|s| s.is_nan()));
    }
}
