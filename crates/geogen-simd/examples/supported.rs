//! Prints the instruction-set levels this processor runs, narrowest first, separated by spaces
//! (for scripts that run something once per level with `GEOGEN_ISA`). Fails where
//! `GEOGEN_REQUIRE_ISA` names a level the processor lacks, or no level.

use geogen_simd::{Isa, REQUIRE_VARIABLE};

fn main() -> std::process::ExitCode {
    let required = match geogen_simd::required() {
        Ok(required) => required,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    if let Some(missing) = required.into_iter().find(|isa| !isa.is_supported()) {
        eprintln!("error: {REQUIRE_VARIABLE} names {missing}, which this processor lacks");
        return std::process::ExitCode::FAILURE;
    }
    let names: Vec<&str> = Isa::supported().into_iter().map(Isa::name).collect();
    println!("{}", names.join(" "));
    std::process::ExitCode::SUCCESS
}
