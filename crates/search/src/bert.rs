//! A BERT encoder in plain Rust over a safetensors file: token, position and type embeddings, the
//! transformer layers (fused QKV projection, softmax attention, erf-GELU feed-forward, LayerNorm),
//! and sentence-transformers pooling (mean or first token) with L2 normalization. Sequences in a
//! batch are processed back to back without padding, so a text's vector does not depend on its
//! batch.
//! MPNet (all-mpnet-base-v2) runs on the same pass: it has no token types, counts positions
//! from after its padding id, and adds a learned relative-position bias to attention scores.

use safetensors::{Dtype, SafeTensors};

use crate::attention::{self, AttnScratch, RelBias};
use crate::lanes;
use crate::linear::Linear;
use crate::qlinear::{QLinear, QScratch};

/// How the encoder's big matrices (QKV, attention output, feed-forward up and down) are stored
/// and multiplied. Embeddings, attention, LayerNorm, GELU and pooling are f32 either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Precision {
    /// f32 weights and an f32 FMA kernel: the reference.
    F32,
    /// int8 weights (one scale per output channel) and int16 activations (one scale per
    /// token), multiplied exactly in int32: about twice as fast, vectors within ~1e-3 cosine.
    #[default]
    Int8,
}

impl Precision {
    /// The name used in model ids and on the command line: `f32` or `int8`.
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::Int8 => "int8",
        }
    }

    /// Parse [`Self::name`].
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "f32" => Some(Self::F32),
            "int8" => Some(Self::Int8),
            _ => None,
        }
    }
}

/// How a sequence's token vectors become one sentence vector (sentence-transformers' Pooling
/// module); L2 normalization follows either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pooling {
    /// The mean of every token's vector, special tokens included (all-MiniLM-L6-v2,
    /// all-mpnet-base-v2).
    #[default]
    Mean,
    /// The first token's vector ([CLS]; the BGE models).
    Cls,
}

impl Pooling {
    /// The name used on the command line and in JSON: `mean` or `cls`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Mean => "mean",
            Self::Cls => "cls",
        }
    }
}

/// A dense layer in either precision.
enum Proj {
    F32(Linear),
    Int8(QLinear),
}

impl Proj {
    fn new(precision: Precision, w: &[f32], b: &[f32], inp: usize, out: usize) -> Option<Self> {
        match precision {
            Precision::F32 => Linear::new(w, b, inp, out).map(Self::F32),
            Precision::Int8 => QLinear::new(w, b, inp, out).map(Self::Int8),
        }
    }

    #[inline(always)]
    fn forward(&self, x: &[f32], y: &mut Vec<f32>, q: &mut QScratch) {
        match self {
            Self::F32(l) => l.forward(x, y),
            Self::Int8(l) => l.forward_with(x, y, q),
        }
    }
}

/// The fields of a Hugging Face BERT or MPNet `config.json` the forward pass needs.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct Config {
    /// `bert` or `mpnet` (a config without one is read as BERT).
    #[serde(default = "default_model_type")]
    pub model_type: String,
    /// The padding token's id: MPNet numbers positions from the one after it.
    #[serde(default)]
    pub pad_token_id: usize,
    /// MPNet's relative-position buckets.
    #[serde(default = "default_buckets")]
    pub relative_attention_num_buckets: usize,
    /// Width of every token vector.
    pub hidden_size: usize,
    /// Transformer layers.
    pub num_hidden_layers: usize,
    /// Attention heads per layer.
    pub num_attention_heads: usize,
    /// Width of the feed-forward layer.
    pub intermediate_size: usize,
    /// Positions the model has embeddings for.
    #[serde(default = "default_positions")]
    pub max_position_embeddings: usize,
    /// LayerNorm epsilon.
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f32,
    /// The feed-forward activation; only GELU variants are supported.
    #[serde(default = "default_act")]
    pub hidden_act: String,
}

fn default_model_type() -> String {
    "bert".into()
}
fn default_buckets() -> usize {
    32
}
fn default_positions() -> usize {
    512
}
fn default_eps() -> f32 {
    1e-12
}
fn default_act() -> String {
    "gelu".into()
}

