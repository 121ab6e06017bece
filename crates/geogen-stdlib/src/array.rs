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
    Ok(Value::Array(ctx.new_array(Array::new())))
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
    let mut array = Array::new();
    for _ in 0..count as usize {
        array.push_back(value.clone())?;
    }
    Ok(Value::Array(ctx.new_array(array)))
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

fn contains_value(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let array = this_array(args)?;
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

const SORT_BY_KEYS: Native = Native::function("SortByKeys", "array.SortByKeys()", 0, Some(0), sort_by_keys);

fn sort_by_keys(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let array = this_array(args)?;
    array.items.borrow_mut().sort_by(|a, b| a.0.total_cmp(b.0, ctx.types));
    Ok(Value::Null)
}

const SORT_BY_VALUES: Native = Native::function("SortByValues", "array.SortByValues()", 0, Some(0), sort_by_values);

/// A stable sort by value (equal values keep their relative order).
fn sort_by_values(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let array = this_array(args)?;
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
