//! Property tests of the tile and scale contract (spec §4): for every operation and for random
//! chains of them,
//! * rendering any tile equals the same rectangle of a larger render, bit for bit;
//! * a 1-thread and a 4-thread pool give identical bits;
//! * for pointwise operations and noise, scale 0.5 reproduces the even pixels of scale 1.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use geogen_kernels::noise::default_noise_layers;
use geogen_render::{render, HeightMap, Rect, RenderConfig, RenderingSequence, Slot};
use geogen_stdlib::combiners::*;
use geogen_stdlib::filters::*;
use geogen_stdlib::generators::*;
use proptest::prelude::*;

/// A map generator (creates a slot).
#[derive(Clone, Debug)]
enum Gen {
    Flat(f64),
    Gradient((f64, f64), (f64, f64), f64, f64),
    Radial((f64, f64), f64, f64, f64),
    Noise(Vec<(u32, i32)>, u32, bool),
}

/// An operation on existing slots; slot operands are indices taken modulo the slot count.
#[derive(Clone, Debug)]
enum Op {
    Abs(u8),
    Invert(u8),
    AddNumber(u8, f64),
    MultiplyNumber(u8, f64),
    Clamp(u8, f64, f64),
    Fill(u8, f64),
    CropHeights(u8, f64, f64, f64),
    Blur(u8, f64),
    AddMap(u8, u8),
    MultiplyMap(u8, u8),
    Intersect(u8, u8),
    Unify(u8, u8),
    Combine(u8, u8, u8),
    AddMaskedNumber(u8, f64, u8),
    AddMaskedMap(u8, u8, u8),
    Clone(u8),
    NoiseLayer(u8, u32, i32, u32),
}

impl Op {
    /// Whether the op is pointwise in logical space (exact under the scale-0.5 property).
    fn is_pointwise(&self) -> bool {
        !matches!(self, Op::Blur(..))
    }
}

#[derive(Clone, Debug)]
struct Chain {
    gens: Vec<Gen>,
    ops: Vec<Op>,
}

fn height() -> impl Strategy<Value = f64> {
    prop_oneof![(-1.0f64..=1.0), Just(0.0), Just(1.0), Just(-1.0), (-1.5f64..1.5)]
}

fn point() -> impl Strategy<Value = (f64, f64)> {
    ((-80i32..80), (-80i32..80)).prop_map(|(x, y)| (f64::from(x), f64::from(y)))
}

fn layers() -> impl Strategy<Value = Vec<(u32, i32)>> {
    prop::collection::vec(
        (prop_oneof![Just(1u32), Just(2), Just(4), Just(8), Just(16), Just(3), Just(13), Just(64)], 0i32..=32767),
        1..4,
    )
}

fn gen(pointwise_only: bool) -> BoxedStrategy<Gen> {
    let base = prop_oneof![
        height().prop_map(Gen::Flat),
        (point(), point(), height(), height()).prop_map(|(a, b, f, t)| Gen::Gradient(a, b, f, t)),
        (layers(), any::<u32>(), any::<bool>()).prop_map(|(l, s, r)| Gen::Noise(l, s, r)),
    ];
    if pointwise_only {
        base.boxed()
    } else {
        prop_oneof![base, (point(), 0.0f64..60.0, height(), height()).prop_map(|(c, r, a, b)| Gen::Radial(c, r, a, b)),]
            .boxed()
    }
}

