//! Hybrid fusion: put lexical and dense scores on one scale and blend them, then let a tool's
//! server lend it part of its best tools' score (tasks tend to need several tools of one server).

/// Scale scores into [0, 1] by their maximum (BM25 scores have no fixed range; 0 stays 0).
pub fn by_max(scores: &[f32]) -> Vec<f32> {
    let max = scores.iter().copied().fold(0f32, f32::max);
    if max <= 0.0 {
        return vec![0.0; scores.len()];
    }
    scores.iter().map(|s| s / max).collect()
}

/// Scale scores into [0, 1] between their minimum and maximum.
pub fn min_max(scores: &[f32]) -> Vec<f32> {
    let (min, max) = scores
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &s| {
            (lo.min(s), hi.max(s))
        });
    // Also true when every score is NaN or there are none.
    if max.partial_cmp(&min) != Some(std::cmp::Ordering::Greater) {
        return vec![0.0; scores.len()];
    }
    scores.iter().map(|s| (s - min) / (max - min)).collect()
}

/// Standard scores: each score's distance from the mean in standard deviations. Unlike a
/// min-max or max scaling, one outlier (a single exact name match, or one far-off document)
/// does not squash everyone else, and a ranker whose scores barely differ for this query says
/// little after the blend. All zeros when the scores do not vary (or there are none).
pub fn z_score(scores: &[f32]) -> Vec<f32> {
    let n = scores.len() as f32;
    if scores.is_empty() {
        return Vec::new();
    }
    let mean = scores.iter().sum::<f32>() / n;
    let var = scores.iter().map(|s| (s - mean) * (s - mean)).sum::<f32>() / n;
    let sd = var.sqrt();
    if sd.is_nan() || sd <= 1e-9 {
        return vec![0.0; scores.len()];
    }
    scores.iter().map(|s| (s - mean) / sd).collect()
}

/// A convex blend: `dense_weight * dense + (1 - dense_weight) * lexical`, both already in [0, 1].
pub fn blend(lexical: &[f32], dense: &[f32], dense_weight: f32) -> Vec<f32> {
    lexical
        .iter()
        .zip(dense)
        .map(|(l, d)| dense_weight * d + (1.0 - dense_weight) * l)
        .collect()
}

/// Add `weight` times the best score among each tool's server's tools to the tool's score.
/// With one server this adds a constant and changes no order.
pub fn server_boost(scores: &[f32], server_of: &[u32], servers: usize, weight: f32) -> Vec<f32> {
    if weight == 0.0 {
        return scores.to_vec();
    }
    let mut best = vec![f32::NEG_INFINITY; servers];
    for (s, &srv) in scores.iter().zip(server_of) {
        let b = &mut best[srv as usize];
        *b = b.max(*s);
    }
    scores
        .iter()
        .zip(server_of)
        .map(|(s, &srv)| s + weight * best[srv as usize])
        .collect()
}

/// Add `weight` times the mean of the best `top` scores among each tool's server's tools (all
/// of them when the server has fewer) to the tool's score. `top` 1 is [`server_boost`]; 2 or
/// more favours a server with several good tools over one with a single lucky match. With one
/// server this adds a constant and changes no order.
pub fn server_boost_top(
    scores: &[f32],
    server_of: &[u32],
    servers: usize,
    weight: f32,
    top: usize,
) -> Vec<f32> {
    if weight == 0.0 {
        return scores.to_vec();
    }
    let top = top.max(1);
    // The best `top` scores of each server, best first.
    let mut best: Vec<Vec<f32>> = vec![Vec::with_capacity(top + 1); servers];
    for (&s, &srv) in scores.iter().zip(server_of) {
        let b = &mut best[srv as usize];
        let at = b.iter().position(|&x| s > x).unwrap_or(b.len());
        if at < top {
            b.insert(at, s);
            b.truncate(top);
        }
    }
    let lent: Vec<f32> = best
        .iter()
        .map(|b| b.iter().sum::<f32>() / b.len().max(1) as f32)
        .collect();
    scores
        .iter()
        .zip(server_of)
        .map(|(s, &srv)| s + weight * lent[srv as usize])
        .collect()
}

/// Indices of the `k` highest scores, best first; ties go to the lower index, so the order is
/// deterministic. NaN scores rank last.
pub fn top_k(scores: &[f32], k: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    let cmp = |a: &usize, b: &usize| {
        let (x, y) = (scores[*a], scores[*b]);
        y.partial_cmp(&x)
            .unwrap_or_else(|| x.is_nan().cmp(&y.is_nan()))
            .then(a.cmp(b))
    };
    if k < idx.len() {
        idx.select_nth_unstable_by(k, cmp);
        idx.truncate(k);
    }
    idx.sort_unstable_by(cmp);
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_is_ordered_and_breaks_ties_by_index() {
        assert_eq!(top_k(&[0.1, 0.5, 0.5, 0.9, f32::NAN], 3), [3, 1, 2]);
        assert_eq!(top_k(&[0.1, 0.2], 5), [1, 0]);
    }

    #[test]
    fn server_boost_lifts_siblings_of_a_strong_tool() {
        // Tools 0 and 1 on server 0, tool 2 on server 1.
        let s = server_boost(&[0.9, 0.3, 0.4], &[0, 0, 1], 2, 0.5);
        assert_eq!(top_k(&s, 3), [0, 1, 2]);
    }

    #[test]
    fn server_boost_top_prefers_a_server_with_several_good_tools() {
        // Server 0: one strong tool and a weak one; server 1: two good tools.
        let scores = [1.0, 0.0, 0.8, 0.8, 0.5, 0.7];
        let server_of = [0, 0, 1, 1, 1, 0];
        // Mean of the best two: server 0 (1.0 + 0.7) / 2 = 0.85, server 1 0.8.
        let s = server_boost_top(&scores, &server_of, 2, 1.0, 2);
        assert_eq!(s, [1.85, 0.85, 1.6, 1.6, 1.3, 1.55]);
        // Top 1 is the plain best-tool boost.
        assert_eq!(
            server_boost_top(&scores, &server_of, 2, 0.5, 1),
            server_boost(&scores, &server_of, 2, 0.5)
        );
        // A server with one tool lends that tool's own score.
        assert_eq!(server_boost_top(&[0.4], &[0], 1, 1.0, 3), [0.8]);
    }

    #[test]
    fn z_scores_center_and_scale() {
        let z = z_score(&[1.0, 2.0, 3.0]);
        let sd = (2.0f32 / 3.0).sqrt();
        assert!((z[0] + 1.0 / sd).abs() < 1e-6 && z[1].abs() < 1e-6, "{z:?}");
        assert!((z[2] - 1.0 / sd).abs() < 1e-6, "{z:?}");
        assert_eq!(z_score(&[0.0, 0.0]), [0.0, 0.0]);
        assert!(z_score(&[]).is_empty());
    }

    #[test]
    fn normalizations() {
        assert_eq!(by_max(&[0.0, 2.0, 1.0]), [0.0, 1.0, 0.5]);
        assert_eq!(min_max(&[1.0, 3.0, 2.0]), [0.0, 1.0, 0.5]);
        assert_eq!(min_max(&[1.0, 1.0]), [0.0, 0.0]);
        assert_eq!(blend(&[1.0, 0.0], &[0.0, 1.0], 0.75), [0.25, 0.75]);
    }
}
