//! The capacity picture as an SVG chart: grants per second over the seed's
//! workload for each sizing policy (a 10 s moving mean: generators started
//! together ask together, so single seconds are all or nothing), on a log
//! scale, with the burst and the rolling restart shaded. Drawn with
//! `plotters` (SVG backend only).

use plotters::prelude::*;

use crate::capacity::{Outcome, Policy, Workload};

/// The moving mean's window, in seconds.
const WINDOW: usize = 10;

/// Grants per second as a moving mean over the `WINDOW` seconds ending at
/// each second.
fn smoothed(per_second: &[u64]) -> Vec<f64> {
    (0..per_second.len())
        .map(|i| {
            let from = (i + 1).saturating_sub(WINDOW);
            let s = &per_second[from..=i];
            s.iter().sum::<u64>() as f64 / s.len() as f64
        })
        .collect()
}

/// Writes the chart of `runs` under `workload` to `path` (SVG).
pub fn write_svg(
    path: &std::path::Path,
    workload: &Workload,
    runs: &[(Policy, Outcome)],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (960, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let series: Vec<Vec<f64>> = runs
        .iter()
        .map(|(_, o)| smoothed(&o.grants_per_second))
        .collect();
    let top = series.iter().flatten().copied().fold(10.0, f64::max) * 3.0;
    let seconds = workload.seconds as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "Grants/s to one namespace ({} s mean): {} generators x {} IDs/s",
                WINDOW, workload.generators, workload.rate
            ),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..seconds, (0.5f64..top).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("simulated seconds")
        .y_desc("grants/s (log)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let shade = RGBColor(230, 230, 230);
    for ((from, to), label) in [
        ((workload.burst.0, workload.burst.1), "2x burst"),
        ((workload.deploy.0, workload.deploy.1), "rolling restart"),
    ] {
        chart.draw_series(std::iter::once(Rectangle::new(
            [(from as f64, 0.5), (to as f64, top)],
            shade.filled(),
        )))?;
        chart.draw_series(std::iter::once(Text::new(
            label,
            (from as f64 + 1.0, top / 1.6),
            ("sans-serif", 14),
        )))?;
    }
    let colors = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
    ];
    for (((policy, _), points), color) in runs.iter().zip(&series).zip(colors.iter().cycle()) {
        let color = *color;
        chart
            .draw_series(LineSeries::new(
                points
                    .iter()
                    .enumerate()
                    .map(|(s, &g)| (s as f64 + 1.0, g.max(0.5))),
                color.stroke_width(2),
            ))?
            .label(policy.name())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.3))
        .draw()?;
    root.present()?;
    Ok(())
}
