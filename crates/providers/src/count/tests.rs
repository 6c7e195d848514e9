//! Tests of token counting: OpenAI counts against API-measured references, estimates against their stated rules.
//!
//! Where each reference number comes from:
//! - "cookbook": `openai/openai-cookbook` examples/How_to_count_tokens_with_tiktoken.ipynb §7
//!   sends one `get_current_weather` tool with a system and a user message and prints the API's
//!   `usage.prompt_tokens`: 105 for gpt-3.5-turbo and gpt-4, 101 for gpt-4o and gpt-4o-mini.
//! - "hmarr": `hmarr/openai-chat-tokens` tests/token-counts.test.ts lists `prompt_tokens` for
//!   requests to gpt-3.5-turbo, checked against the API by that suite's "test data matches
//!   openai" case (get_recipe is marked `validate: true`; the others are validated when its
//!   `validateAll` switch is on).
//!   Those are whole-prompt numbers; the message part is subtracted with the cookbook's framing
//!   (3 tokens per message + role + content, +3 reply priming; with functions present the first
//!   system message gains a trailing "\n", hmarr §3.2), computed with tiktoken-rs in the test.
//! - Gemini's numbers are characters / 4 of strings written out in the test, counted by hand.
//! - Anthropic's are the stated formula over a tiktoken-rs count, not an API measurement: there
//!   is no API key here; `ToolsRent::compare` is where a `count_tokens` result will go.

use serde_json::{Value, json};

use super::*;

fn enc(e: Encoding, s: &str) -> u64 {
    openai::tokens(e, s)
}

/// Cookbook framing of chat messages `(role, content)`: 3 per message + tokens of role and
/// content, + 3 for the reply priming. The first system message is padded with "\n" because
/// functions are present (hmarr).
fn messages(e: Encoding, msgs: &[(&str, &str)]) -> u64 {
    let mut padded = false;
    3 + msgs
        .iter()
        .map(|(role, content)| {
            let content = if *role == "system" && !padded {
                padded = true;
                format!("{content}\n")
            } else {
                content.to_string()
            };
            3 + enc(e, role) + enc(e, &content)
        })
        .sum::<u64>()
}

fn openai(model: &str, tools: &[ToolText<'_>], system_message: bool) -> ToolsRent {
    let options = CountOptions {
        system_message,
        ..Default::default()
    };
    count_tools(Dialect::OpenAiChat, model, tools, &options)
}

fn weather() -> Value {
    json!({
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
            "unit": {"type": "string", "description": "The unit of temperature to return", "enum": ["celsius", "fahrenheit"]}
        },
        "required": ["location"]
    })
}

#[test]
fn cookbook_weather_matches_the_api_for_cl100k_and_o200k() {
    let schema = weather();
    let tools = [ToolText::new(
        "get_current_weather",
        "Get the current weather in a given location",
        &schema,
    )];
    let msgs = [
        (
            "system",
            "You are a helpful assistant that can answer to questions about the weather.",
        ),
        ("user", "What's the weather like in San Francisco?"),
    ];
    // API prompt_tokens from the cookbook: 105 (gpt-3.5-turbo, gpt-4), 101 (gpt-4o, -mini).
    for (model, api) in [
        ("gpt-3.5-turbo", 105),
        ("gpt-4", 105),
        ("gpt-4o", 101),
        ("gpt-4o-mini", 101),
    ] {
        let rent = openai(model, &tools, true);
        let Method::Exact { encoding } = rent.method else {
            panic!("OpenAI counts are exact")
        };
        assert_eq!(
            messages(encoding, &msgs) + rent.total,
            api,
            "{model}: {rent:?}"
        );
    }
    assert_eq!(openai("gpt-4o", &tools, true).total, 68);
    assert_eq!(openai("gpt-4", &tools, true).total, 71);
}

