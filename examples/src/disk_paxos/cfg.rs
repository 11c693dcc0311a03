//! Reading a TLC configuration file (`.cfg`) of `MCDiskPaxos` or one of its
//! mutant modules into the core's settings and the invariants to check, as
//! `tlc -config FILE.cfg MODULE.tla` reads it.
//!
//! Understood: `CONSTANT`/`CONSTANTS` with `name = value` (integers,
//! strings, model values, sets of them) and `name <- operator`
//! substitutions; `INIT`; `NEXT`; `INVARIANT`/`INVARIANTS`; `\*` and
//! `(* *)` comments. Anything else (another section, an unknown constant, a
//! value the core cannot represent, a missing constant) is an error naming
//! the file and line. This module reads text; the caller reads the file.

use std::fmt;

use super::DiskPaxosSettings;
use super::invariants;
use super::spec::{DISKS_MAX, INPUTS_MAX, PROCS_MAX, layout, quorum};
use super::tla::Names;

/// A configuration cmc does not understand, with the file and line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CfgError {
    /// The configuration file, as the caller named it.
    pub file: String,
    /// 1-based; `None` for what is missing from the whole file.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for CfgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for CfgError {}

/// The TLA+ modules of the calibration set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Module {
    /// `HDiskSynod` with the constant operators and the extra invariants.
    McDiskPaxos,
    /// `MHNext`: phase 1 proposes the process's own input.
    MutOwnValue,
    /// `MHNext`: `Phase1or2Read` never aborts.
    MutNoAbort,
    /// `MHNext`: `EndPhase1or2` does not wait for reads.
    MutSkipRead,
}

impl Module {
    /// Every module, in the order errors list them.
    pub const ALL: [Module; 4] = [Module::McDiskPaxos, Module::MutOwnValue, Module::MutNoAbort, Module::MutSkipRead];

    /// The module's name, as `tlc` and `cmc calibrate` take it.
    pub fn name(self) -> &'static str {
        match self {
            Module::McDiskPaxos => "MCDiskPaxos",
            Module::MutOwnValue => "MutOwnValue",
            Module::MutNoAbort => "MutNoAbort",
            Module::MutSkipRead => "MutSkipRead",
        }
    }

    /// The module a `tlc` argument names: `MCDiskPaxos`, `MCDiskPaxos.tla`
    /// or a path to it.
    pub fn from_arg(arg: &str) -> Result<Module, String> {
        let base = arg.rsplit(['/', '\\']).next().unwrap_or(arg);
        let name = base.strip_suffix(".tla").unwrap_or(base);
        Module::ALL.into_iter().find(|m| m.name() == name).ok_or_else(|| {
            let known: Vec<&str> = Module::ALL.iter().map(|m| m.name()).collect();
            format!("unknown module `{arg}` (cmc ports: {})", known.join(", "))
        })
    }

    /// Whether TLC prints (and orders) `DiskBlock` records as `[bal, mbal,
    /// inp]`: the field names are ordered by first appearance in the parsed
    /// text, and these two modules, parsed first, mention `bal` first.
    pub fn bal_first(self) -> bool {
        matches!(self, Module::MutOwnValue | Module::MutSkipRead)
    }
}

/// What a configuration asks for, in the core's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Calibration {
    /// The module TLC runs.
    pub module: Module,
    /// The constants, as the core's settings.
    pub settings: DiskPaxosSettings,
    /// The model values' names, for printing states as TLC does.
    pub names: Names,
    /// `INIT`'s operator.
    pub init: String,
    /// `NEXT`'s operator.
    pub next: String,
    /// `INVARIANT(S)`, in the file's order.
    pub invariants: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Int(i64),
    Str(String),
    Sym(String),
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) | Tok::Sym(s) => write!(f, "`{s}`"),
            Tok::Int(i) => write!(f, "`{i}`"),
            Tok::Str(s) => write!(f, "`\"{s}\"`"),
        }
    }
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    line: usize,
}

/// A constant's value.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Value {
    Int(i64),
    Str(String),
    Bool(bool),
    Model(String),
    Set(Vec<Value>),
}

