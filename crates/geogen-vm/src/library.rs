use std::sync::Arc;

use indexmap::IndexMap;

use crate::native::Native;
use crate::types::TypeMethods;
use crate::value::Name;

/// The natives a VM can call: global functions (including operators, registered under their
/// symbols `+`, `==`, `++pre`, ...) and the methods of the built-in types, keyed by type name.
/// Built once and shared by every run (and every thread).
#[derive(Clone, Debug, Default)]
pub struct Library {
    pub globals: IndexMap<Name, Native>,
    pub types: IndexMap<Name, Arc<TypeMethods>>,
    /// Methods every enum type has (`FromNumber`).
    pub enum_methods: Arc<TypeMethods>,
}

impl Library {
    pub fn new() -> Library {
        Library::default()
    }

    pub fn add_global(&mut self, native: Native) {
        self.globals.insert(Name::from(native.name), native);
    }

    pub fn type_methods_mut(&mut self, type_name: &str) -> &mut TypeMethods {
        let entry = self.types.entry(Name::from(type_name)).or_default();
        Arc::make_mut(entry)
    }

    pub fn add_static(&mut self, type_name: &str, native: Native) {
        self.type_methods_mut(type_name).static_methods.insert(Name::from(native.name), native);
    }

    pub fn add_method(&mut self, type_name: &str, native: Native) {
        self.type_methods_mut(type_name).instance_methods.insert(Name::from(native.name), native);
    }

    pub fn add_enum_static(&mut self, native: Native) {
        Arc::make_mut(&mut self.enum_methods).static_methods.insert(Name::from(native.name), native);
    }

    /// Adds everything of `other` (later registrations win).
    pub fn extend(&mut self, other: &Library) {
        for (k, v) in &other.globals {
            self.globals.insert(k.clone(), *v);
        }
        for (ty, methods) in &other.types {
            let mine = self.type_methods_mut(ty);
            for (k, v) in &methods.static_methods {
                mine.static_methods.insert(k.clone(), *v);
            }
            for (k, v) in &methods.instance_methods {
                mine.instance_methods.insert(k.clone(), *v);
            }
        }
        for (k, v) in &other.enum_methods.static_methods {
            Arc::make_mut(&mut self.enum_methods).static_methods.insert(k.clone(), *v);
        }
    }

    /// Every name a script function may not take (GGE1306).
    pub fn global_names(&self) -> impl Iterator<Item = &str> {
        self.globals.keys().map(|k| &**k)
    }
}