fn op(pointwise_only: bool) -> BoxedStrategy<Op> {
    let s = any::<u8>;
    let pointwise = prop_oneof![
        s().prop_map(Op::Abs),
        s().prop_map(Op::Invert),
        (s(), -2.0f64..2.0).prop_map(|(a, x)| Op::AddNumber(a, x)),
        (s(), -3.0f64..3.0).prop_map(|(a, x)| Op::MultiplyNumber(a, x)),
        (s(), height(), height()).prop_map(|(a, x, y)| Op::Clamp(a, x.min(y), x.max(y))),
        (s(), height()).prop_map(|(a, x)| Op::Fill(a, x)),
        (s(), height(), height(), height()).prop_map(|(a, x, y, r)| Op::CropHeights(a, x.min(y), x.max(y), r)),
        (s(), s()).prop_map(|(a, b)| Op::AddMap(a, b)),
        (s(), s()).prop_map(|(a, b)| Op::MultiplyMap(a, b)),
        (s(), s()).prop_map(|(a, b)| Op::Intersect(a, b)),
        (s(), s()).prop_map(|(a, b)| Op::Unify(a, b)),
        (s(), s(), s()).prop_map(|(a, b, c)| Op::Combine(a, b, c)),
        (s(), -2.0f64..2.0, s()).prop_map(|(a, x, m)| Op::AddMaskedNumber(a, x, m)),
        (s(), s(), s()).prop_map(|(a, b, m)| Op::AddMaskedMap(a, b, m)),
        s().prop_map(Op::Clone),
        (s(), prop_oneof![Just(1u32), Just(2), Just(4), Just(8), Just(32), Just(5)], 0i32..=32767, 0u32..3)
            .prop_map(|(a, w, amp, k)| Op::NoiseLayer(a, w, amp, k)),
    ];
    if pointwise_only {
        pointwise.boxed()
    } else {
        prop_oneof![4 => pointwise, 1 => (s(), 0.0f64..6.0).prop_map(|(a, r)| Op::Blur(a, r))].boxed()
    }
}

fn chain(pointwise_only: bool, max_ops: usize) -> impl Strategy<Value = Chain> {
    (prop::collection::vec(gen(pointwise_only), 1..=3), prop::collection::vec(op(pointwise_only), 1..=max_ops))
        .prop_map(|(gens, ops)| Chain { gens, ops })
}

/// Records the chain, then yields every slot over `rect`.
fn build(chain: &Chain, scale: f64, rect: Rect) -> RenderingSequence {
    let mut s = RenderingSequence::new(scale).unwrap();
    let mut slots: Vec<Slot> = Vec::new();
    for g in &chain.gens {
        let slot = match g {
            Gen::Flat(h) => s.push_create(Flat::new(*h), &[], None).unwrap(),
            Gen::Gradient(a, b, f, t) => s.push_create(Gradient::new(*a, *b, *f, *t), &[], None).unwrap(),
            Gen::Radial(c, r, a, b) => s.push_create(RadialGradient::new(*c, *r, *a, *b), &[], None).unwrap(),
            Gen::Noise(layers, seed, ridged) => {
                let table: BTreeMap<u32, i32> = layers.iter().copied().collect();
                push_noise(&mut s, &table, *seed, 1234, *ridged, None).unwrap()
            }
        };
        slots.push(slot);
    }
    for o in &chain.ops {
        let at = |i: &u8| slots[*i as usize % slots.len()];
        match o {
            Op::Abs(a) => s.push_modify(Abs, at(a), &[], None),
            Op::Invert(a) => s.push_modify(Invert, at(a), &[], None),
            Op::AddNumber(a, x) => s.push_modify(AddNumber::new(*x), at(a), &[], None),
            Op::MultiplyNumber(a, x) => s.push_modify(MultiplyNumber::new(*x), at(a), &[], None),
            Op::Clamp(a, x, y) => s.push_modify(ClampHeights::new(*x, *y), at(a), &[], None),
            Op::Fill(a, x) => s.push_modify(Fill::new(*x), at(a), &[], None),
            Op::CropHeights(a, x, y, r) => s.push_modify(CropHeights::new(*x, *y, *r), at(a), &[], None),
            Op::Blur(a, r) => s.push_modify(Blur::new(*r), at(a), &[], None),
            Op::AddMap(a, b) => s.push_modify(AddMap, at(a), &[at(b)], None),
            Op::MultiplyMap(a, b) => s.push_modify(MultiplyMap, at(a), &[at(b)], None),
            Op::Intersect(a, b) => s.push_modify(Intersect, at(a), &[at(b)], None),
            Op::Unify(a, b) => s.push_modify(Unify, at(a), &[at(b)], None),
            Op::Combine(a, b, m) => s.push_modify(Combine, at(a), &[at(b), at(m)], None),
            Op::AddMaskedNumber(a, x, m) => s.push_modify(AddMasked::with_number(*x), at(a), &[at(m)], None),
            Op::AddMaskedMap(a, b, m) => s.push_modify(AddMasked::with_map(), at(a), &[at(b), at(m)], None),
            Op::Clone(a) => {
                let c = s.push_create(Clone, &[at(a)], None).unwrap();
                slots.push(c);
                Ok(c)
            }
            Op::NoiseLayer(a, w, amp, k) => s.push_modify(NoiseLayer::new(*w, *amp, 42, *k, false), at(a), &[], None),
        }
        .unwrap();
    }
    for (i, slot) in slots.iter().enumerate() {
        s.push_yield(*slot, &format!("m{i}"), rect, None).unwrap();
    }
    s
}

