//! The library's front door used as an agent builder would use it: a config parsed from text,
//! a real MCP server (the npm reference "everything" server), a provider double standing in
//! for the model, and `Host::builder(config)...build()` putting them together.

use std::path::Path;

use serde_json::json;
use switchboard_core::Dialect;
use switchboard_host::{AgentOptions, Config, End, Host, HostError, ToolMode};
use switchboard_test_support::peers::peer;
use switchboard_test_support::provider_double::{Call, ProviderDouble, Turn};

/// A host over `config`'s servers that talks to `model`, the Anthropic double.
async fn anthropic_host(config: Config, model: &ProviderDouble) -> Host {
    Host::builder(config)
        .provider(Dialect::Anthropic)
        .base_url(model.base_url())
        .no_api_key()
        .build()
        .await
        .unwrap()
}

/// A config with the everything server and an entry that cannot run.
fn config(dir: &Path) -> Config {
    let server = serde_json::to_string(&peer("everything")).unwrap();
    let text = format!(
        "[servers.everything]\ncommand = \"node\"\nargs = [{server}, \"stdio\"]\n\n\
         [servers.broken]\nurl = \"not a url\"\n\n\
         [servers.everything.tool.no_such_tool]\napprove = \"always\"\n"
    );
    Config::parse(&dir.join("switchboard.toml"), &text, &|_| None).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_built_from_a_config_runs_the_loop_over_its_servers() {
    let dir = tempfile::tempdir().unwrap();
    let model = ProviderDouble::start(
        Dialect::Anthropic,
        vec![
            Turn::tools(vec![Call::ends_with(
                "__echo",
                json!({"message": "hi there"}),
            )]),
            Turn::Text("The server said hi there.".into()),
        ],
    )
    .await;
    let transcript = dir.path().join("transcript.jsonl");
    let mut host = Host::builder(config(dir.path()))
        .provider(Dialect::Anthropic)
        .base_url(model.base_url())
        .no_api_key()
        .transcript(&transcript)
        .build()
        .await
        .unwrap();

    // What building found is returned, not printed: the entry that cannot run, and a per-tool
    // setting for a tool the server does not list.
    let notes = host.notes().join("\n");
    assert!(notes.contains("server \"broken\" is disabled"), "{notes}");
    assert!(notes.contains("no_such_tool"), "{notes}");

    let answer = host.ask("Echo hi there.").await.unwrap();
    assert_eq!(answer.text, "The server said hi there.");
    assert_eq!(answer.end, End::Answered);
    model.assert_valid();

    // The model saw the server's tools, and its call reached the real server and came back.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let tools = requests[0].body["tools"].as_array().unwrap();
    assert!(
        tools.iter().any(|t| t["name"] == "everything__echo"),
        "{tools:?}"
    );
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(last.to_string().contains("Echo: hi there"), "{last}");
    let turns = &host.agent().turns;
    assert_eq!(turns[0].tool_calls[0].server.as_deref(), Some("everything"));
    assert!(
        std::fs::read_to_string(&transcript)
            .unwrap()
            .lines()
            .count()
            >= 4
    );
    host.shutdown().await;
}

#[tokio::test]
async fn a_key_variable_that_is_not_set_is_named_by_check() {
    let dir = tempfile::tempdir().unwrap();
    let result = Host::builder(config(dir.path()))
        .api_key_env("SWITCHBOARD_TEST_KEY_THAT_IS_NEVER_SET")
        .check();
    match result {
        Err(HostError::ApiKeyEnvUnset { var }) => {
            assert_eq!(var, "SWITCHBOARD_TEST_KEY_THAT_IS_NEVER_SET")
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("built without the key"),
    }
}

/// The output limit each request carries: 4096 in `max_tokens` to an OpenAI-compatible server
/// at another URL unless set, the set value when it is, and none to OpenAI's own API unless set.
#[tokio::test]
async fn each_request_carries_the_output_limit_its_endpoint_reads() {
    let dir = tempfile::tempdir().unwrap();
    let empty = Config::parse(&dir.path().join("switchboard.toml"), "", &|_| None).unwrap();
    for (set, want) in [(None, 4096), (Some(77), 77)] {
        let model = ProviderDouble::start(Dialect::OpenAiChat, vec![Turn::Text("ok".into())]).await;
        let mut host = Host::builder(empty.clone())
            .provider(Dialect::OpenAiChat)
            .base_url(model.base_url())
            .no_api_key()
            .options(AgentOptions {
                max_tokens: set,
                ..AgentOptions::default()
            })
            .build()
            .await
            .unwrap();
        assert_eq!(host.agent().max_tokens_sent(), Some(want));
        host.ask("hi").await.unwrap();
        let body = &model.requests()[0].body;
        assert_eq!(body["max_tokens"], want, "{body}");
        assert!(body.get("max_completion_tokens").is_none(), "{body}");
        model.assert_valid();
        host.shutdown().await;
    }
    // Azure OpenAI is OpenAI's own API on other hosts: no default limit there either.
    let azure = Some("https://res.openai.azure.com/openai/deployments/d");
    for (dialect, base_url, set, want) in [
        (Dialect::OpenAiChat, None, None, None),
        (Dialect::OpenAiChat, None, Some(500), Some(500)),
        (Dialect::OpenAiChat, azure, None, None),
        (Dialect::Gemini, None, None, None),
        (Dialect::Anthropic, None, None, Some(4096)),
    ] {
        let mut builder = Host::builder(empty.clone())
            .provider(dialect)
            .no_api_key()
            .options(AgentOptions {
                max_tokens: set,
                ..AgentOptions::default()
            });
        if let Some(url) = base_url {
            builder = builder.base_url(url);
        }
        let host = builder.build().await.unwrap();
        assert_eq!(
            host.agent().max_tokens_sent(),
            want,
            "{dialect} {base_url:?}"
        );
    }
}

/// A request too long for the model's context fails naming what the tools array takes of it,
/// and how to send fewer; with tool search on, there is nothing of that to say.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_too_long_for_the_context_says_what_the_tools_take() {
    let dir = tempfile::tempdir().unwrap();
    let too_long = || Turn::HttpError {
        status: 400,
        body: json!({"error": {"code": 400, "type": "exceed_context_size_error",
            "message": "request (66328 tokens) exceeds the available context size (1024 tokens)"}}),
        retry_after: None,
    };
    for (tools, hinted) in [(ToolMode::All, true), (ToolMode::Search, false)] {
        let model = ProviderDouble::start(Dialect::OpenAiChat, vec![too_long()]).await;
        let mut host = Host::builder(config(dir.path()))
            .provider(Dialect::OpenAiChat)
            .base_url(model.base_url())
            .no_api_key()
            .tools(tools)
            .build()
            .await
            .unwrap();
        let err = host.ask("Echo hi.").await.unwrap_err();
        let HostError::ProviderHttp {
            context_overflow,
            hint,
            ..
        } = &err
        else {
            panic!("another error: {err}");
        };
        assert!(context_overflow, "{err}");
        assert_eq!(hint.is_some(), hinted, "{err}");
        let text = err.to_string();
        assert!(
            text.contains("exceeds the available context size"),
            "{text}"
        );
        if hinted {
            assert!(text.contains("the tools array alone is about"), "{text}");
            assert!(text.contains("--tools search"), "{text}");
        }
        host.shutdown().await;
    }
}

/// What the builder is not told about the model comes from the config's model settings, as
/// `switchboard run` takes them; a provider given to the builder other than the config's
/// leaves the config's model, base URL and key variable out, and keeps its limits.
#[tokio::test]
async fn the_builder_takes_the_configs_model_settings() {
    let dir = tempfile::tempdir().unwrap();
    let model = ProviderDouble::start(
        Dialect::OpenAiChat,
        vec![
            Turn::tools(vec![Call::exact("nothing_listed", json!({}))]),
            Turn::Text("never asked".into()),
        ],
    )
    .await;
    let text = format!(
        "[settings]\nprovider = \"openai-chat\"\nmodel = \"local-model\"\nbase_url = \"{}\"\n\
         max_tokens = 123\ntemperature = 0.25\nmax_turns = 1\n",
        model.base_url()
    );
    let model_url = model.base_url();
    let config = Config::parse(&dir.path().join("switchboard.toml"), &text, &|_| None).unwrap();
    let mut host = Host::builder(config.clone()).build().await.unwrap();
    assert_eq!(host.agent().client().dialect, Dialect::OpenAiChat);
    assert_eq!(host.agent().client().model, "local-model");
    let answer = host.ask("hi").await.unwrap();
    // One model request allowed: the tool call is answered, the next request is not made.
    assert_eq!(answer.end, End::MaxTurns, "{answer:?}");
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0].body;
    assert_eq!(body["model"], "local-model", "{body}");
    assert_eq!(body["max_tokens"], 123, "{body}");
    assert_eq!(body["temperature"], 0.25, "{body}");
    model.assert_valid();
    host.shutdown().await;

    // The builder's own limits win over the config's, told before `options` or after.
    let model = ProviderDouble::start(
        Dialect::OpenAiChat,
        vec![
            Turn::tools(vec![Call::exact("nothing_listed", json!({}))]),
            Turn::tools(vec![Call::exact("nothing_listed", json!({}))]),
            Turn::Text("never asked".into()),
        ],
    )
    .await;
    let text = text.replace(&model_url, &model.base_url());
    let config = Config::parse(&dir.path().join("switchboard.toml"), &text, &|_| None).unwrap();
    let mut host = Host::builder(config.clone())
        .max_turns(2)
        .max_tokens(55)
        .options(AgentOptions {
            stream: false,
            ..AgentOptions::default()
        })
        .build()
        .await
        .unwrap();
    let answer = host.ask("hi").await.unwrap();
    assert_eq!(answer.end, End::MaxTurns, "{answer:?}");
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "two model requests allowed");
    assert_eq!(requests[0].body["max_tokens"], 55);
    assert_eq!(requests[0].body["temperature"], 0.25, "the config's still");
    host.shutdown().await;

    // What the builder is told wins; another provider leaves the config's model and URL out.
    let host = Host::builder(config.clone())
        .provider(Dialect::Anthropic)
        .no_api_key()
        .max_turns(5)
        .temperature(3.0)
        .build()
        .await
        .unwrap();
    let client = host.agent().client();
    assert_eq!(
        client.model,
        switchboard_host::translate::default_model(Dialect::Anthropic)
    );
    assert!(
        client.url(false).starts_with("https://api.anthropic.com/"),
        "{}",
        client.url(false)
    );
    let notes = host.notes().join("\n");
    assert!(notes.contains("temperature 3 left out"), "{notes}");
    host.shutdown().await;

    // The config's key variable is its provider's, and is asked for.
    let text = "[settings]\nprovider = \"gemini\"\napi_key_env = \"SWITCHBOARD_TEST_KEY_THAT_IS_NEVER_SET\"\n";
    let config = Config::parse(&dir.path().join("switchboard.toml"), text, &|_| None).unwrap();
    match Host::builder(config.clone()).check() {
        Err(HostError::ApiKeyEnvUnset { var }) => {
            assert_eq!(var, "SWITCHBOARD_TEST_KEY_THAT_IS_NEVER_SET")
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("built without the key"),
    }
    assert!(
        Host::builder(config)
            .provider(Dialect::OpenAiChat)
            .base_url("http://127.0.0.1:9/v1")
            .check()
            .is_ok()
    );
}

