//! The passes on the thesis' examples: bounds (Figures 20/21), lifetimes (Figures 18/19/26), the
//! memory plan and GGE3001, and stepping the renderer.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use geogen_kernels::noise::amplitude_units;
use geogen_render::{
    Bounds, Effect, KernelContext, Object, ObjectKind, OpContext, Operation, Rect, RenderConfig, RenderError,
    RenderMetadata, Renderer, RenderingSequence, Slot,
};
use geogen_stdlib::combiners::*;
use geogen_stdlib::filters::*;
use geogen_stdlib::generators::*;

/// A consumer that needs a margin, standing in for `HeightMap.DistanceMap(map, 100)`: a creating
/// step whose argument needs expand(B, S(distance)). Defined here to show that adding an operation
/// is one struct.
#[derive(Debug)]
struct MarginConsumer {
    distance: f64,
}

impl Operation for MarginConsumer {
    fn name(&self) -> &str {
        "HeightMap.DistanceMap"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn describe_params(&self) -> String {
        self.distance.to_string()
    }
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        vec![Bounds::Map(own.rect().expand(geogen_render::scale::scaled_distance(self.distance, ctx.scale)))]
    }
    fn render(&self, _: &KernelContext, _: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        Ok(())
    }
}

/// Thesis Figure 20/21, with Noise as Flat + one layer step.
fn figure_21(scale: f64) -> RenderingSequence {
    let mut s = RenderingSequence::new(scale).unwrap();
    let base = s.push_create(RadialGradient::new((500.0, 500.0), 400.0, 1.0, 0.0), &[], Some((1, 1))).unwrap();
    s.push_modify(Blur::new(20.0), base, &[], Some((2, 1))).unwrap();
    let noise = s.push_create(Flat::new(0.0), &[], Some((3, 10))).unwrap();
    s.push_modify(NoiseLayer::new(256, amplitude_units(0.8), 0, 0, false), noise, &[], Some((3, 10))).unwrap();
    s.push_modify(AddMap, base, &[noise], Some((3, 1))).unwrap();
    let dist = s.push_create(MarginConsumer { distance: 100.0 }, &[base], Some((4, 7))).unwrap();
    s.push_yield(dist, "main", Rect::new(0, 0, 1000, 1000), Some((4, 1))).unwrap();
    s
}

#[test]
fn figure_21_listing() {
    let listing = figure_21(1.0).listing();
    assert!(listing
        .starts_with("#1 {0} <- HeightMap.RadialGradient([500, 500], 400, 1, 0)\n#2 {0} <- HeightMap.Blur({0}, 20)\n"));
    assert!(listing.contains("#5 {0} <- HeightMap.AddMap({0}, {1})\n#6 {2} <- HeightMap.DistanceMap({0}, 100)\n"));
}

#[test]
fn figure_21_bounds() {
    // The thesis' bounds, without the support pass (which narrows the blur to the cone's square).
    let meta = RenderMetadata::calculate_with(&figure_21(1.0), false).unwrap();
    let r = |x, y, w, h| Bounds::Map(Rect::new(x, y, w, h));
    assert_eq!(
        meta.bounds,
        vec![
            r(-119, -119, 1240, 1240), // RadialGradient: the blur's window (19 before, 21 after) on top of the distance map's margin
            r(-100, -100, 1200, 1200), // Blur
            r(-100, -100, 1200, 1200), // Noise: Flat
            r(-100, -100, 1200, 1200), // Noise: layer
            r(-100, -100, 1200, 1200), // AddMap
            r(0, 0, 1000, 1000),       // DistanceMap
            r(0, 0, 1000, 1000),       // Yield
        ]
    );
    // Graph: AddMap reads the blur (arg 0) and the noise layer (arg 1).
    assert_eq!(meta.graph.producers(4), &[1, 3]);
    assert_eq!(meta.graph.consumers(1), &[4]);
    assert_eq!(meta.graph.entry_nodes(), vec![6]);
}

#[test]
fn figure_21_bounds_at_scale_half() {
    let meta = RenderMetadata::calculate_with(&figure_21(0.5), false).unwrap();
    // Margins scale: S(100) = 50, S(20) = 10 (a window of 9 before and 11 after).
    assert_eq!(meta.bounds[4], Bounds::Map(Rect::new(-50, -50, 1100, 1100)));
    assert_eq!(meta.bounds[0], Bounds::Map(Rect::new(-59, -59, 1120, 1120)));
}

