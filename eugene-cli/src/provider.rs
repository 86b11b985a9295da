//! Which model eugene talks to: from the flags and the environment, first match wins.

use std::sync::Arc;
use std::time::Duration;

use eugene::{
    AnthropicProvider, GeminiProvider, LlmProvider, OpenAiProvider, OpenAiResponsesProvider,
    ProviderError, llm::HttpOptions, skills::RetryPolicy,
};

use crate::cli::Args;

/// What `eugene` says when no model is configured or reachable.
pub const NO_PROVIDER: &str = "eugene needs a model, and none is configured or reachable. Any one of:
  1. export ANTHROPIC_API_KEY=...            (Anthropic; ANTHROPIC_BASE_URL for a proxy)
  2. export OPENAI_API_KEY=...               (OpenAI; or OPENAI_BASE_URL=http://host:port/v1 for
                                              DeepSeek, vLLM, llama.cpp and other compatible servers;
                                              OPENAI_API=responses for OpenAI's Responses API)
  3. export GEMINI_API_KEY=...               (Google Gemini; GOOGLE_API_KEY works too)
  4. run Ollama (ollama serve), or export OLLAMA_HOST=host:port
Then pick a model with AGENT_MODEL or --model. `eugene --help` says more.";

/// The chosen provider and what error messages need to know about it.
pub struct Chosen {
    /// The provider.
    pub provider: Arc<dyn LlmProvider>,
    /// `anthropic`, `openai`, `openai-responses`, `gemini` or `ollama`.
    pub kind: &'static str,
    /// The base URL requests go to.
    pub base_url: String,
    /// The model's name.
    pub model: String,
    /// The variable that holds the key, when the provider takes one.
    pub key_var: Option<&'static str>,
    /// The variable (or flag) that sets the URL.
    pub url_var: &'static str,
}

/// The provider the environment and flags ask for: `Ok(None)` when nothing is configured, `Err`
/// with a message (naming the variable and the fix) when something is configured wrongly.
pub async fn choose(args: &Args) -> Result<Option<Chosen>, String> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let model = args.model.clone().or_else(|| env("AGENT_MODEL"));
    let options = http_options(args);
    let anthropic = || -> Result<Option<Chosen>, String> {
        let Some(key) = env("ANTHROPIC_API_KEY") else {
            return Ok(None);
        };
        let model = model.clone().unwrap_or_else(|| "claude-sonnet-4-5".into());
        let mut provider = AnthropicProvider::new(key, model.clone());
        let mut base_url = "https://api.anthropic.com".to_owned();
        if let Some(base) = env("ANTHROPIC_BASE_URL") {
            base_url = check_url("ANTHROPIC_BASE_URL", &base)?;
            provider = provider.with_base_url(base_url.clone());
        }
        Ok(Some(Chosen {
            provider: Arc::new(provider.with_http_options(options.clone())),
            kind: "anthropic",
            base_url,
            model,
            key_var: Some("ANTHROPIC_API_KEY"),
            url_var: "ANTHROPIC_BASE_URL",
        }))
    };
    // OPENAI_API picks which of OpenAI's APIs the OpenAI provider speaks.
    let responses_api = || match env("OPENAI_API").as_deref().map(str::trim) {
        None | Some("chat") => Ok(false),
        Some("responses") => Ok(true),
        Some(other) => Err(format!(
            "OPENAI_API is `{other}`: set it to chat (Chat Completions, the default) or \
             responses (the Responses API)"
        )),
    };
    let openai = |responses: bool| -> Result<Option<Chosen>, String> {
        let key = env("OPENAI_API_KEY");
        let base = env("OPENAI_BASE_URL");
        if key.is_none() && base.is_none() {
            return Ok(None);
        }
        let model = model.clone().unwrap_or_else(|| "gpt-4.1".into());
        let mut base_url = "https://api.openai.com/v1".to_owned();
        if let Some(base) = base {
            base_url = check_url("OPENAI_BASE_URL", &base)?;
        }
        let key = key.unwrap_or_default();
        let provider: Arc<dyn LlmProvider> = if responses {
            Arc::new(
                OpenAiResponsesProvider::new(key, model.clone())
                    .with_base_url(base_url.clone())
                    .with_http_options(options.clone()),
            )
        } else {
            Arc::new(
                OpenAiProvider::new(key, model.clone())
                    .with_base_url(base_url.clone())
                    .with_http_options(options.clone()),
            )
        };
        Ok(Some(Chosen {
            provider,
            kind: if responses {
                "openai-responses"
            } else {
                "openai"
            },
            base_url,
            model,
            key_var: Some("OPENAI_API_KEY"),
            url_var: "OPENAI_BASE_URL",
        }))
    };
    let gemini = || -> Result<Option<Chosen>, String> {
        let key = ["GEMINI_API_KEY", "GOOGLE_API_KEY"]
            .into_iter()
            .find_map(|var| env(var).map(|key| (key, var)));
        let Some((key, key_var)) = key else {
            return Ok(None);
        };
        let model = model.clone().unwrap_or_else(|| "gemini-2.5-flash".into());
        let mut provider = GeminiProvider::new(key, model.clone());
        let mut base_url = "https://generativelanguage.googleapis.com/v1beta".to_owned();
        if let Some(base) = env("GEMINI_BASE_URL") {
            base_url = check_url("GEMINI_BASE_URL", &base)?;
            provider = provider.with_base_url(base_url.clone());
        }
        Ok(Some(Chosen {
            provider: Arc::new(provider.with_http_options(options.clone())),
            kind: "gemini",
            base_url,
            model,
            key_var: Some(key_var),
            url_var: "GEMINI_BASE_URL",
        }))
    };
    let ollama_host = env("OLLAMA_HOST").unwrap_or_else(|| "127.0.0.1:11434".into());
    let ollama_host = ollama_host
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let ollama_up = || async {
        matches!(
            tokio::time::timeout(
                Duration::from_millis(300),
                tokio::net::TcpStream::connect(&ollama_host)
            )
            .await,
            Ok(Ok(_))
        )
    };
    let ollama = |up: bool| {
        up.then(|| {
            let model = model.clone().unwrap_or_else(|| "llama3.2".into());
            let base_url = format!("http://{ollama_host}/v1");
            let provider = OpenAiProvider::new("", model.clone())
                .with_base_url(base_url.clone())
                .with_http_options(options.clone());
            Chosen {
                provider: Arc::new(provider),
                kind: "ollama",
                base_url,
                model,
                key_var: None,
                url_var: "OLLAMA_HOST",
            }
        })
    };
    Ok(match args.provider.as_deref() {
        Some("anthropic") => {
            Some(anthropic()?.ok_or("--provider anthropic needs ANTHROPIC_API_KEY")?)
        }
        Some("openai") => Some(
            openai(responses_api()?)?
                .ok_or("--provider openai needs OPENAI_API_KEY or OPENAI_BASE_URL")?,
        ),
        Some("openai-responses") => Some(
            openai(true)?
                .ok_or("--provider openai-responses needs OPENAI_API_KEY or OPENAI_BASE_URL")?,
        ),
        Some("gemini") => {
            Some(gemini()?.ok_or("--provider gemini needs GEMINI_API_KEY or GOOGLE_API_KEY")?)
        }
        Some("ollama") => Some(ollama(ollama_up().await).ok_or(format!(
            "--provider ollama: nothing answers on {ollama_host} (start `ollama serve`, or set \
             OLLAMA_HOST)"
        ))?),
        Some(other) => {
            return Err(format!(
                "unknown provider `{other}`: use anthropic, openai, openai-responses, gemini or ollama"
            ));
        }
        None => match anthropic()? {
            Some(chosen) => Some(chosen),
            None => match openai(responses_api()?)? {
                Some(chosen) => Some(chosen),
                None => match gemini()? {
                    Some(chosen) => Some(chosen),
                    None => ollama(ollama_up().await),
                },
            },
        },
    })
}