#[test]
fn renders_the_typescript_namespace() {
    let schema = weather();
    let tools = [ToolText::new(
        "get_current_weather",
        "Get the current weather in a given location",
        &schema,
    )];
    assert_eq!(
        openai::render_functions(&tools),
        "namespace functions {\n\n\
         // Get the current weather in a given location\n\
         type get_current_weather = (_: {\n\
         // The city and state, e.g. San Francisco, CA\n\
         location: string,\n\
         // The unit of temperature to return\n\
         unit?: \"celsius\" | \"fahrenheit\",\n\
         }) => any;\n\n\
         } // namespace functions"
    );
}

#[test]
fn renders_nested_unions_arrays_and_multiline_descriptions() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "integer", "description": "B"}}, "required": ["b"]},
            "c": {"type": "array", "items": {"type": ["string", "null"]}},
            "d": {"anyOf": [{"type": "string"}, {"type": "number"}]},
            "e": {"type": "array"},
            "f": {"$ref": "#/$defs/x"},
            "g": {"const": 3, "description": "one\ntwo"}
        },
        "required": ["a"]
    });
    let tools = [ToolText::new("t", "line one\nline two", &schema)];
    assert_eq!(
        openai::render_function(&tools[0]),
        "// line one\n// line two\ntype t = (_: {\n\
         a: {\n  // B\n  b: number,\n},\n\
         c?: (string | null)[],\n\
         d?: string | number,\n\
         e?: any[],\n\
         f?: any,\n\
         // one\n// two\ng?: 3,\n\
         }) => any;\n\n"
    );
    let none = json!({"type": "object"});
    let tools = [ToolText::new("ping", "", &none)];
    assert_eq!(
        openai::render_function(&tools[0]),
        "type ping = () => any;\n\n"
    );
}

/// hmarr cases: (tool JSON, API prompt_tokens with one user message "hello").
fn hmarr_cases() -> Vec<(Value, u64)> {
    vec![
        (
            json!({"name": "foo", "parameters": {"type": "object", "properties": {}}}),
            31,
        ),
        (
            json!({"name": "foo", "description": "Do a foo", "parameters": {"type": "object", "properties": {}}}),
            36,
        ),
        (
            json!({"name": "bing_bong", "description": "Do a bing bong", "parameters": {"type": "object", "properties": {
                "foo": {"type": "string"}}}}),
            49,
        ),
        (
            json!({"name": "bing_bong", "description": "Do a bing bong", "parameters": {"type": "object", "properties": {
                "foo": {"type": "string"},
                "bar": {"type": "number", "description": "A number"}}}}),
            57,
        ),
        (
            json!({"name": "bing_bong", "description": "Do a bing bong", "parameters": {"type": "object", "properties": {
                "foo": {"type": "object", "properties": {
                    "bar": {"type": "string", "enum": ["a", "b", "c"]},
                    "baz": {"type": "boolean"}}}}}}),
            68,
        ),
        (
            json!({"name": "get_recipe", "parameters": {
                "type": "object",
                "required": ["ingredients", "instructions", "time_to_cook"],
                "properties": {
                    "ingredients": {"type": "array", "items": {
                        "type": "object",
                        "required": ["name", "unit", "amount"],
                        "properties": {
                            "name": {"type": "string"},
                            "unit": {"enum": ["grams", "ml", "cups", "pieces", "teaspoons"], "type": "string"},
                            "amount": {"type": "number"}}}},
                    "instructions": {"type": "array", "items": {"type": "string"},
                        "description": "Steps to prepare the recipe (no numbering)"},
                    "time_to_cook": {"type": "number", "description": "Total time to prepare the recipe in minutes"}}}}),
            106,
        ),
    ]
}

#[test]
fn hmarr_gpt35_cases_match_the_api() {
    let e = Encoding::Cl100kBase;
    let hello = messages(e, &[("user", "hello")]);
    assert_eq!(hello, 8, "hmarr: a lone user \"hello\" is 8 tokens");
    for (tool, api) in hmarr_cases() {
        let t = ToolText::new(
            tool["name"].as_str().unwrap(),
            tool["description"].as_str().unwrap_or(""),
            &tool["parameters"],
        );
        let rent = openai("gpt-3.5-turbo", &[t], false);
        assert_eq!(hello + rent.total, api, "{}", tool["name"]);
    }
}

