//! Integer dot products of int8 codes, the inner loop of every search and neighbour query.
//! On x86-64 CPUs with AVX2 (detected once, at the first call) they run as 256-bit vector
//! code through `pulp`'s safe wrappers of the intrinsics; elsewhere as plain loops the
//! compiler vectorises for the baseline target. Both give the same integers: the products
//! and sums are exact in `i32` for codes of up to 65,536 dimensions.

/// The dot product of two code vectors (over the shorter one's length).
pub(crate) fn dot(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = avx2() {
        return simd.vectorize(Dot(simd, a, b));
    }
    portable::dot(a, b)
}

/// Codes many rows are multiplied with, kept also widened to 16 bits (padded with zeros
/// to whole vector steps), so each row's pass widens only the row.
pub(crate) struct Wide {
    codes: Vec<i8>,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    wide: Vec<i16>,
}

impl Wide {
    /// The codes, and their widened copy.
    pub(crate) fn new(codes: &[i8]) -> Self {
        let mut wide: Vec<i16> = codes.iter().map(|&c| i16::from(c)).collect();
        wide.resize(codes.len().div_ceil(32) * 32, 0);
        Self { codes: codes.to_vec(), wide }
    }
}

/// A row's dot products with `a` and with `b`, reading the row once: (0, 0) unless all three
/// have the same length.
pub(crate) fn dot2_row(row: &[i8], a: &Wide, b: &Wide) -> (i32, i32) {
    if a.codes.len() != row.len() || b.codes.len() != row.len() {
        return (0, 0);
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = avx2() {
        return simd.vectorize(avx2_kernels::Dot2Row(simd, row, a, b));
    }
    portable::dot2_row(row, a, b)
}

/// For each row of `rows` (rows of `width` codes one after another, a final partial row
/// left out), its dot products with `a` and with `b` (each `width` codes long; (0, 0) for
/// every row otherwise), appended to `out` in row order.
pub(crate) fn dot2_rows(rows: &[i8], width: usize, a: &Wide, b: &Wide, out: &mut Vec<(i32, i32)>) {
    if width == 0 || a.codes.len() != width || b.codes.len() != width {
        out.extend(std::iter::repeat_n((0, 0), rows.len().checked_div(width).unwrap_or(0)));
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = avx2() {
        return simd.vectorize(avx2_kernels::Dot2Rows { simd, rows, width, a, b, out });
    }
    portable::dot2_rows(rows, width, a, b, out);
}

/// For each row of `rows` (rows of `width` codes one after another, a final partial row
/// left out), its dot product with `a` (`width` codes long; 0 for every row otherwise),
/// appended to `out` in row order.
pub(crate) fn dot_rows(rows: &[i8], width: usize, a: &Wide, out: &mut Vec<i32>) {
    if width == 0 || a.codes.len() != width {
        out.extend(std::iter::repeat_n(0, rows.len().checked_div(width).unwrap_or(0)));
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = avx2() {
        return simd.vectorize(avx2_kernels::DotRows { simd, rows, width, a, out });
    }
    portable::dot_rows(rows, width, a, out);
}

/// `f()`, compiled also for the CPU's AVX2 level and run so when it has one: for loops
/// the compiler vectorises, which then run on 256-bit vectors (`f` a closure marked
/// `#[inline(always)]`, whose loops call nothing that is not inlined).
pub(crate) fn with_vectors<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = avx2() {
        return simd.vectorize(f);
    }
    f()
}

/// The CPU's AVX2 level, when it has one.
#[cfg(target_arch = "x86_64")]
fn avx2() -> Option<pulp::x86::V3> {
    static LEVEL: std::sync::OnceLock<Option<pulp::x86::V3>> = std::sync::OnceLock::new();
    *LEVEL.get_or_init(pulp::x86::V3::try_new)
}

/// The plain loops, for CPUs without AVX2 and for the tails of the vector loops.
mod portable {
    /// Integer dot product over fixed 32-wide chunks with independent accumulators, so the
    /// compiler vectorises it for the baseline target.
    pub(super) fn dot(a: &[i8], b: &[i8]) -> i32 {
        const LANES: usize = 32;
        let n = a.len().min(b.len());
        let (a, b) = (&a[..n], &b[..n]);
        let mut acc = [0i32; LANES];
        let (mut ca, mut cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
        for (ca, cb) in (&mut ca).zip(&mut cb) {
            for i in 0..LANES {
                acc[i] += i32::from(ca[i]) * i32::from(cb[i]);
            }
        }
        acc.iter().sum::<i32>() + tail(ca.remainder(), cb.remainder())
    }

    /// [`super::dot2_rows`] with the plain loop.
    pub(super) fn dot2_rows(
        rows: &[i8],
        width: usize,
        a: &super::Wide,
        b: &super::Wide,
        out: &mut Vec<(i32, i32)>,
    ) {
        out.extend(rows.chunks_exact(width).map(|row| dot2_row(row, a, b)));
    }

    /// [`super::dot_rows`] with the plain loop.
    pub(super) fn dot_rows(rows: &[i8], width: usize, a: &super::Wide, out: &mut Vec<i32>) {
        out.extend(rows.chunks_exact(width).map(|row| dot(row, &a.codes)));
    }

    /// [`super::dot2_row`] with the plain loop.
    pub(super) fn dot2_row(row: &[i8], a: &super::Wide, b: &super::Wide) -> (i32, i32) {
        (dot(row, &a.codes), dot(row, &b.codes))
    }

    /// The dot product of what is left after the whole chunks.
    pub(super) fn tail(a: &[i8], b: &[i8]) -> i32 {
        a.iter().zip(b).map(|(&x, &y)| i32::from(x) * i32::from(y)).sum()
    }
}

#[cfg(target_arch = "x86_64")]
use avx2_kernels::Dot;

/// The AVX2 loops: 32 codes at a time, widened to 16-bit and multiplied pairwise into 32-bit
/// sums (`vpmaddwd`), over two accumulators.
#[cfg(target_arch = "x86_64")]
mod avx2_kernels {
    use super::portable::tail;
    use pulp::x86::V3;
    use std::arch::x86_64::__m256i;

    /// Codes per step.
    const STEP: usize = 32;

    /// One step of codes, widened to two vectors of sixteen 16-bit values.
    #[inline(always)]
    fn widen(simd: V3, chunk: &[i8]) -> (__m256i, __m256i) {
        let bytes: [i8; STEP] = chunk.try_into().unwrap_or([0; STEP]);
        let v: __m256i = pulp::cast(bytes);
        let low = simd.avx2._mm256_cvtepi8_epi16(simd.avx._mm256_castsi256_si128(v));
        let high = simd.avx2._mm256_cvtepi8_epi16(simd.avx2._mm256_extracti128_si256::<1>(v));
        (low, high)
    }

    /// One step of codes already widened (sixteen 16-bit values per vector).
    #[inline(always)]
    fn widened(step: &[i16]) -> (__m256i, __m256i) {
        let low: [i16; 16] = step[..16].try_into().unwrap_or([0; 16]);
        let high: [i16; 16] = step[16..STEP].try_into().unwrap_or([0; 16]);
        (pulp::cast(low), pulp::cast(high))
    }

    /// `sum` plus the pairwise products of two widened steps.
    #[inline(always)]
    fn accumulate(simd: V3, sum: __m256i, x: (__m256i, __m256i), y: (__m256i, __m256i)) -> __m256i {
        let low = simd.avx2._mm256_madd_epi16(x.0, y.0);
        let high = simd.avx2._mm256_madd_epi16(x.1, y.1);
        simd.avx2._mm256_add_epi32(sum, simd.avx2._mm256_add_epi32(low, high))
    }

    /// The eight lanes of an accumulator added up.
    #[inline(always)]
    fn total(sum: __m256i) -> i32 {
        let lanes: [i32; 8] = pulp::cast(sum);
        lanes.iter().sum()
    }

    /// `a · b`, run with the CPU's AVX2 enabled.
    pub(super) struct Dot<'a>(pub(super) V3, pub(super) &'a [i8], pub(super) &'a [i8]);

    impl pulp::NullaryFnOnce for Dot<'_> {
        type Output = i32;

        #[inline(always)]
        fn call(self) -> i32 {
            let Dot(simd, a, b) = self;
            let n = a.len().min(b.len());
            let (mut ca, mut cb) = (a[..n].chunks_exact(STEP), b[..n].chunks_exact(STEP));
            let mut sum = simd.avx._mm256_setzero_si256();
            for (x, y) in (&mut ca).zip(&mut cb) {
                sum = accumulate(simd, sum, widen(simd, x), widen(simd, y));
            }
            total(sum) + tail(ca.remainder(), cb.remainder())
        }
    }

    /// Each row's `(row · a, row · b)`, run with the CPU's AVX2 enabled.
    pub(super) struct Dot2Rows<'a> {
        pub(super) simd: V3,
        pub(super) rows: &'a [i8],
        pub(super) width: usize,
        pub(super) a: &'a super::Wide,
        pub(super) b: &'a super::Wide,
        pub(super) out: &'a mut Vec<(i32, i32)>,
    }

    impl pulp::NullaryFnOnce for Dot2Rows<'_> {
        type Output = ();

        #[inline(always)]
        fn call(self) {
            let Dot2Rows { simd, rows, width, a, b, out } = self;
            out.reserve(rows.len() / width);
            // A plain loop, not a closure: a closure is compiled without the AVX2 the
            // enclosing function is compiled with, and the intrinsics would not inline.
            for row in rows.chunks_exact(width) {
                out.push(row_products(simd, row, a, b));
            }
        }
    }

    /// Each row's `row · a`, run with the CPU's AVX2 enabled.
    pub(super) struct DotRows<'a> {
        pub(super) simd: V3,
        pub(super) rows: &'a [i8],
        pub(super) width: usize,
        pub(super) a: &'a super::Wide,
        pub(super) out: &'a mut Vec<i32>,
    }

    impl pulp::NullaryFnOnce for DotRows<'_> {
        type Output = ();

        #[inline(always)]
        fn call(self) {
            let DotRows { simd, rows, width, a, out } = self;
            out.reserve(rows.len() / width);
            let whole = width - width % STEP;
            for row in rows.chunks_exact(width) {
                let mut sum = simd.avx._mm256_setzero_si256();
                for start in (0..whole).step_by(STEP) {
                    let end = start + STEP;
                    sum = accumulate(
                        simd,
                        sum,
                        widen(simd, &row[start..end]),
                        widened(&a.wide[start..end]),
                    );
                }
                out.push(total(sum) + tail(&row[whole..], &a.codes[whole..]));
            }
        }
    }

    /// `(row · a, row · b)`, run with the CPU's AVX2 enabled.
    pub(super) struct Dot2Row<'a>(
        pub(super) V3,
        pub(super) &'a [i8],
        pub(super) &'a super::Wide,
        pub(super) &'a super::Wide,
    );

    impl pulp::NullaryFnOnce for Dot2Row<'_> {
        type Output = (i32, i32);

        #[inline(always)]
        fn call(self) -> (i32, i32) {
            let Dot2Row(simd, row, a, b) = self;
            row_products(simd, row, a, b)
        }
    }

    /// A row's products with `a` and `b` (each as long as the row), widening only the row.
    #[inline(always)]
    fn row_products(simd: V3, row: &[i8], a: &super::Wide, b: &super::Wide) -> (i32, i32) {
        let whole = row.len() - row.len() % STEP;
        let (mut with_a, mut with_b) =
            (simd.avx._mm256_setzero_si256(), simd.avx._mm256_setzero_si256());
        for start in (0..whole).step_by(STEP) {
            let end = start + STEP;
            let wide = widen(simd, &row[start..end]);
            with_a = accumulate(simd, with_a, wide, widened(&a.wide[start..end]));
            with_b = accumulate(simd, with_b, wide, widened(&b.wide[start..end]));
        }
        (
            total(with_a) + tail(&row[whole..], &a.codes[whole..]),
            total(with_b) + tail(&row[whole..], &b.codes[whole..]),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes from a fixed generator, covering the extremes.
    fn codes(len: usize, seed: u32) -> Vec<i8> {
        let mut state = seed.wrapping_mul(2_654_435_761).max(1);
        (0..len)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                match i % 17 {
                    0 => 127,
                    1 => -127,
                    _ => (state % 255) as i32 as i8,
                }
            })
            .collect()
    }

    fn reference(a: &[i8], b: &[i8]) -> i32 {
        a.iter().zip(b).map(|(&x, &y)| i32::from(x) * i32::from(y)).sum()
    }

    #[test]
    fn every_length_gives_the_exact_integer() {
        for len in [0, 1, 5, 31, 32, 33, 64, 95, 192, 256, 384, 1000] {
            let (x, a, b) = (codes(len, 1), codes(len, 2), codes(len, 3));
            assert_eq!(dot(&x, &a), reference(&x, &a), "dot, {len} dims");
            assert_eq!(portable::dot(&x, &a), reference(&x, &a), "portable dot, {len} dims");
            let (wide_a, wide_b) = (Wide::new(&a), Wide::new(&b));
            let expected = (reference(&x, &a), reference(&x, &b));
            assert_eq!(dot2_row(&x, &wide_a, &wide_b), expected, "dot2_row, {len} dims");
            assert_eq!(portable::dot2_row(&x, &wide_a, &wide_b), expected, "plain, {len} dims");
        }
    }

    #[test]
    fn rows_get_the_exact_integers_of_each_row() {
        for width in [0, 7, 32, 64, 100, 192] {
            let rows = codes(width * 5 + 3, 6);
            let (a, b) = (codes(width, 7), codes(width, 8));
            let mut out = vec![(1, 1)];
            dot2_rows(&rows, width, &Wide::new(&a), &Wide::new(&b), &mut out);
            if width > 0 {
                let mut plain = vec![(1, 1)];
                portable::dot2_rows(&rows, width, &Wide::new(&a), &Wide::new(&b), &mut plain);
                assert_eq!(out, plain, "plain loop, {width} codes");
            }
            let expected: Vec<(i32, i32)> = std::iter::once((1, 1))
                .chain((0..5).map(|r| {
                    let row = &rows[r * width..(r + 1) * width];
                    (reference(row, &a), reference(row, &b))
                }))
                .collect();
            assert_eq!(out, if width == 0 { vec![(1, 1)] } else { expected }, "{width} codes");
            let mut one = vec![1];
            dot_rows(&rows, width, &Wide::new(&a), &mut one);
            let mut plain = vec![1];
            if width > 0 {
                portable::dot_rows(&rows, width, &Wide::new(&a), &mut plain);
            }
            let firsts: Vec<i32> = out.iter().map(|p| p.0).collect();
            assert_eq!(one, firsts, "one product, {width} codes");
            if width > 0 {
                assert_eq!(plain, firsts, "one product, plain loop, {width} codes");
            }
        }
    }

    #[test]
    fn the_extremes_do_not_overflow() {
        let x = vec![-127i8; 4096];
        let a = vec![-127i8; 4096];
        let b = vec![127i8; 4096];
        assert_eq!(dot(&x, &a), 127 * 127 * 4096);
        assert_eq!(
            dot2_row(&x, &Wide::new(&a), &Wide::new(&b)),
            (127 * 127 * 4096, -127 * 127 * 4096)
        );
    }

    #[test]
    fn lengths_that_differ_use_the_shorter() {
        let (x, a) = (codes(100, 4), codes(70, 5));
        assert_eq!(dot(&x, &a), reference(&x[..70], &a));
        // A row products only with codes of its own length.
        assert_eq!(dot2_row(&x, &Wide::new(&a), &Wide::new(&x)), (0, 0));
    }
}