/// A sequence's pooled vector and its final-layer token vectors ([`Bert::embed_tokens`]).
pub type PooledAndTokens = (Vec<f32>, Vec<f32>);

/// A loaded BERT encoder.
pub struct Bert {
    cfg: Config,
    /// `vocab × hidden`.
    word: Vec<f32>,
    /// `max_positions × hidden`.
    position: Vec<f32>,
    /// Token type 0 (sentence embedding models use one segment); zeros for MPNet, which has
    /// no token types.
    token_type: Vec<f32>,
    /// The position-table row of a sequence's first token (MPNet: the padding id + 1).
    position_offset: usize,
    /// MPNet's relative-position attention bias.
    rel_bias: Option<RelBias>,
    embed_norm: Norm,
    layers: Vec<Layer>,
    vocab: usize,
    gelu_tanh: bool,
    precision: Precision,
    pooling: Pooling,
    /// The buffers of the last small forward pass, taken by the next one (a concurrent pass
    /// finding none allocates its own), so a query does not allocate and zero them again.
    spare: std::sync::Mutex<Option<Scratch>>,
}

impl std::fmt::Debug for Bert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bert")
            .field("hidden", &self.cfg.hidden_size)
            .field("layers", &self.layers.len())
            .field("precision", &self.precision)
            .finish()
    }
}

struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
    eps: f32,
}

struct Layer {
    qkv: Proj,
    attn_out: Proj,
    attn_norm: Norm,
    up: Proj,
    down: Proj,
    out_norm: Norm,
}

/// Reusable buffers of one forward pass.
#[derive(Default)]
struct Scratch {
    /// The token vectors, layer after layer.
    x: Vec<f32>,
    qkv: Vec<f32>,
    ctx: Vec<f32>,
    proj: Vec<f32>,
    up: Vec<f32>,
    attn: AttnScratch,
    quant: QScratch,
}

/// The most bytes of buffers [`Bert`] keeps between forward passes: a query's (up to about 60
/// tokens), not a build batch's, so an idle process does not hold megabytes.
const SPARE_BYTES: usize = 1 << 20;

impl Scratch {
    /// Bytes allocated.
    fn bytes(&self) -> usize {
        let f = [&self.x, &self.qkv, &self.ctx, &self.proj, &self.up]
            .iter()
            .map(|v| v.capacity())
            .sum::<usize>();
        f * 4 + self.attn.bytes() + self.quant.bytes()
    }
}

