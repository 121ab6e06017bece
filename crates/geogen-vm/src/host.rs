//! What a run hands back to its host besides maps and messages, what the host hands in besides
//! parameters, and a place for natives to keep their own state during a run.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

/// A text placed on the map by a script (`Names.PlaceLabel`): a point in logical map units, the
/// text and its kind (`river`, `peak`, `title`...). The VM knows nothing of pixels; a writer
/// converts the point to the pixels of a render.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub x: f64,
    pub y: f64,
    pub text: String,
    pub kind: String,
    /// The script line and column of the call that placed it.
    pub location: Option<(u32, u32)>,
}

impl Label {
    /// The bytes a kept label holds, charged on the script heap.
    pub fn footprint(&self) -> u64 {
        (self.text.len() + self.kind.len() + std::mem::size_of::<Label>() + 32) as u64
    }
}

/// Named texts the host gives a run, e.g. the Lodestone rule files of `--rules NAME=FILE`.
/// Scripts cannot open files; they ask for these by name.
pub type NamedTexts = Arc<Vec<(String, Arc<str>)>>;

/// Per-run state of native families, one value per Rust type (a family keeps its own struct).
#[derive(Default)]
pub struct Extensions {
    values: HashMap<TypeId, Box<dyn Any>>,
}

impl Extensions {
    /// The family's state, created with `Default` on first use.
    pub fn get_or_default<T: Any + Default>(&mut self) -> &mut T {
        let entry = self.values.entry(TypeId::of::<T>()).or_insert_with(|| Box::new(T::default()));
        match entry.downcast_mut::<T>() {
            Some(value) => value,
            // The map is keyed by the type itself, so the box always holds a T.
            None => unreachable!("extension stored under the wrong type"),
        }
    }

    pub fn get_mut<T: Any>(&mut self) -> Option<&mut T> {
        self.values.get_mut(&TypeId::of::<T>()).and_then(|b| b.downcast_mut::<T>())
    }

    pub fn insert<T: Any>(&mut self, value: T) {
        self.values.insert(TypeId::of::<T>(), Box::new(value));
    }

    pub fn remove<T: Any>(&mut self) -> Option<T> {
        self.values.remove(&TypeId::of::<T>()).and_then(|b| b.downcast::<T>().ok()).map(|b| *b)
    }
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Extensions({} values)", self.values.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_type_has_its_own_slot() {
        let mut ext = Extensions::default();
        *ext.get_or_default::<u32>() += 3;
        *ext.get_or_default::<u32>() += 4;
        ext.insert(String::from("x"));
        assert_eq!(ext.get_mut::<u32>(), Some(&mut 7));
        assert_eq!(ext.remove::<String>(), Some("x".to_string()));
        assert_eq!(ext.get_mut::<String>(), None);
    }
}