#[test]
fn bounds_union_over_consumers_and_unused_steps_are_empty() {
    let mut s = RenderingSequence::new(1.0).unwrap();
    let a = s.push_create(Flat::new(0.1), &[], None).unwrap();
    let b = s.push_create(Clone, &[a], None).unwrap();
    s.push_modify(Blur::new(3.0), b, &[], None).unwrap();
    let unused = s.push_create(Flat::new(0.2), &[], None).unwrap();
    s.push_modify(Blur::new(50.0), unused, &[], None).unwrap();
    s.push_yield(a, "a", Rect::new(0, 0, 10, 10), None).unwrap();
    s.push_yield(b, "b", Rect::new(100, 0, 10, 10), None).unwrap();
    // The thesis' pass: the support pass would see that the blur of a constant map is that
    // constant, and need nothing of the clone.
    let meta = RenderMetadata::calculate_with(&s, false).unwrap();
    // `a` is needed by its own yield and (with the blur window, 2 before and 4 after) by the clone.
    assert_eq!(meta.bounds[0], Bounds::Map(Rect::new(0, -2, 114, 16)));
    assert!(meta.bounds[3].is_empty() && meta.bounds[4].is_empty(), "unused steps get empty bounds");
    assert_eq!(meta.plan.extent(3), Bounds::Map(Rect::EMPTY), "and allocate nothing");
    let mut r = Renderer::new(s, &RenderConfig::default()).unwrap();
    r.run().unwrap();
    assert_eq!(r.outputs()["a"].data(), &[0.1; 100]);
    assert_eq!(r.outputs()["b"].data(), &[0.1; 100]);
}

/// Thesis Figure 18/19: `Flat` then five RadialGradient + Unify, then a yield.
fn figure_19(size: u64) -> RenderingSequence {
    let mut s = RenderingSequence::new(1.0).unwrap();
    let m = s.push_create(Flat::new(0.0), &[], Some((1, 1))).unwrap();
    for i in 0..5 {
        let g =
            s.push_create(RadialGradient::new((i as f64 * 200.0, 200.0), 1.0, 0.0, 1.0), &[], Some((3, 17))).unwrap();
        s.push_modify(Unify, m, &[g], Some((3, 5))).unwrap();
    }
    s.push_yield(m, "main", Rect::new(0, 0, size, size), Some((5, 1))).unwrap();
    s
}

#[test]
fn figure_19_lifetimes() {
    let s = figure_19(100);
    let meta = RenderMetadata::calculate(&s).unwrap();
    let released: Vec<Vec<Slot>> = (0..s.len()).map(|i| meta.lifetimes.released_after(i).to_vec()).collect();
    assert_eq!(
        released,
        vec![
            vec![],
            vec![],
            vec![Slot(1)],
            vec![],
            vec![Slot(2)],
            vec![],
            vec![Slot(3)],
            vec![],
            vec![Slot(4)],
            vec![],
            vec![Slot(5)],
            vec![Slot(0)],
        ]
    );
}

#[test]
fn figure_19_memory_plan() {
    let s = figure_19(100);
    // The thesis' plan: without the support pass, which narrows these Unify steps (below).
    let meta = RenderMetadata::calculate_with(&s, false).unwrap();
    let map = 100 * 100 * 4;
    let bytes: Vec<u64> = (0..s.len()).map(|i| meta.plan.step_bytes(i)).collect();
    // One map at a time: each gradient is read once, by the Unify right after it, so it is
    // streamed band by band into the Unify and never held whole (the thesis's plan holds two);
    // the yield moves the map into the output (its last use).
    assert_eq!(bytes, vec![map; 12]);
    for i in 0..5 {
        assert_eq!(meta.plan.streamed_pass(1 + 2 * i), Some(2 + 2 * i), "gradient {i} streams into its Unify");
    }
    assert_eq!(meta.plan.streamed_pass(0), None);
    assert_eq!(meta.plan.peak(), 40_000);
    assert_eq!(meta.plan.peak_step(), Some(0));
    assert!(meta.plan.check(40_000).is_ok());
}

