//! Media parts: their type read from their bytes, the checks a part passes before it is sent,
//! URLs that lead to this machine or a private network refused, the JSON a run's state keeps,
//! and skills that answer with an image.

use agent_core::content::check::check_url;
use agent_core::content::{Content, Media, MediaError, MediaKind, MediaLimits, Part, tiny_png};
use agent_core::{Registry, SkillContext, SkillError, SkillOutput, ToolCall, skill};
use bytes::Bytes;

/// A PNG whose header says `width`×`height`: a few dozen bytes, whatever the size it claims.
fn png_claiming(width: u32, height: u32) -> Bytes {
    let mut png = tiny_png().to_vec();
    png[16..20].copy_from_slice(&width.to_be_bytes());
    png[20..24].copy_from_slice(&height.to_be_bytes());
    Bytes::from(png)
}

const PDF: &[u8] =
    b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";

#[test]
fn the_type_is_read_from_the_bytes_not_a_name() {
    assert_eq!(&*Media::sniff(tiny_png()).unwrap().media_type, "image/png");
    assert_eq!(&*Media::sniff(PDF).unwrap().media_type, "application/pdf");
    assert_eq!(
        &*Media::sniff(&b"plain words"[..]).unwrap().media_type,
        "text/plain"
    );
    let wav = b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00";
    let audio = Media::sniff(&wav[..]).unwrap();
    assert_eq!(
        (&*audio.media_type, audio.kind()),
        ("audio/wav", MediaKind::Audio)
    );
    assert!(matches!(
        Media::sniff(&[0xff, 0xfe, 0x00, 0x81, 0x92][..]),
        Err(MediaError::Unknown { bytes: 5 })
    ));
}

#[test]
fn bytes_that_are_not_what_the_part_says_are_refused() {
    let limits = MediaLimits::default();
    let called_jpeg = Media::new("image/jpeg", tiny_png()).named("cat.jpg");
    let error = called_jpeg.check(&limits).unwrap_err();
    assert!(
        matches!(&error, MediaError::Mismatch { found, .. } if found == "image/png"),
        "{error}"
    );
    assert!(error.to_string().contains("\"cat.jpg\""), "{error}");
    // A PDF that is not one: an executable, and a PDF cut short.
    let exe = Media::new("application/pdf", &b"MZ\x90\x00\x03\x00\x00\x00"[..]);
    assert!(matches!(
        exe.check(&limits),
        Err(MediaError::Mismatch { .. })
    ));
    let cut = Media::new("application/pdf", &PDF[..20]);
    assert!(matches!(
        cut.check(&limits),
        Err(MediaError::Corrupt { .. })
    ));
    let text = Media::new("application/pdf", &b"just text"[..]);
    assert!(matches!(
        text.check(&limits),
        Err(MediaError::Corrupt { .. })
    ));
    // A corrupt image: the signature, then nothing readable.
    let corrupt = Media::new("image/png", tiny_png().slice(..12));
    assert!(matches!(
        corrupt.check(&limits),
        Err(MediaError::Corrupt { .. })
    ));
    // Text that is not UTF-8, and an image called text.
    let latin1 = Media::new("text/plain", &b"caf\xe9"[..]);
    assert!(matches!(
        latin1.check(&limits),
        Err(MediaError::Corrupt { .. })
    ));
    let png_as_text = Media::new("text/plain", tiny_png());
    assert!(matches!(
        png_as_text.check(&limits),
        Err(MediaError::Mismatch { .. })
    ));
    // What passes says what it learned.
    let info = Media::new("image/png", tiny_png()).check(&limits).unwrap();
    assert_eq!(info.dimensions, Some((1, 1)));
    assert!(Media::new("application/pdf", PDF).check(&limits).is_ok());
}

