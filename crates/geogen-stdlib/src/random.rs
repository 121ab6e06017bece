//! Randomness: `Random`, `RandomSequence2D` and `CreateNoiseLayers` (reference §4.2, §4.5, §5.8).
//! The algorithms and seeds are the original's, so the same script seed gives the same values.

use std::cell::RefCell;
use std::rc::Rc;

use geogen_diag::codes;
use geogen_random::{combine_seeds, field_int, hash_str, seed_from_number, unit_double, Mt19937};
use geogen_vm::array::Array;
use geogen_vm::value::RandomSequence2D;
use geogen_vm::{Args, Ctx, Library, Native, RuntimeError, Value};

use crate::coordinates::resolve_point;
use crate::util::{bad_this, finite, n};

/// The optional `(min, max)` range at `first` and `first + 1`: both or neither (exactly one is
/// GGE2103); min > max is GGE2705; a range too wide to compute is GGE2302.
fn range_args(args: &Args<'_>, first: usize) -> Result<Option<(f64, f64)>, RuntimeError> {
    match args.len().saturating_sub(first) {
        0 => Ok(None),
        1 => {
            Err(RuntimeError::new(codes::GGE2103, format!("`{}` was given a minimum but no maximum", args.native.name))
                .with_hint(format!("pass both bounds or neither: {}", args.native.signature())))
        }
        _ => {
            let min = args.number(first)?;
            let max = args.number(first + 1)?;
            if min > max {
                return Err(RuntimeError::new(
                    codes::GGE2705,
                    format!("`{}` with the minimum {} greater than the maximum {}", args.native.name, n(min), n(max)),
                )
                .with_hint("swap the bounds"));
            }
            finite(max - min, || format!("the width of the range [{}, {}]", n(min), n(max)))?;
            Ok(Some((min, max)))
        }
    }
}

/// `unit` (in [0, 1]) scaled to the range, if any.
fn scale(unit: f64, range: Option<(f64, f64)>) -> Result<f64, RuntimeError> {
    match range {
        None => Ok(unit),
        Some((min, max)) => finite(min + unit * (max - min), || format!("a random number in [{}, {}]", n(min), n(max))),
    }
}

const RANDOM: Native = Native::function("Random", "Random() or Random(Number min, Number max)", 0, Some(2), random);

/// The next value of the common random sequence (MT19937 seeded with the script seed), in [0, 1]
/// or scaled to [min, max].
fn random(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let range = range_args(args, 0)?;
    let unit = ctx.env.random.next_unit();
    scale(unit, range).map(Value::Number)
}

const SEQUENCE_CREATE: Native =
    Native::function("Create", "RandomSequence2D.Create(Number seed?)", 0, Some(1), sequence_create);

/// Seed = CombineSeeds(seed or commonSequence.NextUInt(), scriptSeed, djb2("RandomSequence2D"));
/// `current` is the first MT19937 output.
fn sequence_create(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let seed = match args.get(0) {
        Some(_) => seed_from_number(args.number(0)?),
        None => ctx.env.random.next_u32(),
    };
    let mut generator = Mt19937::new(combine_seeds(&[seed, ctx.env.script_seed, hash_str("RandomSequence2D")]));
    let current = generator.next_u32();
    let charge = Some(ctx.env.heap.hold(RandomSequence2D::FOOTPRINT)?);
    let id = ctx.env.new_object_id();
    Ok(Value::RandomSequence2D(Rc::new(RefCell::new(RandomSequence2D { id, generator, current, charge }))))
}

fn this_sequence<'a>(args: &Args<'a>) -> Result<&'a Rc<RefCell<RandomSequence2D>>, RuntimeError> {
    match args.this {
        Value::RandomSequence2D(s) => Ok(s),
        _ => Err(bad_this(args, "RandomSequence2D")),
    }
}

const SEQUENCE_ADVANCE: Native = Native::function("Advance", "sequence.Advance()", 0, Some(0), sequence_advance);

fn sequence_advance(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let mut seq = this_sequence(args)?.borrow_mut();
    seq.current = seq.generator.next_u32();
    Ok(Value::Null)
}

const SEQUENCE_GET_NUMBER: Native = Native::function(
    "GetNumber",
    "sequence.GetNumber(Point point, Number min?, Number max?)",
    1,
    Some(3),
    sequence_get_number,
);

