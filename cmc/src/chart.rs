//! Sequence charts: a report's trace drawn as one self-contained HTML file
//! with inline SVG (no script, no network, no external asset), for people
//! who would rather look than read.
//!
//! One lifeline per node (and one for clients, when a program's clients
//! send or receive), one row per step. Messages are arrows from the step
//! that sent them to the step that delivered them; a message lost to a
//! drop or a crash ends in a cross where it was lost, and one still in
//! flight at the end runs off the bottom. Each step's action is marked on
//! the lifeline of the node it concerns (timer firings, flushes, crashes
//! with the prefix they keep, restarts, resets, client requests, accepts,
//! timeouts), and replies on the lifeline of the node that emitted them.
//! Every node's decoded state at every step is the tooltip of its dot on
//! the lifeline and a row of the table below the chart, with a program
//! node's output lines.
//!
//! Everything is derived from the trace as reports hold it (actions, and
//! each step's world with its messages in flight): a message sent in a
//! step is one on its channel after the step beyond those left from the
//! step before. The chart is a pure function of the report: the same
//! report gives the same bytes.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::network::Network;
use crate::report::{MessageText, Report, Step};

/// Width of one lifeline's lane, in pixels.
const LANE_WIDTH: usize = 200;
/// Height of one step's row, in pixels.
const ROW_HEIGHT: usize = 44;
/// Left margin, where the steps' labels go.
const LEFT: usize = 300;
/// Top margin, where the lifelines' names go.
const TOP: usize = 56;

/// A message followed through the trace.
struct Flight {
    from: Option<u8>,
    to: Option<u8>,
    text: String,
    /// The step (index into the trace) that sent it.
    sent: usize,
    /// How it ended: delivered or lost at a step, or still in flight.
    end: End,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Delivered(usize),
    Lost(usize),
    InFlight,
}

/// What an action token says: its name, the node it concerns, and the
/// channel it takes a message from, when it does.
struct Token {
    name: String,
    node: Option<u8>,
    /// `j` of CRASH(n, j) (or a program's `{i, ...}`).
    keep: Option<String>,
}

fn parse_token(token: &str) -> Token {
    let (name, args) = match token.split_once('(') {
        Some((name, rest)) => (name, rest.trim_end_matches(')')),
        None => (token, ""),
    };
    let raw = args;
    let args: Vec<&str> = args.split(',').map(str::trim).collect();
    let first = args.first().copied().unwrap_or_default();
    // A core's DELIVER/DROP/DUP(f->t, ...): the receiver is concerned; a
    // program's DROP(conn, to, ...) names the receiver second.
    let node = match first.split_once("->") {
        Some((_, to)) => to.parse().ok(),
        None if name == "DROP" => args.get(1).and_then(|a| a.parse().ok()),
        None if name == "ACTION" => Some(0),
        None => first.parse().ok(),
    };
    // All after the node: `j`, or a program's set `{0, 2}`.
    let keep = (name == "CRASH").then(|| raw.split_once(',').map(|(_, k)| k.trim().to_string())).flatten();
    Token { name: name.to_string(), node, keep }
}