impl Bert {
    /// Read the weights of a BERT or MPNet model. Weight names may carry a `bert.` or `mpnet.`
    /// prefix.
    pub fn load(cfg: Config, safetensors: &[u8], precision: Precision) -> Result<Self, String> {
        let st = SafeTensors::deserialize(safetensors).map_err(|e| e.to_string())?;
        let mpnet = match cfg.model_type.as_str() {
            "bert" => false,
            "mpnet" => true,
            other => {
                return Err(format!(
                    "model_type {other:?} is not supported (bert and mpnet are)"
                ));
            }
        };
        let family = if mpnet { "mpnet." } else { "bert." };
        let prefix = if st.tensor("embeddings.word_embeddings.weight").is_ok() {
            ""
        } else {
            family
        };
        let h = cfg.hidden_size;
        if h == 0 || cfg.num_attention_heads == 0 || !h.is_multiple_of(cfg.num_attention_heads) {
            return Err(format!(
                "hidden_size {h} is not a multiple of num_attention_heads {}",
                cfg.num_attention_heads
            ));
        }
        let gelu_tanh = match cfg.hidden_act.as_str() {
            "gelu" => false,
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_approximate" => true,
            other => return Err(format!("unsupported hidden_act {other:?} (expected gelu)")),
        };
        let get = |name: &str, shape: &[usize]| -> Result<Vec<f32>, String> {
            let full = format!("{prefix}{name}");
            let t = st.tensor(&full).map_err(|e| format!("{full}: {e}"))?;
            if t.shape() != shape {
                return Err(format!("{full}: shape {:?}, expected {shape:?}", t.shape()));
            }
            to_f32(t.dtype(), t.data()).ok_or_else(|| {
                format!(
                    "{full}: dtype {:?} not supported (F32, F16, BF16)",
                    t.dtype()
                )
            })
        };
        let word_shape = st
            .tensor(&format!("{prefix}embeddings.word_embeddings.weight"))
            .map_err(|e| e.to_string())?
            .shape()
            .to_vec();
        let vocab = word_shape.first().copied().unwrap_or(0);
        let word = get("embeddings.word_embeddings.weight", &[vocab, h])?;
        let position = get(
            "embeddings.position_embeddings.weight",
            &[cfg.max_position_embeddings, h],
        )?;
        let (token_type, position_offset) = if mpnet {
            (vec![0.0; h], cfg.pad_token_id + 1)
        } else {
            let types = st
                .tensor(&format!("{prefix}embeddings.token_type_embeddings.weight"))
                .map_err(|e| e.to_string())?
                .shape()
                .to_vec();
            let token_type = get(
                "embeddings.token_type_embeddings.weight",
                &[types.first().copied().unwrap_or(0), h],
            )?
            .into_iter()
            .take(h)
            .collect::<Vec<_>>();
            if token_type.len() != h {
                return Err("token_type_embeddings is empty".into());
            }
            (token_type, 0)
        };
        if position_offset >= cfg.max_position_embeddings {
            return Err(format!(
                "pad_token_id {} leaves no positions of {}",
                cfg.pad_token_id, cfg.max_position_embeddings
            ));
        }
        let heads = cfg.num_attention_heads;
        let rel_bias = if mpnet {
            let buckets = cfg.relative_attention_num_buckets;
            let weights = get("encoder.relative_attention_bias.weight", &[buckets, heads])?;
            let span = cfg.max_position_embeddings - position_offset;
            Some(RelBias::new(
                &weights,
                buckets,
                heads,
                span.saturating_sub(1),
            ))
        } else {
            None
        };
        let norm = |name: &str| -> Result<Norm, String> {
            Ok(Norm {
                gamma: get(&format!("{name}.weight"), &[h])?,
                beta: get(&format!("{name}.bias"), &[h])?,
                eps: cfg.layer_norm_eps,
            })
        };
        let linear = |name: &str, inp: usize, out: usize| -> Result<Proj, String> {
            let w = get(&format!("{name}.weight"), &[out, inp])?;
            let b = get(&format!("{name}.bias"), &[out])?;
            Proj::new(precision, &w, &b, inp, out)
                .ok_or_else(|| format!("{name}: bad shape or non-finite weights"))
        };
        // Where each family keeps a layer's attention weights: the query, key and value
        // projections, the output projection and the LayerNorm after it.
        let (q, k, v, out, out_norm) = if mpnet {
            ("attn.q", "attn.k", "attn.v", "attn.o", "LayerNorm")
        } else {
            (
                "self.query",
                "self.key",
                "self.value",
                "output.dense",
                "output.LayerNorm",
            )
        };
        let embed_norm = norm("embeddings.LayerNorm")?;
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for i in 0..cfg.num_hidden_layers {
            let l = format!("encoder.layer.{i}");
            let part = |n: &str| -> Result<(Vec<f32>, Vec<f32>), String> {
                Ok((
                    get(&format!("{l}.attention.{n}.weight"), &[h, h])?,
                    get(&format!("{l}.attention.{n}.bias"), &[h])?,
                ))
            };
            let (q, k, v) = (part(q)?, part(k)?, part(v)?);
            let w = [q.0, k.0, v.0].concat();
            let b = [q.1, k.1, v.1].concat();
            let qkv = Proj::new(precision, &w, &b, h, 3 * h)
                .ok_or_else(|| format!("{l}: bad attention shapes or non-finite weights"))?;
            layers.push(Layer {
                qkv,
                attn_out: linear(&format!("{l}.attention.{out}"), h, h)?,
                attn_norm: norm(&format!("{l}.attention.{out_norm}"))?,
                up: linear(&format!("{l}.intermediate.dense"), h, cfg.intermediate_size)?,
                down: linear(&format!("{l}.output.dense"), cfg.intermediate_size, h)?,
                out_norm: norm(&format!("{l}.output.LayerNorm"))?,
            });
        }
        Ok(Self {
            cfg,
            word,
            position,
            token_type,
            position_offset,
            rel_bias,
            embed_norm,
            layers,
            vocab,
            gelu_tanh,
            precision,
            pooling: Pooling::Mean,
            spare: std::sync::Mutex::new(None),
        })
    }

