//! Bad settings fail at install, naming the setting at fault, and set nothing up: no global
//! subscriber is left behind, so the program can still install another.

use crate::child::Scenario;

#[test]
fn bad_settings_fail_at_install_naming_them_and_set_nothing_up() {
    let cases = [
        (
            Scenario::new("tree").env("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318"),
            ["OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318"],
        ),
        (
            Scenario::new("tree").endpoint("ftp://127.0.0.1:4318"),
            ["Otlp::endpoint", "ftp://127.0.0.1:4318"],
        ),
        (
            Scenario::new("tree").env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ["OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"],
        ),
        (
            Scenario::new("tree").env("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "ten"),
            ["OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "ten"],
        ),
        (
            Scenario::new("tree")
                .grpc()
                .endpoint("https://127.0.0.1:4317"),
            ["https://127.0.0.1:4317", "http/protobuf"],
        ),
    ];
    for (scenario, named) in cases {
        let ran = scenario.run();
        let error = ran.report["install_error"]
            .as_str()
            .unwrap_or_else(|| panic!("{scenario:?} was refused: {:?}", ran.report));
        for name in named {
            assert!(error.contains(name), "{error} names {name}");
        }
        assert_eq!(ran.report["subscriber_set"], false, "{error}");
    }
}

#[test]
fn a_second_install_is_refused() {
    let ran = Scenario::new("twice")
        .endpoint(format!(
            "http://127.0.0.1:{}",
            test_support::phoenix::free_port()
        ))
        .run();
    let second = ran.report["second_install"].as_str().unwrap();
    assert!(second.contains("already set"), "{second}");
    assert!(second.contains("Otlp::layer"), "{second}");
}
