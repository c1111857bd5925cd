//! One user's records in memory: int8 vector codes (one scale per vector) with each record's
//! retrievability and ranking fields (kind, scope, status, expiry, speaker, session, date)
//! and its BM25F postings, so a search or near-duplicate check scans contiguous memory
//! instead of decoding rows from a database.
//!
//! Codes are kept in two arrays: the leading quarter of each vector's dimensions (the head)
//! and the rest (the tail). A small user's every record gets its exact cosine. A large
//! user's records are also filed in inverted lists by their heads ([`crate::lists`]): a
//! search reads the heads of the lists nearest the query, completes the dot product with the
//! tail only for the records that can rank (the best by head cosine and the best by BM25F),
//! and takes the population statistics that make scores comparable from a sample. Embeddings
//! whose leading dimensions carry the most variance (PCA-reduced ones such as the built-in
//! model, and Matryoshka-trained ones) rank well on the head alone; the search benchmark
//! reports recall against exact cosine. Each record's product with the notebook's common
//! direction is kept between searches ([`Alongs`]), so a search multiplies each record with
//! the query alone.

use std::collections::HashMap;

use mnemo_core::calibration::{Calibration, common_direction, without_common};
use mnemo_core::ports::Ranked;
use mnemo_core::retrieval::{Fused, Population, QueryWords, RowSignal, Signals};
use mnemo_core::{Kind, Timestamp};

use crate::kernels::{Wide, dot, dot_rows, dot2_row, dot2_rows};
use crate::lexical::{LexicalIndex, LexicalScores};
use crate::lists::Lists;

/// Retrievability fields of one indexed record.
#[derive(Debug, Clone)]
struct Entry {
    rowid: i64,
    kind: Kind,
    /// Its scope: a number in the user's scope table.
    scope: u32,
    active: bool,
    sensitive: bool,
    expires_at: Option<i64>,
    /// Who said it (metadata `speaker`), for conversation turns: a number in the user's
    /// speaker table.
    speaker: Option<u32>,
    /// Its conversation session: a number in the user's session table.
    session: Option<u32>,
    /// From when it holds (ms).
    valid_from: i64,
    /// Whether it only asks or requests something (`mnemo_core::retrieval::states_nothing`).
    asks: bool,
    /// Whether its author speaks of themselves in it (`mnemo_core::retrieval::speaks_of_self`).
    of_self: bool,
    /// The kinds of answer it holds (`mnemo_core::answer::answer_kinds`).
    answers: mnemo_core::answer::AnswerKinds,
}

impl Entry {
    fn retrievable(&self, filter: &ScanFilter<'_>, scope: Option<u32>) -> bool {
        self.active
            && self.expires_at.is_none_or(|at| at > filter.now)
            && filter.kind.is_none_or(|k| k == self.kind)
            && scope.is_none_or(|s| s == self.scope)
            && !(filter.exclude_sensitive && self.sensitive)
    }
}

/// Filters a scan applies before ranking.
#[derive(Debug, Clone, Copy)]
pub struct ScanFilter<'a> {
    /// Records expired at this time (ms) are left out.
    pub now: i64,
    /// Only this kind.
    pub kind: Option<Kind>,
    /// Only this scope.
    pub scope: Option<&'a str>,
    /// Leave out sensitive records.
    pub exclude_sensitive: bool,
}

/// Distinct strings numbered in order of first appearance.
#[derive(Debug, Default)]
pub(crate) struct Names {
    names: Vec<Box<str>>,
    numbers: HashMap<Box<str>, u32>,
}

impl Names {
    fn number(&mut self, name: &str) -> u32 {
        if let Some(n) = self.numbers.get(name) {
            return *n;
        }
        let n = self.names.len() as u32;
        self.names.push(name.into());
        self.numbers.insert(name.into(), n);
        n
    }

    fn find(&self, name: &str) -> Option<u32> {
        self.numbers.get(name).copied()
    }

    /// How many names there are.
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// Every name, indexed by its number.
    pub(crate) fn all(&self) -> Vec<&str> {
        self.names.iter().map(AsRef::as_ref).collect()
    }
}

/// A record as a store reads it from its database, before its strings are numbered.
#[derive(Debug, Clone)]
pub struct IndexRow {
    /// The store's row number: unique per record, increasing in insertion order (a
    /// session's turns are ordered by it).
    pub rowid: i64,
    /// Its kind.
    pub kind: Kind,
    /// Its scope, as written.
    pub scope: String,
    /// Whether its status is `active`.
    pub active: bool,
    /// Whether it is `sensitive`.
    pub sensitive: bool,
    /// When it expires (ms), if ever.
    pub expires_at: Option<i64>,
    /// Its vector (empty for none).
    pub vector: Vec<f32>,
    /// Its content.
    pub text: String,
    /// Who said it (metadata `speaker`), for conversation turns.
    pub speaker: Option<String>,
    /// Its conversation session.
    pub session: Option<String>,
    /// From when it holds (ms).
    pub valid_from: i64,
}

impl IndexRow {
    /// The index row of a stored record with its vector (`None`: no vector).
    pub fn of(rowid: i64, memory: &mnemo_core::Memory, vector: Option<&[f32]>) -> Self {
        Self {
            rowid,
            kind: memory.kind,
            scope: memory.scope.to_string(),
            active: memory.status == mnemo_core::Status::Active,
            sensitive: memory.sensitivity == mnemo_core::Sensitivity::Sensitive,
            expires_at: memory.expires_at.map(Timestamp::as_millis),
            vector: vector.map(<[f32]>::to_vec).unwrap_or_default(),
            text: memory.content.clone(),
            speaker: mnemo_core::record::metadata_str(&memory.metadata, "speaker")
                .map(str::to_owned),
            session: memory.session_id.clone(),
            valid_from: memory.valid_from.as_millis(),
        }
    }
}

/// How many leading dimensions form the head of a `dims`-dimensional code: a quarter, for
/// vectors long enough that a quarter still ranks; all of them otherwise.
fn head_dims(dims: usize) -> usize {
    if dims >= 128 { dims / 4 } else { dims }
}

/// One user's records. Every entry owns `head_dims` head codes and `dims - head_dims` tail
/// codes (zeros when it has no vector), at its slot.
#[derive(Debug, Default)]
pub struct UserIndex {
    entries: Vec<Entry>,
    /// Per slot, the scale turning a code dot product into a cosine; 0 without a vector.
    scales: Vec<f32>,
    head: Vec<i8>,
    tail: Vec<i8>,
    slots: HashMap<i64, usize>,
    dims: usize,
    head_dims: usize,
    lexical: LexicalIndex,
    scopes: Names,
    speakers: Names,
    sessions: Names,
    /// The sum of every record's (dequantised) unit vector: with an embedder's calibration as
    /// a prior, the notebook's common direction (see `mnemo_core::calibration`).
    sum: Vec<f64>,
    /// The inverted lists of a large notebook (see [`crate::lists`]), trained at its second
    /// search past [`LISTS_MIN`] records and kept in step by every change.
    lists: std::sync::Mutex<Option<std::sync::Arc<Lists>>>,
    /// Whether a search past [`LISTS_MIN`] records has read every head already (the next
    /// one trains the lists).
    searched: std::sync::atomic::AtomicBool,
    /// Per speaker number, how many active records they said.
    speaker_active: Vec<u32>,
    /// Every slot's dot product with the common direction's codes as the last search saw
    /// them, kept in step with every change of a slot.
    alongs: std::sync::Mutex<Option<Alongs>>,
}

/// Each slot's code dot product with the codes of a notebook's common direction. The
/// direction moves a little with every record written, and its codes (rounded to int8) move
/// less: a search finds most of them as the one before left them, corrects the products by
/// the codes that moved, and computes one dot product per record (with the query) instead of
/// two. The integers are exact, so a search ranks as it would computing both.
#[derive(Debug)]
struct Alongs {
    /// The direction's codes, head then tail.
    direction: Vec<i8>,
    /// Per slot, its codes' dot product with `direction` (shared with the searches using
    /// them, copied only when changed meanwhile).
    products: std::sync::Arc<Vec<i32>>,
}

