//! `#[cmc::model(...)]`: declares a model as a test.
//!
//! On a function that returns a `cmc::Model<C>`, the attribute records the
//! function, its keys and its expectation in `cmc::harness::MODELS` (a
//! `linkme` distributed slice), where the runner of a `harness = false`
//! test target finds it. Every key is checked here, so that a typo, a wrong
//! type or an impossible combination is a compile error at its tokens.
//!
//! ```ignore
//! #[cmc::model(nodes = 3, crashes = 1, expect = violation("atomicity"))]
//! fn commit_on_timeout() -> cmc::Model<TwoPhase> {
//!     two_phase::model(TwoPhaseSettings { bug_commit_on_timeout: 1, ..Default::default() })
//! }
//! ```
//!
//! With `program = "PATH"` the model is a program as nodes (Linux): the
//! function returns a `cmc::process::ProgramModel` (its request, arguments
//! and properties), the path is relative to the declaring crate's
//! `CARGO_MANIFEST_DIR`, `nodes` is required, and the keys that mean
//! nothing for a program (`core`, `network`, `dups`, `deadlock`) are errors;
//! `timeout_byte`, `timeout_order` and `timeout_drift_s` or `timeout_drift_ms` (how TIMEOUT ends a
//! program's waits), `write_bytes_max` (bytes of one write on a connection) and `node_state`
//! (`report` or `inputs`) are a program's only.
//!
//! ```ignore
//! #[cmc::model(program = "../examples/c/build/register-BUG_EARLY_ACK", nodes = 3, clients = 1,
//!              expect = violation("acked_writes_survive"))]
//! fn bug_early_ack() -> cmc::process::ProgramModel {
//!     cmc::process::ProgramModel::default().request("W").always("acked_writes_survive", |w| ...)
//! }
//! ```

#![warn(missing_docs)]

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprCall, ExprLit, ExprPath, ItemFn, Lit, Meta, Token};

/// Every key, with what it takes; the compile error for an unknown key
/// lists them.
const KEYS: &[(&str, &str)] = &[
    ("core", "the core type, checked against the function's return type"),
    ("nodes", "number of nodes, 1 to 8"),
    ("network", "fifo or bag"),
    ("drops", "drop budget, 0 to 255"),
    ("dups", "dup budget (bag), 0 to 255"),
    ("crashes", "crash budget, 0 to 255"),
    ("clients", "client requests per node, 0 to 255"),
    ("timeouts", "timer firings over all nodes, 0 to 255"),
    ("thread_switches", "a program: choices of a node's next thread past the fixed order, over all nodes, 0 to 255"),
    ("search", "bfs, dfs or simulate"),
    ("depth_max", "depth bound (bfs or dfs; required for dfs)"),
    ("walks", "simulate: number of walks"),
    ("walk_length", "simulate: actions per walk at most"),
    ("seed", "simulate: seed"),
    ("states_max", "cap on distinct states (incomplete past it)"),
    ("time_max_s", "cap on seconds (incomplete past it)"),
    ("det", "true: run every step twice and compare"),
    ("deadlock", "true: a world with no enabled action is a violation"),
    ("threads", "threads for bfs, 0 for one per core (the default)"),
    ("symmetry", "true: one world per class of renamed interchangeable nodes"),
    ("expect", "pass, or violation(\"property\")"),
    ("ignore", "\"reason\": run only with --ignored"),
    ("program", "a program as nodes: its path, relative to CARGO_MANIFEST_DIR"),
    ("timeout_byte", "a program: true, the manual's `T` (any read or accept may time out)"),
    ("timeout_order", "a program: any (the default) or deadline"),
    ("timeout_drift_s", "a program under timeout_order = deadline: seconds of clock drift, 0 by default"),
    ("timeout_drift_ms", "a program under timeout_order = deadline: milliseconds of clock drift (or timeout_drift_s)"),
    ("write_bytes_max", "a program: bytes of one write on a connection, 1 to 65536 (64 by default)"),
    ("node_state", "a program: report (the default) or inputs (also every answer of a node's life)"),
];

