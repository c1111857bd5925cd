//! Dense layers, `y = x·W + b`: exactly in f32 through `ndarray`'s GEMM, or, for the short
//! inputs a query encoder sees (a few rows of `x`), on int8 weights. Quantised, `W` is held
//! as int8 codes with one f32 scale per output column (symmetric, round to
//! nearest; sentence vectors stay within a cosine of 0.999 of the f32 model's, see
//! `models/pack_minilm.py`), packed once, at load, into blocks of 16 output columns (each
//! block's rows one after another). A pass then reads a quarter of the f32 weights' bytes,
//! each once, in order, and repacks nothing: the encoder's cost is reading its weights.
//! On x86-64 CPUs with AVX2 and FMA (detected once) the tile runs on 256-bit vectors
//! through `pulp`'s safe wrappers of the intrinsics; elsewhere as plain loops.

use ndarray::{Array1, Array2, ArrayView2};

/// Output columns per packed block.
const COLUMNS: usize = 16;
/// Rows of `x` per tile.
const ROWS: usize = 4;

/// A dense layer.
#[derive(Debug)]
pub(crate) enum Linear {
    /// f32 weights (input × output) and bias.
    Exact(Array2<f32>, Array1<f32>),
    /// int8 weights.
    Quantised(Quantised),
}

impl Linear {
    /// A layer computed exactly from `weights` (input × output) and `bias`.
    pub(crate) fn exact(weights: Array2<f32>, bias: Array1<f32>) -> Self {
        Self::Exact(weights, bias)
    }

    /// A layer on `weights` (input × output) quantised to int8 per output column.
    pub(crate) fn quantised(weights: &Array2<f32>, bias: Array1<f32>) -> Self {
        Self::Quantised(Quantised::new(weights, bias))
    }

    /// `x·W + b` for the rows of `x`.
    pub(crate) fn apply(&self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        match self {
            Self::Exact(weights, bias) => x.dot(weights) + bias,
            Self::Quantised(layer) => layer.apply(x),
        }
    }
}

/// A dense layer with its weights quantised and packed for [`Quantised::apply`].
#[derive(Debug)]
pub(crate) struct Quantised {
    input: usize,
    output: usize,
    /// `output.div_ceil(COLUMNS)` blocks, each `input` rows of `COLUMNS` codes (zero beyond
    /// `output`).
    packed: Vec<i8>,
    /// Per output column: the value of code 1.
    scales: Array1<f32>,
    bias: Array1<f32>,
}

impl Quantised {
    /// Quantises and packs `weights` (input × output) and keeps `bias` (output).
    pub(crate) fn new(weights: &Array2<f32>, bias: Array1<f32>) -> Self {
        let (input, output) = weights.dim();
        let scales = weights
            .columns()
            .into_iter()
            .map(|column| column.fold(0.0_f32, |m, v| m.max(v.abs())) / 127.0)
            .collect::<Array1<f32>>();
        let blocks = output.div_ceil(COLUMNS);
        let mut packed = vec![0_i8; blocks * input * COLUMNS];
        for ((i, column), &w) in weights.indexed_iter() {
            let scale = scales[column];
            let code = if scale > 0.0 { (w / scale).round().clamp(-127.0, 127.0) as i8 } else { 0 };
            packed[((column / COLUMNS) * input + i) * COLUMNS + column % COLUMNS] = code;
        }
        Self { input, output, packed, scales, bias }
    }

    /// `x·W + b` for the rows of `x` (each `input` long).
    pub(crate) fn apply(&self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let rows = x.nrows();
        let mut y = vec![0.0_f32; rows * self.output];
        if x.ncols() == self.input {
            // Each tile of rows, transposed: the tile's values of input i side by side.
            let tiles: Vec<Vec<f32>> = (0..rows)
                .step_by(ROWS)
                .map(|first| {
                    let mut tile = vec![0.0_f32; self.input * ROWS];
                    for r in first..(first + ROWS).min(rows) {
                        for (i, &v) in x.row(r).iter().enumerate() {
                            tile[i * ROWS + r - first] = v;
                        }
                    }
                    tile
                })
                .collect();
            let pass = Pass { layer: self, tiles: &tiles, rows, y: &mut y };
            #[cfg(target_arch = "x86_64")]
            if let Some(simd) = avx2() {
                simd.vectorize(vector::Tiles(simd, pass));
                return self.scaled(rows, y);
            }
            pass.run(portable::tile);
        }
        self.scaled(rows, y)
    }

