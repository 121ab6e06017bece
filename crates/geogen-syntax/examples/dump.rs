//! Prints the syntax tree (as S-expressions) and the diagnostics of a script:
//! `cargo run -p geogen-syntax --example dump -- FILE` (or `-` for standard input).

use std::io::Read;

use geogen_diag::{render_diagnostics, RenderOptions, SourceFile};

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| "-".to_string());
    let mut source = String::new();
    let read = if path == "-" {
        std::io::stdin().read_to_string(&mut source).map(|_| ())
    } else {
        std::fs::read_to_string(&path).map(|text| source = text)
    };
    if let Err(error) = read {
        eprintln!("cannot read {path}: {error}");
        std::process::exit(2);
    }
    let parsed = geogen_syntax::parse(&source);
    print!("{}", geogen_syntax::dump::script(&parsed.script));
    print!("{}", render_diagnostics(&parsed.diagnostics, &SourceFile::new(path, source), RenderOptions::default()));
}