/// A reconfiguration (chat's `/reload`) that makes a server pin opens the pin store it needs:
/// the tools the model then sees are pinned there. Before, no server pinned and no store was
/// opened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconfiguration_that_pins_opens_the_pin_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("pins.sqlite");
    let server = serde_json::to_string(&peer("everything")).unwrap();
    let text = |pin: &str| {
        format!(
            "[settings]\npin_store = {:?}\n\n[servers.everything]\ncommand = \"node\"\nargs = [{server}, \"stdio\"]\npin = \"{pin}\"\n",
            store.display().to_string()
        )
    };
    let parse = |text: String| {
        Config::parse(&dir.path().join("switchboard.toml"), &text, &|_| None).unwrap()
    };
    let model = ProviderDouble::start(
        Dialect::Anthropic,
        vec![Turn::Text("one".into()), Turn::Text("two".into())],
    )
    .await;
    let mut host = anthropic_host(parse(text("off")), &model).await;
    host.ask("hi").await.unwrap();
    assert!(!store.exists(), "no server pins: no store");

    host.agent_mut().reconfigure(&parse(text("enforce"))).await;
    host.ask("again").await.unwrap();
    model.assert_valid();
    let pins = switchboard_host::pins::PinStore::open(&store)
        .unwrap()
        .list()
        .unwrap();
    assert!(
        pins.iter()
            .any(|p| p.server == "everything" && p.tool == "echo"),
        "{pins:?}"
    );
    host.shutdown().await;
}

