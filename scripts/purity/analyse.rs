//! The analysis half of `scripts/purity_gate.sh`: given the object files of
//! a build and, for each core, the generated root functions that call its
//! `step`, `apply_persist` and `direct_actions`, walk the call graph of each
//! core through the machine code and scan the Rust source that code was
//! compiled from. Prints one `PASS` or several `FAIL` lines per core and
//! exits 1 when any core fails, 2 when the analysis itself cannot run.
//!
//! It reads object code through `objdump` (binutils) and demangles through
//! `c++filt`; it has no dependencies besides `std`, so the script builds it
//! with plain `rustc` and it never touches the workspace's `Cargo.lock`.
//!
//! Cores written in C (`--c-cores`) go through the same walk, one object
//! (one translation unit) at a time, with every function the object defines
//! as a root, only the mem* functions as allowed callees
//! ([`allowed_c_call`]), and a scan of the preprocessed source instead of the
//! Rust one ([`C_SOURCE_RULES`]). With Rust cores alone nothing of this runs,
//! and the output is what it was before C cores existed.
//!
//! What it checks, and why, is documented in `scripts/purity_gate.sh`; the
//! rules themselves are the tables [`FORBIDDEN_INSNS`], [`allowed_call`] and
//! [`SOURCE_RULES`].

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::rc::Rc;

/// Instructions a core's code may not contain: system calls, interrupts,
/// clock, randomness and CPU identification, and the privileged or
/// segment-base instructions that would reach thread or machine state.
const FORBIDDEN_INSNS: &[(&str, &str)] = &[
    ("syscall", "system call"),
    ("sysenter", "system call"),
    ("sysexit", "system call"),
    ("sysret", "system call"),
    ("int", "software interrupt"),
    ("int1", "software interrupt"),
    ("int3", "software interrupt"),
    ("into", "software interrupt"),
    ("rdtsc", "clock read (time-stamp counter)"),
    ("rdtscp", "clock read (time-stamp counter)"),
    ("rdpid", "processor identification"),
    ("rdpmc", "performance counter read"),
    ("rdrand", "hardware random number"),
    ("rdseed", "hardware random number"),
    ("cpuid", "CPU identification"),
    ("xgetbv", "CPU identification"),
    ("rdfsbase", "thread-pointer access"),
    ("rdgsbase", "thread-pointer access"),
    ("wrfsbase", "thread-pointer access"),
    ("wrgsbase", "thread-pointer access"),
    ("rdmsr", "privileged instruction"),
    ("wrmsr", "privileged instruction"),
    ("hlt", "privileged instruction"),
    ("in", "port I/O"),
    ("out", "port I/O"),
    ("insb", "port I/O"),
    ("insw", "port I/O"),
    ("insl", "port I/O"),
    ("outsb", "port I/O"),
    ("outsw", "port I/O"),
    ("outsl", "port I/O"),
    ("vmcall", "hypervisor call"),
];

/// Instruction prefixes objdump prints before the mnemonic.
const PREFIXES: &[&str] = &[
    "lock", "rep", "repz", "repnz", "repe", "repne", "notrack", "bnd", "data16", "addr32", "cs", "ds", "ss", "es",
    "fs", "gs",
];

/// The crate whose effect methods a core may call without them being
/// followed: the engine.
const ENGINE_CRATE: &str = "cmc";

/// The methods of `cmc::Effects` through which a core acts: calls to them
/// are allowed and not followed (they are the engine's code).
const EFFECTS_METHODS: &[&str] = &[
    "cmc::core::Effects::send",
    "cmc::core::Effects::arm",
    "cmc::core::Effects::cancel",
    "cmc::core::Effects::persist",
    "cmc::core::Effects::wake",
    "cmc::core::Effects::reply",
    "cmc::core::Effects::not_enabled",
];

/// Whether a call to the function with this demangled name is allowed
/// without following it, and as what.
///
/// - `memcpy`, `memmove`, `memset`, `memcmp`, `bcmp`: the compiler emits
///   them for copies and comparisons of plain bytes.
/// - The panic entry points: everything under `core::panicking::`, the
///   `core::` failure helpers the standard library marks cold (names ending
///   in `_fail` or `_failed`, or starting with `panic_`: slice index, option
///   and result unwrap, copy length mismatch), `std::panicking::begin_panic`,
///   and `_Unwind_Resume`, which landing pads call while a panic unwinds. A
///   panicking step is an error the engine reports; nothing it does while
///   panicking reaches a world.
/// - The [`EFFECTS_METHODS`].
///
/// The mem* and panic names are trusted only where they are external to the
/// built crates (the C library, the standard library); a definition in a
/// built crate is followed. The effect methods are trusted where the engine
/// crate ([`ENGINE_CRATE`]) defines them.
fn allowed_call(demangled: &str) -> Option<&'static str> {
    if ["memcpy", "memmove", "memset", "memcmp", "bcmp"].contains(&demangled) {
        return Some("mem");
    }
    if EFFECTS_METHODS.contains(&demangled) {
        return Some("effects");
    }
    if demangled == "_Unwind_Resume" || demangled.starts_with("std::panicking::begin_panic") {
        return Some("panic");
    }
    if let Some(rest) = demangled.strip_prefix("core::") {
        if rest.starts_with("panicking::") {
            return Some("panic");
        }
        let last = rest.rsplit("::").next().unwrap_or(rest);
        if last.ends_with("_fail") || last.ends_with("_failed") || last.starts_with("panic_") {
            return Some("panic");
        }
    }
    None
}

/// [`allowed_call`] for a core written in C: the mem* functions only. A C
/// core has no panic entry points (a failed check traps: `ud2`), and its
/// effect functions are cmc.h's `static inline` ones, compiled into it and
/// walked with the rest of its code.
fn allowed_c_call(name: &str) -> Option<&'static str> {
    ["memcpy", "memmove", "memset", "memcmp", "bcmp"].contains(&name).then_some("mem")
}

/// The language of the analysed objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lang {
    Rust,
    C,
}

/// Relocation types that address thread-local storage.
fn is_tls_reloc(kind: &str) -> bool {
    kind.contains("TPOFF") || kind.contains("TLSGD") || kind.contains("TLSLD") || kind.contains("TLSDESC")
}

/// What a section holds, from its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SectionKind {
    Code,
    ReadOnly,
    Writable,
    ThreadLocal,
    Other,
}

fn section_kind(name: &str) -> SectionKind {
    let starts = |p: &str| name == p || name.starts_with(&format!("{p}."));
    if starts(".text") {
        SectionKind::Code
    } else if starts(".tdata") || starts(".tbss") {
        SectionKind::ThreadLocal
    } else if starts(".data.rel.ro") || starts(".rodata") || starts(".lrodata") {
        SectionKind::ReadOnly
    } else if starts(".data") || starts(".bss") || starts(".ldata") || starts(".lbss") || name == "*COM*" {
        SectionKind::Writable
    } else {
        SectionKind::Other
    }
}

#[derive(Clone, Debug)]
struct Symbol {
    section: String,
    value: u64,
    global: bool,
    is_section: bool,
}

#[derive(Clone, Debug)]
struct Reloc {
    kind: String,
    target: String,
    addend: i64,
}

#[derive(Clone, Debug)]
struct Insn {
    offset: u64,
    text: String,
    relocs: Vec<Reloc>,
    location: Option<(Rc<str>, u32)>,
}

#[derive(Debug)]
struct Function {
    insns: Vec<Insn>,
}

/// One object file, read lazily: the symbol table at once, the disassembly
/// and the data relocations when first needed.
struct Object {
    path: PathBuf,
    lang: Lang,
    symbols: HashMap<String, Symbol>,
    /// Function symbols by section, with their offsets.
    section_functions: HashMap<String, Vec<(u64, String)>>,
    functions: Option<HashMap<String, Function>>,
    data_relocs: Option<HashMap<String, Vec<Reloc>>>,
}

/// A function: the object that defines it and its symbol.
type FnId = (usize, String);

#[derive(Clone, Debug)]
enum Target {
    Function(FnId),
    Data { object: usize, section: String },
    External(String),
}

/// A finding inside one function, before it is attributed to a core.
#[derive(Clone, Debug)]
struct LocalFinding {
    tag: String,
    detail: String,
    insn: String,
    offset: u64,
    location: Option<(Rc<str>, u32)>,
}

/// What one function contains: its own findings, the functions it calls
/// and the source lines its instructions came from.
#[derive(Clone, Debug, Default)]
struct FnFacts {
    findings: Vec<LocalFinding>,
    callees: Vec<FnId>,
    lines: Vec<(Rc<str>, u32)>,
    insns: usize,
}

fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Demangles names through `c++filt -i` (binutils knows both Rust manglings).
fn demangle_all(names: &[String]) -> Result<Vec<String>, String> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut child = Command::new("c++filt")
        .arg("-i")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run c++filt: {e}"))?;
    let mut input = String::new();
    for n in names {
        input.push_str(n);
        input.push('\n');
    }
    let mut stdin = child.stdin.take().ok_or("c++filt: no stdin")?;
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().map_err(|e| format!("c++filt: {e}"))?;
    writer.join().map_err(|_| "c++filt writer panicked")?.map_err(|e| format!("c++filt: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<String> = text.lines().map(tidy_demangled).collect();
    if lines.len() != names.len() {
        return Err(format!("c++filt returned {} names for {}", lines.len(), names.len()));
    }
    Ok(lines)
}

/// Drops what `c++filt -i` may leave of hashes: `::h0123...` and `[0123...]`.
fn tidy_demangled(s: &str) -> String {
    let mut s = s.to_string();
    if let Some(i) = s.rfind("::h") {
        let tail = &s[i + 3..];
        if tail.len() == 16 && tail.chars().all(|c| c.is_ascii_hexdigit()) {
            s.truncate(i);
        }
    }
    while let Some(i) = s.find('[') {
        match s[i..].find(']') {
            Some(j) if s[i + 1..i + j].chars().all(|c| c.is_ascii_hexdigit()) && j > 1 => {
                s.replace_range(i..i + j + 1, "");
            }
            _ => break,
        }
    }
    s
}

fn parse_target(text: &str) -> (String, i64) {
    for (i, c) in text.char_indices().rev() {
        if (c == '+' || c == '-')
            && text[i + 1..].starts_with("0x")
            && let Ok(v) = i64::from_str_radix(&text[i + 3..], 16)
        {
            return (text[..i].to_string(), if c == '-' { -v } else { v });
        }
    }
    (text.to_string(), 0)
}

impl Object {
    fn load(path: &Path, lang: Lang) -> Result<Object, String> {
        let text = run(Command::new("objdump").arg("-t").arg("-w").arg(path))?;
        let mut symbols = HashMap::new();
        let mut section_functions: HashMap<String, Vec<(u64, String)>> = HashMap::new();
        for line in text.lines() {
            // `VALUE FLAGS SECTION\tSIZE NAME`, FLAGS being 7 columns wide.
            if line.len() < 26 || !line.as_bytes()[..16].iter().all(u8::is_ascii_hexdigit) {
                continue;
            }
            let Ok(value) = u64::from_str_radix(&line[..16], 16) else { continue };
            let flags = &line[17..24];
            let Some((section, rest)) = line[25..].split_once('\t') else { continue };
            let Some((_size, name)) = rest.split_once(' ') else { continue };
            let name = name.trim();
            let name = name
                .strip_prefix(".hidden ")
                .or_else(|| name.strip_prefix(".protected "))
                .or_else(|| name.strip_prefix(".internal "))
                .unwrap_or(name)
                .trim();
            if name.is_empty() {
                continue;
            }
            let is_section = flags.contains('d');
            let global = flags.starts_with('g') || flags.contains('w') || flags.starts_with('u');
            if flags.ends_with('F') {
                section_functions.entry(section.to_string()).or_default().push((value, name.to_string()));
            }
            symbols.insert(
                name.to_string(),
                Symbol { section: section.to_string(), value, global: global && section != "*UND*", is_section },
            );
        }
        for v in section_functions.values_mut() {
            v.sort();
        }
        Ok(Object { path: path.to_path_buf(), lang, symbols, section_functions, functions: None, data_relocs: None })
    }

    fn disassemble(&mut self) -> Result<&HashMap<String, Function>, String> {
        if self.functions.is_none() {
            let text =
                run(Command::new("objdump").args(["-d", "-r", "-l", "--no-show-raw-insn", "-w"]).arg(&self.path))?;
            let mut functions: HashMap<String, Function> = HashMap::new();
            let mut current: Option<String> = None;
            let mut location: Option<(Rc<str>, u32)> = None;
            let mut files: HashMap<String, Rc<str>> = HashMap::new();
            for line in text.lines() {
                if line.is_empty() || line.starts_with("Disassembly of section") {
                    continue;
                }
                if !line.starts_with(' ') && !line.starts_with('\t') {
                    if let (Some(lt), true) = (line.find(" <"), line.ends_with(">:"))
                        && line[..lt].chars().all(|c| c.is_ascii_hexdigit())
                    {
                        let name = line[lt + 2..line.len() - 2].to_string();
                        functions.insert(name.clone(), Function { insns: Vec::new() });
                        current = Some(name);
                        location = None;
                        continue;
                    }
                    // A source position, `FILE:LINE` or `FILE:LINE (discriminator N)`.
                    let pos = line.split(" (discriminator").next().unwrap_or(line);
                    let source: fn(&str) -> bool = match self.lang {
                        Lang::Rust => |f| f.ends_with(".rs"),
                        Lang::C => |f| f.ends_with(".c") || f.ends_with(".h"),
                    };
                    if let Some((file, num)) = pos.rsplit_once(':')
                        && let (Ok(n), true) = (num.parse::<u32>(), source(file))
                    {
                        let f = files.entry(file.to_string()).or_insert_with(|| Rc::from(file)).clone();
                        location = Some((f, n));
                    }
                    continue;
                }
                let Some(name) = &current else { continue };
                let Some(func) = functions.get_mut(name) else { continue };
                let trimmed = line.trim_start();
                let Some((off, rest)) = trimmed.split_once(':') else { continue };
                let Ok(offset) = u64::from_str_radix(off, 16) else { continue };
                let rest = rest.trim_start();
                if let Some(kind) = rest.strip_prefix("R_X86_64_").map(|_| rest) {
                    // A relocation on a line of its own: it belongs to the
                    // previous instruction.
                    let mut parts = kind.split('\t');
                    let k = parts.next().unwrap_or("").trim().to_string();
                    let (target, addend) = parse_target(parts.next().unwrap_or("").trim());
                    if let Some(last) = func.insns.last_mut() {
                        last.relocs.push(Reloc { kind: k, target, addend });
                    }
                    continue;
                }
                let mut parts = rest.split('\t');
                let insn = parts.next().unwrap_or("");
                let insn = insn.split('#').next().unwrap_or(insn).trim().to_string();
                let mut relocs = Vec::new();
                let parts: Vec<&str> = parts.collect();
                let mut i = 0;
                while i < parts.len() {
                    if let Some((_, k)) = parts[i].split_once(": R_X86_64_") {
                        let (target, addend) = parse_target(parts.get(i + 1).unwrap_or(&"").trim());
                        relocs.push(Reloc { kind: format!("R_X86_64_{}", k.trim()), target, addend });
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
                func.insns.push(Insn { offset, text: insn, relocs, location: location.clone() });
            }
            self.functions = Some(functions);
        }
        Ok(self.functions.as_ref().expect("set above"))
    }

    fn data_relocations(&mut self) -> Result<&HashMap<String, Vec<Reloc>>, String> {
        if self.data_relocs.is_none() {
            let text = run(Command::new("objdump").args(["-r", "-w"]).arg(&self.path))?;
            let mut map: HashMap<String, Vec<Reloc>> = HashMap::new();
            let mut section: Option<String> = None;
            for line in text.lines() {
                if let Some(s) = line.strip_prefix("RELOCATION RECORDS FOR [") {
                    let s = s.trim_end_matches("]:").to_string();
                    section = (section_kind(&s) != SectionKind::Code
                        && !s.starts_with(".debug")
                        && !s.starts_with(".eh_frame"))
                    .then_some(s);
                    continue;
                }
                let Some(s) = &section else { continue };
                let mut it = line.split_whitespace();
                let (Some(_off), Some(kind), Some(value)) = (it.next(), it.next(), it.next()) else { continue };
                if !kind.starts_with("R_X86_64_") {
                    continue;
                }
                let (target, addend) = parse_target(value);
                map.entry(s.clone()).or_default().push(Reloc { kind: kind.to_string(), target, addend });
            }
            self.data_relocs = Some(map);
        }
        Ok(self.data_relocs.as_ref().expect("set above"))
    }

    /// The function at `offset` of a code section.
    fn function_in_section(&self, section: &str, offset: i64) -> Option<String> {
        let funcs = self.section_functions.get(section)?;
        let at = funcs.iter().rev().find(|(v, _)| (*v as i64) <= offset).or(funcs.first());
        at.map(|(_, n)| n.clone())
    }
}

/// Exported symbols of the standard library's shared object, to classify
/// references to symbols the analysed objects do not define.
struct Libstd {
    sections: HashMap<String, String>,
}

impl Libstd {
    fn load(path: Option<&Path>) -> Libstd {
        let mut sections = HashMap::new();
        if let Some(p) = path
            && let Ok(text) = run(Command::new("objdump").args(["-T", "-w"]).arg(p))
        {
            for line in text.lines() {
                let toks: Vec<&str> = line.split_whitespace().collect();
                let Some(sec) = toks.iter().find(|t| t.starts_with('.') || **t == "*UND*") else { continue };
                if let Some(name) = toks.last()
                    && *sec != "*UND*"
                {
                    sections.insert(name.to_string(), sec.to_string());
                }
            }
        }
        Libstd { sections }
    }
}

struct Analysis {
    objects: Vec<Object>,
    /// Defined global symbols: which object defines them.
    globals: HashMap<String, usize>,
    demangled: HashMap<String, String>,
    facts: HashMap<FnId, Rc<FnFacts>>,
    libstd: Option<Libstd>,
    libstd_path: Option<PathBuf>,
    lang: Lang,
}

impl Analysis {
    fn new(paths: &[PathBuf], libstd_path: Option<PathBuf>, lang: Lang) -> Result<Analysis, String> {
        let mut objects = Vec::new();
        for p in paths {
            objects.push(Object::load(p, lang)?);
        }
        let mut globals = HashMap::new();
        let mut names = BTreeSet::new();
        for (i, o) in objects.iter().enumerate() {
            for (name, s) in &o.symbols {
                if s.global {
                    globals.entry(name.clone()).or_insert(i);
                }
                if !s.is_section {
                    names.insert(name.clone());
                }
            }
        }
        let names: Vec<String> = names.into_iter().collect();
        let dm = demangle_all(&names)?;
        let demangled = names.into_iter().zip(dm).collect();
        Ok(Analysis { objects, globals, demangled, facts: HashMap::new(), libstd: None, libstd_path, lang })
    }

    /// [`allowed_call`], or [`allowed_c_call`] for a C core.
    fn allowed(&self, demangled: &str) -> Option<&'static str> {
        match self.lang {
            Lang::Rust => allowed_call(demangled),
            Lang::C => allowed_c_call(demangled),
        }
    }

    /// Whether an object is the engine's (`cmc`), whose effect methods are
    /// allowed without being followed.
    fn is_engine(&self, object: usize) -> bool {
        if self.lang == Lang::C {
            return false;
        }
        let name = self.objects[object].path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        name.starts_with(&format!("{ENGINE_CRATE}-"))
    }

    /// A symbol's demangled name; a section named after a symbol
    /// (`.bss._ZN...E`, `.text._ZN...E`) gives the symbol's.
    fn demangle(&self, name: &str) -> String {
        if let Some(d) = self.demangled.get(name) {
            return d.clone();
        }
        if name.starts_with('.')
            && let Some(i) = name.find("._ZN").or_else(|| name.find("._R"))
        {
            let inner = &name[i + 1..];
            for candidate in [inner, inner.strip_suffix(".0").unwrap_or(inner)] {
                if let Some(d) = self.demangled.get(candidate) {
                    return d.clone();
                }
            }
        }
        name.to_string()
    }

    fn libstd_section(&mut self, name: &str) -> Option<String> {
        if self.libstd.is_none() {
            self.libstd = Some(Libstd::load(self.libstd_path.as_deref()));
        }
        self.libstd.as_ref().and_then(|l| l.sections.get(name).cloned())
    }

    fn resolve(&self, object: usize, target: &str, offset: i64) -> Target {
        let o = &self.objects[object];
        match o.symbols.get(target) {
            Some(s) if s.is_section || (target.starts_with('.') && s.section == target) => {
                if section_kind(target) == SectionKind::Code {
                    match o.function_in_section(target, offset) {
                        Some(f) => Target::Function((object, f)),
                        None => Target::Data { object, section: target.to_string() },
                    }
                } else {
                    Target::Data { object, section: target.to_string() }
                }
            }
            Some(s) if s.section == "*UND*" => match self.globals.get(target) {
                Some(&other) if other != object => self.resolve(other, target, offset),
                _ => Target::External(target.to_string()),
            },
            Some(s) => {
                if section_kind(&s.section) == SectionKind::Code {
                    // A symbol inside a code section: the function there.
                    let sec = s.section.clone();
                    let at = s.value as i64;
                    match o.function_in_section(&sec, at) {
                        Some(f) => Target::Function((object, f)),
                        None => Target::Function((object, target.to_string())),
                    }
                } else {
                    Target::Data { object, section: s.section.clone() }
                }
            }
            None => {
                if target.starts_with('.') {
                    Target::Data { object, section: target.to_string() }
                } else {
                    match self.globals.get(target) {
                        Some(&other) if other != object => self.resolve(other, target, offset),
                        _ => Target::External(target.to_string()),
                    }
                }
            }
        }
    }

    /// Classifies what a reference to read-only data can reach through the
    /// pointers stored in it: `Some((kind, chain))` for writable or
    /// thread-local data, or an external symbol of unknown kind.
    fn reach_through_data(
        &mut self,
        object: usize,
        section: &str,
        seen: &mut HashSet<(usize, String)>,
    ) -> Result<Option<(String, String)>, String> {
        if !seen.insert((object, section.to_string())) {
            return Ok(None);
        }
        let relocs = self.objects[object].data_relocations()?.get(section).cloned().unwrap_or_default();
        for r in relocs {
            if is_tls_reloc(&r.kind) {
                let from = self.describe_section(section);
                return Ok(Some(("thread-local".into(), format!("{from} holds a thread-local relocation"))));
            }
            match self.resolve(object, &r.target, r.addend) {
                // A function pointer can only be called indirectly, which
                // the walk rejects, or by a panic while it formats.
                Target::Function(_) => {}
                Target::Data { object: o2, section: s2 } => match section_kind(&s2) {
                    SectionKind::Writable => {
                        return Ok(Some((
                            "writable-data".into(),
                            format!(
                                "{} points to writable {}",
                                self.describe_section(section),
                                self.describe_section(&s2)
                            ),
                        )));
                    }
                    SectionKind::ThreadLocal => {
                        return Ok(Some((
                            "thread-local".into(),
                            format!(
                                "{} points to thread-local {}",
                                self.describe_section(section),
                                self.describe_section(&s2)
                            ),
                        )));
                    }
                    SectionKind::ReadOnly => {
                        if let Some((tag, chain)) = self.reach_through_data(o2, &s2, seen)? {
                            return Ok(Some((tag, format!("{} -> {chain}", self.describe_section(section)))));
                        }
                    }
                    SectionKind::Code | SectionKind::Other => {}
                },
                Target::External(name) => {
                    if let Some(found) = self.classify_external_data(&name) {
                        let from = self.describe_section(section);
                        return Ok(Some((found.0, format!("{from} points to {}", found.1))));
                    }
                }
            }
        }
        Ok(None)
    }

    /// A non-call reference to a symbol no analysed object defines: fine if
    /// the standard library exports it as code or read-only data.
    fn classify_external_data(&mut self, name: &str) -> Option<(String, String)> {
        let d = self.demangle(name);
        if self.allowed(&d).is_some() {
            return None;
        }
        match self.libstd_section(name).map(|s| (section_kind(&s), s)) {
            Some((SectionKind::Code | SectionKind::ReadOnly, _)) => None,
            Some((SectionKind::Writable, s)) => {
                Some(("writable-data".into(), format!("`{d}`, writable data of the standard library ({s})")))
            }
            Some((SectionKind::ThreadLocal, s)) => {
                Some(("thread-local".into(), format!("`{d}`, a thread-local of the standard library ({s})")))
            }
            _ => Some((
                "external-reference".into(),
                format!("`{d}`, defined outside the analysed crates (whether it is writable cannot be told)"),
            )),
        }
    }

    fn describe_section(&self, section: &str) -> String {
        // `.bss._ZN...E` names the static; `.bss..L...` is anonymous.
        for p in [".data.rel.ro.", ".rodata.", ".data.", ".bss.", ".tdata.", ".tbss.", ".ldata.", ".lbss."] {
            if let Some(rest) = section.strip_prefix(p)
                && (rest.starts_with("_ZN") || rest.starts_with("_R"))
            {
                return format!("data `{}` ({})", self.demangle(rest), p.trim_end_matches('.'));
            }
            // A C object is compiled with -fdata-sections: `.bss.NAME`.
            if self.lang == Lang::C
                && let Some(rest) = section.strip_prefix(p).filter(|r| !r.is_empty())
            {
                return format!("data `{rest}` ({})", p.trim_end_matches('.'));
            }
        }
        format!("data in section {section}")
    }

    /// The facts of one function, computed once.
    fn facts(&mut self, id: &FnId) -> Result<Rc<FnFacts>, String> {
        if let Some(f) = self.facts.get(id) {
            return Ok(f.clone());
        }
        // Identical functions are merged into aliases of one body; the
        // disassembly is headed by one of the names at that address.
        let (section, value) = match self.objects[id.0].symbols.get(&id.1) {
            Some(s) => (s.section.clone(), s.value),
            None => (String::new(), 0),
        };
        let aliases: Vec<String> = self.objects[id.0]
            .section_functions
            .get(&section)
            .map(|fs| fs.iter().filter(|(v, _)| *v == value).map(|(_, n)| n.clone()).collect())
            .unwrap_or_default();
        let disassembly = self.objects[id.0].disassemble()?;
        let body = disassembly.get(&id.1).or_else(|| aliases.iter().find_map(|a| disassembly.get(a)));
        let insns = match body {
            Some(f) => f.insns.clone(),
            None => {
                return Err(format!(
                    "function {} not found in the disassembly of {}",
                    self.demangle(&id.1),
                    self.objects[id.0].path.display()
                ));
            }
        };
        let mut facts = FnFacts { insns: insns.len(), ..FnFacts::default() };
        let mut lines = BTreeSet::new();
        for insn in &insns {
            if let Some(l) = &insn.location {
                lines.insert(l.clone());
            }
            let shown = self.show_insn(insn);
            let mut hits: Vec<(String, String)> = Vec::new();
            macro_rules! finding {
                ($tag:expr, $detail:expr) => {
                    hits.push(($tag.to_string(), $detail))
                };
            }
            let mut words = insn.text.split_whitespace().peekable();
            while words.peek().is_some_and(|w| PREFIXES.contains(w)) {
                words.next();
            }
            let mnemonic = words.next().unwrap_or("");
            let operands: String = words.collect::<Vec<_>>().join(" ");
            let base = mnemonic.trim_end_matches('q');
            if let Some((_, why)) = FORBIDDEN_INSNS.iter().find(|(m, _)| *m == mnemonic || *m == base) {
                finding!(&format!("instruction:{mnemonic}"), format!("`{mnemonic}`: {why}"));
            }
            if insn.text.contains("%fs:") || insn.text.contains("%gs:") {
                finding!("thread-local", "a %fs/%gs segment access reads thread-local storage".into());
            }
            let is_branch = mnemonic.starts_with('j') || mnemonic.starts_with("call") || mnemonic.starts_with("lcall");
            let indirect = is_branch && operands.starts_with('*');
            if indirect && insn.relocs.is_empty() {
                finding!("indirect-call", format!("indirect `{mnemonic}`: the target cannot be checked"));
            }
            if mnemonic.starts_with("ljmp") || mnemonic.starts_with("lcall") {
                finding!("indirect-call", format!("far `{mnemonic}`"));
            }
            for r in &insn.relocs {
                if is_tls_reloc(&r.kind) {
                    finding!("thread-local", format!("{} relocation to `{}`", r.kind, self.demangle(&r.target)));
                    continue;
                }
                let pcrel = r.kind.contains("PC") || r.kind.contains("PLT");
                let offset = if pcrel { r.addend + 4 } else { r.addend };
                match self.resolve(id.0, &r.target, offset) {
                    Target::Function(f) => {
                        if !is_branch {
                            // Only its address is taken: it can run only through an
                            // indirect call (rejected) or a panic message.
                            continue;
                        }
                        // Defined in a built crate: followed, unless it is an
                        // effect method of the engine itself. (An allowed name
                        // defined elsewhere, say a core's own `memcpy`, is
                        // followed like any other function.)
                        let d = self.demangle(&f.1);
                        if self.allowed(&d) == Some("effects") && self.is_engine(f.0) {
                            continue;
                        }
                        if f != *id {
                            facts.callees.push(f);
                        }
                    }
                    Target::Data { object, section } => {
                        if is_branch {
                            finding!("call", format!("branch into data section {section}"));
                            continue;
                        }
                        match section_kind(&section) {
                            SectionKind::Writable => {
                                let what = self.describe_section(&section);
                                finding!("writable-data", format!("references writable {what}"));
                            }
                            SectionKind::ThreadLocal => {
                                let what = self.describe_section(&section);
                                finding!("thread-local", format!("references thread-local {what}"));
                            }
                            SectionKind::ReadOnly => {
                                let mut seen = HashSet::new();
                                if let Some((tag, chain)) = self.reach_through_data(object, &section, &mut seen)? {
                                    finding!(
                                        &tag,
                                        format!(
                                            "reaches {} through a pointer in read-only data: {chain}",
                                            tag.replace('-', " ")
                                        )
                                    );
                                }
                            }
                            SectionKind::Other => {
                                finding!("unknown-data", format!("references section {section} of unknown kind"));
                            }
                            SectionKind::Code => {}
                        }
                    }
                    Target::External(name) => {
                        let d = self.demangle(&name);
                        if is_branch {
                            if self.allowed(&d).is_none() {
                                finding!("call", format!("calls `{d}`, which is not an allowed callee"));
                            }
                        } else if let Some((tag, what)) = self.classify_external_data(&name) {
                            finding!(&tag, format!("references {what}"));
                        }
                    }
                }
            }
            for (tag, detail) in hits {
                facts.findings.push(LocalFinding {
                    tag,
                    detail,
                    insn: shown.clone(),
                    offset: insn.offset,
                    location: insn.location.clone(),
                });
            }
        }
        facts.lines = lines.into_iter().collect();
        let facts = Rc::new(facts);
        self.facts.insert(id.clone(), facts.clone());
        Ok(facts)
    }

    /// An instruction as a person reads it: objdump's `<...>` comments
    /// dropped, and a relocated operand's target named.
    fn show_insn(&self, insn: &Insn) -> String {
        let mut text = String::new();
        let mut depth = 0;
        for c in insn.text.chars() {
            match c {
                '<' => depth += 1,
                '>' if depth > 0 => depth -= 1,
                _ if depth == 0 => text.push(c),
                _ => {}
            }
        }
        let mut text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        // A direct branch's operand is a meaningless offset until linked.
        let mnemonic = text.split(' ').next().unwrap_or("");
        if (mnemonic.starts_with('j') || mnemonic.starts_with("call")) && !insn.relocs.is_empty() && !text.contains('*')
        {
            text = mnemonic.to_string();
        }
        let targets: Vec<String> = insn.relocs.iter().map(|r| self.demangle(&r.target)).collect();
        if !targets.is_empty() {
            text = format!("{text} -> {}", targets.join(", "));
        }
        text
    }

    fn find_root(&self, demangled: &str) -> Option<FnId> {
        for (i, o) in self.objects.iter().enumerate() {
            for funcs in o.section_functions.values() {
                for (_, name) in funcs {
                    if self.demangled.get(name).is_some_and(|d| d == demangled) {
                        return Some((i, name.clone()));
                    }
                }
            }
        }
        None
    }
}

/// A root of one core: which method, and the generated function calling it.
struct Root {
    method: String,
    symbol: String,
}

/// What the walk of one core found.
#[derive(Default)]
struct CoreReport {
    failures: Vec<(String, String)>,
    functions: usize,
    insns: usize,
    source_files: usize,
    source_items: usize,
}

fn walk_core(
    an: &mut Analysis,
    roots: &[Root],
    report: &mut CoreReport,
) -> Result<BTreeMap<Rc<str>, BTreeSet<u32>>, String> {
    let mut lines: BTreeMap<Rc<str>, BTreeSet<u32>> = BTreeMap::new();
    let mut parent: HashMap<FnId, Option<FnId>> = HashMap::new();
    let mut method_of: HashMap<FnId, String> = HashMap::new();
    let mut queue = VecDeque::new();
    for r in roots {
        let Some(id) = an.find_root(&r.symbol) else {
            return Err(format!("root function `{}` not found in the shim's object", r.symbol));
        };
        if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(id.clone()) {
            e.insert(None);
            method_of.insert(id.clone(), r.method.clone());
            queue.push_back(id);
        }
    }
    let mut seen_findings = HashSet::new();
    while let Some(id) = queue.pop_front() {
        let facts = an.facts(&id)?;
        report.functions += 1;
        report.insns += facts.insns;
        for (f, l) in &facts.lines {
            lines.entry(f.clone()).or_default().insert(*l);
        }
        let method = method_of.get(&id).cloned().unwrap_or_default();
        if !facts.findings.is_empty() {
            // The call path from the core's method to this function; the
            // generated root itself is left out.
            let mut path = Vec::new();
            let mut cur = Some(id.clone());
            while let Some(c) = cur {
                let p = parent.get(&c).cloned().flatten();
                if p.is_some() {
                    path.push(an.demangle(&c.1));
                }
                cur = p;
            }
            path.push(method.clone());
            path.reverse();
            // A root is the gate's own wrapper; what is in it was inlined
            // from the core's method.
            let func = match parent.get(&id) {
                Some(None) if an.lang == Lang::Rust => format!("{method} (inlined into the gate's root)"),
                _ => an.demangle(&id.1),
            };
            for f in &facts.findings {
                let key = (f.tag.clone(), func.clone(), f.detail.clone());
                if !seen_findings.insert(key) {
                    continue;
                }
                let at = match &f.location {
                    Some((file, line)) => format!(" ({}:{line})", short_path(file)),
                    None => String::new(),
                };
                let msg = format!(
                    "{}: `{}` in `{func}+{:#x}`{at}; call path: {}",
                    f.detail,
                    f.insn,
                    f.offset,
                    path.join(" -> ")
                );
                report.failures.push((f.tag.clone(), msg));
            }
        }
        for c in &facts.callees {
            if !parent.contains_key(c) {
                parent.insert(c.clone(), Some(id.clone()));
                method_of.insert(c.clone(), method.clone());
                queue.push_back(c.clone());
            }
        }
    }
    Ok(lines)
}

static SCAN_ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

fn short_path(p: &str) -> String {
    // `/rustc/HASH/library/core/src/...` -> `library/core/src/...`
    if let (true, Some(i)) = (p.starts_with("/rustc/"), p.find("/library/")) {
        return p[i + 1..].to_string();
    }
    match SCAN_ROOT.get() {
        Some(root) => {
            Path::new(p).strip_prefix(root).map(|r| r.display().to_string()).unwrap_or_else(|_| p.to_string())
        }
        None => p.to_string(),
    }
}

// ---------------------------------------------------------------------------
// Source scanning.

/// How a source rule matches the code (comments and literal contents blanked).
#[derive(Clone, Copy)]
enum Pat<'a> {
    /// An identifier.
    Word(&'a str),
    /// An identifier starting with this.
    Prefix(&'a str),
    /// A path prefix such as `std::time`, at an identifier boundary.
    Path(&'a str),
    /// A macro call `NAME!`.
    Macro(&'a str),
    /// Two tokens in a row (whitespace between them allowed).
    Seq(&'a str, &'a str),
}

/// The source rules: the tag, what matches, and why it is forbidden.
const SOURCE_RULES: &[(&str, Pat<'static>, &str)] = &[
    (
        "unsafe",
        Pat::Word("unsafe"),
        "`unsafe`: a core needs none, and it is how one would write the private effect buffer (or anything else) behind the Effects methods' back",
    ),
    ("pointer", Pat::Seq("*", "mut"), "raw pointer"),
    ("pointer", Pat::Seq("*", "const"), "raw pointer"),
    ("pointer", Pat::Path("ptr::"), "raw pointer operations"),
    ("pointer", Pat::Word("addr_of_mut"), "raw pointer"),
    ("pointer", Pat::Word("addr_of"), "raw pointer"),
    ("asm", Pat::Macro("asm"), "inline assembly"),
    ("asm", Pat::Macro("global_asm"), "inline assembly"),
    ("asm", Pat::Macro("naked_asm"), "inline assembly"),
    ("asm", Pat::Macro("llvm_asm"), "inline assembly"),
    ("arch", Pat::Path("arch::"), "CPU intrinsics (`core::arch`): clock, random and CPU-identification instructions"),
    ("arch", Pat::Prefix("_rdtsc"), "time-stamp counter intrinsic"),
    ("arch", Pat::Prefix("__rdtscp"), "time-stamp counter intrinsic"),
    ("arch", Pat::Prefix("_rdrand"), "hardware random intrinsic"),
    ("arch", Pat::Prefix("_rdseed"), "hardware random intrinsic"),
    ("arch", Pat::Prefix("__cpuid"), "CPU identification intrinsic"),
    ("arch", Pat::Word("_xgetbv"), "CPU identification intrinsic"),
    ("static-mut", Pat::Seq("static", "mut"), "`static mut`: a global a step could change"),
    ("thread-local", Pat::Word("thread_local"), "thread-local storage"),
    ("thread-local", Pat::Word("LocalKey"), "thread-local storage"),
    ("global", Pat::Path("std::sync"), "`std::sync`: atomics and locks are shared mutable state"),
    ("global", Pat::Path("core::sync"), "`core::sync`: atomics are shared mutable state"),
    ("global", Pat::Path("alloc::sync"), "`alloc::sync`: shared ownership across threads"),
    ("global", Pat::Prefix("Atomic"), "atomics are shared mutable state"),
    ("global", Pat::Word("Mutex"), "locks are shared mutable state"),
    ("global", Pat::Word("RwLock"), "locks are shared mutable state"),
    ("global", Pat::Word("OnceLock"), "a lazily initialised global"),
    ("global", Pat::Word("LazyLock"), "a lazily initialised global"),
    ("clock", Pat::Path("std::time"), "`std::time`: the clock"),
    ("clock", Pat::Word("Instant"), "`Instant`: the clock"),
    ("clock", Pat::Word("SystemTime"), "`SystemTime`: the clock"),
    ("clock", Pat::Word("UNIX_EPOCH"), "`UNIX_EPOCH`: the clock"),
    ("random", Pat::Word("RandomState"), "`RandomState`: randomly seeded hashing"),
    ("random", Pat::Word("HashMap"), "`HashMap`: randomly seeded hashing, random iteration order"),
    ("random", Pat::Word("HashSet"), "`HashSet`: randomly seeded hashing, random iteration order"),
    ("random", Pat::Path("std::random"), "`std::random`: randomness"),
    ("random", Pat::Path("rand::"), "the `rand` crate: randomness"),
    ("random", Pat::Word("rand_core"), "randomness"),
    ("random", Pat::Word("getrandom"), "`getrandom`: randomness"),
    ("random", Pat::Word("fastrand"), "randomness"),
    ("random", Pat::Word("thread_rng"), "randomness"),
    ("random", Pat::Word("OsRng"), "randomness"),
    ("system", Pat::Path("std::fs"), "`std::fs`: files"),
    ("system", Pat::Path("std::io"), "`std::io`: input and output"),
    ("system", Pat::Path("std::net"), "`std::net`: the network"),
    ("system", Pat::Path("std::os"), "`std::os`: the operating system"),
    ("system", Pat::Path("std::process"), "`std::process`: processes"),
    ("system", Pat::Path("std::env"), "`std::env`: the environment"),
    ("system", Pat::Path("std::thread"), "`std::thread`: threads"),
    ("system", Pat::Path("std::panic"), "`std::panic`: panic hooks and catching are global state"),
    ("system", Pat::Macro("print"), "printing is output"),
    ("system", Pat::Macro("println"), "printing is output"),
    ("system", Pat::Macro("eprint"), "printing is output"),
    ("system", Pat::Macro("eprintln"), "printing is output"),
    ("system", Pat::Macro("dbg"), "printing is output"),
    ("ffi", Pat::Path("libc::"), "`libc`: system calls and foreign functions"),
    ("ffi", Pat::Path("nix::"), "`nix`: system calls"),
    ("ffi", Pat::Seq("extern", "\""), "foreign functions"),
    ("ffi", Pat::Seq("extern", "{"), "foreign functions"),
    (
        "effects",
        Pat::Path("Effects::"),
        "names an `Effects` constructor or method by path: effects go only through `out.METHOD(..)`",
    ),
    ("effects", Pat::Seq("Effects", "{"), "builds an `Effects` by hand"),
    ("effects", Pat::Word("transmute"), "`transmute` reinterprets memory"),
    ("effects", Pat::Path("mem::swap"), "`mem::swap` can replace a whole `Effects`"),
    ("effects", Pat::Path("mem::replace"), "`mem::replace` can replace a whole `Effects`"),
    ("effects", Pat::Path("mem::take"), "`mem::take` can replace a whole `Effects`"),
    ("effects", Pat::Word("clone_from"), "`clone_from` can replace a whole `Effects`"),
];

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Blanks comments and the contents of string and character literals, so
/// that rules see only code. Keeps every newline and the literals' quotes.
fn strip_code(src: &str) -> Vec<char> {
    let s: Vec<char> = src.chars().collect();
    let mut out = s.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for c in out.iter_mut().take(to).skip(from) {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            let start = i;
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
            blank(&mut out, start, i);
        } else if c == '/' && next == Some('*') {
            let start = i;
            let mut depth = 0;
            while i < s.len() {
                if s[i] == '/' && s.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if s[i] == '*' && s.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            blank(&mut out, start, i);
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !is_ident(s[i - 1]) || matches!(s[i - 1], 'b' | 'c') && (i < 2 || !is_ident(s[i - 2])))
        {
            // A raw string r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while j < s.len() && s[j] == '#' {
                hashes += 1;
                j += 1;
            }
            if j < s.len() && s[j] == '"' {
                let start = j + 1;
                let mut k = start;
                'find: while k < s.len() {
                    if s[k] == '"' && (0..hashes).all(|h| s.get(k + 1 + h) == Some(&'#')) {
                        break 'find;
                    }
                    k += 1;
                }
                blank(&mut out, start, k);
                i = (k + 1 + hashes).min(s.len());
            } else {
                i += 1;
            }
        } else if c == '"' {
            let start = i + 1;
            let mut k = start;
            while k < s.len() && s[k] != '"' {
                if s[k] == '\\' {
                    k += 1;
                }
                k += 1;
            }
            blank(&mut out, start, k.min(s.len()));
            i = k + 1;
        } else if c == '\'' {
            // A character literal, or a lifetime or label.
            if next == Some('\\') {
                let mut k = i + 3;
                while k < s.len() && s[k] != '\'' {
                    k += 1;
                }
                blank(&mut out, i + 1, k.min(s.len()));
                i = k + 1;
            } else if s.get(i + 2) == Some(&'\'') {
                blank(&mut out, i + 1, i + 2);
                i += 3;
            } else {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

/// One top-level item of a file: its character range and lines (1-based).
struct Item {
    start: usize,
    end: usize,
    first_line: u32,
    last_line: u32,
    /// Its leading keyword after attributes and visibility (`fn`, `impl`,
    /// `use`, `static`, a macro's name, ...).
    keyword: String,
}

fn split_items(code: &[char]) -> Vec<Item> {
    let mut items = Vec::new();
    let mut line_at = Vec::with_capacity(code.len() + 1);
    let mut line = 1u32;
    for &c in code {
        line_at.push(line);
        if c == '\n' {
            line += 1;
        }
    }
    line_at.push(line);
    let mut i = 0;
    while i < code.len() {
        while i < code.len() && code[i].is_whitespace() {
            i += 1;
        }
        if i >= code.len() {
            break;
        }
        let start = i;
        let mut depth = 0i32;
        while i < code.len() {
            match code[i] {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' => depth -= 1,
                '}' => {
                    depth -= 1;
                    if depth <= 0 {
                        i += 1;
                        break;
                    }
                }
                ';' if depth <= 0 => {
                    i += 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        let end = i.min(code.len());
        let keyword = item_keyword(&code[start..end]);
        items.push(Item { start, end, first_line: line_at[start], last_line: line_at[end.saturating_sub(1)], keyword });
    }
    items
}

fn item_keyword(text: &[char]) -> String {
    let s: String = text.iter().collect();
    let mut rest = s.trim_start();
    loop {
        if rest.starts_with("#") {
            // Skip one attribute `#[...]` or `#![...]`.
            let mut depth = 0;
            let mut cut = rest.len();
            for (i, c) in rest.char_indices() {
                match c {
                    '[' => depth += 1,
                    ']' => {
                        depth -= 1;
                        if depth == 0 {
                            cut = i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            rest = rest[cut..].trim_start();
        } else if let Some(r) = rest.strip_prefix("pub") {
            let r = r.trim_start();
            rest = if r.starts_with('(') { r.split_once(')').map(|x| x.1).unwrap_or(r).trim_start() } else { r };
        } else {
            break;
        }
    }
    let word: String = rest.chars().take_while(|c| is_ident(*c) || *c == ':').collect();
    // `cmc::settings!` -> `settings`
    word.rsplit("::").next().unwrap_or("").to_string()
}

fn find_all(code: &[char], pat: Pat<'_>) -> Vec<usize> {
    let mut hits = Vec::new();
    let matches_at =
        |i: usize, lit: &str| -> bool { lit.chars().enumerate().all(|(k, ch)| code.get(i + k) == Some(&ch)) };
    // A quote before a word makes it a lifetime (`'static`), not the keyword.
    let boundary_before = |i: usize| i == 0 || !(is_ident(code[i - 1]) || code[i - 1] == '\'');
    let boundary_after = |i: usize| code.get(i).is_none_or(|c| !is_ident(*c));
    let skip_ws = |mut i: usize| {
        while code.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        i
    };
    for i in 0..code.len() {
        match pat {
            Pat::Word(w) => {
                if boundary_before(i) && matches_at(i, w) && boundary_after(i + w.chars().count()) {
                    hits.push(i);
                }
            }
            Pat::Prefix(w) => {
                if boundary_before(i) && matches_at(i, w) {
                    hits.push(i);
                }
            }
            Pat::Path(p) => {
                let n = p.chars().count();
                let tail_ok = p.ends_with(':') || boundary_after(i + n);
                if boundary_before(i) && matches_at(i, p) && tail_ok {
                    hits.push(i);
                }
            }
            Pat::Macro(m) => {
                let n = m.chars().count();
                if boundary_before(i) && matches_at(i, m) && boundary_after(i + n) {
                    let j = skip_ws(i + n);
                    if code.get(j) == Some(&'!') && code.get(j + 1) != Some(&'=') {
                        hits.push(i);
                    }
                }
            }
            Pat::Seq(a, b) => {
                let na = a.chars().count();
                let a_word = a.chars().all(is_ident);
                if matches_at(i, a) && (!a_word || (boundary_before(i) && boundary_after(i + na))) {
                    let j = skip_ws(i + na);
                    let nb = b.chars().count();
                    let b_word = b.chars().all(is_ident);
                    if matches_at(j, b) && (!b_word || boundary_after(j + nb)) {
                        hits.push(i);
                    }
                }
            }
        }
    }
    hits
}

/// A static declared in a package: whether it is `mut`, and whether its
/// type has interior mutability.
#[derive(Clone, Debug)]
struct StaticDecl {
    mutable: bool,
    interior: Option<String>,
    file: String,
    at: String,
}

const INTERIOR: &[&str] =
    &["Atomic", "Cell", "Mutex", "RwLock", "Once", "Lazy", "UnsafeCell", "Condvar", "Barrier", "LocalKey"];

fn statics_in(code: &[char], file: &str, out: &mut HashMap<String, Vec<StaticDecl>>) {
    for i in find_all(code, Pat::Word("static")) {
        let mut j = i + "static".len();
        let skip = |j: &mut usize| {
            while code.get(*j).is_some_and(|c| c.is_whitespace()) {
                *j += 1;
            }
        };
        skip(&mut j);
        let mut mutable = false;
        let word: String = code[j..].iter().take_while(|c| is_ident(**c)).collect();
        if word == "mut" {
            mutable = true;
            j += 3;
            skip(&mut j);
        }
        let name: String = code[j..].iter().take_while(|c| is_ident(**c)).collect();
        if name.is_empty() || name == "ref" {
            continue;
        }
        j += name.chars().count();
        skip(&mut j);
        if code.get(j) != Some(&':') {
            continue;
        }
        let ty: String = code[j + 1..].iter().take_while(|c| **c != '=' && **c != ';').collect();
        let interior = INTERIOR.iter().find(|w| ty.contains(**w)).map(|w| w.to_string());
        let line = code[..i].iter().filter(|c| **c == '\n').count() + 1;
        let decl = StaticDecl { mutable, interior, file: file.to_string(), at: format!("{}:{line}", short_path(file)) };
        out.entry(name).or_default().push(decl);
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn package_dir(file: &Path) -> Option<PathBuf> {
    let mut d = file.parent();
    while let Some(dir) = d {
        if dir.join("Cargo.toml").is_file() {
            return Some(dir.to_path_buf());
        }
        d = dir.parent();
    }
    None
}

struct SourceScanner {
    /// The folders whose sources are scanned: the repository's, and each
    /// user crate's given with `--crate`.
    roots: Vec<PathBuf>,
    trusted: Vec<PathBuf>,
    package_statics: HashMap<PathBuf, Rc<HashMap<String, Vec<StaticDecl>>>>,
}

impl SourceScanner {
    fn statics_of(&mut self, file: &Path) -> Rc<HashMap<String, Vec<StaticDecl>>> {
        let Some(pkg) = package_dir(file) else { return Rc::new(HashMap::new()) };
        if let Some(s) = self.package_statics.get(&pkg) {
            return s.clone();
        }
        let mut files = Vec::new();
        rust_files(&pkg.join("src"), &mut files);
        let mut decls = HashMap::new();
        for f in files {
            if let Ok(text) = std::fs::read_to_string(&f) {
                statics_in(&strip_code(&text), &f.display().to_string(), &mut decls);
            }
        }
        let decls = Rc::new(decls);
        self.package_statics.insert(pkg, decls.clone());
        decls
    }

    /// Scans the items of each file that the core's code came from.
    fn scan(&mut self, lines: &BTreeMap<Rc<str>, BTreeSet<u32>>, report: &mut CoreReport) {
        for (file, reached) in lines {
            let path = Path::new(&**file);
            if !self.roots.iter().any(|r| path.starts_with(r)) || self.trusted.iter().any(|t| path.starts_with(t)) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(path) else {
                report
                    .failures
                    .push(("source:unreadable".into(), format!("{}: cannot read the source", short_path(file))));
                continue;
            };
            report.source_files += 1;
            let original: Vec<&str> = text.lines().collect();
            let code = strip_code(&text);
            let items = split_items(&code);
            let statics = self.statics_of(path);
            let mut seen = HashSet::new();
            for item in &items {
                let is_reached = reached.iter().any(|l| (item.first_line..=item.last_line).contains(l));
                let always = matches!(
                    item.keyword.as_str(),
                    "use" | "extern" | "macro_rules" | "unsafe" | "thread_local" | "global_asm" | "asm"
                ) || (item.keyword == "static"
                    && !find_all(&code[item.start..item.end], Pat::Seq("static", "mut")).is_empty());
                if !is_reached && !always {
                    continue;
                }
                report.source_items += 1;
                let body = &code[item.start..item.end];
                let line_of =
                    |off: usize| -> u32 { item.first_line + body[..off].iter().filter(|c| **c == '\n').count() as u32 };
                let mut push = |tag: &str, off: usize, why: String| {
                    let line = line_of(off);
                    if !seen.insert((tag.to_string(), line, why.clone())) {
                        return;
                    }
                    let snippet = original.get(line as usize - 1).map(|l| l.trim()).unwrap_or("");
                    report
                        .failures
                        .push((format!("source:{tag}"), format!("{}:{line}: `{snippet}`: {why}", short_path(file))));
                };
                for (tag, pat, why) in SOURCE_RULES {
                    for off in find_all(body, *pat) {
                        push(tag, off, why.to_string());
                    }
                }
                // Uses of mutable or interior-mutable statics by name.
                for (name, decls) in statics.iter() {
                    // A name declared in this file means that declaration;
                    // otherwise any of the package's (a path could reach it).
                    let here: Vec<&StaticDecl> = decls.iter().filter(|d| *d.file == **file).collect();
                    let candidates = if here.is_empty() { decls.iter().collect() } else { here };
                    for decl in candidates {
                        if !decl.mutable && decl.interior.is_none() {
                            continue;
                        }
                        for off in find_all(body, Pat::Word(name)) {
                            let before: String = body[off.saturating_sub(12)..off].iter().collect();
                            let declares = before.trim_end().ends_with("mut") || before.trim_end().ends_with("static");
                            if declares {
                                continue;
                            }
                            if decl.mutable {
                                push("static-mut", off, format!("uses `static mut {name}` (declared at {})", decl.at));
                            } else {
                                let why = format!(
                                    "uses static `{name}` (declared at {}), which has interior mutability ({})",
                                    decl.at,
                                    decl.interior.as_deref().unwrap_or("")
                                );
                                push("global", off, why);
                            }
                        }
                    }
                }
                // A parameter `NAME: &mut Effects` may be used only as `NAME.METHOD(..)`
                // or passed on: not overwritten, cloned or swapped.
                for off in find_all(body, Pat::Word("Effects")) {
                    let before: String = body[off.saturating_sub(48)..off].iter().collect();
                    let before = before.trim_end();
                    let Some(b) = before.strip_suffix("&mut").or_else(|| before.strip_suffix("&mut cmc::")) else {
                        continue;
                    };
                    let b = b.trim_end();
                    let Some(b) = b.strip_suffix(':') else { continue };
                    let name: String = b
                        .trim_end()
                        .chars()
                        .rev()
                        .take_while(|c| is_ident(*c))
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect();
                    if name.is_empty() || name == "_" {
                        continue;
                    }
                    let name_chars: Vec<char> = name.chars().collect();
                    for hit in find_all(body, Pat::Word(&name)) {
                        let after = hit + name_chars.len();
                        let mut j = after;
                        while body.get(j).is_some_and(|c| c.is_whitespace()) {
                            j += 1;
                        }
                        let deref_before = {
                            let mut k = hit;
                            while k > 0 && body[k - 1].is_whitespace() {
                                k -= 1;
                            }
                            k > 0 && body[k - 1] == '*'
                        };
                        let assigns = body.get(j) == Some(&'=') && body.get(j + 1) != Some(&'=');
                        if deref_before && assigns {
                            push("effects", hit, format!("overwrites the whole `Effects` `*{name}`"));
                        }
                        let rest: String = body[j..(j + 12).min(body.len())].iter().collect();
                        if rest.starts_with(".clone()") || rest.starts_with(".clone_from") {
                            push("effects", hit, format!("copies the `Effects` `{name}`"));
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Cores written in C.

/// Why a core may not touch `struct cmc_effects` itself.
const C_EFFECTS_WHY: &str = "a core emits effects only through cmc.h's cmc_send() ... cmc_not_enabled(), never by touching `struct cmc_effects` (its buffer `o`, or an entry of it) itself";

/// The source rules for a core written in C. They are matched in the
/// preprocessed source, so that a macro cannot hide what it expands to, on
/// the lines that come from the core's own files: the lines of cmc.h and of
/// the system headers are trusted (cmc.h's effect functions are the ones
/// that write the buffer). The machine code walk sees everything else
/// (calls, data, instructions); `asm` is here because an `asm` statement
/// can do what no instruction list foresees, and the effects buffer because
/// a write to it looks like cmc_send() in machine code. A member `o`
/// accessed in any way (`out->o[0].len = 3`, `&out->o[1]`, `x.o`) is
/// reported, whatever struct it belongs to: the gate cannot tell types, so
/// a core names its own members otherwise.
const C_SOURCE_RULES: &[(&str, Pat<'static>, &str)] = &[
    ("asm", Pat::Word("asm"), "inline assembly"),
    ("asm", Pat::Word("__asm"), "inline assembly"),
    ("asm", Pat::Word("__asm__"), "inline assembly"),
    ("effects", Pat::Seq("->", "o"), C_EFFECTS_WHY),
    ("effects", Pat::Seq(".", "o"), C_EFFECTS_WHY),
    ("effects", Pat::Seq("struct", "cmc_effect"), C_EFFECTS_WHY),
    (
        "effects",
        Pat::Prefix("cmc__"),
        "cmc.h's internal helpers (cmc__*) hand out entries of the effects buffer; a core calls cmc_send() ... cmc_not_enabled()",
    ),
];

/// One line of preprocessed C: the file and line it came from, and whether
/// that file is trusted.
struct CLine {
    file: Rc<str>,
    line: u32,
    trusted: bool,
}

/// Scans a C core's preprocessed source `pre` (`cc -E`) with
/// [`C_SOURCE_RULES`], and the original text of each of its own files (the
/// core's `source` and every header of its own it includes) for line
/// directives, which would make the preprocessed lines lie about where
/// they came from (say, claim to be cmc.h's).
fn scan_c(pre: &Path, source: &Path, trusted_header: Option<&Path>, report: &mut CoreReport) -> Result<(), String> {
    let text = std::fs::read_to_string(pre).map_err(|e| format!("{}: {e}", pre.display()))?;
    let header = trusted_header.and_then(|h| std::fs::canonicalize(h).ok());
    // By absolute path only: the gate compiles with absolute paths, and a
    // relative one would be read against whatever directory it runs in.
    let trusted = |file: &str| {
        file.starts_with("/usr/")
            || file.starts_with('<')
            || (file.starts_with('/')
                && header.as_ref().is_some_and(|h| std::fs::canonicalize(file).is_ok_and(|f| f == *h)))
    };
    let mut lines: Vec<CLine> = Vec::new();
    let mut code = String::new();
    let mut files: BTreeMap<Rc<str>, bool> = BTreeMap::new();
    let mut current: (Rc<str>, u32, bool) = (Rc::from(source.display().to_string()), 1, false);
    for l in text.lines() {
        // A line marker: `# LINE "FILE" FLAGS...`.
        if let Some(rest) = l.strip_prefix("# ")
            && let Some((num, file)) = rest.split_once(' ')
            && let Ok(n) = num.parse::<u32>()
            && let Some(file) = file.strip_prefix('"').and_then(|f| f.split('"').next())
        {
            let f: Rc<str> = files.keys().find(|k| ***k == *file).cloned().unwrap_or_else(|| Rc::from(file));
            let t = trusted(file);
            files.insert(f.clone(), t);
            current = (f, n, t);
            continue;
        }
        lines.push(CLine { file: current.0.clone(), line: current.1, trusted: current.2 });
        code.push_str(l);
        code.push('\n');
        current.1 += 1;
    }
    let code = strip_code(&code);
    let mut line_of = Vec::with_capacity(code.len());
    let mut n = 0usize;
    for c in &code {
        line_of.push(n);
        if *c == '\n' {
            n += 1;
        }
    }
    let mut originals: HashMap<Rc<str>, Vec<String>> = HashMap::new();
    let mut snippet = |file: &Rc<str>, line: u32| -> String {
        let text = originals.entry(file.clone()).or_insert_with(|| {
            std::fs::read_to_string(&**file)
                .map(|t| t.lines().map(|l| l.trim().to_string()).collect())
                .unwrap_or_default()
        });
        text.get(line as usize - 1).cloned().unwrap_or_default()
    };
    let mut seen = HashSet::new();
    for (tag, pat, why) in C_SOURCE_RULES {
        for off in find_all(&code, *pat) {
            let at = &lines[line_of[off]];
            if at.trusted || !seen.insert((tag.to_string(), at.file.clone(), at.line)) {
                continue;
            }
            let msg = format!("{}:{}: `{}`: {why}", short_path(&at.file), at.line, snippet(&at.file, at.line));
            report.failures.push((format!("source:{tag}"), msg));
        }
    }
    report.source_items = lines.iter().filter(|l| !l.trusted && !l.file.starts_with('<')).count();
    // The core's own files, as the markers name them, and the core itself.
    let mut own: BTreeSet<String> =
        files.iter().filter(|(f, t)| !**t && Path::new(&***f).is_file()).map(|(f, _)| f.to_string()).collect();
    own.insert(source.display().to_string());
    report.source_files = own.len();
    for file in &own {
        let Ok(text) = std::fs::read_to_string(file) else {
            report.failures.push(("source:unreadable".into(), format!("{}: cannot read the source", short_path(file))));
            continue;
        };
        let code: String = strip_code(&text).into_iter().collect();
        for (i, l) in code.lines().enumerate() {
            let Some(rest) = l.trim_start().strip_prefix('#') else { continue };
            let rest = rest.trim_start();
            if rest.starts_with(|c: char| c.is_ascii_digit())
                || (rest.starts_with("line") && !rest[4..].starts_with(is_ident))
            {
                let line = text.lines().nth(i).unwrap_or("").trim();
                report.failures.push((
                    "source:line-directive".into(),
                    format!(
                        "{}:{}: `{line}`: a line directive makes the lines after it claim another origin, and the gate trusts cmc.h's and the system headers' lines",
                        short_path(file),
                        i + 1
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The C half: for each core, its own object alone (a C core is one
/// translation unit, linked with nothing of the other cores'), every
/// function it defines as a root.
fn c_main(cores_list: &str, trusted_header: Option<&Path>) -> Result<bool, String> {
    let text = std::fs::read_to_string(cores_list).map_err(|e| format!("{cores_list}: {e}"))?;
    let mut all_pass = true;
    const SHOWN_MAX: usize = 40;
    // CORE \t OBJECT \t PREPROCESSED \t SOURCE
    for line in text.lines().filter(|l| !l.is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        let [core, object, pre, source] = f[..] else { return Err(format!("bad C cores line: {line}")) };
        let mut an = Analysis::new(&[PathBuf::from(object)], None, Lang::C)?;
        let mut names: Vec<(String, u64, String)> = Vec::new();
        for (section, funcs) in &an.objects[0].section_functions {
            if section_kind(section) == SectionKind::Code {
                names.extend(funcs.iter().map(|(v, n)| (section.clone(), *v, n.clone())));
            }
        }
        names.sort();
        if names.is_empty() {
            return Err(format!("{core}: the object defines no function (is it a core?)"));
        }
        let roots: Vec<Root> = names
            .iter()
            .map(|(_, _, n)| {
                let d = an.demangle(n);
                Root { method: d.clone(), symbol: d }
            })
            .collect();
        let mut report = CoreReport::default();
        walk_core(&mut an, &roots, &mut report)?;
        scan_c(Path::new(pre), Path::new(source), trusted_header, &mut report)?;
        if report.failures.is_empty() {
            println!(
                "purity_gate: PASS {core} ({} functions defined, {} walked, {} instructions; {} source lines in {} files)",
                roots.len(),
                report.functions,
                report.insns,
                report.source_items,
                report.source_files
            );
            continue;
        }
        all_pass = false;
        report.failures.sort();
        for (tag, msg) in report.failures.iter().take(SHOWN_MAX) {
            println!("purity_gate: FAIL {core}: [{tag}] {msg}");
        }
        if report.failures.len() > SHOWN_MAX {
            println!("purity_gate: FAIL {core}: ... and {} more findings", report.failures.len() - SHOWN_MAX);
        }
    }
    Ok(all_pass)
}

fn main() -> ExitCode {
    match real_main() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("purity_gate: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<bool, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut objects_list = None;
    let mut roots_list = None;
    let mut scan_roots: Vec<PathBuf> = Vec::new();
    let mut trusted = Vec::new();
    let mut libstd = None;
    let mut c_cores = None;
    let mut c_trust = None;
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).cloned().ok_or_else(|| format!("{} needs a value", args[i]))?;
        match args[i].as_str() {
            // Cores written in C: CORE \t OBJECT \t PREPROCESSED \t SOURCE
            // a line, and cmc.h, whose lines the source rules trust.
            "--c-cores" => c_cores = Some(v),
            "--c-trust" => c_trust = Some(PathBuf::from(v)),
            "--objects" => objects_list = Some(v),
            "--roots" => roots_list = Some(v),
            // The first is the repository, which paths are shown relative to.
            "--scan-root" => scan_roots.push(PathBuf::from(v)),
            "--trust" => trusted.push(PathBuf::from(v)),
            "--libstd" => libstd = Some(PathBuf::from(v)),
            other => return Err(format!("unknown argument {other}")),
        }
        i += 2;
    }
    if let Some(list) = c_cores {
        let scan_root = scan_roots.first().cloned().ok_or("--scan-root is required")?;
        let _ = SCAN_ROOT.set(scan_root);
        return c_main(&list, c_trust.as_deref());
    }
    let objects_list = objects_list.ok_or("--objects is required")?;
    let roots_list = roots_list.ok_or("--roots is required")?;
    let scan_root = scan_roots.first().cloned().ok_or("--scan-root is required")?;
    let _ = SCAN_ROOT.set(scan_root);
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
    let objects: Vec<PathBuf> = read(&objects_list)?.lines().filter(|l| !l.is_empty()).map(PathBuf::from).collect();
    // CORE \t METHOD \t ROOT-SYMBOL, in the order the cores were named.
    let mut cores: Vec<(String, Vec<Root>)> = Vec::new();
    for line in read(&roots_list)?.lines().filter(|l| !l.is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        let [core, method, symbol] = f[..] else { return Err(format!("bad roots line: {line}")) };
        let root = Root { method: method.to_string(), symbol: symbol.to_string() };
        match cores.iter_mut().find(|(c, _)| c == core) {
            Some((_, roots)) => roots.push(root),
            None => cores.push((core.to_string(), vec![root])),
        }
    }
    let mut an = Analysis::new(&objects, libstd, Lang::Rust)?;
    let mut scanner = SourceScanner { roots: scan_roots, trusted, package_statics: HashMap::new() };
    let mut all_pass = true;
    const SHOWN_MAX: usize = 40;
    for (core, roots) in &cores {
        let mut report = CoreReport::default();
        let lines = walk_core(&mut an, roots, &mut report)?;
        scanner.scan(&lines, &mut report);
        let methods: Vec<&str> = roots.iter().map(|r| r.method.as_str()).collect();
        if report.failures.is_empty() {
            println!(
                "purity_gate: PASS {core} ({}: {} functions, {} instructions; {} source items in {} files)",
                methods.join(", "),
                report.functions,
                report.insns,
                report.source_items,
                report.source_files
            );
            continue;
        }
        all_pass = false;
        report.failures.sort();
        for (tag, msg) in report.failures.iter().take(SHOWN_MAX) {
            println!("purity_gate: FAIL {core}: [{tag}] {msg}");
        }
        if report.failures.len() > SHOWN_MAX {
            println!("purity_gate: FAIL {core}: ... and {} more findings", report.failures.len() - SHOWN_MAX);
        }
    }
    Ok(all_pass)
}
