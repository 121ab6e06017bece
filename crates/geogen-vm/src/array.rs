//! The GeoGen Script array: an ordered associative container (insertion order is kept, keys are any
//! non-null values compared with the language's `==`), in the manner of PHP arrays.

use indexmap::IndexMap;

use crate::heap::Heap;
use crate::value::{ObjectId, ScriptString, Value};
use crate::RuntimeError;
use geogen_diag::codes;

/// A hashable form of a key value that agrees with [`Value::script_eq`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KeyRepr {
    Bool(bool),
    /// `f64::to_bits` of the value with -0 folded into +0.
    Number(u64),
    String(ScriptString),
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

/// Bytes one slot of an array's capacity holds: the entry (hash, key, key value, value) and its
/// place in the hash index (an index, a control byte, and the index's spare room).
const SLOT_BYTES: u64 = (std::mem::size_of::<(KeyRepr, (Value, Value))>() + 3 * std::mem::size_of::<usize>()) as u64;

/// Bytes of an array object itself: its header, shared-pointer counts and allocator bookkeeping.
const OBJECT_BYTES: u64 = (std::mem::size_of::<crate::value::ArrayObject>() + 48) as u64;

/// The fewest slots an array allocates when it first grows.
const FIRST_CAPACITY: usize = 4;

#[derive(Debug, Default)]
pub struct Array {
    /// Insertion order; each entry keeps the key value as first inserted.
    entries: IndexMap<KeyRepr, (Value, Value)>,
    /// The greatest integer key ever inserted (for push-back), starting at -1.
    greatest_int_key: f64,
    /// The script heap this array's bytes are counted on (`None`: an array outside a run).
    heap: Option<Heap>,
    /// Bytes counted on `heap` now.
    charged: u64,
}

impl Array {
    /// An array not counted on any heap (outside a run, or until [`Array::count_on`]).
    pub fn new() -> Array {
        Array { entries: IndexMap::new(), greatest_int_key: -1.0, heap: None, charged: 0 }
    }

    /// An empty array counted on `heap` (GGE2508 if even that does not fit).
    pub fn counted(heap: &Heap) -> Result<Array, RuntimeError> {
        let mut array = Array::new();
        array.count_on(heap)?;
        Ok(array)
    }

    /// Starts counting this array on `heap`, with what it holds already; no-op if it is counted.
    pub fn count_on(&mut self, heap: &Heap) -> Result<(), RuntimeError> {
        if self.heap.is_some() {
            return Ok(());
        }
        let bytes = footprint(self.entries.capacity());
        heap.charge(bytes)?;
        self.heap = Some(heap.clone());
        self.charged = bytes;
        Ok(())
    }

    /// Before an insertion of a new key that will reallocate: charges the grown capacity first,
    /// so an array cannot take the memory before the limit is checked.
    fn reserve_one(&mut self) -> Result<(), RuntimeError> {
        let Some(heap) = &self.heap else { return Ok(()) };
        let capacity = self.entries.capacity();
        if self.entries.len() < capacity {
            return Ok(());
        }
        let grown = footprint((capacity * 2).max(FIRST_CAPACITY));
        if grown > self.charged {
            heap.charge(grown - self.charged)?;
            self.charged = grown;
        }
        Ok(())
    }

    /// After a change: counts what the array actually holds.
    fn settle(&mut self) {
        let Some(heap) = &self.heap else { return };
        let bytes = footprint(self.entries.capacity());
        if bytes > self.charged {
            heap.charge_anyway(bytes - self.charged);
        } else {
            heap.release(self.charged - bytes);
        }
        self.charged = bytes;
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

    /// Inserts or overwrites; an existing key keeps its position. A new key that the script heap
    /// has no room for is GGE2508, and the array is left as it was.
    pub fn set(&mut self, key: Value, value: Value) -> Result<(), RuntimeError> {
        let repr = KeyRepr::of(&key)?;
        // An existing key (the same Number, so the same ceiling) changes nothing but its value.
        if let Some(slot) = self.entries.get_mut(&repr) {
            slot.1 = value;
            return Ok(());
        }
        self.reserve_one()?;
        if let Value::Number(n) = key {
            let c = n.ceil();
            if c > self.greatest_int_key {
                self.greatest_int_key = c;
            }
        }
        self.entries.insert(repr, (key, value));
        self.settle();
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

impl Drop for Array {
    fn drop(&mut self) {
        if let Some(heap) = &self.heap {
            heap.release(self.charged);
        }
    }
}

/// The bytes an array with room for `capacity` pairs holds.
fn footprint(capacity: usize) -> u64 {
    OBJECT_BYTES.saturating_add(SLOT_BYTES.saturating_mul(capacity as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counted_array_charges_as_it_grows_and_releases_when_dropped() {
        let heap = Heap::new(1 << 20);
        let mut array = Array::counted(&heap).unwrap();
        let empty = heap.used();
        assert!(empty > 0, "the object itself counts");
        for i in 0..100 {
            array.push_back(Value::Number(f64::from(i))).unwrap();
        }
        assert!(heap.used() >= empty + 100 * SLOT_BYTES, "{}", heap.used());
        drop(array);
        assert_eq!(heap.used(), 0);
    }

    #[test]
    fn growth_past_the_limit_is_gge2508_and_leaves_the_array_as_it_was() {
        let heap = Heap::new(4096);
        let mut array = Array::counted(&heap).unwrap();
        let mut pushed = 0;
        let error = loop {
            match array.push_back(Value::Number(1.0)) {
                Ok(()) => pushed += 1,
                Err(e) => break e,
            }
        };
        assert_eq!(error.code, codes::GGE2508);
        assert_eq!(array.len(), pushed);
        assert!(heap.used() <= 4096);
        // Overwriting an existing key needs no room.
        array.set(Value::Number(0.0), Value::Number(2.0)).unwrap();
        // Counting an array that is already too big is refused too.
        let mut big = Array::new();
        for i in 0..1000 {
            big.push_back(Value::Number(f64::from(i))).unwrap();
        }
        assert_eq!(big.count_on(&Heap::new(1000)).unwrap_err().code, codes::GGE2508);
    }
}
