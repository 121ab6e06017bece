//! Types known to a VM run: the built-in types (with fixed ids), then the script's enums and its
//! `Parameters` type. Each type has a static object (a global named after the type) and may have
//! static and instance methods, supplied by a [`crate::Library`].

use std::sync::Arc;

use indexmap::IndexMap;

use crate::native::Native;
use crate::value::Name;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(pub u32);

impl TypeId {
    pub const NULL: TypeId = TypeId(0);
    pub const BOOLEAN: TypeId = TypeId(1);
    pub const NUMBER: TypeId = TypeId(2);
    pub const STRING: TypeId = TypeId(3);
    pub const ARRAY: TypeId = TypeId(4);
    pub const COORDINATE: TypeId = TypeId(5);
    pub const POINT: TypeId = TypeId(6);
    pub const DIRECTION: TypeId = TypeId(7);
    pub const RANDOM_SEQUENCE_2D: TypeId = TypeId(8);
    pub const HEIGHT_MAP: TypeId = TypeId(9);
    pub const HEIGHT_PROFILE: TypeId = TypeId(10);
    pub const PARAMETERS: TypeId = TypeId(11);
    /// Lodestone names and labels (static methods only).
    pub const NAMES: TypeId = TypeId(12);
    /// The first id given to a script enum.
    pub const FIRST_SCRIPT: TypeId = TypeId(13);
}

/// The names of the built-in types, indexed by their [`TypeId`]: the compiler's list, so that a
/// script enum can never take a name the VM gives a type.
pub use geogen_compile::CORE_TYPE_NAMES as BUILTIN_TYPE_NAMES;

/// The methods of one type, as a library provides them. Shared by all VM runs.
#[derive(Clone, Debug, Default)]
pub struct TypeMethods {
    pub static_methods: IndexMap<Name, Native>,
    pub instance_methods: IndexMap<Name, Native>,
}

#[derive(Clone, Debug)]
pub enum TypeKind {
    Builtin,
    /// `Direction` or a script enum: its items in declaration order (names may repeat values).
    Enum {
        items: Vec<(Name, f64)>,
    },
    /// The per-script `Parameters` type; its members are held by the VM.
    Parameters,
}

#[derive(Clone, Debug)]
pub struct TypeInfo {
    pub name: Name,
    pub kind: TypeKind,
    pub methods: Arc<TypeMethods>,
}

impl TypeInfo {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn enum_items(&self) -> Option<&[(Name, f64)]> {
        match &self.kind {
            TypeKind::Enum { items } => Some(items),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct TypeRegistry {
    types: Vec<TypeInfo>,
}

impl TypeRegistry {
    pub fn new() -> TypeRegistry {
        TypeRegistry::default()
    }

    /// Adds a type and returns its id (ids are given in order).
    pub fn add(&mut self, info: TypeInfo) -> TypeId {
        self.types.push(info);
        TypeId(self.types.len() as u32 - 1)
    }

    pub fn get(&self, id: TypeId) -> &TypeInfo {
        &self.types[id.0 as usize]
    }

    pub fn by_name(&self, name: &str) -> Option<TypeId> {
        self.types.iter().position(|t| &*t.name == name).map(|i| TypeId(i as u32))
    }

    pub fn iter(&self) -> impl Iterator<Item = (TypeId, &TypeInfo)> {
        self.types.iter().enumerate().map(|(i, t)| (TypeId(i as u32), t))
    }

    pub fn len(&self) -> usize {
        self.types.len()
    }

    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }
}