/// Declares a model as a test. See the crate documentation for the keys.
#[proc_macro_attribute]
pub fn model(args: TokenStream, item: TokenStream) -> TokenStream {
    match expand(args.into(), item.into()) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Keys that mean nothing for a program, and why.
const NOT_FOR_PROGRAMS: &[(&str, &str)] = &[
    ("core", "a program model runs the program, not a core"),
    ("network", "a program's connections are TCP: FIFO, and never duplicated"),
    ("dups", "a program's connections are TCP: FIFO, and never duplicated"),
    ("threads", "the process front end searches on one thread: its nodes are processes"),
    ("symmetry", "symmetry renames a core's interchangeable nodes; a program's nodes are processes"),
    (
        "deadlock",
        "a world with no enabled action is servers waiting in accept() or read() with the budgets spent, how runs end; say what must hold there with `.eventually(...)`",
    ),
];

/// Keys that mean something for a program only, and why.
const PROGRAMS_ONLY: &[(&str, &str)] = &[
    ("timeout_byte", "a core's timers fire as FIRE actions; the `T` convention is for programs' reads and accepts"),
    ("timeout_order", "a core's timers fire in any order; the order of deadlines is for programs' waits"),
    ("timeout_drift_s", "a core's timers fire in any order; the order of deadlines is for programs' waits"),
    ("timeout_drift_ms", "a core's timers fire in any order; the order of deadlines is for programs' waits"),
    ("write_bytes_max", "a core's messages are its own types; the limit of one write is for programs' connections"),
    ("node_state", "a core's state is its whole state; a program's may be its report or its inputs too"),
    ("thread_switches", "a core has no threads; a program's node may"),
];

/// The keys as parsed, each with its span for later errors.
#[derive(Default)]
struct Keys {
    /// Every key given, with the span of its name.
    given: Vec<(String, Span)>,
    program: Option<(Expr, Span)>,
    core: Option<syn::Path>,
    nodes: Option<(u64, Span)>,
    network: Option<(String, Span)>,
    drops: Option<(u64, Span)>,
    dups: Option<(u64, Span)>,
    crashes: Option<(u64, Span)>,
    clients: Option<(u64, Span)>,
    timeouts: Option<(u64, Span)>,
    thread_switches: Option<(u64, Span)>,
    timeout_byte: Option<bool>,
    timeout_order: Option<(String, Span)>,
    timeout_drift_s: Option<(u64, Span)>,
    timeout_drift_ms: Option<(u64, Span)>,
    write_bytes_max: Option<(u64, Span)>,
    node_state: Option<(String, Span)>,
    search: Option<(String, Span)>,
    depth_max: Option<(u64, Span)>,
    walks: Option<(u64, Span)>,
    walk_length: Option<(u64, Span)>,
    seed: Option<(u64, Span)>,
    states_max: Option<(u64, Span)>,
    time_max_s: Option<(u64, Span)>,
    det: Option<bool>,
    deadlock: Option<bool>,
    symmetry: Option<bool>,
    threads: Option<(u64, Span)>,
    expect: Option<(Option<String>, Span)>,
    ignore: Option<String>,
}

fn error(span: Span, message: impl std::fmt::Display) -> syn::Error {
    syn::Error::new(span, message)
}

fn int(expr: &Expr, key: &str, min: u64, max: u64) -> syn::Result<(u64, Span)> {
    if let Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) = expr {
        let v: u64 = i.base10_parse().map_err(|_| error(i.span(), format!("`{key}` takes an integer")))?;
        if v < min || v > max {
            return Err(error(i.span(), format!("`{key}` = {v} is out of range ({min} to {max})")));
        }
        return Ok((v, i.span()));
    }
    Err(error(expr.span(), format!("`{key}` takes an integer, {min} to {max}")))
}

fn word(expr: &Expr, key: &str, choices: &[&str]) -> syn::Result<(String, Span)> {
    if let Expr::Path(ExprPath { path, .. }) = expr
        && let Some(id) = path.get_ident()
    {
        let s = id.to_string();
        if choices.contains(&s.as_str()) {
            return Ok((s, id.span()));
        }
        return Err(error(id.span(), format!("`{key}` is one of {}, not `{s}`", choices.join(", "))));
    }
    Err(error(expr.span(), format!("`{key}` is one of {}", choices.join(", "))))
}

fn boolean(expr: &Expr, key: &str) -> syn::Result<bool> {
    if let Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) = expr {
        return Ok(b.value);
    }
    Err(error(expr.span(), format!("`{key}` takes true or false")))
}

fn string(expr: &Expr, key: &str) -> syn::Result<String> {
    if let Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) = expr {
        return Ok(s.value());
    }
    Err(error(expr.span(), format!("`{key}` takes a string literal")))
}