/// Follows every message through the trace: sends, deliveries, losses.
fn flights(trace: &[Step], network: Network, tokens: &[Token]) -> Vec<Flight> {
    let mut flights: Vec<Flight> = Vec::new();
    // Per channel, the flights on it, in the world's order.
    let mut channels: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (k, step) in trace.iter().enumerate() {
        // A crash loses every message to or from the crashed node, whatever
        // its restart sends again (perhaps the same bytes): taken from the
        // action, not from comparing the worlds.
        if let ("CRASH", Some(n)) = (tokens[k].name.as_str(), tokens[k].node) {
            for ids in channels.values_mut() {
                ids.retain(|&id| {
                    let touches = flights[id].from == Some(n) || flights[id].to == Some(n);
                    if touches {
                        flights[id].end = End::Lost(k);
                    }
                    !touches
                });
            }
        }
        let mut now: BTreeMap<String, Vec<&MessageText>> = BTreeMap::new();
        for m in &step.world.messages {
            now.entry(m.channel.clone()).or_default().push(m);
        }
        let names: std::collections::BTreeSet<String> = channels.keys().chain(now.keys()).cloned().collect();
        for name in names {
            let before = channels.remove(&name).unwrap_or_default();
            let after = now.get(&name).cloned().unwrap_or_default();
            let (gone, kept) = match network {
                // Unordered: what is no longer there went, by text.
                Network::Bag => {
                    let mut left: Vec<&MessageText> = after.clone();
                    let mut gone = Vec::new();
                    let mut kept = Vec::new();
                    for id in before {
                        match left.iter().position(|m| m.text == flights[id].text) {
                            Some(i) => {
                                left.remove(i);
                                kept.push(id);
                            }
                            None => gone.push(id),
                        }
                    }
                    (gone, kept)
                }
                // In order: the fewest taken from the front such that the
                // rest begins what is there now.
                Network::Fifo => {
                    let taken = (0..=before.len())
                        .find(|&d| {
                            before.len() - d <= after.len()
                                && before[d..].iter().zip(&after).all(|(&id, m)| flights[id].text == m.text)
                        })
                        .unwrap_or(before.len());
                    (before[..taken].to_vec(), before[taken..].to_vec())
                }
            };
            for id in gone {
                let delivered = tokens[k].name == "DELIVER" && flights[id].to == tokens[k].node;
                flights[id].end = if delivered { End::Delivered(k) } else { End::Lost(k) };
            }
            let mut on_channel = kept.clone();
            let fresh: Vec<&MessageText> = match network {
                Network::Bag => {
                    let mut fresh = after.clone();
                    for &id in &kept {
                        if let Some(i) = fresh.iter().position(|m| m.text == flights[id].text) {
                            fresh.remove(i);
                        }
                    }
                    fresh
                }
                Network::Fifo => after[kept.len().min(after.len())..].to_vec(),
            };
            for m in fresh {
                on_channel.push(flights.len());
                flights.push(Flight { from: m.from, to: m.to, text: m.text.clone(), sent: k, end: End::InFlight });
            }
            if !on_channel.is_empty() {
                channels.insert(name, on_channel);
            }
        }
    }
    flights
}

/// Escapes text for HTML and SVG.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// What a step's action looks like on its node's lifeline.
fn mark(token: &Token) -> Option<String> {
    let text = match token.name.as_str() {
        "FIRE" => "timer fired".to_string(),
        "FLUSH" => "flushed".to_string(),
        "WAKE" => "woken".to_string(),
        "CLIENT" => "client request".to_string(),
        "CRASH" => match &token.keep {
            Some(j) => format!("crash, {j} kept; restart"),
            None => "crash; restart".to_string(),
        },
        "RESET" => "reset".to_string(),
        "DUP" => "duplicated".to_string(),
        "ACCEPT" => "accept".to_string(),
        "EOF" => "end of stream".to_string(),
        "TIMEOUT" => "timeout".to_string(),
        "ACTION" => return None,
        _ => return None,
    };
    Some(text)
}

