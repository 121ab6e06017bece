//! Facts about the original GeoGen (spec `geogen-reference.md`) checked through the library
//! facade: script text in, rendered heights (and their 16-bit PNG samples) out.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use geogen::diag::codes;
use geogen::{CompileOptions, Failure, HeightMap, RenderConfig, Rendered, RunSettings, Script};

fn compile(source: &str) -> Script {
    Script::compile("facts.ggs", source, &CompileOptions::default()).unwrap_or_else(|f| panic!("compile failed:\n{f}"))
}

fn sized(width: u32, height: u32) -> RunSettings {
    RunSettings { render_width: Some(width), render_height: Some(height), ..RunSettings::default() }
}

fn render_with(source: &str, settings: &RunSettings) -> Result<Rendered, Failure> {
    compile(source).render(settings, &RenderConfig::default(), None)
}

fn render(source: &str, settings: &RunSettings) -> Rendered {
    render_with(source, settings).unwrap_or_else(|f| panic!("render failed:\n{f}"))
}

fn main_map(rendered: &Rendered) -> &HeightMap {
    rendered.maps.get("main").expect("a map named main")
}

/// The 16-bit samples of a grayscale 16-bit PNG.
fn png_samples(bytes: &[u8]) -> (u32, u32, Vec<u16>) {
    let decoder = png::Decoder::new(bytes);
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("a frame");
    assert_eq!((info.color_type, info.bit_depth), (png::ColorType::Grayscale, png::BitDepth::Sixteen));
    let samples = buf[..info.buffer_size()].chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
    (info.width, info.height, samples)
}

/// Reference §4.7 (Add: saturating) and §5.9 / spec README §3 (PNG value = round(h × 32767) + 32767).
#[test]
fn flat_half_plus_flat_tenth_is_six_tenths() {
    let rendered = render("yield HeightMap.Flat(0.5).Add(HeightMap.Flat(0.1));", &sized(16, 8));
    let map = main_map(&rendered);
    assert_eq!((map.rect().width, map.rect().height), (16, 8));
    let expected = 0.5f32 + 0.1f32;
    for &h in map.data() {
        assert!((h - 0.6).abs() < 1e-6, "{h} is not 0.6");
        assert_eq!(h.to_bits(), expected.to_bits(), "{h} is not the f32 sum 0.5 + 0.1");
    }
    let field = geogen_io::HeightField::new(16, 8, map.data()).expect("a field");
    let bytes = geogen_io::encode(geogen_io::Format::Png16, &field).expect("a PNG");
    let (w, h, samples) = png_samples(&bytes);
    assert_eq!((w, h), (16, 8));
    let want = (0.6f64 * 32767.0).round() as u16 + 32767;
    assert_eq!(want, 52427);
    assert!(samples.iter().all(|&s| s == want), "PNG samples {:?} are not all {want}", &samples[..4]);
}

/// Reference §5.6: a render at scale 0.5 (32×32) reproduces exactly the even pixels of the
/// scale-1 render (64×64); physical [16, 16] at 0.5 equals [32, 32] at 1.
#[test]
fn half_scale_noise_is_the_even_pixels_of_the_full_scale_noise() {
    let source = "yield HeightMap.Noise();";
    let full = render(source, &sized(64, 64));
    let half = render(source, &RunSettings { render_scale: 0.5, ..sized(32, 32) });
    let (full, half) = (main_map(&full), main_map(&half));
    assert_eq!((full.rect().width, full.rect().height), (64, 64));
    assert_eq!((half.rect().width, half.rect().height), (32, 32));
    assert_eq!(half.data()[16 * 32 + 16].to_bits(), full.data()[32 * 64 + 32].to_bits());
    for y in 0..32 {
        for x in 0..32 {
            let (a, b) = (half.data()[y * 32 + x], full.data()[2 * y * 64 + 2 * x]);
            assert_eq!(
                a.to_bits(),
                b.to_bits(),
                "half-scale pixel ({x}, {y}) = {a}, full-scale ({}, {}) = {b}",
                2 * x,
                2 * y
            );
        }
    }
    // Not a constant map: the comparison means something.
    let first = half.data()[0];
    assert!(half.data().iter().any(|&h| h != first));
}

fn messages(source: &str, settings: &RunSettings) -> Vec<String> {
    let script = Script::compile(
        "facts.ggs",
        source,
        &CompileOptions { test_library: false, main_map_mandatory: false, ..CompileOptions::default() },
    )
    .unwrap_or_else(|f| panic!("compile failed:\n{f}"));
    script.run(settings).unwrap_or_else(|f| panic!("run failed:\n{f}")).messages
}

