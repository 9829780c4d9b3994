//! The allowed dependencies of `docs/architecture.md` ("Layers and the allowed arrows"),
//! checked on the parsed source (syn): every `use` tree and every path in the code (macro
//! bodies included) is resolved to the module it names (`crate::`, `super::`, `self::`, a child
//! module, `cvo::` in `main.rs`, or an outside crate) and checked against the arrows below; a
//! path that crosses a forbidden arrow fails here, with the file, line and resolved path. Test
//! code (items under `#[cfg(test)]` or `#[test]`, and the files of `#[cfg(test)] mod x;`) may
//! use anything.
//!
//! It also checks that docs/architecture.md names only `src/` paths, modules and items that
//! exist ([`stale_names`]).
//!
//! Besides the arrows, two rules about how modules are cut (by concern, not by length):
//! non-test code does not glob-import its parent (`use super::*`), which is how one type's
//! `impl` ends up spread over files that see everything; and the contract
//! (`reconcile::api`) holds the engine's vocabulary, not generic containers.

use std::{
    collections::BTreeSet,
    fs,
    path::{Path, PathBuf},
};

use proc_macro2::{TokenStream, TokenTree};
use syn::{
    Attribute, Item, UseTree,
    spanned::Spanned,
    visit::{self, Visit},
};

/// One reference from the code: where, and what it names.
#[derive(Debug, Clone)]
struct Reference {
    file: PathBuf,
    line: usize,
    /// The module the code that refers lives in (`reconcile::runtime::engine`).
    from: String,
    /// What it names: `reconcile::api::Drift` inside the crate, `::kube::Client` outside.
    to: String,
    /// A glob import (`use x::*`).
    glob: bool,
}

/// Every non-test source file of the crate with its module path.
struct Crate {
    root: PathBuf,
    /// (file, module path, is main.rs)
    files: Vec<(PathBuf, Vec<String>, bool)>,
    /// Every module path of the library (files and inline modules), `a::b`.
    modules: BTreeSet<String>,
}

/// `#[test]`, `#[cfg(test)]` or a `cfg` that needs `test` (`#[cfg(all(test, unix))]`).
fn is_cfg_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        if a.path().is_ident("test") {
            return true;
        }
        let Ok(list) = a.meta.require_list() else {
            return false;
        };
        if !a.path().is_ident("cfg") {
            return false;
        }
        let words: Vec<String> = list
            .tokens
            .clone()
            .into_iter()
            .flat_map(|t| match t {
                TokenTree::Group(g) => g.stream().into_iter().collect::<Vec<_>>(),
                t => vec![t],
            })
            .map(|t| t.to_string())
            .collect();
        words.iter().any(|w| w == "test") && !words.iter().any(|w| w == "not")
    })
}