/// How many of the direction's codes may have moved for a search to correct the kept
/// products rather than compute them afresh (a correction costs a multiplication per
/// record and moved code; a fresh pass about as much as twenty).
const ALONG_MOVES_MAX: usize = 16;

impl UserIndex {
    /// Adds a record, or replaces the one with the same rowid.
    pub fn upsert_row(&mut self, row: IndexRow) {
        let entry = Entry {
            rowid: row.rowid,
            kind: row.kind,
            scope: self.scopes.number(&row.scope),
            active: row.active,
            sensitive: row.sensitive,
            expires_at: row.expires_at,
            speaker: row.speaker.map(|s| self.speakers.number(&s)),
            session: row.session.map(|s| self.sessions.number(&s)),
            valid_from: row.valid_from,
            asks: mnemo_core::retrieval::states_nothing(&row.text),
            of_self: mnemo_core::retrieval::speaks_of_self(&row.text),
            answers: mnemo_core::answer::answer_kinds(&row.text),
        };
        let (codes, scale) = quantize(&row.vector);
        self.upsert(entry, &codes, scale, &row.text);
    }

    /// Marks the record with this rowid as no longer active (superseded), if indexed.
    pub fn deactivate(&mut self, rowid: i64) {
        if let Some(&slot) = self.slots.get(&rowid) {
            self.count_speaker(slot, -1);
            self.entries[slot].active = false;
        }
    }

    fn tail_dims(&self) -> usize {
        self.dims - self.head_dims
    }

    fn head_of(&self, slot: usize) -> &[i8] {
        &self.head[slot * self.head_dims..(slot + 1) * self.head_dims]
    }

    fn tail_of(&self, slot: usize) -> &[i8] {
        let t = self.tail_dims();
        &self.tail[slot * t..(slot + 1) * t]
    }

    /// The full code dot product of a slot with a query split the same way.
    fn dot_at(&self, slot: usize, query: &SplitQuery) -> i32 {
        dot(&query.head, self.head_of(slot)) + dot(&query.tail, self.tail_of(slot))
    }

    /// A slot's full code dot products with two queries split the same way, reading the
    /// slot's codes once.
    fn dot2_at(&self, slot: usize, a: &WideQuery, b: &WideQuery) -> (i32, i32) {
        let head = dot2_row(self.head_of(slot), &a.head, &b.head);
        let tail = dot2_row(self.tail_of(slot), &a.tail, &b.tail);
        (head.0 + tail.0, head.1 + tail.1)
    }

    /// The full code dot products of the slots in `slots` with two queries split the same
    /// way, in slot order, in one pass over their codes (which lie one after another).
    fn dot2_range(
        &self,
        slots: std::ops::Range<usize>,
        a: &WideQuery,
        b: &WideQuery,
    ) -> Vec<(i32, i32)> {
        let (head_dims, tail_dims) = (self.head_dims, self.tail_dims());
        let heads = &self.head[slots.start * head_dims..slots.end * head_dims];
        let tails = &self.tail[slots.start * tail_dims..slots.end * tail_dims];
        let mut all = Vec::with_capacity(slots.len());
        dot2_rows(heads, head_dims, &a.head, &b.head, &mut all);
        let mut tail = Vec::with_capacity(slots.len());
        dot2_rows(tails, tail_dims, &a.tail, &b.tail, &mut tail);
        for (sum, (with_a, with_b)) in all.iter_mut().zip(tail) {
            sum.0 += with_a;
            sum.1 += with_b;
        }
        all
    }

    /// Adds (`sign` 1) or takes away (-1) a slot's vector in [`Self::sum`].
    fn count_in_sum(&mut self, slot: usize, sign: f32) {
        let scale = self.scales[slot] * sign;
        if scale == 0.0 {
            return;
        }
        let (h, t) = (self.head_dims, self.tail_dims());
        // In f64, so the order records were added in changes the sum by far less than any
        // score difference that matters (stores and nodes index in different orders).
        let (head_sum, tail_sum) = self.sum.split_at_mut(h);
        add_scaled(head_sum, &self.head[slot * h..(slot + 1) * h], scale);
        add_scaled(tail_sum, &self.tail[slot * t..(slot + 1) * t], scale);
    }

    /// Brings the kept product of `slot` (just written, or appended) in step with its codes.
    fn keep_along(&mut self, slot: usize) {
        let alongs = self.alongs.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(mut kept) = alongs.take() else { return };
        let product = self.along_of(slot, &kept.direction);
        let products = std::sync::Arc::make_mut(&mut kept.products);
        if slot < products.len() {
            products[slot] = product;
        } else if slot == products.len() {
            products.push(product);
        } else {
            // Out of step: the next search computes them afresh.
            return;
        }
        *self.alongs.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(kept);
    }

    /// A slot's code dot product with `direction` (head then tail codes).
    fn along_of(&self, slot: usize, direction: &[i8]) -> i32 {
        let (head, tail) = direction.split_at(self.head_dims);
        dot(head, self.head_of(slot)) + dot(tail, self.tail_of(slot))
    }

    /// Every slot's code dot products with the query and with the common direction, as
    /// [`Self::dot2_range`] over every slot gives them: the direction's from the kept
    /// products, corrected by the codes that moved since, when few did.
    fn products_with(
        &self,
        query: &WideQuery,
        direction: &SplitQuery,
        wide_direction: &WideQuery,
    ) -> (Vec<i32>, std::sync::Arc<Vec<i32>>) {
        let n = self.entries.len();
        let codes: Vec<i8> = direction.head.iter().chain(&direction.tail).copied().collect();
        let kept_alongs = {
            let mut alongs = self.alongs.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            alongs
                .as_mut()
                .filter(|kept| kept.products.len() == n && kept.direction.len() == codes.len())
                .and_then(|kept| {
                    self.correct(kept, &codes).then(|| std::sync::Arc::clone(&kept.products))
                })
        };
        if let Some(alongs) = kept_alongs {
            return (self.dot_range(0..n, query), alongs);
        }
        let (with_query, alongs): (Vec<i32>, Vec<i32>) =
            self.dot2_range(0..n, query, wide_direction).into_iter().unzip();
        let alongs = std::sync::Arc::new(alongs);
        let mut kept = self.alongs.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // Kept only if no change landed meanwhile (changes need the index exclusively, so
        // none can have: a search holds it shared).
        *kept = Some(Alongs { direction: codes, products: std::sync::Arc::clone(&alongs) });
        (with_query, alongs)
    }

    /// Every slot's cosine to a query as ranking sees it (without the common direction) and
    /// its raw cosine (which the relevance gate judges), from the slots' code dot products
    /// with the query (`with_query`, the query's codes of `query_scale`) and, with `common`,
    /// with its direction (`alongs`), in one pass the compiler vectorises.
    fn cosines(
        &self,
        with_query: &[i32],
        alongs: &[i32],
        query_scale: f32,
        common: Option<&Common>,
    ) -> (Vec<f32>, Vec<f32>) {
        let raw: Vec<f32> = (with_query.iter().zip(&self.scales))
            .map(|(&product, &scale)| product as f32 * query_scale * scale)
            .collect();
        let Some(common) = common.filter(|_| alongs.len() == raw.len()) else {
            return (raw.clone(), raw);
        };
        let (a, direction_scale) = (common.query_along, common.direction.scale);
        let apart = crate::kernels::with_vectors(
            #[inline(always)]
            || {
                // A plain loop: `collect` would run outside the vector context.
                let mut apart = vec![0.0; raw.len()];
                let slots = (apart.iter_mut().zip(&raw)).zip(alongs.iter().zip(&self.scales));
                for ((out, &cosine), (&along, &scale)) in slots {
                    let along = f64::from(along as f32 * direction_scale * scale);
                    *out = without_common(f64::from(cosine), a, along) as f32;
                }
                apart
            },
        );
        (apart, raw)
    }

