//! The code's shape, checked like a feature (README, "Layout"):
//!
//! - no import cycle between the files of any crate of the workspace: a file that uses
//!   another (`use crate::…`, `super::…`, or a `crate::…` path in its code) may not be used
//!   back, directly or around a loop, so each file can be read knowing only what is below it;
//! - no domain module reaches the composition root (`crate::state::AppState`): only the
//!   transport (`http/`, `realtime/`), start-up and the command line may;
//! - no function over [`MAX_FN_LINES`] lines on the send, answer, start-up and config paths.
//!
//! It reads the sources as text: `use` trees and `crate::`/`super::` paths, with inline
//! `#[cfg(test)]` modules left out (tests may reach anything).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_FN_LINES: usize = 80;

/// The crates checked, by their source folder.
const CRATES: &[&str] = &["contract/src", "actors/src", "server/src", "loadtest/src"];

/// The files that may reach `AppState`: the transport and what builds or drives it.
const MAY_USE_APP_STATE: &[&str] = &[
    "http/",
    "realtime/",
    "startup.rs",
    "state.rs",
    "operator.rs",
    "scheduler.rs",
];

/// The files (or folders) whose functions must stay short enough to hold in one's head:
/// everything one send runs through, from the socket's frame to the settled answer (the
/// chat service, the quota counts, the realtime service, the whole actors crate), and
/// start-up and the configuration.
const SHORT_FUNCTIONS: &[&str] = &[
    "server/src/chat/",
    "server/src/quota.rs",
    "server/src/realtime/service.rs",
    "actors/src/",
    "server/src/startup.rs",
    "server/src/config.rs",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The crate's files. Beside a `lib.rs`, `main.rs` is a crate of its own, which uses the
/// library by name; without one (the load harness) it is the crate's root.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source folder") {
        let path = entry.expect("a source entry").path();
        let own_crate = path.ends_with("src/main.rs") && path.with_file_name("lib.rs").exists();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") && !own_crate {
            out.push(path);
        }
    }
}

/// `a/b.rs` and `a/b/mod.rs` are module `a::b`; `lib.rs` and `main.rs` the crate root.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The source without comments, string contents and inline `#[cfg(test)]` modules.
fn code_of(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                let mut last = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            '"' => {
                out.push('"');
                let mut escaped = false;
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if !escaped && c == '"' {
                        break;
                    }
                    escaped = !escaped && c == '\\';
                }
                out.push('"');
            }
            // A char literal ('{'), not a lifetime ('a): its braces must not count.
            '\'' => {
                let rest: String = chars.clone().take(3).collect();
                if rest.starts_with('\\') {
                    for c in chars.by_ref() {
                        if c == '\'' {
                            break;
                        }
                    }
                } else if rest.chars().nth(1) == Some('\'') {
                    chars.next();
                    chars.next();
                } else {
                    out.push('\'');
                }
            }
            _ => out.push(c),
        }
    }
    match out.find("#[cfg(test)]\nmod ") {
        Some(at) => out[..at].to_owned(),
        None => out,
    }
}

/// Every module path the code names from `crate::` or `super::`, with `use` trees expanded.
/// `super` of module `a::b` (`a/b.rs` or `a/b/mod.rs`) is `a`.
fn paths_named(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let word_start =
            i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':');
        let rest = &code[i..];
        let prefix = ["crate::", "super::"].into_iter().find(|p| rest.starts_with(p));
        if let (true, Some(prefix)) = (word_start, prefix) {
            let base: Vec<String> = if prefix == "crate::" {
                Vec::new()
            } else {
                module[..module.len().saturating_sub(1)].to_vec()
            };
            let (tree, used) = use_tree(&rest[prefix.len()..]);
            for path in tree {
                let mut full = base.clone();
                full.extend(path);
                found.push(full);
            }
            i += prefix.len() + used.max(1);
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    found
}