fn path_attr(attrs: &[Attribute]) -> Option<String> {
    attrs
        .iter()
        .find(|a| a.path().is_ident("path"))
        .and_then(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
}

fn parse(file: &Path) -> syn::File {
    let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

impl Crate {
    /// Walks the module tree from `src/lib.rs` and `src/main.rs` along `mod x;` declarations,
    /// skipping `#[cfg(test)]` modules.
    fn load() -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut c = Crate {
            root: root.clone(),
            files: Vec::new(),
            modules: BTreeSet::new(),
        };
        c.modules.insert(String::new());
        c.walk(&root.join("lib.rs"), &root, Vec::new(), false);
        c.files.push((root.join("main.rs"), Vec::new(), true));
        c
    }

    /// `file` is module `module`; its child `mod x;` files live in `dir`.
    fn walk(&mut self, file: &Path, dir: &Path, module: Vec<String>, _main: bool) {
        let ast = parse(file);
        self.files.push((file.to_path_buf(), module.clone(), false));
        self.items(&ast.items, file, dir, &module);
    }

    fn items(&mut self, items: &[Item], file: &Path, dir: &Path, module: &[String]) {
        for item in items {
            let Item::Mod(m) = item else { continue };
            if is_cfg_test(&m.attrs) {
                continue;
            }
            let mut child = module.to_vec();
            child.push(m.ident.to_string());
            self.modules.insert(child.join("::"));
            match &m.content {
                Some((_, inner)) => {
                    let sub = dir.join(m.ident.to_string());
                    self.items(inner, file, &sub, &child);
                }
                None => {
                    let name = m.ident.to_string();
                    let path = match path_attr(&m.attrs) {
                        Some(p) => file.parent().expect("parent").join(p),
                        None if dir.join(format!("{name}.rs")).exists() => dir.join(format!("{name}.rs")),
                        None => dir.join(&name).join("mod.rs"),
                    };
                    let sub_dir = if path.file_name().is_some_and(|n| n == "mod.rs") {
                        path.parent().expect("parent").to_path_buf()
                    } else {
                        dir.join(&name)
                    };
                    self.walk(&path, &sub_dir, child, false);
                }
            }
        }
    }

    /// Every reference of the non-test code.
    fn references(&self) -> Vec<Reference> {
        let mut out = Vec::new();
        for (file, module, main) in &self.files {
            let ast = parse(file);
            let mut v = Collector {
                krate: self,
                file,
                stack: vec![module.clone()],
                main: *main,
                out: &mut out,
            };
            for item in &ast.items {
                v.visit_item(item);
            }
        }
        out
    }

    fn rel(&self, file: &Path) -> String {
        file.strip_prefix(&self.root)
            .unwrap_or(file)
            .display()
            .to_string()
    }
}

struct Collector<'a> {
    krate: &'a Crate,
    file: &'a Path,
    /// Module paths: the file's, then nested inline modules.
    stack: Vec<Vec<String>>,
    main: bool,
    out: &'a mut Vec<Reference>,
}

