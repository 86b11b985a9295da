//! A conversation with an image, recorded through the proxy and replayed offline: the cassette
//! keeps the request as sent (the image's base64 in it), and the replay matches a request only
//! when it carries the same bytes.

use agent_core::content::Media;
use agent_llm::cassette::{Body, Cassette};
use agent_llm::{ChatRequest, LlmProvider, Message};
use base64::Engine as _;

use crate::{KEY, anthropic, anthropic_answer, dir};
use crate::{Reply, Server};

/// A PNG of about 2 MB: a valid header, then padding.
fn photo(fill: u8) -> Vec<u8> {
    let mut png = agent_core::content::tiny_png().to_vec();
    png.resize(2 * 1024 * 1024, fill);
    png
}

#[tokio::test]
async fn a_conversation_with_an_image_is_recorded_and_replays_offline_only_for_the_same_bytes() {
    let upstream = Server::start([Reply::json(200, &anthropic_answer("A red dot."))]).await;
    let folder = dir();
    let path = folder.path().join("cassettes/photo.yaml");
    let proxy = Cassette::record(&path, &upstream.url).await.unwrap();
    let transcript =
        [Message::user("What is in this photo?").attach(Media::new("image/png", photo(7)))];
    let live = anthropic(proxy.base_url(), KEY)
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap();
    proxy.finish().await.unwrap();

    // The cassette holds the request as the API got it, the image's base64 included.
    let cassette = Cassette::load(&path).unwrap();
    let Body::Json(sent) = &cassette.interactions()[0].request.body else {
        panic!("a JSON request")
    };
    let data = sent["messages"][0]["content"][1]["source"]["data"]
        .as_str()
        .unwrap();
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap(),
        photo(7)
    );

    // Offline: the same image gets the recorded answer; another image matches nothing.
    drop(upstream);
    let server = Cassette::replay(&path).await.unwrap();
    let replayed = anthropic(server.base_url(), "another key")
        .complete(&ChatRequest::new(&transcript))
        .await
        .unwrap();
    assert_eq!(replayed, live);
    let other = [Message::user("What is in this photo?").attach(Media::new("image/png", photo(8)))];
    let error = anthropic(server.base_url(), "another key")
        .complete(&ChatRequest::new(&other))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("no recorded"), "{error}");
}
