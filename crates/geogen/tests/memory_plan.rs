//! The memory plan against what a render really allocates, counted by this test binary's global
//! allocator: the plan must cover every byte the renderer holds at once (so `--memory-limit`
//! holds), and its peak must be what the design says for scripts whose maps are made early and
//! read late, mixed in at once, or blurred: a map streamed into its only reader is never held
//! whole, a generator chain runs just before its reader, and a blur needs rows of scratch, not a
//! fixed-point copy of the map.
//!
//! One test function, so nothing else allocates in this process while it measures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use geogen::{CompileOptions, RenderConfig, RunSettings, Script};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; the counters are only read.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantees for this call, passed on unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(live, Ordering::SeqCst);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's guarantees for this call, passed on unchanged.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's guarantees for this call, passed on unchanged.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let live = LIVE.fetch_add(new_size - layout.size(), Ordering::SeqCst) + new_size - layout.size();
                PEAK.fetch_max(live, Ordering::SeqCst);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::SeqCst);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const SIZE: u32 = 600;
const MAP: u64 = SIZE as u64 * SIZE as u64 * 4;
/// What the plan leaves out: per-thread band and row scratch, noise caches, the VM.
const SLACK: u64 = 3 << 20;

/// Renders `source` at SIZE² with 2 threads; returns (planned peak, bytes allocated at most while
/// rendering beyond those live before).
fn measure(source: &str) -> (u64, u64) {
    let (planned, used, _) = measure_with_pairs(source);
    (planned, used)
}

/// [`measure`], and how many times two independent units ran at once.
fn measure_with_pairs(source: &str) -> (u64, u64, usize) {
    let options = CompileOptions { main_map_mandatory: false, ..CompileOptions::default() };
    let script = Script::compile("memory.ggs", source, &options).unwrap_or_else(|f| panic!("{f}"));
    let settings = RunSettings { render_width: Some(SIZE), render_height: Some(SIZE), ..RunSettings::default() };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    pool.install(|| {
        let before = LIVE.load(Ordering::SeqCst);
        PEAK.store(before, Ordering::SeqCst);
        let rendered = script.render(&settings, &RenderConfig::default(), None).unwrap_or_else(|f| panic!("{f}"));
        let used = (PEAK.load(Ordering::SeqCst) - before) as u64;
        assert_eq!(rendered.maps["main"].rect().area(), u64::from(SIZE) * u64::from(SIZE));
        let pairs = rendered.timings.iter().filter(|t| t.alongside.is_some()).count();
        (rendered.planned_peak, used, pairs)
    })
}

