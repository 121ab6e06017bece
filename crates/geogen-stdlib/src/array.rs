//! `Array` (reference §4.4, with the README fixes: `Repeat` is static, `Pop` and `Shuffle` work).
//!
//! Insertion order is what `Front`, `Back`, `Pop`, `GetKeyByIndex` and printing use; setting an
//! existing key keeps its position; `PushBack` uses (greatest integer key ever inserted) + 1, where a
//! non-integer Number key counts as its ceiling. An array never grows past
//! `Limits::max_array_len` (GGE2506).
//!
//! `Shuffle(seed?)` is a Fisher-Yates shuffle driven by MT19937 seeded with
//! `CombineSeeds(scriptSeed, seed or commonSequence.NextUInt(), djb2("Array.Shuffle"))` (the
//! original's intended seed): for i from n-1 down to 1, j = next_u32() mod (i + 1), swap i and j.

use std::rc::Rc;

use geogen_diag::codes;
use geogen_random::{combine_seeds, hash_str, seed_from_number, Mt19937};
use geogen_vm::array::{Array, KeyRepr};
use geogen_vm::value::{ArrayRef, Reference};
use geogen_vm::{Args, Ctx, Library, Native, RuntimeError, Value};

use crate::messages::format_value;
use crate::util::{bad_this, n};

fn this_array<'a>(args: &Args<'a>) -> Result<&'a ArrayRef, RuntimeError> {
    match args.this {
        Value::Array(a) => Ok(a),
        _ => Err(bad_this(args, "Array")),
    }
}

/// A key for messages: strings quoted, everything else as Print shows it.
fn key_text(key: &Value) -> String {
    match key {
        Value::String(s) => format!("\"{s}\""),
        other => format_value(other),
    }
}

fn key_not_found(key: &Value) -> RuntimeError {
    RuntimeError::new(codes::GGE2602, format!("the array has no key {}", key_text(key)))
        .with_hint("check with ContainsKey(key) first, or assign a[key] = value to create it")
}

fn too_large(ctx: &Ctx<'_>) -> RuntimeError {
    RuntimeError::new(
        codes::GGE2506,
        format!("the array would grow past the limit of {} items", ctx.env.limits.max_array_len),
    )
    .with_hint("raise the limit with --max-array-len N")
}

/// GGE2506 if adding one more item to `array` would exceed the limit.
fn check_growth(ctx: &Ctx<'_>, array: &Array) -> Result<(), RuntimeError> {
    if array.len() >= ctx.env.limits.max_array_len {
        Err(too_large(ctx))
    } else {
        Ok(())
    }
}

fn empty_array(what: &str) -> RuntimeError {
    RuntimeError::new(codes::GGE2601, format!("{what} of an empty array")).with_hint("check Count() first")
}

const EMPTY: Native = Native::function("Empty", "Array.Empty()", 0, Some(0), empty);

fn empty(ctx: &mut Ctx<'_>, _args: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Array(ctx.new_array(Array::new())?))
}

const REPEAT: Native = Native::function("Repeat", "Array.Repeat(any value, Number count)", 2, Some(2), repeat);

/// `count` copies of `value` under the keys 0..count-1 (objects are shared, not cloned).
fn repeat(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let value = args.value(0)?;
    let count = args.number(1)?;
    let limit = ctx.env.limits.max_array_len;
    if count < 0.0 || count.fract() != 0.0 || count > limit as f64 {
        return Err(RuntimeError::new(
            codes::GGE2309,
            format!("Array.Repeat count {} is not a whole number between 0 and {limit}", n(count)),
        )
        .with_hint("the count is the number of items of the new array"));
    }
    ctx.env.spend(count as u64)?;
    // Counted as it grows, so a count the script heap cannot hold fails before taking the memory.
    let mut array = ctx.array()?;
    for _ in 0..count as usize {
        array.push_back(value.clone())?;
    }
    Ok(Value::Array(ctx.new_array(array)?))
}

const GET: Native = Native::function("[]", "array[key]", 1, Some(1), get);

