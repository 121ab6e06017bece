//! Snapshots of the disassembly of representative scripts, parsed by the real parser.
//! Re-bless with `INSTA_UPDATE=always cargo test -p geogen-compile`.

use geogen_compile::{compile, CompileOptions};

fn disassemble(source: &str) -> String {
    let parsed = geogen_syntax::parse(source);
    assert!(parsed.diagnostics.is_empty(), "syntax errors: {:#?}", parsed.diagnostics);
    let options = CompileOptions::default().with_functions(["Print", "Sin", "Random"]);
    match compile(&parsed.script, &options) {
        Ok(compiled) if compiled.metadata == Default::default() => compiled.to_string(),
        Ok(compiled) => format!("{compiled}\n{:#?}\n", compiled.metadata),
        Err(errors) => panic!("compile errors: {errors:#?}"),
    }
}

macro_rules! snapshot {
    ($name:ident, $source:expr) => {
        #[test]
        fn $name() {
            let source: &str = $source;
            // The script is stored as the snapshot's description, above the listing.
            insta::with_settings!({ description => source, omit_expression => true }, {
                insta::assert_snapshot!(stringify!($name), disassemble(source));
            });
        }
    };
}

snapshot!(
    flat_map,
    "var map = HeightMap.Flat(0.5);
map.Noise(HeightMap.Noise(), 0.2);
yield map;"
);

snapshot!(
    metadata_and_parameters,
    r#"metadata {
    Name: "Island",
    Width: Finite, Height: Finite,
    Parameters: {
        Size: { Label: "Size", Default: 50, Min: 10, Max: 100, Restriction: Integers },
        Flat: { Default: false },
        Axis: { Type: Direction, Default: Vertical }
    }
}
var h = Parameters.Flat ? 0 : Parameters.Size / 100;
yield HeightMap.Flat(h) as "main";"#
);

snapshot!(
    for_loop_with_continue,
    "var sum = 0;
for (var i = 0; i < 10; i++) {
    if (i % 2 == 0) continue;
    if (i > 7) break;
    sum += i;
}
yield HeightMap.Flat(sum / 100);"
);

snapshot!(
    while_loop,
    "var i = 10;
while (i > 0) {
    i -= 3;
    if (i == 4) { continue; }
}
yield HeightMap.Flat();"
);

snapshot!(
    switch_statement,
    r#"var x = 2;
switch (x) {
    case 1: Print("one");
    default: Print("other");
    case 2:
    case 3: Print("two or three"); break;
}
yield HeightMap.Flat();"#
);

snapshot!(
    functions_and_recursion,
    "function Fact(n) {
    if (n <= 1) return 1;
    return n * Fact(n - 1);
}
function Nothing() { return; }
global total = Fact(5);
Nothing();
yield HeightMap.Flat();"
);

snapshot!(
    arrays_and_coordinates,
    r#"var a = { 1, 2, "k": 3 };
a[] = 4;
a["k"] += 1;
a[0]++;
var b = (a[] = 5);
var p = [@0.5, 200];
var c = [10];
yield HeightMap.Flat();"#
);

snapshot!(
    short_circuit_and_ternary,
    "var a = true;
var b = a && Random() > 0.5 || !a;
var c = b ? 1 : -1;
yield HeightMap.Flat(c * 0.1);"
);

snapshot!(
    enums_and_chained_assignment,
    "enum Biome { Desert, Forest = 5, Tundra }
var x; var y;
x = y = Biome.Tundra;
x ^= 1;
yield HeightMap.Flat();"
);

snapshot!(
    nested_blocks_and_scopes,
    "var x = 1;
{
    var x = x + 1;
    { }
    if (x > 1) { x = 0; } else if (x < 0) { x = 1; }
}
yield HeightMap.Flat() as \"main\";
yield HeightMap.Flat() as \"detail\";"
);

/// Every prefix of every script above parses to a tree with error nodes; compiling it must never
/// panic (the errors themselves do not matter here).
#[test]
fn truncated_scripts_never_panic() {
    let sources = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots"))
        .map(|dir| {
            dir.filter_map(|e| e.ok()).filter_map(|e| std::fs::read_to_string(e.path()).ok()).collect::<Vec<_>>()
        })
        .unwrap_or_default();
    assert!(sources.len() >= 10);
    let options = CompileOptions::default();
    let mut compiled = 0;
    for snap in &sources {
        // The script is the snapshot's description (a JSON-style quoted string).
        let Some(line) = snap.lines().find(|l| l.starts_with("description: ")) else { continue };
        let quoted = &line["description: ".len()..];
        let source = quoted.trim_matches('"').replace("\\n", "\n").replace("\\\"", "\"");
        for end in (0..=source.len()).filter(|&i| source.is_char_boundary(i)) {
            let parsed = geogen_syntax::parse(&source[..end]);
            let _ = compile(&parsed.script, &options);
            compiled += 1;
        }
    }
    assert!(compiled > 1000);
}

/// The compile errors of real source text, with the text their spans cover.
#[test]
fn compile_errors_through_the_parser() {
    let source = "function Sin(x) { return x; }
break;
f() = 3;
var a = {}; a[]++;
switch (a) { default: break; default: continue; }
enum Type { A }
return 1;";
    let parsed = geogen_syntax::parse(source);
    assert!(parsed.diagnostics.is_empty(), "{:#?}", parsed.diagnostics);
    let options = CompileOptions::default().with_functions(["Sin"]);
    let errors = compile(&parsed.script, &options).unwrap_err();
    let found: Vec<(String, &str)> =
        errors.iter().map(|d| (d.code.to_string(), d.span.map_or("", |s| &source[s.range()]))).collect();
    let expected = [
        ("GGE1312", ""),
        ("GGE1306", "Sin"),
        ("GGE1301", "break;"),
        ("GGE1307", "f()"),
        ("GGE1201", "a[]"),
        ("GGE1313", "default:"),
        ("GGE1303", "continue;"),
        ("GGE1311", "Type"),
        ("GGE1304", "return 1;"),
    ];
    let found: Vec<(&str, &str)> = found.iter().map(|(c, s)| (c.as_str(), *s)).collect();
    assert_eq!(found, expected);
}
