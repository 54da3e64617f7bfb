//! The report: a table on stdout, JSON and CSV for scripts, and an SVG plot.

use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;
use serde::Serialize;

use super::measure::Row;
use super::recommend::{Needs, Recommendation};

/// Everything `compare` measured and concluded.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// A one-line description of the workload.
    pub workload: String,
    /// Keys inserted.
    pub items: u64,
    /// Keys removed after insertion.
    pub deleted: u64,
    /// Member and non-member queries.
    pub queries: (u64, u64),
    /// What the rules consider.
    pub needs: Needs,
    /// Whether the measured code was optimized (a release build).
    pub optimized: bool,
    /// One row per structure.
    pub rows: Vec<Row>,
    /// The choice, and why.
    pub recommendation: Recommendation,
}

impl Report {
    /// Rows with false negatives: defects to report loudly.
    pub fn defects(&self) -> Vec<&Row> {
        self.rows.iter().filter(|r| r.false_negatives > 0).collect()
    }

    /// The human-readable table.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "workload: {}", self.workload);
        let build = if self.optimized {
            "an optimized (release) build"
        } else {
            "an UNOPTIMIZED (debug) build, so the times are meaningless: run `cargo xtask compare` or an installed `bloomkit compare`"
        };
        let _ = writeln!(
            out,
            "measured in {build}; {} keys kept, {} member and {} non-member queries",
            self.items - self.deleted,
            self.queries.0,
            self.queries.1
        );
        let _ = writeln!(out);
        let w = self
            .rows
            .iter()
            .map(|r| r.structure.len())
            .max()
            .unwrap_or(0)
            .max(9);
        let _ = writeln!(
            out,
            "{:<w$} {:>12} {:>9} {:>9} {:>10} {:>10} {:>10} {:>6} {:>7} {:>6}",
            "structure",
            "bytes",
            "bits/key",
            "build ns",
            "member ns",
            "absent ns",
            "FPR",
            "FN",
            "delete",
            "grows"
        );
        for r in &self.rows {
            let yes = |b: bool| if b { "yes" } else { "no" };
            match &r.cannot_serve {
                Some(reason) => {
                    let _ = writeln!(
                        out,
                        "{:<w$} cannot serve this workload: {reason}",
                        r.structure
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "{:<w$} {:>12} {:>9.2} {:>9.1} {:>10.1} {:>10.1} {:>9.4}% {:>6} {:>7} {:>6}",
                        r.structure,
                        r.bytes,
                        r.bits_per_key,
                        r.build_ns,
                        r.member_ns,
                        r.non_member_ns,
                        r.measured_fpr * 100.0,
                        r.false_negatives,
                        yes(r.deletes),
                        yes(r.grows)
                    );
                    if r.misses_target {
                        let _ = writeln!(
                            out,
                            "{:<w$} ^ MISSES THE TARGET: {:.4}% measured for a {}% target",
                            "",
                            r.measured_fpr * 100.0,
                            self.needs.fpr * 100.0
                        );
                    }
                }
            }
        }
        for d in self.defects() {
            let _ = writeln!(
                out,
                "\nDEFECT: {} reported {} inserted keys absent (false negatives must be 0).",
                d.structure, d.false_negatives
            );
        }
        let _ = writeln!(
            out,
            "\nrecommendation: {}\n  {}",
            self.recommendation.structure, self.recommendation.reason
        );
        out
    }

    /// CSV, one line per structure.
    pub fn csv(&self) -> String {
        let mut out = String::from(
            "structure,serves,reason,bytes,bits_per_key,build_ns,member_ns,non_member_ns,measured_fpr,false_negatives,misses_target,deletes,grows,exact\n",
        );
        for r in &self.rows {
            let quoted = r.cannot_serve.as_deref().unwrap_or("").replace('"', "\"\"");
            let _ = writeln!(
                out,
                "{},{},\"{quoted}\",{},{:.4},{:.2},{:.2},{:.2},{:.6},{},{},{},{},{}",
                r.structure,
                r.serves(),
                r.bytes,
                r.bits_per_key,
                r.build_ns,
                r.member_ns,
                r.non_member_ns,
                r.measured_fpr,
                r.false_negatives,
                r.misses_target,
                r.deletes,
                r.grows,
                r.exact
            );
        }
        out
    }

    /// JSON of the whole report.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// Memory (bits per key, log scale) against measured FPR (log scale) for each structure,
    /// with the classic filter's theoretical curve `-log2(p) / ln 2`. Each structure has its
    /// family's marker and its name beside it; exact structures (FPR 0, which a log axis
    /// cannot show) sit in a band at the left edge, marked as such.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn plot(&self, path: &Path) -> Result<(), String> {
        let served: Vec<&Row> = self.rows.iter().filter(|r| r.serves()).collect();
        // A filter with no false positive among N probes is drawn at 1/N, its bound.
        let floor = 1.0 / self.needs.non_members.max(1) as f64;
        let shown = |r: &Row| {
            if r.measured_fpr > 0.0 {
                r.measured_fpr
            } else {
                floor
            }
        };
        let min_fpr = served
            .iter()
            .filter(|r| !r.exact)
            .map(|r| shown(r))
            .fold(self.needs.fpr, f64::min)
            / 3.0;
        let max_fpr = served
            .iter()
            .map(|r| r.measured_fpr)
            .fold(self.needs.fpr, f64::max)
            .mul_add(3.0, 0.0)
            .min(1.0);
        // The exact band: left of min_fpr, a decade wide.
        let band = min_fpr / 10.0;
        let points = self.points(|r| {
            let x = if r.exact {
                (band * min_fpr).sqrt()
            } else {
                shown(r)
            };
            (x, r.bits_per_key.max(0.01))
        });
        let theory = |p: f64| -p.log2() / std::f64::consts::LN_2;
        let (lo, hi) = span(
            points.iter().map(|p| p.y).chain([theory(max_fpr)]),
            theory(min_fpr),
        );
        let curve: Vec<(f64, f64)> = (0..=200)
            .map(|i| {
                let p = min_fpr * (max_fpr / min_fpr).powf(f64::from(i) / 200.0);
                (p, -p.log2() / std::f64::consts::LN_2)
            })
            .collect();
        scatter(
            path,
            &Axes {
                title: "memory against measured false-positive rate",
                x_desc: "measured false-positive rate (log)",
                y_desc: "bits per key (log)",
                x: (band, max_fpr),
                y: (lo, hi),
            },
            &points,
            Some((curve, "classic Bloom filter, theory: -log2(p) / ln 2")),
            Some(min_fpr),
        )
    }

    /// The rows that served, each at `at`, coloured by its place in the report.
    fn points(&self, at: impl Fn(&Row) -> (f64, f64)) -> Vec<Point<'_>> {
        self.rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.serves())
            .map(|(colour, row)| {
                let (x, y) = at(row);
                Point { x, y, row, colour }
            })
            .collect()
    }

    /// Lookup time (weighted by the workload's share of members, log scale) against memory
    /// (bits per key, log scale), one marker and name per structure.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn lookup_plot(&self, path: &Path) -> Result<(), String> {
        let share = self.needs.member_share;
        let points = self.points(|r| {
            let ns = share * r.member_ns + (1.0 - share) * r.non_member_ns;
            (r.bits_per_key.max(0.01), ns.max(0.01))
        });
        let first = points.first().map_or((1.0, 1.0), |p| (p.x, p.y));
        let (xlo, xhi) = span(points.iter().map(|p| p.x), first.0);
        let (ylo, yhi) = span(points.iter().map(|p| p.y), first.1);
        scatter(
            path,
            &Axes {
                title: "lookup time against memory",
                x_desc: "bits per key (log)",
                y_desc: "ns a lookup, members and absent keys as queried (log)",
                x: (xlo, xhi),
                y: (ylo, yhi),
            },
            &points,
            None,
            None,
        )
    }
}