fn get(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let array = this_array(args)?;
    let key = args.value(0)?;
    KeyRepr::of(key)?;
    let items = array.items.borrow();
    items.get(key).cloned().ok_or_else(|| key_not_found(key))
}

const SET: Native = Native::function("[]=", "array[key] = value", 2, Some(2), set);

fn set(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let array = this_array(args)?;
    let key = args.value(0)?;
    let value = args.value(1)?;
    let mut items = array.items.borrow_mut();
    if !items.contains_key(key) {
        KeyRepr::of(key)?;
        check_growth(ctx, &items)?;
    }
    items.set(key.clone(), value.clone())?;
    Ok(value.clone())
}

const GET_REF: Native = Native::function("[]ref", "array[key] (as a place to write)", 1, Some(1), get_ref);

fn get_ref(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let array = this_array(args)?;
    let key = args.value(0)?;
    KeyRepr::of(key)?;
    if !array.items.borrow().contains_key(key) {
        return Err(key_not_found(key));
    }
    Ok(Value::Reference(Rc::new(Reference::ArrayItem { array: array.clone(), key: key.clone() })))
}

const COUNT: Native = Native::function("Count", "array.Count()", 0, Some(0), count);

fn count(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Number(this_array(args)?.items.borrow().len() as f64))
}

const PUSH_BACK: Native = Native::function("PushBack", "array.PushBack(any value)", 1, Some(1), push_back);

fn push_back(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let array = this_array(args)?;
    let value = args.value(0)?;
    let mut items = array.items.borrow_mut();
    check_growth(ctx, &items)?;
    items.push_back(value.clone())?;
    Ok(Value::Null)
}

const FRONT: Native = Native::function("Front", "array.Front()", 0, Some(0), front);

fn front(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let items = this_array(args)?.items.borrow();
    items.get_index(0).map(|(_, v)| v.clone()).ok_or_else(|| empty_array("Front()"))
}

const BACK: Native = Native::function("Back", "array.Back()", 0, Some(0), back);

fn back(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let items = this_array(args)?.items.borrow();
    let last = items.len().checked_sub(1).and_then(|i| items.get_index(i));
    last.map(|(_, v)| v.clone()).ok_or_else(|| empty_array("Back()"))
}

const POP: Native = Native::function("Pop", "array.Pop()", 0, Some(0), pop);

/// Removes the last pair in insertion order and returns its value.
fn pop(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let mut items = this_array(args)?.items.borrow_mut();
    let last = items.len().checked_sub(1).and_then(|i| items.remove_index(i));
    last.map(|(_, v)| v).ok_or_else(|| empty_array("Pop()"))
}

const CONTAINS_KEY: Native = Native::function("ContainsKey", "array.ContainsKey(any key)", 1, Some(1), contains_key);

fn contains_key(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let array = this_array(args)?;
    Ok(Value::Bool(array.items.borrow().contains_key(args.value(0)?)))
}

const CONTAINS_VALUE: Native =
    Native::function("ContainsValue", "array.ContainsValue(any value)", 1, Some(1), contains_value);

fn contains_value(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let array = this_array(args)?;
    ctx.env.spend(array.items.borrow().len() as u64)?;
    let value = args.value(0)?;
    let found = array.items.borrow().iter().any(|(_, v)| v.script_eq(value));
    Ok(Value::Bool(found))
}

const REMOVE_KEY: Native = Native::function("RemoveKey", "array.RemoveKey(any key)", 1, Some(1), remove_key);

fn remove_key(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let array = this_array(args)?;
    let key = args.value(0)?;
    KeyRepr::of(key)?;
    match array.items.borrow_mut().remove(key) {
        Some(_) => Ok(Value::Null),
        None => Err(key_not_found(key)),
    }
}

const REMOVE_VALUE: Native = Native::function("RemoveValue", "array.RemoveValue(any value)", 1, Some(1), remove_value);

