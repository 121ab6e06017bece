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
/// GGE2103); min > max is GGE2705.
fn range_args(args: &Args<'_>, first: usize) -> Result<Option<(f64, f64)>, RuntimeError> {
    match args.len().saturating_sub(first) {
        0 => Ok(None),
        1 => {
            Err(RuntimeError::new(codes::GGE2103, format!("`{}` was given a minimum but no maximum", args.native.name))
                .with_hint(format!("pass both bounds or neither: {}", args.native.signature)))
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
    let id = ctx.env.new_object_id();
    Ok(Value::RandomSequence2D(Rc::new(RefCell::new(RandomSequence2D { id, generator, current }))))
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
    Ok(Value::Array(ctx.new_array(array)))
}

pub(crate) fn register(lib: &mut Library) {
    lib.add_global(RANDOM);
    lib.add_global(CREATE_NOISE_LAYERS);
    lib.add_static("RandomSequence2D", SEQUENCE_CREATE);
    lib.add_method("RandomSequence2D", SEQUENCE_ADVANCE);
    lib.add_method("RandomSequence2D", SEQUENCE_GET_NUMBER);
}