impl Collector<'_> {
    fn here(&self) -> &Vec<String> {
        self.stack.last().expect("module stack")
    }

    /// Resolves a path given as its segments; `None` for a local name (a variable, a type in
    /// scope, `std`'s prelude) that names no module of ours and is not an outside crate's path.
    fn resolve(&self, segs: &[String], leading_colon: bool) -> Option<String> {
        let first = segs.first()?;
        if leading_colon {
            return Some(format!("::{}", segs.join("::")));
        }
        let mut base: Vec<String>;
        let rest: &[String];
        match first.as_str() {
            "crate" => {
                base = Vec::new();
                rest = &segs[1..];
            }
            "cvo" if self.main => {
                base = Vec::new();
                rest = &segs[1..];
            }
            "self" => {
                base = self.here().clone();
                rest = &segs[1..];
            }
            "super" => {
                base = self.here().clone();
                let n = segs.iter().take_while(|s| *s == "super").count();
                for _ in 0..n {
                    base.pop();
                }
                rest = &segs[n..];
            }
            name => {
                let mut child = self.here().clone();
                child.push(name.to_string());
                if !self.main && self.krate.modules.contains(&child.join("::")) {
                    base = child;
                    rest = &segs[1..];
                } else if segs.len() > 1 || name.chars().next().is_some_and(char::is_lowercase) {
                    return Some(format!("::{}", segs.join("::")));
                } else {
                    return None;
                }
            }
        }
        base.extend(rest.iter().cloned());
        Some(base.join("::"))
    }

    fn push(&mut self, line: usize, segs: &[String], leading: bool, glob: bool) {
        if let Some(to) = self.resolve(segs, leading) {
            self.out.push(Reference {
                file: self.file.to_path_buf(),
                line,
                from: self.here().join("::"),
                to,
                glob,
            });
        }
    }

    fn use_tree(&mut self, tree: &UseTree, prefix: &mut Vec<String>, leading: bool) {
        match tree {
            UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix, leading);
                prefix.pop();
            }
            UseTree::Name(n) => {
                let line = n.ident.span().start().line;
                let mut segs = prefix.clone();
                if n.ident != "self" {
                    segs.push(n.ident.to_string());
                }
                self.push(line, &segs, leading, false);
            }
            UseTree::Rename(r) => {
                let line = r.ident.span().start().line;
                let mut segs = prefix.clone();
                if r.ident != "self" {
                    segs.push(r.ident.to_string());
                }
                self.push(line, &segs, leading, false);
            }
            UseTree::Glob(g) => {
                let line = g.star_token.span().start().line;
                let segs = prefix.clone();
                self.push(line, &segs, leading, true);
            }
            UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(t, prefix, leading);
                }
            }
        }
    }

    /// The `a::b::c` sequences of a macro's tokens.
    fn tokens(&mut self, ts: TokenStream) {
        let mut segs: Vec<String> = Vec::new();
        let mut line = 0;
        let mut colons = 0;
        let flush = |me: &mut Self, segs: &mut Vec<String>, line: usize| {
            if segs.len() > 1 {
                me.push(line, segs, false, false);
            }
            segs.clear();
        };
        for tt in ts {
            match tt {
                TokenTree::Ident(i) => {
                    if segs.is_empty() || colons == 2 {
                        if segs.is_empty() {
                            line = i.span().start().line;
                        }
                        segs.push(i.to_string());
                    } else {
                        flush(self, &mut segs, line);
                        line = i.span().start().line;
                        segs.push(i.to_string());
                    }
                    colons = 0;
                }
                TokenTree::Punct(p) if p.as_char() == ':' && !segs.is_empty() => colons += 1,
                TokenTree::Group(g) => {
                    flush(self, &mut segs, line);
                    colons = 0;
                    self.tokens(g.stream());
                }
                _ => {
                    flush(self, &mut segs, line);
                    colons = 0;
                }
            }
        }
        flush(self, &mut segs, line);
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item(&mut self, i: &'ast Item) {
        let attrs = match i {
            Item::Fn(f) => &f.attrs,
            Item::Mod(m) => &m.attrs,
            Item::Impl(x) => &x.attrs,
            Item::Use(u) => &u.attrs,
            Item::Struct(s) => &s.attrs,
            Item::Enum(e) => &e.attrs,
            Item::Const(c) => &c.attrs,
            Item::Static(s) => &s.attrs,
            Item::Trait(t) => &t.attrs,
            Item::Type(t) => &t.attrs,
            Item::Macro(m) => &m.attrs,
            _ => return visit::visit_item(self, i),
        };
        if is_cfg_test(attrs) {
            return;
        }
        match i {
            Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    let mut child = self.here().clone();
                    child.push(m.ident.to_string());
                    self.stack.push(child);
                    for it in items {
                        self.visit_item(it);
                    }
                    self.stack.pop();
                }
            }
            Item::Use(u) => self.use_tree(&u.tree, &mut Vec::new(), u.leading_colon.is_some()),
            _ => visit::visit_item(self, i),
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_cfg_test(&f.attrs) {
            visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs.len() > 1 {
            let line = p.span().start().line;
            self.push(line, &segs, p.leading_colon.is_some(), false);
        }
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.tokens(m.tokens.clone());
    }
}

/// Whether `path` is `prefix` or inside it (by whole segments).
fn under(path: &str, prefix: &str) -> bool {
    if prefix.is_empty() {
        return true;
    }
    path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with("::"))
}

/// One arrow rule: code in `from` (module prefixes; `main` for main.rs) must not name anything
/// under `forbid` (`*`: anything of ours; `::name`: an outside crate's path) unless it is under
/// `allow` or under the `from` prefix itself.
struct Rule {
    from: &'static [&'static str],
    forbid: &'static [&'static str],
    allow: &'static [&'static str],
    why: &'static str,
}