/// Removes the pair with the smallest key (in key order) among those whose value equals `value`.
fn remove_value(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let array = this_array(args)?;
    ctx.env.spend(array.items.borrow().len() as u64)?;
    let value = args.value(0)?;
    let key = {
        let items = array.items.borrow();
        items
            .iter()
            .filter(|(_, v)| v.script_eq(value))
            .map(|(k, _)| k)
            .min_by(|a, b| a.total_cmp(b, ctx.types))
            .cloned()
    };
    if let Some(key) = key {
        array.items.borrow_mut().remove(&key);
    }
    Ok(Value::Null)
}

/// The position argument of the *ByIndex methods, truncated; GGE2604 outside [0, len).
fn index_arg(args: &Args<'_>, len: usize) -> Result<usize, RuntimeError> {
    let i = args.number(0)?;
    let t = i.trunc();
    if t >= 0.0 && t < len as f64 {
        Ok(t as usize)
    } else {
        let range =
            if len == 0 { "the array is empty".to_string() } else { format!("valid positions are 0 to {}", len - 1) };
        Err(RuntimeError::new(codes::GGE2604, format!("the array has no position {}: {range}", n(i)))
            .with_hint("positions count the items in insertion order from 0"))
    }
}

const GET_KEY_BY_INDEX: Native =
    Native::function("GetKeyByIndex", "array.GetKeyByIndex(Number index)", 1, Some(1), get_key_by_index);

fn get_key_by_index(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let items = this_array(args)?.items.borrow();
    let i = index_arg(args, items.len())?;
    items.get_index(i).map(|(k, _)| k.clone()).ok_or_else(|| RuntimeError::internal("index checked"))
}

const GET_VALUE_BY_INDEX: Native =
    Native::function("GetValueByIndex", "array.GetValueByIndex(Number index)", 1, Some(1), get_value_by_index);

fn get_value_by_index(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let items = this_array(args)?.items.borrow();
    let i = index_arg(args, items.len())?;
    items.get_index(i).map(|(_, v)| v.clone()).ok_or_else(|| RuntimeError::internal("index checked"))
}

/// Budget units for sorting `n` items: n·log2(n) comparisons.
fn sort_cost(n: usize) -> u64 {
    let n = n as u64;
    n.saturating_mul(u64::from(64 - n.leading_zeros()))
}

const SORT_BY_KEYS: Native = Native::function("SortByKeys", "array.SortByKeys()", 0, Some(0), sort_by_keys);

fn sort_by_keys(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let array = this_array(args)?;
    ctx.env.spend(sort_cost(array.items.borrow().len()))?;
    array.items.borrow_mut().sort_by(|a, b| a.0.total_cmp(b.0, ctx.types));
    Ok(Value::Null)
}

const SORT_BY_VALUES: Native = Native::function("SortByValues", "array.SortByValues()", 0, Some(0), sort_by_values);

/// A stable sort by value (equal values keep their relative order).
fn sort_by_values(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let array = this_array(args)?;
    ctx.env.spend(sort_cost(array.items.borrow().len()))?;
    array.items.borrow_mut().sort_by(|a, b| a.1.total_cmp(b.1, ctx.types));
    Ok(Value::Null)
}

const SHUFFLE: Native = Native::function("Shuffle", "array.Shuffle(Number seed?)", 0, Some(1), shuffle);

fn shuffle(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let array = this_array(args)?;
    let seed = match args.get(0) {
        Some(_) => seed_from_number(args.number(0)?),
        None => ctx.env.random.next_u32(),
    };
    ctx.env.spend(array.items.borrow().len() as u64)?;
    let mut mt = Mt19937::new(combine_seeds(&[ctx.env.script_seed, seed, hash_str("Array.Shuffle")]));
    let mut items = array.items.borrow_mut();
    let mut order: Vec<usize> = (0..items.len()).collect();
    for i in (1..order.len()).rev() {
        let j = (mt.next_u32() % (i as u32 + 1)) as usize;
        order.swap(i, j);
    }
    items.reorder(&order);
    Ok(Value::Null)
}

