//! `cmc explore`: a model's state graph in the browser, one action at a
//! time. A small web server on the loopback interface serves one page and
//! a JSON interface over a [`Session`]: the walk so far (its trace drawn as
//! a sequence chart, its last world decoded, the properties that hold
//! there), the actions enabled next as buttons, back and forward, and a
//! counterexample file to load and step through.
//!
//! The walk (a list of action tokens) is the whole state of the server:
//! every request replays it through the real core or program, so what the
//! page shows is what a search would reach. Requests are answered one at a
//! time, on the calling thread (a program model's processes belong to it).

use std::io::Read as _;
use std::net::{Ipv4Addr, SocketAddr};

use serde::Serialize;
use tiny_http::{Header, Method, Request, Response, Server};

use cmc::CounterexampleFile;
use cmc::catalog::DynModel;
use cmc::session::{Session, Walk};

/// What the page asks for and gets back.
#[derive(Serialize)]
struct State<'a> {
    title: &'a str,
    path: &'a [String],
    can_back: bool,
    can_forward: bool,
    walk: Walk,
    chart: String,
}

/// The walk and its redo stack.
struct Explorer<'m> {
    model: &'m dyn DynModel,
    session: Box<dyn Session + 'm>,
    title: String,
    path: Vec<String>,
    /// Steps undone by "back", most recent last, for "forward".
    undone: Vec<String>,
}

impl Explorer<'_> {
    fn state(&mut self) -> Result<String, String> {
        let walk = self.session.walk(&self.path)?;
        let chart = cmc::chart::svg(&walk.trace, self.model.identity().network, None);
        let state = State {
            title: &self.title,
            path: &self.path,
            can_back: !self.path.is_empty(),
            can_forward: !self.undone.is_empty(),
            walk,
            chart,
        };
        serde_json::to_string(&state).map_err(|e| e.to_string())
    }

    /// Carries out one request of the JSON interface; the new state, or
    /// what is wrong with the request (the walk is then unchanged).
    fn answer(&mut self, method: &Method, url: &str, body: &str) -> Result<String, String> {
        match (method, url) {
            (Method::Get, "/api/state") => {}
            (Method::Post, "/api/take") => {
                let token: String = serde_json::from_str(body).map_err(|e| format!("not a JSON string: {e}"))?;
                if self.path.len() >= WALK_LENGTH_MAX {
                    return Err(format!("the walk is {WALK_LENGTH_MAX} steps long (limit walk_length_max)"));
                }
                let mut path = self.path.clone();
                path.push(token);
                self.session.walk(&path)?;
                self.path = path;
                self.undone.clear();
            }
            (Method::Post, "/api/back") => {
                if let Some(token) = self.path.pop() {
                    self.undone.push(token);
                }
            }
            (Method::Post, "/api/forward") => {
                if let Some(token) = self.undone.last() {
                    let mut path = self.path.clone();
                    path.push(token.clone());
                    // Walked before it is kept: a step that fails leaves the
                    // walk as it was.
                    self.session.walk(&path)?;
                    self.undone.pop();
                    self.path = path;
                }
            }
            (Method::Post, "/api/restart") => {
                self.path.clear();
                self.undone.clear();
            }
            (Method::Post, "/api/load") => {
                let file =
                    CounterexampleFile::from_json(body).map_err(|e| format!("not a cmc counterexample file: {e}"))?;
                let identity = self.model.identity();
                if file.model != identity {
                    return Err(format!(
                        "the file is of another model or configuration ({} against {})",
                        serde_json::to_string(&file.model).unwrap_or_default(),
                        serde_json::to_string(&identity).unwrap_or_default()
                    ));
                }
                let path: Vec<String> = file.steps.iter().map(|s| s.action.clone()).collect();
                if path.len() > WALK_LENGTH_MAX {
                    return Err(format!(
                        "the file has {} steps (limit walk_length_max = {WALK_LENGTH_MAX})",
                        path.len()
                    ));
                }
                self.session.walk(&path)?;
                // Loaded to its start: "forward" steps through it.
                self.undone = path.into_iter().rev().collect();
                self.path.clear();
            }
            _ => return Err(format!("no such request: {method} {url}")),
        }
        self.state()
    }
}