    /// Corrects `kept` to the direction `codes` when at most [`ALONG_MOVES_MAX`] of them
    /// moved; false (and `kept` as it was) when more did.
    fn correct(&self, kept: &mut Alongs, codes: &[i8]) -> bool {
        let moved: Vec<(usize, i32)> = (kept.direction.iter().zip(codes).enumerate())
            .filter(|(_, (old, new))| old != new)
            .map(|(dim, (&old, &new))| (dim, i32::from(new) - i32::from(old)))
            .collect();
        if moved.len() > ALONG_MOVES_MAX {
            return false;
        }
        if moved.is_empty() {
            return true;
        }
        let h = self.head_dims;
        for (slot, product) in std::sync::Arc::make_mut(&mut kept.products).iter_mut().enumerate() {
            let (head, tail) = (self.head_of(slot), self.tail_of(slot));
            for &(dim, change) in &moved {
                let code = if dim < h { head[dim] } else { tail[dim - h] };
                *product += change * i32::from(code);
            }
        }
        kept.direction.copy_from_slice(codes);
        true
    }

    /// The full code dot products of the slots in `slots` with a query split like them, in
    /// slot order, in one pass over their codes.
    fn dot_range(&self, slots: std::ops::Range<usize>, query: &WideQuery) -> Vec<i32> {
        let (head_dims, tail_dims) = (self.head_dims, self.tail_dims());
        let heads = &self.head[slots.start * head_dims..slots.end * head_dims];
        let tails = &self.tail[slots.start * tail_dims..slots.end * tail_dims];
        let mut all = Vec::with_capacity(slots.len());
        dot_rows(heads, head_dims, &query.head, &mut all);
        let mut tail = Vec::with_capacity(slots.len());
        dot_rows(tails, tail_dims, &query.tail, &mut tail);
        for (sum, with_query) in all.iter_mut().zip(tail) {
            *sum += with_query;
        }
        all
    }

    /// The lists, when trained, to keep in step with a change.
    fn lists_mut(&mut self) -> Option<&mut Lists> {
        let lists = self.lists.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner);
        lists.as_mut().map(std::sync::Arc::make_mut)
    }

    /// The notebook's lists, trained now when there are none or the notebook has doubled or
    /// halved since they were; `None` at the first search of an index, which reads every
    /// head instead (an index built for one search, as an as-of read's is, never trains).
    fn lists_for_search(&self) -> Option<std::sync::Arc<Lists>> {
        let mut lists = self.lists.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match lists.as_ref() {
            Some(kept) if !kept.stale(self.entries.len()) => Some(std::sync::Arc::clone(kept)),
            _ if !self.searched.swap(true, std::sync::atomic::Ordering::Relaxed) => None,
            _ => {
                let trained =
                    std::sync::Arc::new(Lists::train(&self.head, &self.scales, self.head_dims));
                *lists = Some(std::sync::Arc::clone(&trained));
                Some(trained)
            }
        }
    }

    /// Counts (`sign` 1) or uncounts (-1) an entry among its speaker's active records.
    fn count_speaker(&mut self, slot: usize, sign: i32) {
        let entry = &self.entries[slot];
        let Some(speaker) = entry.speaker.filter(|_| entry.active) else { return };
        let speaker = speaker as usize;
        if self.speaker_active.len() <= speaker {
            self.speaker_active.resize(speaker + 1, 0);
        }
        self.speaker_active[speaker] = self.speaker_active[speaker].saturating_add_signed(sign);
    }

    fn upsert(&mut self, entry: Entry, codes: &[i8], mut scale: f32, text: &str) {
        if self.dims == 0 && !codes.is_empty() {
            self.dims = codes.len();
            self.head_dims = head_dims(self.dims);
            self.head = vec![0; self.entries.len() * self.head_dims];
            self.tail = vec![0; self.entries.len() * self.tail_dims()];
            self.sum = vec![0.0; self.dims];
            *self.alongs.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        }
        let (h, t) = (self.head_dims, self.tail_dims());
        let zeros;
        let codes = if codes.len() == self.dims {
            codes
        } else {
            scale = 0.0;
            zeros = vec![0; self.dims];
            &zeros
        };
        let (head, tail) = codes.split_at(h);
        let slot = match self.slots.get(&entry.rowid) {
            Some(&slot) => {
                self.count_in_sum(slot, -1.0);
                self.count_speaker(slot, -1);
                self.head[slot * h..(slot + 1) * h].copy_from_slice(head);
                self.tail[slot * t..(slot + 1) * t].copy_from_slice(tail);
                self.entries[slot] = entry;
                self.scales[slot] = scale;
                slot
            }
            None => {
                let slot = self.entries.len();
                self.slots.insert(entry.rowid, slot);
                self.entries.push(entry);
                self.scales.push(scale);
                self.head.extend_from_slice(head);
                self.tail.extend_from_slice(tail);
                slot
            }
        };
        self.count_in_sum(slot, 1.0);
        self.count_speaker(slot, 1);
        self.keep_along(slot);
        if let Some(lists) = self.lists_mut() {
            lists.set(slot, (scale != 0.0).then_some((head, scale)));
        }
        let entry = &self.entries[slot];
        self.lexical.set(slot as u32, entry.rowid, text, entry.session);
    }

    /// Removes the record with this rowid (nothing when it is not indexed).
    pub fn remove(&mut self, rowid: i64) {
        let Some(slot) = self.slots.remove(&rowid) else { return };
        self.count_in_sum(slot, -1.0);
        self.count_speaker(slot, -1);
        if let Some(lists) = self.lists_mut() {
            lists.swap_remove(slot);
        }
        let alongs = self.alongs.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(kept) = alongs.as_mut() {
            if kept.products.len() == self.entries.len() {
                std::sync::Arc::make_mut(&mut kept.products).swap_remove(slot);
            } else {
                *alongs = None;
            }
        }
        self.lexical.swap_remove(slot as u32);
        let last = self.entries.len() - 1;
        if slot != last {
            let moved = self.entries[last].rowid;
            self.entries.swap(slot, last);
            self.scales.swap(slot, last);
            for (codes, width) in
                [(&mut self.head, self.head_dims), (&mut self.tail, self.dims - self.head_dims)]
            {
                codes.copy_within(last * width..(last + 1) * width, slot * width);
            }
            self.slots.insert(moved, slot);
        }
        self.entries.pop();
        self.scales.pop();
        self.head.truncate(last * self.head_dims);
        self.tail.truncate(last * self.tail_dims());
    }

    /// The scope number a filter asks for: `Some(None)` for any scope, `None` when it names
    /// a scope this user has no record in (so nothing is retrievable).
    fn scope_filter(&self, filter: &ScanFilter<'_>) -> Option<Option<u32>> {
        match filter.scope {
            None => Some(None),
            Some(name) => self.scopes.find(name).map(Some),
        }
    }
}

/// A quantised query split into head and tail like the stored codes.
struct SplitQuery {
    head: Vec<i8>,
    tail: Vec<i8>,
    scale: f32,
}

impl SplitQuery {
    fn new(vectors: &UserIndex, query: &[f32]) -> Option<Self> {
        if vectors.dims == 0 || query.len() != vectors.dims {
            return None;
        }
        let (mut codes, scale) = quantize(query);
        let tail = codes.split_off(vectors.head_dims);
        Some(Self { head: codes, tail, scale })
    }
}

/// A split query widened for many records (see [`Wide`]).
struct WideQuery {
    head: Wide,
    tail: Wide,
}

impl WideQuery {
    fn new(query: &SplitQuery) -> Self {
        Self { head: Wide::new(&query.head), tail: Wide::new(&query.tail) }
    }
}

