//! Atomic writes: a failed write leaves no partial file, no temporary file, and an existing target as it was.

use crate::common;

use common::*;
use geogen_io::{write, write_profile_csv, Format, HeightField, IoError, Profile, StreamWriter};

fn field_data() -> Vec<f32> {
    smooth_field(16, 8)
}

#[test]
fn missing_directory_is_an_error_naming_the_target() {
    let dir = tempfile::tempdir().expect("tempdir");
    let target = dir.path().join("no-such-dir").join("map.png");
    let data = field_data();
    let field = HeightField::new(16, 8, &data).expect("field");
    for format in Format::ALL {
        let err = write(format, &field, &target).expect_err("must fail");
        match &err {
            IoError::Io { path, operation, source } => {
                assert_eq!(path, &target);
                assert_eq!(*operation, "create temporary file");
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
            }
            other => panic!("{format}: unexpected error {other}"),
        }
        assert!(err.to_string().contains("no-such-dir"), "{err}");
        assert_eq!(err.path(), Some(target.as_path()));
    }
    assert!(!dir.path().join("no-such-dir").exists());
    assert!(StreamWriter::new(Format::Png16, 16, 8, &target).is_err());
    assert!(write_profile_csv(&Profile { start: 0, data: &data }, &target).is_err());
    assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);
}

#[test]
fn failing_rename_removes_the_temporary_file_and_keeps_the_target() {
    // The target is a non-empty directory: everything up to the final rename succeeds, then the rename
    // fails. This exercises the cleanup of a fully written temporary file.
    let dir = tempfile::tempdir().expect("tempdir");
    let target = dir.path().join("map.png");
    std::fs::create_dir(&target).expect("mkdir");
    std::fs::write(target.join("keep"), b"precious").expect("write keep");
    let data = field_data();
    let field = HeightField::new(16, 8, &data).expect("field");
    for format in Format::ALL {
        let err = write(format, &field, &target).expect_err("must fail");
        assert!(matches!(&err, IoError::Io { operation: "rename into place", .. }), "{format}: {err}");
        assert!(stray_temp_files(dir.path()).is_empty(), "{format}: {:?}", stray_temp_files(dir.path()));
    }
    let entries: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").collect();
    assert_eq!(entries.len(), 1, "only the directory remains");
    assert_eq!(std::fs::read(target.join("keep")).expect("read keep"), b"precious");
}

#[test]
fn read_only_directory_is_an_error_without_stray_files() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).expect("mkdir");
    std::fs::write(ro.join("map.png"), b"old").expect("old target");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    // Root ignores permission bits; only assert what the OS actually enforces.
    let enforced = std::fs::File::create(ro.join("probe")).is_err();
    let data = field_data();
    let field = HeightField::new(16, 8, &data).expect("field");
    let result = write(Format::Png16, &field, ro.join("map.png"));
    if enforced {
        let err = result.expect_err("must fail");
        assert!(matches!(&err, IoError::Io { operation: "create temporary file", .. }), "{err}");
        assert_eq!(std::fs::read(ro.join("map.png")).expect("read"), b"old");
        assert!(stray_temp_files(&ro).is_empty());
    } else {
        eprintln!("permissions not enforced (running as root); only checking the write succeeded cleanly");
        result.expect("write");
        let _ = std::fs::remove_file(ro.join("probe"));
        assert!(stray_temp_files(&ro).is_empty());
    }
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).expect("chmod back");
}

#[test]
fn a_successful_write_replaces_the_target_completely() {
    let dir = tempfile::tempdir().expect("tempdir");
    let target = dir.path().join("map.r16");
    std::fs::write(&target, vec![0xAA; 10_000]).expect("old, longer file");
    let data = field_data();
    write(Format::R16, &HeightField::new(16, 8, &data).expect("field"), &target).expect("write");
    assert_eq!(std::fs::metadata(&target).expect("meta").len(), 16 * 8 * 2, "no leftovers of the old file");
    assert!(stray_temp_files(dir.path()).is_empty());
    assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 1);
}

#[test]
fn unfinished_stream_leaves_the_old_target_and_no_temporary_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let target = dir.path().join("map.png");
    std::fs::write(&target, b"old").expect("old target");
    let data = field_data();

    // finish() with rows missing: an error, the temporary file is removed.
    let mut stream = StreamWriter::new(Format::Png16, 16, 8, &target).expect("stream");
    assert_eq!(stray_temp_files(dir.path()).len(), 1, "the temporary file exists while writing");
    stream.write_rows(&data[..16 * 5]).expect("rows");
    let err = stream.finish().expect_err("missing rows");
    assert!(err.to_string().contains("5 of 8 rows"), "{err}");
    assert_eq!(std::fs::read(&target).expect("read"), b"old");
    assert!(stray_temp_files(dir.path()).is_empty());

    // Dropped without finish: same.
    let mut stream = StreamWriter::new(Format::R16, 16, 8, &target).expect("stream");
    stream.write_rows(&data).expect("rows");
    drop(stream);
    assert_eq!(std::fs::read(&target).expect("read"), b"old");
    assert!(stray_temp_files(dir.path()).is_empty());
}

#[test]
fn concurrent_writes_to_one_target_never_expose_a_partial_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let target = dir.path().join("map.png");
    let data = smooth_field(128, 128);
    let field = HeightField::new(128, 128, &data).expect("field");
    let expected = geogen_io::encode(Format::Png16, &field).expect("encode");
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..5 {
                    write(Format::Png16, &field, &target).expect("write");
                }
            });
        }
        s.spawn(|| {
            for _ in 0..200 {
                if let Ok(bytes) = std::fs::read(&target) {
                    assert_eq!(bytes, expected, "a reader saw a partial file");
                }
            }
        });
    });
    assert!(stray_temp_files(dir.path()).is_empty());
}
