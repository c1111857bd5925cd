//! Inverted lists over the vector codes of a large notebook. Its records are grouped around
//! centroids (spherical k-means on an evenly spaced sample), and a search reads only the
//! lists whose centroids lie nearest the query, so the records it scans grow with a fraction
//! of the notebook instead of all of it. The lists follow every insert, change and removal;
//! they are trained again once the notebook has doubled or halved since.

use crate::kernels::dot;
use crate::user::quantize;

/// A list number meaning "in no list" (a record without a vector).
const NONE: u32 = u32::MAX;

/// Lloyd iterations when training.
const ITERATIONS: usize = 5;

/// Sampled records per centroid when training.
const SAMPLE_PER_LIST: usize = 24;

/// `count` slots of `0..len` drawn pseudo-randomly (the same each time; a slot may come
/// twice), or all of them when there are no more than `count`: a sample no periodic order
/// of the records (speakers taking turns, topics in rotation) can bias.
pub(crate) fn sample(len: usize, count: usize) -> Vec<usize> {
    if len <= count {
        return (0..len).collect();
    }
    (0..count as u64)
        .map(|i| {
            // splitmix64
            let mut z = i.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) % len as u64) as usize
        })
        .collect()
}

/// One notebook's lists.
#[derive(Debug, Clone)]
pub(crate) struct Lists {
    /// The dimensions of the codes the lists are built on (a record's head).
    dims: usize,
    /// Each centroid's unit direction as int8 codes, `dims` per centroid.
    centroids: Vec<i8>,
    /// Each centroid's code scale.
    scales: Vec<f32>,
    /// Per list, its members: their slots, their codes one after another (so a probe reads
    /// a list from contiguous memory) and their code scales.
    members: Vec<Members>,
    /// Per slot, its list ([`NONE`] for a record without a vector).
    list_of: Vec<u32>,
    /// How many slots the notebook had when the centroids were trained.
    trained_for: usize,
}

/// The records of one list.
#[derive(Debug, Clone, Default)]
struct Members {
    slots: Vec<u32>,
    codes: Vec<i8>,
    scales: Vec<f32>,
}

impl Members {
    fn push(&mut self, slot: usize, codes: &[i8], scale: f32) {
        self.slots.push(slot as u32);
        self.codes.extend_from_slice(codes);
        self.scales.push(scale);
    }

    /// Removes the member at `at`, moving the last one into its place.
    fn swap_remove(&mut self, at: usize, dims: usize) {
        let last = self.slots.len() - 1;
        self.slots.swap_remove(at);
        self.scales.swap_remove(at);
        self.codes.copy_within(last * dims..(last + 1) * dims, at * dims);
        self.codes.truncate(last * dims);
    }
}

