//! What a signal handler relies on: every temporary file in flight is removed, and no new one can
//! appear afterwards. (Its own test binary: stopping writes is for the rest of the process.)

use geogen_io::{stop_writes_and_remove_temp_files, write_bytes, Format, HeightField, IoError, StreamWriter};

#[test]
fn stopping_removes_in_flight_temp_files_and_refuses_new_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let target = dir.path().join("main.png");
    let mut writer = StreamWriter::new(Format::Png16, 4, 2, &target).expect("writer");
    writer.write_rows(&[0.0; 4]).expect("a row");
    let temps = || std::fs::read_dir(dir.path()).expect("dir").count();
    assert_eq!(temps(), 1, "the temporary file is there while writing");

    assert_eq!(stop_writes_and_remove_temp_files(), 1);
    assert_eq!(temps(), 0, "the handler removed it");

    let data = [0.0f32; 8];
    let field = HeightField::new(4, 2, &data).expect("field");
    let refused = geogen_io::write(Format::R16, &field, dir.path().join("late.r16")).expect_err("refused");
    assert!(matches!(&refused, IoError::Io { operation: "create temporary file", .. }), "{refused}");
    assert!(write_bytes(&dir.path().join("m.json"), b"{}").is_err());
    // Finishing the interrupted writer fails too (its file is gone) and leaves nothing behind.
    assert!(writer.write_rows(&[0.0; 4]).and_then(|()| writer.finish()).is_err());
    assert_eq!(temps(), 0);
}
