//! `read_file` on images, PDFs and sounds: answered with the file as media, its type read from
//! its bytes (never its name), bounded by `FilesConfig::max_media_bytes` before a byte is read,
//! checked (a corrupt image, a decompression bomb, a PDF cut short are errors), and inside the
//! sandbox like every other read. And the loader behind it, `media::load_media`, on what a user
//! may give `--attach`: a missing file, a directory, a FIFO.

use crate::common;

use std::io::Read;
use std::time::Duration;

use agent_core::content::{Media, tiny_png};
use agent_core::{SkillContext, SkillOutput, ToolCall};
use agent_std_tools::FilesConfig;
use agent_std_tools::media::{
    DEFAULT_MAX_MEDIA_BYTES, MediaFileError, load_media, media_limits, read_media,
};
use common::{call, put};
use serde_json::json;

/// The CRC-32 of PNG chunks (ISO-HDLC), for a PNG whose header is valid in every byte.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The 1×1 PNG with a header that claims `width` × `height` pixels (its chunk CRC recomputed):
/// a decompression bomb's header, a few dozen bytes that would decode to gigabytes.
fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    let mut png = tiny_png().to_vec();
    png[16..20].copy_from_slice(&width.to_be_bytes());
    png[20..24].copy_from_slice(&height.to_be_bytes());
    let crc = crc32(&png[12..29]);
    png[29..33].copy_from_slice(&crc.to_be_bytes());
    png
}

/// A small PDF, whole: `%PDF-` at the start, `%%EOF` at the end.
const PDF: &[u8] =
    b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";

/// A WAV file's 44-byte header and four samples.
fn wav() -> Vec<u8> {
    let mut wav = Vec::new();
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36u32 + 8).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&8000u32.to_le_bytes());
    wav.extend_from_slice(&16000u32.to_le_bytes());
    wav.extend_from_slice(&2u16.to_le_bytes());
    wav.extend_from_slice(&16u16.to_le_bytes());
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&8u32.to_le_bytes());
    wav.extend_from_slice(&[0, 0, 1, 0, 2, 0, 3, 0]);
    wav
}

/// Calls `read_file` on `path` and returns the whole output (its media too), or the error text.
async fn read(ctx: &SkillContext, path: &str) -> Result<SkillOutput, String> {
    let results = common::registry()
        .run_many(
            &[ToolCall::new("call_1", "read_file", json!({"path": path}))],
            ctx,
        )
        .await;
    let result = results.into_iter().next().unwrap();
    result.output.map_err(|error| error.to_string())
}

/// The one media part of an output, and its text.
fn only_media(output: &SkillOutput) -> (&Media, String) {
    let media: Vec<&Media> = output.media().collect();
    assert_eq!(media.len(), 1, "one media part: {output:?}");
    (media[0], output.to_text().into_owned())
}

#[tokio::test]
async fn an_image_is_answered_as_media_whatever_its_name_says() {
    let tmp = tempfile::tempdir().unwrap();
    // Named as text; the bytes are a PNG.
    std::fs::write(tmp.path().join("notes.txt"), tiny_png()).unwrap();
    let ctx = SkillContext::new(tmp.path());
    let output = read(&ctx, "notes.txt").await.unwrap();
    let (media, text) = only_media(&output);
    assert_eq!(&*media.media_type, "image/png");
    assert_eq!(media.bytes().unwrap().as_ref(), tiny_png().as_ref());
    assert_eq!(media.name.as_deref(), Some("notes.txt"));
    assert_eq!(text, "`notes.txt`: image/png, 1×1 pixels, 67 bytes");
}

#[tokio::test]
async fn a_media_name_reaches_the_model_with_its_invisible_characters_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    // A right-to-left override: shown as it is, `cat\u{202e}gnp.exe` reads as `catexe.png`.
    std::fs::write(tmp.path().join("cat\u{202e}gnp.exe"), tiny_png()).unwrap();
    let ctx = SkillContext::new(tmp.path());
    let output = read(&ctx, "cat\u{202e}gnp.exe").await.unwrap();
    let (media, text) = only_media(&output);
    assert_eq!(media.name.as_deref(), Some("cat\\u{202e}gnp.exe"));
    assert!(
        text.starts_with("`cat\\u{202e}gnp.exe`: image/png"),
        "{text}"
    );
}

#[tokio::test]
async fn text_named_as_an_image_is_read_as_text() {
    let tmp = tempfile::tempdir().unwrap();
    put(tmp.path(), "photo.png", "not a picture\n");
    let ctx = SkillContext::new(tmp.path());
    let output = read(&ctx, "photo.png").await.unwrap();
    assert!(matches!(output, SkillOutput::Text(_)), "{output:?}");
    assert!(output.to_text().starts_with("not a picture"), "{output:?}");
}