const RULES: &[Rule] = &[
    Rule {
        from: &["reconcile::api"],
        forbid: &["reconcile", "ui", "cli", "sim", "assess", "cluster"],
        allow: &["reconcile::api"],
        why: "reconcile::api (the contract) must not import the engine's implementation or a face",
    },
    Rule {
        from: &["reconcile"],
        forbid: &[
            "ui",
            "cli",
            "assess",
            "sim",
            "cluster",
            "::ratatui",
            "::crossterm",
        ],
        allow: &[],
        why: "reconcile must not depend on the faces or the simulator",
    },
    Rule {
        from: &["reconcile::payload"],
        forbid: &["reconcile::apply", "reconcile::runtime", "reconcile::status"],
        allow: &[],
        why: "reconcile::payload (load, filter, order) must not reach into applying or running",
    },
    Rule {
        from: &["ui"],
        forbid: &[
            "reconcile::runtime",
            "reconcile::apply",
            "reconcile::payload",
            "reconcile::status",
            "reconcile::errors",
            "reconcile::updates",
            "sim",
            "cli",
            "::kube::Client",
        ],
        allow: &[],
        why: "ui may use only reconcile::api of the engine, and no kube client",
    },
    Rule {
        from: &[
            "ui::app",
            "ui::keys",
            "ui::tab",
            "ui::popup",
            "ui::layout",
            "ui::engine",
            "ui::model",
        ],
        forbid: &["ui::view"],
        allow: &[],
        why: "the dashboard's state must not depend on its rendering",
    },
    Rule {
        from: &["assess"],
        forbid: &["reconcile", "ui", "cli", "sim"],
        allow: &[],
        why: "assess is pure over cluster state",
    },
    Rule {
        from: &["cluster"],
        forbid: &["reconcile", "ui", "cli", "sim", "assess"],
        allow: &[],
        why: "cluster only reads clusters and snapshots",
    },
    Rule {
        from: &["openshift"],
        forbid: &["*"],
        allow: &[],
        why: "openshift holds API types only",
    },
    Rule {
        from: &["spec_request", "cow_vec"],
        forbid: &["*"],
        allow: &["openshift"],
        why: "the write path of requests and the generic containers sit below every layer: API types only",
    },
    Rule {
        from: &["informers"],
        forbid: &["*"],
        allow: &["openshift", "clock"],
        why: "informers are the ground floor of reading: every reader uses them, they use no reader",
    },
    Rule {
        from: &["l10n"],
        forbid: &["*"],
        allow: &[],
        why: "the language of cvo's words uses nothing of ours (everything may use it)",
    },
    Rule {
        from: &["clock"],
        forbid: &["*"],
        allow: &[],
        why: "the clock uses nothing of ours (everything may use it)",
    },
    Rule {
        from: &["signals"],
        forbid: &["*"],
        allow: &[],
        why: "the stop signals use nothing of ours (every long-running command uses them)",
    },
    Rule {
        from: &["sim"],
        forbid: &["reconcile", "ui", "cli", "assess"],
        allow: &[],
        why: "sim is a stand-in for kube-apiserver",
    },
    Rule {
        from: &["main"],
        forbid: &["reconcile", "ui", "sim", "assess", "cluster", "::kube", "::tokio"],
        allow: &[],
        why: "main.rs reaches everything through cvo::cli",
    },
];

fn references() -> (Crate, Vec<Reference>) {
    let c = Crate::load();
    let refs = c.references();
    (c, refs)
}

#[test]
fn every_arrow_of_the_architecture_holds() {
    let (c, refs) = references();
    assert!(
        refs.len() > 5_000,
        "only {} references found: the walk is broken",
        refs.len()
    );
    let hits = violations(
        &refs,
        |f| c.files.iter().any(|(p, _, m)| *m && p == f),
        |f| c.rel(f),
    );
    assert!(hits.is_empty(), "forbidden arrows:\n{}", hits.join("\n"));
}

/// Every reference that breaks a [`RULES`] arrow, as `file:line: path (why)`, sorted.
fn violations(
    refs: &[Reference],
    is_main: impl Fn(&Path) -> bool,
    rel: impl Fn(&Path) -> String,
) -> Vec<String> {
    let mut hits = Vec::new();
    for r in refs {
        let main = is_main(&r.file);
        for rule in RULES {
            let matched = if main {
                (rule.from == ["main"]).then_some("main")
            } else {
                rule.from
                    .iter()
                    .copied()
                    .find(|f| *f != "main" && under(&r.from, f))
            };
            let Some(own) = matched else { continue };
            let internal = !r.to.starts_with("::");
            let bad = rule
                .forbid
                .iter()
                .any(|f| (*f == "*" && internal) || under(&r.to, f))
                && !rule.allow.iter().any(|a| under(&r.to, a))
                // What lives inside the rule's own module is its own business.
                && !(own != "main" && under(&r.to, own));
            if bad {
                hits.push(format!("{}:{}: {} ({})", rel(&r.file), r.line, r.to, rule.why));
            }
        }
    }
    hits.sort();
    hits.dedup();
    hits
}

