//! Every ` ```c ` example of `docs/language.md` and `docs/library.md` does what the docs say when
//! run the way they say (language.md, top): a snippet that uses `AssertEquals` is a test script
//! (`geogen test`: the test library, no main map needed); one that ends with a `yield` is a map
//! script (`geogen run`: the main map is mandatory). An example that shows an error says so in an
//! HTML comment just before it, `<!-- expect-error: GGE2202 -->`, and must fail with that code.
//! Any other snippet is a mistake of the docs.

use geogen::diag::ErrorCode;
use geogen::{CompileOptions, RunSettings, Script};

struct Snippet {
    doc: &'static str,
    /// 1-based line of the opening fence.
    line: usize,
    code: String,
    expected_error: Option<ErrorCode>,
}

fn snippets(doc: &'static str, text: &str) -> Vec<Snippet> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let fence = lines[i].trim();
        if !fence.starts_with("```") {
            i += 1;
            continue;
        }
        let end = (i + 1..lines.len()).find(|&j| lines[j].trim().starts_with("```")).unwrap_or(lines.len());
        if fence == "```c" {
            let marker = lines[..i].iter().rev().find(|l| !l.trim().is_empty()).copied().unwrap_or("");
            let expected_error =
                marker.trim().strip_prefix("<!-- expect-error:").and_then(|rest| rest.strip_suffix("-->")).map(
                    |code| ErrorCode::parse(code.trim()).unwrap_or_else(|| panic!("{doc}:{}: unknown code", i + 1)),
                );
            out.push(Snippet { doc, line: i + 1, code: lines[i + 1..end].join("\n"), expected_error });
        }
        i = end + 1;
    }
    out
}

fn ends_with_yield(code: &str) -> bool {
    code.lines()
        .map(|l| l.split("//").next().unwrap_or("").trim())
        .rfind(|l| !l.is_empty())
        .is_some_and(|last| last.starts_with("yield"))
}

/// Runs a snippet as the docs say and returns the first error code, if any.
fn run(snippet: &Snippet) -> Result<Option<ErrorCode>, String> {
    let test = snippet.code.contains("AssertEquals");
    let map = ends_with_yield(&snippet.code);
    if !test && !map && snippet.expected_error.is_none() {
        return Err("neither a test script (AssertEquals) nor a map script (ends with yield)".to_string());
    }
    let options = CompileOptions { test_library: test, main_map_mandatory: !test, ..CompileOptions::default() };
    let name = format!("{}:{}", snippet.doc, snippet.line);
    let result = Script::compile(&name, &snippet.code, &options).and_then(|script| script.run(&RunSettings::default()));
    Ok(result.err().map(|failure| failure.first().code))
}

#[test]
fn every_c_example_in_the_docs_runs_as_the_docs_say() {
    let docs = [
        ("docs/language.md", include_str!("../../../../docs/language.md")),
        ("docs/library.md", include_str!("../../../../docs/library.md")),
    ];
    let all: Vec<Snippet> = docs.iter().flat_map(|(doc, text)| snippets(doc, text)).collect();
    assert!(all.len() >= 25, "only {} snippets found: is the extraction broken?", all.len());
    let mut problems = Vec::new();
    for snippet in &all {
        let outcome = run(snippet);
        let ok = match (&outcome, snippet.expected_error) {
            (Ok(actual), expected) => *actual == expected,
            (Err(_), _) => false,
        };
        if !ok {
            let actual = match &outcome {
                Ok(None) => "success".to_string(),
                Ok(Some(code)) => format!("error {code}"),
                Err(why) => why.clone(),
            };
            let expected = snippet.expected_error.map_or("success".to_string(), |c| format!("error {c}"));
            problems.push(format!("{}:{}: expected {expected}, got {actual}", snippet.doc, snippet.line));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