/// `name = value` or `name <- operator`.
#[derive(Clone, Debug)]
enum Def {
    Value(Value),
    Subst(String),
}

const SECTIONS: [&str; 6] = ["CONSTANT", "CONSTANTS", "INIT", "NEXT", "INVARIANT", "INVARIANTS"];
const UNSUPPORTED: [&str; 16] = [
    "SPECIFICATION",
    "PROPERTY",
    "PROPERTIES",
    "CONSTRAINT",
    "CONSTRAINTS",
    "ACTION_CONSTRAINT",
    "ACTION_CONSTRAINTS",
    "SYMMETRY",
    "VIEW",
    "CHECK_DEADLOCK",
    "POSTCONDITION",
    "ALIAS",
    "TYPE",
    "TYPE_CONSTRAINT",
    "RECURSIVE",
    "INSTANCE",
];

/// How deep sets may nest in a value. The core's constants are sets of
/// model values or of integers, one deep; the bound makes a deeper value an
/// error naming its line rather than a stack overflow (the reader recurses
/// into sets).
const SET_DEPTH_MAX: usize = 4;

fn is_keyword(s: &str) -> bool {
    SECTIONS.contains(&s) || UNSUPPORTED.contains(&s)
}

struct Reader<'a> {
    file: &'a str,
    tokens: Vec<Token>,
    at: usize,
}

impl Reader<'_> {
    fn error(&self, line: usize, message: impl Into<String>) -> CfgError {
        CfgError { file: self.file.to_string(), line: Some(line), message: message.into() }
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn last_line(&self) -> usize {
        self.tokens.last().map_or(1, |t| t.line)
    }

    fn next(&mut self, what: &str) -> Result<Token, CfgError> {
        match self.tokens.get(self.at) {
            Some(t) => {
                self.at += 1;
                Ok(t.clone())
            }
            None => Err(self.error(self.last_line(), format!("expected {what}, found the end of the file"))),
        }
    }

    /// The next token if it is an identifier that is not a keyword.
    fn name(&mut self) -> Option<(String, usize)> {
        match self.peek() {
            Some(Token { tok: Tok::Ident(s), line }) if !is_keyword(s) => {
                let r = (s.clone(), *line);
                self.at += 1;
                Some(r)
            }
            _ => None,
        }
    }

    /// A value inside `depth` sets.
    fn value(&mut self, depth: usize) -> Result<Value, CfgError> {
        let t = self.next("a value")?;
        match t.tok {
            Tok::Int(i) => Ok(Value::Int(i)),
            Tok::Str(s) => Ok(Value::Str(s)),
            Tok::Ident(s) if s == "TRUE" => Ok(Value::Bool(true)),
            Tok::Ident(s) if s == "FALSE" => Ok(Value::Bool(false)),
            Tok::Ident(s) if !is_keyword(&s) => Ok(Value::Model(s)),
            Tok::Sym(s) if s == "-" => match self.next("an integer")?.tok {
                Tok::Int(i) => Ok(Value::Int(-i)),
                other => Err(self.error(t.line, format!("expected an integer after `-`, found {other}"))),
            },
            Tok::Sym(s) if s == "{" => {
                if depth == SET_DEPTH_MAX {
                    return Err(self.error(
                        t.line,
                        format!("sets nested more than {SET_DEPTH_MAX} deep (limit set_depth_max = {SET_DEPTH_MAX})"),
                    ));
                }
                let mut items = Vec::new();
                if matches!(self.peek(), Some(Token { tok: Tok::Sym(s), .. }) if s == "}") {
                    self.at += 1;
                    return Ok(Value::Set(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    let sep = self.next("`,` or `}`")?;
                    match sep.tok {
                        Tok::Sym(s) if s == "," => {}
                        Tok::Sym(s) if s == "}" => return Ok(Value::Set(items)),
                        other => return Err(self.error(sep.line, format!("expected `,` or `}}`, found {other}"))),
                    }
                }
            }
            other => Err(self.error(
                t.line,
                format!("expected a value (an integer, a string, a model value or a set), found {other}"),
            )),
        }
    }
}

fn tokenize(file: &str, text: &str) -> Result<Vec<Token>, CfgError> {
    let err = |line: usize, message: String| CfgError { file: file.to_string(), line: Some(line), message };
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '\\' && next == Some('*') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '(' && next == Some('*') {
            let start = line;
            let mut depth = 0;
            loop {
                match (chars.get(i), chars.get(i + 1)) {
                    (Some('('), Some('*')) => {
                        depth += 1;
                        i += 2;
                    }
                    (Some('*'), Some(')')) => {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    }
                    (Some(ch), _) => {
                        if *ch == '\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                    (None, _) => return Err(err(start, "a `(*` comment is never closed".to_string())),
                }
            }
        } else if c == '"' {
            let start = line;
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some('\\') if i + 1 < chars.len() => {
                        s.push(chars[i + 1]);
                        i += 2;
                    }
                    Some('\n') | None => return Err(err(start, "a string is never closed".to_string())),
                    Some(ch) => {
                        s.push(*ch);
                        i += 1;
                    }
                }
            }
            out.push(Token { tok: Tok::Str(s), line: start });
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let tok = if word.chars().all(|ch| ch.is_ascii_digit()) {
                Tok::Int(word.parse().map_err(|_| err(line, format!("the integer {word} is too large")))?)
            } else {
                Tok::Ident(word)
            };
            out.push(Token { tok, line });
        } else if c == '<' && next == Some('-') {
            out.push(Token { tok: Tok::Sym("<-".to_string()), line });
            i += 2;
        } else if "={},-[]".contains(c) {
            out.push(Token { tok: Tok::Sym(c.to_string()), line });
            i += 1;
        } else {
            return Err(err(line, format!("unexpected character `{c}`")));
        }
    }
    Ok(out)
}

