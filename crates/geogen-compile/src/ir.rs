//! The intermediate code: a tree of code blocks of stack-machine instructions (thesis appendix B,
//! reference §3.2), with our fixes (`continue` in `for` runs the increment, `switch`, short-circuit
//! `&&`/`||`, chained assignment).
//!
//! Invariants the VM relies on:
//! - Statements leave the object stack as they found it; expressions push exactly one value.
//! - Every function's root block ends with `LoadNull` (the implicit return value); `return e` is
//!   `e; Break(n)` where `n` pops every block of the function, leaving the value on the stack.
//! - `Break`/`Continue` counts never cross a function's root block.

use std::sync::Arc;

use geogen_diag::Span;

use crate::metadata::ScriptMetadata;

/// Names of variables, members and functions (shared across threads).
pub type Name = Arc<str>;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(pub u32);

#[derive(Clone, Debug, Default, PartialEq)]
pub struct CodeBlock {
    pub instructions: Vec<Instruction>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    pub op: Op,
    /// The source this instruction was compiled from; runtime errors point here.
    pub span: Span,
    /// For a call written in the script, the source of each argument: an error about one
    /// argument points at it.
    pub arguments: Option<Box<[Span]>>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Push a Number.
    LoadNumber(f64),
    /// Push a String.
    LoadString(Name),
    LoadBool(bool),
    LoadNull,
    /// Push the value of a variable: the current call frame's code-block scopes, innermost first,
    /// then the globals (which include the type objects and `null`). Undefined: GGE2202.
    LoadScope(Name),
    /// Push a `Reference` to a variable (for `++`, `--`, `op=`). Undefined: GGE2202.
    LoadScopeRef(Name),
    /// Store the stack top into the variable found as `LoadScope` finds it; the value stays on the
    /// stack (assignment is an expression). Read-only: GGE2108; undefined: GGE2202.
    StoreScope(Name),
    /// Like `StoreScope` but only in the global table (`global x = e`).
    StoreGlobal(Name),
    /// Declare a variable holding null in the innermost code block's scope. Already declared in
    /// that scope: GGE2204.
    DeclareLocal(Name),
    /// Declare a global holding null. Already existing (including type names and `null`): GGE2204.
    DeclareGlobal(Name),
    /// Pop an object and push its member (`p.X`, `Direction.Vertical`, `Parameters.Size`).
    /// Null: GGE2106; no such member: GGE2202.
    LoadMember(Name),
    /// Stack `[.., object, value]`: store into the member, leaving the value. Every member is
    /// read-only, so this reports GGE2108 (GGE2106 on null, GGE2202 when there is no such member).
    StoreMember(Name),
    /// Stack `[.., a0, .., a(n-1)]`: call a global function (script or native) with `argc`
    /// arguments and push its result. Unknown: GGE2201; wrong count: GGE2103.
    CallGlobal {
        name: Name,
        argc: u32,
    },
    /// Stack `[.., object, a0, .., a(n-1)]`: call a method. On a type object (`HeightMap`,
    /// `Array`, an enum) the type's static methods are searched, otherwise the instance methods of
    /// the value's type. Null: GGE2106; unknown: GGE2201.
    CallMember {
        name: Name,
        argc: u32,
    },
    /// Enter a block (a new scope).
    CallBlock(BlockId),
    /// Pop a Boolean (else GGE2104) and enter `then` if true, `otherwise` (if any) if false.
    If {
        then: BlockId,
        otherwise: Option<BlockId>,
    },
    /// Enter `body` in looping mode: each time it finishes it starts again with a fresh scope.
    While(BlockId),
    /// Leave `n` blocks: the innermost and the `n - 1` enclosing ones. A looping block left this way
    /// does not loop again. Leaving a function's root block returns from the function.
    Break(u32),
    /// Leave `n - 1` blocks; the `n`-th (innermost remaining) must be looping and starts its next
    /// iteration with a fresh scope. Otherwise: GGE5001.
    Continue(u32),
    /// Discard the stack top.
    Pop,
    /// Push a copy of the stack top (a second reference to the same value).
    Dup,
    /// Pop a value that must be a HeightMap (else GGE2107) and record it as the map `name`. The
    /// same name twice in one run: GGE2802.
    Yield(Name),
}

/// A script function.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptFunction {
    pub name: Name,
    pub params: Vec<Name>,
    /// Its root block. On a call the VM binds the arguments to `params` as locals of this block.
    pub body: BlockId,
    pub span: Span,
}

/// A script `enum`.
#[derive(Clone, Debug, PartialEq)]
pub struct EnumDef {
    pub name: Name,
    /// Items in declaration order; values are integers and may repeat.
    pub items: Vec<(Name, f64)>,
    pub span: Span,
}

/// The output of the compiler; immutable and shareable between threads.
#[derive(Clone, Debug, PartialEq)]
pub struct CompiledScript {
    /// All code blocks; `BlockId` indexes this.
    pub blocks: Vec<CodeBlock>,
    /// The root block of the implicit `<main>` function (the top-level statements).
    pub main: BlockId,
    /// Script functions by name, in source order.
    pub functions: indexmap::IndexMap<Name, ScriptFunction>,
    pub enums: Vec<EnumDef>,
    pub metadata: ScriptMetadata,
    /// Map names that appear in `yield` statements (`"main"` for an unnamed yield), in source
    /// order without repeats.
    pub map_names: Vec<Name>,
}

impl CompiledScript {
    pub fn block(&self, id: BlockId) -> &CodeBlock {
        &self.blocks[id.0 as usize]
    }
}