    /// The same encoder pooling its token vectors another way.
    pub fn with_pooling(mut self, pooling: Pooling) -> Self {
        self.pooling = pooling;
        self
    }

    /// How the big matrices are multiplied.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The model family, as `config.json`'s `model_type` names it: `bert` or `mpnet`.
    pub fn architecture(&self) -> &str {
        &self.cfg.model_type
    }

    /// How token vectors become the sentence vector.
    pub fn pooling(&self) -> Pooling {
        self.pooling
    }

    /// Embedding width.
    pub fn hidden(&self) -> usize {
        self.cfg.hidden_size
    }

    /// The longest sequence the position table allows.
    pub fn max_positions(&self) -> usize {
        self.cfg.max_position_embeddings - self.position_offset
    }

    /// Mean-pooled, unit-length vectors of token id sequences (each with its special tokens).
    pub fn embed(&self, seqs: &[&[u32]]) -> Result<Vec<Vec<f32>>, String> {
        self.check(seqs)?;
        Ok(pulp::Arch::new()
            .dispatch(Encode {
                bert: self,
                seqs,
                keep_tokens: false,
            })
            .0)
    }

    /// [`Self::embed`]'s pooled vectors (the same bits) and, for each sequence, its final-layer
    /// token vectors, the rows pooling reads: `len × hidden` floats, row-major, one row
    /// per token id (special tokens included), not normalized.
    pub fn embed_tokens(&self, seqs: &[&[u32]]) -> Result<Vec<PooledAndTokens>, String> {
        self.check(seqs)?;
        let (pooled, x) = pulp::Arch::new().dispatch(Encode {
            bert: self,
            seqs,
            keep_tokens: true,
        });
        let h = self.cfg.hidden_size;
        let mut start = 0;
        Ok(pooled
            .into_iter()
            .zip(seqs)
            .map(|(p, seq)| {
                let rows = x[start * h..(start + seq.len()) * h].to_vec();
                start += seq.len();
                (p, rows)
            })
            .collect())
    }

    /// Every sequence fits the position table and every id the vocabulary.
    fn check(&self, seqs: &[&[u32]]) -> Result<(), String> {
        for seq in seqs {
            if seq.len() > self.max_positions() {
                return Err(format!(
                    "sequence of {} tokens is longer than the model's {} positions",
                    seq.len(),
                    self.max_positions()
                ));
            }
            if let Some(&id) = seq.iter().find(|&&id| id as usize >= self.vocab) {
                return Err(format!(
                    "token id {id} outside the vocabulary of {}",
                    self.vocab
                ));
            }
        }
        Ok(())
    }

    /// Token, position and type embeddings of every token of `seqs`, back to back (ids and
    /// lengths already checked).
    /// Every element of `x` is written.
    #[inline(always)]
    fn embeddings<S: pulp::Simd>(&self, simd: S, seqs: &[&[u32]], x: &mut Vec<f32>) {
        let h = self.cfg.hidden_size;
        let rows: usize = seqs.iter().map(|s| s.len()).sum();
        x.resize(rows * h, 0.0);
        let mut dst = x.chunks_exact_mut(h);
        for seq in seqs {
            for ((pos, &id), d) in seq.iter().enumerate().zip(&mut dst) {
                let id = id as usize;
                let pos = pos + self.position_offset;
                let w = &self.word[id * h..(id + 1) * h];
                let p = &self.position[pos * h..(pos + 1) * h];
                lanes::sum3(simd, d, w, p, &self.token_type);
            }
        }
    }

