//! `switchboard-bench`: drives N MCP tool calls at concurrency 1, 8 and 32 against targets (a
//! stdio command or a Streamable HTTP URL) with rmcp's client and prints p50/p99 latency and
//! calls/s. `suite` runs the whole comparison in one go: the echo server directly and through
//! `switchboard serve`, over stdio and HTTP, in interleaved rounds (each round measures every
//! target at each concurrency, direct and through serve back to back, in alternating order)
//! and reports per-round comparisons and their medians, plus the resident memory of serve with
//! five upstream servers.
//!
//!   switchboard-bench suite --switchboard target/release/switchboard --echo target/release/switchboard-echo
//!   switchboard-bench --target direct=http://127.0.0.1:8931/mcp --target "stdio=./my-server --flag"

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ServerResult};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(name = "switchboard-bench", version)]
struct Args {
    /// Calls per concurrency level.
    #[arg(long, default_value_t = 2000)]
    calls: usize,
    /// Concurrency levels, comma-separated.
    #[arg(long, default_value = "1,8,32", value_delimiter = ',')]
    concurrency: Vec<usize>,
    /// Rounds: every target is measured at every level once per round, the targets in turn
    /// (reversed every other round), and the figures reported are medians over the rounds.
    /// Interleaving keeps a slow second of the machine from landing on one target only.
    #[arg(long, default_value_t = 7)]
    rounds: usize,
    /// LABEL=SPEC: SPEC is an http(s) URL or a command line (split on spaces). Repeatable.
    #[arg(long = "target", value_name = "LABEL=SPEC")]
    targets: Vec<String>,
    #[command(subcommand)]
    suite: Option<Suite>,
}

#[derive(clap::Subcommand, Debug)]
enum Suite {
    /// Echo server directly and through `switchboard serve`, stdio and HTTP, and serve's memory
    /// with five upstream servers.
    Suite {
        /// The switchboard binary (build it with --release for meaningful numbers).
        #[arg(long)]
        switchboard: PathBuf,
        /// The echo server binary (default: switchboard-echo next to this binary).
        #[arg(long)]
        echo: Option<PathBuf>,
    },
}

/// One connected target.
struct Target {
    label: String,
    peer: Peer<RoleClient>,
    tool: String,
    _service: RunningService<RoleClient, ()>,
}

/// One measured row.
struct Row {
    calls: usize,
    p50: Duration,
    p99: Duration,
    per_sec: f64,
}

fn http_client() -> anyhow::Result<reqwest::Client> {
    // One pooled client per target, with keep-alive: rmcp's default makes a client per transport.
    Ok(reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .tcp_nodelay(true)
        .build()?)
}

async fn connect(label: &str, spec: &str) -> anyhow::Result<Target> {
    let service = if spec.starts_with("http://") || spec.starts_with("https://") {
        let transport = StreamableHttpClientTransport::with_client(
            http_client()?,
            StreamableHttpClientTransportConfig::with_uri(spec.to_string()),
        );
        ().serve(transport)
            .await
            .with_context(|| format!("{label}: connect {spec}"))?
    } else {
        let mut parts = spec.split_whitespace();
        let program = parts.next().context("empty command")?;
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(parts).stderr(Stdio::null());
        let transport = TokioChildProcess::new(cmd)?;
        ().serve(transport)
            .await
            .with_context(|| format!("{label}: start {spec}"))?
    };
    let peer = service.peer().clone();
    let tools = peer.list_all_tools().await?;
    let tool = tools
        .iter()
        .map(|t| t.name.to_string())
        .find(|n| n.ends_with("echo"))
        .with_context(|| format!("{label}: no tool named *echo"))?;
    Ok(Target {
        label: label.to_string(),
        peer,
        tool,
        _service: service,
    })
}

async fn one_call(peer: &Peer<RoleClient>, tool: &str) -> anyhow::Result<Duration> {
    let args = json!({"text": "hello"});
    let serde_json::Value::Object(args) = args else {
        bail!("arguments are an object")
    };
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
    let start = Instant::now();
    let answer = peer
        .send_request(ClientRequest::CallToolRequest(CallToolRequest::new(params)))
        .await?;
    let elapsed = start.elapsed();
    // A gateway that lost its upstream may keep answering with error results: those are not
    // calls served, so they stop the run instead of counting as fast ones.
    match answer {
        ServerResult::CallToolResult(r) if r.is_error != Some(true) => Ok(elapsed),
        other => bail!("{tool}: not a successful tool result: {other:?}"),
    }
}