    /// The products of codes, scaled per column, plus the bias.
    fn scaled(&self, rows: usize, y: Vec<f32>) -> Array2<f32> {
        let mut y = Array2::from_shape_vec((rows, self.output), y)
            .unwrap_or_else(|_| Array2::zeros((rows, self.output)));
        y *= &self.scales;
        y += &self.bias;
        y
    }
}

/// One application of a layer: its input in transposed tiles, and where the products go.
struct Pass<'a> {
    layer: &'a Quantised,
    tiles: &'a [Vec<f32>],
    rows: usize,
    y: &'a mut [f32],
}

impl Pass<'_> {
    /// Every tile of the pass through `tile(w, x, sums)`: one packed block `w` times a
    /// transposed tile `x`, into `sums` ([`ROWS`] rows of [`COLUMNS`]). Blocks are the outer
    /// loop, so each weight is read once.
    #[inline(always)]
    fn run(self, tile: impl Fn(&[i8], &[f32], &mut [[f32; COLUMNS]; ROWS])) {
        let Quantised { input, output, .. } = *self.layer;
        for (block, w) in self.layer.packed.chunks_exact(input * COLUMNS).enumerate() {
            let start = block * COLUMNS;
            let width = COLUMNS.min(output - start);
            for (t, x) in self.tiles.iter().enumerate() {
                let mut sums = [[0.0_f32; COLUMNS]; ROWS];
                tile(w, x, &mut sums);
                let first = t * ROWS;
                for (r, sums) in sums.iter().enumerate().take(self.rows - first) {
                    let at = (first + r) * output + start;
                    self.y[at..at + width].copy_from_slice(&sums[..width]);
                }
            }
        }
    }
}

/// The CPU's AVX2 (with FMA) level, when it has one.
#[cfg(target_arch = "x86_64")]
fn avx2() -> Option<pulp::x86::V3> {
    static LEVEL: std::sync::OnceLock<Option<pulp::x86::V3>> = std::sync::OnceLock::new();
    *LEVEL.get_or_init(pulp::x86::V3::try_new)
}

/// The plain loops.
mod portable {
    use super::{COLUMNS, ROWS};

    /// A tile with one accumulator row of [`COLUMNS`] per tile row.
    pub(super) fn tile(w: &[i8], x: &[f32], sums: &mut [[f32; COLUMNS]; ROWS]) {
        for (wi, xi) in w.chunks_exact(COLUMNS).zip(x.chunks_exact(ROWS)) {
            for (sum, &xv) in sums.iter_mut().zip(xi) {
                for (s, &q) in sum.iter_mut().zip(wi) {
                    *s += xv * f32::from(q);
                }
            }
        }
    }
}

/// The AVX2 tile: four rows by sixteen columns of accumulators in eight registers.
#[cfg(target_arch = "x86_64")]
mod vector {
    use super::{COLUMNS, Pass, ROWS};
    use pulp::x86::V3;
    use std::arch::x86_64::__m128i;