/// One structure on a plot.
struct Point<'a> {
    x: f64,
    y: f64,
    row: &'a Row,
    /// The row's place in the report: its colour.
    colour: usize,
}

struct Axes<'a> {
    title: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    x: (f64, f64),
    y: (f64, f64),
}

/// A log range around `values` (and `also`), with a margin.
fn span(values: impl Iterator<Item = f64>, also: f64) -> (f64, f64) {
    let (lo, hi) = values.fold((also, also), |(lo, hi), v| (lo.min(v), hi.max(v)));
    (lo / 1.6, hi * 1.6)
}

/// The marker families: exact structures, Bloom filters (classic, blocked, split-block,
/// counting, scalable, atomic), static filters, quotient filters, shared (Redis) filters.
#[derive(Clone, Copy, PartialEq)]
enum Family {
    Exact,
    Bloom,
    Static,
    Quotient,
    Shared,
}

/// A row's family: from the family's one list ([`bloomkit::Variant::facts`]) for bloomkit's
/// structures (named by their type), the exact and shared ones from the row.
fn family(row: &Row) -> Family {
    use bloomkit::variant::Family as Of;
    let name = row.structure.as_str();
    let variant = bloomkit::Variant::ALL
        .into_iter()
        .filter(|v| name.starts_with(v.facts().type_name))
        .max_by_key(|v| v.facts().type_name.len());
    if row.exact {
        return Family::Exact;
    }
    match variant.map(|v| v.facts().family) {
        Some(Of::Static) => Family::Static,
        Some(Of::Quotient) => Family::Quotient,
        Some(Of::Exact) => Family::Exact,
        _ if name.starts_with("Redis") => Family::Shared,
        _ => Family::Bloom,
    }
}

