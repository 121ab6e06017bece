//! Statics of Number, Coordinate, Point and enums (reference §4.3), and the resolution of relative
//! coordinates against the map size.

use geogen_diag::codes;
use geogen_vm::{Args, Coordinate, Ctx, EnumValue, Library, MapGeometry, Native, Point, RuntimeError, TypeId, Value};

use crate::util::{bad_this, n, trunc_i32};

/// Which map dimension a coordinate lies in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Axis {
    Horizontal,
    Vertical,
}

impl Axis {
    fn size(self, geometry: &MapGeometry) -> Option<u32> {
        match self {
            Axis::Horizontal => geometry.map_width,
            Axis::Vertical => geometry.map_height,
        }
    }

    fn dimension(self) -> &'static str {
        match self {
            Axis::Horizontal => "width",
            Axis::Vertical => "height",
        }
    }
}

/// A coordinate resolved to an absolute 32-bit integer (`GetAbsolutePoint`): an absolute value is
/// truncated; a relative one is multiplied by the map width/height and truncated. GGE2704 if the
/// map is infinite in that dimension, GGE2304 if the result does not fit in 32 bits.
pub fn resolve_coordinate(c: Coordinate, axis: Axis, geometry: &MapGeometry) -> Result<i32, RuntimeError> {
    let value = if c.relative {
        let size = axis.size(geometry).ok_or_else(|| infinite_dimension(c, axis))?;
        c.value * size as f64
    } else {
        c.value
    };
    trunc_i32(value).ok_or_else(|| {
        RuntimeError::new(
            codes::GGE2304,
            format!("the coordinate {} is {}, outside the 32-bit integer range", coordinate_text(c), n(value)),
        )
    })
}

/// A point with both components resolved (see [`resolve_coordinate`]).
pub fn resolve_point(p: Point, geometry: &MapGeometry) -> Result<(i32, i32), RuntimeError> {
    Ok((resolve_coordinate(p.x, Axis::Horizontal, geometry)?, resolve_coordinate(p.y, Axis::Vertical, geometry)?))
}

fn coordinate_text(c: Coordinate) -> String {
    if c.relative {
        format!("@{}", n(c.value))
    } else {
        n(c.value)
    }
}

fn infinite_dimension(c: Coordinate, axis: Axis) -> RuntimeError {
    RuntimeError::new(
        codes::GGE2704,
        format!(
            "the relative coordinate {} cannot be resolved: the map is infinite in {} ({})",
            coordinate_text(c),
            match axis {
                Axis::Horizontal => "the horizontal direction",
                Axis::Vertical => "the vertical direction",
            },
            axis.dimension()
        ),
    )
    .with_hint("relative coordinates are fractions of the map size; use an absolute coordinate here")
}

const NUMBER_FROM_ENUM: Native = Native::function("FromEnum", "Number.FromEnum(enum value)", 1, Some(1), from_enum);

fn from_enum(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Number(args.any_enum(0)?.value))
}

const NUMBER_FROM_COORDINATE: Native = Native::function(
    "FromCoordinate",
    "Number.FromCoordinate(Coordinate c, Direction direction?)",
    1,
    Some(2),
    from_coordinate,
);

/// Absolute: the value. Relative: value × MapWidth (Horizontal) or MapHeight (Vertical), truncated.
fn from_coordinate(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let c = args.coordinate(0)?;
    let direction = match args.get(1) {
        Some(_) => Some(args.enum_of(1, TypeId::DIRECTION)?),
        None => None,
    };
    if !c.relative {
        return Ok(Value::Number(c.value));
    }
    let axis = match direction {
        None => {
            return Err(RuntimeError::new(
                codes::GGE2703,
                format!("the relative coordinate {} has no direction to resolve it in", coordinate_text(c)),
            )
            .with_hint("pass a direction: Number.FromCoordinate(c, Direction.Horizontal)"))
        }
        Some(d) if d.value == 0.0 => Axis::Horizontal,
        Some(_) => Axis::Vertical,
    };
    resolve_coordinate(c, axis, &ctx.env.geometry).map(|v| Value::Number(v as f64))
}

const COORDINATE_FROM_NUMBER: Native =
    Native::function("FromNumber", "Coordinate.FromNumber(Number n)", 1, Some(1), coordinate_from_number);

/// An absolute coordinate (`[n]`). A Coordinate argument is returned unchanged (`[@0.5]`).
fn coordinate_from_number(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    match args.value(0)? {
        Value::Number(x) => Ok(Value::Coordinate(Coordinate::absolute(*x))),
        Value::Coordinate(c) => Ok(Value::Coordinate(*c)),
        _ => Err(args.type_error(0, "Number")),
    }
}

const POINT_CREATE: Native =
    Native::function("Create", "Point.Create(Coordinate x, Coordinate y)", 2, Some(2), point_create);