async fn measure(t: &Target, calls: usize, concurrency: usize) -> anyhow::Result<Row> {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let peer = t.peer.clone();
        let tool = t.tool.clone();
        let next = next.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < calls {
                lat.push(one_call(&peer, &tool).await?);
            }
            anyhow::Ok(lat)
        }));
    }
    let mut all = Vec::with_capacity(calls);
    for task in tasks {
        all.extend(task.await??);
    }
    let elapsed = started.elapsed();
    all.sort();
    let pick = |q: f64| all[((all.len() as f64 * q) as usize).min(all.len() - 1)];
    Ok(Row {
        calls: all.len(),
        p50: pick(0.50),
        p99: pick(0.99),
        per_sec: all.len() as f64 / elapsed.as_secs_f64(),
    })
}

/// Rows of one round: `[target][level]`.
type Round = Vec<Vec<Row>>;

/// Measure every target at every level, `rounds` times: per round and level the targets run in
/// turn, in reversed order every other round, so that targets compared with each other run back
/// to back and none always runs first.
async fn rounds(
    targets: &[&Target],
    calls: usize,
    levels: &[usize],
    rounds: usize,
) -> anyhow::Result<Vec<Round>> {
    // Warm up connections, caches and the upstreams.
    for t in targets {
        measure(t, 200.min(calls), 8).await?;
    }
    let mut out = Vec::with_capacity(rounds);
    for round in 0..rounds {
        eprintln!("round {} of {rounds}", round + 1);
        let mut rows: Round = targets.iter().map(|_| Vec::new()).collect();
        for &c in levels {
            let mut order: Vec<usize> = (0..targets.len()).collect();
            if round % 2 == 1 {
                order.reverse();
            }
            for i in order {
                rows[i].push(measure(targets[i], calls, c).await?);
            }
        }
        out.push(rows);
    }
    Ok(out)
}

/// The median of `values` (the mean of the middle two for an even count); 0 for none.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Print each target's rows as medians over the rounds.
fn print_medians(labels: &[String], levels: &[usize], all: &[Round]) {
    println!(
        "{:<14} {:>5} {:>7} {:>10} {:>10} {:>10}   (medians of {} rounds)",
        "target",
        "conc",
        "calls",
        "p50 µs",
        "p99 µs",
        "calls/s",
        all.len()
    );
    for (i, label) in labels.iter().enumerate() {
        for (j, &c) in levels.iter().enumerate() {
            let pick = |f: &dyn Fn(&Row) -> f64| median(all.iter().map(|r| f(&r[i][j])).collect());
            println!(
                "{:<14} {:>5} {:>7} {:>10.0} {:>10.0} {:>10.0}",
                label,
                c,
                all.first().map_or(0, |r| r[i][j].calls),
                pick(&|r| micros(r.p50)),
                pick(&|r| micros(r.p99)),
                pick(&|r| r.per_sec),
            );
        }
    }
}

/// One figure per round from the rows of two targets at one level, then their median.
fn per_round(
    all: &[Round],
    (a, b): (usize, usize),
    level: usize,
    f: impl Fn(&Row, &Row) -> f64,
) -> (Vec<f64>, f64) {
    let values: Vec<f64> = all.iter().map(|r| f(&r[a][level], &r[b][level])).collect();
    let mid = median(values.clone());
    (values, mid)
}

fn listed(values: &[f64], unit: impl Fn(f64) -> String) -> String {
    values
        .iter()
        .map(|&v| unit(v))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A child process that serves HTTP and prints its URL on stderr; killed on drop.
struct HttpChild {
    child: Child,
    url: String,
}

impl HttpChild {
    fn start(program: &Path, args: &[String]) -> anyhow::Result<HttpChild> {
        let mut child = std::process::Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("start {}", program.display()))?;
        let mut stderr = BufReader::new(child.stderr.take().context("stderr")?);
        let mut line = String::new();
        let url = loop {
            line.clear();
            if stderr.read_line(&mut line)? == 0 {
                bail!("{} exited before printing its URL", program.display());
            }
            if let Some(i) = line.find("http://") {
                break line[i..].trim().to_string();
            }
        };
        std::thread::spawn(move || {
            let mut sink = String::new();
            while stderr.read_line(&mut sink).unwrap_or(0) > 0 {
                sink.clear();
            }
        });
        Ok(HttpChild { child, url })
    }

    /// (RSS, peak RSS, anonymous RSS) in KiB. Anonymous is the process's own memory; the
    /// rest of RSS is file-backed (the binary's code pages, shared with other processes).
    fn rss_kib(&self) -> Option<(u64, u64, u64)> {
        let read =
            |file: &str| std::fs::read_to_string(format!("/proc/{}/{file}", self.child.id())).ok();
        let field = |text: &str, name: &str| {
            text.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        };
        let status = read("status")?;
        let rollup = read("smaps_rollup").unwrap_or_default();
        Some((
            field(&status, "VmRSS:")?,
            field(&status, "VmHWM:")?,
            field(&rollup, "Anonymous:").unwrap_or(0),
        ))
    }
}