/// unit_double(Hash(current, x, y)) for the point resolved to absolute integers, scaled to
/// [min, max].
fn sequence_get_number(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let seq = this_sequence(args)?;
    let point = args.point(0)?;
    let range = range_args(args, 1)?;
    let (x, y) = resolve_point(point, &ctx.env.geometry)?;
    let unit = unit_double(field_int(seq.borrow().current, x, y));
    scale(unit, range).map(Value::Number)
}

const CREATE_NOISE_LAYERS: Native = Native::function(
    "CreateNoiseLayers",
    "CreateNoiseLayers(Number minWaveLength? = 1, Number maxWaveLength? = 256, Number persistence? = 0.5)",
    0,
    Some(3),
    create_noise_layers,
);

/// {wavelength: amplitude}: wavelengths maxWL, maxWL/2, ... (integers, integer halving) while
/// ≥ minWL and > 0; the largest gets amplitude 1 and each halving multiplies by (1 − persistence);
/// the amplitudes are normalised to sum 1. Keys ascending. One argument means (1, arg, 0.5).
fn create_noise_layers(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let (min, max) = match args.len() {
        0 => (1.0, 256.0),
        1 => (1.0, args.number(0)?),
        _ => (args.number(0)?, args.number(1)?),
    };
    let persistence = args.opt_number(2, 0.5)?;
    if min > max {
        return Err(RuntimeError::new(
            codes::GGE2705,
            format!("CreateNoiseLayers with the minimum wavelength {} greater than the maximum {}", n(min), n(max)),
        )
        .with_hint("swap the wavelengths"));
    }
    if !(0.1..=0.9).contains(&persistence) {
        return Err(RuntimeError::new(
            codes::GGE2713,
            format!("CreateNoiseLayers with the persistence {}, outside [0.1, 0.9]", n(persistence)),
        )
        .with_hint("the persistence is how much of each layer's amplitude the next smaller layer keeps"));
    }
    if max > u32::MAX as f64 {
        return Err(RuntimeError::new(
            codes::GGE2309,
            format!("CreateNoiseLayers with the maximum wavelength {}, above 4294967295", n(max)),
        ));
    }
    // Largest first; each step halves the wavelength and multiplies the amplitude.
    let mut layers: Vec<(u32, f64)> = Vec::new();
    let mut wavelength = if max >= 1.0 { max as u32 } else { 0 };
    let mut amplitude = 1.0;
    while wavelength > 0 && wavelength as f64 >= min {
        layers.push((wavelength, amplitude));
        wavelength /= 2;
        amplitude *= 1.0 - persistence;
    }
    let total: f64 = layers.iter().map(|(_, a)| a).sum();
    let mut array = Array::new();
    for (wavelength, amplitude) in layers.iter().rev() {
        array.set(Value::Number(*wavelength as f64), Value::Number(amplitude / total))?;
    }
    Ok(Value::Array(ctx.new_array(array)?))
}

