//! Height profiles as CSV.

use geogen_io::{profile_csv, write_profile_csv, FieldError, Profile};

#[test]
fn csv_round_trips_every_f32_bit_pattern() {
    let data = [
        0.0,
        -0.0,
        1.0 / 3.0,
        -2.0 / 3.0,
        1e-30,
        f32::MIN_POSITIVE,
        1e-45, // subnormal
        f32::MAX,
        -1.0,
        1.0,
        0.1,
        f32::NAN,
        0.123_456_79,
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("profile.csv");
    write_profile_csv(&Profile { start: -5, data: &data }, &path).expect("write");
    let text = std::fs::read_to_string(&path).expect("read");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("x,height"));
    let rows: Vec<(i64, f32)> = lines
        .map(|l| {
            let (x, h) = l.split_once(',').expect("two fields");
            (x.parse().expect("x"), h.parse().expect("height"))
        })
        .collect();
    assert_eq!(rows.len(), data.len());
    for (i, ((x, h), want)) in rows.iter().zip(data).enumerate() {
        assert_eq!(*x, -5 + i as i64);
        let want = if want.is_nan() { 0.0 } else { want };
        assert_eq!(h.to_bits(), want.to_bits(), "line {i}: {h} vs {want}");
    }
    assert!(text.ends_with('\n'));
    assert_eq!(&text.lines().nth(1), &Some("-5,0"));
}

#[test]
fn coordinates_at_the_end_of_i64() {
    let one = profile_csv(&Profile { start: i64::MAX, data: &[0.5] }).expect("fits");
    assert_eq!(one, format!("x,height\n{},0.5\n", i64::MAX));
    let err = profile_csv(&Profile { start: i64::MAX, data: &[0.5, 0.25] }).expect_err("overflows");
    assert_eq!(err, FieldError::ProfileOverflow { start: i64::MAX, len: 2 });
    assert_eq!(profile_csv(&Profile { start: 7, data: &[] }).expect("empty"), "x,height\n");
}