impl Lists {
    /// Trains centroids on the codes (`dims` per slot, one slot after another in `codes`) of
    /// the slots whose `scales` are not zero, and files every slot in its nearest list.
    pub(crate) fn train(codes: &[i8], scales: &[f32], dims: usize) -> Self {
        let with_vector: Vec<usize> = (0..scales.len()).filter(|&s| scales[s] != 0.0).collect();
        // About twice the square root of the records per list.
        let count = ((with_vector.len() as f64).sqrt() / 2.0).round().clamp(1.0, 4096.0) as usize;
        let codes_of = |slot: usize| &codes[slot * dims..(slot + 1) * dims];
        let as_f32 = |codes: &[i8]| codes.iter().map(|&c| f32::from(c)).collect::<Vec<_>>();
        let sample: Vec<usize> = sample(with_vector.len(), count * SAMPLE_PER_LIST)
            .into_iter()
            .map(|i| with_vector[i])
            .collect();
        let mut lists = Self {
            dims,
            centroids: Vec::with_capacity(count * dims),
            scales: Vec::with_capacity(count),
            members: Vec::new(),
            list_of: vec![NONE; scales.len()],
            trained_for: scales.len(),
        };
        // Start from sampled records (the sample is in no order).
        for &slot in sample.iter().take(count) {
            lists.push_centroid(&as_f32(codes_of(slot)));
        }
        let count = lists.scales.len();
        for _ in 0..ITERATIONS {
            let mut sums = vec![0.0_f32; count * dims];
            let mut sizes = vec![0usize; count];
            // Each sampled record's similarity to its centroid, to reseed empty lists with
            // the records their centroids fit worst.
            let mut fits: Vec<(f32, usize)> = Vec::with_capacity(sample.len());
            for &slot in &sample {
                let (list, similarity) = lists.nearest(codes_of(slot));
                fits.push((similarity * scales[slot], slot));
                sizes[list] += 1;
                let sum = &mut sums[list * dims..(list + 1) * dims];
                for (s, &c) in sum.iter_mut().zip(codes_of(slot)) {
                    *s += f32::from(c) * scales[slot];
                }
            }
            fits.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
            let mut misfits = fits.into_iter().map(|(_, slot)| slot);
            lists.centroids.clear();
            lists.scales.clear();
            for list in 0..count {
                if sizes[list] > 0 {
                    lists.push_centroid(&sums[list * dims..(list + 1) * dims]);
                } else if let Some(slot) = misfits.next() {
                    lists.push_centroid(&as_f32(codes_of(slot)));
                }
            }
        }
        lists.members = vec![Members::default(); count];
        for &slot in &with_vector {
            let list = lists.nearest(codes_of(slot)).0;
            lists.list_of[slot] = list as u32;
            lists.members[list].push(slot, codes_of(slot), scales[slot]);
        }
        lists
    }

    /// Adds a centroid pointing along `direction` (any length).
    fn push_centroid(&mut self, direction: &[f32]) {
        let (codes, scale) = quantize(direction);
        self.centroids.extend_from_slice(&codes);
        self.scales.push(scale);
    }

    /// Whether the notebook, now `len` slots, has doubled or halved since training.
    pub(crate) fn stale(&self, len: usize) -> bool {
        len >= 2 * self.trained_for || 2 * len < self.trained_for
    }

    /// Each list with the dot product of `codes` with its centroid (in centroid units).
    fn similarities<'a>(&'a self, codes: &'a [i8]) -> impl Iterator<Item = (usize, f32)> + 'a {
        let centroids = self.centroids.chunks_exact(self.dims);
        centroids.enumerate().map(|(list, c)| (list, dot(codes, c) as f32 * self.scales[list]))
    }

    /// The list whose centroid is nearest a record's codes, and the codes' dot product with
    /// it (in centroid units).
    fn nearest(&self, codes: &[i8]) -> (usize, f32) {
        self.similarities(codes)
            .fold((0, f32::NEG_INFINITY), |best, next| if next.1 > best.1 { next } else { best })
    }

    /// Files `slot` (an existing slot, or the next one) by its codes and their scale; a slot
    /// without a vector (`None`) is in no list.
    pub(crate) fn set(&mut self, slot: usize, codes: Option<(&[i8], f32)>) {
        if slot == self.list_of.len() {
            self.list_of.push(NONE);
        }
        self.unfile(slot);
        if let Some((codes, scale)) = codes {
            let list = self.nearest(codes).0;
            self.list_of[slot] = list as u32;
            self.members[list].push(slot, codes, scale);
        }
    }

    /// Takes `slot` out of its list.
    fn unfile(&mut self, slot: usize) {
        let list = std::mem::replace(&mut self.list_of[slot], NONE);
        if list != NONE {
            let members = &mut self.members[list as usize];
            if let Some(at) = members.slots.iter().position(|&s| s as usize == slot) {
                members.swap_remove(at, self.dims);
            }
        }
    }

    /// Removes `slot` and moves the last slot into it, as `Vec::swap_remove`.
    pub(crate) fn swap_remove(&mut self, slot: usize) {
        self.unfile(slot);
        let last = self.list_of.len() - 1;
        if slot != last {
            let list = self.list_of[last];
            if list != NONE {
                let members = &mut self.members[list as usize].slots;
                if let Some(at) = members.iter().position(|&s| s as usize == last) {
                    members[at] = slot as u32;
                }
            }
            self.list_of[slot] = list;
        }
        self.list_of.pop();
    }