#[test]
fn openai_parts_add_up_and_constants_apply() {
    let schema = weather();
    let a = ToolText::new("get_current_weather", "Get the weather", &schema);
    let b = ToolText::new("ping", "", &Value::Null);
    let rent = openai("gpt-5", &[a, b], false);
    assert_eq!(rent.per_tool.len(), 2);
    assert_eq!(
        rent.total,
        rent.overhead + rent.per_tool.iter().sum::<u64>()
    );
    // The whole rendered text + 9 (hmarr), tokenized once.
    let whole = enc(Encoding::O200kBase, &openai::render_functions(&[a, b]));
    assert_eq!(rent.total, whole + OPENAI_FUNCTIONS_OVERHEAD);
    // System message −4; tool_choice none +1; forced +4 + name tokens (hmarr, §3.2).
    assert_eq!(openai("gpt-5", &[a, b], true).total, rent.total - 4);
    let with = |choice| {
        let o = CountOptions {
            tool_choice: choice,
            ..Default::default()
        };
        count_tools(Dialect::OpenAiResponses, "gpt-5", &[a, b], &o).total
    };
    assert_eq!(with(ToolChoice::None), rent.total + 1);
    assert_eq!(with(ToolChoice::Tool("ping".into())), rent.total + 4 + 1);
    assert_eq!(with(ToolChoice::Any), rent.total);
    // No tools, no overhead.
    assert_eq!(openai("gpt-5", &[], true).total, 0);
}

#[test]
fn encodings_follow_the_model_id() {
    for m in [
        "gpt-4o",
        "gpt-4o-2024-08-06",
        "gpt-4.1-mini",
        "gpt-5.4",
        "o3-mini",
        "gpt-oss-20b",
        "unknown-model",
    ] {
        assert_eq!(openai::encoding_for(m), Encoding::O200kBase, "{m}");
    }
    for m in ["gpt-4", "gpt-4-0613", "gpt-3.5-turbo", "gpt-3.5-turbo-0125"] {
        assert_eq!(openai::encoding_for(m), Encoding::Cl100kBase, "{m}");
    }
}

#[test]
fn gemini_is_characters_over_four() {
    let schema = json!({"type": "object"});
    let t = ToolText::new("f", "", &schema);
    // {"name":"f","parameters":{"type":"object"}} is 43 characters: ceil(43 / 4) = 11.
    let rent = count_tools(
        Dialect::Gemini,
        "gemini-2.5-pro",
        &[t],
        &CountOptions::default(),
    );
    assert_eq!(rent.per_tool, vec![11]);
    assert_eq!(rent.overhead, 0, "Google publishes no tools overhead");
    assert_eq!(rent.total, 11);
    // Keys are sorted whatever order the map keeps: "description" before "name".
    let t = ToolText::new("f", "Do it", &schema);
    assert_eq!(
        estimate::canonical(&json!({"name": "f", "description": "Do it", "parameters": schema})),
        r#"{"description":"Do it","name":"f","parameters":{"type":"object"}}"#
    );
    // That string is 65 characters: ceil(65 / 4) = 17.
    assert_eq!(estimate::gemini_tokens(&t), 17);
    assert_eq!(
        rent.method.to_string(),
        "estimate: characters / 4 (no published error bound)"
    );
}