fn render_chain(chain: &Chain, scale: f64, rect: Rect) -> BTreeMap<String, HeightMap> {
    render(build(chain, scale, rect), &RenderConfig::default()).unwrap()
}

fn bits(m: &HeightMap) -> Vec<u32> {
    m.data().iter().map(|v| v.to_bits()).collect()
}

fn pool(threads: usize) -> &'static rayon::ThreadPool {
    static ONE: OnceLock<rayon::ThreadPool> = OnceLock::new();
    static FOUR: OnceLock<rayon::ThreadPool> = OnceLock::new();
    let cell = if threads == 1 { &ONE } else { &FOUR };
    cell.get_or_init(|| rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap())
}

/// A large rectangle and a tile inside it (origin may be negative).
fn big_and_tile() -> impl Strategy<Value = (Rect, Rect)> {
    ((-100i64..100), (-100i64..100), (1u64..=48), (1u64..=48)).prop_flat_map(|(x, y, w, h)| {
        ((0..w), (0..h)).prop_flat_map(move |(tx, ty)| {
            ((1..=w - tx), (1..=h - ty))
                .prop_map(move |(tw, th)| (Rect::new(x, y, w, h), Rect::new(x + tx as i64, y + ty as i64, tw, th)))
        })
    })
}

fn scale() -> impl Strategy<Value = f64> {
    prop_oneof![Just(1.0), Just(0.5), Just(2.0), Just(0.75), Just(0.25)]
}