/// The checker on a made-up module `reconcile::runtime::engine` (a child `poll`): each way of
/// naming a forbidden module is caught, test code and allowed arrows are not.
#[test]
fn the_checker_catches_each_way_of_crossing_an_arrow() {
    let text = r#"
        use super::super::super::ui::App;
        use crate::{sim::faults::Faults, reconcile::api::Command};
        use ratatui::widgets::Paragraph;
        use poll::Next;
        fn f() {
            let _ = crate::cluster::live::watch_state;
            tracing::info!("{:?}", crate::assess::assess);
        }
        #[cfg(test)]
        mod tests { use crate::ui::App; }
        #[test]
        fn t() { let _ = crate::sim::Sim::new(); }
    "#;
    let krate = Crate {
        root: PathBuf::from("src"),
        files: Vec::new(),
        modules: ["reconcile::runtime::engine::poll".to_string()]
            .into_iter()
            .collect(),
    };
    let mut refs = Vec::new();
    let file = PathBuf::from("src/reconcile/runtime/engine/mod.rs");
    let mut v = Collector {
        krate: &krate,
        file: &file,
        stack: vec![vec!["reconcile".into(), "runtime".into(), "engine".into()]],
        main: false,
        out: &mut refs,
    };
    for item in syn::parse_file(text).expect("parses").items {
        v.visit_item(&item);
    }
    let hits: Vec<String> = violations(&refs, |_| false, |f| f.display().to_string())
        .into_iter()
        .map(|h| h.split(" (").next().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        hits,
        [
            "src/reconcile/runtime/engine/mod.rs:2: ui::App",
            "src/reconcile/runtime/engine/mod.rs:3: sim::faults::Faults",
            "src/reconcile/runtime/engine/mod.rs:4: ::ratatui::widgets::Paragraph",
            "src/reconcile/runtime/engine/mod.rs:7: cluster::live::watch_state",
            "src/reconcile/runtime/engine/mod.rs:8: assess::assess",
        ]
    );
    assert!(
        refs.iter()
            .any(|r| r.to == "reconcile::runtime::engine::poll::Next")
    );
}

/// The resolver itself: a relative path, a `super::` chain, a child module and an outside crate
/// resolve as the compiler would (a test of the test, so a broken walk cannot pass silently).
#[test]
fn paths_resolve_as_the_compiler_resolves_them() {
    let (_, refs) = references();
    let find = |file: &str, to: &str| refs.iter().any(|r| r.file.ends_with(file) && r.to == to);
    assert!(
        find("src/main.rs", "cli::run"),
        "main.rs's cvo::cli::run not resolved"
    );
    // src/reconcile/runtime/engine/mod.rs: `use super::` ... resolves to reconcile::runtime.
    assert!(
        refs.iter()
            .any(|r| r.from == "reconcile::runtime::engine" && r.to.starts_with("reconcile::runtime::")),
        "no reconcile::runtime path seen from the engine"
    );

    assert!(
        refs.iter()
            .any(|r| r.from.starts_with("ui") && r.to.starts_with("reconcile::api")),
        "the dashboard's uses of the contract not seen"
    );
    assert!(
        refs.iter()
            .any(|r| r.from.starts_with("reconcile") && r.to.starts_with("::kube::")),
        "the engine's kube paths not seen as an outside crate"
    );
}