/// Figure 19's cones are 1 pixel wide with a rim height of 1, so after each Unify with the flat
/// map at 0 the map is 1 everywhere beyond the cones so far: the support pass has the last Unify
/// compute only the square around the five cones and fill the rest of the map with 1, and every
/// step before it is needed on that square only. The render is the same.
#[test]
fn the_support_pass_narrows_figure_19s_unify_steps_to_their_cones() {
    let s = figure_19(1000);
    let meta = RenderMetadata::calculate(&s).unwrap();
    let cones = Rect::new(-2, 198, 4 * 200 + 5, 5).intersect(&Rect::new(0, 0, 1000, 1000));
    let last = 10;
    let expected = geogen_render::bounds::Narrowed { part: cones, fill: Some(1.0) };
    assert_eq!(meta.narrowed[last], Some(expected), "the last Unify");
    for (i, bounds) in meta.bounds.iter().enumerate().take(last) {
        assert!(cones.contains_rect(&bounds.rect()), "step {i} is needed around the cones only: {bounds}");
    }
    let render = |support_pass| {
        let config = RenderConfig { support_pass, ..RenderConfig::default() };
        geogen_render::render(figure_19(1000), &config).unwrap()
    };
    assert_eq!(render(true), render(false));
    // A map that shows none of the cones is 1 everywhere: nothing before the last step is computed.
    let meta = RenderMetadata::calculate(&figure_19(100)).unwrap();
    assert_eq!(meta.narrowed[last], Some(geogen_render::bounds::Narrowed { part: Rect::EMPTY, fill: Some(1.0) }));
    assert!(meta.bounds[..last].iter().all(Bounds::is_empty));
    let render = |support_pass| {
        let config = RenderConfig { support_pass, ..RenderConfig::default() };
        geogen_render::render(figure_19(100), &config).unwrap()
    };
    assert_eq!(render(true), render(false));
}

#[test]
fn blur_scratch_and_self_aliasing_are_planned() {
    let mut s = RenderingSequence::new(1.0).unwrap();
    let m = s.push_create(Flat::new(0.25), &[], None).unwrap();
    s.push_modify(Blur::new(1.0), m, &[], None).unwrap();
    s.push_modify(AddMap, m, &[m], None).unwrap();
    s.push_yield(m, "main", Rect::new(0, 0, 10, 10), None).unwrap();
    // Without the support pass, which would fill the constant map's blur and sum instead.
    let meta = RenderMetadata::calculate_with(&s, false).unwrap();
    let px = 12 * 12; // extent after the AddMap... is the blur's margin: 12×12
    assert_eq!(
        meta.plan.step_bytes(1),
        px * 4 + geogen_kernels::blur::map_scratch_bytes(12, 12, 1),
        "map + the blur's rows of fixed-point scratch"
    );
    assert!(meta.plan.step_bytes(1) < px * 4 + px * 8, "less than a fixed-point copy of the map");
    assert_eq!(meta.plan.step_bytes(2), px * 4 * 2, "map + copy of itself");
    let out = geogen_render::render(s, &RenderConfig::default()).unwrap();
    assert_eq!(out["main"].data(), &[0.5; 100], "m.Add(m) doubles");
}

#[test]
fn a_yield_at_the_last_use_moves_the_map_and_an_earlier_one_copies_it() {
    let mut s = RenderingSequence::new(1.0).unwrap();
    let m = s.push_create(Gradient::new((0.0, 0.0), (9.0, 9.0), -1.0, 1.0), &[], None).unwrap();
    s.push_yield(m, "before", Rect::new(2, 3, 6, 5), None).unwrap();
    s.push_modify(Blur::new(1.0), m, &[], None).unwrap();
    s.push_yield(m, "main", Rect::new(0, 0, 10, 10), None).unwrap();
    let meta = RenderMetadata::calculate(&s).unwrap();
    let (extent, before, main) = (12 * 12 * 4, 6 * 5 * 4, 10 * 10 * 4);
    assert_eq!(meta.plan.step_bytes(1), extent + before, "the map is still needed: a copy");
    assert_eq!(meta.plan.step_bytes(3), extent + before, "last use: the 12×12 map is cropped into the output");
    let whole = geogen_render::render(s, &RenderConfig::default()).unwrap();
    // The same pixels as copying: compare with a render that keeps the map alive afterwards.
    let mut s2 = RenderingSequence::new(1.0).unwrap();
    let m2 = s2.push_create(Gradient::new((0.0, 0.0), (9.0, 9.0), -1.0, 1.0), &[], None).unwrap();
    s2.push_yield(m2, "before", Rect::new(2, 3, 6, 5), None).unwrap();
    s2.push_modify(Blur::new(1.0), m2, &[], None).unwrap();
    s2.push_yield(m2, "main", Rect::new(0, 0, 10, 10), None).unwrap();
    s2.push_modify(Invert, m2, &[], None).unwrap();
    let meta2 = RenderMetadata::calculate(&s2).unwrap();
    assert_eq!(meta2.plan.step_bytes(3), extent + before + main, "not the last use: a copy");
    let copied = geogen_render::render(s2, &RenderConfig::default()).unwrap();
    assert_eq!(whole, copied);
    assert_eq!(whole["main"].rect(), Rect::new(0, 0, 10, 10));
}