/// `Agent::compact`: the model is sent the conversation, tools array and all, with a request
/// for a summary; the summary then stands in for the conversation, and the next message joins
/// it. A conversation the model's context no longer holds is tried again with its tool results
/// cut; one the provider refuses otherwise is left as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_is_compacted_into_a_summary_the_next_message_joins() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(3000);
    let overflow = Turn::HttpError {
        status: 400,
        body: json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "prompt is too long: 210000 tokens > 200000 maximum"}}),
        retry_after: None,
    };
    let refused = Turn::HttpError {
        status: 400,
        body: json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "messages: something else is wrong"}}),
        retry_after: None,
    };
    let model = ProviderDouble::start(
        Dialect::Anthropic,
        vec![
            Turn::tools(vec![Call::ends_with("__echo", json!({"message": long}))]),
            Turn::Text("It echoed 3000 x.".into()),
            refused,
            overflow,
            Turn::Text("The user had a 3000-character message echoed; it worked.".into()),
            Turn::Text("Yes, it worked.".into()),
        ],
    )
    .await;
    let mut host = anthropic_host(config(dir.path()), &model).await;
    host.ask("Echo a long message.").await.unwrap();
    let before = host.agent().messages.clone();
    assert_eq!(before.len(), 4);

    // Refused for another reason: nothing changes.
    let err = host.agent_mut().compact(None).await.unwrap_err();
    assert!(err.to_string().contains("something else is wrong"), "{err}");
    assert_eq!(host.agent().messages, before);

    // Too long: tried again with the tool result cut, then replaced by the summary.
    let done = host
        .agent_mut()
        .compact(Some("the length"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.messages, 4);
    assert!(done.clipped);
    assert_eq!(
        done.summary,
        "The user had a 3000-character message echoed; it worked."
    );
    let requests = model.requests();
    // The tool result and the call's argument: whole, then cut.
    let result = |n: usize| {
        requests[n].body["messages"][2]["content"][0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(result(3), format!("Echo: {long}"));
    let argument =
        |n: usize| requests[n].body["messages"][1]["content"][0]["input"]["message"].clone();
    assert_eq!(argument(3), json!(long));
    assert_eq!(
        argument(4),
        json!(format!(
            "{}\n[1000 more characters cut for the summary]",
            "x".repeat(2000)
        ))
    );
    let cut = result(4);
    assert!(
        cut.starts_with("Echo: xxx")
            && cut.ends_with("\n[1006 more characters cut for the summary]")
            && cut.chars().count() < 2100,
        "{cut}"
    );
    // The tools array goes as with every request; the ask is the last user message.
    assert_eq!(requests[4].body["tools"], requests[0].body["tools"]);
    let ask = requests[4].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(
        ask.contains("Summarize this conversation") && ask.contains("Above all, keep: the length"),
        "{ask}"
    );

    host.ask("Did it work?").await.unwrap();
    model.assert_valid();
    let last = &model.requests()[5].body["messages"];
    assert_eq!(last.as_array().unwrap().len(), 1, "{last}");
    let text = last[0].to_string();
    assert!(
        text.contains("summarized to save context")
            && text.contains("3000-character message echoed")
            && text.contains("Did it work?"),
        "{text}"
    );
    host.shutdown().await;
}

/// A conversation too long to summarize even with its tool results cut is summarized part by
/// part: its earlier part (up to a message the user wrote) first, whose summary then stands in
/// for it ahead of that message; with no such place to cut, the error comes back and nothing
/// changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_too_long_to_summarize_whole_is_summarized_part_by_part() {
    let dir = tempfile::tempdir().unwrap();
    let overflow = || Turn::HttpError {
        status: 400,
        body: json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "prompt is too long: 410000 tokens > 200000 maximum"}}),
        retry_after: None,
    };
    let model = ProviderDouble::start(
        Dialect::Anthropic,
        vec![
            Turn::tools(vec![Call::ends_with("__echo", json!({"message": "one"}))]),
            Turn::Text("Echoed one.".into()),
            // One exchange only: nowhere to cut.
            overflow(),
            overflow(),
            Turn::tools(vec![Call::ends_with("__echo", json!({"message": "two"}))]),
            Turn::Text("Echoed two.".into()),
            overflow(),
            overflow(),
            Turn::Text("Earlier: the user had one echoed.".into()),
            Turn::Text("One and two were echoed.".into()),
        ],
    )
    .await;
    let mut host = anthropic_host(config(dir.path()), &model).await;
    host.ask("Echo one.").await.unwrap();
    let before = host.agent().messages.clone();
    let err = host.agent_mut().compact(None).await.unwrap_err();
    assert!(err.to_string().contains("prompt is too long"), "{err}");
    assert_eq!(host.agent().messages, before);

    host.ask("Echo two.").await.unwrap();
    assert_eq!(host.agent().messages.len(), 8);
    let done = host.agent_mut().compact(None).await.unwrap().unwrap();
    assert_eq!((done.messages, done.parts, done.clipped), (8, 1, true));
    assert_eq!(done.summary, "One and two were echoed.");
    model.assert_valid();
    let requests = model.requests();
    assert_eq!(requests.len(), 10);
    // The earlier part alone: the first exchange and the ask, nothing of the second.
    let head = requests[8].body["messages"].as_array().unwrap();
    assert_eq!(head.len(), 5, "{head:?}");
    let head = serde_json::to_string(head).unwrap();
    assert!(
        head.contains("Echo one.") && !head.contains("Echo two."),
        "{head}"
    );
    // Then the whole again, its earlier part's summary ahead of the user's second message.
    let whole = &requests[9].body["messages"];
    assert_eq!(whole.as_array().unwrap().len(), 5, "{whole}");
    let first = whole[0].to_string();
    assert!(
        first.contains("summarized to save context")
            && first.contains("Earlier: the user had one echoed.")
            && first.contains("Echo two."),
        "{first}"
    );
    let after = &host.agent().messages;
    assert_eq!(after.len(), 1);
    assert!(after[0].text().contains("One and two were echoed."));
    host.shutdown().await;
}

