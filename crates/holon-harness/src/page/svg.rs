//! The page's charts, SVG written by hand: a few rectangles, lines and labels each, so the page
//! needs no library and no script (a segment's `<title>` is its tooltip). Every label goes
//! through `escape`.

use std::fmt::Write as _;
use std::time::Duration;

use super::escape::esc;
use crate::measure::{Kind, Picture, Row, money, percent, seconds};
use holon_core::gateway::Status;

/// The width every chart is drawn at (it scales down with the page).
const WIDTH: f64 = 760.0;
/// Where the plot starts, after the names.
const LEFT: f64 = 250.0;
/// The height of one example's row.
const ROW: f64 = 20.0;

/// The colour of a status: green a success, reds and oranges what counts against the agent
/// (one for each reserved code), slate blues the declared failures, grey a call not judged.
pub(super) fn colour(code: &str, kind: Kind) -> &'static str {
    match kind {
        Kind::Success => "#2e7d32",
        Kind::NotJudged => "#bdbdbd",
        Kind::Against => {
            const RESERVED: [(Status, &str); 5] = [
                (Status::InvalidOutput, "#c62828"),
                (Status::AgentCrashed, "#6a1b9a"),
                (Status::AgentError, "#ad1457"),
                (Status::Timeout, "#ef6c00"),
                (Status::RuntimeUnavailable, "#5d4037"),
            ];
            (RESERVED.iter())
                .find(|(status, _)| status.code() == code)
                .map_or("#d84315", |(_, colour)| colour)
        }
        Kind::Declared => {
            const SHADES: [&str; 5] = ["#546e7a", "#1565c0", "#00838f", "#5c6bc0", "#78909c"];
            let at = code
                .bytes()
                .fold(0usize, |h, b| h.wrapping_mul(31) + b as usize);
            SHADES.get(at % SHADES.len()).copied().unwrap_or("#546e7a")
        }
    }
}

/// The start of a chart `height` high, described by `label` for a screen reader.
fn open(out: &mut String, height: f64, label: &str, class: &str) {
    let _ = write!(
        out,
        r#"<svg class="{class}" role="img" aria-label="{}" viewBox="0 0 {WIDTH} {height}" width="100%" xmlns="http://www.w3.org/2000/svg">"#,
        esc(label)
    );
}

/// A name at the left of row `y`, cut to fit, whole in its tooltip.
fn name(out: &mut String, y: f64, text: &str) {
    let shown: String = if text.chars().count() > 34 {
        let mut s: String = text.chars().take(33).collect();
        s.push('…');
        s
    } else {
        text.to_string()
    };
    let _ = write!(
        out,
        r#"<text x="{x}" y="{ty}" text-anchor="end" class="name"><title>{}</title>{}</text>"#,
        esc(text),
        esc(&shown),
        x = LEFT - 8.0,
        ty = y + ROW * 0.7
    );
}

/// Segments of `statuses` laid side by side over `width` from `x`, each with its tooltip.
fn segments(
    out: &mut String,
    (x, y, width, height): (f64, f64, f64, f64),
    statuses: &[(String, u64, Kind)],
) {
    let total: u64 = statuses.iter().map(|(_, n, _)| n).sum();
    if total == 0 {
        return;
    }
    let mut at = x;
    for (code, n, kind) in statuses {
        let w = width * (*n as f64) / (total as f64);
        let _ = write!(
            out,
            r#"<rect x="{at:.1}" y="{y:.1}" width="{w:.1}" height="{height:.1}" fill="{}" data-status="{}"><title>{}: {n} of {total}</title></rect>"#,
            colour(code, *kind),
            esc(code),
            esc(code),
        );
        at += w;
    }
}

/// One stacked bar of `statuses` (explore's cases, the whole run's calls).
pub(super) fn bar(statuses: &[(String, u64, Kind)], label: &str) -> String {
    let mut out = String::new();
    open(&mut out, 28.0, label, "bar");
    segments(&mut out, (0.0, 4.0, WIDTH, 20.0), statuses);
    out.push_str("</svg>");
    out
}

/// The percentage axis of a plot `rows` rows high, with its ticks.
fn percent_axis(out: &mut String, top: f64, rows: usize) {
    let plot = WIDTH - LEFT - 20.0;
    let bottom = top + rows as f64 * ROW;
    for tick in [0.0, 0.25, 0.5, 0.75, 0.9, 1.0] {
        let x = LEFT + plot * tick;
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{bottom:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" class="tick">{}</text>"##,
            top - 4.0,
            percent(tick).trim_end_matches(".0%").to_string() + "%"
        );
    }
}