/// The sequence chart of `trace` alone, as an `<svg>` element: what
/// [`html`] puts in its page, and what `cmc explore` draws of a walk.
/// `failed_action` is an error's failed step, drawn after the trace.
pub fn svg(trace: &[Step], network: Network, failed_action: Option<&str>) -> String {
    let nodes = trace.first().map_or(0, |s| s.world.nodes.len());
    let tokens: Vec<Token> = trace.iter().map(|s| parse_token(&s.action)).collect();
    let flights = flights(trace, network, &tokens);
    let clients = flights.iter().any(|f| f.from.is_none() || f.to.is_none());
    let lanes = nodes + usize::from(clients);
    // The clients' lane, when there is one, is the first.
    let lane_x = |node: Option<u8>| -> usize {
        let lane = match node {
            Some(n) => usize::from(n) + usize::from(clients),
            None => 0,
        };
        LEFT + lane * LANE_WIDTH + LANE_WIDTH / 2
    };
    let row_y = |k: usize| TOP + k * ROW_HEIGHT + ROW_HEIGHT / 2;
    let rows = trace.len() + usize::from(failed_action.is_some()) + 1;
    // Room on the right for the last lane's marks and replies.
    let width = LEFT + lanes * LANE_WIDTH + 200;
    let height = TOP + rows * ROW_HEIGHT + 20;

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="monospace" font-size="12">"##
    );
    svg.push_str(
        r##"<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#1f4e8c"/></marker></defs>
"##,
    );
    // Lifelines.
    let bottom = TOP + rows * ROW_HEIGHT;
    let mut lane_names: Vec<(Option<u8>, String)> = Vec::new();
    if clients {
        lane_names.push((None, "clients".to_string()));
    }
    lane_names.extend((0..nodes).map(|n| (Some(n as u8), format!("node {n}"))));
    for (node, name) in &lane_names {
        let x = lane_x(*node);
        let _ = writeln!(
            svg,
            r##"<g class="lifeline" data-node="{}"><text x="{x}" y="{}" text-anchor="middle" font-weight="bold">{}</text><line x1="{x}" y1="{TOP}" x2="{x}" y2="{bottom}" stroke="#888" stroke-dasharray="4 3"/></g>"##,
            node.map_or("client".to_string(), |n| n.to_string()),
            TOP - 16,
            escape(name)
        );
    }
    // Steps: label, the action's mark, and each node's state as a tooltip.
    for (k, step) in trace.iter().enumerate() {
        let y = row_y(k);
        let _ = writeln!(
            svg,
            r##"<text class="step" x="8" y="{}">{:>3}. {}</text>"##,
            y + 4,
            k + 1,
            escape(&truncate(&step.label, 36))
        );
        for (n, node) in step.world.nodes.iter().enumerate() {
            let x = lane_x(Some(n as u8));
            let mut tip = format!("step {}, node {n}: {}", k + 1, node.state);
            if !node.output.is_empty() {
                tip.push_str(&format!("\noutput:\n{}", node.output.trim_end()));
            }
            let _ = writeln!(
                svg,
                r##"<circle class="state" cx="{x}" cy="{y}" r="3" fill="#888"><title>{}</title></circle>"##,
                escape(&tip)
            );
        }
        if let (Some(text), Some(n)) = (mark(&tokens[k]), tokens[k].node) {
            let x = lane_x(Some(n));
            let colour = if tokens[k].name == "CRASH" { "#b00020" } else { "#5a3d8a" };
            let _ = writeln!(
                svg,
                r##"<g class="event" data-step="{}" data-kind="{}"><rect x="{}" y="{}" width="12" height="12" fill="{colour}"/><text x="{}" y="{}" fill="{colour}">{}</text></g>"##,
                k + 1,
                escape(&tokens[k].name),
                x - 6,
                y - 6,
                x + 10,
                y - 8,
                escape(&text)
            );
        }
        // Replies this step emitted.
        let before = if k == 0 { 0 } else { trace[k - 1].world.replies.len() };
        for reply in step.world.replies.iter().skip(before) {
            let (node, text) = reply.split_once(": ").unwrap_or(("", reply));
            if let Ok(n) = node.parse::<u8>() {
                let x = lane_x(Some(n));
                let _ = writeln!(
                    svg,
                    r##"<g class="reply" data-step="{}"><text x="{}" y="{}" fill="#1b7a3a">reply: {}</text></g>"##,
                    k + 1,
                    x + 10,
                    y + 14,
                    escape(&truncate(text, 24))
                );
            }
        }
    }
    if let Some(action) = failed_action {
        let k = trace.len();
        let _ = writeln!(
            svg,
            r##"<text class="step failed" x="8" y="{}" fill="#b00020">{:>3}. {} failed</text>"##,
            row_y(k) + 4,
            k + 1,
            escape(&truncate(action, 30))
        );
    }
    // Messages.
    for f in &flights {
        let (x1, y1) = (lane_x(f.from), row_y(f.sent));
        let ended = match f.end {
            End::Delivered(k) | End::Lost(k) => (k + 1).to_string(),
            End::InFlight => String::new(),
        };
        let (kind, x2, y2) = match f.end {
            End::Delivered(k) => ("delivered", lane_x(f.to), row_y(k)),
            // Three quarters of the way: never on a lane in between.
            End::Lost(k) => ("lost", (lane_x(f.from) + 3 * lane_x(f.to)) / 4, row_y(k)),
            End::InFlight => ("in-flight", lane_x(f.to), bottom),
        };
        let dash = if f.end == End::InFlight { r##" stroke-dasharray="6 4""## } else { "" };
        let head = if matches!(f.end, End::Lost(_)) { "" } else { r##" marker-end="url(#arrow)""## };
        let who = |n: Option<u8>| n.map_or("client".to_string(), |n| format!("node {n}"));
        let _ = write!(
            svg,
            r##"<g class="message {kind}" data-from="{}" data-to="{}" data-sent="{}" data-end="{ended}"><line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#1f4e8c" stroke-width="1.5"{dash}{head}/><text x="{}" y="{}" fill="#1f4e8c">{}</text><title>{} to {}: {} ({kind})</title>"##,
            f.from.map_or("client".to_string(), |n| n.to_string()),
            f.to.map_or("client".to_string(), |n| n.to_string()),
            f.sent + 1,
            (x1 + x2) / 2 + 4,
            (y1 + y2) / 2 - 3,
            escape(&truncate(&f.text, 20)),
            who(f.from),
            who(f.to),
            escape(&f.text)
        );
        if let End::Lost(_) = f.end {
            let _ = write!(
                svg,
                r##"<path d="M {} {} l 10 10 M {} {} l -10 10" stroke="#b00020" stroke-width="2"/>"##,
                x2 - 5,
                y2 - 5,
                x2 + 5,
                y2 - 5
            );
        }
        svg.push_str("</g>\n");
    }
    svg.push_str("</svg>\n");
    svg
}

/// The HTML page of `report`'s trace: its sequence chart and its worlds.
/// `title` heads the page (the model's name).
pub fn html(title: &str, report: &Report) -> String {
    let trace = &report.trace;
    let nodes = trace.first().map_or(0, |s| s.world.nodes.len());
    let svg = svg(trace, report.model.network, report.failed_action.as_deref());
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n",
        escape(title)
    );
    let _ = writeln!(page, "<h1>{}</h1>", escape(title));
    let _ = writeln!(page, "<p class=\"summary\">{}</p>", escape(&report.summary()));
    let _ = writeln!(page, "<div class=\"chart\">\n{svg}</div>");
    page.push_str("<h2>Worlds</h2>\n<table class=\"worlds\">\n<tr><th>step</th><th>action</th>");
    for n in 0..nodes {
        let _ = write!(page, "<th>node {n}</th>");
    }
    page.push_str("<th>in flight</th><th>replies</th></tr>\n");
    for (k, step) in trace.iter().enumerate() {
        let _ = write!(page, "<tr data-step=\"{}\"><td>{}</td><td>{}</td>", k + 1, k + 1, escape(&step.label));
        for node in &step.world.nodes {
            let _ = write!(page, "<td>{}", escape(&node.state));
            if !node.output.is_empty() {
                let _ = write!(page, "<pre class=\"output\">{}</pre>", escape(node.output.trim_end()));
            }
            page.push_str("</td>");
        }
        let _ = writeln!(
            page,
            "<td>{}</td><td>{}</td></tr>",
            escape(&step.world.network.join(", ")),
            escape(&step.world.replies.join(", "))
        );
    }
    page.push_str("</table>\n</body>\n</html>\n");
    page
}

