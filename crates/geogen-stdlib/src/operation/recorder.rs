//! How an operation's `record` function appends rendering steps and builds script handles.

use std::rc::Rc;

use geogen_render::{Effect, Location, ObjectKind, Operation, RenderingSequence, Slot};
use geogen_vm::value::MapHandle;
use geogen_vm::{Ctx, MapGeometry, RuntimeError, Value};

/// The VM side of one call, as an operation sees it while recording.
pub struct Recorder<'c, 'e> {
    ctx: &'c mut Ctx<'e>,
    this: &'c Value,
}

impl<'c, 'e> Recorder<'c, 'e> {
    pub fn new(ctx: &'c mut Ctx<'e>, this: &'c Value) -> Recorder<'c, 'e> {
        Recorder { ctx, this }
    }

    /// The slot of the receiver of a method.
    pub fn this_slot(&self) -> Result<Slot, RuntimeError> {
        match self.this {
            Value::HeightMap(h) | Value::HeightProfile(h) => Ok(Slot(h.slot)),
            _ => Err(RuntimeError::internal("a map operation was called on something that is not a map or profile")),
        }
    }

    /// The script seed of this run.
    pub fn script_seed(&self) -> u32 {
        self.ctx.env.script_seed
    }

    /// The run's limits (`--max-call-depth` also bounds Height-Slang's `self` recursion).
    pub fn limits(&self) -> &geogen_vm::Limits {
        &self.ctx.env.limits
    }

    pub fn geometry(&self) -> &MapGeometry {
        &self.ctx.env.geometry
    }

    /// The input map the host gave under `name` (`--input name=FILE`), shared read-only.
    pub fn input(&self, name: &str) -> Option<std::sync::Arc<geogen_render::InputRaster>> {
        self.ctx.env.inputs.get(name).cloned()
    }

    /// The names of the input maps the host gave, in order.
    pub fn input_names(&self) -> Vec<String> {
        self.ctx.env.inputs.keys().cloned().collect()
    }

    /// The script location of the call, for the steps it records.
    pub fn location(&self) -> Location {
        self.ctx.env.location(self.ctx.span)
    }

    /// The rendering sequence, for operations that record several steps.
    pub fn sequence(&mut self) -> &mut RenderingSequence {
        &mut self.ctx.env.sequence
    }

    /// Appends a step creating a new object from `inputs`; returns its slot.
    pub fn push_create(&mut self, op: impl Operation + 'static, inputs: &[Slot]) -> Result<Slot, RuntimeError> {
        let location = self.location();
        self.ctx.env.sequence.push_create(op, inputs, location).map_err(RuntimeError::from_render)
    }

    /// Appends an in-place step on `target` that also reads `others`.
    pub fn push_modify(
        &mut self,
        op: impl Operation + 'static,
        target: Slot,
        others: &[Slot],
    ) -> Result<Slot, RuntimeError> {
        let location = self.location();
        self.ctx.env.sequence.push_modify(op, target, others, location).map_err(RuntimeError::from_render)
    }

    /// A new script handle naming `slot`.
    pub fn handle(&mut self, kind: ObjectKind, slot: Slot) -> Value {
        let handle = Rc::new(MapHandle { id: self.ctx.env.new_object_id(), slot: slot.0 });
        match kind {
            ObjectKind::Map => Value::HeightMap(handle),
            ObjectKind::Profile => Value::HeightProfile(handle),
        }
    }

    /// Records a step creating a new object; returns its handle (the value of a static call).
    pub fn create(&mut self, op: impl Operation + 'static, inputs: &[Slot]) -> Result<Value, RuntimeError> {
        let kind = match op.effect() {
            Effect::Create(kind) => kind,
            Effect::Modify => return Err(RuntimeError::internal(format!("`{}` does not create an object", op.name()))),
        };
        let slot = self.push_create(op, inputs)?;
        Ok(self.handle(kind, slot))
    }

    /// Records an in-place step on the receiver that also reads `others`; returns the receiver (so
    /// calls chain and aliases see the change).
    pub fn modify(&mut self, op: impl Operation + 'static, others: &[Slot]) -> Result<Value, RuntimeError> {
        let target = self.this_slot()?;
        self.push_modify(op, target, others)?;
        Ok(self.this.clone())
    }

    /// The receiver, for methods that record their steps themselves.
    pub fn this(&self) -> Value {
        self.this.clone()
    }
}
