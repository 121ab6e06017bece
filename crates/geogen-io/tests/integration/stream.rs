//! The strip-by-strip writer must produce the same bytes as the whole-buffer writer.

use crate::common;

use common::*;
use geogen_io::{write, Format, HeightField, IoError, StreamError, StreamWriter};

#[test]
fn streaming_equals_whole_buffer_byte_for_byte() {
    let (w, h) = (53_u32, 41_u32);
    let data = sample_field(w, h);
    let field = HeightField::new(w, h, &data).expect("field");
    let dir = tempfile::tempdir().expect("tempdir");
    let row = w as usize;
    // Strip patterns: all at once, one row at a time, irregular strips.
    let patterns: [&[usize]; 3] = [&[41], &[1; 41], &[3, 1, 17, 0, 20]];
    let mut checked = 0;
    for format in Format::ALL.into_iter().filter(|f| f.is_streamable()) {
        let whole = dir.path().join(format.file_name("whole"));
        write(format, &field, &whole).expect("write");
        let whole = std::fs::read(&whole).expect("read whole");
        for (i, strips) in patterns.iter().enumerate() {
            let path = dir.path().join(format.file_name(&format!("stream{i}")));
            let mut stream = StreamWriter::new(format, w, h, &path).expect("stream");
            let mut at = 0;
            for &rows in strips.iter() {
                stream.write_rows(&data[at * row..(at + rows) * row]).expect("rows");
                at += rows;
            }
            stream.finish().expect("finish");
            assert_eq!(std::fs::read(&path).expect("read stream"), whole, "{format}, strips {strips:?}");
            checked += 1;
        }
    }
    assert_eq!(checked, 5 * patterns.len(), "png16, png8, r16, tiff and colored are streamable");
    assert!(stray_temp_files(dir.path()).is_empty());
}

#[test]
fn misuse_is_reported_and_recoverable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("map.png");
    let data = smooth_field(10, 4);
    let mut stream = StreamWriter::new(Format::Png16, 10, 4, &path).expect("stream");

    let err = stream.write_rows(&data[..15]).expect_err("partial row");
    assert!(matches!(err, IoError::Stream { source: StreamError::PartialRow { len: 15, width: 10 }, .. }), "{err}");
    stream.write_rows(&data[..30]).expect("three rows");
    let err = stream.write_rows(&data[..20]).expect_err("too many");
    assert!(matches!(err, IoError::Stream { source: StreamError::TooManyRows { given: 5, height: 4 }, .. }), "{err}");
    assert!(err.to_string().contains("map.png"), "{err}");
    // Still usable after rejected calls, and the result is still exact.
    stream.write_rows(&data[30..]).expect("last row");
    stream.finish().expect("finish");
    let field = HeightField::new(10, 4, &data).expect("field");
    assert_eq!(std::fs::read(&path).expect("read"), geogen_io::encode(Format::Png16, &field).expect("encode"));
}

#[test]
fn only_row_formats_stream() {
    let dir = tempfile::tempdir().expect("tempdir");
    for format in [Format::Exr, Format::Hillshade] {
        let path = dir.path().join(format.file_name("map"));
        let err = StreamWriter::new(format, 4, 4, &path).expect_err("not streamable");
        assert!(matches!(err, IoError::NotStreamable { .. }), "{err}");
        assert!(err.to_string().contains("png16"), "the message lists the streamable formats: {err}");
    }
    let err = StreamWriter::new(Format::Png16, 0, 4, dir.path().join("empty.png")).expect_err("empty");
    assert!(matches!(err, IoError::Field { .. }), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);
}

#[test]
fn writers_and_errors_can_cross_threads() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync + 'static>() {}
    send::<StreamWriter>();
    send_sync::<IoError>();
    send_sync::<geogen_io::FormatError>();
    // And actually stream from another thread.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.r16");
    let mut stream = StreamWriter::new(Format::R16, 2, 2, &path).expect("stream");
    std::thread::spawn(move || {
        stream.write_rows(&[-1.0, 0.0, 1.0, 0.5]).expect("rows");
        stream.finish().expect("finish");
    })
    .join()
    .expect("thread");
    assert_eq!(read_r16(&path), vec![0, 32767, 65534, 49151]);
}
