//! Prints the instruction-set levels this processor runs, narrowest first, separated by spaces
//! (for scripts that run something once per level with `GEOGEN_ISA`). Fails where
//! `GEOGEN_REQUIRE_ISA` names a level the processor lacks.

use geogen_simd::Isa;

fn main() -> std::process::ExitCode {
    let required = std::env::var("GEOGEN_REQUIRE_ISA").unwrap_or_default();
    for name in required.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        match Isa::from_name(name) {
            Some(isa) if isa.is_supported() => {}
            Some(isa) => {
                eprintln!("error: GEOGEN_REQUIRE_ISA names {isa}, which this processor lacks");
                return std::process::ExitCode::FAILURE;
            }
            None => {
                eprintln!("error: GEOGEN_REQUIRE_ISA names {name:?}, no instruction set (scalar, avx2, avx512)");
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    let names: Vec<&str> = Isa::supported().into_iter().map(Isa::name).collect();
    println!("{}", names.join(" "));
    std::process::ExitCode::SUCCESS
}
