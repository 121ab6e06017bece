//! The GeoGen Script array: an ordered associative container (insertion order is kept, keys are any
//! non-null values compared with the language's `==`), in the manner of PHP arrays.

use indexmap::IndexMap;

use crate::value::{ObjectId, Value};
use crate::RuntimeError;
use geogen_diag::codes;

/// A hashable form of a key value that agrees with [`Value::script_eq`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KeyRepr {
    Bool(bool),
    /// `f64::to_bits` of the value with -0 folded into +0.
    Number(u64),
    String(std::rc::Rc<str>),
    /// Coordinates compare by value only.
    Coordinate(u64),
    Point(u64, u64, bool, bool),
    Enum(u32, u64),
    Type(u32),
    Object(u8, ObjectId),
}

fn bits(n: f64) -> u64 {
    if n == 0.0 {
        0f64.to_bits()
    } else {
        n.to_bits()
    }
}

impl KeyRepr {
    /// The key form of a value; `null` cannot be a key (GGE2603), nor can internal references.
    pub fn of(value: &Value) -> Result<KeyRepr, RuntimeError> {
        Ok(match value {
            Value::Null => return Err(RuntimeError::new(codes::GGE2603, "null cannot be an array key".to_string())),
            Value::Bool(b) => KeyRepr::Bool(*b),
            Value::Number(n) => KeyRepr::Number(bits(*n)),
            Value::String(s) => KeyRepr::String(s.clone()),
            Value::Coordinate(c) => KeyRepr::Coordinate(bits(c.value)),
            Value::Point(p) => KeyRepr::Point(bits(p.x.value), bits(p.y.value), p.x.relative, p.y.relative),
            Value::Enum(e) => KeyRepr::Enum(e.ty.0, bits(e.value)),
            Value::Type(t) => KeyRepr::Type(t.0),
            Value::Array(a) => KeyRepr::Object(1, a.id),
            Value::RandomSequence2D(r) => KeyRepr::Object(2, r.borrow().id),
            Value::HeightMap(m) => KeyRepr::Object(3, m.id),
            Value::HeightProfile(m) => KeyRepr::Object(4, m.id),
            Value::Reference(_) => {
                return Err(RuntimeError::new(codes::GGE5000, "a reference cannot be an array key".to_string()))
            }
        })
    }
}

#[derive(Clone, Debug, Default)]
pub struct Array {
    /// Insertion order; each entry keeps the key value as first inserted.
    entries: IndexMap<KeyRepr, (Value, Value)>,
    /// The greatest integer key ever inserted (for push-back), starting at -1.
    greatest_int_key: f64,
}

impl Array {
    pub fn new() -> Array {
        Array { entries: IndexMap::new(), greatest_int_key: -1.0 }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value under `key`, if any (a `null` key finds nothing).
    pub fn get(&self, key: &Value) -> Option<&Value> {
        let repr = KeyRepr::of(key).ok()?;
        self.entries.get(&repr).map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &Value) -> bool {
        self.get(key).is_some()
    }

    /// Inserts or overwrites; an existing key keeps its position.
    pub fn set(&mut self, key: Value, value: Value) -> Result<(), RuntimeError> {
        let repr = KeyRepr::of(&key)?;
        if let Value::Number(n) = key {
            let c = n.ceil();
            if c > self.greatest_int_key {
                self.greatest_int_key = c;
            }
        }
        match self.entries.get_mut(&repr) {
            Some(slot) => slot.1 = value,
            None => {
                self.entries.insert(repr, (key, value));
            }
        }
        Ok(())
    }

    /// Appends with key = greatest integer key so far + 1 (0 on a fresh array).
    pub fn push_back(&mut self, value: Value) -> Result<(), RuntimeError> {
        let key = self.greatest_int_key + 1.0;
        self.set(Value::Number(key), value)
    }

    /// Removes a key, keeping the order of the rest; returns the removed pair.
    pub fn remove(&mut self, key: &Value) -> Option<(Value, Value)> {
        let repr = KeyRepr::of(key).ok()?;
        self.entries.shift_remove(&repr)
    }

    /// The `index`-th pair in insertion order.
    pub fn get_index(&self, index: usize) -> Option<(&Value, &Value)> {
        self.entries.get_index(index).map(|(_, (k, v))| (k, v))
    }

    pub fn remove_index(&mut self, index: usize) -> Option<(Value, Value)> {
        self.entries.shift_remove_index(index).map(|(_, kv)| kv)
    }

    /// Pairs in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&Value, &Value)> {
        self.entries.values().map(|(k, v)| (k, v))
    }

    /// Reorders the pairs with a comparison of (key, value) pairs; the sort is stable.
    pub fn sort_by(&mut self, mut cmp: impl FnMut((&Value, &Value), (&Value, &Value)) -> std::cmp::Ordering) {
        self.entries.sort_by(|_, a, _, b| cmp((&a.0, &a.1), (&b.0, &b.1)));
    }

    /// Replaces the order with the given permutation of current positions.
    pub fn reorder(&mut self, order: &[usize]) {
        let old: Vec<_> = self.entries.drain(..).collect();
        let mut slots: Vec<Option<_>> = old.into_iter().map(Some).collect();
        for &i in order {
            if let Some((k, v)) = slots.get_mut(i).and_then(Option::take) {
                self.entries.insert(k, v);
            }
        }
    }
}

impl Array {
    /// Removes and returns every pair, leaving the array empty (used to drop nested arrays
    /// without recursion).
    pub(crate) fn take_pairs(&mut self) -> Vec<(Value, Value)> {
        self.entries.drain(..).map(|(_, kv)| kv).collect()
    }
}