/// `program`: a non-empty string literal, or an expression that is a
/// constant `&'static str` (`env!(...)`, `concat!(...)`, a `const`), which
/// the compiler checks where the declaration uses it.
fn program(expr: &Expr) -> syn::Result<(Expr, Span)> {
    match expr {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) if s.value().is_empty() => {
            Err(error(s.span(), "`program` is the program's path, not an empty string"))
        }
        Expr::Lit(ExprLit { lit: Lit::Str(_), .. }) | Expr::Macro(_) | Expr::Path(_) => Ok((expr.clone(), expr.span())),
        other => Err(error(
            other.span(),
            "`program` takes the program's path: a string literal or a constant `&str` (e.g. `env!(\"...\")`)",
        )),
    }
}

fn expectation(expr: &Expr) -> syn::Result<(Option<String>, Span)> {
    match expr {
        Expr::Path(ExprPath { path, .. }) if path.is_ident("pass") => Ok((None, path.span())),
        Expr::Path(ExprPath { path, .. }) if path.is_ident("violation") => {
            Err(error(path.span(), "`violation` names no property: write `violation(\"property name\")`"))
        }
        Expr::Call(ExprCall { func, args, .. }) => {
            let Expr::Path(ExprPath { path, .. }) = &**func else {
                return Err(error(func.span(), "`expect` is `pass` or `violation(\"property name\")`"));
            };
            if !path.is_ident("violation") {
                return Err(error(path.span(), "`expect` is `pass` or `violation(\"property name\")`"));
            }
            if args.len() != 1 {
                return Err(error(args.span(), "`violation` names exactly one property: `violation(\"name\")`"));
            }
            match &args[0] {
                Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) if !s.value().is_empty() => Ok((Some(s.value()), s.span())),
                other => {
                    Err(error(other.span(), "`violation` takes the property's name as a non-empty string literal"))
                }
            }
        }
        other => Err(error(other.span(), "`expect` is `pass` or `violation(\"property name\")`")),
    }
}

