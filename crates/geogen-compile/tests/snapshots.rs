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