pub(crate) fn register(lib: &mut Library) {
    lib.add_global(RANDOM);
    lib.add_global(CREATE_NOISE_LAYERS);
    lib.add_static("RandomSequence2D", SEQUENCE_CREATE);
    lib.add_method("RandomSequence2D", SEQUENCE_ADVANCE);
    lib.add_method("RandomSequence2D", SEQUENCE_GET_NUMBER);
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use geogen_diag::codes::*;
    use geogen_random::{combine_seeds, field_int, hash_str, unit_double, Mt19937};
    use geogen_vm::{MapGeometry, Value};

    #[test]
    fn random_matches_the_verified_vectors() {
        let mut h = Harness::new();
        assert_6(as_num(&h.call("Random", &[]).unwrap()), "0.548814");
        assert_6(as_num(&h.call("Random", &[num(0.0), num(10.0)]).unwrap()), "5.92845");
        assert_6(as_num(&h.call("Random", &[]).unwrap()), "0.715189");
    }

    #[test]
    fn random_ranges_and_errors() {
        let mut h = Harness::with(123, MapGeometry::default());
        for _ in 0..200 {
            let x = as_num(&h.call("Random", &[num(-2.0), num(3.0)]).unwrap());
            assert!((-2.0..=3.0).contains(&x), "{x}");
        }
        assert!(h.call("Random", &[num(4.0), num(4.0)]).unwrap().script_eq(&num(4.0)));
        let mut h = Harness::new();
        assert_eq!(h.err("Random", &[num(1.0)]), GGE2103);
        assert_eq!(h.err("Random", &[num(2.0), num(1.0)]), GGE2705);
        assert_eq!(h.err("Random", &[num(1.0), s("2")]), GGE2101);
        assert_eq!(h.err("Random", &[num(1.0), num(2.0), num(3.0)]), GGE2103);
        assert_eq!(h.err("Random", &[num(-1e308), num(1e308)]), GGE2302);
        // None of the failed calls consumed a value.
        assert_6(as_num(&h.call("Random", &[]).unwrap()), "0.548814");
    }

    fn sequence(h: &mut Harness, args: &[Value]) -> Value {
        h.call_static("RandomSequence2D", "Create", args).unwrap()
    }

    fn get(h: &mut Harness, seq: &Value, args: &[Value]) -> f64 {
        as_num(&h.call_method(seq, "GetNumber", args).unwrap())
    }

    #[test]
    fn sequence_values_follow_the_original_seeding() {
        let mut h = Harness::with(5, MapGeometry::default());
        let seq = sequence(&mut h, &[num(8.0)]);
        let mut mt = Mt19937::new(combine_seeds(&[8, 5, hash_str("RandomSequence2D")]));
        let first = mt.next_u32();
        let p = point(abs_c(3.7), abs_c(-2.2));
        assert_eq!(get(&mut h, &seq, &[p.clone()]), unit_double(field_int(first, 3, -2)));
        // Stateless per point.
        assert_eq!(get(&mut h, &seq, &[p.clone()]), unit_double(field_int(first, 3, -2)));
        let scaled = get(&mut h, &seq, &[p.clone(), num(10.0), num(20.0)]);
        assert_eq!(scaled, 10.0 + unit_double(field_int(first, 3, -2)) * 10.0);
        assert!(h.call_method(&seq, "Advance", &[]).unwrap().is_null());
        let second = mt.next_u32();
        assert_eq!(get(&mut h, &seq, &[p]), unit_double(field_int(second, 3, -2)));
        // A seeded Create does not touch the common sequence.
        assert_6(as_num(&h.call("Random", &[]).unwrap()), &crate::format_number(Mt19937::new(5).next_unit()));
    }

    #[test]
    fn unseeded_sequences_use_the_common_sequence() {
        let mut h = Harness::with(5, MapGeometry::default());
        let a = sequence(&mut h, &[]);
        let b = sequence(&mut h, &[]);
        let mut common = Mt19937::new(5);
        let (s1, s2) = (common.next_u32(), common.next_u32());
        let p = point(abs_c(0.0), abs_c(0.0));
        let expect = |seed: u32| {
            let mut mt = Mt19937::new(combine_seeds(&[seed, 5, hash_str("RandomSequence2D")]));
            unit_double(field_int(mt.next_u32(), 0, 0))
        };
        assert_eq!(get(&mut h, &a, &[p.clone()]), expect(s1));
        assert_eq!(get(&mut h, &b, &[p]), expect(s2));
        assert!(!a.script_eq(&b));
        // Same seed, same values; another object identity.
        let c = sequence(&mut h, &[num(1.0)]);
        let d = sequence(&mut h, &[num(1.0)]);
        let q = point(abs_c(10.0), abs_c(20.0));
        assert_eq!(get(&mut h, &c, &[q.clone()]), get(&mut h, &d, &[q]));
        assert!(!c.script_eq(&d));
    }

    #[test]
    fn sequence_points_resolve_relative_coordinates() {
        let mut h = Harness::finite(1000, 200);
        let seq = sequence(&mut h, &[num(3.0)]);
        let rel = get(&mut h, &seq, &[point(rel_c(0.25), rel_c(0.5))]);
        let abs = get(&mut h, &seq, &[point(abs_c(250.0), abs_c(100.0))]);
        assert_eq!(rel, abs);
        let e = h.call_method(&seq, "GetNumber", &[point(rel_c(1e8), abs_c(0.0))]).unwrap_err();
        assert_eq!(e.code, GGE2304);
        let mut inf = Harness::new();
        let seq = sequence(&mut inf, &[num(3.0)]);
        let e = inf.call_method(&seq, "GetNumber", &[point(abs_c(1.0), rel_c(0.5))]).unwrap_err();
        assert_eq!(e.code, GGE2704);
    }

    #[test]
    fn sequence_errors() {
        let mut h = Harness::new();
        let seq = sequence(&mut h, &[num(1.0)]);
        let p = point(abs_c(0.0), abs_c(0.0));
        let code = |h: &mut Harness, args: &[Value]| h.call_method(&seq, "GetNumber", args).unwrap_err().code;
        assert_eq!(code(&mut h, &[p.clone(), num(1.0)]), GGE2103);
        assert_eq!(code(&mut h, &[p.clone(), num(2.0), num(1.0)]), GGE2705);
        assert_eq!(code(&mut h, &[num(1.0)]), GGE2101);
        assert_eq!(code(&mut h, &[p, num(0.0), s("1")]), GGE2101);
        assert_eq!(code(&mut h, &[]), GGE2103);
        assert_eq!(h.call_static("RandomSequence2D", "Create", &[s("seed")]).unwrap_err().code, GGE2101);
        assert_eq!(h.call_method(&seq, "Advance", &[num(1.0)]).unwrap_err().code, GGE2103);
    }

    fn layers(args: &[f64]) -> Vec<(String, String)> {
        let values: Vec<Value> = args.iter().map(|&x| num(x)).collect();
        pairs(&Harness::new().call("CreateNoiseLayers", &values).unwrap())
    }

    fn table(rows: &[(&str, &str)]) -> Vec<(String, String)> {
        rows.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn noise_layers_match_the_verified_tables() {
        let default = table(&[
            ("1", "0.00195695"),
            ("2", "0.00391389"),
            ("4", "0.00782779"),
            ("8", "0.0156556"),
            ("16", "0.0313112"),
            ("32", "0.0626223"),
            ("64", "0.125245"),
            ("128", "0.250489"),
            ("256", "0.500978"),
        ]);
        assert_eq!(layers(&[]), default);
        assert_eq!(layers(&[1.0, 256.0, 0.5]), default);
        assert_eq!(
            layers(&[8.0, 64.0, 0.3]),
            table(&[("8", "0.135413"), ("16", "0.193447"), ("32", "0.276352"), ("64", "0.394789")])
        );
    }

    #[test]
    fn noise_layer_arguments() {
        // One argument is the maximum wavelength.
        assert_eq!(layers(&[4.0]), table(&[("1", "0.142857"), ("2", "0.285714"), ("4", "0.571429")]));
        // Two arguments: (min, max), persistence 0.5. Wavelengths are truncated and halved as integers.
        assert_eq!(layers(&[3.0, 13.9]), table(&[("3", "0.142857"), ("6", "0.285714"), ("13", "0.571429")]));
        assert_eq!(layers(&[5.0, 5.0]), table(&[("5", "1")]));
        // Nothing at or above the minimum, or a maximum below 1: no layers.
        assert!(layers(&[0.0, 0.5]).is_empty());
        assert!(layers(&[-3.0, 0.0]).is_empty());
        let mut h = Harness::new();
        assert_eq!(h.err("CreateNoiseLayers", &[num(64.0), num(8.0)]), GGE2705);
        assert_eq!(h.err("CreateNoiseLayers", &[num(1.0), num(8.0), num(0.95)]), GGE2713);
        assert_eq!(h.err("CreateNoiseLayers", &[num(1.0), num(8.0), num(0.05)]), GGE2713);
        assert_eq!(h.err("CreateNoiseLayers", &[num(1.0), num(1e10)]), GGE2309);
        assert_eq!(h.err("CreateNoiseLayers", &[s("8")]), GGE2101);
        assert_eq!(h.err("CreateNoiseLayers", &[num(1.0), num(2.0), num(0.5), num(1.0)]), GGE2103);
        assert_eq!(layers(&[1.0, 2.0, 0.1]), table(&[("1", "0.473684"), ("2", "0.526316")]));
        assert_eq!(layers(&[1.0, 2.0, 0.9]).len(), 2);
    }
}
