//! What a map name may be (`yield e as "name"`).
//!
//! A map name becomes part of output file names (`<name>.png`, `tile_0_0_<name>.r16`), and scripts
//! come from strangers, so a name is a *name*, never a path: 1 to [`MAP_NAME_MAX_LEN`] characters
//! from `A-Z a-z 0-9 _ -`, not starting with `-` (it would read as a command-line flag), and not a
//! Windows device name (`CON`, `PRN`, `AUX`, `NUL`, `COM1`-`COM9`, `LPT1`-`LPT9`, any case), which
//! cannot be a file on Windows. The same rule holds on every platform so that shared scripts work
//! everywhere. The compiler checks it at the `yield` (GGE1315); hosts may check again before they
//! build a path.

/// The longest map name, in characters (all ASCII, so also bytes).
pub const MAP_NAME_MAX_LEN: usize = 64;

/// The characters a map name may contain, for hints and docs.
pub const MAP_NAME_CHARACTERS: &str = "letters A-Z and a-z, digits 0-9, `_` and `-`";

/// Why a name is not a valid map name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapNameError {
    Empty,
    TooLong,
    /// The first character that is not allowed.
    Character(char),
    StartsWithDash,
    /// A name Windows reserves for a device.
    DeviceName,
}

impl std::fmt::Display for MapNameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MapNameError::Empty => f.write_str("it is empty"),
            MapNameError::TooLong => write!(f, "it is longer than {MAP_NAME_MAX_LEN} characters"),
            MapNameError::Character(c) => write!(f, "it contains {}", describe_char(*c)),
            MapNameError::StartsWithDash => f.write_str("it starts with `-`"),
            MapNameError::DeviceName => f.write_str("it is a device name on Windows"),
        }
    }
}

/// A character for a message, printable even when it is a newline, NUL or a terminal escape.
fn describe_char(c: char) -> String {
    if c.is_ascii_graphic() || c == ' ' {
        format!("`{c}`")
    } else {
        format!("the character U+{:04X}", u32::from(c))
    }
}

const DEVICE_NAMES: &[&str] = &["CON", "PRN", "AUX", "NUL"];

fn is_device_name(name: &str) -> bool {
    if DEVICE_NAMES.iter().any(|d| d.eq_ignore_ascii_case(name)) {
        return true;
    }
    let bytes = name.as_bytes();
    bytes.len() == 4
        && (name[..3].eq_ignore_ascii_case("COM") || name[..3].eq_ignore_ascii_case("LPT"))
        && (b'1'..=b'9').contains(&bytes[3])
}

/// Checks a map name against the rule in the module documentation.
pub fn check_map_name(name: &str) -> Result<(), MapNameError> {
    if name.is_empty() {
        return Err(MapNameError::Empty);
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-')) {
        return Err(MapNameError::Character(bad));
    }
    // Every character is ASCII from here on, so the length in bytes is the length in characters.
    if name.len() > MAP_NAME_MAX_LEN {
        return Err(MapNameError::TooLong);
    }
    if name.starts_with('-') {
        return Err(MapNameError::StartsWithDash);
    }
    if is_device_name(name) {
        return Err(MapNameError::DeviceName);
    }
    Ok(())
}

/// Whether `name` is a valid map name.
pub fn is_valid_map_name(name: &str) -> bool {
    check_map_name(name).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names() {
        for name in ["main", "a", "A-b_9", "_", "x-", "COM0", "COM10", "LPT", "CONSOLE", "nul_", &"a".repeat(64)] {
            assert_eq!(check_map_name(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn invalid_names_say_why() {
        assert_eq!(check_map_name(""), Err(MapNameError::Empty));
        assert_eq!(check_map_name(&"a".repeat(65)), Err(MapNameError::TooLong));
        assert_eq!(check_map_name("-x"), Err(MapNameError::StartsWithDash));
        for (name, bad) in [
            ("/abs/dir/pwned", '/'),
            ("../victim/f", '.'),
            (".", '.'),
            ("a b", ' '),
            ("a\nb", '\n'),
            ("a\0", '\0'),
            ("a\\b", '\\'),
            ("größe", 'ö'),
            ("a:b", ':'),
        ] {
            assert_eq!(check_map_name(name), Err(MapNameError::Character(bad)), "{name:?}");
        }
        for name in ["CON", "con", "Prn", "aux", "NUL", "COM1", "com9", "LPT1", "lpt5"] {
            assert_eq!(check_map_name(name), Err(MapNameError::DeviceName), "{name}");
        }
        // A long name of bad characters reports the character, not the length.
        assert_eq!(check_map_name(&"é".repeat(40)), Err(MapNameError::Character('é')));
    }

    #[test]
    fn messages_never_echo_control_characters() {
        let message = MapNameError::Character('\u{1b}').to_string();
        assert_eq!(message, "it contains the character U+001B");
        assert_eq!(MapNameError::Character('/').to_string(), "it contains `/`");
    }
}
