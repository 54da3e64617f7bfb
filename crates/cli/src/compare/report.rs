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
            "an UNOPTIMIZED (debug) build, so the times are meaningless: run `cargo xtask compare`"
        };
        let _ = writeln!(
            out,
            "measured in {build}; {} keys kept, {} member and {} non-member queries",
            self.items - self.deleted,
            self.queries.0,
            self.queries.1
        );
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{:<28} {:>12} {:>9} {:>9} {:>10} {:>10} {:>10} {:>6} {:>7} {:>6}",
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
                        "{:<28} cannot serve this workload: {reason}",
                        r.structure
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "{:<28} {:>12} {:>9.2} {:>9.1} {:>10.1} {:>10.1} {:>9.4}% {:>6} {:>7} {:>6}",
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
                            "{:<28} ^ MISSES THE TARGET: {:.4}% measured for a {}% target",
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

    /// Memory (bits per key) against measured FPR for each structure, with the classic
    /// filter's theoretical curve `-log2(p) / ln 2`; exact structures at the left edge.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn plot(&self, path: &Path) -> Result<(), String> {
        let served: Vec<&Row> = self.rows.iter().filter(|r| r.serves()).collect();
        let min_fpr = served
            .iter()
            .filter(|r| r.measured_fpr > 0.0)
            .map(|r| r.measured_fpr)
            .fold(self.needs.fpr, f64::min)
            .min(1e-3)
            / 10.0;
        let max_bits = served
            .iter()
            .map(|r| r.bits_per_key)
            .fold(-(min_fpr.log2()) * 1.45, f64::max)
            * 1.1;
        let e = |e: &dyn std::fmt::Display| format!("cannot draw {}: {e}", path.display());
        let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "memory against measured false-positive rate",
                ("sans-serif", 20),
            )
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d((min_fpr..1.0).log_scale(), 0.0..max_bits)
            .map_err(|x| e(&x))?;
        chart
            .configure_mesh()
            .x_desc("measured false-positive rate (exact structures at the left edge)")
            .y_desc("bits per key")
            .draw()
            .map_err(|x| e(&x))?;
        let curve = (0..=200).map(|i| {
            let p = min_fpr * (1.0 / min_fpr).powf(f64::from(i) / 200.0);
            (p, -p.log2() / std::f64::consts::LN_2)
        });
        chart
            .draw_series(LineSeries::new(curve, &BLUE))
            .map_err(|x| e(&x))?
            .label("classic Bloom filter, theory: -log2(p) / ln 2")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE));
        for (i, r) in served.iter().enumerate() {
            let colour = Palette99::pick(i + 1).to_rgba();
            let at = (r.measured_fpr.max(min_fpr), r.bits_per_key);
            chart
                .draw_series([Circle::new(at, 6, colour.filled())])
                .map_err(|x| e(&x))?
                .label(r.structure.clone())
                .legend(move |(x, y)| Circle::new((x + 10, y), 5, colour.filled()));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|x| e(&x))?;
        root.present().map_err(|x| e(&x))
    }
}