/// The notebook's common direction for one search: its codes, split like the stored ones,
/// and the query's component along it (full, and over the head dimensions alone).
struct Common {
    direction: SplitQuery,
    query_along: f64,
    query_head_along: f64,
}

impl Common {
    fn new(
        vectors: &UserIndex,
        query: &[f32],
        query_split: &SplitQuery,
        prior: &[f32],
    ) -> Option<Self> {
        let direction = common_direction(&vectors.sum, prior)?;
        let query_along = f64::from(query.iter().zip(&direction).map(|(a, b)| a * b).sum::<f32>());
        let direction = SplitQuery::new(vectors, &direction)?;
        let query_head_along = f64::from(
            dot(&query_split.head, &direction.head) as f32 * query_split.scale * direction.scale,
        );
        Some(Self { direction, query_along, query_head_along })
    }

    /// A slot's full cosine (`cosine`) without the common direction.
    fn exact(&self, vectors: &UserIndex, slot: usize, cosine: f32) -> f32 {
        self.exact_from(vectors, slot, cosine, vectors.dot_at(slot, &self.direction))
    }

    /// [`Self::exact`] from the slot's code dot product with the direction (`along`).
    fn exact_from(&self, vectors: &UserIndex, slot: usize, cosine: f32, along: i32) -> f32 {
        let along = along as f32 * self.direction.scale * vectors.scales[slot];
        without_common(f64::from(cosine), self.query_along, f64::from(along)) as f32
    }

    /// A slot's head cosine (`cosine`) without the head's part of the common direction,
    /// from the code dot product of the slot's head (of this `scale`) with the direction's
    /// (`along`): what [`without_common`] computes over the head dimensions.
    fn head(&self, along: i32, scale: f32, cosine: f32) -> f32 {
        let a = self.query_head_along;
        let along = along as f32 * self.direction.scale * scale;
        let (along, rest) = (f64::from(along), f64::from(1.0 - along * along));
        let both = (1.0 - a * a) * rest;
        if both < 1e-6 {
            return 0.0;
        }
        ((f64::from(cosine) - a * along) / both.sqrt()).clamp(-1.0, 1.0) as f32
    }
}

/// Adds `codes` times `scale` to `sums`, element by element (a loop of its own, which the
/// compiler vectorises).
fn add_scaled(sums: &mut [f64], codes: &[i8], scale: f32) {
    for (sum, &code) in sums.iter_mut().zip(codes) {
        *sum += f64::from(code) * f64::from(scale);
    }
}

/// Quantises a vector to int8 codes of its unit-length version; returns the scale that
/// turns a code dot product back into a cosine.
pub fn quantize(vector: &[f32]) -> (Vec<i8>, f32) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    // The largest magnitude, over eight lanes (a maximum does not depend on the order).
    let mut lanes = [0.0_f32; 8];
    let mut chunks = vector.chunks_exact(8);
    for chunk in &mut chunks {
        for (lane, x) in lanes.iter_mut().zip(chunk) {
            *lane = lane.max(x.abs());
        }
    }
    let max = chunks.remainder().iter().chain(&lanes).fold(0.0_f32, |m, x| m.max(x.abs()));
    if norm == 0.0 || max == 0.0 {
        return (vec![0; vector.len()], 0.0);
    }
    let scale = max / 127.0;
    let codes = vector.iter().map(|x| round_to_code(x / scale)).collect();
    (codes, scale / norm)
}

/// `y.round().clamp(-127.0, 127.0) as i8` (halves away from zero), without the call to the
/// C library's `roundf` that `f32::round` compiles to on a baseline x86-64 target: one of
/// these runs for every dimension of every vector an index loads.
fn round_to_code(y: f32) -> i8 {
    // Past ±128 the code is ±127 either way; within it the integer conversion cannot overflow.
    let y = y.clamp(-128.0, 128.0);
    let whole = y as i32;
    // Exact, as `|y| < 2^23`.
    let fraction = y - whole as f32;
    let rounded = whole + i32::from(fraction >= 0.5) - i32::from(fraction <= -0.5);
    rounded.clamp(-127, 127) as i8
}

/// The cosine of two quantised vectors.
pub fn cosine_of(a: &(Vec<i8>, f32), b: &(Vec<i8>, f32)) -> f32 {
    dot(&a.0, &b.0) as f32 * a.1 * b.1
}

/// Users with at least this many records are searched through inverted lists (see the
/// module comment); smaller ones get the exact cosine of every record.
const LISTS_MIN: usize = 16_384;

/// How many records (at least) a search through the lists reads by head: a sixteenth of
/// the notebook, and never fewer than this.
const PROBE_MIN: usize = 4_096;

/// How many records the head pass keeps for the exact cosine.
const COARSE_KEEP_SEMANTIC: usize = 500;

/// How many records it keeps by BM25F: lexical matches can rank on their BM25F alone, and
/// their cosine should be exact when they do.
const COARSE_KEEP_LEXICAL: usize = 250;

/// The most ways a search ranking several notebooks together splits the exact pass of each
/// large one: in a search of `n` notebooks, each keeps `1/min(n, this)` of the records above
/// for their exact cosine. The merged ranking needs only the best of all of them, so each
/// notebook's share can be smaller than what a notebook ranked alone needs; it stays large
/// enough that one notebook holding every best record still finds nearly all of them by head
/// (the search benchmark compares the merged ranking with each notebook ranked alone in
/// full).
const SHARES_MAX: usize = 4;

/// How many records a search through the lists takes its population statistics from: runs
/// of [`SAMPLE_RUN`] neighbouring slots (read from contiguous memory), each starting at a
/// slot drawn by [`crate::lists::sample`].
const POPULATION_SAMPLE: usize = 2_048;

/// The length of one run of the population sample.
const SAMPLE_RUN: usize = 64;

/// The slots of the `keep` best of `scored` by score among those that `can_rank` (fewer
/// when fewer can), in no order. Slots are checked best first, so a filter that lets most
/// records rank is asked about little more than `keep` of them.
fn best_that_rank(
    mut scored: Vec<(usize, f64)>,
    keep: usize,
    can_rank: &dyn Fn(usize) -> bool,
) -> Vec<usize> {
    let best_first = |a: &(usize, f64), b: &(usize, f64)| b.1.total_cmp(&a.1);
    let mut kept = Vec::with_capacity(keep);
    let (mut from, mut upto) = (0, 2 * keep);
    while from < scored.len() {
        let rest = &mut scored[from..];
        let take = (upto - from).min(rest.len());
        if take < rest.len() {
            rest.select_nth_unstable_by(take, best_first);
        }
        rest[..take].sort_unstable_by(best_first);
        for &(slot, _) in &rest[..take] {
            if can_rank(slot) {
                kept.push(slot);
                if kept.len() == keep {
                    return kept;
                }
            }
        }
        from += take;
        upto *= 2;
    }
    kept
}

/// What a scan computes for one query.
struct ScanScores {
    /// The slots of the records that can rank, in slot order.
    slots: Vec<u32>,
    /// Their signals, in the same order.
    rows: Vec<RowSignal>,
    /// The statistics of every retrievable record.
    population: Option<Population>,
}

/// The signals of the record in `slot`, from its cosine to the query as ranking sees it
/// and its raw cosine (which the relevance gate judges).
#[inline]
fn signal_of(
    vectors: &UserIndex,
    lexical: &LexicalScores,
    slot: usize,
    cosine: f32,
    raw: f32,
) -> RowSignal {
    let entry = &vectors.entries[slot];
    RowSignal {
        bm25: lexical.turns[slot],
        cosine: f64::from(cosine),
        gate_cosine: f64::from(raw),
        session_bm25: lexical.session_score(entry.session),
        speaker: entry.speaker,
        valid_from: Timestamp::from_millis(entry.valid_from),
        asks: entry.asks,
        of_self: entry.of_self,
        answers: entry.answers,
    }
}