/// Tepui's shape: two maps blurred early (so their extents carry the blurs' margins), then a
/// noise map made and mixed with them at once.
fn mixed_at_the_end(size: u64) -> RenderingSequence {
    let mut s = RenderingSequence::new(1.0).unwrap();
    let c = size as f64 / 2.0;
    let low = s.push_create(RadialGradient::new((c, c), c * 0.8, 1.0, 0.0), &[], None).unwrap();
    s.push_modify(Blur::new(20.0), low, &[], None).unwrap();
    let mask = s.push_create(RadialGradient::new((c, c), c * 0.7, 1.0, -0.5), &[], None).unwrap();
    s.push_modify(Blur::new(5.0), mask, &[], None).unwrap();
    let high = s.push_create(Flat::new(0.0), &[], None).unwrap();
    s.push_modify(NoiseLayer::new(16, amplitude_units(0.4), 3, 0, false), high, &[], None).unwrap();
    s.push_modify(MultiplyNumber::new(0.1), high, &[], None).unwrap();
    s.push_modify(AddNumber::new(0.9), high, &[], None).unwrap();
    s.push_modify(Combine, high, &[low, mask], None).unwrap();
    s.push_yield(high, "main", Rect::new(0, 0, size, size), None).unwrap();
    s
}

#[test]
fn a_pass_mixing_in_a_dying_map_writes_over_its_buffer_with_the_same_bytes() {
    let size = 300u64;
    let s = mixed_at_the_end(size);
    let meta = RenderMetadata::calculate(&s).unwrap();
    let (low, mask) = ((size + 40) * (size + 40) * 4, (size + 10) * (size + 10) * 4);
    // The noise pass (Flat … Combine) takes over the low map's buffer (the first dying map it
    // reads), margins and all, so it holds the two maps it reads and no third.
    assert_eq!(meta.plan.fused_pass(4), 5);
    assert_eq!(meta.plan.taken_over_buffer(4), Some(Slot(0)));
    for step in 4..9 {
        assert_eq!(meta.plan.step_bytes(step), low + mask, "step {step}");
    }
    assert_eq!(meta.plan.step_bytes(9), size * size * 4, "the result, cropped to the render");
    // Run in passes and step by step (which runs every step alone): the same bytes.
    let mut passes = Renderer::new(s.clone(), &RenderConfig::default()).unwrap();
    passes.run().unwrap();
    let mut single = Renderer::new(s, &RenderConfig::default()).unwrap();
    while single.step().unwrap() {}
    let (a, b) = (&passes.outputs()["main"], &single.outputs()["main"]);
    assert_eq!(a.rect(), Rect::new(0, 0, size, size));
    assert!(a.data().iter().zip(b.data()).all(|(x, y)| x.to_bits() == y.to_bits()));
    assert!(a.data().iter().any(|&h| h > 0.85) && a.data().iter().any(|&h| h < 0.5), "both maps show");

    // A copy of a map used for the last time (conflux's second copy of its distance map) writes
    // its pass over that map's buffer, margins and all, with the same bytes.
    let copied = || {
        let mut s = RenderingSequence::new(1.0).unwrap();
        let low = s.push_create(RadialGradient::new((50.0, 50.0), 40.0, 1.0, 0.0), &[], None).unwrap();
        s.push_modify(Blur::new(3.0), low, &[], None).unwrap();
        let copy = s.push_create(Clone, &[low], None).unwrap();
        s.push_modify(MultiplyNumber::new(0.5), copy, &[], None).unwrap();
        s.push_yield(copy, "main", Rect::new(0, 0, 100, 100), None).unwrap();
        s
    };
    let meta = RenderMetadata::calculate(&copied()).unwrap();
    assert_eq!(meta.plan.fused_pass(2), 2);
    assert_eq!(meta.plan.taken_over_buffer(2), Some(Slot(0)));
    let mut passes = Renderer::new(copied(), &RenderConfig::default()).unwrap();
    passes.run().unwrap();
    let mut single = Renderer::new(copied(), &RenderConfig::default()).unwrap();
    while single.step().unwrap() {}
    let (a, b) = (&passes.outputs()["main"], &single.outputs()["main"]);
    assert_eq!(a.rect(), Rect::new(0, 0, 100, 100));
    assert!(a.data().iter().zip(b.data()).all(|(x, y)| x.to_bits() == y.to_bits()));
    assert!(a.data().iter().any(|&h| h > 0.4) && a.data().iter().any(|&h| h < 0.1), "the cone shows");
}