/// Serves `model` on 127.0.0.1:`port` (0: any free port) until the process
/// is stopped. `ready` is told the address once the server listens.
pub fn serve(model: &dyn DynModel, title: &str, port: u16, ready: impl FnOnce(SocketAddr)) -> Result<(), String> {
    let session = model.session().map_err(|e| e.to_string())?;
    let server =
        Server::http((Ipv4Addr::LOCALHOST, port)).map_err(|e| format!("listening on 127.0.0.1:{port}: {e}"))?;
    let address = match server.server_addr().to_ip() {
        Some(a) => a,
        None => return Err("the server has no IP address".to_string()),
    };
    let mut explorer = Explorer { model, session, title: title.to_string(), path: Vec::new(), undone: Vec::new() };
    ready(address);
    for mut request in server.incoming_requests() {
        if let Err((status, why)) = admissible(&request, address.port()) {
            respond(request, status, "text/plain; charset=utf-8", why);
            continue;
        }
        let mut body = String::new();
        let limit = BODY_BYTES_MAX as u64 + 1;
        if request.as_reader().take(limit).read_to_string(&mut body).is_err() {
            respond(request, 400, "text/plain", "the request's body is not text".to_string());
            continue;
        }
        if body.len() > BODY_BYTES_MAX {
            respond(request, 413, "text/plain", format!("a body over {BODY_BYTES_MAX} bytes (limit body_bytes_max)"));
            continue;
        }
        let url = request.url().to_string();
        let method = request.method().clone();
        match (&method, url.as_str()) {
            (Method::Get, "/") => respond(request, 200, "text/html; charset=utf-8", PAGE.to_string()),
            _ => match explorer.answer(&method, &url, &body) {
                Ok(json) => respond(request, 200, "application/json", json),
                Err(e) => respond(request, 400, "text/plain; charset=utf-8", e),
            },
        }
    }
    Ok(())
}

/// The largest request body (a counterexample file) the server reads.
const BODY_BYTES_MAX: usize = 4 << 20;
/// The longest walk the server keeps.
const WALK_LENGTH_MAX: usize = 10_000;

/// Whether a request may be answered: it names this server's own address
/// (a page of another site that made its name resolve to 127.0.0.1, DNS
/// rebinding, does not), and a request that changes the walk is JSON,
/// which a page of another origin cannot send without a preflight this
/// server never grants.
fn admissible(request: &Request, port: u16) -> Result<(), (u16, String)> {
    let header = |name: &'static str| {
        request.headers().iter().find(|h| h.field.equiv(name)).map(|h| h.value.as_str().to_string())
    };
    let host = header("Host").unwrap_or_default();
    if ![format!("127.0.0.1:{port}"), format!("localhost:{port}")].contains(&host) {
        return Err((403, format!("Host `{host}`: this server answers only 127.0.0.1:{port} and localhost:{port}")));
    }
    if *request.method() == Method::Post && !header("Content-Type").is_some_and(|t| t.starts_with("application/json")) {
        return Err((415, "a POST must be application/json".to_string()));
    }
    Ok(())
}

fn respond(request: Request, status: u16, content_type: &str, body: String) {
    let mut response = Response::from_string(body).with_status_code(status);
    if let Ok(h) = Header::from_bytes("Content-Type", content_type) {
        response = response.with_header(h);
    }
    // A client that went away changes nothing.
    let _ = request.respond(response);
}