/// The records of `vectors` that can rank for one query, with their signals (cosines to it,
/// BM25F of `words`...) and the statistics of every retrievable record. A small user's every
/// retrievable record can rank, and the statistics are theirs, taken in the same pass; a
/// large user's are the best by head cosine among the lists nearest the query and the best
/// by BM25F, each with its exact cosine, with the statistics taken from a sample.
/// `notebooks` is how many notebooks the search ranks together, this one among them (see
/// [`SHARES_MAX`]).
fn scan(
    vectors: &UserIndex,
    query: Option<&SplitQuery>,
    common: Option<&Common>,
    words: QueryWords<'_>,
    notebooks: usize,
    retrievable: impl Fn(&Entry) -> bool,
) -> ScanScores {
    let n = vectors.entries.len();
    let lexical = vectors.lexical.score(words.terms, words.modifiers);
    // A slot's full cosine, as ranking sees it and raw, from its code dot products with the
    // query and with the common direction.
    let scored = |slot: usize, (with_query, along): (i32, i32)| match query {
        None => (0.0, 0.0),
        Some(q) => {
            let raw = with_query as f32 * q.scale * vectors.scales[slot];
            (common.map_or(raw, |common| common.exact_from(vectors, slot, raw, along)), raw)
        }
    };
    // The query and the direction (the query again without one), widened once per search.
    let widened = query.map(|q| (WideQuery::new(q), common.map(|c| WideQuery::new(&c.direction))));
    let widened = widened.as_ref().map(|(q, d)| (q, d.as_ref().unwrap_or(q)));
    // The same, for one slot.
    let exact = |slot: usize| match widened {
        None => scored(slot, (0, 0)),
        Some((q, d)) => scored(slot, vectors.dot2_at(slot, q, d)),
    };
    let can_rank = |slot: usize| retrievable(&vectors.entries[slot]);
    let Some(((q, wide_query), wide_direction)) =
        query.zip(widened).map(|(q, (wq, wd))| ((q, wq), wd)).filter(|_| n >= LISTS_MIN)
    else {
        // Every record's products in one pass over the codes (the direction's kept between
        // searches), then every record's cosines in one pass over the products.
        let cosines = query.zip(widened).map(|(q, (wide_query, wide_direction))| {
            let (with_query, alongs) = match common {
                Some(common) => {
                    vectors.products_with(wide_query, &common.direction, wide_direction)
                }
                None => (vectors.dot_range(0..n, wide_query), std::sync::Arc::default()),
            };
            vectors.cosines(&with_query, &alongs, q.scale, common)
        });
        // Every record that can rank, with its signals and their statistics, in one pass
        // over the records.
        let (mut slots, mut rows) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut population = Population {
            speakers_present: vec![false; vectors.speakers.len()],
            ..Default::default()
        };
        for (slot, entry) in vectors.entries.iter().enumerate() {
            if retrievable(entry) {
                let (cosine, raw) =
                    cosines.as_ref().map_or((0.0, 0.0), |(c, r)| (c[slot], r[slot]));
                let row = signal_of(vectors, &lexical, slot, cosine, raw);
                population.semantic.add(row.cosine);
                let speaker = entry.speaker.map(|s| s as usize);
                if let Some(present) = speaker.and_then(|s| population.speakers_present.get_mut(s))
                {
                    *present = true;
                }
                slots.push(slot as u32);
                rows.push(row);
            }
        }
        return ScanScores { slots, rows, population: Some(population) };
    };
    // The lists nearest the query as ranking sees it: without its common part.
    let toward = match common {
        None => q.head.clone(),
        Some(common) => {
            let (a, d) = (common.query_head_along as f32, &common.direction);
            let apart: Vec<f32> = (q.head.iter().zip(&d.head))
                .map(|(&x, &c)| f32::from(x) * q.scale - a * f32::from(c) * d.scale)
                .collect();
            quantize(&apart).0
        }
    };
    // Each probed record's head cosine to the query, as ranking sees it.
    let at_least = (n / 16).max(PROBE_MIN);
    let mut by_head: Vec<(usize, f64)> = Vec::with_capacity(at_least + at_least / 2);
    let mut products = Vec::new();
    // Records by slot (`None`: the slots in order), with their heads one after another.
    let mut visit = |slots: Option<&[u32]>, heads: &[i8], scales: &[f32]| {
        products.clear();
        let (query_head, direction_head) = (&wide_query.head, &wide_direction.head);
        dot2_rows(heads, vectors.head_dims, query_head, direction_head, &mut products);
        for (i, (&(with_query, along), &scale)) in products.iter().zip(scales).enumerate() {
            if scale == 0.0 {
                continue;
            }
            let slot = slots.map_or(i, |slots| slots[i] as usize);
            let cosine = with_query as f32 * q.scale * scale;
            let cosine = common.map_or(cosine, |common| common.head(along, scale, cosine));
            by_head.push((slot, f64::from(cosine)));
        }
    };
    match vectors.lists_for_search() {
        Some(lists) => {
            lists.probe(&toward, at_least, |slots, heads, scales| {
                visit(Some(slots), heads, scales);
            });
        }
        None => visit(None, &vectors.head, &vectors.scales),
    }
    let by_terms: Vec<(usize, f64)> =
        lexical.matched.iter().map(|&slot| (slot as usize, lexical.turns[slot as usize])).collect();
    let shares = notebooks.clamp(1, SHARES_MAX);
    let mut candidates = best_that_rank(by_head, COARSE_KEEP_SEMANTIC / shares, &can_rank);
    candidates.extend(best_that_rank(by_terms, COARSE_KEEP_LEXICAL / shares, &can_rank));
    // In slot order, so the reads run forward through the codes.
    candidates.sort_unstable();
    candidates.dedup();
    let rows = (candidates.iter())
        .map(|&slot| {
            let (cosine, raw) = exact(slot);
            signal_of(vectors, &lexical, slot, cosine, raw)
        })
        .collect();
    let slots = candidates.into_iter().map(|slot| slot as u32).collect();
    // The population, from a sample scaled to the whole notebook.
    let mut population = Population {
        speakers_present: (0..vectors.speakers.len())
            .map(|s| vectors.speaker_active.get(s).is_some_and(|&count| count > 0))
            .collect(),
        ..Default::default()
    };
    let runs = crate::lists::sample(n - SAMPLE_RUN, POPULATION_SAMPLE / SAMPLE_RUN);
    for &start in &runs {
        // A run's codes lie one after another: one pass over them.
        let run = start..start + SAMPLE_RUN;
        let products = vectors.dot2_range(run.clone(), wide_query, wide_direction);
        for (slot, product) in run.zip(products) {
            if can_rank(slot) {
                population.semantic.add(f64::from(scored(slot, product).0));
            }
        }
    }
    let factor = n as f64 / (runs.len() * SAMPLE_RUN).max(1) as f64;
    population.semantic = population.semantic.scaled(factor);
    ScanScores { slots, rows, population: Some(population) }
}

/// How many of the records most similar by cosine [`UserIndex::nearest`] ranks by closeness
/// in meaning.
pub const MEANING_POOL: usize = 64;

/// A record near a written statement (see [`UserIndex::nearest`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Near {
    /// The record's rowid.
    pub rowid: i64,
    /// Its quantised cosine to the statement.
    pub cosine: f32,
    /// How close in meaning it is: its cosine without the notebook's common direction, in
    /// standard deviations above unrelated statements' (`None` without a calibration).
    pub related: Option<f32>,
}