/// The parsed file: constants with their lines, and the other sections.
struct Parsed {
    constants: Vec<(String, usize, Def)>,
    init: Option<(String, usize)>,
    next: Option<(String, usize)>,
    invariants: Vec<(String, usize)>,
}

fn parse(file: &str, text: &str) -> Result<Parsed, CfgError> {
    let mut r = Reader { file, tokens: tokenize(file, text)?, at: 0 };
    let mut p = Parsed { constants: Vec::new(), init: None, next: None, invariants: Vec::new() };
    while let Some(t) = r.peek().cloned() {
        r.at += 1;
        let Tok::Ident(kw) = &t.tok else {
            return Err(r.error(
                t.line,
                format!("expected a section keyword (CONSTANTS, INIT, NEXT, INVARIANTS), found {}", t.tok),
            ));
        };
        match kw.as_str() {
            "CONSTANT" | "CONSTANTS" => {
                while let Some((name, line)) = r.name() {
                    let op = r.next("`=` or `<-`")?;
                    let def = match &op.tok {
                        Tok::Sym(s) if s == "=" => Def::Value(r.value(0)?),
                        Tok::Sym(s) if s == "<-" => match r.next("an operator name")?.tok {
                            Tok::Ident(o) if !is_keyword(&o) => Def::Subst(o),
                            Tok::Sym(s) if s == "[" => {
                                return Err(
                                    r.error(line, "module-qualified substitutions (`<- [M] op`) are not supported")
                                );
                            }
                            other => {
                                return Err(
                                    r.error(line, format!("expected an operator name after `<-`, found {other}"))
                                );
                            }
                        },
                        other => {
                            return Err(r.error(op.line, format!("expected `=` or `<-` after `{name}`, found {other}")));
                        }
                    };
                    if p.constants.iter().any(|(n, _, _)| *n == name) {
                        return Err(r.error(line, format!("constant `{name}` is assigned twice")));
                    }
                    p.constants.push((name, line, def));
                }
            }
            "INIT" | "NEXT" => {
                let Some(named) = r.name() else {
                    return Err(r.error(t.line, format!("expected an operator name after {kw}")));
                };
                let slot = if kw == "INIT" { &mut p.init } else { &mut p.next };
                if slot.is_some() {
                    return Err(r.error(t.line, format!("{kw} is given twice")));
                }
                *slot = Some(named);
            }
            "INVARIANT" | "INVARIANTS" => {
                while let Some(named) = r.name() {
                    p.invariants.push(named);
                }
            }
            other if UNSUPPORTED.contains(&other) => {
                return Err(r.error(
                    t.line,
                    format!("{other} is not supported by cmc calibrate (CONSTANTS, INIT, NEXT and INVARIANTS are)"),
                ));
            }
            _ => {
                return Err(r.error(
                    t.line,
                    format!("expected a section keyword (CONSTANTS, INIT, NEXT, INVARIANTS), found {}", t.tok),
                ));
            }
        }
    }
    Ok(p)
}