#[tokio::test]
async fn a_pdf_and_a_sound_are_answered_as_media() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("invoice"), PDF).unwrap();
    std::fs::write(tmp.path().join("beep.bin"), wav()).unwrap();
    let ctx = SkillContext::new(tmp.path());

    let output = read(&ctx, "invoice").await.unwrap();
    let (media, text) = only_media(&output);
    assert_eq!(&*media.media_type, "application/pdf");
    assert_eq!(media.bytes().unwrap().as_ref(), PDF);
    assert_eq!(
        text,
        format!("`invoice`: application/pdf, {} bytes", PDF.len())
    );

    let output = read(&ctx, "beep.bin").await.unwrap();
    let (media, _) = only_media(&output);
    assert_eq!(&*media.media_type, "audio/wav");
    assert_eq!(media.len(), wav().len());
}

#[tokio::test]
async fn a_decompression_bomb_a_corrupt_image_and_a_cut_pdf_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("bomb.png"), png_claiming(100_000, 100_000)).unwrap();
    // A PNG signature and then nothing a header could be read from.
    let mut corrupt = tiny_png()[..8].to_vec();
    corrupt.extend_from_slice(b"garbage");
    std::fs::write(tmp.path().join("broken.png"), corrupt).unwrap();
    std::fs::write(tmp.path().join("cut.pdf"), &PDF[..40]).unwrap();
    let ctx = SkillContext::new(tmp.path());

    let error = read(&ctx, "bomb.png").await.unwrap_err();
    assert!(
        error.contains("`bomb.png`") && error.contains("100000×100000 pixels, over the limit"),
        "{error}"
    );
    let error = read(&ctx, "broken.png").await.unwrap_err();
    assert!(
        error.contains("`broken.png`") && error.contains("not a valid file of its type"),
        "{error}"
    );
    let error = read(&ctx, "cut.pdf").await.unwrap_err();
    assert!(
        error.contains("`cut.pdf`") && error.contains("%%EOF"),
        "{error}"
    );
}

#[tokio::test]
async fn a_file_over_the_limit_is_refused_from_its_size() {
    let tmp = tempfile::tempdir().unwrap();
    // 200 MB that start as a PNG: sparse, so it costs no disk.
    let file = std::fs::File::create(tmp.path().join("huge.png")).unwrap();
    std::io::Write::write_all(&mut &file, &tiny_png()).unwrap();
    file.set_len(200 * 1024 * 1024).unwrap();
    let ctx = SkillContext::new(tmp.path());
    let error = tokio::time::timeout(Duration::from_secs(20), read(&ctx, "huge.png"))
        .await
        .expect("refused without reading the file")
        .unwrap_err();
    assert!(
        error.contains(&format!(
            "`huge.png`: 209715200 bytes, over the limit of {DEFAULT_MAX_MEDIA_BYTES} bytes"
        )) && error.contains("nothing was read")
            && error.contains("FilesConfig::max_media_bytes"),
        "{error}"
    );

    // The limit is the configured one.
    std::fs::write(tmp.path().join("small.png"), tiny_png()).unwrap();
    let ctx = ctx.with_extension(FilesConfig {
        max_media_bytes: 50,
        ..FilesConfig::default()
    });
    let error = read(&ctx, "small.png").await.unwrap_err();
    assert!(
        error.contains("67 bytes, over the limit of 50 bytes"),
        "{error}"
    );
}

#[tokio::test]
async fn media_is_read_inside_the_sandbox_only() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.png"), tiny_png()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.png"),
        tmp.path().join("link.png"),
    )
    .unwrap();
    let ctx = SkillContext::new(tmp.path());
    call(&ctx, "read_file", json!({"path": "link.png"}))
        .await
        .assert_safety("link.png");
    call(&ctx, "read_file", json!({"path": "../secret.png"}))
        .await
        .assert_safety("../secret.png");
}

#[test]
fn a_file_that_grows_past_its_size_is_refused_not_read_whole() {
    // Its metadata said 67 bytes; the reader goes on far past the limit.
    let png = tiny_png();
    let growing = png.as_ref().chain(std::io::repeat(0));
    let error = read_media(growing, 67, "grows.png", None, &media_limits(1000)).unwrap_err();
    assert!(
        matches!(error, MediaFileError::Grew { limit: 1000, .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "grows.png: grew past the limit of 1000 bytes for media while it was read"
    );
}

#[test]
fn load_media_refuses_a_missing_file_a_directory_and_a_fifo_without_waiting() {
    let tmp = tempfile::tempdir().unwrap();
    let limits = media_limits(DEFAULT_MAX_MEDIA_BYTES);
    let missing = tmp.path().join("missing.png");
    let error = load_media(&missing, &limits).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!("{}: cannot be read: ", missing.display()))
            && error.contains("No such file"),
        "{error}"
    );
    let error = load_media(tmp.path(), &limits).unwrap_err().to_string();
    assert!(
        error.ends_with("not a regular file but a directory"),
        "{error}"
    );

    let fifo = tmp.path().join("pipe.png");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let error = load_media(&fifo, &limits).unwrap_err().to_string();
    assert!(error.contains("not a regular file but a FIFO"), "{error}");
}