pub(crate) fn register(lib: &mut Library) {
    lib.add_static("Array", EMPTY);
    lib.add_static("Array", REPEAT);
    for native in [
        GET,
        SET,
        GET_REF,
        COUNT,
        PUSH_BACK,
        FRONT,
        BACK,
        POP,
        CONTAINS_KEY,
        CONTAINS_VALUE,
        REMOVE_KEY,
        REMOVE_VALUE,
        GET_KEY_BY_INDEX,
        GET_VALUE_BY_INDEX,
        SORT_BY_KEYS,
        SORT_BY_VALUES,
        SHUFFLE,
    ] {
        lib.add_method("Array", native);
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use geogen_diag::codes::*;
    use geogen_vm::{Limits, MapGeometry, Value};

    fn keys(a: &Value) -> Vec<String> {
        pairs(a).into_iter().map(|(k, _)| k).collect()
    }

    fn values(a: &Value) -> Vec<String> {
        pairs(a).into_iter().map(|(_, v)| v).collect()
    }

    fn m(h: &mut Harness, a: &Value, name: &str, args: &[Value]) -> Value {
        h.call_method(a, name, args).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn me(h: &mut Harness, a: &Value, name: &str, args: &[Value]) -> geogen_diag::ErrorCode {
        h.call_method(a, name, args).map(|v| panic!("{name} succeeded with {v:?}")).unwrap_err().code
    }

    #[test]
    fn empty_arrays_are_distinct_objects() {
        let mut h = Harness::new();
        let a = h.call_static("Array", "Empty", &[]).unwrap();
        let b = h.call_static("Array", "Empty", &[]).unwrap();
        assert!(!a.script_eq(&b));
        assert!(m(&mut h, &a, "Count", &[]).script_eq(&num(0.0)));
    }

    #[test]
    fn set_get_and_insertion_order() {
        let mut h = Harness::new();
        let a = h.list(&[]);
        assert!(m(&mut h, &a, "[]=", &[s("z"), num(1.0)]).script_eq(&num(1.0)));
        m(&mut h, &a, "[]=", &[num(5.0), s("five")]);
        m(&mut h, &a, "[]=", &[s("a"), num(2.0)]);
        // Overwriting keeps the position.
        m(&mut h, &a, "[]=", &[s("z"), num(3.0)]);
        assert_eq!(keys(&a), ["z", "5", "a"]);
        assert_eq!(values(&a), ["3", "five", "2"]);
        assert!(m(&mut h, &a, "[]", &[s("z")]).script_eq(&num(3.0)));
        assert!(m(&mut h, &a, "Count", &[]).script_eq(&num(3.0)));
        // Coordinates compare by value as keys.
        m(&mut h, &a, "[]=", &[Value::Coordinate(rel_c(5.0)), num(9.0)]);
        assert_eq!(keys(&a), ["z", "5", "a", "@5"]);
        assert!(m(&mut h, &a, "[]", &[Value::Coordinate(abs_c(5.0))]).script_eq(&num(9.0)));
        assert_eq!(me(&mut h, &a, "[]", &[s("missing")]), GGE2602);
        let e = h.call_method(&a, "[]", &[s("missing")]).unwrap_err();
        assert!(e.message.contains("\"missing\""), "{}", e.message);
        assert_eq!(me(&mut h, &a, "[]=", &[Value::Null, num(1.0)]), GGE2603);
        assert_eq!(me(&mut h, &a, "[]", &[Value::Null]), GGE2603);
        assert_eq!(me(&mut h, &a, "[]", &[]), GGE2103);
    }

    #[test]
    fn push_back_keys() {
        let mut h = Harness::new();
        let a = h.list(&[s("a"), s("b")]);
        assert_eq!(keys(&a), ["0", "1"]);
        assert!(m(&mut h, &a, "PushBack", &[s("c")]).is_null());
        m(&mut h, &a, "[]=", &[num(10.0), s("ten")]);
        m(&mut h, &a, "PushBack", &[s("d")]);
        // A non-integer key counts as its ceiling: 12.5 → 13, so the next key is 14.
        m(&mut h, &a, "[]=", &[num(12.5), s("x")]);
        m(&mut h, &a, "PushBack", &[s("e")]);
        // Smaller keys and non-number keys leave the counter alone.
        m(&mut h, &a, "[]=", &[num(3.0), s("three")]);
        m(&mut h, &a, "[]=", &[s("k"), s("kay")]);
        m(&mut h, &a, "PushBack", &[s("f")]);
        assert_eq!(keys(&a), ["0", "1", "2", "10", "11", "12.5", "14", "3", "k", "15"]);
        // Removing the greatest key does not lower the counter.
        m(&mut h, &a, "RemoveKey", &[num(15.0)]);
        m(&mut h, &a, "PushBack", &[s("g")]);
        assert_eq!(keys(&a).last().unwrap(), "16");
        let neg = h.array(&[(num(-5.5), s("n"))]);
        m(&mut h, &neg, "PushBack", &[s("p")]);
        assert_eq!(keys(&neg), ["-5.5", "0"]);
    }

    #[test]
    fn references_to_items() {
        let mut h = Harness::new();
        let a = h.array(&[(s("k"), num(1.0))]);
        let r = m(&mut h, &a, "[]ref", &[s("k")]);
        assert!(matches!(r, Value::Reference(_)));
        h.call("++pre", &[r]).unwrap();
        assert!(m(&mut h, &a, "[]", &[s("k")]).script_eq(&num(2.0)));
        assert_eq!(me(&mut h, &a, "[]ref", &[s("nope")]), GGE2602);
        assert_eq!(me(&mut h, &a, "[]ref", &[Value::Null]), GGE2603);
    }

    #[test]
    fn front_back_pop() {
        let mut h = Harness::new();
        let a = h.array(&[(num(2.0), s("first")), (num(1.0), s("second")), (num(0.0), s("third"))]);
        assert!(m(&mut h, &a, "Front", &[]).script_eq(&s("first")));
        assert!(m(&mut h, &a, "Back", &[]).script_eq(&s("third")));
        assert!(m(&mut h, &a, "Pop", &[]).script_eq(&s("third")));
        assert!(m(&mut h, &a, "Pop", &[]).script_eq(&s("second")));
        assert_eq!(keys(&a), ["2"]);
        assert!(m(&mut h, &a, "Pop", &[]).script_eq(&s("first")));
        assert_eq!(me(&mut h, &a, "Pop", &[]), GGE2601);
        assert_eq!(me(&mut h, &a, "Front", &[]), GGE2601);
        assert_eq!(me(&mut h, &a, "Back", &[]), GGE2601);
        // Pop does not reset the push-back counter.
        m(&mut h, &a, "PushBack", &[s("x")]);
        assert_eq!(keys(&a), ["3"]);
    }

    #[test]
    fn contains_and_remove() {
        let mut h = Harness::new();
        let inner = h.list(&[]);
        let a = h.array(&[(s("b"), num(1.0)), (s("a"), num(1.0)), (num(0.0), num(2.0)), (s("c"), inner.clone())]);
        assert!(m(&mut h, &a, "ContainsKey", &[s("a")]).script_eq(&Value::Bool(true)));
        assert!(m(&mut h, &a, "ContainsKey", &[s("d")]).script_eq(&Value::Bool(false)));
        assert!(m(&mut h, &a, "ContainsKey", &[Value::Null]).script_eq(&Value::Bool(false)));
        assert!(m(&mut h, &a, "ContainsValue", &[num(2.0)]).script_eq(&Value::Bool(true)));
        assert!(m(&mut h, &a, "ContainsValue", &[inner.clone()]).script_eq(&Value::Bool(true)));
        assert!(m(&mut h, &a, "ContainsValue", &[s("2")]).script_eq(&Value::Bool(false)));
        // RemoveValue removes the first pair in KEY order: "a" < "b", although "b" was inserted first.
        assert!(m(&mut h, &a, "RemoveValue", &[num(1.0)]).is_null());
        assert_eq!(keys(&a), ["b", "0", "c"]);
        // Absent: nothing happens.
        m(&mut h, &a, "RemoveValue", &[num(42.0)]);
        assert_eq!(keys(&a), ["b", "0", "c"]);
        m(&mut h, &a, "RemoveValue", &[inner]);
        assert_eq!(keys(&a), ["b", "0"]);
        assert!(m(&mut h, &a, "RemoveKey", &[s("b")]).is_null());
        assert_eq!(keys(&a), ["0"]);
        assert_eq!(me(&mut h, &a, "RemoveKey", &[s("b")]), GGE2602);
        assert_eq!(me(&mut h, &a, "RemoveKey", &[Value::Null]), GGE2603);
        // Number keys order before String keys (by type name), numbers by value.
        let mixed = h.array(&[(s("a"), num(7.0)), (num(10.0), num(7.0)), (num(2.0), num(7.0))]);
        m(&mut h, &mixed, "RemoveValue", &[num(7.0)]);
        assert_eq!(keys(&mixed), ["a", "10"]);
    }

    #[test]
    fn by_index() {
        let mut h = Harness::new();
        let a = h.array(&[(s("x"), num(10.0)), (s("y"), num(20.0))]);
        assert!(m(&mut h, &a, "GetKeyByIndex", &[num(1.0)]).script_eq(&s("y")));
        assert!(m(&mut h, &a, "GetValueByIndex", &[num(0.0)]).script_eq(&num(10.0)));
        assert!(m(&mut h, &a, "GetValueByIndex", &[num(1.9)]).script_eq(&num(20.0)));
        assert!(m(&mut h, &a, "GetValueByIndex", &[num(-0.5)]).script_eq(&num(10.0)));
        assert_eq!(me(&mut h, &a, "GetKeyByIndex", &[num(2.0)]), GGE2604);
        assert_eq!(me(&mut h, &a, "GetValueByIndex", &[num(-1.0)]), GGE2604);
        assert_eq!(me(&mut h, &a, "GetValueByIndex", &[num(1e300)]), GGE2604);
        assert_eq!(me(&mut h, &a, "GetKeyByIndex", &[s("0")]), GGE2101);
        let e = h.list(&[]);
        assert_eq!(me(&mut h, &e, "GetKeyByIndex", &[num(0.0)]), GGE2604);
    }

    #[test]
    fn sorting() {
        let mut h = Harness::new();
        let a = h.array(&[
            (s("b"), num(3.0)),
            (num(10.0), num(1.0)),
            (s("a"), num(2.0)),
            (num(2.0), num(1.0)),
            (Value::Bool(true), s("t")),
        ]);
        m(&mut h, &a, "SortByKeys", &[]);
        // Boolean < Number < String by type name, then by value.
        assert_eq!(keys(&a), ["true", "2", "10", "a", "b"]);
        m(&mut h, &a, "SortByValues", &[]);
        // Stable: the two 1s keep their order (2 before 10).
        assert_eq!(keys(&a), ["2", "10", "a", "b", "true"]);
        assert_eq!(values(&a), ["1", "1", "2", "3", "t"]);
        // Arrays < Numbers < Strings.
        let inner = h.list(&[]);
        let mixed = h.list(&[s("s"), num(1.0), inner]);
        m(&mut h, &mixed, "SortByValues", &[]);
        assert_eq!(values(&mixed), ["{}", "1", "s"]);
    }

    #[test]
    fn shuffle_is_a_deterministic_permutation() {
        let items: Vec<Value> = (0..50).map(|i| num(i as f64)).collect();
        let shuffled = |seed: Option<f64>, script_seed: u32| {
            let mut h = Harness::with(script_seed, MapGeometry::default());
            let a = h.list(&items);
            let args: Vec<Value> = seed.map(num).into_iter().collect();
            assert!(m(&mut h, &a, "Shuffle", &args).is_null());
            keys(&a)
        };
        let one = shuffled(Some(7.0), 0);
        assert_eq!(one, shuffled(Some(7.0), 0));
        assert_ne!(one, shuffled(Some(8.0), 0));
        assert_ne!(one, shuffled(Some(7.0), 1));
        let mut sorted: Vec<usize> = one.iter().map(|k| k.parse().unwrap()).collect();
        assert_ne!(sorted, (0..50).collect::<Vec<_>>());
        sorted.sort();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        // Keys travel with their values.
        let mut h = Harness::new();
        let a = h.list(&items);
        m(&mut h, &a, "Shuffle", &[num(3.0)]);
        for (k, v) in pairs(&a) {
            assert_eq!(k, v);
        }
        // Without a seed, the common sequence supplies one (and advances).
        let unseeded = shuffled(None, 0);
        assert_eq!(unseeded, shuffled(None, 0));
        let mut h = Harness::new();
        let a = h.list(&items);
        m(&mut h, &a, "Shuffle", &[]);
        let mut expected_common = geogen_random::Mt19937::new(0);
        expected_common.next_u32();
        assert_eq!(h.env.random.next_u32(), expected_common.next_u32());
        assert_eq!(me(&mut h, &a, "Shuffle", &[s("1")]), GGE2101);
        // Tiny arrays.
        let e = h.list(&[]);
        m(&mut h, &e, "Shuffle", &[]);
        let one_item = h.list(&[num(1.0)]);
        m(&mut h, &one_item, "Shuffle", &[num(1.0)]);
        assert_eq!(keys(&one_item), ["0"]);
    }

    #[test]
    fn shuffle_follows_the_documented_algorithm() {
        use geogen_random::{combine_seeds, hash_str, Mt19937};
        let mut h = Harness::with(42, MapGeometry::default());
        let a = h.list(&[num(0.0), num(1.0), num(2.0), num(3.0), num(4.0)]);
        m(&mut h, &a, "Shuffle", &[num(9.0)]);
        let mut mt = Mt19937::new(combine_seeds(&[42, 9, hash_str("Array.Shuffle")]));
        let mut expected: Vec<usize> = (0..5).collect();
        for i in (1..5usize).rev() {
            let j = (mt.next_u32() % (i as u32 + 1)) as usize;
            expected.swap(i, j);
        }
        let expected: Vec<String> = expected.iter().map(|i| i.to_string()).collect();
        assert_eq!(values(&a), expected);
        // A pinned vector, so that a change of the algorithm (which changes scripts' terrain) shows.
        let mut h = Harness::new();
        let a = h.list(&(0..8).map(|i| num(i as f64)).collect::<Vec<_>>());
        m(&mut h, &a, "Shuffle", &[num(1.0)]);
        assert_eq!(values(&a).join(" "), "7 5 0 3 6 2 4 1");
    }

    #[test]
    fn repeat() {
        let mut h = Harness::new();
        let a = h.call_static("Array", "Repeat", &[s("x"), num(3.0)]).unwrap();
        assert_eq!(pairs(&a), [("0", "x"), ("1", "x"), ("2", "x")].map(|(k, v)| (k.to_string(), v.to_string())));
        let e = h.call_static("Array", "Repeat", &[num(1.0), num(0.0)]).unwrap();
        assert!(pairs(&e).is_empty());
        for bad in [-1.0, 1.5, 1e300] {
            assert_eq!(h.call_static("Array", "Repeat", &[num(1.0), num(bad)]).unwrap_err().code, GGE2309, "{bad}");
        }
        assert_eq!(h.call_static("Array", "Repeat", &[num(1.0), s("3")]).unwrap_err().code, GGE2101);
        assert_eq!(h.call_static("Array", "Repeat", &[num(1.0)]).unwrap_err().code, GGE2103);
    }

    #[test]
    fn the_size_limit_holds() {
        let mut h = Harness::new();
        h.env.limits = Limits { max_array_len: 3, ..Limits::default() };
        let a = h.list(&[num(1.0), num(2.0), num(3.0)]);
        assert_eq!(me(&mut h, &a, "PushBack", &[num(4.0)]), GGE2506);
        assert_eq!(me(&mut h, &a, "[]=", &[s("new"), num(4.0)]), GGE2506);
        // Overwriting an existing key is not growth.
        m(&mut h, &a, "[]=", &[num(0.0), num(9.0)]);
        assert!(h.call_static("Array", "Repeat", &[num(1.0), num(3.0)]).is_ok());
        assert_eq!(h.call_static("Array", "Repeat", &[num(1.0), num(4.0)]).unwrap_err().code, GGE2309);
        assert_eq!(keys(&a), ["0", "1", "2"]);
    }
}
