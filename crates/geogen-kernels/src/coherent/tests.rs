//! The vector paths against the scalar reference (bit for bit, on random inputs), golden values of
//! each family, and the agreement of the row and point paths.

use super::*;
use geogen_render::Rect;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Coordinates of every magnitude, both signs, with exact integers and near-integers.
    fn coordinate(&mut self) -> f64 {
        let magnitude = [1.0, 10.0, 1000.0, 1.0e6, 3.0e9, 1.0e12][(self.next() % 6) as usize];
        let x = (self.unit() * 2.0 - 1.0) * magnitude;
        match self.next() % 8 {
            0 => x.floor(),
            1 => x.floor() - 1.0e-9,
            2 => x.floor() + 0.999_999_99,
            _ => x,
        }
    }
}

fn bases() -> Vec<Basis> {
    let mut out = vec![Basis::Perlin, Basis::Simplex];
    for output in [CellOutput::F1, CellOutput::F2, CellOutput::F2MinusF1, CellOutput::CellValue] {
        for distance in [Distance::Euclidean, Distance::Manhattan, Distance::Chebyshev] {
            for jitter in [1.0, 0.5, 0.0] {
                out.push(Basis::Cellular(Cellular { output, distance, jitter }));
            }
        }
    }
    out
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn every_vector_path_gives_the_scalar_bits_at_random_points() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for basis in bases() {
        for round in 0..4 {
            let n = 997; // not a multiple of the lanes: the tail is exercised too
            let xs: Vec<f64> = (0..n).map(|_| rng.coordinate()).collect();
            let ys: Vec<f64> = (0..n).map(|_| rng.coordinate()).collect();
            let seed = rng.next() as u32;
            let frequency = [1.0, 0.013, 1.0 / 3.0, 7.5][round];
            let mut reference = vec![0.0f32; n];
            eval_points(&basis, seed, frequency, &xs, &ys, &mut reference, Isa::Scalar);
            assert!(reference.iter().all(|v| v.is_finite()), "{basis:?}: non-finite values");
            for isa in Isa::available() {
                let mut got = vec![0.0f32; n];
                eval_points(&basis, seed, frequency, &xs, &ys, &mut got, isa);
                assert_eq!(bits(&got), bits(&reference), "{basis:?} on {isa:?}, seed {seed}, frequency {frequency}");
            }
        }
    }
}

fn random_spec(rng: &mut Rng) -> NoiseSpec {
    let all = bases();
    let basis = all[(rng.next() % all.len() as u64) as usize];
    let kind = [FractalKind::Fbm, FractalKind::Billow, FractalKind::Ridged][(rng.next() % 3) as usize];
    NoiseSpec {
        basis,
        wavelength: [1.0, 3.5, 16.0, 100.0, 1.0e6][(rng.next() % 5) as usize],
        fractal: Fractal {
            kind,
            octaves: 1 + (rng.next() % 6) as u32,
            gain: [0.5, 0.3, 0.8][(rng.next() % 3) as usize],
            lacunarity: [2.0, 1.7, 3.1][(rng.next() % 3) as usize],
            weighting: [0.0, 0.5, 1.0][(rng.next() % 3) as usize],
        },
        seed: rng.next() as u32,
    }
}

fn render(rect: Rect, scale: f64, spec: &NoiseSpec, isa: Isa) -> HeightMap {
    let mut map = HeightMap::try_zeroed(rect).expect("small map");
    render_field(&mut map, scale, spec, isa);
    map
}

#[test]
fn every_vector_path_gives_the_scalar_bits_on_fractal_rows() {
    let mut rng = Rng(42);
    for _ in 0..60 {
        let spec = random_spec(&mut rng);
        let x = (rng.next() % 4000) as i64 - 2000;
        let y = (rng.next() % 4000) as i64 - 2000;
        let rect = Rect::new(x, y, 1 + rng.next() % 40, 1 + rng.next() % 6);
        let scale = [1.0, 0.5, 0.25, 1.5, 3.0][(rng.next() % 5) as usize];
        let reference = render(rect, scale, &spec, Isa::Scalar);
        for isa in Isa::available() {
            let got = render(rect, scale, &spec, isa);
            assert_eq!(bits(got.data()), bits(reference.data()), "{spec:?} {rect:?} scale {scale} on {isa:?}");
        }
    }
}

#[test]
fn a_tile_has_the_bits_of_the_larger_render() {
    let mut rng = Rng(7);
    for _ in 0..20 {
        let spec = random_spec(&mut rng);
        let big = Rect::new(-37, -20, 75, 23);
        let whole = render(big, 0.75, &spec, Isa::best());
        let tile = Rect::new(-30 + (rng.next() % 40) as i64, -18 + (rng.next() % 10) as i64, 13, 7);
        let part = render(tile, 0.75, &spec, Isa::best());
        for y in tile.y..tile.y + 7 {
            for x in tile.x..tile.x + 13 {
                assert_eq!(part.get(x, y).map(f32::to_bits), whole.get(x, y).map(f32::to_bits), "{spec:?} ({x}, {y})");
            }
        }
    }
}