/// The constants `MCDiskPaxos` declares (with the ones it inherits), each
/// to be given exactly once.
const CONSTANTS: [&str; 9] =
    ["N", "Inputs", "NotAnInput", "Disk", "K", "BallotLayout", "QuorumKind", "Ballot", "IsMajority"];

/// Reads configuration `text` (from `file`, for messages) for `module`.
pub fn read(file: &str, text: &str, module: Module) -> Result<Calibration, CfgError> {
    let p = parse(file, text)?;
    let err = |line: usize, message: String| CfgError { file: file.to_string(), line: Some(line), message };
    for (name, line, _) in &p.constants {
        if !CONSTANTS.contains(&name.as_str()) {
            return Err(err(
                *line,
                format!("unknown constant `{name}` (module {} declares {})", module.name(), CONSTANTS.join(", ")),
            ));
        }
    }
    let get = |name: &str| -> Result<(&Def, usize), CfgError> {
        p.constants.iter().find(|(n, _, _)| n == name).map(|(_, l, d)| (d, *l)).ok_or_else(|| CfgError {
            file: file.to_string(),
            line: None,
            message: format!("constant `{name}` is not assigned"),
        })
    };
    let int = |name: &str, lo: i64, hi: i64| -> Result<(i64, usize), CfgError> {
        match get(name)? {
            (Def::Value(Value::Int(i)), line) if (lo..=hi).contains(i) => Ok((*i, line)),
            (Def::Value(Value::Int(i)), line) => {
                Err(err(line, format!("{name} = {i}: cmc's Disk Paxos core takes {name} from {lo} to {hi}")))
            }
            (_, line) => Err(err(line, format!("{name} must be an integer"))),
        }
    };
    let string = |name: &str, known: &[&str]| -> Result<(u8, usize), CfgError> {
        match get(name)? {
            (Def::Value(Value::Str(s)), line) => match known.iter().position(|k| k == s) {
                Some(i) => Ok((i as u8, line)),
                None => Err(err(line, format!("{name} = \"{s}\" is none of {}", quoted(known)))),
            },
            (_, line) => Err(err(line, format!("{name} must be one of the strings {}", quoted(known)))),
        }
    };
    let subst = |name: &str, op: &str| -> Result<(), CfgError> {
        match get(name)? {
            (Def::Subst(o), _) if o == op => Ok(()),
            (_, line) => Err(err(line, format!("cmc ports `{name} <- {op}` only (MCDiskPaxos's implementation)"))),
        }
    };

    let (n, _) = int("N", 1, PROCS_MAX as i64)?;
    let (k, k_line) = int("K", 1, u8::MAX as i64)?;
    let (ballot_layout, _) = string("BallotLayout", &layout::NAMES)?;
    let (quorum_kind, quorum_line) = string("QuorumKind", &quorum::NAMES)?;
    subst("Ballot", "BallotImpl")?;
    subst("IsMajority", "IsMajorityImpl")?;

    let (nai, nai_line) = match get("NotAnInput")? {
        (Def::Value(Value::Model(m)), line) => (m.clone(), line),
        (_, line) => {
            return Err(err(line, "NotAnInput must be a model value (as `NotAnInput = NotAnInput`)".to_string()));
        }
    };
    let (mut inputs, inputs_line) = match get("Inputs")? {
        (Def::Value(Value::Set(items)), line) => {
            let mut names = Vec::new();
            for item in items {
                match item {
                    Value::Model(m) => names.push(m.clone()),
                    _ => return Err(err(line, "Inputs must be a set of model values".to_string())),
                }
            }
            (names, line)
        }
        (_, line) => return Err(err(line, "Inputs must be a set of model values".to_string())),
    };
    // TLC orders model values by name (Java's String order, the same as
    // byte order on these ASCII names).
    inputs.sort();
    inputs.dedup();
    if inputs.is_empty() || inputs.len() > INPUTS_MAX {
        return Err(err(
            inputs_line,
            format!("Inputs has {} values; cmc's core takes 1 to {INPUTS_MAX}", inputs.len()),
        ));
    }
    if inputs.contains(&nai) {
        return Err(err(nai_line, format!("NotAnInput = {nai} is one of the Inputs")));
    }
    let not_an_input_rank = inputs.iter().filter(|i| **i < nai).count() as u8;

    let disks = match get("Disk")? {
        (Def::Value(Value::Set(items)), line) => {
            let mut ds = Vec::new();
            for item in items {
                match item {
                    Value::Int(i) => ds.push(*i),
                    _ => return Err(err(line, "Disk must be a set of integers".to_string())),
                }
            }
            ds.sort();
            ds.dedup();
            let count = ds.len() as i64;
            if ds != (1..=count).collect::<Vec<_>>() || ds.is_empty() || ds.len() > DISKS_MAX {
                return Err(err(
                    line,
                    format!("cmc's Disk Paxos core takes Disk = {{1, ..., n}} with n from 1 to {DISKS_MAX}"),
                ));
            }
            ds.len() as u8
        }
        (_, line) => return Err(err(line, "Disk must be a set of integers".to_string())),
    };

    let settings = DiskPaxosSettings {
        procs: n as u8,
        disks,
        inputs: inputs.len() as u8,
        k: k as u8,
        ballot_layout,
        quorum_kind,
        not_an_input_rank,
        ..DiskPaxosSettings::default()
    };
    let (init, init_line) = p.init.clone().ok_or_else(|| CfgError {
        file: file.to_string(),
        line: None,
        message: "no INIT (cmc calibrate needs INIT HInit and NEXT; SPECIFICATION is not supported)".to_string(),
    })?;
    if init != "HInit" {
        return Err(err(init_line, format!("INIT {init}: cmc ports HInit (with the history variables) only")));
    }
    let (next, next_line) = p.next.clone().ok_or_else(|| CfgError {
        file: file.to_string(),
        line: None,
        message: "no NEXT (cmc calibrate needs INIT HInit and NEXT)".to_string(),
    })?;
    let mut settings = settings;
    match (next.as_str(), module) {
        ("HNext", _) => {}
        ("MHNext", Module::McDiskPaxos) => {
            return Err(err(
                next_line,
                "NEXT MHNext: module MCDiskPaxos has no MHNext (the mutant modules do)".to_string(),
            ));
        }
        ("MHNext", Module::MutOwnValue) => settings.bug_own_value = 1,
        ("MHNext", Module::MutNoAbort) => settings.bug_no_abort = 1,
        ("MHNext", Module::MutSkipRead) => settings.bug_skip_read = 1,
        _ => return Err(err(next_line, format!("NEXT {next}: cmc ports HNext and the mutants' MHNext only"))),
    }
    let mut invs: Vec<String> = Vec::new();
    for (name, line) in &p.invariants {
        if invariants::by_name(name).is_none() {
            let known: Vec<&str> = invariants::ALL.iter().map(|(n, _)| *n).collect();
            return Err(err(*line, format!("unknown invariant `{name}` (known: {})", known.join(", "))));
        }
        if invs.contains(name) {
            return Err(err(*line, format!("invariant `{name}` is listed twice")));
        }
        invs.push(name.clone());
    }
    if !settings.is_majority(settings.disk_mask()) {
        return Err(err(quorum_line, "IsMajority(Disk) is false (DiskSynod's ASSUME fails)".to_string()));
    }
    settings.check().map_err(|e| err(k_line, format!("these constants are beyond cmc's Disk Paxos core: {e}")))?;
    Ok(Calibration {
        module,
        settings,
        names: Names { inputs, not_an_input: nai, bal_first: module.bal_first() },
        init,
        next,
        invariants: invs,
    })
}

fn quoted(known: &[&str]) -> String {
    known.iter().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", ")
}