/// A request that no longer fits the model's context compacts the conversation and the loop
/// goes on from the summary (the config's `auto_compact`, on by default); with it off, the
/// error comes back and says compaction would help.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_no_longer_fits_compacts_and_goes_on() {
    let overflow = || Turn::HttpError {
        status: 400,
        body: json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "prompt is too long: 210000 tokens > 200000 maximum"}}),
        retry_after: None,
    };
    for auto in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut script = vec![
            Turn::tools(vec![Call::ends_with("__echo", json!({"message": "hi"}))]),
            Turn::Text("It echoed hi.".into()),
            overflow(),
        ];
        if auto {
            script.push(Turn::Text(
                "Summary: hi was echoed; the user asks again.".into(),
            ));
            script.push(Turn::Text("Yes, hi again.".into()));
        }
        let model = ProviderDouble::start(Dialect::Anthropic, script).await;
        let mut builder = Host::builder(config(dir.path()))
            .provider(Dialect::Anthropic)
            .base_url(model.base_url())
            .no_api_key();
        if !auto {
            builder = builder.auto_compact(false);
        }
        let mut host = builder.build().await.unwrap();
        host.ask("Echo hi.").await.unwrap();
        let mut events = Vec::new();
        let sent = host
            .agent_mut()
            .send(
                vec![switchboard_providers::Part::text("Again?")],
                &mut |e| events.push(e),
            )
            .await;
        model.assert_valid();
        if auto {
            assert_eq!(sent.unwrap().text, "Yes, hi again.");
            assert!(
                events.iter().any(|e| matches!(
                    e,
                    switchboard_host::AgentEvent::Compacted {
                        messages: 5,
                        clipped: false
                    }
                )),
                "{events:?}"
            );
            let reqs = model.requests();
            assert_eq!(reqs.len(), 5);
            assert!(
                reqs[3]
                    .body
                    .to_string()
                    .contains("Summarize this conversation")
            );
            let messages = reqs[4].body["messages"].as_array().unwrap();
            assert_eq!(messages.len(), 1, "{messages:?}");
            assert!(messages[0].to_string().contains("the user asks again"));
        } else {
            let err = sent.unwrap_err().to_string();
            assert!(
                err.contains("prompt is too long") && err.contains("compacting the conversation"),
                "{err}"
            );
            assert_eq!(host.agent().messages.len(), 5);
        }
        host.shutdown().await;
    }
}
