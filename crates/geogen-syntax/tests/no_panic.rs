//! The parser must not panic or hang on any input (README §6: "a panic is a bug"). Two
//! generators: arbitrary bytes (made UTF-8 lossily), and arbitrary sequences of real tokens,
//! which reach far deeper into the grammar than random bytes do.

use geogen_syntax::lexer::{lex, TokenKind};
use geogen_syntax::{dump, parse};
use proptest::prelude::*;

/// Spellings of every kind of token, plus a few lexically broken fragments.
fn fragments() -> Vec<String> {
    let mut all: Vec<String> = TokenKind::keywords().chain(TokenKind::punctuation()).map(str::to_string).collect();
    all.extend(
        ["x", "null", "HeightMap", "Flat", "_a1", "0", "1.5", "42", "\"s\"", "\"a\\nb\"", "//c\n", "/*c*/", "\n"]
            .iter()
            .map(|s| s.to_string()),
    );
    all.extend(["\"open", "/* open", "\\q", "#", "é", "'"].iter().map(|s| s.to_string()));
    all
}

fn check(source: &str) {
    let parsed = parse(source);
    // Rendering walks the whole tree; it must not overflow or panic either.
    let _ = dump::script(&parsed.script);
    for d in &parsed.diagnostics {
        let span = d.span.unwrap_or_default();
        assert!(span.start <= span.end && span.end as usize <= source.len(), "span {span:?} outside the source");
    }
    let (tokens, _) = lex(source);
    assert_eq!(tokens.last().map(|t| &t.kind), Some(&TokenKind::Eof));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        check(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn random_token_sequences_never_panic(picks in proptest::collection::vec(any::<prop::sample::Index>(), 0..200)) {
        let all = fragments();
        let source: Vec<&str> = picks.iter().map(|i| all[i.index(all.len())].as_str()).collect();
        check(&source.join(" "));
    }

    #[test]
    fn mutated_valid_scripts_never_panic(cut in 0usize..2000, insert in any::<prop::sample::Index>(), at in 0usize..2000) {
        // A real script with one token inserted somewhere and a piece cut off the end: the kind of
        // input an editor sends while the user types.
        let base = "metadata { Name: \"x\", Width: Finite, Parameters: { A: { Default: 1 } } }\n\
                    enum E { A, B = 2 }\nfunction f(a, b) { return a ? b : -a; }\n\
                    var m = HeightMap.Flat(0); for (var i = 0; i < 3; i++) { if (i == 1) continue; m.Add([1, 2]); }\n\
                    switch (x) { case 1: break; default: y = {1, \"k\": 2}[0]; }\nyield m as \"main\";\n";
        let all = fragments();
        let fragment = all[insert.index(all.len())].as_str();
        let mut at = at.min(base.len());
        while !base.is_char_boundary(at) { at -= 1; }
        let mut source = format!("{}{fragment}{}", &base[..at], &base[at..]);
        let mut keep = source.len().saturating_sub(cut % (source.len() + 1));
        while !source.is_char_boundary(keep) { keep -= 1; }
        source.truncate(keep);
        check(&source);
    }
}
