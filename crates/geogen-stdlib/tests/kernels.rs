//! Numbers for each operation, rendered through real sequences.

use geogen_kernels::noise::LayerField;
use geogen_kernels::noise::{amplitude_units, default_noise_layers};
use geogen_render::rows::{zip1, zip2};
use geogen_render::{render, HeightMap, Operation, Rect, RenderConfig, RenderingSequence, Slot};
use geogen_stdlib::combiners::*;
use geogen_stdlib::filters::*;
use geogen_stdlib::generators::*;

fn seq(scale: f64) -> RenderingSequence {
    RenderingSequence::new(scale).unwrap()
}

/// Yields `slot` over `rect` and renders it.
fn render_slot(mut s: RenderingSequence, slot: Slot, rect: Rect) -> HeightMap {
    s.push_yield(slot, "main", rect, None).unwrap();
    render(s, &RenderConfig::default()).unwrap().remove("main").unwrap()
}

/// Renders `modifier` applied to a flat map of height `h` over 1×1.
fn pointwise(h: f64, modifier: impl Operation + 'static) -> f32 {
    let mut s = seq(1.0);
    let a = s.push_create(Flat::new(h), &[], None).unwrap();
    s.push_modify(modifier, a, &[], None).unwrap();
    render_slot(s, a, Rect::new(0, 0, 1, 1)).data()[0]
}

/// Renders `op` on flats `h` (target) and `others`, over 1×1.
fn combined(h: f64, others: &[f64], op: impl Operation + 'static) -> f32 {
    let mut s = seq(1.0);
    let a = s.push_create(Flat::new(h), &[], None).unwrap();
    let slots: Vec<Slot> = others.iter().map(|&o| s.push_create(Flat::new(o), &[], None).unwrap()).collect();
    s.push_modify(op, a, &slots, None).unwrap();
    render_slot(s, a, Rect::new(0, 0, 1, 1)).data()[0]
}

#[test]
fn flat_and_add() {
    assert_eq!(combined(0.5, &[0.1], AddMap), 0.6);
    assert_eq!(combined(0.8, &[0.5], AddMap), 1.0, "AddMap saturates");
    assert_eq!(combined(-0.8, &[-0.5], AddMap), -1.0);
    assert_eq!(pointwise(0.25, AddNumber::new(0.5)), 0.75);
    assert_eq!(pointwise(0.25, AddNumber::new(-3.0)), -1.0, "Add saturates");
    assert_eq!(pointwise(7.0, Fill::new(0.0)), 0.0);
    let mut s = seq(1.0);
    let a = s.push_create(Flat::new(5.0), &[], None).unwrap();
    assert_eq!(render_slot(s, a, Rect::new(-2, -2, 3, 3)).data(), &[1.0; 9], "Flat saturates its constant");
}

#[test]
fn pointwise_ops() {
    assert_eq!(pointwise(-0.5, Abs), 0.5);
    assert_eq!(pointwise(0.3, Invert), -0.3);
    assert_eq!(pointwise(0.5, MultiplyNumber::new(0.5)), 0.25);
    assert_eq!(pointwise(0.5, MultiplyNumber::new(4.0)), 1.0, "Multiply saturates");
    assert_eq!(pointwise(0.5, MultiplyNumber::new(f64::INFINITY)), 1.0);
    assert_eq!(pointwise(0.0, MultiplyNumber::new(f64::INFINITY)), 0.0, "0 × inf is NaN → 0, never NaN");
    assert_eq!(pointwise(0.9, ClampHeights::new(-0.5, 0.5)), 0.5);
    assert_eq!(pointwise(-0.9, ClampHeights::new(-0.5, 0.5)), -0.5);
    assert_eq!(pointwise(0.1, ClampHeights::new(-0.5, 0.5)), 0.1);
    assert_eq!(pointwise(0.9, CropHeights::new(-0.5, 0.5, 0.2)), 0.2);
    assert_eq!(pointwise(-0.9, CropHeights::new(-0.5, 0.5, 0.2)), 0.2);
    assert_eq!(pointwise(0.4, CropHeights::new(-0.5, 0.5, 0.2)), 0.4);
}

#[test]
fn map_combiners() {
    assert_eq!(combined(0.5, &[-0.25], MultiplyMap), -0.125);
    assert_eq!(combined(0.5, &[-0.25], Intersect), -0.25);
    assert_eq!(combined(0.5, &[-0.25], Unify), 0.5);
    // Combine: f = max(mask, 0); h·f + other·(1 − f).
    assert_eq!(combined(0.5, &[-0.5, 0.25], Combine), -0.25);
    assert_eq!(combined(0.5, &[-0.5, -0.75], Combine), -0.5, "negative mask selects other");
    assert_eq!(combined(0.5, &[-0.5, 1.0], Combine), 0.5);
    // AddMasked: addend × max(mask, 0).
    assert_eq!(combined(0.25, &[0.5], AddMasked::with_number(0.5)), 0.5);
    assert_eq!(combined(0.25, &[-0.5], AddMasked::with_number(0.5)), 0.25);
    assert_eq!(combined(0.25, &[0.5, 0.5], AddMasked::with_map()), 0.5);
    assert_eq!(combined(0.75, &[1.0, 1.0], AddMasked::with_map()), 1.0, "saturates");
}

