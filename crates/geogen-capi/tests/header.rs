//! `include/geogen.h` is written by hand; this test holds it to the code. It reads the header's
//! declarations and the crate's Rust sources and requires the same exported functions (names,
//! parameter types in order, return types), the same `#[repr(C)]` structures (field names and
//! types in order), the same opaque types, type aliases and constants (names and values), with
//! Rust types translated to C (`*const c_char` is `const char*`, `u32` is `uint32_t`, ...).
//!
//! It reads the header's plain style only: one declaration per `;`, no macros besides
//! `#define NAME NUMBER` (and the include guard's `#define NAME`), C comments. Something it cannot read fails the test rather than being
//! passed over.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// What one side declares.
#[derive(Debug, Default, PartialEq)]
struct Declarations {
    /// name → (return type, parameter types)
    functions: BTreeMap<String, (String, Vec<String>)>,
    /// name → (field name, type) in order
    structs: BTreeMap<String, Vec<(String, String)>>,
    opaque: Vec<String>,
    /// alias → type
    aliases: BTreeMap<String, String>,
    /// constant → value
    constants: BTreeMap<String, i64>,
}

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A C type in one spelling: single spaces, none before `*`.
fn normal_c_type(text: &str) -> String {
    let spaced = text.split_whitespace().collect::<Vec<_>>().join(" ");
    spaced.replace(" *", "*")
}

/// A Rust FFI type as C spells it.
fn c_type_of(rust: &str) -> String {
    let rust = rust.trim();
    if let Some(inner) = rust.strip_prefix("*const ") {
        let inner = c_type_of(inner);
        assert!(!inner.ends_with('*'), "a const pointer to a pointer ({rust}) has no plain C spelling here");
        return format!("const {inner}*");
    }
    if let Some(inner) = rust.strip_prefix("*mut ") {
        return format!("{}*", c_type_of(inner));
    }
    match rust {
        "c_char" => "char",
        "u8" => "uint8_t",
        "u16" => "uint16_t",
        "u32" => "uint32_t",
        "u64" => "uint64_t",
        "i32" => "int32_t",
        "i64" => "int64_t",
        "f32" => "float",
        "f64" => "double",
        "usize" => "size_t",
        "()" => "void",
        other => {
            assert!(other.starts_with("geogen_"), "no C spelling for the Rust type `{other}`");
            other
        }
    }
    .to_string()
}

/// Removes `/* */` and `//` comments.
fn strip_c_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("/*") {
            let end = after.find("*/").expect("an unterminated comment in the header");
            rest = &after[end + 2..];
            out.push(' ');
        } else if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |end| &after[end..]);
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// A C parameter or field, `type name`, split into (name, type).
fn c_name_and_type(text: &str) -> (String, String) {
    let text = text.trim();
    let split = text.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).expect("a declaration with a type") + 1;
    (text[split..].to_string(), normal_c_type(&text[..split]))
}