#[test]
fn memory_limit_is_gge3001_naming_need_limit_and_step() {
    let s = figure_19(100);
    let meta = RenderMetadata::calculate_with(&s, false).unwrap();
    let d = meta.plan.check(39_999).unwrap_err();
    assert_eq!(d.code, geogen_diag::codes::GGE3001);
    assert!(d.message.contains("40000"), "{}", d.message);
    assert!(d.message.contains("39999"), "{}", d.message);
    assert!(d.message.contains("#1 `HeightMap.Flat` (line 1, column 1)"), "{}", d.message);
    let config = RenderConfig { memory_limit: 1000, support_pass: false, ..RenderConfig::default() };
    let err = Renderer::new(s, &config).unwrap_err();
    assert!(matches!(err, RenderError::MemoryLimit { need: 40_000, limit: 1000, .. }));
}

#[test]
fn absurd_sizes_are_rejected_before_allocating() {
    let mut s = RenderingSequence::new(1.0).unwrap();
    let m = s.push_create(Flat::new(0.0), &[], None).unwrap();
    s.push_modify(Blur::new(1e15), m, &[], None).unwrap();
    s.push_yield(m, "main", Rect::new(0, 0, 1, 1), None).unwrap();
    // With the support pass, the blur of a flat map is that flat map, and nothing is allocated.
    assert!(Renderer::new(s.clone(), &RenderConfig::default()).is_ok());
    let err = Renderer::new(s, &RenderConfig { support_pass: false, ..RenderConfig::default() }).unwrap_err();
    assert_eq!(err.code(), geogen_diag::codes::GGE3001);
}

/// Found by the hardening review: `HeightMap.Flat(0).Blur(4294967295)` blamed the Flat. Its
/// margin makes the Flat's extent larger than a u64 can count in bytes; saturated, every step from
/// there on tied at u64::MAX and the tie went to the first. The Blur needs the Flat's map *and*
/// its own scratch, so it is the peak, and the message must not claim an exact byte count.
#[test]
fn the_peak_step_is_found_beyond_what_u64_bytes_can_count() {
    let mut s = RenderingSequence::new(1.0).unwrap();
    let m = s.push_create(Flat::new(0.0), &[], Some((1, 7))).unwrap();
    s.push_modify(Blur::new(4294967295.0), m, &[], Some((1, 25))).unwrap();
    s.push_yield(m, "main", Rect::new(0, 0, 10, 10), Some((1, 1))).unwrap();
    let meta = RenderMetadata::calculate_with(&s, false).unwrap();
    assert_eq!(meta.plan.peak_step(), Some(1), "the Blur");
    let d = meta.plan.check(1 << 30).unwrap_err();
    assert!(d.message.contains("#2 `HeightMap.Blur` (line 1, column 25)"), "{}", d.message);
    assert!(d.message.contains("more than"), "{}", d.message);
    assert!(d.message.contains("EiB"), "{}", d.message);
}

#[test]
fn renderer_steps_one_at_a_time_with_progress() {
    let s = figure_19(50);
    let total = s.len();
    let mut r = Renderer::new(s, &RenderConfig { support_pass: false, ..RenderConfig::default() }).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let last = Arc::new(AtomicUsize::new(0));
    let (seen, done) = (calls.clone(), last.clone());
    r.set_progress_callback(move |p| {
        seen.fetch_add(1, Ordering::SeqCst);
        assert!(p.done <= p.total);
        done.store(p.done, Ordering::SeqCst);
    });
    assert_eq!(r.progress().done, 0);
    assert!(r.step().unwrap());
    assert_eq!(r.progress().done, 1);
    assert!(r.slot(Slot(0)).is_some());
    assert!(r.outputs().is_empty());
    r.run().unwrap();
    assert!(r.is_finished());
    assert!(!r.step().unwrap());
    assert_eq!(r.progress().fraction(), 1.0);
    // One call for the first step, then one per pass: five gradients each streamed into its
    // Unify, and the yield.
    assert_eq!(calls.load(Ordering::SeqCst), 7);
    assert_eq!(last.load(Ordering::SeqCst), total);
    assert!(r.slot(Slot(0)).is_none(), "freed after its last use");
    let main = &r.outputs()["main"];
    assert_eq!(main.rect(), Rect::new(0, 0, 50, 50));
    assert_eq!(main.get(0, 0), Some(1.0));
}