#[test]
fn a_decompression_bomb_is_refused_from_its_header_without_being_decoded() {
    let bomb = Media::new("image/png", png_claiming(100_000, 100_000));
    let error = bomb.check(&MediaLimits::default()).unwrap_err();
    assert!(
        matches!(
            error,
            MediaError::TooManyPixels {
                width: 100_000,
                height: 100_000,
                ..
            }
        ),
        "{error}"
    );
    // A long thin strip: few pixels, but a side over the limit.
    let strip = Media::new("image/png", png_claiming(40_000, 1));
    assert!(matches!(
        strip.check(&MediaLimits::default()),
        Err(MediaError::TooManyPixels { .. })
    ));
    let empty = Media::new("image/png", png_claiming(0, 10));
    assert!(matches!(
        empty.check(&MediaLimits::default()),
        Err(MediaError::Corrupt { .. })
    ));
}

#[test]
fn a_part_over_the_limit_is_refused_before_its_bytes_are_read() {
    let limits = MediaLimits {
        max_part_bytes: 1024,
        ..MediaLimits::default()
    };
    let big = Media::new("application/pdf", vec![0u8; 2048]);
    assert!(matches!(
        big.check(&limits),
        Err(MediaError::TooLarge { limit: 1024, .. })
    ));
}

#[test]
fn urls_to_this_machine_or_a_private_network_are_refused_in_every_spelling() {
    for url in [
        "http://localhost/x.png",
        "https://LOCALHOST./x.png",
        "https://printer.localhost/x.png",
        "http://127.0.0.1/x.png",
        "http://127.1/x.png",
        "http://2130706433/x.png",
        "http://0x7f000001/x.png",
        "http://0177.0.0.1/x.png",
        "http://[::1]:8080/x.png",
        "http://[::ffff:127.0.0.1]/x.png",
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.5/x.png",
        "http://192.168.1.1/x.png",
        "https://user:pw@10.1.1.1/x.png",
        "https://example.com@127.0.0.1/x.png",
        "http://0.0.0.0/x.png",
        "file:///etc/passwd",
        "ftp://example.com/x.png",
        "no scheme at all",
        "https:///x.png",
        // What parsers read differently is refused, not guessed at.
        "https://127.0.0.1\\@evil.com/x.png",
        "https://\\127.0.0.1/x.png",
        "https://%31%32%37.0.0.1/x.png",
        "https://127.0.0.\t1/x.png",
        "https://\u{ff11}\u{ff12}\u{ff17}.0.0.1/x.png",
        "https://user@example.com/x.png",
        "http://[fe80::1%25eth0]/x.png",
        // IPv4 inside IPv6: 6to4 and Teredo (the client's address inverted).
        "http://[2002:7f00:1::1]/x.png",
        "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x.png",
    ] {
        let refused = Media::url(url, "image/png").check(&MediaLimits::default());
        assert!(
            matches!(refused, Err(MediaError::UrlRefused { .. })),
            "{url} was not refused"
        );
    }
    for url in [
        "https://example.com/cat.png",
        "https://127.0.0.1.example.com/x.png",
        "gs://bucket/file.pdf",
        "https://[2606:4700:4700::1111]/x.png",
    ] {
        assert_eq!(check_url(url, false), Ok(()), "{url}");
    }
    // Private addresses may be allowed; loopback never.
    assert_eq!(check_url("http://10.0.0.5/x.png", true), Ok(()));
    assert!(check_url("http://127.0.0.1/x.png", true).is_err());
}

#[test]
fn media_is_kept_as_base64_json_and_read_back_whole() {
    let content = Content::text("chart:")
        .with(Media::new("image/png", tiny_png()).named("chart.png"))
        .with("and a link")
        .with(Media::url("https://example.com/a.pdf", "application/pdf"));
    let json = serde_json::to_value(&content.parts).unwrap();
    assert_eq!(json[1]["type"], "media");
    assert_eq!(json[1]["media_type"], "image/png");
    assert_eq!(json[1]["name"], "chart.png");
    assert!(json[1]["data"].as_str().unwrap().starts_with("iVBORw0KGgo"));
    assert_eq!(json[3]["url"], "https://example.com/a.pdf");
    let back: Vec<Part> = serde_json::from_value(json).unwrap();
    assert_eq!(back, content.parts);
    for bad in [
        serde_json::json!({"type": "media", "media_type": "image/png", "data": "not base64!"}),
        serde_json::json!({"type": "media", "media_type": "image/png"}),
        serde_json::json!({"type": "media", "media_type": "image/png", "data": "", "url": "https://x"}),
    ] {
        assert!(serde_json::from_value::<Part>(bad).is_err());
    }
}