#[test]
fn no_parent_glob_imports_outside_tests() {
    let (c, refs) = references();
    let mut hits: Vec<String> = refs
        .iter()
        .filter(|r| r.glob && !r.to.starts_with("::"))
        .filter(|r| under(&r.from, &r.to) && r.from != r.to)
        .map(|r| format!("{}:{}: use {}::*", c.rel(&r.file), r.line, r.to))
        .collect();
    hits.sort();
    assert!(
        hits.is_empty(),
        "a module that needs everything of its parent belongs in it; import what you use:\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_contract_holds_no_generic_container() {
    let (c, _) = references();
    let mut hits = Vec::new();
    for (file, module, _) in &c.files {
        if !under(&module.join("::"), "reconcile::api") {
            continue;
        }
        for item in parse(file).items {
            let generic = match &item {
                Item::Struct(s) => (!s.generics.params.is_empty()).then(|| s.ident.to_string()),
                Item::Enum(e) => (!e.generics.params.is_empty()).then(|| e.ident.to_string()),
                _ => None,
            };
            if let Some(name) = generic {
                hits.push(format!("{}: {name}", c.rel(file)));
            }
        }
    }
    assert!(
        hits.is_empty(),
        "generic containers belong below the contract, not in it:\n{}",
        hits.join("\n")
    );
}

#[test]
fn main_only_parses_and_dispatches() {
    let text =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/main.rs")).expect("main.rs");
    let code = text
        .lines()
        .take_while(|l| l.trim() != "#[cfg(test)]")
        .filter(|l| !l.trim_start().starts_with("//") && !l.trim().is_empty())
        .count();
    assert!(
        code < 200,
        "src/main.rs has {code} code lines: move logic into src/cli"
    );
}

/// docs/testing.md's "The suites by need" lists every suite under `tests/` once, and its `real`
/// row is exactly the suites `.ci/run` runs on the real kube-apiserver; a suite that reaches for
/// `CVO_TEST_KUBECONFIG` or `TestCluster` is in that row (so none is forgotten by CI).
#[test]
fn every_suite_is_grouped_by_need_and_the_real_ones_run_in_ci() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = fs::read_to_string(root.join("docs/testing.md")).expect("docs/testing.md");
    let row = |need: &str| -> BTreeSet<String> {
        let line = doc
            .lines()
            .find(|l| l.starts_with(&format!("| {need} |")))
            .unwrap_or_else(|| panic!("docs/testing.md has no `| {need} |` row"));
        line.split('`').skip(1).step_by(2).map(str::to_string).collect()
    };
    let (offline, sim, real) = (row("offline"), row("simulator"), row("real"));
    let mut listed: Vec<&String> = offline.iter().chain(&sim).chain(&real).collect();
    let suites: BTreeSet<String> = fs::read_dir(root.join("tests"))
        .expect("tests/")
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "rs").then(|| p.file_stem()?.to_str().map(str::to_string))?
        })
        .collect();
    listed.sort();
    let unique: BTreeSet<String> = listed.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        listed.len(),
        unique.len(),
        "a suite listed twice in docs/testing.md"
    );
    assert_eq!(unique, suites, "docs/testing.md's table and tests/*.rs differ");
    let ci = fs::read_to_string(root.join(".ci/run")).expect(".ci/run");
    let in_ci: BTreeSet<String> = ci
        .split("--test ")
        .skip(1)
        .filter_map(|rest| rest.split_whitespace().next().map(str::to_string))
        .collect();
    assert_eq!(
        in_ci, real,
        ".ci/run's real-server suites and docs/testing.md's `real` row differ"
    );
    for suite in suites.iter().filter(|s| *s != "architecture") {
        let text = fs::read_to_string(root.join("tests").join(format!("{suite}.rs"))).expect("suite");
        if text.contains("CVO_TEST_KUBECONFIG") || text.contains("TestCluster") {
            assert!(
                real.contains(suite),
                "{suite} can run on a real server: list it as `real`"
            );
        }
    }
}