fn parse_header(text: &str) -> Declarations {
    let mut d = Declarations::default();
    let mut body = String::new();
    let mut in_cplusplus = false;
    for line in strip_c_comments(text).lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("#ifdef __cplusplus") {
            in_cplusplus = true;
        } else if in_cplusplus {
            in_cplusplus = !trimmed.starts_with("#endif");
        } else if let Some(define) = trimmed.strip_prefix("#define ") {
            let mut parts = define.split_whitespace();
            let name = parts.next().unwrap().to_string();
            // A define without a value is the include guard.
            if let Some(value) = parts.next() {
                let number = value.parse().unwrap_or_else(|_| panic!("#define {name} {value}"));
                d.constants.insert(name, number);
            }
        } else if !trimmed.starts_with('#') {
            body.push_str(line);
            body.push('\n');
        }
    }
    // Declarations end at a `;` outside braces.
    let mut statements = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in body.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ';' if depth == 0 => {
                statements.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    assert!(current.trim().is_empty(), "text after the last declaration: {current}");
    for statement in statements {
        let s = statement.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(rest) = s.strip_prefix("enum ") {
            let open = rest.find('{').expect("an enum with a body");
            let close = rest.rfind('}').unwrap();
            for item in rest[open + 1..close].split(',').map(str::trim).filter(|i| !i.is_empty()) {
                let (name, value) =
                    item.split_once('=').unwrap_or_else(|| panic!("an enum item without a value: {item}"));
                let value = value.trim().parse().unwrap_or_else(|_| panic!("enum item {item}"));
                d.constants.insert(name.trim().to_string(), value);
            }
        } else if let Some(rest) = s.strip_prefix("typedef struct ") {
            match rest.find('{') {
                None => {
                    let words: Vec<&str> = rest.split_whitespace().collect();
                    assert!(words.len() == 2 && words[0] == words[1], "typedef struct {rest}");
                    d.opaque.push(words[0].to_string());
                }
                Some(open) => {
                    let name = rest[..open].trim().to_string();
                    let close = rest.rfind('}').unwrap();
                    assert_eq!(rest[close + 1..].trim(), name, "typedef struct {name} {{ .. }} names another type");
                    let fields = rest[open + 1..close]
                        .split(';')
                        .filter(|f| !f.trim().is_empty())
                        .flat_map(|field| {
                            // `int32_t a, b` declares two fields of one type.
                            let (first, type_) = c_name_and_type(field.split(',').next().unwrap());
                            let others = field.split(',').skip(1).map(|n| n.trim().to_string()).collect::<Vec<_>>();
                            std::iter::once((first, type_.clone()))
                                .chain(others.into_iter().map(move |n| (n, type_.clone())))
                        })
                        .collect();
                    d.structs.insert(name, fields);
                }
            }
        } else if let Some(rest) = s.strip_prefix("typedef ") {
            let (name, type_) = c_name_and_type(rest);
            d.aliases.insert(name, type_);
        } else if let (Some(open), Some(close)) = (s.find('('), s.rfind(')')) {
            let (name, returns) = c_name_and_type(&s[..open]);
            let inside = s[open + 1..close].trim();
            let parameters =
                if inside == "void" { Vec::new() } else { inside.split(',').map(|p| c_name_and_type(p).1).collect() };
            assert!(d.functions.insert(name.clone(), (returns, parameters)).is_none(), "{name} declared twice");
        } else {
            panic!("cannot read this declaration of the header: {s}");
        }
    }
    d.opaque.sort();
    d
}

/// The text between `open` (at `start`) and its matching `close`.
fn balanced(text: &str, start: usize, open: char, close: char) -> (&str, usize) {
    let mut depth = 0;
    for (i, c) in text[start..].char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return (&text[start + 1..start + i], start + i + 1);
            }
        }
    }
    panic!("unbalanced {open}{close} in the Rust sources");
}

fn parse_rust(text: &str) -> Declarations {
    let mut d = Declarations::default();
    // Exported functions: `extern "C" fn name(params) -> ret {`, each after `#[no_mangle]`.
    let mut rest = 0;
    while let Some(at) = text[rest..].find("extern \"C\" fn ") {
        let start = rest + at;
        let name_start = start + "extern \"C\" fn ".len();
        let open = name_start + text[name_start..].find('(').unwrap();
        let name = text[name_start..open].trim().to_string();
        let before = &text[..start];
        let attribute = before.rfind("#[no_mangle]").expect("an extern fn without #[no_mangle]");
        assert!(
            !before[attribute..].contains('}'),
            "`{name}` is extern \"C\" but not #[no_mangle]: it is not exported"
        );
        let (inside, after) = balanced(text, open, '(', ')');
        let body = after + text[after..].find('{').unwrap();
        let returns = text[after..body].trim().strip_prefix("->").map_or("()".to_string(), |r| r.trim().to_string());
        let parameters = inside
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(|p| c_type_of(p.split_once(':').expect("name: type").1))
            .collect();
        d.functions.insert(name, (c_type_of(&returns), parameters));
        rest = body;
    }
    for line in text.lines().map(str::trim) {
        if let Some(alias) = line.strip_prefix("pub type ") {
            let (name, type_) = alias.trim_end_matches(';').split_once('=').unwrap();
            d.aliases.insert(name.trim().to_string(), c_type_of(type_));
        } else if let Some(constant) = line.strip_prefix("pub const GEOGEN_") {
            let (name, value) = constant.trim_end_matches(';').split_once('=').unwrap();
            let name = format!("GEOGEN_{}", name.split(':').next().unwrap().trim());
            d.constants.insert(name, value.trim().parse().expect("a constant of a whole number"));
        }
    }
    // Structures: `#[repr(C)]` ones are the header's; other `pub struct geogen_*` are opaque.
    let mut rest = 0;
    while let Some(at) = text[rest..].find("pub struct geogen_") {
        let start = rest + at;
        let name_start = start + "pub struct ".len();
        let name_end =
            name_start + text[name_start..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap();
        let name = text[name_start..name_end].to_string();
        let attributes_start = text[..start].rfind(['}', ';']).map_or(0, |i| i + 1);
        if text[attributes_start..start].contains("#[repr(C)]") {
            let open = name_end + text[name_end..].find('{').unwrap();
            let (inside, _) = balanced(text, open, '{', '}');
            let fields = inside
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with("pub "))
                .map(|l| {
                    let (field, type_) = l.trim_start_matches("pub ").trim_end_matches(',').split_once(':').unwrap();
                    (field.trim().to_string(), c_type_of(type_))
                })
                .collect();
            d.structs.insert(name, fields);
        } else {
            d.opaque.push(name);
        }
        rest = name_end;
    }
    d.opaque.sort();
    d
}