#[test]
fn map_map_kernels_work_on_the_intersection() {
    let mut t = HeightMap::from_data(Rect::new(0, 0, 3, 2), vec![0.0; 6]).unwrap();
    let a = HeightMap::from_data(Rect::new(1, 1, 3, 3), vec![0.5; 9]).unwrap();
    zip1(&mut t, &a, |h, o| h + o);
    assert_eq!(t.data(), &[0.0, 0.0, 0.0, 0.0, 0.5, 0.5]);
    let b = HeightMap::from_data(Rect::new(2, -5, 1, 10), vec![0.25; 10]).unwrap();
    zip2(&mut t, &a, &b, |h, x, y| h + x + y);
    assert_eq!(t.data(), &[0.0, 0.0, 0.0, 0.0, 0.5, 1.25]);
    // Disjoint extents: nothing happens, nothing panics.
    zip1(&mut t, &HeightMap::from_data(Rect::new(50, 50, 1, 1), vec![1.0]).unwrap(), |_, o| o);
    zip1(&mut t, &HeightMap::empty(), |_, o| o);
    assert_eq!(t.data()[5], 1.25);
}

#[test]
fn clone_is_a_cut_out() {
    let mut s = seq(1.0);
    let a = s.push_create(Gradient::new((0.0, 0.0), (10.0, 0.0), -1.0, 1.0), &[], None).unwrap();
    let b = s.push_create(Clone, &[a], None).unwrap();
    s.push_modify(Invert, a, &[], None).unwrap();
    s.push_yield(a, "a", Rect::new(0, 0, 11, 1), None).unwrap();
    s.push_yield(b, "b", Rect::new(0, 0, 11, 1), None).unwrap();
    let out = render(s, &RenderConfig::default()).unwrap();
    let (a, b) = (&out["a"], &out["b"]);
    assert_eq!(b.data()[5], 0.0);
    assert_eq!(b.data()[10], 1.0);
    assert_eq!(a.data()[10], -1.0, "the original is inverted, the clone is not");
}

#[test]
fn gradient_values() {
    let mut s = seq(1.0);
    let g = s.push_create(Gradient::new((0.0, 0.0), (10.0, 0.0), -1.0, 1.0), &[], None).unwrap();
    let m = render_slot(s, g, Rect::new(-5, 0, 30, 4));
    assert_eq!(m.get(-5, 0), Some(-1.0), "before the source: from");
    assert_eq!(m.get(0, 3), Some(-1.0));
    assert_eq!(m.get(5, 3), Some(0.0), "perpendicular lines have equal heights");
    assert_eq!(m.get(10, 0), Some(1.0));
    assert_eq!(m.get(20, 2), Some(1.0), "beyond the destination: to");
    // At scale 2, physical 10 is logical 5.
    let mut s = seq(2.0);
    let g = s.push_create(Gradient::new((0.0, 0.0), (10.0, 0.0), -1.0, 1.0), &[], None).unwrap();
    assert_eq!(render_slot(s, g, Rect::new(10, 0, 1, 1)).data()[0], 0.0);
}

#[test]
fn radial_gradient_centre_and_rim() {
    let mut s = seq(1.0);
    let g = s.push_create(RadialGradient::new((10.0, 10.0), 10.0, 1.0, 0.0), &[], None).unwrap();
    let m = render_slot(s, g, Rect::new(0, 0, 40, 40));
    assert_eq!(m.get(10, 10), Some(1.0), "centre");
    assert_eq!(m.get(15, 10), Some(0.5), "halfway");
    assert_eq!(m.get(10, 20), Some(0.0), "at the radius");
    assert_eq!(m.get(30, 30), Some(0.0), "beyond: rim");
    assert_eq!(m.get(16, 18), Some(0.0), "d = 10");
    // Scale 0.5: centre at physical (5, 5), radius S(10) = 5.
    let mut s = seq(0.5);
    let g = s.push_create(RadialGradient::new((10.0, 10.0), 10.0, -1.0, 1.0), &[], None).unwrap();
    let m = render_slot(s, g, Rect::new(0, 0, 20, 20));
    assert_eq!(m.get(5, 5), Some(-1.0));
    assert_eq!(m.get(5, 10), Some(1.0));
    assert_eq!(m.get(8, 9), Some(1.0), "d = 5 = r");
    // Radius 0: only the centre pixel gets the centre height.
    let mut s = seq(1.0);
    let g = s.push_create(RadialGradient::new((1.0, 1.0), 0.0, 1.0, -1.0), &[], None).unwrap();
    let m = render_slot(s, g, Rect::new(0, 0, 3, 3));
    assert_eq!(m.data(), &[-1.0, -1.0, -1.0, -1.0, 1.0, -1.0, -1.0, -1.0, -1.0]);
}