#[test]
fn annotated_listing_mentions_bounds_and_releases() {
    let s = figure_19(10);
    let meta = RenderMetadata::calculate_with(&s, false).unwrap();
    let text = meta.annotated_listing(&s);
    assert!(
        text.contains("#3 {0} <- HeightMap.Unify({0}, {1})    bounds [0, 0, 10×10], 400 bytes, release {1}"),
        "{text}"
    );
    let meta = RenderMetadata::calculate(&s).unwrap();
    let text = meta.annotated_listing(&s);
    assert!(
        text.contains(
            "#11 {0} <- HeightMap.Unify({0}, {5})    bounds [0, 0, 10×10] (computes [empty], fills the rest with 1)"
        ),
        "{text}"
    );
    assert!(text.contains("#3 {0} <- HeightMap.Unify({0}, {1})    bounds [empty], 0 bytes"), "{text}");
}

/// Ouroboros' shape: a template copied and rotated twice, the second copy its last use; with
/// `spaced`, an unrelated step sits between each copy and its rotation, so no copy is elided.
fn rotated_copies(spaced: bool) -> RenderingSequence {
    use geogen_stdlib::transforms::Transform;
    let mut s = RenderingSequence::new(1.0).unwrap();
    let template = s.push_create(RadialGradient::new((60.0, 40.0), 50.0, 1.0, -0.5), &[], None).unwrap();
    s.push_modify(NoiseLayer::new(8, amplitude_units(0.2), 5, 0, false), template, &[], None).unwrap();
    for (k, angle) in [0.7f64, 2.1].into_iter().enumerate() {
        let copy = s.push_create(Clone, &[template], None).unwrap();
        if spaced {
            let other = s.push_create(Flat::new(k as f64 * 0.1), &[], None).unwrap();
            s.push_yield(other, &format!("other{k}"), Rect::new(0, 0, 4, 4), None).unwrap();
        }
        let rotate = Transform::new("HeightMap.Rotate", [angle.cos(), -angle.sin(), angle.sin(), angle.cos()]).unwrap();
        s.push_modify(rotate, copy, &[], None).unwrap();
        s.push_yield(copy, &format!("copy{k}"), Rect::new(-90, -80, 150, 130), None).unwrap();
    }
    s
}

#[test]
fn a_copy_read_once_by_a_transform_is_never_made_and_the_bytes_are_the_same() {
    let s = rotated_copies(false);
    let meta = RenderMetadata::calculate(&s).unwrap();
    let copy_steps: Vec<usize> = (0..s.len()).filter(|&i| s.steps()[i].op.name() == "HeightMap.Clone").collect();
    assert_eq!(copy_steps, [2, 5]);
    let result = 150 * 130 * 4;
    for &i in &copy_steps {
        assert!(meta.plan.elided_copy(i), "step {i}");
        assert_eq!(meta.plan.fused_pass(i), 0);
        // The copy allocates nothing; the rotation holds the template and its own result.
        assert_eq!(meta.plan.step_bytes(i + 1), meta.plan.step_bytes(i) + result, "step {i}");
    }
    let spaced = rotated_copies(true);
    let spaced_meta = RenderMetadata::calculate(&spaced).unwrap();
    assert!((0..spaced.len()).all(|i| !spaced_meta.plan.elided_copy(i)));
    assert!(meta.plan.peak() < spaced_meta.plan.peak());

    // Elided (in passes and step by step) and made: the same bytes.
    let mut passes = Renderer::new(s.clone(), &RenderConfig::default()).unwrap();
    passes.run().unwrap();
    let mut single = Renderer::new(s, &RenderConfig::default()).unwrap();
    while single.step().unwrap() {}
    let mut made = Renderer::new(spaced, &RenderConfig::default()).unwrap();
    made.run().unwrap();
    for name in ["copy0", "copy1"] {
        let reference = &made.outputs()[name];
        assert!(reference.data().iter().any(|&h| h > 0.3), "{name} shows the template");
        for run in [&passes, &single] {
            let out = &run.outputs()[name];
            assert_eq!(out.rect(), reference.rect());
            assert!(out.data().iter().zip(reference.data()).all(|(a, b)| a.to_bits() == b.to_bits()), "{name}");
        }
    }
}