#[test]
fn the_header_declares_what_the_library_exports() {
    let header = std::fs::read_to_string(crate_dir().join("include/geogen.h")).unwrap();
    let header = parse_header(&header);
    let mut sources = String::new();
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(crate_dir().join("src")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for file in files.iter().filter(|f| f.extension().is_some_and(|e| e == "rs")) {
        let text = std::fs::read_to_string(file).unwrap();
        // Unit tests are not part of the interface.
        let code = text.split("#[cfg(test)]").next().unwrap();
        sources.push_str(code);
        sources.push('\n');
    }
    let rust = parse_rust(&sources);

    assert!(header.functions.len() >= 30, "too few functions read from the header: {:?}", header.functions.keys());
    for (name, declared) in &header.functions {
        assert_eq!(rust.functions.get(name), Some(declared), "`{name}`: the header's declaration and the code's");
    }
    for name in rust.functions.keys() {
        assert!(header.functions.contains_key(name), "`{name}` is exported but not declared in the header");
    }
    assert_eq!(header.structs, rust.structs, "structures");
    assert_eq!(header.opaque, rust.opaque, "opaque types");
    assert_eq!(header.aliases, rust.aliases, "type aliases");
    assert_eq!(header.constants, rust.constants, "constants");
    assert_eq!(header.constants.get("GEOGEN_API_VERSION"), Some(&i64::from(geogen_api_version_of_code())));
}

/// The version the code returns, read from its source (the header's macro must equal it; the C
/// test checks the loaded library's `geogen_api_version()` against the macro).
fn geogen_api_version_of_code() -> u32 {
    let lib = std::fs::read_to_string(crate_dir().join("src/lib.rs")).unwrap();
    let line =
        lib.lines().find(|l| l.starts_with("pub const GEOGEN_API_VERSION: u32 = ")).expect("the version constant");
    line.trim_end_matches(';').rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn the_reader_sees_a_mismatch() {
    let header = parse_header(
        "#define GEOGEN_API_VERSION 2\ntypedef int32_t geogen_status;\nenum e { GEOGEN_OK = 0 };\n\
         typedef struct geogen_x geogen_x;\n\
         typedef struct geogen_p { const char* name; int32_t a, b; } geogen_p;\n\
         geogen_status geogen_f(const geogen_x* x, const char** names, size_t n);\nuint32_t geogen_v(void);\n",
    );
    let rust = parse_rust(
        "pub const GEOGEN_API_VERSION: u32 = 2;\npub type geogen_status = i32;\npub const GEOGEN_OK: geogen_status = 0;\n\
         pub struct geogen_x {\n    inner: u8,\n}\n#[repr(C)]\npub struct geogen_p {\n    pub name: *const c_char,\n    pub a: i32,\n    pub b: i32,\n}\n\
         #[no_mangle]\npub unsafe extern \"C\" fn geogen_f(x: *const geogen_x, names: *mut *const c_char, n: usize) -> geogen_status {\n    0\n}\n\
         #[no_mangle]\npub extern \"C\" fn geogen_v() -> u32 {\n    2\n}\n",
    );
    assert_eq!(header, rust);
    // One parameter's type changed is a difference.
    let changed = parse_rust(
        "#[no_mangle]\npub unsafe extern \"C\" fn geogen_f(x: *mut geogen_x, names: *mut *const c_char, n: usize) -> geogen_status {\n    0\n}\n",
    );
    assert_ne!(changed.functions["geogen_f"], header.functions["geogen_f"]);
}