/// A chart of a row per example, on a percentage axis: each example's name, then what `draw`
/// draws of it at `y` over a plot `plot` wide.
fn per_example(
    rows: &[&Row],
    (label, class): (&str, &str),
    draw: impl Fn(&mut String, &Row, f64, f64),
) -> String {
    let top = 18.0;
    let height = top + rows.len() as f64 * ROW + 6.0;
    let plot = WIDTH - LEFT - 20.0;
    let mut out = String::new();
    open(&mut out, height, label, class);
    percent_axis(&mut out, top, rows.len());
    for (i, row) in rows.iter().enumerate() {
        let y = top + i as f64 * ROW;
        name(&mut out, y, &row.name);
        draw(&mut out, row, y, plot);
    }
    out.push_str("</svg>");
    out
}

/// Each example's success rate, a dot, with its 95% interval, a line through it.
pub(super) fn rates(rows: &[&Row]) -> String {
    let what = ("each example's success rate with its 95% interval", "rates");
    per_example(rows, what, |out, row, y, plot| {
        let mid = y + ROW / 2.0;
        match (row.rate, row.interval) {
            (Some(rate), Some((low, high))) => {
                let tip = format!(
                    "{}: {} ({} to {}), {} of {} counted calls",
                    row.name,
                    percent(rate),
                    percent(low),
                    percent(high),
                    row.success,
                    row.counted
                );
                let _ = write!(
                    out,
                    r##"<g class="rate" data-rate="{rate:.4}"><title>{}</title><line x1="{:.1}" y1="{mid:.1}" x2="{:.1}" y2="{mid:.1}" stroke="#555" stroke-width="2"/><circle cx="{:.1}" cy="{mid:.1}" r="5" fill="{}"/></g>"##,
                    esc(&tip),
                    LEFT + plot * low,
                    LEFT + plot * high,
                    LEFT + plot * rate,
                    if rate >= 0.999 { "#2e7d32" } else { "#c62828" },
                );
            }
            _ => {
                let _ = write!(
                    out,
                    r#"<text x="{LEFT}" y="{:.1}" class="tick">no call counts toward the rate</text>"#,
                    y + ROW * 0.7
                );
            }
        }
    })
}

/// Each example's calls by status, stacked to 100%.
pub(super) fn statuses(rows: &[&Row]) -> String {
    let what = ("each example's calls by status", "statuses");
    per_example(rows, what, |out, row, y, plot| {
        segments(out, (LEFT, y + 3.0, plot, ROW - 6.0), &row.statuses);
    })
}