/// Ouroboros' noise: one generator chain read near the origin by a small feature and, after being
/// modified, over the whole map far from there. Scheduling gives the second use a copy of the
/// chain, so neither is computed over the hull of both; the bytes are the same.
#[test]
fn a_generator_chain_read_far_apart_is_split_with_the_same_bytes() {
    let mut s = RenderingSequence::new(1.0).unwrap();
    let noise = s.push_create(Flat::new(0.0), &[], None).unwrap();
    s.push_modify(NoiseLayer::new(8, amplitude_units(0.5), 3, 0, false), noise, &[], None).unwrap();
    let feature = s.push_create(RadialGradient::new((-300.0, -300.0), 20.0, 1.0, 0.0), &[], None).unwrap();
    s.push_modify(AddMap, feature, &[noise], None).unwrap();
    s.push_yield(feature, "feature", Rect::new(-320, -320, 40, 40), None).unwrap();
    s.push_modify(MultiplyNumber::new(0.5), noise, &[], None).unwrap();
    s.push_yield(noise, "main", Rect::new(0, 0, 200, 200), None).unwrap();

    let hull = RenderMetadata::calculate(&s).unwrap().bounds[0].pixels();
    assert_eq!(hull, 520 * 520, "one chain: the hull of both uses");
    let split = s.scheduled();
    assert_eq!(split.len(), s.len() + 2, "a copy of the two-step chain");
    let meta = RenderMetadata::calculate(&split).unwrap();
    let flats: Vec<u64> = (0..split.len())
        .filter(|&i| split.steps()[i].op.name() == "HeightMap.Flat")
        .map(|i| meta.bounds[i].pixels())
        .collect();
    assert_eq!(flats, [40 * 40, 200 * 200]);
    let render = |seq: RenderingSequence| geogen_render::render(seq, &RenderConfig::default()).unwrap();
    assert_eq!(render(split), render(s));
}

/// Far out, bounds rules clip rectangles at the ends of the coordinate range and clamp sample
/// positions: the support rules must not claim anything there (found by review: a Move by 10^30,
/// a yield at i64::MAX, a transform sampling beyond 2^60). With and without the support pass, the
/// same bytes.
#[test]
fn the_support_pass_claims_nothing_at_the_ends_of_the_coordinate_range() {
    use geogen_stdlib::transforms::{Move, Transform};
    let moved = |offset: (f64, f64), rect: Rect| {
        let mut s = RenderingSequence::new(1.0).unwrap();
        let base = s.push_create(Flat::new(0.0), &[], None).unwrap();
        let feature = s.push_create(Flat::new(0.3), &[], None).unwrap();
        s.push_modify(Move { offset }, feature, &[], None).unwrap();
        s.push_modify(AddMap, base, &[feature], None).unwrap();
        s.push_yield(base, "main", rect, None).unwrap();
        s
    };
    let transformed = || {
        let mut s = RenderingSequence::new(1.0).unwrap();
        let base = s.push_create(Flat::new(-1.0), &[], None).unwrap();
        let feature = s.push_create(RadialGradient::new((0.0, 0.0), 20.0, 1.0, -1.0), &[], None).unwrap();
        s.push_modify(Move { offset: ((1u64 << 60) as f64, 0.0) }, feature, &[], None).unwrap();
        s.push_modify(Transform::new("HeightMap.Transform", [1e-4, 0.0, 0.0, 1e-4]).unwrap(), feature, &[], None)
            .unwrap();
        s.push_modify(Unify, base, &[feature], None).unwrap();
        s.push_yield(base, "main", Rect::new(500_000_000_000_000, 0, 4, 1), None).unwrap();
        s
    };
    let cases = [
        moved((-1e30, 0.0), Rect::new(0, 0, 4, 4)),
        moved((-100.0, 0.0), Rect::new(i64::MAX - 8, 0, 8, 4)),
        transformed(),
    ];
    for (k, s) in cases.into_iter().enumerate() {
        let render = |support_pass| {
            let config = RenderConfig { support_pass, ..RenderConfig::default() };
            geogen_render::render(s.clone(), &config).map(|maps| {
                maps.into_iter()
                    .map(|(n, m)| (n, m.data().iter().map(|h| h.to_bits()).collect::<Vec<_>>()))
                    .collect::<Vec<_>>()
            })
        };
        match (render(true), render(false)) {
            (Ok(with), Ok(without)) => assert_eq!(with, without, "case {k}"),
            (with, without) => assert_eq!(with.is_ok(), without.is_ok(), "case {k}: {with:?} / {without:?}"),
        }
    }
}