impl UserIndex {
    /// The retrievable records nearest to `query`: the `limit` most similar by cosine, best
    /// first, then any of the `limit` closest in meaning that were not among them. Closeness
    /// in meaning is the cosine without the notebook's common direction, as a standard score
    /// against the cosines of unrelated statements (`calibration`, the embedder's), taken
    /// among the [`MEANING_POOL`] most similar by cosine (removing a shared direction
    /// reorders neighbours, it does not bring in far ones); without a calibration only the
    /// first list is returned, with no closeness.
    pub fn nearest(
        &self,
        query: &[f32],
        calibration: Option<&Calibration>,
        filter: ScanFilter<'_>,
        limit: usize,
    ) -> Vec<Near> {
        let (Some(split), Some(scope)) = (SplitQuery::new(self, query), self.scope_filter(&filter))
        else {
            return Vec::new();
        };
        let mut scored: Vec<(usize, f32)> = Vec::with_capacity(self.entries.len());
        for (slot, entry) in self.entries.iter().enumerate() {
            let scale = self.scales[slot];
            if scale == 0.0 || !entry.retrievable(&filter, scope) {
                continue;
            }
            scored.push((slot, self.dot_at(slot, &split) as f32 * split.scale * scale));
        }
        let pool = limit.max(MEANING_POOL);
        if scored.len() > pool {
            scored.select_nth_unstable_by(pool, |a, b| b.1.total_cmp(&a.1));
            scored.truncate(pool);
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        let common = calibration
            .and_then(|c| Some((Common::new(self, query, &split, &c.common)?, c.cosine_prior)));
        let near: Vec<Near> = scored
            .iter()
            .map(|&(slot, cosine)| Near {
                rowid: self.entries[slot].rowid,
                cosine,
                related: common.as_ref().map(|(common, (mean, deviation))| {
                    ((f64::from(common.exact(self, slot, cosine)) - mean) / deviation) as f32
                }),
            })
            .collect();
        let mut out: Vec<Near> = near.iter().take(limit).copied().collect();
        if common.is_some() {
            // The `limit` closest in meaning of the pool, those not already among the first.
            let mut by_meaning = near;
            let related = |n: &Near| n.related.unwrap_or(f32::MIN);
            by_meaning.sort_by(|a, b| related(b).total_cmp(&related(a)));
            by_meaning.truncate(limit);
            by_meaning.retain(|n| out.iter().all(|o| o.rowid != n.rowid));
            out.extend(by_meaning);
        }
        out
    }

    /// Collects the signals of every retrievable record for one query (BM25F of the
    /// `words`' terms with context, a modifier weighing less where its noun is absent, BM25 of its session, cosine to `query` (0 for a record without a vector, or
    /// without a query vector), speaker and date), lets `select` rank them, and returns the
    /// selected records in `select`'s order. For a large user, only the records that can rank
    /// are offered, with the statistics of all of them (see [`Signals::population`]).
    ///
    /// With `common` (an embedder's calibration mean, `mnemo_core::calibration`), cosines are
    /// taken without the notebook's common direction: this index's records' mean direction,
    /// with `common` as a prior.
    ///
    /// `notebooks` is how many notebooks the search ranks together, this one among them (1
    /// when it is ranked alone): a large notebook ranked among others offers fewer records
    /// (see [`SHARES_MAX`]).
    pub fn search(
        &self,
        words: QueryWords<'_>,
        query: Option<&[f32]>,
        common: Option<&[f32]>,
        filter: ScanFilter<'_>,
        notebooks: usize,
        select: &dyn Fn(&Signals<'_>) -> Vec<Fused>,
    ) -> Vec<Ranked> {
        // A scope the user has no record in: nothing is retrievable.
        let Some(scope) = self.scope_filter(&filter) else { return Vec::new() };
        let split = query.and_then(|q| SplitQuery::new(self, q));
        let common = match (query, &split, common) {
            (Some(query), Some(split), Some(prior)) => Common::new(self, query, split, prior),
            _ => None,
        };
        let retrievable = |entry: &Entry| entry.retrievable(&filter, scope);
        let ScanScores { slots, rows, population } =
            scan(self, split.as_ref(), common.as_ref(), words, notebooks, retrievable);
        let signals = Signals { rows, speakers: self.speakers.all(), population };
        select(&signals)
            .into_iter()
            .filter_map(|fused| {
                let row = signals.rows.get(fused.index)?;
                let (bm25, cosine) = (row.bm25, row.gate_cosine);
                let slot = *slots.get(fused.index)? as usize;
                let row = self.entries[slot].rowid;
                let dims = if self.scales[slot] == 0.0 { 0 } else { self.dims };
                Some(Ranked { row, fused, bm25, cosine, dims })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_as_f32_round_does() {
        let mut next = numbers(7);
        let halves = (-260..=260).map(|n| n as f32 * 0.5);
        let near_halves = (-254..=254).flat_map(|n| {
            let half = n as f32 * 0.5;
            [half.next_down(), half.next_up()]
        });
        let random = (0..10_000).map(|_| next() * 140.0);
        let extremes = [1e9, -1e9, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, f32::MIN, f32::NAN];
        for y in halves.chain(near_halves).chain(random).chain(extremes) {
            assert_eq!(round_to_code(y), y.round().clamp(-127.0, 127.0) as i8, "{y}");
        }
    }

    #[test]
    fn quantized_cosine_is_close_to_exact() {
        let a: Vec<f32> = (0..256).map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0).collect();
        let b: Vec<f32> = (0..256).map(|i| ((i * 53 % 97) as f32 - 48.0) / 40.0).collect();
        let exact = {
            let d: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
            let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
            d / (na * nb)
        };
        let (qa, sa) = quantize(&a);
        let (qb, sb) = quantize(&b);
        let approx = dot(&qa, &qb) as f32 * sa * sb;
        assert!((approx - exact).abs() < 0.01, "{approx} vs {exact}");
        let (qs, ss) = quantize(&a);
        assert!((dot(&qs, &qa) as f32 * ss * sa - 1.0).abs() < 0.01);
    }

    fn entry(rowid: i64) -> Entry {
        Entry {
            rowid,
            kind: Kind::Semantic,
            scope: 0,
            active: true,
            sensitive: false,
            expires_at: None,
            speaker: None,
            session: None,
            valid_from: 0,
            asks: false,
            of_self: false,
            answers: mnemo_core::answer::AnswerKinds::default(),
        }
    }

    #[test]
    fn nearest_in_meaning_sees_past_what_every_record_shares() {
        // Every vector shares a large component along e0; record 1 differs from the query
        // only a little along e1 but has less of e0, record 2 has as much e0 as the query but
        // points elsewhere. By raw cosine record 2 is nearest; in meaning, record 1.
        let unit = |v: Vec<f32>| {
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / n).collect::<Vec<f32>>()
        };
        let axis = |shared: f32, k: usize, w: f32| {
            let mut v = vec![0.0_f32; 16];
            v[0] = shared;
            v[k] = w;
            unit(v)
        };
        let mut user = UserIndex::default();
        let records = [(1, axis(0.5, 1, 1.0)), (2, axis(0.95, 2, 0.3)), (3, axis(0.9, 3, 0.4))];
        for (rowid, vector) in &records {
            let (codes, scale) = quantize(vector);
            user.upsert(entry(*rowid), &codes, scale, "plain");
        }
        let query = axis(0.9, 1, 0.4);
        let filter = ScanFilter { now: 0, kind: None, scope: None, exclude_sensitive: false };
        let raw = user.nearest(&query, None, filter, 1);
        assert_eq!(raw.iter().map(|n| n.rowid).collect::<Vec<_>>(), [2]);
        assert!(raw[0].related.is_none());
        let calibration = Calibration {
            common: (0..16).map(|k| if k == 0 { 0.9 } else { 0.0 }).collect(),
            cosine_prior: (0.0, 0.1),
            raw_cosine_prior: (0.5, 0.1),
            answer_separation: None,
        };
        let near = user.nearest(&query, Some(&calibration), filter, 1);
        // The most similar by cosine first, then the nearest in meaning.
        assert_eq!(near.iter().map(|n| n.rowid).collect::<Vec<_>>(), [2, 1], "{near:?}");
        let related = |rowid: i64| near.iter().find(|n| n.rowid == rowid).unwrap().related;
        assert!(related(1).unwrap() > related(2).unwrap() + 3.0, "{near:?}");
    }

    /// Each slot's dot product with `direction`, computed afresh.
    fn fresh_alongs(user: &UserIndex, direction: &[i8]) -> Vec<i32> {
        (0..user.entries.len()).map(|slot| user.along_of(slot, direction)).collect()
    }

    /// The pass over every slot's products gives each slot the cosine `without_common`
    /// gives it, to the bit, also where a record lies (nearly) along the direction and has
    /// nothing left to compare.
    #[test]
    fn every_cosine_at_once_is_each_slots_own() {
        let mut next = numbers(3);
        let prior: Vec<f32> = (0..256).map(|d| if d % 5 == 0 { 0.3 } else { 0.0 }).collect();
        let mut user = UserIndex::default();
        for rowid in 0..500 {
            let vector: Vec<f32> =
                (0..256).map(|d| next() + if d % 5 == 0 { 0.5 } else { 0.0 }).collect();
            let (codes, scale) = quantize(&vector);
            user.upsert(entry(rowid), &codes, scale, "plain");
        }
        let query: Vec<f32> = (0..256).map(|_| next()).collect();
        let split = SplitQuery::new(&user, &query).unwrap();
        let common = Common::new(&user, &query, &split, &prior).unwrap();
        let with_query: Vec<i32> = (0..500).map(|slot| user.dot_at(slot, &split)).collect();
        // The true products with the direction, then every third one as large as a record
        // along the direction itself would have (and larger).
        let along_exactly = (1.0 / (common.direction.scale * user.scales[0])) as i32;
        let alongs: Vec<i32> = (0..500)
            .map(|slot| match slot % 3 {
                0 => user.dot_at(slot, &common.direction),
                1 => along_exactly,
                _ => -2 * along_exactly,
            })
            .collect();
        let (cosines, raws) = user.cosines(&with_query, &alongs, split.scale, Some(&common));
        let mut degenerate = 0;
        for slot in 0..500 {
            let raw = with_query[slot] as f32 * split.scale * user.scales[slot];
            let expected = common.exact_from(&user, slot, raw, alongs[slot]);
            assert_eq!(raws[slot].to_bits(), raw.to_bits(), "raw cosine of slot {slot}");
            assert_eq!(cosines[slot].to_bits(), expected.to_bits(), "cosine of slot {slot}");
            degenerate += usize::from(expected == 0.0);
        }
        assert!(degenerate > 100, "{degenerate} slots with nothing left to compare");
    }

    #[test]
    fn kept_products_with_the_direction_rank_as_fresh_ones() {
        let mut next = numbers(5);
        // Records that share a component, so the notebook has a common direction.
        let vector = |next: &mut dyn FnMut() -> f32| -> Vec<f32> {
            (0..256).map(|d| next() + if d % 7 == 0 { 0.6 } else { 0.0 }).collect()
        };
        let prior: Vec<f32> = (0..256).map(|d| if d % 7 == 0 { 0.2 } else { 0.0 }).collect();
        let mut user = UserIndex::default();
        let write = |user: &mut UserIndex, rowid: i64, next: &mut dyn FnMut() -> f32| {
            let (codes, scale) = quantize(&vector(next));
            user.upsert(entry(rowid), &codes, scale, "plain");
        };
        for rowid in 0..3_000 {
            write(&mut user, rowid, &mut next);
        }
        let (mut corrected, mut searches) = (0, 0);
        for round in 0..60_i64 {
            // One change per round: a new record, a record written again, or one removed.
            match round % 3 {
                0 => write(&mut user, 1_000 + round, &mut next),
                1 => write(&mut user, round * 5, &mut next),
                _ => user.remove(round * 3 + 1),
            }
            let query: Vec<f32> = (0..256).map(|_| next()).collect();
            let split = SplitQuery::new(&user, &query).unwrap();
            let common = Common::new(&user, &query, &split, &prior).unwrap();
            let before = user.alongs.lock().unwrap().as_ref().map(|kept| kept.direction.clone());
            let scan_rows = |user: &UserIndex| {
                let all = |_: &Entry| true;
                scored(&scan(user, Some(&split), Some(&common), QueryWords::default(), 1, all))
                    .iter()
                    .map(|r| (r.slot, r.cosine.to_bits(), r.raw.to_bits()))
                    .collect::<Vec<_>>()
            };
            let kept = scan_rows(&user);
            searches += 1;
            let direction = {
                let alongs = user.alongs.lock().unwrap();
                let kept = alongs.as_ref().expect("a search keeps its products");
                assert_eq!(*kept.products, fresh_alongs(&user, &kept.direction), "round {round}");
                kept.direction.clone()
            };
            if let Some(before) = before.filter(|b| *b != direction) {
                let moved = before.iter().zip(&direction).filter(|(a, b)| a != b).count();
                corrected += usize::from(moved <= ALONG_MOVES_MAX);
            }
            // The same search with nothing kept.
            let saved = user.alongs.lock().unwrap().take();
            assert_eq!(kept, scan_rows(&user), "round {round}");
            *user.alongs.lock().unwrap() = saved;
        }
        // Most searches corrected the products the one before kept.
        assert!(corrected > searches / 2, "{corrected} of {searches} corrected");
    }

    /// A scanned record: its slot, its cosine as ranking sees it and raw, and its BM25F.
    struct Scored {
        slot: usize,
        cosine: f32,
        raw: f32,
        bm25: f64,
    }

    /// The records a scan lets rank, in its order (its cosines, widened from `f32`, back
    /// as they were computed).
    fn scored(scan: &ScanScores) -> Vec<Scored> {
        (scan.slots.iter().zip(&scan.rows))
            .map(|(&slot, row)| Scored {
                slot: slot as usize,
                cosine: row.cosine as f32,
                raw: row.gate_cosine as f32,
                bm25: row.bm25,
            })
            .collect()
    }

    /// Pseudo-random numbers in [-0.5, 0.5).
    fn numbers(seed: u64) -> impl FnMut() -> f32 {
        let mut state = seed;
        move || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (state >> 40) as f32 / (1 << 24) as f32 - 0.5
        }
    }

    #[test]
    fn large_users_get_exact_cosines_where_they_can_rank() {
        let mut next = numbers(11);
        let n = LISTS_MIN + 500;
        let mut user = UserIndex::default();
        let mut vectors = Vec::new();
        for rowid in 0..n as i64 {
            let vector: Vec<f32> = (0..256).map(|_| next()).collect();
            let text = if rowid == 77 { "zebra" } else { "plain" };
            let (codes, scale) = quantize(&vector);
            let mut entry = entry(rowid);
            entry.active = rowid != 4243;
            user.upsert(entry, &codes, scale, text);
            vectors.push(vector);
        }
        let query = vectors[4242].clone();
        let split = SplitQuery::new(&user, &query).unwrap();
        let active = |e: &Entry| e.active;
        let zebra = ["zebra".to_owned()];
        let words = QueryWords { terms: &zebra, modifiers: &[] };
        let scanned = scan(&user, Some(&split), None, words, 1, active);
        let rows = scored(&scanned);
        let exact =
            |slot: usize| user.dot_at(slot, &split) as f32 * split.scale * user.scales[slot];
        // Only some records can rank, each with its exact cosine, and none inactive.
        assert!(rows.len() < n / 8, "{} rows", rows.len());
        assert!(rows.iter().all(|r| r.cosine == exact(r.slot) && r.raw == r.cosine));
        assert!(rows.iter().all(|r| r.slot != 4243));
        // The nearest record and the lexical match (record 77) are among them.
        assert!(rows.iter().any(|r| r.slot == 4242));
        assert!(rows.iter().any(|r| r.slot == 77 && r.bm25 > 0.0));
        // The sampled statistics stand for every active record.
        let population = scanned.population.unwrap();
        let (count, mean) = (population.semantic.count(), population.semantic.mean());
        assert!((count - (n - 1) as f64).abs() < 10.0, "{count}");
        let true_mean = (0..n).filter(|&s| s != 4243).map(|s| f64::from(exact(s))).sum::<f64>()
            / (n - 1) as f64;
        assert!((mean - true_mean).abs() < 0.01, "{mean} vs {true_mean}");
        // Small users get the exact cosine of every record.
        let mut small = UserIndex::default();
        for rowid in 0..100 {
            let (codes, scale) = quantize(&vectors[rowid as usize]);
            small.upsert(entry(rowid), &codes, scale, "plain");
        }
        let split = SplitQuery::new(&small, &query).unwrap();
        let all = |_: &Entry| true;
        let scanned = scan(&small, Some(&split), None, QueryWords::default(), 1, all);
        // With the statistics of exactly those records, as fusion would take them from the
        // rows.
        let mut semantic = mnemo_core::retrieval::Moments::default();
        scanned.rows.iter().for_each(|row| semantic.add(row.cosine));
        assert_eq!(scanned.population.as_ref().map(|p| p.semantic), Some(semantic));
        let rows = scored(&scanned);
        assert_eq!(rows.len(), 100);
        for r in rows {
            assert_eq!(
                r.cosine,
                small.dot_at(r.slot, &split) as f32 * split.scale * small.scales[r.slot]
            );
        }
    }

    /// Records around many topics, as a notebook's are, with the leading dimensions carrying
    /// the most variance, as the built-in model's do: the records a search through the
    /// lists lets rank hold nearly all of the ten nearest by exact cosine, also after a
    /// quarter of the records were removed and others written since the lists were trained,
    /// and also when the notebook is ranked among others and offers only its share.
    #[test]
    fn the_lists_find_what_a_full_scan_finds() {
        let mut next = numbers(29);
        let dims = 128;
        let topics: Vec<Vec<f32>> = (0..300).map(|_| (0..dims).map(|_| next()).collect()).collect();
        let mut record =
            |topic: usize| -> Vec<f32> { topics[topic].iter().map(|x| x + 0.6 * next()).collect() };
        let mut user = UserIndex::default();
        let mut vectors = HashMap::new();
        let write = |user: &mut UserIndex, rowid: i64, vector: &Vec<f32>| {
            let (codes, scale) = quantize(vector);
            user.upsert(entry(rowid), &codes, scale, "plain");
        };
        for rowid in 0..40_000_i64 {
            let vector = record(rowid as usize % topics.len());
            write(&mut user, rowid, &vector);
            vectors.insert(rowid, vector);
        }
        let all = |_: &Entry| true;
        let recall = |user: &UserIndex,
                      vectors: &HashMap<i64, Vec<f32>>,
                      queries: &[Vec<f32>],
                      notebooks: usize| {
            let (mut found, mut total) = (0, 0);
            for query in queries {
                let cosine = |v: &Vec<f32>| {
                    let dot: f32 = v.iter().zip(query).map(|(a, b)| a * b).sum();
                    dot / v.iter().map(|x| x * x).sum::<f32>().sqrt()
                };
                let mut truth: Vec<(i64, f32)> =
                    vectors.iter().map(|(rowid, v)| (*rowid, cosine(v))).collect();
                truth.sort_by(|a, b| b.1.total_cmp(&a.1));
                let split = SplitQuery::new(user, query).unwrap();
                let mut rows =
                    scored(&scan(user, Some(&split), None, QueryWords::default(), notebooks, all));
                rows.sort_by(|a, b| b.cosine.total_cmp(&a.cosine));
                let top: Vec<i64> =
                    rows.iter().take(10).map(|r| user.entries[r.slot].rowid).collect();
                found += truth.iter().take(10).filter(|(rowid, _)| top.contains(rowid)).count();
                total += 10;
            }
            found as f64 / total as f64
        };
        let queries: Vec<Vec<f32>> = (0..40).map(|i| record(i * 7 % topics.len())).collect();
        // The first search of the index reads every head; the next ones train the lists.
        assert!(user.lists.lock().unwrap().is_none());
        let before = recall(&user, &vectors, &queries, 1);
        assert!(before >= 0.95, "recall@10 {before}");
        assert!(user.lists.lock().unwrap().is_some(), "the lists were not trained");
        // Ranked among others, the notebook offers fewer records, and still nearly all of its
        // nearest.
        let split = SplitQuery::new(&user, &queries[0]).unwrap();
        let offered = |notebooks| {
            scan(&user, Some(&split), None, QueryWords::default(), notebooks, all).rows.len()
        };
        assert!(offered(SHARES_MAX) * 2 < offered(1), "{} of {}", offered(SHARES_MAX), offered(1));
        // Its share costs at most a point of recall@10 (a record in a hundred).
        let among = recall(&user, &vectors, &queries, SHARES_MAX + 3);
        assert!(among >= before - 0.01, "recall@10 among others {among}, alone {before}");
        // Remove a quarter, write new records, and ask again: the lists followed.
        for rowid in (0..40_000_i64).step_by(4) {
            user.remove(rowid);
            vectors.remove(&rowid);
        }
        for rowid in 40_000..45_000_i64 {
            let vector = record(rowid as usize * 13 % topics.len());
            write(&mut user, rowid, &vector);
            vectors.insert(rowid, vector);
        }
        let after = recall(&user, &vectors, &queries, 1);
        assert!(after >= 0.95, "recall@10 after changes {after}");
    }

    /// Which speakers have an active record is counted as records are written, superseded
    /// and removed, and is what a large notebook's search reports as present.
    #[test]
    fn active_records_per_speaker_follow_every_change() {
        let mut user = UserIndex::default();
        let said = |rowid: i64, by: &str| IndexRow {
            rowid,
            kind: Kind::Episodic,
            scope: "default".into(),
            active: true,
            sensitive: false,
            expires_at: None,
            vector: vec![1.0, 0.0],
            text: "plain".into(),
            speaker: Some(by.into()),
            session: None,
            valid_from: 0,
        };
        user.upsert_row(said(1, "Ana"));
        user.upsert_row(said(2, "Ana"));
        user.upsert_row(said(3, "Ben"));
        let present = |user: &UserIndex, name: &str| {
            let s = user.speakers.find(name).unwrap() as usize;
            user.speaker_active.get(s).copied().unwrap_or(0)
        };
        assert_eq!((present(&user, "Ana"), present(&user, "Ben")), (2, 1));
        user.deactivate(1);
        user.deactivate(1);
        assert_eq!(present(&user, "Ana"), 1);
        user.remove(1);
        assert_eq!(present(&user, "Ana"), 1, "an inactive record was counted twice");
        // Rewriting record 3 as said by Ana moves its count.
        user.upsert_row(said(3, "Ana"));
        assert_eq!((present(&user, "Ana"), present(&user, "Ben")), (2, 0));
        user.remove(2);
        user.remove(3);
        assert_eq!(present(&user, "Ana"), 0);
    }

    #[test]
    fn remove_keeps_slots_consistent() {
        let mut u = UserIndex::default();
        for r in 1..=4 {
            u.upsert(entry(r), &[r as i8, -(r as i8)], r as f32, &format!("text{r}"));
        }
        u.remove(2);
        assert_eq!(u.entries.len(), 3);
        for (slot, e) in u.entries.iter().enumerate() {
            assert_eq!(u.slots[&e.rowid], slot);
            assert_eq!(u.head[slot * 2], e.rowid as i8);
            assert_eq!(u.scales[slot], e.rowid as f32);
        }
        u.remove(4);
        u.remove(9);
        assert_eq!(u.entries.iter().map(|e| e.rowid).collect::<Vec<_>>(), [1, 3]);
        // The lexical index follows the slots: rowid 3 sits in slot 1.
        let scores = u.lexical.score(&["text3".into()], &[]);
        assert!(scores.turns[1] > 0.0 && scores.turns[0] == 0.0);
    }
}