/// The calls' latency as a histogram, against `timeout_s` (a dashed line; when every call
/// took under a quarter of it, the scale is the calls' own and the line is said at the right),
/// with the median and the 95th percentile marked.
pub(super) fn latency(
    took: &[Duration],
    timeout: Duration,
    p50_p95: Option<(Duration, Duration)>,
) -> String {
    const BINS: usize = 40;
    let (top, plot_h) = (30.0, 140.0);
    let (left, plot_w) = (40.0, WIDTH - 60.0);
    let longest = took.last().copied().unwrap_or_default();
    let timeout_shown = longest * 4 >= timeout;
    let span = match timeout_shown {
        true => timeout.max(longest),
        false => longest,
    }
    .as_secs_f64()
    .max(0.001)
        * 1.05;
    let mut counts = [0u64; BINS];
    for t in took {
        let bin = ((t.as_secs_f64() / span) * BINS as f64) as usize;
        if let Some(c) = counts.get_mut(bin.min(BINS - 1)) {
            *c += 1;
        }
    }
    let most = counts.iter().copied().max().unwrap_or(0).max(1);
    let mut out = String::new();
    open(
        &mut out,
        top + plot_h + 34.0,
        "the calls' latency against timeout_s",
        "latency",
    );
    let base = top + plot_h;
    let _ = write!(
        out,
        r##"<line x1="{left}" y1="{base}" x2="{:.1}" y2="{base}" stroke="#999"/>"##,
        left + plot_w
    );
    let bin_w = plot_w / BINS as f64;
    for (i, n) in counts.iter().enumerate().filter(|(_, n)| **n > 0) {
        let h = plot_h * (*n as f64) / (most as f64);
        let from = span * i as f64 / BINS as f64;
        let _ = write!(
            out,
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="#42a5f5"><title>{n} call{} from {} to {}</title></rect>"##,
            left + bin_w * i as f64 + 0.5,
            base - h,
            (bin_w - 1.0).max(0.5),
            if *n == 1 { "" } else { "s" },
            seconds(Duration::from_secs_f64(from)),
            seconds(Duration::from_secs_f64(from + span / BINS as f64)),
        );
    }
    let x_of = |d: Duration| left + plot_w * d.as_secs_f64() / span;
    for tick in 0..=4 {
        let at = Duration::from_secs_f64(span * f64::from(tick) / 4.0);
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" class="tick">{}</text>"#,
            x_of(at),
            base + 14.0,
            seconds(at)
        );
    }
    // The median's and the 95th percentile's labels on rows of their own above the plot,
    // each on the side of its line that keeps it inside: they never cover each other.
    let mut mark = |d: Duration, label: String, colour: &str, row: Option<f64>| {
        let x = x_of(d);
        let (dashed, anchor, tx, ty) = match row {
            Some(y) if x > WIDTH * 0.7 => ("", "end", x - 3.0, y),
            Some(y) => ("", "start", x + 3.0, y),
            None => (r#" stroke-dasharray="6 4""#, "middle", x, base + 28.0),
        };
        let _ = write!(
            out,
            r#"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{base}" stroke="{colour}" stroke-width="2"{dashed}/><text x="{tx:.1}" y="{ty:.1}" text-anchor="{anchor}" class="mark" fill="{colour}">{}</text>"#,
            esc(&label)
        );
    };
    if let Some((p50, p95)) = p50_p95 {
        mark(p50, format!("p50 {}", seconds(p50)), "#1b5e20", Some(11.0));
        mark(p95, format!("p95 {}", seconds(p95)), "#e65100", Some(24.0));
    }
    if timeout_shown {
        let label = format!("timeout_s {}", seconds(timeout));
        mark(timeout, label, "#c62828", None);
    } else {
        let _ = write!(
            out,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" class="mark" fill="#c62828">timeout_s {} is off this scale, to the right: the slowest call took {} of it</text>"##,
            left + plot_w,
            base + 28.0,
            seconds(timeout),
            percent(longest.as_secs_f64() / timeout.as_secs_f64().max(1e-9))
        );
    }
    out.push_str("</svg>");
    out
}

/// A success's money: the price, what the author is paid, what the upstreams cost and the
/// margin left; `None` when nothing was paid.
pub(super) fn margin(picture: &Picture) -> Option<String> {
    let paid = picture.paid_per_success?;
    let mut bars = vec![
        ("price a billed call".to_string(), picture.price, "#607d8b"),
        ("paid a success, after the fee".to_string(), paid, "#2e7d32"),
    ];
    if let Some(spent) = picture.spent_per_success {
        bars.push(("upstream spend a success".to_string(), spent, "#ef6c00"));
        let left = paid - spent;
        bars.push((
            "margin a success".to_string(),
            left,
            if left >= 0.0 { "#1b5e20" } else { "#c62828" },
        ));
    }
    let most = bars
        .iter()
        .map(|(_, v, _)| v.abs())
        .fold(0.0, f64::max)
        .max(1e-12);
    let least = bars.iter().map(|(_, v, _)| *v).fold(0.0, f64::min);
    let plot = WIDTH - LEFT - 140.0;
    // The zero line moves right when a bar (a loss) is below it.
    let zero = LEFT + plot * (-least / (most - least.min(0.0))).clamp(0.0, 1.0);
    let scale = plot / (most - least.min(0.0));
    let mut out = String::new();
    open(
        &mut out,
        bars.len() as f64 * 26.0 + 8.0,
        "a success's price, pay, upstream spend and margin",
        "margin",
    );
    for (i, (label, value, colour)) in bars.iter().enumerate() {
        let y = 4.0 + i as f64 * 26.0;
        name(&mut out, y, label);
        let w = value.abs() * scale;
        let x = if *value < 0.0 { zero - w } else { zero };
        let _ = write!(
            out,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="18" fill="{colour}"/><text x="{:.1}" y="{:.1}" class="value">{} {}</text>"#,
            zero.max(x + w) + 6.0,
            y + 14.0,
            money(*value),
            esc(&picture.currency)
        );
    }
    out.push_str("</svg>");
    Some(out)
}