/// The flags' time limits and retries, as the providers take them.
fn http_options(args: &Args) -> HttpOptions {
    let timeout = Duration::from_secs(args.timeout);
    HttpOptions {
        connect_timeout: timeout.min(Duration::from_secs(10)),
        timeout,
        idle_timeout: timeout,
        retry: RetryPolicy {
            max_attempts: args.retries + 1,
            initial_delay: Duration::from_secs(1),
            backoff: 2.0,
            max_delay: Duration::from_secs(10),
        },
        ..HttpOptions::default()
    }
}

/// `value` as a base URL, or a message that names `var`, the value and what to write instead.
fn check_url(var: &str, value: &str) -> Result<String, String> {
    let url = value.trim();
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"));
    match rest {
        Some(rest) if !rest.is_empty() && !rest.starts_with('/') => Ok(url.to_owned()),
        Some(_) => Err(format!(
            "{var} is `{url}`, which names no host: set it to a URL like http://127.0.0.1:8080/v1"
        )),
        None if !url.contains("://") => Err(format!(
            "{var} is `{url}`, which has no scheme: set {var}=http://{url} (or https://{url})"
        )),
        None => Err(format!(
            "{var} is `{url}`: only http:// and https:// URLs work, e.g. http://127.0.0.1:8080/v1"
        )),
    }
}