/// The marker of a family at `at` (pixels), in `colour`.
fn marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    family: Family,
    at: (i32, i32),
    colour: RGBAColor,
) -> Result<(), String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let (x, y) = at;
    match family {
        Family::Exact => area
            .draw(&Cross::new(at, 6, colour.stroke_width(3)))
            .map_err(|x| e(&x)),
        Family::Bloom => area
            .draw(&Circle::new(at, 6, colour.filled()))
            .map_err(|x| e(&x)),
        Family::Static => area
            .draw(&TriangleMarker::new(at, 8, colour.filled()))
            .map_err(|x| e(&x)),
        Family::Quotient => area
            .draw(&Rectangle::new(
                [(x - 6, y - 6), (x + 6, y + 6)],
                colour.filled(),
            ))
            .map_err(|x| e(&x)),
        Family::Shared => area
            .draw(&Polygon::new(
                vec![(x, y - 8), (x + 8, y), (x, y + 8), (x - 8, y)],
                colour.filled(),
            ))
            .map_err(|x| e(&x)),
    }
}

/// Draws `points` on log axes with their markers and names (pushed apart where they would
/// overlap, with a leader line to the point), an optional curve, and an optional boundary
/// left of which is the band of exact structures.
fn scatter(
    path: &Path,
    axes: &Axes<'_>,
    points: &[Point<'_>],
    curve: Option<(Vec<(f64, f64)>, &str)>,
    exact_band: Option<f64>,
) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| format!("cannot draw {}: {e}", path.display());
    let root = SVGBackend::new(path, (1000, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(axes.title, ("sans-serif", 22))
        .margin(18)
        .margin_right(170)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(
            (axes.x.0..axes.x.1).log_scale(),
            (axes.y.0..axes.y.1).log_scale(),
        )
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .x_labels(12)
        .y_labels(16)
        .x_label_formatter(&|x| short_number(*x))
        .y_label_formatter(&|y| short_number(*y))
        .x_desc(axes.x_desc)
        .y_desc(axes.y_desc)
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(|x| e(&x))?;
    if let Some((curve, label)) = curve {
        chart
            .draw_series(LineSeries::new(curve, BLUE.mix(0.6).stroke_width(2)))
            .map_err(|x| e(&x))?
            .label(label)
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(|x| e(&x))?;
    }
    if let Some(edge) = exact_band {
        let (lo, hi) = axes.y;
        chart
            .draw_series(LineSeries::new(
                [(edge, lo), (edge, hi)],
                BLACK.mix(0.4).stroke_width(1),
            ))
            .map_err(|x| e(&x))?;
        let (px, py) = chart.backend_coord(&(axes.x.0, hi));
        root.draw(&Text::new(
            "exact: FPR 0,",
            (px + 4, py + 4),
            ("sans-serif", 12).into_font().color(&BLACK.mix(0.7)),
        ))
        .map_err(|x| e(&x))?;
        root.draw(&Text::new(
            "off the log scale",
            (px + 4, py + 18),
            ("sans-serif", 12).into_font().color(&BLACK.mix(0.7)),
        ))
        .map_err(|x| e(&x))?;
    }
    // Pixel positions, then labels placed top to bottom, each pushed below the last one
    // it would overlap.
    let mut placed: Vec<(i32, i32, i32)> = Vec::new(); // (x, y, width) of each label
    let mut order: Vec<usize> = (0..points.len()).collect();
    let pixel: Vec<(i32, i32)> = points
        .iter()
        .map(|p| chart.backend_coord(&(p.x, p.y)))
        .collect();
    order.sort_by_key(|&i| (pixel[i].1, pixel[i].0));
    for i in order {
        let p = &points[i];
        let at = pixel[i];
        let colour = colour(p.colour);
        marker(&root, family(p.row), at, colour).map_err(|x| e(&x))?;
        let label = if !p.row.exact
            && p.row.serves()
            && p.row.measured_fpr == 0.0
            && exact_band.is_some()
        {
            format!("{} (no false positive: at most this)", p.row.structure)
        } else if exact_band.is_some() {
            p.row.structure.clone()
        } else {
            // The lookup plot: its axes have few labels, so each point says its time.
            format!("{}: {} ns", p.row.structure, short_number(p.y))
        };
        let width = 7 * label.len() as i32;
        let (mut lx, mut ly) = (at.0 + 10, at.1 - 6);
        while let Some(&(_, y, _)) = placed
            .iter()
            .find(|&&(x, y, w)| (ly - y).abs() < 14 && lx < x + w && x < lx + width)
        {
            ly = y + 14;
        }
        if ly != at.1 - 6 || lx != at.0 + 10 {
            lx = at.0 + 14;
            root.draw(&PathElement::new(
                vec![at, (lx - 2, ly + 6)],
                colour.stroke_width(1),
            ))
            .map_err(|x| e(&x))?;
        }
        root.draw(&Text::new(label, (lx, ly), ("sans-serif", 13).into_font()))
            .map_err(|x| e(&x))?;
        placed.push((lx, ly, width));
    }
    root.present().map_err(|x| e(&x))
}

/// An axis label: `0.001`, `12`, `150`, without trailing zeros.
fn short_number(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else {
        let decimals = (1.0 - v.log10().floor()).max(0.0) as usize;
        let text = format!("{v:.decimals$}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// Strong colours that stay apart on white (Tableau's 10, then darker tones): a structure's
/// colour is its place in the report's rows, the same in both plots.
const COLOURS: [(u8, u8, u8); 20] = [
    (31, 119, 180),
    (214, 39, 40),
    (44, 160, 44),
    (255, 127, 14),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (23, 190, 207),
    (188, 189, 34),
    (127, 127, 127),
    (57, 59, 121),
    (99, 121, 57),
    (132, 60, 57),
    (123, 65, 115),
    (49, 130, 189),
    (230, 85, 13),
    (49, 163, 84),
    (117, 107, 177),
    (99, 99, 99),
    (140, 109, 49),
];

fn colour(index: usize) -> RGBAColor {
    let (r, g, b) = COLOURS[index % COLOURS.len()];
    RGBColor(r, g, b).to_rgba()
}
