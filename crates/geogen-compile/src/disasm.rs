//! A readable listing of the intermediate code (`geogen run --code`, and the compiler's tests).
//!
//! Nested blocks are printed inline, indented, where the instruction that enters them stands:
//!
//! ```text
//! function <main>() #0
//!   LoadScope x
//!   If #1 {
//!     LoadNumber 1
//!     Pop
//!   } else #2 {
//!     LoadNumber 2
//!     Pop
//!   }
//!   LoadNull
//! ```

use std::fmt::{self, Write};

use geogen_diag::SourceFile;

use crate::compiler::MAIN_FUNCTION;
use crate::ir::{BlockId, CompiledScript, Op};

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::LoadNumber(n) => write!(f, "LoadNumber {n}"),
            Op::LoadString(s) => write!(f, "LoadString {:?}", &**s),
            Op::LoadBool(b) => write!(f, "LoadBool {b}"),
            Op::LoadNull => write!(f, "LoadNull"),
            Op::LoadScope(n) => write!(f, "LoadScope {n}"),
            Op::LoadScopeRef(n) => write!(f, "LoadScopeRef {n}"),
            Op::StoreScope(n) => write!(f, "StoreScope {n}"),
            Op::StoreGlobal(n) => write!(f, "StoreGlobal {n}"),
            Op::DeclareLocal(n) => write!(f, "DeclareLocal {n}"),
            Op::DeclareGlobal(n) => write!(f, "DeclareGlobal {n}"),
            Op::LoadMember(n) => write!(f, "LoadMember {n}"),
            Op::StoreMember(n) => write!(f, "StoreMember {n}"),
            Op::CallGlobal { name, argc } => write!(f, "CallGlobal {name} {argc}"),
            Op::CallMember { name, argc } => write!(f, "CallMember {name} {argc}"),
            Op::CallBlock(b) => write!(f, "CallBlock #{}", b.0),
            Op::If { then, otherwise: None } => write!(f, "If #{}", then.0),
            Op::If { then, otherwise: Some(o) } => write!(f, "If #{} else #{}", then.0, o.0),
            Op::While(b) => write!(f, "While #{}", b.0),
            Op::Break(n) => write!(f, "Break {n}"),
            Op::Continue(n) => write!(f, "Continue {n}"),
            Op::Pop => write!(f, "Pop"),
            Op::Dup => write!(f, "Dup"),
            Op::Yield(n) => write!(f, "Yield {:?}", &**n),
        }
    }
}

impl fmt::Display for CompiledScript {
    /// The listing without source positions; see [`CompiledScript::disassemble`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.disassemble(None))
    }
}

impl CompiledScript {
    /// The listing of every enum and function, `<main>` first. With `source`, each instruction
    /// is prefixed with the `line:column` it was compiled from.
    pub fn disassemble(&self, source: Option<&SourceFile>) -> String {
        let mut out = String::new();
        for def in &self.enums {
            let items: Vec<String> = def.items.iter().map(|(name, value)| format!("{name} = {value}")).collect();
            let _ = writeln!(out, "enum {} {{ {} }}", def.name, items.join(", "));
        }
        if !self.enums.is_empty() {
            out.push('\n');
        }
        let _ = writeln!(out, "function {MAIN_FUNCTION}() #{}", self.main.0);
        self.write_block(&mut out, self.main, 1, source);
        for function in self.functions.values() {
            let params: Vec<&str> = function.params.iter().map(|p| &**p).collect();
            let _ = writeln!(out, "\nfunction {}({}) #{}", function.name, params.join(", "), function.body.0);
            self.write_block(&mut out, function.body, 1, source);
        }
        out
    }

    fn write_block(&self, out: &mut String, id: BlockId, indent: usize, source: Option<&SourceFile>) {
        let Some(block) = self.blocks.get(id.0 as usize) else {
            let _ = writeln!(out, "{:indent$}<missing block #{}>", "", id.0, indent = indent * 2);
            return;
        };
        for instruction in &block.instructions {
            let position = match source {
                Some(file) => format!("{:<8}", file.line_col(instruction.span.start).to_string()),
                None => String::new(),
            };
            let pad = indent * 2;
            match &instruction.op {
                // The branches are printed after the condition jump, so name only `then` here.
                Op::If { then, .. } => {
                    let _ = write!(out, "{position}{:pad$}If #{}", "", then.0);
                }
                op => {
                    let _ = write!(out, "{position}{:pad$}{op}", "");
                }
            }
            match &instruction.op {
                Op::CallBlock(b) | Op::While(b) => {
                    out.push_str(" {\n");
                    self.write_block(out, *b, indent + 1, source);
                    let _ = writeln!(out, "{:width$}}}", "", width = position.len() + pad);
                }
                Op::If { then, otherwise } => {
                    out.push_str(" {\n");
                    self.write_block(out, *then, indent + 1, source);
                    let _ = write!(out, "{:width$}}}", "", width = position.len() + pad);
                    if let Some(otherwise) = otherwise {
                        let _ = writeln!(out, " else #{} {{", otherwise.0);
                        self.write_block(out, *otherwise, indent + 1, source);
                        let _ = write!(out, "{:width$}}}", "", width = position.len() + pad);
                    }
                    out.push('\n');
                }
                _ => out.push('\n'),
            }
        }
    }
}
