//! The pages of freed maps are reused, within the memory plan: with [`LargePages`] installed (as
//! the `geogen` binary does), a render of maps made and freed step after step maps little more
//! fresh memory than its planned peak, because the renderer keeps freed blocks for the steps to
//! come as far as the plan's peak from there on allows. On a virtual machine every fresh page
//! costs several times a copy of it, so this is speed, not only tidiness.
//!
//! One test function, so nothing else allocates in this process while it measures.

use geogen::host::LargePages;
use geogen::{CompileOptions, RenderConfig, RunSettings, Script};

#[global_allocator]
static ALLOCATOR: LargePages = LargePages::new();

const SIZE: u32 = 1500;

#[test]
#[cfg(target_os = "linux")]
fn a_render_maps_little_more_fresh_memory_than_its_planned_peak() {
    // Two displacement maps made for each Distort and freed after it, a copy rotated, noise
    // added: the shape of the original's conflux and ouroboros, where fresh maps were 1.9-2.5
    // times the peak before freed blocks were kept for later steps.
    let source = r#"
        var base = HeightMap.RadialGradient([750, 750], 700, 1, 0);
        base.Distort(200, 40, 1);
        base.Distort(80, 20, 2);
        var copy = HeightMap.Clone(base);
        copy.Rotate(0.7);
        copy.Blur(10);
        base.Add(copy);
        var detail = HeightMap.Noise({128: 0.3, 32: 0.1}, 5);
        base.Add(detail);
        var other = HeightMap.Clone(base);
        other.Rotate(2.1);
        base.Add(other);
        yield base as "main";
    "#;
    let options = CompileOptions { main_map_mandatory: false, ..CompileOptions::default() };
    let script = Script::compile("reuse.ggs", source, &options).unwrap_or_else(|f| panic!("{f}"));
    let settings = RunSettings { render_width: Some(SIZE), render_height: Some(SIZE), ..RunSettings::default() };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let before = geogen::host::fresh_bytes();
    let rendered =
        pool.install(|| script.render(&settings, &RenderConfig::default(), None).unwrap_or_else(|f| panic!("{f}")));
    let fresh = geogen::host::fresh_bytes() - before;
    let peak = rendered.planned_peak;
    let map = u64::from(SIZE) * u64::from(SIZE) * 4;
    eprintln!("fresh {fresh} bytes, planned peak {peak} bytes, one map {map} bytes");
    assert!(peak >= 3 * map, "the script holds several maps at once ({peak} bytes planned)");
    assert!(fresh <= peak + peak / 10, "{fresh} bytes mapped fresh for a planned peak of {peak}");
}