/// A small feature made and blurred on a constant sea, rotated and merged into a large map (each
/// island of `ring_of_isles`, ouroboros' template): the rotation reads the blurred feature over
/// the pre-image of its whole bounds, but the blur's result is −1 beyond the cone and its blur
/// radius, so the support pass narrows the blur to that square and fills the rest; the cone is
/// then needed around its square only, and the render is the same.
#[test]
fn a_blurred_feature_read_over_a_large_rectangle_computes_the_feature_only() {
    use geogen_stdlib::transforms::Transform;
    let island = || {
        let mut s = RenderingSequence::new(1.0).unwrap();
        let sea = s.push_create(Flat::new(-1.0), &[], None).unwrap();
        let cone = s.push_create(RadialGradient::new((0.0, 0.0), 40.0, 1.0, -1.0), &[], None).unwrap();
        s.push_modify(Blur::new(6.0), cone, &[], None).unwrap();
        let (c, d) = (0.6f64, 0.8f64);
        s.push_modify(Transform::new("HeightMap.Transform", [c, -d, d, c]).unwrap(), cone, &[], None).unwrap();
        s.push_modify(Unify, sea, &[cone], None).unwrap();
        s.push_yield(sea, "main", Rect::new(-400, -400, 800, 800), None).unwrap();
        s
    };
    let s = island();
    let meta = RenderMetadata::calculate(&s).unwrap();
    let blur = 2;
    let narrowed = meta.narrowed[blur].expect("the blur is narrowed");
    assert_eq!(narrowed.fill, Some(-1.0));
    let part = narrowed.part;
    assert!(part.contains_rect(&Rect::new(-46, -46, 93, 93)), "the cone and its blur: {part}");
    assert!(part.area() <= 60 * 60 * 4, "no more than the feature's square: {part}");
    assert!(meta.bounds[blur].rect().area() >= 4 * part.area(), "read over far more: {}", meta.bounds[blur]);
    // The cone is needed where the blur's part reads it, not over the blur's bounds.
    let ctx = OpContext { scale: 1.0 };
    assert_eq!(meta.bounds[1], Blur::new(6.0).required_bounds(Bounds::Map(part), &ctx)[0]);
    let render = |support_pass| {
        let config = RenderConfig { support_pass, ..RenderConfig::default() };
        geogen_render::render(island(), &config).unwrap()
    };
    assert_eq!(render(true), render(false));
}

/// Two noise maps blurred and added: `blur_first` blurs the first (more widely, so with more
/// scratch) before the second is made.
fn two_branches(blur_first: bool) -> RenderingSequence {
    let mut s = RenderingSequence::new(1.0).unwrap();
    let noise = |s: &mut RenderingSequence, seed: u32| {
        let map = s.push_create(Flat::new(0.0), &[], None).unwrap();
        s.push_modify(NoiseLayer::new(16, amplitude_units(0.5), seed, 0, false), map, &[], None).unwrap();
        map
    };
    let a = noise(&mut s, 1);
    if blur_first {
        s.push_modify(Blur::new(5.0), a, &[], None).unwrap();
    }
    let c = noise(&mut s, 2);
    if !blur_first {
        s.push_modify(Blur::new(5.0), a, &[], None).unwrap();
    }
    s.push_modify(Blur::new(3.0), c, &[], None).unwrap();
    s.push_modify(AddMap, a, &[c], None).unwrap();
    s.push_yield(a, "main", Rect::new(-10, -20, 300, 200), None).unwrap();
    s
}

/// Runs a sequence with `advance` on `threads` threads; returns the maps and, for each advance
/// that ran two units at once, the first steps of both.
fn advance_all(
    seq: RenderingSequence,
    concurrent_branches: bool,
    threads: usize,
) -> (std::collections::BTreeMap<String, geogen_render::HeightMap>, Vec<(usize, usize)>) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let config = RenderConfig { concurrent_branches, ..RenderConfig::default() };
        let mut r = Renderer::new(seq, &config).unwrap();
        let mut pairs = Vec::new();
        loop {
            let first = r.progress().done;
            let announced = r.next_advance_len();
            let ran = r.advance().unwrap();
            assert_eq!(ran, announced);
            if ran == 0 {
                break;
            }
            if let Some(second) = r.last_advance_alongside() {
                pairs.push((first, second));
            }
        }
        (r.into_outputs(), pairs)
    })
}

#[test]
fn independent_branches_run_at_once_within_the_plans_peak_with_the_same_bytes() {
    // The two noise maps are made at once: together they need no more than the first blur, which
    // holds both and its scratch. The two blurs are not run at once: both scratches together
    // would pass the peak.
    let (alone, none) = advance_all(two_branches(false), false, 2);
    assert!(none.is_empty());
    for threads in [1, 2, 3] {
        let (together, pairs) = advance_all(two_branches(false), true, threads);
        assert_eq!(pairs, [(0, 2)], "{threads} threads");
        assert_eq!(together, alone, "{threads} threads");
    }
    // Blurring the first map while the second is made would need the wider blur's scratch beside
    // both maps, more than any step needs alone.
    let (_, pairs) = advance_all(two_branches(true), true, 2);
    assert!(pairs.is_empty(), "{pairs:?}");
    // Dependent units never run at once: each blur reads its own noise, the sum reads both.
    let meta = RenderMetadata::calculate(&two_branches(false)).unwrap();
    assert_eq!(meta.plan.fused_pass(0), 2);
}