/// `{k: v}` lines of a printed array.
fn printed_pairs(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| line.trim().split_once(": "))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// Reference §4.2: the documented `CreateNoiseLayers` tables, as `Print` shows them (6 significant
/// digits, keys ascending).
#[test]
fn create_noise_layers_prints_the_documented_tables() {
    let out = messages(
        r#"Print("{0}", CreateNoiseLayers()); Print("{0}", CreateNoiseLayers(8, 64, 0.3));"#,
        &RunSettings::default(),
    );
    assert_eq!(out.len(), 2, "{out:?}");
    let expected_default = [
        ("1", "0.00195695"),
        ("2", "0.00391389"),
        ("4", "0.00782779"),
        ("8", "0.0156556"),
        ("16", "0.0313112"),
        ("32", "0.0626223"),
        ("64", "0.125245"),
        ("128", "0.250489"),
        ("256", "0.500978"),
    ];
    let expected_custom = [("8", "0.135413"), ("16", "0.193447"), ("32", "0.276352"), ("64", "0.394789")];
    for (text, expected) in [(&out[0], &expected_default[..]), (&out[1], &expected_custom[..])] {
        let got = printed_pairs(text);
        let want: Vec<(String, String)> = expected.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        assert_eq!(got, want, "printed:\n{text}");
    }
}

/// Reference §4.2: seed 0 gives 0.548814, then `Random(0, 10)` = 5.92845, then 0.715189.
#[test]
fn random_with_seed_zero() {
    let out = messages(
        r#"Print("{0}", Random()); Print("{0}", Random(0, 10)); Print("{0}", Random());"#,
        &RunSettings::default(),
    );
    assert_eq!(out, ["0.548814", "5.92845", "0.715189"]);
}

/// Reference §2.4 / §5.5: without a host map size, a finite map is the render:
/// `MapWidth = floor(RenderWidth / RenderScale)`, and `@` points resolve against it.
#[test]
fn finite_map_size_comes_from_the_render_size() {
    let source = r#"
        metadata { Width: Finite, Height: Finite }
        Print("{0} {1}", Parameters.MapWidth, Parameters.MapHeight);
        yield HeightMap.RadialGradient(@[0.25, 0.5], 8, 1, -1);
    "#;
    for (scale, (map_w, map_h), centre) in
        [(1.0, (40, 30), (10, 15)), (0.5, (80, 60), (10, 15)), (2.0, (20, 15), (10, 14))]
    {
        let settings = RunSettings { render_scale: scale, ..sized(40, 30) };
        let rendered = render(source, &settings);
        assert_eq!(rendered.output.messages, [format!("{map_w} {map_h}")], "scale {scale}");
        assert_eq!(rendered.output.geometry.map_width, Some(map_w));
        assert_eq!(rendered.output.geometry.map_height, Some(map_h));
        let map = main_map(&rendered);
        let r = map.rect();
        assert_eq!((r.x, r.y, r.width, r.height), (0, 0, 40, 30), "scale {scale}");
        // The cone's tip (height 1) is at the physical pixel of the logical centre
        // (@0.25 × map width, @0.5 × map height) × scale.
        let (cx, cy) = centre;
        assert_eq!(map.data()[cy * 40 + cx], 1.0, "scale {scale}: no tip at ({cx}, {cy})");
        let tips = map.data().iter().filter(|&&h| h == 1.0).count();
        assert_eq!(tips, 1, "scale {scale}: one tip");
    }
}

/// Reference §5.5: a render whose origin lies outside a finite map yields an empty map.
#[test]
fn a_render_outside_a_finite_map_is_empty() {
    let source = "metadata { Width: Finite, Height: Finite } yield HeightMap.Noise();";
    let base = RunSettings { map_width: Some(32), map_height: Some(32), ..sized(16, 16) };
    for origin in [(40, 40), (32, 0), (0, 32), (100, 5)] {
        let rendered = render(source, &RunSettings { render_origin: origin, ..base.clone() });
        let map = main_map(&rendered);
        let r = map.rect();
        assert!(r.width == 0 || r.height == 0, "origin {origin:?}: expected an empty map, got {r:?}");
        assert!(map.data().is_empty(), "origin {origin:?}: {} pixels", map.data().len());
    }
    // Partly inside: clipped to the map.
    let rendered = render(source, &RunSettings { render_origin: (24, 20), ..base });
    let r = main_map(&rendered).rect();
    assert_eq!((r.x, r.y, r.width, r.height), (24, 20, 8, 12));
}