#[test]
fn the_plan_covers_what_renders_allocate_and_its_peak_drops_as_designed() {
    // A detail map made first and read last, around a base blurred with a wide radius: in the
    // script's order the detail is held through the blur (detail + base + the blur's scratch).
    let late_reader = r#"
        var detail = HeightMap.Noise({64: 0.3, 16: 0.1}, 7);
        detail.Multiply(0.5);
        var base = HeightMap.RadialGradient([300, 300], 250, 1, 0);
        base.Blur(100);
        var rough = HeightMap.Noise({128: 0.4, 32: 0.2}, 3);
        rough.Multiply(0.2);
        base.Add(rough);
        var mask = HeightMap.RadialGradient([300, 300], 200, 1, -1);
        detail.Combine(base, mask);
        yield detail;
    "#;
    let (planned, used) = measure(late_reader);
    assert!(used <= planned + SLACK, "allocated {used} bytes, planned {planned}");
    // The detail is made just before the Combine, rough is streamed into base.Add and the mask
    // into the Combine, so the peak is the Combine's detail and base (whose extent carries the
    // blur's margin: 99 pixels before, 101 after); the blur itself needs base and rows of scratch.
    let base = 800 * 800 * 4;
    assert_eq!(planned, MAP + base, "a map is {MAP}");
    assert!(used > MAP + base - SLACK, "the two maps are really held: {used}");

    // A map added to another at once, the original's idiom: one map and the output.
    let streamed = r#"
        var m = HeightMap.RadialGradient([300, 300], 250, 1, 0);
        var n = HeightMap.Noise({64: 0.5}, 1);
        n.Multiply(0.2);
        m.Add(n);
        var k = HeightMap.Gradient([0, 0], [600, 600], 0, 1);
        m.Intersect(k);
        yield m;
    "#;
    let (planned, used) = measure(streamed);
    assert!(used <= planned + SLACK, "allocated {used} bytes, planned {planned}");
    assert_eq!(planned, MAP, "one map: the noise and the gradient are streamed into their readers");

    // Tepui's end: two blurred maps mixed into a noise map made at once. The noise pass writes
    // its bands over the first dying map's buffer, so two maps are held at the end, not three.
    let mixed = r#"
        var low = HeightMap.RadialGradient([300, 300], 250, 1, 0);
        low.Blur(20);
        var mask = HeightMap.RadialGradient([300, 300], 200, 1, -1);
        mask.Blur(5);
        var high = HeightMap.Noise({64: 0.3, 16: 0.1}, 7);
        high.Multiply(0.1);
        high.Add(0.9);
        high.Combine(low, mask);
        yield high;
    "#;
    let (planned, used) = measure(mixed);
    assert!(used <= planned + SLACK, "allocated {used} bytes, planned {planned}");
    let (low, mask): (u64, u64) = (640 * 640 * 4, 610 * 610 * 4);
    // The peak is now the mask's blur: the support pass narrows it to the cone's square (the
    // mask is −1 beyond radius 200, 412² of its 610²), so it holds the low map, the blurred
    // square and the mask made over its bounds from it, and rows of scratch; with a third map it
    // would be low + mask + MAP.
    let square = 420 * 420 * 4;
    assert!(planned < low + mask + square + MAP / 2, "planned {planned}: no third map (a map is {MAP})");
    assert!(planned > low + mask + square / 2, "planned {planned}: the blur is narrowed, as designed");
    assert!(used >= low + mask, "the two maps are really held: {used}");

    // A blur narrowed to a small cone's rows and read through a thin column (found by review): its
    // target, made 2400 pixels wide for another reader, does not cover the column, so the blur's
    // result is made over the column; but its rows of scratch grow with the target it blurs (5 MB
    // more than a plan counting the column's allocated).
    let narrowed_blur = r#"
        var g = HeightMap.RadialGradient([300, 330], 3, 1, -1);
        var m = HeightMap.Flat(-1);
        m.Unify(g);
        var w = HeightMap.Clone(m).Add(HeightMap.Noise(CreateNoiseLayers(2, 8, 0.5), 3)).Rescale(0.25, 10);
        m.Blur(120);
        var col = HeightMap.Clone(m).Crop([295, 0], [305, 599]);
        w.Add(col);
        w.Unify(g);
        yield w;
    "#;
    let (planned, used) = measure(narrowed_blur);
    assert!(used <= planned + SLACK, "allocated {used} bytes, planned {planned}");

    // A blur of a map on its own: the map plus rows of scratch, not three maps' worth.
    let blur = r#"
        var m = HeightMap.RadialGradient([300, 300], 250, 1, 0);
        m.Blur(30);
        yield m;
    "#;
    let (planned, used) = measure(blur);
    assert!(used <= planned + SLACK, "allocated {used} bytes, planned {planned}");
    let extent = 660 * 660 * 4;
    assert!(planned < extent + extent / 2, "planned {planned}, the map is {extent}");

    // Two branches blurred apart and then added: units that neither read nor write what the
    // other writes run at once when the peak holds both (the first blur and the gradient: the
    // second, wider blur needs more), and what they allocate together stays within the plan.
    let branches = r#"
        var a = HeightMap.RadialGradient([200, 300], 250, 1, 0);
        a.Blur(4);
        var b = HeightMap.Gradient([0, 0], [600, 600], -1, 1);
        b.Blur(12);
        a.Add(b);
        yield a;
    "#;
    let (planned, used, pairs) = measure_with_pairs(branches);
    assert!(pairs >= 1, "the branches ran one after the other");
    assert!(used <= planned + SLACK, "allocated {used} bytes, planned {planned}");
}