/// The suites run the `cvo` binary through one runner, `tests/common::cvo()`, which removes
/// `KUBECONFIG` and the language variables (`CVO_LANG`, `LC_ALL`, `LC_MESSAGES`, `LANG`): the
/// English texts the tests expect then hold when `cargo test` runs under a Russian locale. The
/// exceptions set the language themselves (`l10n_cli`) or start the binary in a tmux shell and
/// read only its logs (`demo_cleanup`).
#[test]
fn suites_start_cvo_through_the_one_runner() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut direct = Vec::new();
    for dir in ["tests", "tests/common"] {
        for e in fs::read_dir(root.join(dir)).expect("tests/") {
            let p = e.expect("entry").path();
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p
                .strip_prefix(root)
                .expect("under the root")
                .display()
                .to_string();
            if [
                "tests/common/mod.rs",
                "tests/l10n_cli.rs",
                "tests/demo_cleanup.rs",
                "tests/architecture.rs",
            ]
            .contains(&rel.as_str())
            {
                continue;
            }
            let text = fs::read_to_string(&p).expect("suite");
            if text.contains("CARGO_BIN_EXE_cvo") {
                direct.push(rel);
            }
        }
    }
    assert!(
        direct.is_empty(),
        "these start cvo without tests/common::cvo() (a Russian locale would change its texts): {direct:?}"
    );
    let common = fs::read_to_string(root.join("tests/common/mod.rs")).expect("common");
    for var in [
        "\"CVO_LANG\"",
        "\"LC_ALL\"",
        "\"LC_MESSAGES\"",
        "\"LANG\"",
        "env_remove(\"KUBECONFIG\")",
    ] {
        assert!(
            common.contains(var),
            "tests/common/mod.rs's runner no longer handles {var}"
        );
    }
}

/// Field accesses `.available_updates` / `.conditional_updates` in non-test code.
struct TargetReads {
    lines: Vec<usize>,
}

impl<'ast> Visit<'ast> for TargetReads {
    fn visit_item(&mut self, i: &'ast Item) {
        let attrs = match i {
            Item::Fn(f) => &f.attrs,
            Item::Mod(m) => &m.attrs,
            Item::Impl(m) => &m.attrs,
            _ => return visit::visit_item(self, i),
        };
        if !is_cfg_test(attrs) {
            visit::visit_item(self, i);
        }
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_cfg_test(&f.attrs) {
            visit::visit_impl_item_fn(self, f);
        }
    }
    fn visit_expr_field(&mut self, e: &'ast syn::ExprField) {
        if let syn::Member::Named(name) = &e.member
            && (name == "available_updates" || name == "conditional_updates")
        {
            self.lines.push(name.span().start().line);
        }
        visit::visit_expr_field(self, e);
    }
}