/// Spec README §3 / reference §5.5: `--maps detail` renders only that map.
#[test]
fn maps_filter_renders_only_the_named_map() {
    let source = r#"
        yield HeightMap.RadialGradient([8, 8], 6, 1, -1);
        yield HeightMap.Noise({4: 0.5}, 1) as "detail";
        yield HeightMap.Flat(0.3) as "other";
    "#;
    let all = render(source, &sized(16, 16));
    assert_eq!(all.maps.keys().collect::<Vec<_>>(), ["detail", "main", "other"]);
    let only = render(source, &RunSettings { maps: Some(vec!["detail".to_string()]), ..sized(16, 16) });
    assert_eq!(only.maps.keys().collect::<Vec<_>>(), ["detail"]);
    assert_eq!(only.maps["detail"].data(), all.maps["detail"].data());
    // A name the script does not yield is an error, not an empty result.
    let err = render_with(source, &RunSettings { maps: Some(vec!["nope".to_string()]), ..sized(16, 16) })
        .expect_err("an unknown map name");
    assert_eq!(err.first().code, codes::GGE4000);
}

/// Spec §6 / reference §5.4: the memory plan is checked before any pixel is computed; GGE3001
/// names the bytes needed and the limit.
#[test]
fn memory_limit_fails_before_rendering() {
    let steps = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&steps);
    let progress: Box<dyn FnMut(geogen::Progress) + Send> = Box::new(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    let script = compile("yield HeightMap.Noise();");
    let limit = 64 * 1024;
    let err = script
        .render(&sized(512, 512), &RenderConfig { memory_limit: limit, ..RenderConfig::default() }, Some(progress))
        .expect_err("512×512 does not fit in 64 KiB");
    let d = err.first();
    assert_eq!(d.code, codes::GGE3001, "{err}");
    // One 512×512 map of f32 is 1 MiB; the plan needs at least that.
    let need: u64 = d
        .message
        .split_whitespace()
        .skip_while(|w| *w != "needs")
        .nth(1)
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no byte count in {:?}", d.message));
    assert!(need >= 512 * 512 * 4, "needs {need} bytes? {:?}", d.message);
    assert!(d.message.contains(&need.to_string()), "{:?}", d.message);
    assert!(d.message.contains(&limit.to_string()), "the message does not name the limit {limit}: {:?}", d.message);
    assert_eq!(steps.load(Ordering::SeqCst), 0, "a rendering step ran before the limit was checked");
    // The same render fits in the default limit.
    let ok = script.render(&sized(512, 512), &RenderConfig::default(), None).expect("fits the default limit");
    assert_eq!(main_map(&ok).data().len(), 512 * 512);
}

/// Reference §5.7: the 64×64 default noise and a 32×32 tile at (32, 32) agree pixel for pixel.
#[test]
fn default_noise_tile_at_32_32_matches_the_64_render() {
    let source = "yield HeightMap.Noise();";
    let whole = render(source, &sized(64, 64));
    let tile = render(source, &RunSettings { render_origin: (32, 32), ..sized(32, 32) });
    let (whole, tile) = (main_map(&whole), main_map(&tile));
    let r = tile.rect();
    assert_eq!((r.x, r.y, r.width, r.height), (32, 32, 32, 32));
    for y in 0..32 {
        for x in 0..32 {
            assert_eq!(tile.data()[y * 32 + x].to_bits(), whole.data()[(y + 32) * 64 + x + 32].to_bits(), "({x}, {y})");
        }
    }
}

/// Where the original's argument checks differ from what the reference describes, geogen follows
/// the original: `Shift` refuses a negative `maxDistance` (GGE2309; the profile's sign gives the
/// way), `Distort` accepts a `perturbationSize` of 0 (as 1: every pixel displaced on its own).
#[test]
fn shift_refuses_a_negative_distance_and_distort_accepts_a_zero_perturbation_size() {
    let settings = sized(16, 16);
    let shift = "var m = HeightMap.Gradient([0, 0], [15, 0], -1, 1); \
                 yield m.Shift(HeightProfile.Flat(0.5), -4, Direction.Horizontal);";
    let Err(failure) = render_with(shift, &settings) else { panic!("a negative maxDistance is refused") };
    assert_eq!(failure.first().code, geogen::diag::codes::GGE2309, "{failure}");
    let zero = "var m = HeightMap.Gradient([0, 0], [15, 0], -1, 1); yield m.Distort(0, 2, 5);";
    let one = "var m = HeightMap.Gradient([0, 0], [15, 0], -1, 1); yield m.Distort(1, 2, 5);";
    let (zero, one) = (render(zero, &settings), render(one, &settings));
    assert_eq!(main_map(&zero).data(), main_map(&one).data(), "0 acts as 1");
}