#[test]
fn content_keeps_its_order_and_its_leading_text() {
    let content = Content::text("one")
        .with("two")
        .with(Media::new("image/png", tiny_png()))
        .with("three");
    assert_eq!(content.text_only(), "one\ntwo\nthree");
    let (text, rest) = content.into_leading_text();
    assert_eq!(text, "one\ntwo");
    assert_eq!(rest.len(), 2);
    assert!(matches!(&rest[1], Part::Text(t) if t == "three"));
}

/// Draws a chart (a 1×1 PNG here).
#[skill(read_only)]
async fn draw_chart(_ctx: &SkillContext) -> Result<Media, SkillError> {
    Ok(Media::new("image/png", tiny_png()).named("chart.png"))
}

/// Describes and draws.
#[skill(read_only)]
async fn describe_and_draw(_ctx: &SkillContext) -> Result<Content, SkillError> {
    Ok(Content::text("Sales rose.").with(Media::new("image/png", tiny_png())))
}

#[tokio::test]
async fn a_skill_answers_with_an_image_or_mixed_content_and_the_bytes_are_not_copied() {
    let mut registry = Registry::new();
    registry.add(DrawChartSkill).add(DescribeAndDrawSkill);
    let ctx = SkillContext::default();
    let call = ToolCall::new("c1", "draw_chart", serde_json::json!({}));
    let result = registry.run_many(&[call], &ctx).await.remove(0);
    let Ok(SkillOutput::Content(content)) = &result.output else {
        panic!("{:?}", result.output)
    };
    let media = content.media().next().unwrap();
    assert_eq!(media.bytes().unwrap().as_ptr(), tiny_png().as_ptr());
    assert_eq!(result.content(), "");
    let call = ToolCall::new("c2", "describe_and_draw", serde_json::json!({}));
    let result = registry.run_many(&[call], &ctx).await.remove(0);
    assert_eq!(result.content(), "Sales rose.");
    assert_eq!(result.output.as_ref().unwrap().media().count(), 1);
    // No output schema: the answer is media, not JSON.
    assert!(
        registry
            .metadata("draw_chart")
            .unwrap()
            .output_schema
            .is_none()
    );
}

/// Base64 as peers send it: standard or URL-safe, padded or not, refused by its length before
/// decoding, refused when it is not base64, and checked once decoded.
#[test]
fn media_from_base64_is_bounded_before_decoding_and_checked_after() {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    let limits = MediaLimits::default();
    let png = tiny_png();
    for encoded in [STANDARD.encode(&png), URL_SAFE_NO_PAD.encode(&png)] {
        let media = Media::from_base64("image/png", &encoded, &limits).unwrap();
        assert_eq!(media.bytes(), Some(&png));
    }
    // No type given: read from the bytes.
    let sniffed = Media::from_base64("", &STANDARD.encode(&png), &limits).unwrap();
    assert_eq!(&*sniffed.media_type, "image/png");

    // The bound is on the encoded length: 4 characters for every 3 bytes allowed.
    let small = MediaLimits {
        max_part_bytes: png.len(),
        ..limits
    };
    assert!(Media::from_base64("image/png", &STANDARD.encode(&png), &small).is_ok());
    let over = "A".repeat(agent_core::content::max_base64_len(png.len()) + 1);
    let Err(MediaError::TooLarge { part, limit }) = Media::from_base64("image/png", &over, &small)
    else {
        panic!("refused by its length")
    };
    assert_eq!(limit, png.len());
    assert!(part.contains("characters of base64"), "{part}");

    for bad in ["not base64!!", "iVBORw===", "iVBO Rw0K", "iVBORw0KGgo=AAAA"] {
        assert!(
            matches!(
                Media::from_base64("image/png", bad, &limits),
                Err(MediaError::Corrupt { ref reason, .. }) if reason.contains("base64 is not valid")
            ),
            "{bad}"
        );
    }
    // Valid base64 of bytes that are not what the type says.
    assert!(matches!(
        Media::from_base64("image/jpeg", &STANDARD.encode(&png), &limits),
        Err(MediaError::Mismatch { .. })
    ));
}
