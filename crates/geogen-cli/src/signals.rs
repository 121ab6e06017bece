//! Interruption: on SIGINT or SIGTERM, `render` and `tiles` remove the temporary files they are
//! writing (and their directory lock) before exiting with 128 + the signal number (130, 143), so
//! a stopped run leaves only complete files. After SIGKILL nothing can run; the next run into the
//! directory removes the strays (see `outdir`).

/// Installs the handler (once; later calls do nothing). On platforms without Unix signals the
/// next run's sweep is the only cleanup.
pub fn clean_up_on_interrupt() {
    #[cfg(unix)]
    unix::install();
}

#[cfg(unix)]
mod unix {
    use std::sync::Once;

    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::iterator::Signals;

    static INSTALLED: Once = Once::new();

    pub fn install() {
        INSTALLED.call_once(|| {
            let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
                // Without a handler the default action applies; the next run sweeps the strays.
                return;
            };
            // signal-hook delivers signals to this ordinary thread, where file operations are safe.
            let spawned = std::thread::Builder::new().name("geogen-signals".into()).spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    let removed = geogen_io::stop_writes_and_remove_temp_files();
                    crate::outdir::remove_held_lock_file();
                    if removed > 0 {
                        eprintln!(
                            "\ninterrupted: removed {removed} unfinished file{}",
                            if removed == 1 { "" } else { "s" }
                        );
                    }
                    std::process::exit(128 + signal);
                }
            });
            drop(spawned);
        });
    }
}
