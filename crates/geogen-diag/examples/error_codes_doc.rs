//! Prints docs/error-codes.md: `cargo run -p geogen-diag --example error_codes_doc > docs/error-codes.md`
fn main() {
    print!(
        "# GGE error codes\n\nEvery error geogen reports has one of these codes. Codes marked *new in geogen* are conditions the original GeoGen did not report (or crashed on).\nThis file is generated from `crates/geogen-diag/src/codes.rs`: `cargo run -p geogen-diag --example error_codes_doc > docs/error-codes.md`.\n\n{}",
        geogen_diag::codes::markdown_table()
    );
}