/// A ClusterVersion's update targets are read once, in `assess::updates` (`UpdateOffer`):
/// the faces (`ui`, `cli`) word that offer and never read `status.availableUpdates` or
/// `status.conditionalUpdates` a second time. The exceptions hand the raw API list to code that
/// works on API types: `cli::upgrade::explain` gives the conditional updates to the engine's
/// `reconcile::updates::beyond`, and `cli::rehearse::report` lists the simulator's per-risk
/// `Applies` conditions.
#[test]
fn update_targets_are_read_once_in_assess() {
    const EXCEPT: &[&str] = &["cli::upgrade::explain", "cli::rehearse::report"];
    let (c, _) = references();
    let mut hits = Vec::new();
    for (file, module, _) in &c.files {
        let m = module.join("::");
        if !(under(&m, "ui") || under(&m, "cli")) || EXCEPT.contains(&m.as_str()) {
            continue;
        }
        let mut v = TargetReads { lines: Vec::new() };
        v.visit_file(&parse(file));
        hits.extend(v.lines.iter().map(|l| format!("{}:{l}", c.rel(file))));
    }
    assert!(
        hits.is_empty(),
        "read the update targets through assess::updates::UpdateOffer:\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_target_read_check_sees_a_read_and_skips_test_code() {
    let src = r#"
        fn view(cv: &ClusterVersion) -> usize {
            cv.status.available_updates.iter().count()
                + cv.status.conditional_updates.len()
        }
        impl X {
            #[cfg(test)]
            fn t(&self) -> bool { self.cv.status.conditional_updates.is_empty() }
            fn u(&self) -> usize { self.channels.len() }
        }
        #[cfg(test)]
        mod tests {
            fn f(cv: &ClusterVersion) { let _ = &cv.status.available_updates; }
        }
    "#;
    let mut v = TargetReads { lines: Vec::new() };
    v.visit_file(&syn::parse_file(src).expect("parses"));
    assert_eq!(v.lines, [3, 4]);
}

/// What `doc` names that the crate does not have: every `src/...` path (file or directory) and
/// every crate path in backticks (`reconcile::runtime::engine::trust`,
/// `reconcile::payload::{files, yaml}`, `cli::operator::not_fetched`): the longest prefix must
/// be a module of the crate and each segment after it (an item, a method) must occur in that
/// module's files.
fn stale_names(doc: &str, c: &Crate) -> Vec<String> {
    const TOP: &[&str] = &[
        "assess",
        "cli",
        "clock",
        "cluster",
        "cow_vec",
        "informers",
        "l10n",
        "logfile",
        "openshift",
        "reconcile",
        "signals",
        "sim",
        "spec_request",
        "ui",
    ];
    let word = |ch: char| ch.is_ascii_alphanumeric() || "_./-".contains(ch);
    let mut hits = Vec::new();
    let root = c.root.parent().expect("crate root");
    for (i, _) in doc.match_indices("src/") {
        if i > 0 && word(doc[..i].chars().next_back().expect("a char")) {
            continue;
        }
        let rest = &doc[i..];
        let end = rest.find(|ch: char| !word(ch)).unwrap_or(rest.len());
        let path = rest[..end].trim_end_matches(['.', ',']);
        if !root.join(path).exists() {
            hits.push(format!("{path}: no such file or directory"));
        }
    }
    for span in doc.split('`').skip(1).step_by(2) {
        let Some((head, tail)) = span.split_once("::") else {
            continue;
        };
        if !TOP.contains(&head)
            || !span
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "_:{}, ".contains(ch))
        {
            continue;
        }
        let paths: Vec<String> = match tail.split_once('{') {
            Some((stem, list)) => list
                .trim_end_matches('}')
                .split(',')
                .map(|leaf| format!("{head}::{stem}{}", leaf.trim()))
                .collect(),
            None => vec![span.to_string()],
        };
        for path in paths {
            let segs: Vec<&str> = path.split("::").collect();
            let Some(n) = (1..=segs.len())
                .rev()
                .find(|&n| c.modules.contains(&segs[..n].join("::")))
            else {
                hits.push(format!("{path}: no such module"));
                continue;
            };
            let module = segs[..n].join("::");
            let text: String = c
                .files
                .iter()
                .filter(|(_, m, main)| !main && m.join("::") == module)
                .map(|(f, _, _)| fs::read_to_string(f).unwrap_or_default())
                .collect();
            for item in &segs[n..] {
                let found = text.match_indices(item).any(|(at, _)| {
                    let before = text[..at].chars().next_back();
                    let after = text[at + item.len()..].chars().next();
                    !before.is_some_and(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                        && !after.is_some_and(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                });
                if !found {
                    hits.push(format!("{path}: {item} is not in {module}"));
                }
            }
        }
    }
    hits
}

/// docs/architecture.md names only files, modules and items that exist, so its "Where is ..."
/// index and the upstream table stay one hop from the code.
#[test]
fn the_architecture_page_names_only_what_exists() {
    let c = Crate::load();
    let doc = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
        .expect("docs/architecture.md");
    let hits = stale_names(&doc, &c);
    assert!(
        hits.is_empty(),
        "docs/architecture.md names what is gone:\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_stale_name_check_sees_each_kind_of_stale_name() {
    let c = Crate::load();
    let doc = "`src/cli/run.rs`, src/nowhere.rs, `src/ui/view/`; `reconcile::payload::{files, no_such_leaf}`, \
               `cli::operator::no_such_fn`, `nomodule::x`, `assess::nowhere::x`, \
               `reconcile::runtime::engine::trust`, `ui::model::updates`";
    assert_eq!(
        stale_names(doc, &c),
        [
            "src/nowhere.rs: no such file or directory",
            "reconcile::payload::no_such_leaf: no_such_leaf is not in reconcile::payload",
            "cli::operator::no_such_fn: no_such_fn is not in cli::operator",
            "assess::nowhere::x: nowhere is not in assess",
            "assess::nowhere::x: x is not in assess",
        ]
    );
}
