//! Builds the package's own git revision into the extension (`_core.GIT_REVISION`), so a run made
//! after `pip install .` (a wheel: no source tree to ask at run time) still records which commit it
//! came from. Empty when the source is not a git checkout (an sdist).

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut revision = String::new();
    // Only the ccsim repository itself: a source tarball unpacked inside another repository must
    // not report that repository's commit.
    let ours = git(dir, &["rev-parse", "--show-toplevel"]).is_some_and(|top| Path::new(&top).join("crates/ccsim-core").is_dir());
    if let (true, Some(rev)) = (ours, git(dir, &["rev-parse", "HEAD"])) {
        let dirty = git(dir, &["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        revision = rev + if dirty { "-dirty" } else { "" };
        // Rebuild the constant when HEAD moves or the index changes (commits, checkouts).
        for path in ["HEAD", "index", "packed-refs"] {
            if let Some(p) = git(dir, &["rev-parse", "--git-path", path]) {
                println!("cargo:rerun-if-changed={}", dir.join(p).display());
            }
        }
        if let Some(head_ref) = git(dir, &["symbolic-ref", "-q", "HEAD"]).and_then(|r| git(dir, &["rev-parse", "--git-path", &r])) {
            println!("cargo:rerun-if-changed={}", dir.join(head_ref).display());
        }
    } else {
        println!("cargo:rerun-if-changed=build.rs");
    }
    println!("cargo:rustc-env=CCSIM_GIT_REVISION={revision}");
}