/// Where the chart of the counterexample file `cex` goes: beside it,
/// `NAME.cex.json` giving `NAME.cex.html`.
pub fn path_beside(cex: &std::path::Path) -> std::path::PathBuf {
    cex.with_extension("html")
}

/// `s`, cut to `max` characters with an ellipsis.
fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

const STYLE: &str = "body { font-family: sans-serif; margin: 1em; }
.summary { font-family: monospace; }
.chart { overflow-x: auto; border: 1px solid #ddd; }
table.worlds { border-collapse: collapse; font-family: monospace; font-size: 12px; }
table.worlds td, table.worlds th { border: 1px solid #ccc; padding: 2px 6px; vertical-align: top; text-align: left; }
pre.output { margin: 2px 0 0 0; color: #555; }
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{NodeText, WorldText};

    fn step(action: &str, messages: &[(u8, u8, &str)]) -> Step {
        let node = NodeText {
            state: String::new(),
            output: String::new(),
            timers: Vec::new(),
            wakes: Vec::new(),
            resets: Vec::new(),
            clients_left: 0,
            pending_persists: Vec::new(),
        };
        let messages: Vec<MessageText> = messages
            .iter()
            .map(|&(f, t, text)| MessageText {
                from: Some(f),
                to: Some(t),
                channel: format!("{f}->{t}"),
                text: text.to_string(),
            })
            .collect();
        Step {
            action: action.to_string(),
            label: action.to_string(),
            fingerprint: String::new(),
            world: WorldText {
                nodes: vec![node.clone(), node],
                network: Vec::new(),
                messages,
                replies: Vec::new(),
                drops_left: 0,
                dups_left: 0,
                crashes_left: 0,
                timeouts_left: None,
            },
        }
    }

    #[test]
    fn a_message_a_crash_lost_is_lost_even_if_the_restart_sends_the_same_bytes() {
        let trace = [step("INIT(0)", &[(0, 1, "a")]), step("CRASH(0, 0)", &[(0, 1, "a")])];
        let tokens: Vec<Token> = trace.iter().map(|s| parse_token(&s.action)).collect();
        for network in [Network::Fifo, Network::Bag] {
            let f = flights(&trace, network, &tokens);
            assert_eq!(f.len(), 2, "the one sent at Init and the one sent again");
            assert!(f[0].end == End::Lost(1) && f[0].sent == 0);
            assert!(f[1].end == End::InFlight && f[1].sent == 1);
        }
    }

    #[test]
    fn a_crash_shows_what_it_kept_a_count_or_a_set() {
        let mark_of = |t: &str| mark(&parse_token(t));
        assert_eq!(mark_of("CRASH(0, 1)").as_deref(), Some("crash, 1 kept; restart"));
        assert_eq!(mark_of("CRASH(2, {0, 2})").as_deref(), Some("crash, {0, 2} kept; restart"));
        assert_eq!(mark_of("CRASH(2)").as_deref(), Some("crash; restart"));
        assert_eq!(parse_token("CRASH(2, {0, 2})").node, Some(2));
    }

    #[test]
    fn a_delivery_takes_the_head_and_a_new_send_is_new() {
        let trace =
            [step("INIT(0)", &[(0, 1, "a"), (0, 1, "b")]), step("DELIVER(0->1, a)", &[(0, 1, "b"), (0, 1, "a")])];
        let tokens: Vec<Token> = trace.iter().map(|s| parse_token(&s.action)).collect();
        let f = flights(&trace, Network::Fifo, &tokens);
        assert_eq!(f.len(), 3);
        assert!(f[0].end == End::Delivered(1), "a, the head, delivered");
        assert!(f[1].end == End::InFlight && f[2].end == End::InFlight && f[2].sent == 1);
    }
}
