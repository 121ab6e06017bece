//! Property: random small fields round-trip through PNG16 and R16 within quantisation error.

use crate::common;

use common::*;
use geogen_io::{quantize, write, Format, HeightField};
use proptest::prelude::*;

/// Heights mostly in range, sometimes beyond (clamped), with the odd exact anchor.
fn height() -> impl Strategy<Value = f32> {
    prop_oneof![
        8 => -1.0_f32..=1.0,
        1 => -3.0_f32..=3.0,
        1 => prop::sample::select(vec![-1.0_f32, 0.0, 1.0, -0.0]),
    ]
}

fn field() -> impl Strategy<Value = (u32, u32, Vec<f32>)> {
    (1_u32..=12, 1_u32..=12)
        .prop_flat_map(|(w, h)| (Just(w), Just(h), prop::collection::vec(height(), (w * h) as usize)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn png16_and_r16_round_trip_within_half_a_step((w, h, data) in field()) {
        let dir = tempfile::tempdir().expect("tempdir");
        let field = HeightField::new(w, h, &data).expect("field");
        let png_path = dir.path().join("m.png");
        let r16_path = dir.path().join("m.r16");
        write(Format::Png16, &field, &png_path).expect("png16");
        write(Format::R16, &field, &r16_path).expect("r16");
        let png = read_png(&png_path);
        prop_assert_eq!((png.width, png.height), (w, h));
        let raw = read_r16(&r16_path);
        prop_assert_eq!(&png.samples, &raw);
        for (i, (&v, &hgt)) in raw.iter().zip(&data).enumerate() {
            prop_assert_eq!(v, quantize::to_u16(hgt));
            prop_assert!(v <= 65534);
            // Decoding: h' = (v - 32767) / 32767 is within half a step of the clamped input.
            let back = (f64::from(v) - 32767.0) / 32767.0;
            let want = f64::from(hgt.clamp(-1.0, 1.0));
            prop_assert!((back - want).abs() <= 0.5 / 32767.0 + 1e-12, "sample {}: {} → {} → {}", i, hgt, v, back);
        }
    }
}