    /// Every tile of a pass, run with the CPU's AVX2 and FMA enabled.
    pub(super) struct Tiles<'a>(pub(super) V3, pub(super) Pass<'a>);

    impl pulp::NullaryFnOnce for Tiles<'_> {
        type Output = ();

        #[inline(always)]
        fn call(self) {
            let Tiles(simd, pass) = self;
            pass.run(|w, x, sums| tile(simd, w, x, sums));
        }
    }

    /// One block times one transposed tile.
    #[inline(always)]
    fn tile(simd: V3, w: &[i8], x: &[f32], sums: &mut [[f32; COLUMNS]; ROWS]) {
        let zero = simd.avx._mm256_setzero_ps();
        let (mut a0, mut a1, mut b0, mut b1) = (zero, zero, zero, zero);
        let (mut c0, mut c1, mut d0, mut d1) = (zero, zero, zero, zero);
        for (wi, xi) in w.chunks_exact(COLUMNS).zip(x.chunks_exact(ROWS)) {
            let codes: [i8; COLUMNS] = wi.try_into().unwrap_or([0; COLUMNS]);
            let codes: __m128i = pulp::cast(codes);
            let high = simd.sse2._mm_unpackhi_epi64(codes, codes);
            let low = simd.avx._mm256_cvtepi32_ps(simd.avx2._mm256_cvtepi8_epi32(codes));
            let high = simd.avx._mm256_cvtepi32_ps(simd.avx2._mm256_cvtepi8_epi32(high));
            let xs: [f32; ROWS] = xi.try_into().unwrap_or([0.0; ROWS]);
            let [x0, x1, x2, x3] = xs.map(|v| simd.avx._mm256_set1_ps(v));
            a0 = simd.fma._mm256_fmadd_ps(x0, low, a0);
            a1 = simd.fma._mm256_fmadd_ps(x0, high, a1);
            b0 = simd.fma._mm256_fmadd_ps(x1, low, b0);
            b1 = simd.fma._mm256_fmadd_ps(x1, high, b1);
            c0 = simd.fma._mm256_fmadd_ps(x2, low, c0);
            c1 = simd.fma._mm256_fmadd_ps(x2, high, c1);
            d0 = simd.fma._mm256_fmadd_ps(x3, low, d0);
            d1 = simd.fma._mm256_fmadd_ps(x3, high, d1);
        }
        for (sum, (low, high)) in sums.iter_mut().zip([(a0, a1), (b0, b1), (c0, c1), (d0, d1)]) {
            let (low, high): ([f32; 8], [f32; 8]) = (pulp::cast(low), pulp::cast(high));
            sum[..8].copy_from_slice(&low);
            sum[8..].copy_from_slice(&high);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_plain_product_for_every_shape() {
        for (rows, input, output) in [(1, 3, 5), (4, 8, 16), (7, 16, 33), (14, 40, 48), (13, 5, 17)]
        {
            let x =
                Array2::from_shape_fn((rows, input), |(r, i)| ((r * 7 + i * 3) % 11) as f32 - 5.0);
            // Weights that are whole multiples of their column's scale quantise exactly.
            let w = Array2::from_shape_fn((input, output), |(i, o)| {
                if i == 0 { 127.0 * 0.01 } else { ((i * 5 + o) % 13) as f32 * 0.01 }
            });
            let bias = Array1::from_shape_fn(output, |o| o as f32 * 0.5);
            let want = x.dot(&w) + &bias;
            let got = Linear::quantised(&w, bias.clone()).apply(x.view());
            assert_eq!(Linear::exact(w.clone(), bias).apply(x.view()), want);
            assert_eq!(got.dim(), want.dim());
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-3, "{rows}x{input}x{output}: {g} vs {w}");
            }
        }
    }

    #[test]
    fn quantisation_keeps_each_weight_within_half_a_step() {
        let w = Array2::from_shape_fn((9, 3), |(i, o)| (i as f32 - 4.0) * 0.37 + o as f32 * 0.011);
        let layer = Quantised::new(&w, Array1::zeros(3));
        let eye = Array2::from_shape_fn((9, 9), |(r, c)| if r == c { 1.0 } else { 0.0 });
        let rebuilt = layer.apply(eye.view());
        for ((i, o), &want) in w.indexed_iter() {
            assert!((rebuilt[[i, o]] - want).abs() <= layer.scales[o] * 0.5 + 1e-6);
        }
    }
}