#[test]
fn anthropic_estimate_scales_o200k_and_adds_the_overhead() {
    let schema = weather();
    let t = ToolText::new(
        "get_current_weather",
        "Get the current weather in a given location",
        &schema,
    );
    let options = CountOptions {
        overhead: Some(ToolOverhead {
            auto: 496,
            any: 588,
        }),
        ..Default::default()
    };
    let rent = count_tools(Dialect::Anthropic, "claude-sonnet-4-5", &[t], &options);
    let proxy = enc(
        Encoding::O200kBase,
        &estimate::canonical(&json!({
            "name": "get_current_weather",
            "description": "Get the current weather in a given location",
            "input_schema": schema,
        })),
    );
    // ceil(proxy × 1.2) per tool; range ceil(proxy × 1.15) … ceil(proxy × 1.2), + 496 (§3.1).
    assert_eq!(rent.per_tool, vec![(proxy * 12).div_ceil(10)]);
    assert_eq!(rent.overhead, 496);
    assert_eq!(rent.total, 496 + (proxy * 12).div_ceil(10));
    let Method::Estimate {
        range: Some((lo, hi)),
        factor_permille: 1200,
        ..
    } = rent.method
    else {
        panic!("{:?}", rent.method)
    };
    assert_eq!((lo, hi), (496 + (proxy * 115).div_ceil(100), rent.total));
    // Forced tool choice uses the other column.
    let forced = CountOptions {
        tool_choice: ToolChoice::Any,
        ..options.clone()
    };
    assert_eq!(
        count_tools(Dialect::Anthropic, "claude-sonnet-4-5", &[t], &forced).overhead,
        588
    );
    // Opus 4.7's newer tokenizer: × 1.56, range 1.15 … 1.62.
    let opus = count_tools(Dialect::Anthropic, "claude-opus-4-7", &[t], &options);
    assert_eq!(opus.per_tool, vec![(proxy * 156).div_ceil(100)]);
    // No tools: no overhead ("0 additional system prompt tokens", §3.1).
    assert_eq!(
        count_tools(Dialect::Anthropic, "claude-sonnet-4-5", &[], &options).total,
        0
    );
}

#[test]
fn compare_puts_exact_beside_estimate() {
    let rent = ToolsRent {
        per_tool: vec![500],
        overhead: 496,
        total: 996,
        method: Method::Estimate {
            proxy: Proxy::Tiktoken(Encoding::O200kBase),
            factor_permille: 1200,
            range: Some((975, 996)),
        },
    };
    let c = rent.compare(1_050);
    assert_eq!(c.difference(), 54);
    assert_eq!(c.error_permille(), -51);
    assert_eq!(c.within_range, Some(false));
    assert_eq!(
        c.to_string(),
        "estimate 996 vs exact 1,050 (-5.1%), outside the stated range"
    );
    assert_eq!(rent.compare(990).within_range, Some(true));
}

#[test]
fn count_text_uses_the_same_method() {
    assert_eq!(count_text(Dialect::Gemini, "gemini-2.5-pro", "abcdefgh"), 2);
    let t = "You are a helpful assistant.";
    let o = enc(Encoding::O200kBase, t);
    assert_eq!(count_text(Dialect::OpenAiChat, "gpt-4o", t), o);
    assert_eq!(
        count_text(Dialect::Anthropic, "claude-sonnet-4-5", t),
        (o * 12).div_ceil(10)
    );
}

#[test]
fn rent_report_counts_and_prices_in_one_call() {
    let prices = prices::default_prices();
    let price = prices.model("claude-sonnet-4-5-20250929").unwrap();
    let schema = weather();
    let none = json!({"type": "object"});
    let tools = [
        ServerTool {
            server: "weather",
            tool: ToolText::new("weather__get", "Get the current weather", &schema),
        },
        ServerTool {
            server: "util",
            tool: ToolText::new("util__ping", "", &none),
        },
    ];
    let workload = switchboard_core::rent::Workload::default();
    let r = rent_report(
        Dialect::Anthropic,
        "claude-sonnet-4-5-20250929",
        &tools,
        Some("Be brief."),
        &CountOptions::default(),
        price,
        workload,
    );
    let direct = count_tools(
        Dialect::Anthropic,
        "claude-sonnet-4-5",
        &[tools[0].tool, tools[1].tool],
        &CountOptions {
            overhead: price.tool_overhead_tokens,
            ..Default::default()
        },
    );
    assert_eq!(r.overhead_tokens, 496, "from the price entry");
    assert_eq!(r.tools_tokens(), direct.total);
    assert_eq!(r.tools[1].server, "util");
    assert_eq!(
        r.system_tokens,
        count_text(Dialect::Anthropic, "claude-sonnet-4-5", "Be brief.")
    );
    assert_eq!(r.method, direct.method.to_string());
}