fn parse_keys(args: Tokens) -> syn::Result<Keys> {
    let metas = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(args)?;
    let mut k = Keys::default();
    let mut seen: Vec<String> = Vec::new();
    let mut errors: Option<syn::Error> = None;
    let mut push = |e: syn::Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    for meta in metas {
        let (path, value) = match &meta {
            Meta::NameValue(nv) => (&nv.path, Some(&nv.value)),
            // A bare flag: `det` means `det = true`.
            Meta::Path(p) => (p, None),
            Meta::List(l) => {
                push(error(l.span(), "expected `key = value`"));
                continue;
            }
        };
        let Some(ident) = path.get_ident() else {
            push(error(path.span(), "expected a key"));
            continue;
        };
        let key = ident.to_string();
        if !KEYS.iter().any(|(name, _)| *name == key) {
            let known: Vec<&str> = KEYS.iter().map(|(n, _)| *n).collect();
            push(error(ident.span(), format!("unknown key `{key}`; known keys: {}", known.join(", "))));
            continue;
        }
        if seen.contains(&key) {
            push(error(ident.span(), format!("`{key}` is given twice")));
            continue;
        }
        seen.push(key.clone());
        k.given.push((key.clone(), ident.span()));
        let Some(value) = value else {
            match key.as_str() {
                "det" => k.det = Some(true),
                "deadlock" => k.deadlock = Some(true),
                "symmetry" => k.symmetry = Some(true),
                "timeout_byte" => k.timeout_byte = Some(true),
                _ => push(error(ident.span(), format!("`{key}` needs a value: `{key} = ...`"))),
            }
            continue;
        };
        let result: syn::Result<()> = (|| {
            match key.as_str() {
                "program" => k.program = Some(program(value)?),
                "core" => match value {
                    Expr::Path(ExprPath { path, .. }) => k.core = Some(path.clone()),
                    other => return Err(error(other.span(), "`core` takes a type path")),
                },
                "nodes" => k.nodes = Some(int(value, &key, 1, 8)?),
                "network" => k.network = Some(word(value, &key, &["fifo", "bag"])?),
                "drops" => k.drops = Some(int(value, &key, 0, 255)?),
                "dups" => k.dups = Some(int(value, &key, 0, 255)?),
                "crashes" => k.crashes = Some(int(value, &key, 0, 255)?),
                "clients" => k.clients = Some(int(value, &key, 0, 255)?),
                "timeouts" => k.timeouts = Some(int(value, &key, 0, 255)?),
                "thread_switches" => k.thread_switches = Some(int(value, &key, 0, 255)?),
                "timeout_byte" => k.timeout_byte = Some(boolean(value, &key)?),
                "timeout_order" => k.timeout_order = Some(word(value, &key, &["any", "deadline"])?),
                "timeout_drift_s" => k.timeout_drift_s = Some(int(value, &key, 0, u32::MAX as u64)?),
                "timeout_drift_ms" => k.timeout_drift_ms = Some(int(value, &key, 0, u64::MAX)?),
                "write_bytes_max" => k.write_bytes_max = Some(int(value, &key, 1, 65_536)?),
                "node_state" => k.node_state = Some(word(value, &key, &["report", "inputs"])?),
                "search" => k.search = Some(word(value, &key, &["bfs", "dfs", "simulate"])?),
                "depth_max" => k.depth_max = Some(int(value, &key, 1, u32::MAX as u64)?),
                "walks" => k.walks = Some(int(value, &key, 1, u64::MAX)?),
                "walk_length" => k.walk_length = Some(int(value, &key, 1, u32::MAX as u64)?),
                "seed" => k.seed = Some(int(value, &key, 0, u64::MAX)?),
                "states_max" => k.states_max = Some(int(value, &key, 1, u64::MAX)?),
                "time_max_s" => k.time_max_s = Some(int(value, &key, 1, u64::MAX)?),
                "det" => k.det = Some(boolean(value, &key)?),
                "deadlock" => k.deadlock = Some(boolean(value, &key)?),
                "symmetry" => k.symmetry = Some(boolean(value, &key)?),
                "threads" => k.threads = Some(int(value, &key, 0, 1024)?),
                "expect" => k.expect = Some(expectation(value)?),
                "ignore" => k.ignore = Some(string(value, &key)?),
                _ => unreachable!("every key in KEYS is handled"),
            }
            Ok(())
        })();
        if let Err(e) = result {
            push(e);
        }
    }
    // Combinations that cannot mean anything.
    let search = k.search.as_ref().map(|(s, _)| s.as_str()).unwrap_or("bfs");
    if search == "simulate" {
        if let Some((_, span)) = k.depth_max {
            push(error(span, "`depth_max` bounds bfs or dfs; a simulation is bounded by `walk_length`"));
        }
        match &k.expect {
            Some((Some(_), _)) => {}
            Some((None, span)) => {
                push(error(*span, "a simulation is never a pass: expect `violation(\"property\")`, or use bfs"))
            }
            None => {
                let span = k.search.as_ref().map_or(Span::call_site(), |(_, s)| *s);
                push(error(span, "a simulation is never a pass: add `expect = violation(\"property\")`, or use bfs"))
            }
        }
    } else {
        for (key, v) in [("walks", k.walks), ("walk_length", k.walk_length), ("seed", k.seed)] {
            if let Some((_, span)) = v {
                push(error(span, format!("`{key}` applies to `search = simulate` only")));
            }
        }
    }
    if search == "dfs" && k.depth_max.is_none() {
        let span = k.search.as_ref().map_or(Span::call_site(), |(_, s)| *s);
        push(error(span, "`search = dfs` needs `depth_max = N`"));
    }
    if let (Some((1.., span)), Some(("fifo", _))) = (k.dups, k.network.as_ref().map(|(n, s)| (n.as_str(), s))) {
        push(error(span, "`dups` needs `network = bag` (FIFO never duplicates)"));
    }
    let deadline = matches!(&k.timeout_order, Some((order, _)) if order == "deadline");
    for (name, drift) in [("timeout_drift_s", k.timeout_drift_s), ("timeout_drift_ms", k.timeout_drift_ms)] {
        if let (Some((_, span)), false) = (drift, deadline) {
            push(error(span, format!("`{name}` needs `timeout_order = deadline`")));
        }
    }
    if let (Some(_), Some((_, span))) = (k.timeout_drift_s, k.timeout_drift_ms) {
        push(error(span, "give `timeout_drift_s` or `timeout_drift_ms`, not both"));
    }
    if k.program.is_none() {
        for (key, span) in &k.given {
            if let Some((_, why)) = PROGRAMS_ONLY.iter().find(|(name, _)| name == key) {
                push(error(*span, format!("`{key}` means something for a program only: {why}")));
            }
        }
    }
    if let Some((_, program_span)) = &k.program {
        for (key, span) in &k.given {
            if let Some((_, why)) = NOT_FOR_PROGRAMS.iter().find(|(name, _)| name == key) {
                push(error(*span, format!("`{key}` means nothing for a program: {why}")));
            }
        }
        if k.nodes.is_none() {
            push(error(*program_span, "a program model says how many nodes run the program: add `nodes = N`"));
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(k),
    }
}

fn opt_u8(v: Option<(u64, Span)>) -> Tokens {
    match v {
        Some((v, _)) => {
            let v = v as u8;
            quote!(::core::option::Option::Some(#v))
        }
        None => quote!(::core::option::Option::None),
    }
}

fn opt_u64(v: Option<(u64, Span)>) -> Tokens {
    match v {
        Some((v, _)) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

fn expand(args: Tokens, item: Tokens) -> syn::Result<Tokens> {
    let keys = parse_keys(args)?;
    let func: ItemFn = syn::parse2(item)?;
    let name = &func.sig.ident;
    if !func.sig.inputs.is_empty() {
        return Err(error(func.sig.inputs.span(), "a model function takes no arguments"));
    }
    if let syn::ReturnType::Default = func.sig.output {
        let model = if keys.program.is_some() { "cmc::process::ProgramModel" } else { "cmc::Model<YourCore>" };
        return Err(error(func.sig.span(), format!("a model function returns the model: `-> {model}`")));
    }
    if func.sig.asyncness.is_some() || !func.sig.generics.params.is_empty() {
        return Err(error(func.sig.span(), "a model function is a plain function with no generics"));
    }

    let nodes = opt_u8(keys.nodes);
    let network = match keys.network.as_ref().map(|(n, _)| n.as_str()) {
        Some("fifo") => quote!(::core::option::Option::Some(::cmc::Network::Fifo)),
        Some(_) => quote!(::core::option::Option::Some(::cmc::Network::Bag)),
        None => quote!(::core::option::Option::None),
    };
    let (drops, dups, crashes, clients, timeouts) =
        (opt_u8(keys.drops), opt_u8(keys.dups), opt_u8(keys.crashes), opt_u8(keys.clients), opt_u8(keys.timeouts));
    let search = match keys.search.as_ref().map(|(s, _)| s.as_str()).unwrap_or("bfs") {
        "dfs" => {
            let d = keys.depth_max.map_or(1, |(d, _)| d as u32);
            quote!(::cmc::Search::Dfs { depth_max: #d })
        }
        "simulate" => {
            // A program's walk replays processes at every action: the
            // defaults of model files, not of cores.
            let (walks_default, walk_length_default) = if keys.program.is_some() { (100, 20) } else { (1000, 100) };
            let walks = keys.walks.map_or(walks_default, |(w, _)| w);
            let walk_length = keys.walk_length.map_or(walk_length_default, |(w, _)| w as u32);
            let seed = keys.seed.map_or(0, |(s, _)| s);
            quote!(::cmc::Search::Simulate { walks: #walks, walk_length: #walk_length, seed: #seed })
        }
        _ => match keys.depth_max {
            Some((d, _)) => {
                let d = d as u32;
                quote!(::cmc::Search::Bfs { depth_max: ::core::option::Option::Some(#d) })
            }
            None => quote!(::cmc::Search::Bfs { depth_max: ::core::option::Option::None }),
        },
    };
    let timeout_byte = keys.timeout_byte.unwrap_or(false);
    let drift_ms = match (keys.timeout_drift_s, keys.timeout_drift_ms) {
        (_, Some((ms, _))) => ms,
        (Some((s, _)), None) => s * 1000,
        (None, None) => 0,
    };
    let timeout_order = match keys.timeout_order.as_ref().map(|(o, _)| o.as_str()) {
        Some("deadline") => {
            quote!(::core::option::Option::Some(::cmc::harness::TimeoutOrderKey::Deadline { drift_ms: #drift_ms }))
        }
        Some(_) => quote!(::core::option::Option::Some(::cmc::harness::TimeoutOrderKey::Any)),
        None => quote!(::core::option::Option::None),
    };
    let write_bytes_max = match keys.write_bytes_max {
        Some((m, _)) => {
            let m = m as u32;
            quote!(::core::option::Option::Some(#m))
        }
        None => quote!(::core::option::Option::None),
    };
    let node_state_inputs = matches!(&keys.node_state, Some((s, _)) if s == "inputs");
    let thread_switches = opt_u8(keys.thread_switches);
    let states_max = opt_u64(keys.states_max);
    let time_max_s = opt_u64(keys.time_max_s);
    let det = keys.det.unwrap_or(false);
    let deadlock = keys.deadlock.unwrap_or(false);
    let symmetry = keys.symmetry.unwrap_or(false);
    let threads = keys.threads.map_or(0, |(n, _)| n as usize);
    let expect = match &keys.expect {
        Some((Some(p), _)) => quote!(::cmc::harness::Expect::Violation(#p)),
        _ => quote!(::cmc::harness::Expect::Pass),
    };
    let ignore = match &keys.ignore {
        Some(r) => quote!(::core::option::Option::Some(#r)),
        None => quote!(::core::option::Option::None),
    };
    let core_check = keys.core.as_ref().map(|core| {
        quote! {
            // `core = ...` must name the core the function's model uses.
            const _: fn() -> ::cmc::Model<#core> = #name;
        }
    });
    let program = match &keys.program {
        Some((p, _)) => quote!(::core::option::Option::Some(#p)),
        None => quote!(::core::option::Option::None),
    };
    let prepare = match &keys.program {
        Some(_) => {
            // With `program = ...` the function returns the program's
            // model: a body of another type is one error, at the return
            // type.
            let output = match &func.sig.output {
                syn::ReturnType::Type(_, ty) => ty.span(),
                syn::ReturnType::Default => func.sig.span(),
            };
            let body = syn::Ident::new(&name.to_string(), output);
            let typed = quote::quote_spanned! {output=>
                let body: fn() -> ::cmc::process::ProgramModel = #body;
            };
            quote! {
                #typed
                ::cmc::harness::prepare_program(body(), attributes, ::core::env!("CARGO_MANIFEST_DIR"))
            }
        }
        None => quote!(::cmc::harness::Declarable::prepare(#name(), attributes)),
    };
    let function = name.to_string();
    let build = format_ident!("__cmc_build_{}", name);
    let entry = format_ident!("__CMC_MODEL_{}", name.to_string().to_uppercase());

    Ok(quote! {
        #[allow(dead_code)]
        #func

        #core_check

        #[doc(hidden)]
        #[allow(non_snake_case)]
        fn #build(
            attributes: &::cmc::harness::Attributes,
        ) -> ::core::result::Result<::std::boxed::Box<dyn ::cmc::catalog::DynModel>, ::cmc::catalog::DynError> {
            #prepare
        }

        // Only libtest's harness compiles `#[test]`: in a test target that
        // lacks `harness = false` the models would never run, and this
        // fails instead of a silent "0 passed".
        #[cfg(test)]
        #[doc(hidden)]
        mod #name {
            #[test]
            fn needs_a_test_target_with_harness_false() -> ::core::result::Result<(), ::std::string::String> {
                if !::cmc::harness::READS_MODELS.is_empty() {
                    return ::core::result::Result::Ok(());
                }
                ::core::result::Result::Err(::std::format!(
                    "cmc: model `{}` ({}) is in a test target run by libtest's harness, which does not run models: \
                     add `harness = false` to its [[test]] section in Cargo.toml, and end the target with \
                     `cmc_runner::main!();`",
                    #function,
                    ::core::file!()
                ))
            }
        }

        #[::cmc::linkme::distributed_slice(::cmc::harness::MODELS)]
        #[linkme(crate = ::cmc::linkme)]
        #[doc(hidden)]
        static #entry: ::cmc::harness::Declared = ::cmc::harness::Declared {
            module: ::core::module_path!(),
            function: #function,
            file: ::core::file!(),
            line: ::core::line!(),
            attributes: ::cmc::harness::Attributes {
                program: #program,
                preload: ::core::option::Option::None,
                nodes: #nodes,
                network: #network,
                drops: #drops,
                dups: #dups,
                crashes: #crashes,
                clients: #clients,
                timeouts: #timeouts,
                thread_switches: #thread_switches,
                timeout_byte: #timeout_byte,
                timeout_order: #timeout_order,
                write_bytes_max: #write_bytes_max,
                node_state_inputs: #node_state_inputs,
                search: #search,
                states_max: #states_max,
                time_max_s: #time_max_s,
                det: #det,
                deadlock: #deadlock,
                threads: #threads,
                symmetry: #symmetry,
                expect: #expect,
                ignore: #ignore,
            },
            build: #build,
        };
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compile error `#[cmc::model(args)]` on a well-formed function
    /// gives, or `None` when it compiles.
    fn error_of(args: Tokens) -> Option<String> {
        let item = quote!(
            fn m() -> cmc::Model<X> {
                todo!()
            }
        );
        expand(args, item).err().map(|e| e.to_string())
    }

    #[test]
    fn accepts_every_key() {
        assert_eq!(error_of(quote!()), None);
        assert_eq!(
            error_of(quote!(
                core = X,
                nodes = 3,
                network = bag,
                drops = 1,
                dups = 2,
                crashes = 1,
                clients = 2,
                timeouts = 4,
                search = dfs,
                depth_max = 20,
                states_max = 1000,
                time_max_s = 60,
                det = true,
                deadlock,
                symmetry,
                expect = violation("atomicity"),
                ignore = "slow"
            )),
            None
        );
        assert_eq!(
            error_of(quote!(search = simulate, walks = 10, walk_length = 5, seed = 7, expect = violation("p"))),
            None
        );
    }

    #[test]
    fn an_unknown_key_is_named() {
        let e = error_of(quote!(nodse = 3)).unwrap();
        assert!(e.starts_with("unknown key `nodse`; known keys: core, nodes,"), "{e}");
    }

    #[test]
    fn wrong_types_and_ranges_are_named() {
        for (args, message) in [
            (quote!(nodes = "3"), "`nodes` takes an integer, 1 to 8"),
            (quote!(nodes = 9), "`nodes` = 9 is out of range (1 to 8)"),
            (quote!(drops = 256), "`drops` = 256 is out of range (0 to 255)"),
            (quote!(network = tcp), "`network` is one of fifo, bag, not `tcp`"),
            (quote!(search = random), "`search` is one of bfs, dfs, simulate, not `random`"),
            (quote!(det = 1), "`det` takes true or false"),
            (quote!(ignore = slow), "`ignore` takes a string literal"),
            (quote!(nodes = 2, nodes = 3), "`nodes` is given twice"),
        ] {
            let e = error_of(args).unwrap();
            assert_eq!(e, message);
        }
    }

    #[test]
    fn an_expectation_must_name_a_property() {
        for (args, message) in [
            (quote!(expect = violation), "`violation` names no property"),
            (quote!(expect = violation()), "`violation` names exactly one property"),
            (quote!(expect = violation("")), "non-empty string literal"),
            (quote!(expect = violation(atomicity)), "non-empty string literal"),
            (quote!(expect = failure("x")), "`expect` is `pass` or `violation(\"property name\")`"),
        ] {
            let e = error_of(args).unwrap();
            assert!(e.contains(message), "{e}");
        }
    }

    #[test]
    fn impossible_combinations_are_errors() {
        for (args, message) in [
            (quote!(search = dfs), "`search = dfs` needs `depth_max = N`"),
            (quote!(search = simulate), "a simulation is never a pass"),
            (quote!(search = simulate, depth_max = 3, expect = violation("p")), "`depth_max` bounds bfs or dfs"),
            (quote!(walks = 3), "`walks` applies to `search = simulate` only"),
            (quote!(network = fifo, dups = 1), "`dups` needs `network = bag`"),
        ] {
            let e = error_of(args.clone()).unwrap_or_else(|| panic!("{args} compiles"));
            assert!(e.contains(message), "{e}");
        }
    }

    #[test]
    fn a_program_model_takes_the_keys_that_mean_something_for_a_program() {
        assert_eq!(
            error_of(quote!(
                program = "../examples/c/build/register",
                nodes = 3,
                crashes = 1,
                drops = 1,
                timeouts = 2,
                clients = 1,
                depth_max = 9,
                states_max = 1000,
                time_max_s = 60,
                det,
                timeout_byte,
                timeout_order = deadline,
                timeout_drift_s = 2,
                expect = violation("acked_writes_survive"),
                ignore = "slow"
            )),
            None
        );
        assert_eq!(error_of(quote!(program = "p", nodes = 2, timeout_byte = false, timeout_order = any)), None);
        assert_eq!(error_of(quote!(program = "p", nodes = 1, write_bytes_max = 65536, node_state = inputs)), None);
        assert_eq!(
            error_of(quote!(
                program = env!("CARGO_BIN_EXE_node"),
                nodes = 2,
                search = simulate,
                walks = 10,
                walk_length = 5,
                seed = 7,
                expect = violation("p")
            )),
            None
        );
        assert_eq!(error_of(quote!(program = PROGRAM, nodes = 2, search = dfs, depth_max = 4)), None);
    }

    #[test]
    fn the_timeout_keys_are_a_programs_and_a_drift_needs_deadline_order() {
        for (args, message) in [
            (quote!(nodes = 3, timeout_byte), "`timeout_byte` means something for a program only"),
            (quote!(nodes = 3, timeout_order = deadline), "`timeout_order` means something for a program only"),
            (
                quote!(program = "p", nodes = 3, timeout_drift_s = 1),
                "`timeout_drift_s` needs `timeout_order = deadline`",
            ),
            (
                quote!(program = "p", nodes = 3, timeout_order = any, timeout_drift_s = 1),
                "`timeout_drift_s` needs `timeout_order = deadline`",
            ),
            (quote!(program = "p", nodes = 3, timeout_order = earliest), "`timeout_order` is one of any, deadline"),
            (quote!(nodes = 3, write_bytes_max = 128), "`write_bytes_max` means something for a program only"),
            (quote!(nodes = 3, node_state = inputs), "`node_state` means something for a program only"),
            (quote!(program = "p", nodes = 3, node_state = memory), "`node_state` is one of report, inputs"),
            (
                quote!(program = "p", nodes = 3, timeout_drift_ms = 4),
                "`timeout_drift_ms` needs `timeout_order = deadline`",
            ),
            (
                quote!(program = "p", nodes = 3, timeout_order = deadline, timeout_drift_s = 1, timeout_drift_ms = 4),
                "give `timeout_drift_s` or `timeout_drift_ms`, not both",
            ),
        ] {
            let e = error_of(args.clone()).unwrap_or_else(|| panic!("{args} compiles"));
            assert!(e.contains(message), "{e}");
        }
    }

    #[test]
    fn keys_that_mean_nothing_for_a_program_are_errors() {
        for (args, message) in [
            (
                quote!(program = "p", nodes = 3, network = bag),
                "`network` means nothing for a program: a program's connections are TCP",
            ),
            (
                quote!(program = "p", nodes = 3, dups = 1),
                "`dups` means nothing for a program: a program's connections are TCP",
            ),
            (quote!(program = "p", nodes = 3, core = X), "`core` means nothing for a program"),
            (quote!(program = "p", nodes = 3, deadlock), "`deadlock` means nothing for a program"),
            (quote!(nodes = 3, deadlock = false, program = "p"), "`deadlock` means nothing for a program"),
        ] {
            let e = error_of(args.clone()).unwrap_or_else(|| panic!("{args} compiles"));
            assert!(e.starts_with(message), "{e}");
        }
    }

    #[test]
    fn a_program_must_be_named_and_run_on_a_number_of_nodes() {
        for (args, message) in [
            (quote!(program = "p"), "a program model says how many nodes run the program: add `nodes = N`"),
            (quote!(program = "", nodes = 3), "`program` is the program's path, not an empty string"),
            (
                quote!(program = 3, nodes = 3),
                "`program` takes the program's path: a string literal or a constant `&str`",
            ),
            (quote!(program = "p", program = "q", nodes = 3), "`program` is given twice"),
        ] {
            let e = error_of(args.clone()).unwrap_or_else(|| panic!("{args} compiles"));
            assert!(e.starts_with(message), "{e}");
        }
    }

    #[test]
    fn a_program_model_is_prepared_as_a_program() {
        let tokens = |args: Tokens| {
            expand(
                args,
                quote!(
                    fn m() -> cmc::process::ProgramModel {
                        todo!()
                    }
                ),
            )
            .unwrap()
            .to_string()
        };
        let program = tokens(quote!(program = "build/p", nodes = 3, search = simulate, expect = violation("p")));
        assert!(
            program.contains("prepare_program (body () , attributes , :: core :: env ! (\"CARGO_MANIFEST_DIR\"))"),
            "{program}"
        );
        assert!(program.contains("program : :: core :: option :: Option :: Some (\"build/p\")"), "{program}");
        assert!(program.contains("let body : fn () -> :: cmc :: process :: ProgramModel = m ;"), "{program}");
        // A program's walks replay processes: model files' defaults.
        assert!(program.contains("walks : 100u64 , walk_length : 20u32"), "{program}");
        let core = tokens(quote!(nodes = 3, search = simulate, expect = violation("p")));
        assert!(core.contains(":: cmc :: harness :: Declarable :: prepare (m () , attributes)"), "{core}");
        assert!(core.contains("walks : 1000u64 , walk_length : 100u32"), "{core}");
        let e = expand(
            quote!(program = "p", nodes = 1),
            quote!(
                fn m() {}
            ),
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "a model function returns the model: `-> cmc::process::ProgramModel`");
    }

    #[test]
    fn the_function_must_return_a_model_and_take_nothing() {
        let e = expand(
            quote!(),
            quote!(
                fn m(x: u8) -> cmc::Model<X> {
                    todo!()
                }
            ),
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "a model function takes no arguments");
        let e = expand(
            quote!(),
            quote!(
                fn m() {}
            ),
        )
        .unwrap_err();
        assert!(e.to_string().contains("returns the model"));
    }
}
