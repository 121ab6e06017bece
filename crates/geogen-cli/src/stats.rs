//! `--stats`: figures about a run for people and for `bench/run`, as `key=value` fields.

/// The process's peak resident memory (`VmHWM` of `/proc/self/status`), where the system tells.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `stats: a=1 b=2`.
pub fn line(fields: &[(&str, String)]) -> String {
    let fields: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("stats: {}", fields.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_key_value_pairs() {
        assert_eq!(line(&[("a", "1".into()), ("b", "x".into())]), "stats: a=1 b=x");
        if cfg!(target_os = "linux") {
            assert!(peak_rss_bytes().is_some_and(|b| b > 0));
        }
    }
}