#[test]
fn blur_of_a_step_edge() {
    // A vertical step at x = 0 (−1 left, 1 right), blurred with radius 2: the window of x is
    // [x − 1, x + 3], as the original's, so the ramp sits one pixel left of a centred one.
    let mut s = seq(1.0);
    let g = s.push_create(Gradient::new((-1.0, 0.0), (0.0, 0.0), -1.0, 1.0), &[], None).unwrap();
    s.push_modify(Blur::new(2.0), g, &[], None).unwrap();
    let m = render_slot(s, g, Rect::new(-4, 0, 8, 1));
    let expected = [-1.0f32, -0.6, -0.2, 0.2, 0.6, 1.0, 1.0, 1.0];
    for (v, e) in m.data().iter().zip(expected) {
        assert!((v - e).abs() < 1e-6, "{:?}", m.data());
    }
    // Far from the edge the result is exact, and symmetric about the step.
    assert_eq!(m.data()[1], -m.data()[4]);
}

#[test]
fn blur_radius_scales() {
    // At scale 0.5, Blur(4) has physical radius 2: same profile as Blur(2) at scale 1 on the
    // same physical step.
    let build = |scale: f64, radius: f64| {
        let mut s = seq(scale);
        let g = s.push_create(Gradient::new((-1.0 / scale, 0.0), (0.0, 0.0), -1.0, 1.0), &[], None).unwrap();
        s.push_modify(Blur::new(radius), g, &[], None).unwrap();
        render_slot(s, g, Rect::new(-4, 0, 8, 1))
    };
    assert_eq!(build(0.5, 4.0).data(), build(1.0, 2.0).data());
}

#[test]
fn noise_layer_hits_the_field_on_lattice_points() {
    let layer = NoiseLayer::new(16, 20000, 77, 0, false);
    let mut s = seq(1.0);
    let a = s.push_create(Flat::new(0.0), &[], None).unwrap();
    s.push_modify(layer.clone(), a, &[], None).unwrap();
    let m = render_slot(s, a, Rect::new(-32, -32, 65, 65));
    let field = LayerField { wavelength: 16, amplitude: 20000, current: layer.field.current };
    for (x, y) in [(0, 0), (16, 0), (-16, 32), (32, -32)] {
        assert_eq!(m.get(x, y), Some((field.value(x, y) as f64 / 32767.0) as f32), "lattice point ({x}, {y})");
    }
    // Between lattice points the values vary smoothly and stay in range.
    assert!(m.data().iter().all(|v| (-1.0..=1.0).contains(v)));
    let current_k1 = NoiseLayer::new(16, 20000, 77, 1, false).field.current;
    assert_ne!(current_k1, layer.field.current, "layer index advances the sequence");
}

#[test]
fn noise_layer_seed_derivation_matches_the_original() {
    // RandomSequence2D(seed 8): current = first MT output; layer k = k more advances.
    let mut mt = geogen_random::Mt19937::new(8);
    let first = mt.next_u32();
    let second = mt.next_u32();
    assert_eq!(NoiseLayer::new(4, 100, 8, 0, false).field.current, first);
    assert_eq!(NoiseLayer::new(4, 100, 8, 1, false).field.current, second);
    assert_eq!(geogen_random::field_int(first, 0, 0) as i32, 1860076204);
}

#[test]
fn sub_pixel_noise_saturates() {
    // Physical wavelength 1: per-pixel field values; a big amplitude on top of 0.9 must clamp.
    let mut s = seq(1.0);
    let a = s.push_create(Flat::new(0.9), &[], None).unwrap();
    s.push_modify(NoiseLayer::new(1, 32767, 5, 0, false), a, &[], None).unwrap();
    let m = render_slot(s, a, Rect::new(0, 0, 32, 32));
    assert!(m.data().iter().all(|v| (-1.0..=1.0).contains(v)));
    assert!(m.data().iter().filter(|&&v| v == 1.0).count() > 100, "many pixels saturate at 1");
}

#[test]
fn default_noise_and_ridged_noise_ranges() {
    let layers = default_noise_layers();
    assert_eq!(layers.len(), 9);
    assert_eq!(layers[&256], 16383);
    assert_eq!(amplitude_units(0.8), 26213);
    let mut s = seq(1.0);
    let n = push_noise(&mut s, &layers, 3, 99, false, None).unwrap();
    let r = push_noise(&mut s, &layers, 3, 99, true, None).unwrap();
    assert_eq!(s.len(), 1 + 9 + 1 + 9 + 2);
    s.push_yield(n, "n", Rect::new(-64, -64, 128, 128), None).unwrap();
    s.push_yield(r, "r", Rect::new(-64, -64, 128, 128), None).unwrap();
    let out = render(s, &RenderConfig::default()).unwrap();
    assert!(out["n"].data().iter().all(|v| (-1.0..=1.0).contains(v)));
    assert!(out["n"].data().iter().any(|&v| v > 0.1) && out["n"].data().iter().any(|&v| v < -0.1));
    assert!(out["r"].data().iter().all(|v| (0.0..=1.0).contains(v)), "ridged = 1 − Σ|layer|");
}