/// `[x, y]`: Numbers become absolute coordinates; a relative component in an infinite dimension
/// is GGE2704.
fn point_create(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let x = args.coordinate(0)?;
    let y = args.coordinate(1)?;
    let g = &ctx.env.geometry;
    if x.relative && g.map_width.is_none() {
        return Err(infinite_dimension(x, Axis::Horizontal));
    }
    if y.relative && g.map_height.is_none() {
        return Err(infinite_dimension(y, Axis::Vertical));
    }
    Ok(Value::Point(Point { x, y }))
}

const ENUM_FROM_NUMBER: Native =
    Native::function("FromNumber", "<enum>.FromNumber(Number n)", 1, Some(1), enum_from_number);

/// `SomeEnum.FromNumber(n)`: the item with value n (GGE2702 if there is none).
fn enum_from_number(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let ty = match args.this {
        Value::Type(ty) => *ty,
        _ => return Err(bad_this(args, "enum type")),
    };
    let info = ctx.types.get(ty);
    let items = info.enum_items().ok_or_else(|| bad_this(args, "enum type"))?;
    let x = args.number(0)?;
    // Return the item's own value: `-0` finds the item 0 but must not make an item that prints
    // `-0` (enum values are integers in the original).
    if let Some((_, v)) = items.iter().find(|(_, v)| *v == x) {
        return Ok(Value::Enum(EnumValue { ty, value: *v }));
    }
    let mut valid: Vec<String> = Vec::new();
    for (name, v) in items {
        valid.push(format!("{name} = {}", n(*v)));
    }
    let hint = if valid.is_empty() {
        format!("{} has no items", info.name())
    } else {
        format!("the items of {} are {}", info.name(), valid.join(", "))
    };
    Err(RuntimeError::new(codes::GGE2702, format!("{} has no item with the value {}", info.name(), n(x)))
        .with_hint(hint))
}