#[test]
fn the_row_path_and_the_point_path_agree() {
    let mut rng = Rng(99);
    for basis in bases() {
        let spec = NoiseSpec { basis, wavelength: 13.0, fractal: Fractal::SINGLE, seed: rng.next() as u32 };
        let rect = Rect::new(-20, 5, 41, 3);
        let scale = 0.5;
        let map = render(rect, scale, &spec, Isa::best());
        let xs: Vec<f64> = (0..41).map(|i| to_logical(-20 + i, scale)).collect();
        for row in 0..3 {
            let ys = vec![to_logical(5 + row, scale); 41];
            let mut out = vec![0.0f32; 41];
            eval_points(&basis, spec.seed, 1.0 / 13.0, &xs, &ys, &mut out, Isa::best());
            let clamped: Vec<f32> = out.iter().map(|v| v.clamp(-1.0, 1.0)).collect();
            let start = row as usize * 41;
            assert_eq!(bits(&clamped), bits(&map.data()[start..start + 41]), "{basis:?} row {row}");
        }
    }
}

#[test]
fn values_spread_over_the_height_range() {
    for basis in bases().into_iter().filter(|b| match b {
        Basis::Cellular(c) => c.jitter == 1.0,
        _ => true,
    }) {
        let spec = NoiseSpec { basis, wavelength: 8.0, fractal: Fractal::SINGLE, seed: 5 };
        let map = render(Rect::new(0, 0, 128, 128), 1.0, &spec, Isa::best());
        let (lo, hi) = map.data().iter().fold((f32::MAX, f32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
        assert!(hi - lo > 0.8 && lo >= -1.0 && hi <= 1.0, "{basis:?}: range {lo}..{hi}");
    }
}

/// Golden values: the exact output of each family at fixed seeds and coordinates. A change here
/// changes every terrain made with the noise: it must be a decision, not an accident.
#[test]
fn golden_values() {
    let points = [(0.3, 0.7), (-12.25, 5.5), (1234.567, -89.01), (-3.0e6, 2.5e7)];
    let (xs, ys): (Vec<f64>, Vec<f64>) = points.iter().copied().unzip();
    let cases: [(&str, Basis, &[u32]); 6] = [
        ("perlin", Basis::Perlin, &[3193084431, 3184604432, 1060855891, 3191536342]),
        ("simplex", Basis::Simplex, &[3208101175, 1012291878, 1055026774, 3196058009]),
        (
            "cellular F1",
            Basis::Cellular(Cellular { output: CellOutput::F1, distance: Distance::Euclidean, jitter: 1.0 }),
            &[3204745144, 3204781845, 3207229351, 3196387640],
        ),
        (
            "cellular F2-F1 manhattan",
            Basis::Cellular(Cellular { output: CellOutput::F2MinusF1, distance: Distance::Manhattan, jitter: 0.8 }),
            &[3196965464, 3210318094, 1058122512, 1038519072],
        ),
        (
            "cellular F2 chebyshev",
            Basis::Cellular(Cellular { output: CellOutput::F2, distance: Distance::Chebyshev, jitter: 1.0 }),
            &[3189486520, 3206797556, 1004308480, 1044787600],
        ),
        (
            "cellular value",
            Basis::Cellular(Cellular { output: CellOutput::CellValue, distance: Distance::Euclidean, jitter: 1.0 }),
            &[3211919136, 1031964720, 999819776, 3196014576],
        ),
    ];
    let mut report = String::new();
    let mut failed = false;
    for (name, basis, expected) in cases {
        let mut out = vec![0.0f32; points.len()];
        eval_points(&basis, 1337, 1.0 / 3.0, &xs, &ys, &mut out, Isa::Scalar);
        report.push_str(&format!("{name}: {:?} = {:?}\n", bits(&out), out));
        failed |= bits(&out) != expected;
    }
    // A fractal sum of each kind at a few pixels.
    let expected_fractals: [&[u32]; 3] = [
        &[1026341820, 1028592062, 1031925856],
        &[3194757558, 3182817792, 1036076625],
        &[1048132727, 1034699306, 3182125796],
    ];
    for (kind, expected) in
        [FractalKind::Fbm, FractalKind::Billow, FractalKind::Ridged].into_iter().zip(expected_fractals)
    {
        let spec = NoiseSpec {
            basis: Basis::Simplex,
            wavelength: 50.0,
            fractal: Fractal { kind, octaves: 5, gain: 0.5, lacunarity: 2.0, weighting: 0.5 },
            seed: 2026,
        };
        let map = render(Rect::new(-1, 7, 3, 1), 1.0, &spec, Isa::Scalar);
        report.push_str(&format!("{kind:?}: {:?} = {:?}\n", bits(map.data()), map.data()));
        failed |= bits(map.data()) != expected;
    }
    assert!(!failed, "golden values changed:\n{report}");
}

#[test]
fn the_fast_floor_is_libm_floor_bit_for_bit() {
    let mut rng = Rng(3);
    let edges = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 4.0e15, -4.0e15, 4.5e15, -4.5e15, 1.0e300, -1.0e300, f64::INFINITY];
    let randoms: Vec<f64> = (0..20_000).map(|_| rng.coordinate()).collect();
    for x in edges.into_iter().chain(randoms) {
        for v in [x, libm::nextafter(x, f64::INFINITY), libm::nextafter(x, f64::NEG_INFINITY)] {
            assert_eq!(simd::floor(v).to_bits(), libm::floor(v).to_bits(), "floor({v:e})");
        }
    }
}
