//! "Did you mean ...?" hints for undefined names.

/// The candidates that look like a misspelling of `name`, closest first (at most three): the same
/// name in another case, or an edit distance of at most a third of the name's length (at least 1).
pub fn close_names<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let lower = name.to_lowercase();
    let max_distance = (name.chars().count() / 3).max(1);
    let mut found: Vec<(usize, &'a str)> = candidates
        .into_iter()
        .filter(|c| *c != name)
        .filter_map(|c| {
            if c.to_lowercase() == lower {
                return Some((0, c));
            }
            let d = edit_distance(&lower, &c.to_lowercase());
            (d <= max_distance).then_some((d, c))
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)));
    found.dedup_by(|a, b| a.1 == b.1);
    found.into_iter().take(3).map(|(_, c)| c).collect()
}

/// A hint sentence for [`close_names`], or `None` when nothing is close.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let close = close_names(name, candidates);
    match close.as_slice() {
        [] => None,
        [one] => Some(format!("did you mean `{one}`?")),
        many => {
            let list: Vec<String> = many.iter().map(|n| format!("`{n}`")).collect();
            Some(format!("did you mean one of {}?", list.join(", ")))
        }
    }
}

/// Levenshtein distance over Unicode scalar values.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_misspellings_and_case() {
        assert_eq!(close_names("Prnt", ["Print", "Sin", "Min"]), vec!["Print"]);
        assert_eq!(close_names("print", ["Print", "Sin"]), vec!["Print"]);
        assert!(close_names("Foo", ["Print", "Sqrt"]).is_empty());
        assert_eq!(did_you_mean("Mapwidth", ["MapWidth", "MapHeight"]).as_deref(), Some("did you mean `MapWidth`?"));
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