pub(crate) fn register(lib: &mut Library) {
    lib.add_static("Number", NUMBER_FROM_ENUM);
    lib.add_static("Number", NUMBER_FROM_COORDINATE);
    lib.add_static("Coordinate", COORDINATE_FROM_NUMBER);
    lib.add_static("Point", POINT_CREATE);
    lib.add_enum_static(ENUM_FROM_NUMBER);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use geogen_diag::codes::*;

    fn dir(v: f64) -> Value {
        Value::Enum(EnumValue { ty: TypeId::DIRECTION, value: v })
    }

    #[test]
    fn number_from_enum() {
        let mut h = Harness::new();
        assert!(h.call_static("Number", "FromEnum", &[dir(1.0)]).unwrap().script_eq(&num(1.0)));
        let e = h.add_enum("Biome", &[("Sea", 3.0), ("Land", 7.0)]);
        let land = Value::Enum(EnumValue { ty: e, value: 7.0 });
        assert!(h.call_static("Number", "FromEnum", &[land]).unwrap().script_eq(&num(7.0)));
        assert_eq!(h.call_static("Number", "FromEnum", &[num(2.0)]).unwrap_err().code, GGE2101);
    }

    #[test]
    fn number_from_coordinate() {
        let mut h = Harness::finite(1000, 500);
        let c = |x| Value::Coordinate(rel_c(x));
        let from = |h: &mut Harness, args: &[Value]| h.call_static("Number", "FromCoordinate", args);
        assert!(from(&mut h, &[c(0.25), dir(0.0)]).unwrap().script_eq(&num(250.0)));
        assert!(from(&mut h, &[c(0.25), dir(1.0)]).unwrap().script_eq(&num(125.0)));
        assert!(from(&mut h, &[c(0.2505), dir(0.0)]).unwrap().script_eq(&num(250.0)));
        assert!(from(&mut h, &[c(-0.2505), dir(0.0)]).unwrap().script_eq(&num(-250.0)));
        // Absolute coordinates and Numbers are their value, with or without a direction.
        assert!(from(&mut h, &[Value::Coordinate(abs_c(7.5))]).unwrap().script_eq(&num(7.5)));
        assert!(from(&mut h, &[num(7.5), dir(1.0)]).unwrap().script_eq(&num(7.5)));
        assert_eq!(from(&mut h, &[c(0.5)]).unwrap_err().code, GGE2703);
        assert_eq!(from(&mut h, &[c(1e7), dir(0.0)]).unwrap_err().code, GGE2304);
        assert_eq!(from(&mut h, &[c(0.5), num(0.0)]).unwrap_err().code, GGE2101);
        assert_eq!(from(&mut h, &[s("x")]).unwrap_err().code, GGE2101);
        let mut inf = Harness::new();
        assert_eq!(from(&mut inf, &[c(0.5), dir(0.0)]).unwrap_err().code, GGE2704);
        assert_eq!(from(&mut inf, &[c(0.5), dir(1.0)]).unwrap_err().code, GGE2704);
    }

    #[test]
    fn coordinate_from_number() {
        let mut h = Harness::new();
        match h.call_static("Coordinate", "FromNumber", &[num(4.5)]).unwrap() {
            Value::Coordinate(c) => assert_eq!(c, abs_c(4.5)),
            other => panic!("{other:?}"),
        }
        match h.call_static("Coordinate", "FromNumber", &[Value::Coordinate(rel_c(0.5))]).unwrap() {
            Value::Coordinate(c) => assert_eq!(c, rel_c(0.5)),
            other => panic!("{other:?}"),
        }
        assert_eq!(h.call_static("Coordinate", "FromNumber", &[Value::Null]).unwrap_err().code, GGE2101);
    }

    #[test]
    fn point_create() {
        let mut h = Harness::finite(100, 100);
        match h.call_static("Point", "Create", &[num(1.0), Value::Coordinate(rel_c(0.5))]).unwrap() {
            Value::Point(p) => assert_eq!((p.x, p.y), (abs_c(1.0), rel_c(0.5))),
            other => panic!("{other:?}"),
        }
        assert_eq!(h.call_static("Point", "Create", &[num(1.0), s("2")]).unwrap_err().code, GGE2101);
        assert_eq!(h.call_static("Point", "Create", &[num(1.0)]).unwrap_err().code, GGE2103);
        let mut wide =
            Harness::with(0, MapGeometry { map_width: Some(100), map_height: None, ..MapGeometry::default() });
        let ok = wide.call_static("Point", "Create", &[Value::Coordinate(rel_c(0.5)), num(3.0)]);
        assert!(ok.is_ok());
        let err = wide.call_static("Point", "Create", &[num(3.0), Value::Coordinate(rel_c(0.5))]).unwrap_err();
        assert_eq!(err.code, GGE2704);
        assert!(err.message.contains("@0.5"), "{}", err.message);
        let mut inf = Harness::new();
        assert!(inf.call_static("Point", "Create", &[num(1e12), num(-3.0)]).is_ok());
        let x = Value::Coordinate(rel_c(0.5));
        assert_eq!(inf.call_static("Point", "Create", &[x, num(3.0)]).unwrap_err().code, GGE2704);
    }

    #[test]
    fn enum_from_number() {
        let mut h = Harness::new();
        match h.call_enum_static(TypeId::DIRECTION, "FromNumber", &[num(1.0)]).unwrap() {
            Value::Enum(e) => assert_eq!((e.ty, e.value), (TypeId::DIRECTION, 1.0)),
            other => panic!("{other:?}"),
        }
        let err = h.call_enum_static(TypeId::DIRECTION, "FromNumber", &[num(2.0)]).unwrap_err();
        assert_eq!(err.code, GGE2702);
        assert!(err.hint.unwrap().contains("Vertical = 1"));
        assert_eq!(h.call_enum_static(TypeId::DIRECTION, "FromNumber", &[num(0.5)]).unwrap_err().code, GGE2702);
        assert_eq!(h.call_enum_static(TypeId::DIRECTION, "FromNumber", &[s("0")]).unwrap_err().code, GGE2101);
        let biome = h.add_enum("Biome", &[("Sea", 3.0), ("Deep", 3.0), ("Land", 7.0)]);
        match h.call_enum_static(biome, "FromNumber", &[num(7.0)]).unwrap() {
            Value::Enum(e) => assert_eq!((e.ty, e.value), (biome, 7.0)),
            other => panic!("{other:?}"),
        }
        assert_eq!(h.call_enum_static(biome, "FromNumber", &[num(0.0)]).unwrap_err().code, GGE2702);
        // Not an enum type: an internal error, not a panic.
        assert_eq!(h.call_enum_static(TypeId::NUMBER, "FromNumber", &[num(0.0)]).unwrap_err().code, GGE5000);
    }

    #[test]
    fn point_resolution() {
        let g = MapGeometry { map_width: Some(1000), map_height: Some(200), ..MapGeometry::default() };
        let p = Point { x: rel_c(0.25), y: abs_c(-3.9) };
        assert_eq!(resolve_point(p, &g).unwrap(), (250, -3));
        let p = Point { x: abs_c(7.9), y: rel_c(0.5) };
        assert_eq!(resolve_point(p, &g).unwrap(), (7, 100));
        assert_eq!(resolve_point(Point { x: abs_c(3e9), y: abs_c(0.0) }, &g).unwrap_err().code, GGE2304);
        assert_eq!(resolve_point(Point { x: abs_c(0.0), y: rel_c(2e7) }, &g).unwrap_err().code, GGE2304);
        let inf = MapGeometry::default();
        assert_eq!(resolve_point(Point { x: abs_c(1.0), y: rel_c(0.1) }, &inf).unwrap_err().code, GGE2704);
        assert_eq!(resolve_coordinate(abs_c(-2147483648.5), Axis::Horizontal, &inf).unwrap(), i32::MIN);
    }
}