impl Drop for HttpChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn suite(args: &Args, switchboard: &Path, echo: &Path) -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("switchboard-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let server = |name: &str| {
        format!(
            "[servers.{name}]\ncommand = {:?}\npin = \"off\"\napprove = \"never\"\n",
            echo.display().to_string()
        )
    };
    let one = dir.join("one.toml");
    std::fs::write(&one, server("echo"))?;
    let five = dir.join("five.toml");
    std::fs::write(
        &five,
        (1..=5)
            .map(|i| server(&format!("echo{i}")))
            .collect::<Vec<_>>()
            .join("\n"),
    )?;
    let sb = switchboard.display().to_string();
    let serve_stdio = format!("{sb} --config {} serve", one.display());

    let levels = &args.concurrency;
    let level = |c: usize| levels.iter().position(|&l| l == c);
    let direct_stdio = connect("direct-stdio", &echo.display().to_string()).await?;
    let gw_stdio = connect("serve-stdio", &serve_stdio).await?;
    let echo_http = HttpChild::start(echo, &["--http".into(), "127.0.0.1:0".into()])?;
    let direct_http = connect("direct-http", &echo_http.url).await?;
    let serve_http = HttpChild::start(
        switchboard,
        &[
            "--config".into(),
            one.display().to_string(),
            "serve".into(),
            "--http".into(),
            "127.0.0.1:0".into(),
        ],
    )?;
    let gw_http = connect("serve-http", &serve_http.url).await?;
    // In this order each direct target runs next to its gateway twin, in either direction.
    let targets = [&direct_stdio, &gw_stdio, &gw_http, &direct_http];
    let all = rounds(&targets, args.calls, levels, args.rounds.max(1)).await?;
    let labels: Vec<String> = targets.iter().map(|t| t.label.clone()).collect();
    drop((
        direct_stdio,
        gw_stdio,
        gw_http,
        direct_http,
        serve_http,
        echo_http,
    ));
    print_medians(&labels, levels, &all);

    println!();
    let (stdio, http) = ((0, 1), (2, 3));
    if let Some(j) = level(8) {
        let (each, mid) = per_round(&all, http, j, |g, d| 100.0 * g.per_sec / d.per_sec);
        println!(
            "HTTP  calls/s at concurrency 8, serve / direct: median {mid:.0}% (goal >= 70%); rounds {}",
            listed(&each, |v| format!("{v:.0}%"))
        );
    }
    if let Some(j) = level(1) {
        let (each, mid) = per_round(&all, http, j, |g, d| micros(g.p50) / micros(d.p50));
        println!(
            "HTTP  p50 at concurrency 1, serve / direct: median {mid:.2}x (goal <= 1.5x); rounds {}",
            listed(&each, |v| format!("{v:.2}x"))
        );
        let (each, mid) = per_round(&all, stdio, j, |d, g| micros(g.p50) - micros(d.p50));
        println!(
            "stdio p50 at concurrency 1, serve - direct: median {mid:+.0} µs added (goal <= 50 µs); rounds {}",
            listed(&each, |v| format!("{v:+.0}"))
        );
    }

    // Memory: serve over HTTP with five upstream echo servers, after a round of calls.
    let mem = HttpChild::start(
        switchboard,
        &[
            "--config".into(),
            five.display().to_string(),
            "serve".into(),
            "--http".into(),
            "127.0.0.1:0".into(),
        ],
    )?;
    let t = connect("serve-5", &mem.url).await?;
    measure(&t, 1000.min(args.calls), 8).await?;
    match mem.rss_kib() {
        Some((rss, hwm, anon)) => println!(
            "memory of serve with 5 upstream servers: RSS {:.1} MB (anonymous {:.1} MB, the rest is the binary's file-backed code pages), peak {:.1} MB (goal < 15 MB)",
            rss as f64 / 1024.0,
            anon as f64 / 1024.0,
            hwm as f64 / 1024.0
        ),
        None => println!("memory: /proc not readable on this system"),
    }
    drop(t);
    drop(mem);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(Suite::Suite { switchboard, echo }) = &args.suite {
        let echo = match echo {
            Some(e) => e.clone(),
            None => std::env::current_exe()?
                .parent()
                .context("no directory")?
                .join("switchboard-echo"),
        };
        return suite(&args, switchboard, &echo).await;
    }
    if args.targets.is_empty() {
        bail!("give --target LABEL=SPEC (repeatable) or the `suite` subcommand; see --help");
    }
    let mut targets = Vec::new();
    for t in &args.targets {
        let (label, spec) = t.split_once('=').context("--target wants LABEL=SPEC")?;
        targets.push(connect(label, spec).await?);
    }
    let refs: Vec<&Target> = targets.iter().collect();
    let all = rounds(&refs, args.calls, &args.concurrency, args.rounds.max(1)).await?;
    let labels: Vec<String> = targets.iter().map(|t| t.label.clone()).collect();
    print_medians(&labels, &args.concurrency, &all);
    Ok(())
}
