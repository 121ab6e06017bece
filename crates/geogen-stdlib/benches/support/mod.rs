//! What the benchmarks share.

/// CPU time of all this process's threads so far (Linux: the run time in each thread's
/// `schedstat`), in ns; `None` elsewhere. On a loaded machine the CPU time per pixel of a
/// one-thread run moves much less than the wall time, since waiting for a core is not counted.
pub fn process_cpu_ns() -> Option<u64> {
    let mut total = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        total += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(total)
}
