//! Build script of the `switchboard` binary: link it with packed relative relocations (RELR)
//! where the toolchain and the C library can take them.
//!
//! A position-independent executable carries one 24-byte relocation per pointer in its data
//! (about 50,000 for switchboard), which the loader reads in full at start: 0.8 MB of resident
//! memory in every process, a sixth of `serve`'s. RELR packs them into 14 KB. A binary linked
//! so needs glibc 2.36 or newer (it refuses to start, with a clear message, on older ones), and
//! old GNU ld rejects the flag. So the flag is only given when building for the machine that
//! builds (target = host), on Linux with glibc, the host's glibc is 2.36 or newer, and a probe
//! program linked with the flag by the same rustc, linker and flags actually runs.
//! `SWITCHBOARD_RELR=0` turns it off.

use std::path::PathBuf;
use std::process::Command;

const FLAG: &str = "-Wl,-z,pack-relative-relocs";

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=SWITCHBOARD_RELR");
    if std::env::var("SWITCHBOARD_RELR").is_ok_and(|v| v == "0") {
        return;
    }
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    if var("TARGET") != var("HOST")
        || var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || !glibc_at_least(2, 36)
    {
        return;
    }
    if probe_runs() {
        println!("cargo::rustc-link-arg-bins={FLAG}");
    }
}

/// Whether the build machine's glibc (`getconf GNU_LIBC_VERSION`, "glibc 2.36") is at least
/// `major.minor`.
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(a), Some(b)) => (a, b) >= (major, minor),
        _ => false,
    }
}

/// Link a tiny program with the flag, as this build links, and run it.
fn probe_runs() -> bool {
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return false;
    };
    let source = out_dir.join("relr_probe.rs");
    let binary = out_dir.join("relr_probe");
    // A pointer in static data, so the probe has a relative relocation to pack.
    let program = "static S: &str = \"relr\";\nfn main() { std::process::exit(if S.len() == 4 { 0 } else { 1 }) }\n";
    if std::fs::write(&source, program).is_err() {
        return false;
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let mut cmd = Command::new(rustc);
    // The flags this build passes to rustc (a `-C linker=...` among them) apply to the probe.
    if let Ok(flags) = std::env::var("CARGO_ENCODED_RUSTFLAGS") {
        cmd.args(flags.split('\u{1f}').filter(|f| !f.is_empty()));
    }
    cmd.arg("--edition=2021")
        .arg("-Crelocation-model=pie")
        .arg(format!("-Clink-arg={FLAG}"))
        .arg("-o")
        .arg(&binary)
        .arg(&source);
    let linked = cmd.output().is_ok_and(|o| o.status.success());
    linked
        && Command::new(&binary)
            .status()
            .is_ok_and(|status| status.success())
}