    /// Pooling of each sequence's rows of `x` (the mean, or the first row), then L2
    /// normalization.
    #[inline(always)]
    fn pool<S: pulp::Simd>(&self, simd: S, x: &[f32], lens: &[usize]) -> Vec<Vec<f32>> {
        let h = self.cfg.hidden_size;
        let mut out = Vec::with_capacity(lens.len());
        let mut rows = x.chunks_exact(h);
        for &len in lens {
            let mut v = vec![0f32; h];
            let mut seq = (&mut rows).take(len);
            match self.pooling {
                Pooling::Mean => {
                    seq.for_each(|r| lanes::add_assign(simd, &mut v, r));
                    lanes::div_assign(simd, &mut v, len.max(1) as f32);
                }
                Pooling::Cls => {
                    if let Some(first) = seq.next() {
                        v.copy_from_slice(first);
                    }
                    seq.for_each(drop);
                }
            }
            let norm = lanes::dot(simd, &v, &v).sqrt().max(1e-12);
            lanes::div_assign(simd, &mut v, norm);
            out.push(v);
        }
        out
    }

    #[inline(always)]
    fn layer<S: pulp::Simd>(
        &self,
        simd: S,
        layer: &Layer,
        x: &mut [f32],
        lens: &[usize],
        s: &mut Scratch,
    ) {
        let h = self.cfg.hidden_size;
        let heads = self.cfg.num_attention_heads;
        layer.qkv.forward(x, &mut s.qkv, &mut s.quant);
        // Every element of `ctx` is written by `attend`, sequence after sequence.
        s.ctx.resize(x.len(), 0.0);
        let mut start = 0;
        for &len in lens {
            let bias = self.rel_bias.as_ref();
            attention::attend(
                simd,
                &s.qkv,
                start,
                len,
                h,
                heads,
                bias,
                &mut s.ctx,
                &mut s.attn,
            );
            start += len;
        }
        layer.attn_out.forward(&s.ctx, &mut s.proj, &mut s.quant);
        lanes::add_assign(simd, x, &s.proj);
        layer.attn_norm.apply(simd, x, h);
        layer.up.forward(x, &mut s.up, &mut s.quant);
        if self.gelu_tanh {
            // Not MiniLM's activation: tanh stays a scalar call.
            s.up.iter_mut().for_each(|v| *v = gelu_tanh(*v));
        } else {
            lanes::gelu(simd, &mut s.up);
        }
        layer.down.forward(&s.up, &mut s.proj, &mut s.quant);
        lanes::add_assign(simd, x, &s.proj);
        layer.out_norm.apply(simd, x, h);
    }
}

/// The whole forward pass (embeddings, every layer, pooling) as one SIMD operation: `pulp`
/// compiles `with_simd` once per instruction set and runs the best one the CPU has, and the
/// element-wise loops in [`crate::lanes`] take its `simd` token.
struct Encode<'a> {
    bert: &'a Bert,
    seqs: &'a [&'a [u32]],
    /// Also return the final-layer token vectors (all sequences back to back); else the
    /// second output is empty.
    keep_tokens: bool,
}

impl pulp::WithSimd for Encode<'_> {
    type Output = (Vec<Vec<f32>>, Vec<f32>);
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) -> Self::Output {
        let bert = self.bert;
        let h = bert.cfg.hidden_size;
        let spare = bert.spare.lock().ok().and_then(|mut s| s.take());
        let mut scratch = spare.unwrap_or_default();
        let mut x = std::mem::take(&mut scratch.x);
        bert.embeddings(simd, self.seqs, &mut x);
        let lens: Vec<usize> = self.seqs.iter().map(|s| s.len()).collect();
        bert.embed_norm.apply(simd, &mut x, h);
        for layer in &bert.layers {
            bert.layer(simd, layer, &mut x, &lens, &mut scratch);
        }
        let out = bert.pool(simd, &x, &lens);
        let tokens = if self.keep_tokens {
            x.clone()
        } else {
            Vec::new()
        };
        scratch.x = x;
        if scratch.bytes() <= SPARE_BYTES
            && let Ok(mut s) = bert.spare.lock()
        {
            *s = Some(scratch);
        }
        (out, tokens)
    }
}