    /// Visits the lists nearest `direction` (a query, as codes), nearest first, until at
    /// least `at_least` members (or every list) were visited: each list with its members'
    /// slots, their codes one after another, and their code scales.
    pub(crate) fn probe(
        &self,
        direction: &[i8],
        at_least: usize,
        mut visit: impl FnMut(&[u32], &[i8], &[f32]),
    ) {
        let mut order: Vec<(usize, f32)> = self.similarities(direction).collect();
        order.sort_unstable_by(|a, b| b.1.total_cmp(&a.1));
        let mut visited = 0;
        for (list, _) in order {
            if visited >= at_least {
                break;
            }
            let members = &self.members[list];
            visit(&members.slots, &members.codes, &members.scales);
            visited += members.slots.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records around four directions: each list holds one direction's records, and the
    /// lists follow changes and removals.
    #[test]
    fn lists_group_by_direction_and_follow_changes() {
        let dims = 8;
        let around = |axis: usize, wobble: i8| {
            let mut v = vec![wobble; dims];
            v[axis] = 100;
            v
        };
        let mut codes = Vec::new();
        let mut scales = Vec::new();
        for slot in 0..400 {
            codes.extend(around(slot % 4, (slot % 7) as i8 - 3));
            scales.push(0.01);
        }
        // A record without a vector.
        codes.extend(vec![0; dims]);
        scales.push(0.0);
        let mut lists = Lists::train(&codes, &scales, dims);
        let probe = |lists: &Lists, axis: usize, at_least: usize| {
            let mut slots = Vec::new();
            lists.probe(&around(axis, 0), at_least, |members, filed, scales| {
                assert_eq!(filed.len(), members.len() * dims);
                assert_eq!(scales.len(), members.len());
                for (&slot, filed) in members.iter().zip(filed.chunks_exact(dims)) {
                    let slot = slot as usize;
                    assert_eq!(filed, &codes[slot * dims..(slot + 1) * dims]);
                    slots.push(slot);
                }
            });
            slots
        };
        assert_eq!(lists.list_of[400], NONE);
        let pure = |lists: &Lists| {
            let same = |m: &Members| {
                m.slots.iter().all(|&s| s % 4 == m.slots.first().map_or(0, |f| f % 4))
            };
            lists.members.iter().all(same)
        };
        assert!(pure(&lists), "{:?}", lists.members);
        // Probing along axis 2 returns only its records while few are asked for, and every
        // one of them once enough are.
        let probed = probe(&lists, 2, 1);
        assert!(!probed.is_empty() && probed.iter().all(|&s| s % 4 == 2));
        let probed = probe(&lists, 2, 100);
        assert_eq!(probed.iter().filter(|&&s| s % 4 == 2).count(), 100);
        // Slot 5 turns to axis 3; removing slot 0 moves the last slot (400) into it.
        lists.set(5, Some((&around(3, 0), 0.01)));
        assert_eq!(lists.list_of[5] as usize, lists.nearest(&around(3, 0)).0);
        lists.swap_remove(0);
        assert_eq!(lists.list_of.len(), 400);
        assert_eq!(lists.list_of[0], NONE);
        let filed: usize = lists.members.iter().map(|m| m.slots.len()).sum();
        assert_eq!(filed, 399);
        for (list, members) in lists.members.iter().enumerate() {
            assert!(members.slots.iter().all(|&s| lists.list_of[s as usize] == list as u32));
            assert_eq!(members.codes.len(), members.slots.len() * dims);
        }
        // Each member's codes moved with it.
        for members in &lists.members {
            for (&slot, codes) in members.slots.iter().zip(members.codes.chunks_exact(dims)) {
                let axis = if slot == 5 { 3 } else { slot as usize % 4 };
                assert_eq!(codes[axis], 100, "slot {slot}");
            }
        }
        assert!(!lists.stale(400) && lists.stale(802) && lists.stale(200));
    }
}