fn assert_tile_matches(chain: &Chain, scale: f64, big: Rect, tile: Rect) -> Result<(), TestCaseError> {
    let whole = render_chain(chain, scale, big);
    let part = render_chain(chain, scale, tile);
    prop_assert_eq!(whole.len(), part.len());
    for (name, map) in &part {
        let expected = whole[name].cut_out(tile).unwrap();
        prop_assert_eq!(bits(map), bits(&expected), "map {} differs on tile {} of {}", name, tile, big);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Every operation on its own (one generator or two, one op).
    #[test]
    fn every_operation_is_tile_exact(g in prop::collection::vec(gen(false), 1..=2), o in op(false), s in scale(), (big, tile) in big_and_tile()) {
        assert_tile_matches(&Chain { gens: g, ops: vec![o] }, s, big, tile)?;
    }

    /// Random chains of 1–6 operations on 1–3 slots.
    #[test]
    fn random_chains_are_tile_exact(c in chain(false, 6), s in scale(), (big, tile) in big_and_tile()) {
        assert_tile_matches(&c, s, big, tile)?;
    }

    /// One thread or four: identical bits.
    #[test]
    fn thread_count_does_not_matter(c in chain(false, 6), s in scale(), (big, _) in big_and_tile()) {
        let one = pool(1).install(|| render_chain(&c, s, big));
        let four = pool(4).install(|| render_chain(&c, s, big));
        for (name, map) in &one {
            prop_assert_eq!(bits(map), bits(&four[name]));
        }
    }

    /// Pointwise operations, gradients and noise at scale 0.5 reproduce the even pixels of scale 1.
    #[test]
    fn half_scale_reproduces_even_pixels(c in chain(true, 6), x in -40i64..40, y in -40i64..40, w in 1u64..24, h in 1u64..24) {
        // Noise layers whose wavelength is not even would need a lattice between pixels; keep the
        // generator's wavelengths powers of two (as the original's default table).
        let pow2 = |w: u32| w.is_power_of_two();
        prop_assume!(c.gens.iter().all(|g| !matches!(g, Gen::Noise(l, _, _) if l.iter().any(|(w, _)| !pow2(*w)))));
        prop_assume!(c.ops.iter().all(|o| !matches!(o, Op::NoiseLayer(_, w, _, _) if !pow2(*w))));
        prop_assume!(c.ops.iter().all(Op::is_pointwise));
        let half = render_chain(&c, 0.5, Rect::new(x, y, w, h));
        let full = render_chain(&c, 1.0, Rect::new(2 * x, 2 * y, 2 * w, 2 * h));
        for (name, m) in &half {
            let f = &full[name];
            for py in y..y + h as i64 {
                for px in x..x + w as i64 {
                    prop_assert_eq!(m.get(px, py).unwrap().to_bits(), f.get(2 * px, 2 * py).unwrap().to_bits(),
                        "map {} pixel ({}, {})", name, px, py);
                }
            }
        }
    }
}

/// The reference's verified example: default noise, physical [16, 16] at scale 0.5 equals
/// [32, 32] at scale 1; and a 32×32 tile at (32, 32) matches the 64×64 render.
#[test]
fn default_noise_at_half_scale_and_in_tiles() {
    let noise = |scale: f64, rect: Rect| {
        let mut s = RenderingSequence::new(scale).unwrap();
        let n = push_noise(&mut s, &default_noise_layers(), 0, 8, false, None).unwrap();
        s.push_yield(n, "main", rect, None).unwrap();
        render(s, &RenderConfig::default()).unwrap().remove("main").unwrap()
    };
    let half = noise(0.5, Rect::new(0, 0, 32, 32));
    let full = noise(1.0, Rect::new(0, 0, 64, 64));
    assert_eq!(half.get(16, 16).unwrap().to_bits(), full.get(32, 32).unwrap().to_bits());
    for y in 0..32 {
        for x in 0..32 {
            assert_eq!(half.get(x, y).unwrap().to_bits(), full.get(2 * x, 2 * y).unwrap().to_bits());
        }
    }
    // Retargeting one recorded sequence renders another tile without re-recording it.
    let mut s = RenderingSequence::new(1.0).unwrap();
    let n = push_noise(&mut s, &default_noise_layers(), 0, 8, false, None).unwrap();
    s.push_yield(n, "main", Rect::new(0, 0, 64, 64), None).unwrap();
    let tile_seq = s.retargeted(|_| Rect::new(32, 0, 32, 32)).unwrap();
    let retargeted = render(tile_seq, &RenderConfig::default()).unwrap().remove("main").unwrap();
    assert_eq!(retargeted.data(), full.cut_out(Rect::new(32, 0, 32, 32)).unwrap().data());
    let tile = noise(1.0, Rect::new(32, 32, 32, 32));
    assert_eq!(tile.data(), full.cut_out(Rect::new(32, 32, 32, 32)).unwrap().data());
    let negative = noise(1.0, Rect::new(-32, -32, 64, 64));
    assert_eq!(
        negative.cut_out(Rect::new(0, 0, 32, 32)).unwrap().data(),
        full.cut_out(Rect::new(0, 0, 32, 32)).unwrap().data()
    );
}