/// Whether a provider's error means its configuration is wrong (exit status 2), not that the call
/// failed.
pub fn is_config_error(error: &ProviderError) -> bool {
    matches!(error, ProviderError::Config(_))
}

/// What to do about a failed model call, in one sentence. `args` gives the time limit and whether
/// answers were streamed.
pub fn hint(error: &ProviderError, chosen: &Chosen, args: &Args) -> String {
    let url = &chosen.base_url;
    let url_var = chosen.url_var;
    let secs = args.timeout;
    match error {
        ProviderError::Timeout { .. } if args.no_stream => format!(
            "the server at {url} did not answer within {secs} s (with --no-stream the whole answer \
             must arrive in that time): check that it is running, give it more time with \
             --timeout SECS, or stream"
        ),
        ProviderError::Timeout { .. } => format!(
            "the server at {url} did not begin an answer within {secs} s: check that it is running \
             and has the model loaded, or give a slow model more time with --timeout SECS"
        ),
        ProviderError::Connect { .. } => format!(
            "nothing answered at {url}: start the server, or point {url_var} at the right address"
        ),
        ProviderError::Api { status: 401, .. } | ProviderError::Api { status: 403, .. } => {
            match chosen.key_var {
                Some(var) => format!("the server refused the key: check {var}"),
                None => "the server refused the request: it may need a key".into(),
            }
        }
        ProviderError::Api { status: 404, .. } => format!(
            "check the model name `{}` (--model or AGENT_MODEL) and the base URL {url} (it usually \
             ends in /v1)",
            chosen.model
        ),
        ProviderError::Api { status: 429, .. } => {
            "the server is rate-limiting or out of credit: wait, or check the account".into()
        }
        ProviderError::Api { .. } => format!("the server at {url} answered with an error"),
        ProviderError::Stream { .. } => format!(
            "the answer broke off: try again; if it stalled (over {secs} s of silence), raise \
             --timeout, or try --no-stream"
        ),
        ProviderError::Decode { .. } => format!(
            "the server at {url} answered in a form eugene does not understand: is it \
             {}-compatible? try --no-stream",
            match chosen.kind {
                "anthropic" => "Anthropic",
                "gemini" => "Gemini",
                _ => "OpenAI",
            }
        ),
        ProviderError::Config(_) => format!("check {url_var} and the flags"),
        _ => "try again".into(),
    }
}