impl Norm {
    #[inline(always)]
    fn apply<S: pulp::Simd>(&self, simd: S, x: &mut [f32], h: usize) {
        for row in x.chunks_exact_mut(h) {
            lanes::layer_norm(simd, row, &self.gamma, &self.beta, self.eps);
        }
    }
}

/// GELU with the error function, `x/2 · (1 + erf(x/√2))`, as BERT's "gelu".
#[inline(always)]
pub(crate) fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// The tanh approximation of GELU ("gelu_new").
#[inline(always)]
fn gelu_tanh(x: f32) -> f32 {
    let c = (2.0 / std::f32::consts::PI).sqrt();
    0.5 * x * (1.0 + (c * (x + 0.044715 * x * x * x)).tanh())
}

/// The odd numerator of [`erf`], highest power of `x²` first.
pub(crate) const ERF_P: [f32; 7] = [
    -2.726_142_3e-10,
    2.770_681_4e-8,
    -2.101_024e-6,
    -5.692_506_4e-5,
    -7.349_906_3e-4,
    -2.9546e-3,
    -1.609_603_3e-2,
];

/// The even denominator of [`erf`], highest power of `x²` first.
pub(crate) const ERF_Q: [f32; 5] = [
    -1.456_607_2e-5,
    -2.133_740_6e-4,
    -1.682_827e-3,
    -7.373_329e-3,
    -1.426_474e-2,
];

/// The error function as a rational function of odd and even polynomials on [-4, 4] (outside,
/// erf is ±1 in single precision): branch-free, so it vectorizes ([`crate::lanes::erf`] is the
/// same on SIMD lanes). Absolute error about 1e-7.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = ERF_P[0];
    for &c in &ERF_P[1..] {
        p = p * x2 + c;
    }
    let mut q = ERF_Q[0];
    for &c in &ERF_Q[1..] {
        q = q * x2 + c;
    }
    x * p / q
}

/// Little-endian tensor bytes as f32.
fn to_f32(dtype: Dtype, data: &[u8]) -> Option<Vec<f32>> {
    match dtype {
        Dtype::F32 => Some(
            data.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ),
        Dtype::BF16 => Some(
            data.chunks_exact(2)
                .map(|c| f32::from_bits((u16::from_le_bytes([c[0], c[1]]) as u32) << 16))
                .collect(),
        ),
        Dtype::F16 => Some(
            data.chunks_exact(2)
                .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
        ),
        _ => None,
    }
}

fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let frac = (h & 0x3ff) as u32;
    let bits = match (exp, frac) {
        (0, 0) => sign,
        // Subnormal: value = frac · 2^-24.
        (0, f) => {
            let v = f as f32 * 2f32.powi(-24);
            return if sign == 0 { v } else { -v };
        }
        (0x1f, f) => sign | 0x7f80_0000 | (f << 13),
        (e, f) => sign | ((e + 112) << 23) | (f << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// erf by its Taylor series in f64 (accurate to ~1e-10 on [-4, 4]).
    fn erf_series(x: f64) -> f64 {
        let mut sum = 0.0;
        let mut term = x; // x^(2n+1) (-1)^n / n!
        for n in 0..200 {
            sum += term / (2 * n + 1) as f64;
            term *= -x * x / (n + 1) as f64;
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    }

    #[test]
    fn erf_is_accurate() {
        let mut worst = 0f64;
        for i in -400..=400 {
            let x = i as f64 / 100.0;
            worst = worst.max((erf(x as f32) as f64 - erf_series(x)).abs());
        }
        assert!(worst < 1e-6, "worst error {worst}");
        assert_eq!(erf(10.0), erf(4.0));
    }

    #[test]
    fn half_floats_convert() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0000), 0.0);
        assert!((f16_to_f32(0x0001) - 5.960_464_5e-8).abs() < 1e-12);
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
    }
}