/// The page: no build step, no asset, no library; it asks the JSON
/// interface and draws what it gets.
const PAGE: &str = r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>cmc explore</title>
<style>
body { font-family: sans-serif; margin: 1em; }
#error { color: #b00020; font-family: monospace; white-space: pre-wrap; }
button.action { display: block; margin: 2px 0; font-family: monospace; }
table { border-collapse: collapse; font-family: monospace; font-size: 12px; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
.holds { color: #1b7a3a; } .fails { color: #b00020; font-weight: bold; }
#columns { display: flex; gap: 2em; align-items: flex-start; }
</style>
</head>
<body>
<h1 id="title">cmc explore</h1>
<div id="controls">
<button id="back">&larr; back</button>
<button id="forward">forward &rarr;</button>
<button id="restart">restart</button>
<label>load a counterexample: <input type="file" id="load" accept=".json"></label>
</div>
<p id="error"></p>
<div id="columns">
<div><h2>Next</h2><div id="actions"></div></div>
<div><h2>Properties</h2><ul id="properties"></ul><h2>World</h2><table id="world"></table></div>
</div>
<h2>Path</h2>
<div id="chart"></div>
<script>
"use strict";
function text(s) { const d = document.createElement("div"); d.textContent = s; return d.innerHTML; }
function show(state) {
  document.getElementById("error").textContent = "";
  document.getElementById("title").textContent = state.title + " (step " + state.path.length + ")";
  document.getElementById("back").disabled = !state.can_back;
  document.getElementById("forward").disabled = !state.can_forward;
  const actions = document.getElementById("actions");
  actions.innerHTML = "";
  for (const c of state.walk.enabled) {
    const b = document.createElement("button");
    b.className = "action";
    b.dataset.token = c.token;
    b.textContent = c.label;
    b.onclick = () => call("/api/take", c.token);
    actions.appendChild(b);
  }
  if (state.walk.enabled.length === 0) actions.textContent = "no action is enabled";
  for (const e of state.walk.errors) actions.insertAdjacentHTML("beforeend", "<p class=\"fails\">" + text(e) + "</p>");
  const props = document.getElementById("properties");
  props.innerHTML = "";
  for (const p of state.walk.properties) {
    const li = document.createElement("li");
    li.dataset.property = p.name;
    const pending = p.kind === "eventually" && state.walk.enabled.length > 0;
    const verdict = p.error ? "error: " + p.error : pending ? "checked where no action is enabled"
      : p.holds === null ? "-" : p.holds ? "holds" : "fails";
    li.className = p.holds === false || p.error ? "fails" : "holds";
    li.dataset.holds = p.holds === null ? "" : String(p.holds);
    li.textContent = p.kind + " " + p.name + ": " + verdict;
    props.appendChild(li);
  }
  const world = document.getElementById("world");
  const last = state.walk.trace[state.walk.trace.length - 1];
  world.innerHTML = "";
  if (last) {
    last.world.nodes.forEach((n, i) => {
      world.insertAdjacentHTML("beforeend", "<tr><th>node " + i + "</th><td>" + text(n.state) + "</td></tr>");
    });
    world.insertAdjacentHTML("beforeend", "<tr><th>in flight</th><td>" + text(last.world.network.join(", ")) + "</td></tr>");
    world.insertAdjacentHTML("beforeend", "<tr><th>replies</th><td>" + text(last.world.replies.join(", ")) + "</td></tr>");
  }
  document.getElementById("chart").innerHTML = state.chart;
}
async function call(url, body) {
  const post = { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const r = await fetch(url, url === "/api/state" ? { method: "GET" } : post);
  const t = await r.text();
  if (r.ok) show(JSON.parse(t)); else document.getElementById("error").textContent = t;
}
document.getElementById("back").onclick = () => call("/api/back", "");
document.getElementById("forward").onclick = () => call("/api/forward", "");
document.getElementById("restart").onclick = () => call("/api/restart", "");
document.getElementById("load").onchange = async (e) => {
  const f = e.target.files[0];
  if (f) call("/api/load", JSON.parse(await f.text()));
};
call("/api/state");
</script>
</body>
</html>
"##;