/// Parses `a::b::{c, d::e}` into its paths; returns them and the bytes read.
fn use_tree(text: &str) -> (Vec<Vec<String>>, usize) {
    let mut path = Vec::new();
    let mut i = 0;
    loop {
        let ident: String = text[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if ident == "self" {
            return (vec![path], i + ident.len());
        }
        if !ident.is_empty() {
            i += ident.len();
            path.push(ident);
            if text[i..].starts_with("::") {
                i += 2;
                continue;
            }
            return (vec![path], i);
        }
        if text[i..].starts_with('{') {
            i += 1;
            let mut all = Vec::new();
            loop {
                let skipped = text[i..].len() - text[i..].trim_start().len();
                i += skipped;
                if text[i..].starts_with('}') {
                    i += 1;
                    break;
                }
                let (inner, used) = use_tree(&text[i..]);
                i += used;
                for p in inner {
                    let mut full = path.clone();
                    full.extend(p);
                    all.push(full);
                }
                let skipped = text[i..].len() - text[i..].trim_start().len();
                i += skipped;
                if text[i..].starts_with(',') {
                    i += 1;
                } else if text[i..].starts_with('}') {
                    i += 1;
                    break;
                } else if used == 0 {
                    // `self`, `*` or an alias: skip to the next separator.
                    let stop = text[i..].find([',', '}']).unwrap_or(text.len() - i);
                    i += stop;
                }
            }
            return (all, i);
        }
        // `*`, `self` handled as the path so far.
        return (vec![path], i);
    }
}

struct Crate {
    name: &'static str,
    /// Module path → file, relative to the workspace.
    files: BTreeMap<Vec<String>, String>,
    /// File → its code.
    code: BTreeMap<String, String>,
}

fn read_crate(name: &'static str) -> Crate {
    let dir = root().join(name);
    let mut paths = Vec::new();
    rust_files(&dir, &mut paths);
    let mut files = BTreeMap::new();
    let mut code = BTreeMap::new();
    for path in paths {
        let relative = path.strip_prefix(&dir).unwrap().to_path_buf();
        let file = format!("{name}/{}", relative.display());
        files.insert(module_of(&relative), file.clone());
        code.insert(file, code_of(&std::fs::read_to_string(&path).unwrap()));
    }
    Crate { name, files, code }
}

/// Which files each file uses (the longest module prefix of every path it names).
fn edges(krate: &Crate) -> BTreeMap<String, BTreeSet<String>> {
    let module_of_file: BTreeMap<&String, &Vec<String>> = krate.files.iter().map(|(m, f)| (f, m)).collect();
    let mut out = BTreeMap::new();
    for (file, code) in &krate.code {
        let module = module_of_file[file];
        let mut uses = BTreeSet::new();
        for path in paths_named(code, module) {
            let target = (0..=path.len())
                .rev()
                .find_map(|n| krate.files.get(&path[..n]))
                .expect("the crate root is a module");
            // The crate root only declares modules; naming it is no dependency.
            if target != file && !target.ends_with("lib.rs") && !target.ends_with("main.rs") {
                uses.insert(target.clone());
            }
        }
        out.insert(file.clone(), uses);
    }
    out
}

/// The strongly connected groups of more than one file (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, node: &'a str) {
        let n = w.index.len();
        w.index.insert(node, n);
        w.low.insert(node, n);
        w.stack.push(node);
        w.on_stack.insert(node);
        for next in w.graph.get(node).into_iter().flatten() {
            if !w.index.contains_key(next.as_str()) {
                visit(w, next);
                let low = w.low[node].min(w.low[next.as_str()]);
                w.low.insert(node, low);
            } else if w.on_stack.contains(next.as_str()) {
                let low = w.low[node].min(w.index[next.as_str()]);
                w.low.insert(node, low);
            }
        }
        if w.low[node] == w.index[node] {
            let mut group = Vec::new();
            while let Some(top) = w.stack.pop() {
                w.on_stack.remove(top);
                group.push(top.to_owned());
                if top == node {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                w.found.push(group);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            visit(&mut walk, node);
        }
    }
    walk.found
}

#[test]
fn no_crate_has_an_import_cycle() {
    let mut report = String::new();
    for name in CRATES {
        let krate = read_crate(name);
        let graph = edges(&krate);
        for group in cycles(&graph) {
            report.push_str(&format!("\n{}: a cycle of {} files:\n", krate.name, group.len()));
            for file in &group {
                let back: Vec<&String> = graph[file].iter().filter(|t| group.contains(t)).collect();
                report.push_str(&format!("  {file} uses {back:?}\n"));
            }
        }
    }
    assert!(report.is_empty(), "import cycles:{report}");
}

#[test]
fn only_the_transport_reaches_the_composition_root() {
    let krate = read_crate("server/src");
    let graph = edges(&krate);
    let offenders: Vec<&str> = graph
        .iter()
        .filter(|(_, uses)| uses.contains("server/src/state.rs"))
        .map(|(file, _)| file.trim_start_matches("server/src/"))
        .filter(|file| !MAY_USE_APP_STATE.iter().any(|allowed| file.starts_with(allowed)))
        .collect();
    assert!(
        offenders.is_empty(),
        "domain modules that reach AppState: {offenders:?}"
    );
}

/// Each `fn` and its length in lines, found by matching its body's braces.
fn functions(code: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut search = 0;
    while let Some(at) = code[search..].find("fn ") {
        let start = search + at;
        search = start + 3;
        let before = code[..start].chars().last();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = code[start + 3..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        // The body opens at the first `{` after the signature, unless a `;` ends it first.
        let Some(open) = code[start..].find(['{', ';']).map(|o| start + o) else {
            break;
        };
        if &code[open..=open] == ";" {
            continue;
        }
        let mut depth = 0;
        let mut end = open;
        for (i, c) in code[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let lines = code[start..=end].lines().count();
        out.push((name, lines));
    }
    out
}

#[test]
fn functions_on_the_send_answer_startup_and_config_paths_are_short() {
    let mut long = Vec::new();
    let mut files = Vec::new();
    for name in CRATES {
        rust_files(&root().join(name), &mut files);
    }
    let files = files.iter().filter_map(|path| {
        let file = path.strip_prefix(root()).unwrap().to_str().unwrap().to_owned();
        SHORT_FUNCTIONS
            .iter()
            .any(|short| file.starts_with(short))
            .then_some((path, file))
    });
    for (path, file) in files {
        let code = code_of(&std::fs::read_to_string(path).unwrap());
        for (name, lines) in functions(&code) {
            if lines > MAX_FN_LINES {
                long.push(format!("{file}: fn {name} is {lines} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_reader_finds_paths_cycles_and_lengths() {
    // The checks above pass only if the reader sees what it must: this small crate has a
    // cycle through a `use` tree and a `super::` path, and a long function.
    let code = code_of(
        "use crate::{a::X, b::{self, c::Y}};\n// crate::z\nfn f() { let s = \"}\"; super::q::r(); }\n",
    );
    let named = paths_named(&code, &["m".into(), "n".into()]);
    let as_text: Vec<String> = named.iter().map(|p| p.join("::")).collect();
    assert_eq!(as_text, ["a::X", "b", "b::c::Y", "m::q::r"]);
    assert_eq!(functions(&code), [("f".to_owned(), 1)]);
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::from(["c".to_owned()])),
        ("c".to_owned(), BTreeSet::from(["a".to_owned()])),
        ("d".to_owned(), BTreeSet::from(["a".to_owned()])),
    ]
    .into();
    assert_eq!(
        cycles(&graph),
        [vec!["a".to_owned(), "b".to_owned(), "c".to_owned()]]
    );
    let long = format!("fn g() {{\n{}}}\n", "x();\n".repeat(MAX_FN_LINES));
    assert_eq!(functions(&long)[0].1, MAX_FN_LINES + 2);
}
